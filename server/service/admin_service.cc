#include "server/service/admin_service.h"

#include "server/service/grpc_status.h"
#include "server/service/read_scope.h"

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
  grpc::Status denied =
      ToGrpcStatus(auth_.Check(context, auth::Role::kAdmin, method).status());
  if (!denied.ok()) return denied;
  return engine_.ready() ? grpc::Status::OK : engine_.Check();  // UNAVAILABLE while opening.
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

grpc::Status AdminService::DeletePool(grpc::ServerContext* context,
                                      const v1::DeletePoolRequest* request,
                                      v1::DeletePoolResponse* response) {
  if (grpc::Status denied = Admit(*context, "DeletePool"); !denied.ok()) return denied;
  return Reply(engine_->DeletePool(request->name()), response);
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
  // Readers too, so that clients can decode frames (MultiGetFrames): a dictionary is
  // trained on every category of its pool, so a token limited to categories needs all
  // of them (as for frames, read_scope.h).
  absl::StatusOr<const auth::Grant*> grant =
      auth_.Check(*context, auth::Role::kReader, "GetDictionary");
  if (!grant.ok()) return ToGrpcStatus(grant.status());
  if (!engine_.ready()) return engine_.Check();
  absl::StatusOr<v1::GetDictionaryResponse> dictionary = engine_->GetDictionary(*request);
  if (dictionary.ok() && (*grant)->role != auth::Role::kAdmin) {
    absl::Status allowed = RequireWholePool(
        **grant, engine_->PoolCategories(dictionary->dictionary().pool()));
    if (!allowed.ok()) return ToGrpcStatus(allowed);
  }
  return Reply(std::move(dictionary), response);
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

grpc::Status AdminService::Flush(grpc::ServerContext* context,
                                 const v1::FlushRequest* /*request*/,
                                 v1::FlushResponse* response) {
  if (grpc::Status denied = Admit(*context, "Flush"); !denied.ok()) return denied;
  return Reply(engine_->Flush(), response);
}

grpc::Status AdminService::Backup(grpc::ServerContext* context,
                                  const v1::BackupRequest* request,
                                  v1::BackupResponse* response) {
  if (grpc::Status denied = Admit(*context, "Backup"); !denied.ok()) return denied;
  return Reply(engine_->Backup(*request), response);
}

}  // namespace dictlog::service
