#include "server/service/log_store_service.h"

#include <chrono>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/service/append_router.h"
#include "server/service/follow_proxy.h"
#include "server/service/grpc_status.h"
#include "server/service/packed_frames.h"
#include "server/service/read_scope.h"

namespace dictlog::service {
namespace {

// Stops a long read once its deadline has passed or its client went away: the work
// would be thrown away.
engine::Interrupt CallInterrupt(const grpc::ServerContext* context) {
  return [context] {
    if (std::chrono::system_clock::now() > context->deadline()) {
      return absl::DeadlineExceededError("deadline passed; the server stopped the call");
    }
    if (context->IsCancelled()) return absl::CancelledError("call cancelled");
    return absl::OkStatus();
  };
}

using auth::Role;

// Replaces each result `grant` may not see, or not know absent, by NOT_FOUND
// (read_scope.h).
template <typename Result, typename Visible>
void HideForbidden(const auth::Grant& grant, const std::vector<std::string>& ids,
                   const Visible& visible, std::vector<absl::StatusOr<Result>>* results) {
  if (grant.categories.empty()) return;
  for (size_t i = 0; i < results->size() && i < ids.size(); ++i) {
    (*results)[i] = visible(grant, ids[i], std::move((*results)[i]));
  }
}

// Frames only of pools whose every category `grant` may read (payloads otherwise:
// frame sizes are a side channel, read_scope.h). `grant` must outlive the policy.
engine::FramePolicy FramesFor(const auth::Grant& grant) {
  if (grant.categories.empty()) return nullptr;
  return [&grant](const std::vector<std::string>& categories) {
    return RequireWholePool(grant, categories).ok();
  };
}

// One id's error in a MultiGet or MultiGetFrames response.
void SetError(const absl::Status& status, v1::RecordError* error) {
  error->set_code(static_cast<int>(status.code()));
  error->set_message(std::string(status.message()));
}

// A forwarded call's failure as the error of each of its ids.
void SetError(const grpc::Status& status, v1::RecordError* error) {
  error->set_code(static_cast<int>(status.error_code()));
  error->set_message(status.error_message());
}

// One result of a MultiGet or MultiGetFrames response (Out: v1::MultiGetResult or
// v1::MultiGetFramesResult).
template <typename Out, typename Result>
void SetResult(absl::StatusOr<Result> result, Out* out) {
  if (result.ok()) {
    *out->mutable_record() = *std::move(result);
  } else {
    SetError(result.status(), out->mutable_error());
  }
}

// Bytes a result adds to a response (payloads, frames), for the response budget.
size_t ResultBytes(const v1::MultiGetResult& result) {
  return result.record().payload().size();
}
size_t ResultBytes(const v1::MultiGetFramesResult& result) {
  return result.record().payload().size() + result.record().frame().size();
}

// The engine's response budget over a merged response: past `budget` bytes, the first
// result that does not fit and every later one are RESOURCE_EXHAUSTED (as
// LogEngine::MultiGet answers them).
template <typename Out>
void CapResponse(size_t budget, std::vector<Out>* merged) {
  size_t bytes = 0;
  bool over = false;
  for (Out& out : *merged) {
    if (!over && out.has_record()) {
      bytes += ResultBytes(out);
      over = bytes > budget;
    }
    if (over) {
      SetError(absl::ResourceExhaustedError(
                   "the response reached --max_response_bytes; ask for this id again"),
               out.mutable_error());
    }
  }
}

// Whether the results received so far exceed `budget` (no more parts are forwarded).
template <typename Out>
bool OverBudget(size_t budget, const std::vector<Out>& merged) {
  size_t bytes = 0;
  for (const Out& out : merged) bytes += out.has_record() ? ResultBytes(out) : 0;
  return bytes > budget;
}

// The ids at `indices`.
std::vector<std::string> Pick(const std::vector<std::string>& ids,
                              const std::vector<size_t>& indices) {
  std::vector<std::string> picked;
  picked.reserve(indices.size());
  for (size_t i : indices) picked.push_back(ids[i]);
  return picked;
}

// Forwards the ids at `indices` (one partition) and puts the answers into `merged`
// (a forwarding failure becomes each id's error).
template <typename Request, typename Response, typename Out>
void ForwardPart(const ReadRouter& router, grpc::ServerContext* context,
                 const cluster::Placement& placement, absl::string_view method,
                 const std::vector<std::string>& ids, const std::vector<size_t>& indices,
                 grpc::Status (v1::LogStore::Stub::*rpc)(grpc::ClientContext*, const Request&,
                                                          Response*),
                 std::vector<Out>* merged) {
  Request part;
  for (size_t i : indices) part.add_ids(ids[i]);
  Response answer;
  grpc::Status status = router.Forward(
      *context, placement, method, [&](v1::LogStore::Stub* stub, grpc::ClientContext* peer) {
        return (stub->*rpc)(peer, part, &answer);
      });
  if (status.ok() && answer.results_size() != static_cast<int>(indices.size())) {
    status = grpc::Status(grpc::StatusCode::INTERNAL, "a peer answered another id count");
  }
  for (size_t k = 0; k < indices.size(); ++k) {
    Out& out = (*merged)[indices[k]];
    if (status.ok()) {
      out = std::move(*answer.mutable_results(static_cast<int>(k)));
    } else {
      SetError(status, out.mutable_error());
    }
  }
}

// Forwards each part of `split.elsewhere` while the results so far fit `budget`, then
// marks the ids of parts not forwarded RESOURCE_EXHAUSTED (the caller asks again).
template <typename Request, typename Response, typename Out>
void ForwardParts(const ReadRouter& router, grpc::ServerContext* context,
                  const ReadRouter::Split& split, size_t budget, absl::string_view method,
                  const std::vector<std::string>& ids,
                  grpc::Status (v1::LogStore::Stub::*rpc)(grpc::ClientContext*,
                                                           const Request&, Response*),
                  std::vector<Out>* merged) {
  for (const auto& [placement, indices] : split.elsewhere) {
    if (OverBudget(budget, *merged)) break;  // The response is capped after.
    ForwardPart(router, context, placement, method, ids, indices, rpc, merged);
  }
  for (const auto& [placement, indices] : split.elsewhere) {
    for (size_t i : indices) {
      Out& out = (*merged)[i];
      if (!out.has_record() && !out.has_error()) {
        SetError(absl::ResourceExhaustedError(
                     "the response reached --max_response_bytes; ask for this id again"),
                 out.mutable_error());
      }
    }
  }
}

}  // namespace

grpc::Status LogStoreService::Append(grpc::ServerContext* context,
                                     const v1::AppendRequest* request,
                                     v1::AppendResponse* response) {
  absl::StatusOr<const auth::Grant*> grant = auth_.Check(*context, Role::kWriter, "Append");
  if (!grant.ok()) return ToGrpcStatus(grant.status());
  if (!engine_.ready()) return engine_.Check();
  absl::Status allowed = auth::RequireCategory(**grant, request->category());
  if (!allowed.ok()) return ToGrpcStatus(allowed);
  const bool cluster = router_ != nullptr && router_->enabled();
  const std::string pool = cluster ? engine_->PoolOfCategory(request->category()) : "";
  if (auto forwarded = RouteAppend(router_, *context, {&pool, 1}, "Append",
                                   [&](v1::LogStore::Stub* stub, grpc::ClientContext* peer) {
                                     return stub->Append(peer, *request, response);
                                   })) {
    return *forwarded;
  }
  const engine::AppendInput input{request->category(), request->payload()};
  absl::StatusOr<std::vector<std::string>> ids =
      engine_->Append({&input, 1}, request->request_id(), (*grant)->principal);
  if (!ids.ok()) return ToGrpcStatus(ids.status());
  response->set_id(std::move((*ids)[0]));
  return grpc::Status::OK;
}

grpc::Status LogStoreService::AppendBatch(grpc::ServerContext* context,
                                          const v1::AppendBatchRequest* request,
                                          v1::AppendBatchResponse* response) {
  absl::StatusOr<const auth::Grant*> grant =
      auth_.Check(*context, Role::kWriter, "AppendBatch");
  if (!grant.ok()) return ToGrpcStatus(grant.status());
  if (!engine_.ready()) return engine_.Check();
  std::vector<engine::AppendInput> inputs;
  inputs.reserve(request->records_size());
  const bool cluster = router_ != nullptr && router_->enabled();
  std::vector<std::string> pools;  // Cluster mode only: where the call goes.
  pools.reserve(cluster ? request->records_size() : 0);
  for (const v1::RecordToAppend& record : request->records()) {
    absl::Status allowed = auth::RequireCategory(**grant, record.category());
    if (!allowed.ok()) return ToGrpcStatus(allowed);
    inputs.push_back({record.category(), record.payload()});
    if (cluster) pools.push_back(engine_->PoolOfCategory(record.category()));
  }
  if (auto forwarded = RouteAppend(router_, *context, pools, "AppendBatch",
                                   [&](v1::LogStore::Stub* stub, grpc::ClientContext* peer) {
                                     return stub->AppendBatch(peer, *request, response);
                                   })) {
    return *forwarded;
  }
  absl::StatusOr<std::vector<std::string>> ids =
      engine_->Append(inputs, request->request_id(), (*grant)->principal);
  if (!ids.ok()) return ToGrpcStatus(ids.status());
  for (std::string& id : *ids) response->add_ids(std::move(id));
  return grpc::Status::OK;
}

grpc::Status LogStoreService::Get(grpc::ServerContext* context,
                                  const v1::GetRequest* request,
                                  v1::GetResponse* response) {
  absl::StatusOr<const auth::Grant*> grant = auth_.Check(*context, Role::kReader, "Get");
  if (!grant.ok()) return ToGrpcStatus(grant.status());
  if (!engine_.ready()) return engine_.Check();
  if (auto routed = Route(context, router_ == nullptr ? -1 : router_->PartitionOfId(request->id()),
                          "Get", [&](v1::LogStore::Stub* stub, grpc::ClientContext* peer) {
                            return stub->Get(peer, *request, response);
                          })) {
    return *routed;
  }
  absl::StatusOr<v1::Record> record =
      VisibleRecord(**grant, request->id(), engine_->Get(request->id()));
  if (!record.ok()) return ToGrpcStatus(record.status());
  *response->mutable_record() = *std::move(record);
  return grpc::Status::OK;
}

grpc::Status LogStoreService::MultiGet(grpc::ServerContext* context,
                                       const v1::MultiGetRequest* request,
                                       v1::MultiGetResponse* response) {
  absl::StatusOr<const auth::Grant*> grant =
      auth_.Check(*context, Role::kReader, "MultiGet");
  if (!grant.ok()) return ToGrpcStatus(grant.status());
  if (!engine_.ready()) return engine_.Check();
  std::vector<std::string> ids(request->ids().begin(), request->ids().end());
  // Over max_multiget_ids: the engine refuses the whole call before reading anything.
  if (router_ != nullptr && router_->enabled() &&
      ids.size() <= engine_->options().max_multiget_ids) {
    const ReadRouter::Split split = router_->SplitIds(ids);
    if (!split.elsewhere.empty()) {
      if (ReadRouter::Direct(*context)) return router_->NotServedHere(split.elsewhere[0].first);
      return MultiGetAcross(context, **grant, ids, split, response);
    }
  }
  auto results = engine_->MultiGet(ids, CallInterrupt(context));
  if (!results.ok()) return ToGrpcStatus(results.status());
  HideForbidden(**grant, ids, VisibleRecord, &*results);
  for (absl::StatusOr<v1::Record>& result : *results) {
    v1::MultiGetResult* out = response->add_results();
    if (result.ok()) {
      *out->mutable_record() = *std::move(result);
    } else {
      SetError(result.status(), out->mutable_error());
    }
  }
  return grpc::Status::OK;
}

grpc::Status LogStoreService::MultiGetFrames(grpc::ServerContext* context,
                                             const v1::MultiGetFramesRequest* request,
                                             v1::MultiGetFramesResponse* response) {
  absl::StatusOr<const auth::Grant*> grant =
      auth_.Check(*context, Role::kReader, "MultiGetFrames");
  if (!grant.ok()) return ToGrpcStatus(grant.status());
  if (!engine_.ready()) return engine_.Check();
  std::vector<std::string> ids(request->ids().begin(), request->ids().end());
  if (router_ != nullptr && router_->enabled() &&
      ids.size() <= engine_->options().max_multiget_ids) {
    const ReadRouter::Split split = router_->SplitIds(ids);
    if (!split.elsewhere.empty()) {
      if (ReadRouter::Direct(*context)) return router_->NotServedHere(split.elsewhere[0].first);
      return MultiGetFramesAcross(context, **grant, *request, split, response);
    }
  }
  if (request->packed() && (*grant)->categories.empty()) {  // Nothing to hide: packed as read.
    return ToGrpcStatus(engine_->MultiGetFramesPacked(ids, nullptr, CallInterrupt(context),
                                                      response->mutable_packed()));
  }
  auto results = engine_->MultiGetFrames(ids, FramesFor(**grant), CallInterrupt(context));
  if (!results.ok()) return ToGrpcStatus(results.status());
  HideForbidden(**grant, ids, VisibleFrame, &*results);
  if (request->packed()) {
    PackFrames(*results, response->mutable_packed());
    return grpc::Status::OK;
  }
  for (absl::StatusOr<v1::RecordFrame>& result : *results) {
    v1::MultiGetFramesResult* out = response->add_results();
    if (result.ok()) {
      *out->mutable_record() = *std::move(result);
    } else {
      SetError(result.status(), out->mutable_error());
    }
  }
  return grpc::Status::OK;
}

grpc::Status LogStoreService::Scan(grpc::ServerContext* context,
                                   const v1::ScanRequest* request,
                                   grpc::ServerWriter<v1::ScanResponse>* writer) {
  absl::StatusOr<const auth::Grant*> grant = auth_.Check(*context, Role::kReader, "Scan");
  if (!grant.ok()) return ToGrpcStatus(grant.status());
  if (!engine_.ready()) return engine_.Check();
  if (!(*grant)->categories.empty()) {
    // A pool may hold categories the token may not see: scan by category only.
    if (request->target_case() != v1::ScanRequest::kCategory) {
      return ToGrpcStatus(absl::PermissionDeniedError(
          "a token limited to categories must scan by category, not by pool"));
    }
    absl::Status allowed = auth::RequireCategory(**grant, request->category());
    if (!allowed.ok()) return ToGrpcStatus(allowed);
  }
  const int32_t partition =
      router_ == nullptr ? -1
      : request->target_case() == v1::ScanRequest::kPool
          ? router_->PartitionOfPool(request->pool())
          : router_->PartitionOfPool(engine_->PoolOfCategory(request->category()));
  if (auto routed = Route(context, partition, "Scan",
                          [&](v1::LogStore::Stub* stub, grpc::ClientContext* peer) {
                            auto reader = stub->Scan(peer, *request);
                            v1::ScanResponse message;
                            bool wrote = false;
                            while (reader->Read(&message)) {
                              if (!writer->Write(message)) peer->TryCancel();
                              wrote = true;
                            }
                            grpc::Status status = reader->Finish();
                            if (!status.ok() && wrote) {  // Not from the start again.
                              status = grpc::Status(grpc::StatusCode::ABORTED,
                                                    "the replica's scan ended early (" +
                                                        status.error_message() +
                                                        "); resume after the last id");
                            }
                            return status;
                          },
                          ReadRouter::Span::kStream)) {  // Not cut at the attempt timeout.
    return *routed;
  }
  engine::ScanSpec spec;
  spec.category = request->category();
  spec.pool = request->pool();
  spec.from_id = request->from_id();
  spec.limit = request->limit();
  if (request->has_since_unix_ms()) spec.since_ms = request->since_unix_ms();
  if (request->has_until_unix_ms()) spec.until_ms = request->until_unix_ms();
  const engine::Interrupt interrupt = CallInterrupt(context);
  auto send = [&](const v1::ScanResponse& response) {
    if (!writer->Write(response)) {
      RETURN_IF_ERROR(interrupt());  // Says why, when it knows.
      return absl::CancelledError("client went away");
    }
    return absl::OkStatus();
  };
  absl::Status status;
  if (request->frames()) {
    auto sink = [&](std::vector<v1::RecordFrame> frames) {
      v1::ScanResponse response;
      for (v1::RecordFrame& frame : frames) *response.add_frames() = std::move(frame);
      return send(response);
    };
    status = engine_->ScanFrames(spec, FramesFor(**grant), sink, interrupt);
  } else {
    auto sink = [&](std::vector<v1::Record> records) {
      v1::ScanResponse response;
      for (v1::Record& record : records) *response.add_records() = std::move(record);
      return send(response);
    };
    status = engine_->Scan(spec, sink, interrupt);
  }
  return ToGrpcStatus(VisibleScanStatus(**grant, std::move(status)));
}

grpc::Status LogStoreService::Follow(grpc::ServerContext* context,
                                     const v1::FollowRequest* request,
                                     grpc::ServerWriter<v1::FollowResponse>* writer) {
  absl::StatusOr<const auth::Grant*> grant = auth_.Check(*context, Role::kReader, "Follow");
  if (!grant.ok()) return ToGrpcStatus(grant.status());
  if (!engine_.ready()) return engine_.Check();
  if (!(*grant)->categories.empty()) {
    // A pool may hold categories the token may not see: follow by category only.
    if (request->target_case() != v1::FollowRequest::kCategory) {
      return ToGrpcStatus(absl::PermissionDeniedError(
          "a token limited to categories must follow a category, not a pool"));
    }
    absl::Status allowed = auth::RequireCategory(**grant, request->category());
    if (!allowed.ok()) return ToGrpcStatus(allowed);
  }
  if (router_ != nullptr && router_->enabled()) {  // Cluster mode: a holder serves it.
    const int32_t partition =
        request->target_case() == v1::FollowRequest::kPool
            ? router_->PartitionOfPool(request->pool())
            : router_->PartitionOfPool(engine_->PoolOfCategory(request->category()));
    if (partition >= 0 && !router_->Place(partition).here) {
      if (ReadRouter::Direct(*context)) return router_->NotServedHere(router_->Place(partition));
      ProxyStop stop;  // Outlives the slot, whose close stops it.
      auto slot = engine_->HoldFollowSlot([&stop] { stop.Stop(); });
      if (!slot.ok()) return ToGrpcStatus(slot.status());
      return ProxyFollow(*router_, partition, context, *request, writer, &stop);
    }
  }
  engine::FollowSpec spec;
  spec.category = request->category();
  spec.pool = request->pool();
  spec.after_id = request->after_id();
  spec.from_start = request->from_start();
  const engine::Interrupt interrupt = CallInterrupt(context);
  auto sink = [&](std::vector<v1::Record> records) {
    v1::FollowResponse response;
    for (v1::Record& record : records) *response.add_records() = std::move(record);
    if (!writer->Write(response)) {
      RETURN_IF_ERROR(interrupt());
      return absl::CancelledError("client went away");
    }
    return absl::OkStatus();
  };
  return ToGrpcStatus(engine_->Follow(spec, sink, interrupt));
}

grpc::Status LogStoreService::GetFrame(grpc::ServerContext* context,
                                       const v1::GetRequest* request,
                                       v1::GetFrameResponse* response) {
  absl::StatusOr<const auth::Grant*> grant =
      auth_.Check(*context, Role::kReader, "GetFrame");
  if (!grant.ok()) return ToGrpcStatus(grant.status());
  if (!engine_.ready()) return engine_.Check();
  if (auto routed = Route(context, router_ == nullptr ? -1 : router_->PartitionOfId(request->id()),
                          "GetFrame", [&](v1::LogStore::Stub* stub, grpc::ClientContext* peer) {
                            return stub->GetFrame(peer, *request, response);
                          })) {
    return *routed;
  }
  absl::StatusOr<v1::GetFrameResponse> frame = engine_->GetFrame(request->id());
  if (!(*grant)->categories.empty()) {
    // Asked after the read: a pool's categories only grow, so they include the frame's.
    absl::Status allowed =
        RequireWholePool(**grant, engine_->PoolCategoriesOf(request->id()));
    if (!allowed.ok()) return ToGrpcStatus(allowed);
  }
  if (!frame.ok()) return ToGrpcStatus(frame.status());
  *response = *std::move(frame);
  return grpc::Status::OK;
}

grpc::Status LogStoreService::GetShardMap(grpc::ServerContext* context,
                                          const v1::GetShardMapRequest* /*request*/,
                                          v1::ShardMap* response) {
  absl::StatusOr<const auth::Grant*> grant =
      auth_.Check(*context, Role::kReader, "GetShardMap");
  if (!grant.ok()) return ToGrpcStatus(grant.status());
  response->Clear();  // Single node: partitions 0, every call is served here.
  if (router_ != nullptr && router_->enabled()) *response = router_->directory()->Map();
  return grpc::Status::OK;
}

std::optional<grpc::Status> LogStoreService::Route(grpc::ServerContext* context,
                                                   int32_t partition, absl::string_view method,
                                                   const ReadRouter::PeerCall& call,
                                                   ReadRouter::Span span) const {
  if (router_ == nullptr) return std::nullopt;
  return router_->Route(*context, partition, method, call, span);
}

grpc::Status LogStoreService::MultiGetAcross(grpc::ServerContext* context,
                                             const auth::Grant& grant,
                                             const std::vector<std::string>& ids,
                                             const ReadRouter::Split& split,
                                             v1::MultiGetResponse* response) {
  std::vector<v1::MultiGetResult> merged(ids.size());
  if (!split.here.empty()) {
    const std::vector<std::string> local = Pick(ids, split.here);
    auto results = engine_->MultiGet(local, CallInterrupt(context));
    if (!results.ok()) return ToGrpcStatus(results.status());
    HideForbidden(grant, local, VisibleRecord, &*results);
    for (size_t j = 0; j < local.size(); ++j) {
      SetResult(std::move((*results)[j]), &merged[split.here[j]]);
    }
  }
  ForwardParts(*router_, context, split, engine_->options().max_response_bytes,
               "MultiGet", ids, &v1::LogStore::Stub::MultiGet, &merged);
  CapResponse(engine_->options().max_response_bytes, &merged);
  for (v1::MultiGetResult& result : merged) *response->add_results() = std::move(result);
  return grpc::Status::OK;
}

grpc::Status LogStoreService::MultiGetFramesAcross(grpc::ServerContext* context,
                                                   const auth::Grant& grant,
                                                   const v1::MultiGetFramesRequest& request,
                                                   const ReadRouter::Split& split,
                                                   v1::MultiGetFramesResponse* response) {
  const std::vector<std::string> ids(request.ids().begin(), request.ids().end());
  std::vector<v1::MultiGetFramesResult> merged(ids.size());
  if (!split.here.empty()) {
    const std::vector<std::string> local = Pick(ids, split.here);
    auto results = engine_->MultiGetFrames(local, FramesFor(grant), CallInterrupt(context));
    if (!results.ok()) return ToGrpcStatus(results.status());
    HideForbidden(grant, local, VisibleFrame, &*results);
    for (size_t j = 0; j < local.size(); ++j) {
      SetResult(std::move((*results)[j]), &merged[split.here[j]]);
    }
  }
  // Peers answer per result (the request forwarded is not packed).
  ForwardParts(*router_, context, split, engine_->options().max_response_bytes,
               "MultiGetFrames", ids, &v1::LogStore::Stub::MultiGetFrames, &merged);
  CapResponse(engine_->options().max_response_bytes, &merged);
  if (!request.packed()) {
    for (v1::MultiGetFramesResult& result : merged) *response->add_results() = std::move(result);
    return grpc::Status::OK;
  }
  std::vector<absl::StatusOr<v1::RecordFrame>> results;
  results.reserve(merged.size());
  for (v1::MultiGetFramesResult& result : merged) {
    if (result.has_record()) {
      results.push_back(std::move(*result.mutable_record()));
    } else if (result.error().code() == 0) {
      results.push_back(absl::InternalError("a peer answered neither a record nor an error"));
    } else {
      results.push_back(absl::Status(static_cast<absl::StatusCode>(result.error().code()),
                                     result.error().message()));
    }
  }
  PackFrames(results, response->mutable_packed());
  return grpc::Status::OK;
}

}  // namespace dictlog::service
