// The one place where the server turns absl::Status into grpc::Status. The canonical
// codes are the same numbers in both, so the code is carried over unchanged.
#ifndef DICTLOG_SERVER_SERVICE_GRPC_STATUS_H_
#define DICTLOG_SERVER_SERVICE_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"
#include "proto/dictlog.pb.h"

namespace dictlog::service {

grpc::Status ToGrpcStatus(const absl::Status& status);
// With `details` in the trailer grpc-status-details-bin (docs/api.md "GetShardMap").
grpc::Status ToGrpcStatus(const absl::Status& status, const v1::RpcStatus& details);

}  // namespace dictlog::service

#endif  // DICTLOG_SERVER_SERVICE_GRPC_STATUS_H_
