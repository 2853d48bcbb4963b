// The one place where the client turns grpc::Status into absl::Status (same canonical
// code numbers on both sides), and reads a status's details (grpc-status-details-bin).
#ifndef DICTLOG_CLIENT_GRPC_STATUS_H_
#define DICTLOG_CLIENT_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include <optional>

#include "absl/status/status.h"
#include "proto/dictlog.pb.h"

namespace dictlog::client {

absl::Status FromGrpcStatus(const grpc::Status& status);

// The NotServedHere of a FAILED_PRECONDITION answered to a `dictlog-route: direct` read
// (an RpcStatus in the status details holding a TypedDetail of type
// kNotServedHereType); nullopt for any other status or unreadable details.
inline constexpr char kNotServedHereType[] = "type.googleapis.com/dictlog.v1.NotServedHere";
std::optional<v1::NotServedHere> NotServedHereOf(const grpc::Status& status);

}  // namespace dictlog::client

#endif  // DICTLOG_CLIENT_GRPC_STATUS_H_
