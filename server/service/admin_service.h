// AdminService: the dictlog.v1.Admin gRPC service: pools, dictionaries and
// re-compression, each a call into the LogEngine.
//
// Every method needs the admin role (CallAuth) when the server has a tokens file.
//
// Thread safety: gRPC calls its methods concurrently; it holds no state of its own.
// The engine slot and the authorizer are borrowed and must outlive the service;
// calls get UNAVAILABLE while the slot is empty (the store is opening).
#ifndef DICTLOG_SERVER_SERVICE_ADMIN_SERVICE_H_
#define DICTLOG_SERVER_SERVICE_ADMIN_SERVICE_H_

#include "proto/dictlog.grpc.pb.h"
#include "server/auth/authorizer.h"
#include "server/engine/log_engine.h"
#include "server/service/call_auth.h"
#include "server/service/engine_slot.h"

namespace dictlog::service {

class AdminService final : public v1::Admin::Service {
 public:
  // `authorizer` nullptr: no authentication.
  explicit AdminService(const EngineSlot* engine,
                        const auth::Authorizer* authorizer = nullptr)
      : engine_(*engine), auth_(authorizer) {}

  grpc::Status ListPools(grpc::ServerContext* context, const v1::ListPoolsRequest* request,
                         v1::ListPoolsResponse* response) override;
  grpc::Status GetPool(grpc::ServerContext* context, const v1::GetPoolRequest* request,
                       v1::PoolInfo* response) override;
  grpc::Status CreatePool(grpc::ServerContext* context,
                          const v1::CreatePoolRequest* request,
                          v1::PoolInfo* response) override;
  grpc::Status UpdatePool(grpc::ServerContext* context,
                          const v1::UpdatePoolRequest* request,
                          v1::PoolInfo* response) override;
  grpc::Status DeletePool(grpc::ServerContext* context,
                          const v1::DeletePoolRequest* request,
                          v1::DeletePoolResponse* response) override;

  grpc::Status TrainDictionary(grpc::ServerContext* context,
                               const v1::TrainDictionaryRequest* request,
                               v1::TrainDictionaryResponse* response) override;
  grpc::Status ListDictionaries(grpc::ServerContext* context,
                                const v1::ListDictionariesRequest* request,
                                v1::ListDictionariesResponse* response) override;
  grpc::Status ActivateDictionary(grpc::ServerContext* context,
                                  const v1::ActivateDictionaryRequest* request,
                                  v1::DictionaryInfo* response) override;
  grpc::Status GetDictionary(grpc::ServerContext* context,
                             const v1::GetDictionaryRequest* request,
                             v1::GetDictionaryResponse* response) override;
  grpc::Status ImportDictionary(grpc::ServerContext* context,
                                const v1::ImportDictionaryRequest* request,
                                v1::DictionaryInfo* response) override;
  grpc::Status GcDictionaries(grpc::ServerContext* context,
                              const v1::GcDictionariesRequest* request,
                              v1::GcDictionariesResponse* response) override;
  grpc::Status Verify(grpc::ServerContext* context, const v1::VerifyRequest* request,
                      v1::VerifyResponse* response) override;
  grpc::Status Recompress(grpc::ServerContext* context, const v1::RecompressRequest* request,
                          v1::RecompressStatus* response) override;
  grpc::Status GetRecompressStatus(grpc::ServerContext* context,
                                   const v1::RecompressRequest* request,
                                   v1::RecompressStatus* response) override;
  grpc::Status Backup(grpc::ServerContext* context, const v1::BackupRequest* request,
                      v1::BackupResponse* response) override;
  grpc::Status Flush(grpc::ServerContext* context, const v1::FlushRequest* request,
                     v1::FlushResponse* response) override;

 private:
  // OK if the caller holds the admin role; its gRPC error otherwise.
  grpc::Status Admit(const grpc::ServerContext& context, absl::string_view method) const;

  const EngineSlot& engine_;
  const CallAuth auth_;
};

}  // namespace dictlog::service

#endif  // DICTLOG_SERVER_SERVICE_ADMIN_SERVICE_H_
