#include "server/service/admin_service.h"

#include "server/service/grpc_status.h"

namespace dictlog::service {
namespace {

grpc::Status PoolResult(absl::StatusOr<v1::PoolInfo> info, v1::PoolInfo* response) {
  if (!info.ok()) return ToGrpcStatus(info.status());
  *response = *std::move(info);
  return grpc::Status::OK;
}

grpc::Status DictionariesNotBuilt() {
  return ToGrpcStatus(absl::UnimplementedError(
      "dictionary training and management are not built yet in this server"));
}

}  // namespace

grpc::Status AdminService::ListPools(grpc::ServerContext* /*context*/,
                                     const v1::ListPoolsRequest* /*request*/,
                                     v1::ListPoolsResponse* response) {
  for (v1::PoolInfo& info : engine_->ListPools()) {
    *response->add_pools() = std::move(info);
  }
  return grpc::Status::OK;
}

grpc::Status AdminService::GetPool(grpc::ServerContext* /*context*/,
                                   const v1::GetPoolRequest* request,
                                   v1::PoolInfo* response) {
  return PoolResult(engine_->GetPool(request->name()), response);
}

grpc::Status AdminService::CreatePool(grpc::ServerContext* /*context*/,
                                      const v1::CreatePoolRequest* request,
                                      v1::PoolInfo* response) {
  return PoolResult(engine_->CreatePool(request->name(), request->options()), response);
}

grpc::Status AdminService::UpdatePool(grpc::ServerContext* /*context*/,
                                      const v1::UpdatePoolRequest* request,
                                      v1::PoolInfo* response) {
  return PoolResult(engine_->UpdatePool(request->name(), request->options()), response);
}

grpc::Status AdminService::TrainDictionary(grpc::ServerContext* /*context*/,
                                           const v1::TrainDictionaryRequest* /*request*/,
                                           v1::TrainDictionaryResponse* /*response*/) {
  return DictionariesNotBuilt();
}

grpc::Status AdminService::ListDictionaries(
    grpc::ServerContext* /*context*/, const v1::ListDictionariesRequest* /*request*/,
    v1::ListDictionariesResponse* /*response*/) {
  return DictionariesNotBuilt();
}

grpc::Status AdminService::ActivateDictionary(
    grpc::ServerContext* /*context*/, const v1::ActivateDictionaryRequest* /*request*/,
    v1::DictionaryInfo* /*response*/) {
  return DictionariesNotBuilt();
}

grpc::Status AdminService::GetDictionary(grpc::ServerContext* /*context*/,
                                         const v1::GetDictionaryRequest* /*request*/,
                                         v1::GetDictionaryResponse* /*response*/) {
  return DictionariesNotBuilt();
}

}  // namespace dictlog::service
