#include "server/service/admin_service.h"

#include "server/service/grpc_status.h"

namespace dictlog::service {
namespace {

// Moves an engine result into the response, or converts its error.
template <typename Message>
grpc::Status Reply(absl::StatusOr<Message> result, Message* response) {
  if (!result.ok()) return ToGrpcStatus(result.status());
  *response = *std::move(result);
  return grpc::Status::OK;
}

}  // namespace

grpc::Status AdminService::Admit(const grpc::ServerContext& context,
                                 absl::string_view method) const {
  return ToGrpcStatus(auth_.Check(context, auth::Role::kAdmin, method).status());
}

grpc::Status AdminService::ListPools(grpc::ServerContext* context,
                                     const v1::ListPoolsRequest* /*request*/,
                                     v1::ListPoolsResponse* response) {
  if (grpc::Status denied = Admit(*context, "ListPools"); !denied.ok()) return denied;
  for (v1::PoolInfo& info : engine_->ListPools()) {
    *response->add_pools() = std::move(info);
  }
  *response->mutable_dictionary_cache() = engine_->DictionaryCacheStats();
  return grpc::Status::OK;
}

grpc::Status AdminService::GetPool(grpc::ServerContext* context,
                                   const v1::GetPoolRequest* request,
                                   v1::PoolInfo* response) {
  if (grpc::Status denied = Admit(*context, "GetPool"); !denied.ok()) return denied;
  return Reply(engine_->GetPool(request->name()), response);
}

grpc::Status AdminService::CreatePool(grpc::ServerContext* context,
                                      const v1::CreatePoolRequest* request,
                                      v1::PoolInfo* response) {
  if (grpc::Status denied = Admit(*context, "CreatePool"); !denied.ok()) return denied;
  return Reply(engine_->CreatePool(request->name(), request->options()), response);
}

grpc::Status AdminService::UpdatePool(grpc::ServerContext* context,
                                      const v1::UpdatePoolRequest* request,
                                      v1::PoolInfo* response) {
  if (grpc::Status denied = Admit(*context, "UpdatePool"); !denied.ok()) return denied;
  return Reply(engine_->UpdatePool(request->name(), request->options()), response);
}

grpc::Status AdminService::TrainDictionary(grpc::ServerContext* context,
                                           const v1::TrainDictionaryRequest* request,
                                           v1::TrainDictionaryResponse* response) {
  if (grpc::Status denied = Admit(*context, "TrainDictionary"); !denied.ok()) return denied;
  return Reply(engine_->TrainDictionary(*request), response);
}

grpc::Status AdminService::ListDictionaries(grpc::ServerContext* context,
                                            const v1::ListDictionariesRequest* request,
                                            v1::ListDictionariesResponse* response) {
  if (grpc::Status denied = Admit(*context, "ListDictionaries"); !denied.ok()) return denied;
  return Reply(engine_->ListDictionaries(*request), response);
}

grpc::Status AdminService::ActivateDictionary(grpc::ServerContext* context,
                                              const v1::ActivateDictionaryRequest* request,
                                              v1::DictionaryInfo* response) {
  if (grpc::Status denied = Admit(*context, "ActivateDictionary"); !denied.ok()) return denied;
  return Reply(engine_->ActivateDictionary(*request), response);
}

grpc::Status AdminService::GetDictionary(grpc::ServerContext* context,
                                         const v1::GetDictionaryRequest* request,
                                         v1::GetDictionaryResponse* response) {
  if (grpc::Status denied = Admit(*context, "GetDictionary"); !denied.ok()) return denied;
  return Reply(engine_->GetDictionary(*request), response);
}

grpc::Status AdminService::ImportDictionary(grpc::ServerContext* context,
                                            const v1::ImportDictionaryRequest* request,
                                            v1::DictionaryInfo* response) {
  if (grpc::Status denied = Admit(*context, "ImportDictionary"); !denied.ok()) return denied;
  return Reply(engine_->ImportDictionary(*request), response);
}

grpc::Status AdminService::GcDictionaries(grpc::ServerContext* context,
                                          const v1::GcDictionariesRequest* request,
                                          v1::GcDictionariesResponse* response) {
  if (grpc::Status denied = Admit(*context, "GcDictionaries"); !denied.ok()) return denied;
  return Reply(engine_->GcDictionaries(*request), response);
}

grpc::Status AdminService::Verify(grpc::ServerContext* context,
                                  const v1::VerifyRequest* request,
                                  v1::VerifyResponse* response) {
  if (grpc::Status denied = Admit(*context, "Verify"); !denied.ok()) return denied;
  return Reply(engine_->Verify(*request, [context] { return context->IsCancelled(); }),
               response);
}

grpc::Status AdminService::Recompress(grpc::ServerContext* context,
                                      const v1::RecompressRequest* request,
                                      v1::RecompressStatus* response) {
  if (grpc::Status denied = Admit(*context, "Recompress"); !denied.ok()) return denied;
  return Reply(engine_->Recompress(*request), response);
}

grpc::Status AdminService::GetRecompressStatus(grpc::ServerContext* context,
                                               const v1::RecompressRequest* request,
                                               v1::RecompressStatus* response) {
  if (grpc::Status denied = Admit(*context, "GetRecompressStatus"); !denied.ok()) return denied;
  return Reply(engine_->GetRecompressStatus(*request), response);
}

}  // namespace dictlog::service
