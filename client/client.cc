#include "client/client.h"

#include <grpcpp/grpcpp.h>

#include "client/grpc_status.h"

namespace dictlog::client {

Client::Client(const ClientOptions& options) : timeout_(options.timeout) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options.max_message_bytes);
  args.SetMaxSendMessageSize(options.max_message_bytes);
  std::shared_ptr<grpc::Channel> channel = grpc::CreateCustomChannel(
      options.server, grpc::InsecureChannelCredentials(), args);
  store_ = v1::LogStore::NewStub(channel);
  admin_ = v1::Admin::NewStub(channel);
}

void Client::SetDeadline(grpc::ClientContext* context) const {
  context->set_deadline(absl::ToChronoTime(absl::Now() + timeout_));
}

absl::StatusOr<std::string> Client::Append(absl::string_view category,
                                           absl::string_view payload) const {
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::AppendRequest request;
  request.set_category(std::string(category));
  request.set_payload(std::string(payload));
  v1::AppendResponse response;
  grpc::Status status = store_->Append(&context, request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return response.id();
}

absl::StatusOr<std::vector<std::string>> Client::AppendBatch(
    absl::Span<const v1::RecordToAppend> records) const {
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::AppendBatchRequest request;
  request.mutable_records()->Reserve(static_cast<int>(records.size()));
  for (const v1::RecordToAppend& record : records) *request.add_records() = record;
  v1::AppendBatchResponse response;
  grpc::Status status = store_->AppendBatch(&context, request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return std::vector<std::string>(response.ids().begin(), response.ids().end());
}

absl::StatusOr<v1::Record> Client::Get(absl::string_view id) const {
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::GetRequest request;
  request.set_id(std::string(id));
  v1::GetResponse response;
  grpc::Status status = store_->Get(&context, request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return std::move(*response.mutable_record());
}

absl::StatusOr<std::vector<absl::StatusOr<v1::Record>>> Client::MultiGet(
    absl::Span<const std::string> ids) const {
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::MultiGetRequest request;
  for (const std::string& id : ids) request.add_ids(id);
  v1::MultiGetResponse response;
  grpc::Status status = store_->MultiGet(&context, request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  std::vector<absl::StatusOr<v1::Record>> results;
  results.reserve(response.results_size());
  for (v1::MultiGetResult& result : *response.mutable_results()) {
    if (result.has_record()) {
      results.emplace_back(std::move(*result.mutable_record()));
    } else {
      results.emplace_back(absl::Status(
          static_cast<absl::StatusCode>(result.error().code()), result.error().message()));
    }
  }
  return results;
}

absl::Status Client::Scan(
    const v1::ScanRequest& request,
    const std::function<absl::Status(const v1::Record&)>& visit) const {
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReader<v1::ScanResponse>> reader =
      store_->Scan(&context, request);
  v1::ScanResponse chunk;
  while (reader->Read(&chunk)) {
    for (const v1::Record& record : chunk.records()) {
      absl::Status status = visit(record);
      if (!status.ok()) {
        context.TryCancel();
        reader->Finish();
        return status;
      }
    }
  }
  return FromGrpcStatus(reader->Finish());
}

absl::StatusOr<std::vector<v1::PoolInfo>> Client::ListPools() const {
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::ListPoolsResponse response;
  grpc::Status status = admin_->ListPools(&context, v1::ListPoolsRequest(), &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return std::vector<v1::PoolInfo>(response.pools().begin(), response.pools().end());
}

absl::StatusOr<v1::PoolInfo> Client::GetPool(absl::string_view name) const {
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::GetPoolRequest request;
  request.set_name(std::string(name));
  v1::PoolInfo response;
  grpc::Status status = admin_->GetPool(&context, request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return response;
}

absl::StatusOr<v1::PoolInfo> Client::CreatePool(absl::string_view name,
                                                const v1::PoolOptions& options) const {
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::CreatePoolRequest request;
  request.set_name(std::string(name));
  *request.mutable_options() = options;
  v1::PoolInfo response;
  grpc::Status status = admin_->CreatePool(&context, request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return response;
}

absl::StatusOr<v1::PoolInfo> Client::UpdatePool(absl::string_view name,
                                                const v1::PoolOptions& options) const {
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::UpdatePoolRequest request;
  request.set_name(std::string(name));
  *request.mutable_options() = options;
  v1::PoolInfo response;
  grpc::Status status = admin_->UpdatePool(&context, request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return response;
}

}  // namespace dictlog::client
