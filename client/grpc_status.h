// The one place where the client turns grpc::Status into absl::Status (same canonical
// code numbers on both sides).
#ifndef DICTLOG_CLIENT_GRPC_STATUS_H_
#define DICTLOG_CLIENT_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace dictlog::client {

absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace dictlog::client

#endif  // DICTLOG_CLIENT_GRPC_STATUS_H_
