#include "benchmarks/compare/compare_service.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/service/grpc_status.h"

namespace dictlog::compare {

using service::ToGrpcStatus;

grpc::Status CompareLogStore::Append(grpc::ServerContext* /*context*/,
                                     const v1::AppendRequest* request,
                                     v1::AppendResponse* response) {
  const AppendInput input{request->category(), request->payload()};
  absl::StatusOr<std::vector<std::string>> ids = backend_->Append({&input, 1});
  if (!ids.ok()) return ToGrpcStatus(ids.status());
  response->set_id(std::move((*ids)[0]));
  return grpc::Status::OK;
}

grpc::Status CompareLogStore::AppendBatch(grpc::ServerContext* /*context*/,
                                          const v1::AppendBatchRequest* request,
                                          v1::AppendBatchResponse* response) {
  const size_t count = static_cast<size_t>(request->records_size());
  if (count == 0 || count > limits_.max_batch_records) {
    return ToGrpcStatus(absl::InvalidArgumentError(absl::StrCat(
        "a batch holds 1 to ", limits_.max_batch_records, " records, not ", count)));
  }
  std::vector<AppendInput> inputs;
  inputs.reserve(count);
  for (const v1::RecordToAppend& record : request->records()) {
    inputs.push_back({record.category(), record.payload()});
  }
  absl::StatusOr<std::vector<std::string>> ids = backend_->Append(inputs);
  if (!ids.ok()) return ToGrpcStatus(ids.status());
  for (std::string& id : *ids) response->add_ids(std::move(id));
  return grpc::Status::OK;
}

grpc::Status CompareLogStore::Get(grpc::ServerContext* /*context*/,
                                  const v1::GetRequest* request, v1::GetResponse* response) {
  absl::StatusOr<v1::Record> record = backend_->Get(request->id());
  if (!record.ok()) return ToGrpcStatus(record.status());
  *response->mutable_record() = *std::move(record);
  return grpc::Status::OK;
}

grpc::Status CompareLogStore::MultiGet(grpc::ServerContext* /*context*/,
                                       const v1::MultiGetRequest* request,
                                       v1::MultiGetResponse* response) {
  if (static_cast<size_t>(request->ids_size()) > limits_.max_multiget_ids) {
    return ToGrpcStatus(absl::InvalidArgumentError(absl::StrCat(
        "at most ", limits_.max_multiget_ids, " ids a MultiGet, not ", request->ids_size())));
  }
  const std::vector<std::string> ids(request->ids().begin(), request->ids().end());
  for (absl::StatusOr<v1::Record>& result : backend_->MultiGet(ids)) {
    v1::MultiGetResult* out = response->add_results();
    if (result.ok()) {
      *out->mutable_record() = *std::move(result);
    } else {
      out->mutable_error()->set_code(static_cast<int>(result.status().code()));
      out->mutable_error()->set_message(std::string(result.status().message()));
    }
  }
  return grpc::Status::OK;
}

}  // namespace dictlog::compare
