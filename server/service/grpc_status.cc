#include "server/service/grpc_status.h"

#include <string>

namespace dictlog::service {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

grpc::Status ToGrpcStatus(const absl::Status& status, const v1::RpcStatus& details) {
  if (status.ok()) return grpc::Status::OK;
  v1::RpcStatus full = details;
  full.set_code(static_cast<int>(status.code()));
  full.set_message(std::string(status.message()));
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()), full.SerializeAsString());
}

}  // namespace dictlog::service
