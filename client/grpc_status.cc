#include "client/grpc_status.h"

namespace dictlog::client {

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

std::optional<v1::NotServedHere> NotServedHereOf(const grpc::Status& status) {
  if (status.error_code() != grpc::StatusCode::FAILED_PRECONDITION ||
      status.error_details().empty()) {
    return std::nullopt;
  }
  v1::RpcStatus details;
  if (!details.ParseFromString(status.error_details())) return std::nullopt;
  for (const v1::TypedDetail& detail : details.details()) {
    v1::NotServedHere refused;
    if (detail.type_url() == kNotServedHereType && refused.ParseFromString(detail.value())) {
      return refused;
    }
  }
  return std::nullopt;
}

}  // namespace dictlog::client
