#include "client/client.h"

#include <google/protobuf/unknown_field_set.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/strings/str_format.h"
#include "client/ask_again.h"
#include "client/by_partition.h"
#include "client/grpc_status.h"
#include "client/packed_frames.h"
#include "common/status_macros.h"

namespace dictlog::client {
namespace {

std::shared_ptr<grpc::ChannelCredentials> ChannelCredentials(
    const ClientSecurity& security) {
  if (!security.tls) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = security.root_ca_pem;
  options.pem_cert_chain = security.cert_chain_pem;
  options.pem_private_key = security.private_key_pem;
  return grpc::SslCredentials(options);
}

// A channel to `address` with the options of the client's connection (the seed server
// and, with routing, every node it routes to).
std::shared_ptr<grpc::Channel> MakeChannel(const ClientOptions& options,
                                           const std::string& address) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options.max_receive_bytes);
  args.SetMaxSendMessageSize(options.max_message_bytes);
  if (options.own_connection) args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  if (!options.security.tls_server_name.empty()) {
    args.SetSslTargetNameOverride(options.security.tls_server_name);
  }
  return grpc::CreateCustomChannel(address, ChannelCredentials(options.security), args);
}

}  // namespace

std::string NewRequestId() {
  thread_local absl::BitGen bits;
  return absl::StrFormat("%016x%016x", absl::Uniform<uint64_t>(bits),
                         absl::Uniform<uint64_t>(bits));
}

Client::Client(const ClientOptions& options)
    : server_(options.server),
      timeout_(options.timeout),
      append_attempts_(std::max(1, options.append_attempts)),
      retry_backoff_(options.retry_backoff),
      authorization_(options.security.token.empty()
                         ? ""
                         : "Bearer " + options.security.token),
      ddicts_(std::make_shared<DdictCache>(options.dictionary_cache_bytes)) {
  channel_ = MakeChannel(options, options.server);
  store_ = v1::LogStore::NewStub(channel_);
  admin_ = v1::Admin::NewStub(channel_);
  if (!options.routing) return;
  // The router's map fetch must not own the Client (copies share the router): it uses
  // its own copies of the seed stub and call settings.
  ShardRouter::Options routing;
  routing.ttl = options.shard_map_ttl;
  routing.refresh_interval = options.shard_map_refresh_interval;
  Client seed = *this;  // Without a router: GetShardMap goes to the seed.
  router_ = std::make_shared<ShardRouter>(
      store_, [seed] { return seed.GetShardMap(); },
      [options](const std::string& address) {
        return std::shared_ptr<v1::LogStore::Stub>(
            v1::LogStore::NewStub(MakeChannel(options, address)));
      },
      routing);
}

absl::Status Client::WaitForConnected(absl::Duration timeout) const {
  const auto deadline = absl::ToChronoTime(absl::Now() + timeout);
  while (true) {
    const grpc_connectivity_state state = channel_->GetState(/*try_to_connect=*/true);
    if (state == GRPC_CHANNEL_READY) return absl::OkStatus();
    if (state == GRPC_CHANNEL_SHUTDOWN ||
        !channel_->WaitForStateChange(state, deadline)) {
      return absl::UnavailableError(absl::StrCat(
          "not connected after ", absl::FormatDuration(timeout),
          " (channel state ", static_cast<int>(state), ")"));
    }
  }
}

absl::StatusOr<bool> Client::CheckHealth(absl::string_view service) const {
  // grpc.health.v1 through the generic stub: HealthCheckRequest{service: ""} is the
  // empty message, a name is field 1 (tag 0x0a, its length, its bytes); the response's
  // field 1 is the status (1 SERVING, 2 NOT_SERVING).
  if (service.size() >= 128) return absl::InvalidArgumentError("health service name too long");
  std::string encoded;
  if (!service.empty()) {
    encoded.push_back('\x0a');
    encoded.push_back(static_cast<char>(service.size()));
    encoded.append(service.data(), service.size());
  }
  grpc::GenericStub stub(channel_);
  grpc::ClientContext context;
  SetDeadline(&context);
  grpc::CompletionQueue queue;
  grpc::Slice slice(encoded);
  grpc::ByteBuffer request(&slice, 1), response;
  std::unique_ptr<grpc::GenericClientAsyncResponseReader> call = stub.PrepareUnaryCall(
      &context, "/grpc.health.v1.Health/Check", request, &queue);
  call->StartCall();
  grpc::Status status;
  call->Finish(&response, &status, &queue);
  void* tag = nullptr;
  bool ok = false;
  queue.Next(&tag, &ok);
  queue.Shutdown();
  while (queue.Next(&tag, &ok)) {
  }
  if (!status.ok()) return FromGrpcStatus(status);
  std::string bytes;
  std::vector<grpc::Slice> slices;
  if (!response.Dump(&slices).ok()) return absl::DataLossError("unreadable health answer");
  for (const grpc::Slice& s : slices) bytes.append(s.begin(), s.end());
  google::protobuf::UnknownFieldSet fields;
  if (!fields.ParseFromString(bytes)) return absl::DataLossError("bad health answer");
  for (int i = 0; i < fields.field_count(); ++i) {
    const google::protobuf::UnknownField& field = fields.field(i);
    if (field.number() == 1 && field.type() == google::protobuf::UnknownField::TYPE_VARINT) {
      return field.varint() == 1;
    }
  }
  return false;
}

void Client::SetDeadline(grpc::ClientContext* context) const {
  context->set_deadline(absl::ToChronoTime(absl::Now() + timeout_));
}

void Client::AddToken(grpc::ClientContext* context) const {
  // Plain metadata rather than grpc::AccessTokenCredentials, which gRPC sends only
  // over TLS: tokens also work on plaintext loopback.
  if (!authorization_.empty()) context->AddMetadata("authorization", authorization_);
}

template <typename Response, typename Invoke>
absl::StatusOr<Response> Client::Unary(Invoke invoke) const {
  grpc::ClientContext context;
  SetDeadline(&context);
  AddToken(&context);
  Response response;
  const grpc::Status status = invoke(&context, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return response;
}

template <typename Response, typename Invoke>
absl::StatusOr<Response> Client::Routed(int64_t partition, Invoke invoke) const {
  Response response;
  RETURN_IF_ERROR(RoutedCall(partition, /*deadline=*/true,
                             [&](v1::LogStore::Stub* stub, grpc::ClientContext* context) {
                               return invoke(stub, context, &response);
                             }));
  return response;
}

template <typename Response, typename Invoke>
absl::StatusOr<Response> Client::Retried(Invoke invoke) const {
  absl::Duration backoff = retry_backoff_;
  for (int attempt = 1;; ++attempt) {
    absl::StatusOr<Response> response = Unary<Response>(invoke);
    // CANCELLED too: this client never cancels a unary call, so it comes from the
    // server, e.g. a call it had accepted but not started when shutdown began.
    const absl::Status& status = response.status();
    if (response.ok() || attempt >= append_attempts_ ||
        !(absl::IsUnavailable(status) || absl::IsDeadlineExceeded(status) ||
          absl::IsCancelled(status))) {
      return response;
    }
    absl::SleepFor(backoff);
    backoff *= 2;
  }
}

absl::StatusOr<std::string> Client::Append(absl::string_view category,
                                           absl::string_view payload,
                                           absl::string_view request_id) const {
  v1::AppendRequest request;
  request.set_category(std::string(category));
  request.set_payload(std::string(payload));
  request.set_request_id(request_id.empty() ? NewRequestId() : std::string(request_id));
  ASSIGN_OR_RETURN(v1::AppendResponse response,
                   Retried<v1::AppendResponse>([&](auto* context, auto* out) {
                     return store_->Append(context, request, out);
                   }));
  return std::move(*response.mutable_id());
}

absl::StatusOr<std::vector<std::string>> Client::AppendBatch(
    absl::Span<const v1::RecordToAppend> records, absl::string_view request_id) const {
  v1::AppendBatchRequest request;
  request.mutable_records()->Reserve(static_cast<int>(records.size()));
  for (const v1::RecordToAppend& record : records) *request.add_records() = record;
  request.set_request_id(request_id.empty() ? NewRequestId() : std::string(request_id));
  ASSIGN_OR_RETURN(v1::AppendBatchResponse response,
                   Retried<v1::AppendBatchResponse>([&](auto* context, auto* out) {
                     return store_->AppendBatch(context, request, out);
                   }));
  return std::vector<std::string>(response.ids().begin(), response.ids().end());
}

absl::StatusOr<v1::Record> Client::Get(absl::string_view id) const {
  v1::GetRequest request;
  request.set_id(std::string(id));
  ASSIGN_OR_RETURN(std::shared_ptr<const ShardTable> table, RoutingTable());
  ASSIGN_OR_RETURN(v1::GetResponse response,
                   Routed<v1::GetResponse>(PartitionOfPool(*table, PoolOfId(id)),
                                           [&](auto* stub, auto* context, auto* out) {
                                             return stub->Get(context, request, out);
                                           }));
  return std::move(*response.mutable_record());
}

absl::StatusOr<std::vector<absl::StatusOr<v1::Record>>> Client::MultiGet(
    absl::Span<const std::string> ids, const ReadOptions& options) const {
  if (options.decode_locally) return MultiGetDecodingLocally(ids, options.packed);
  ASSIGN_OR_RETURN(std::shared_ptr<const ShardTable> table, RoutingTable());
  return ByPartition<v1::Record>(
      ids, *table, [this](absl::Span<const std::string> part, int64_t partition) {
        return AskAgain<v1::Record>(part, [&](absl::Span<const std::string> some) {
          return MultiGetOnce(some, partition);
        });
      });
}

namespace {

// The per-id results of a MultiGet or MultiGetFrames response, in request order: the
// record, or the server's per-id error as a status.
template <typename Record, typename Results>
std::vector<absl::StatusOr<Record>> PerIdResults(Results* response_results) {
  std::vector<absl::StatusOr<Record>> results;
  results.reserve(response_results->size());
  for (auto& result : *response_results) {
    if (result.has_record()) {
      results.emplace_back(std::move(*result.mutable_record()));
    } else {
      results.emplace_back(absl::Status(
          static_cast<absl::StatusCode>(result.error().code()), result.error().message()));
    }
  }
  return results;
}

}  // namespace

absl::StatusOr<std::vector<absl::StatusOr<v1::Record>>> Client::MultiGetOnce(
    absl::Span<const std::string> ids, int64_t partition) const {
  v1::MultiGetRequest request;
  for (const std::string& id : ids) request.add_ids(id);
  ASSIGN_OR_RETURN(v1::MultiGetResponse response,
                   Routed<v1::MultiGetResponse>(partition, [&](auto* stub, auto* context,
                                                               auto* out) {
                     return stub->MultiGet(context, request, out);
                   }));
  return PerIdResults<v1::Record>(response.mutable_results());
}

absl::StatusOr<std::vector<absl::StatusOr<v1::RecordFrame>>> Client::MultiGetFramesOnce(
    absl::Span<const std::string> ids, bool packed, int64_t partition) const {
  v1::MultiGetFramesRequest request;
  for (const std::string& id : ids) request.add_ids(id);
  request.set_packed(packed);
  ASSIGN_OR_RETURN(v1::MultiGetFramesResponse response,
                   Routed<v1::MultiGetFramesResponse>(partition, [&](auto* stub,
                                                                     auto* context,
                                                                     auto* out) {
                     return stub->MultiGetFrames(context, request, out);
                   }));
  // A server that predates `packed` answers per result.
  if (response.has_packed()) return UnpackFrames(ids, response.packed());
  return PerIdResults<v1::RecordFrame>(response.mutable_results());
}

absl::Status Client::ScanStream(
    const v1::ScanRequest& request,
    const std::function<absl::Status(v1::ScanResponse*)>& chunk) const {
  int64_t partition = -1;  // A scan by category goes to the seed, which routes it.
  if (request.target_case() == v1::ScanRequest::kPool) {
    ASSIGN_OR_RETURN(std::shared_ptr<const ShardTable> table, RoutingTable());
    partition = PartitionOfPool(*table, request.pool());
  }
  bool received = false;  // Tried again on another replica only before any response.
  absl::Status chunk_error;
  absl::Status status = RoutedCall(
      partition, /*deadline=*/false,
      [&](v1::LogStore::Stub* stub, grpc::ClientContext* context) {
        std::unique_ptr<grpc::ClientReader<v1::ScanResponse>> reader =
            stub->Scan(context, request);
        v1::ScanResponse response;
        while (reader->Read(&response)) {
          received = true;
          chunk_error = chunk(&response);
          if (!chunk_error.ok()) {
            context->TryCancel();
            break;
          }
        }
        return reader->Finish();
      },
      [&] { return !received; });
  return chunk_error.ok() ? status : chunk_error;
}

void FollowCancel::Cancel() {
  absl::MutexLock lock(&mu_);
  cancelled_ = true;
  if (context_ != nullptr) context_->TryCancel();
}

bool FollowCancel::cancelled() const {
  absl::MutexLock lock(&mu_);
  return cancelled_;
}

void FollowCancel::Attach(grpc::ClientContext* context) {
  absl::MutexLock lock(&mu_);
  context_ = context;
  if (context != nullptr && cancelled_) context->TryCancel();
}

absl::Status Client::Follow(const v1::FollowRequest& request,
                            const std::function<absl::Status(const v1::Record&)>& visit,
                            FollowCancel* cancel) const {
  int64_t partition = -1;  // A follow by category goes to the seed, which routes it.
  if (request.target_case() == v1::FollowRequest::kPool) {
    ASSIGN_OR_RETURN(std::shared_ptr<const ShardTable> table, RoutingTable());
    partition = PartitionOfPool(*table, request.pool());
  }
  v1::FollowRequest next = request;
  while (true) {
    absl::Status visited;
    bool progressed = false;  // A record was visited in this round.
    // Another replica after this one failed resumes after the last id visited.
    absl::Status status = RoutedCall(
        partition, /*deadline=*/false,
        [&](v1::LogStore::Stub* stub, grpc::ClientContext* context) {
          if (cancel != nullptr) cancel->Attach(context);
          std::unique_ptr<grpc::ClientReader<v1::FollowResponse>> reader =
              stub->Follow(context, next);
          v1::FollowResponse response;
          while (visited.ok() && reader->Read(&response)) {
            for (const v1::Record& record : response.records()) {
              visited = visit(record);
              if (!visited.ok()) break;
              next.set_after_id(record.id());  // A resumed stream starts after it.
              next.set_from_start(false);
              progressed = true;
            }
          }
          if (!visited.ok()) context->TryCancel();
          grpc::Status finished = reader->Finish();
          if (cancel != nullptr) cancel->Attach(nullptr);
          return finished;
        },
        [&] { return visited.ok() && (cancel == nullptr || !cancel->cancelled()); });
    if (!visited.ok()) return visited;
    if (cancel != nullptr && cancel->cancelled()) return absl::OkStatus();
    // Fell behind, or (routed) the replicas failed after records came: resume after the
    // last record passed on.
    const bool failed_over = partition >= 0 && absl::IsUnavailable(status) && progressed;
    if (!absl::IsAborted(status) && !failed_over) return status;
  }
}

absl::Status Client::Scan(const v1::ScanRequest& request,
                          const std::function<absl::Status(const v1::Record&)>& visit,
                          const ReadOptions& options) const {
  if (!options.decode_locally) {
    return ScanStream(request, [&](v1::ScanResponse* response) {
      for (const v1::Record& record : response->records()) RETURN_IF_ERROR(visit(record));
      return absl::OkStatus();
    });
  }
  v1::ScanRequest frames = request;
  frames.set_frames(true);
  return ScanStream(frames, [&](v1::ScanResponse* response) -> absl::Status {
    std::vector<absl::StatusOr<v1::RecordFrame>> chunk;
    chunk.reserve(response->frames_size());
    for (v1::RecordFrame& frame : *response->mutable_frames()) {
      chunk.emplace_back(std::move(frame));
    }
    ASSIGN_OR_RETURN(std::vector<absl::StatusOr<v1::Record>> records,
                     DecodeLocally(std::move(chunk)));
    for (const absl::StatusOr<v1::Record>& record : records) {
      RETURN_IF_ERROR(record.status());
      RETURN_IF_ERROR(visit(*record));
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<v1::ListPoolsResponse> Client::ListPoolsWithStats() const {
  return Unary<v1::ListPoolsResponse>([&](auto* context, auto* out) {
    return admin_->ListPools(context, v1::ListPoolsRequest(), out);
  });
}

absl::StatusOr<std::vector<v1::PoolInfo>> Client::ListPools() const {
  ASSIGN_OR_RETURN(v1::ListPoolsResponse response, ListPoolsWithStats());
  return std::vector<v1::PoolInfo>(response.pools().begin(), response.pools().end());
}

absl::StatusOr<v1::PoolInfo> Client::GetPool(absl::string_view name) const {
  v1::GetPoolRequest request;
  request.set_name(std::string(name));
  return Unary<v1::PoolInfo>([&](auto* context, auto* out) {
    return admin_->GetPool(context, request, out);
  });
}

absl::StatusOr<v1::PoolInfo> Client::CreatePool(absl::string_view name,
                                                const v1::PoolOptions& options) const {
  v1::CreatePoolRequest request;
  request.set_name(std::string(name));
  *request.mutable_options() = options;
  return Unary<v1::PoolInfo>([&](auto* context, auto* out) {
    return admin_->CreatePool(context, request, out);
  });
}

absl::StatusOr<v1::PoolInfo> Client::UpdatePool(absl::string_view name,
                                                const v1::PoolOptions& options) const {
  v1::UpdatePoolRequest request;
  request.set_name(std::string(name));
  *request.mutable_options() = options;
  return Unary<v1::PoolInfo>([&](auto* context, auto* out) {
    return admin_->UpdatePool(context, request, out);
  });
}

absl::StatusOr<v1::DeletePoolResponse> Client::DeletePool(absl::string_view name) const {
  v1::DeletePoolRequest request;
  request.set_name(std::string(name));
  return Unary<v1::DeletePoolResponse>([&](auto* context, auto* out) {
    return admin_->DeletePool(context, request, out);
  });
}

absl::StatusOr<v1::GetFrameResponse> Client::GetFrame(absl::string_view id) const {
  v1::GetRequest request;
  request.set_id(std::string(id));
  ASSIGN_OR_RETURN(std::shared_ptr<const ShardTable> table, RoutingTable());
  return Routed<v1::GetFrameResponse>(PartitionOfPool(*table, PoolOfId(id)),
                                      [&](auto* stub, auto* context, auto* out) {
                                        return stub->GetFrame(context, request, out);
                                      });
}

absl::StatusOr<v1::ShardMap> Client::GetShardMap() const {
  return Unary<v1::ShardMap>([&](auto* context, auto* out) {
    return store_->GetShardMap(context, v1::GetShardMapRequest(), out);
  });
}

// Admin calls whose request and response are the RPC's own messages.
#define DICTLOG_ADMIN_CALL(Method, Request, Response)                          \
  absl::StatusOr<v1::Response> Client::Method(const v1::Request& request) const { \
    return Unary<v1::Response>([&](auto* context, auto* out) {                 \
      return admin_->Method(context, request, out);                            \
    });                                                                        \
  }

DICTLOG_ADMIN_CALL(TrainDictionary, TrainDictionaryRequest, TrainDictionaryResponse)
DICTLOG_ADMIN_CALL(ListDictionaries, ListDictionariesRequest, ListDictionariesResponse)
DICTLOG_ADMIN_CALL(ActivateDictionary, ActivateDictionaryRequest, DictionaryInfo)
DICTLOG_ADMIN_CALL(GetDictionary, GetDictionaryRequest, GetDictionaryResponse)
DICTLOG_ADMIN_CALL(ImportDictionary, ImportDictionaryRequest, DictionaryInfo)
DICTLOG_ADMIN_CALL(GcDictionaries, GcDictionariesRequest, GcDictionariesResponse)
DICTLOG_ADMIN_CALL(Verify, VerifyRequest, VerifyResponse)
DICTLOG_ADMIN_CALL(Recompress, RecompressRequest, RecompressStatus)
DICTLOG_ADMIN_CALL(GetRecompressStatus, RecompressRequest, RecompressStatus)
DICTLOG_ADMIN_CALL(Backup, BackupRequest, BackupResponse)
DICTLOG_ADMIN_CALL(Flush, FlushRequest, FlushResponse)

#undef DICTLOG_ADMIN_CALL

}  // namespace dictlog::client
