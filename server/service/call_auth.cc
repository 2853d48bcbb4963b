#include "server/service/call_auth.h"

#include <optional>

#include "common/status_macros.h"

namespace dictlog::service {

absl::StatusOr<const auth::Grant*> CallAuth::Check(const grpc::ServerContext& context,
                                                   auth::Role role,
                                                   absl::string_view method) const {
  if (authorizer_ == nullptr) return &auth::UnrestrictedGrant();
  std::optional<absl::string_view> authorization;
  const auto& metadata = context.client_metadata();
  if (auto it = metadata.find("authorization"); it != metadata.end()) {
    authorization = absl::string_view(it->second.data(), it->second.size());
  }
  ASSIGN_OR_RETURN(const auth::Grant* grant, authorizer_->Authenticate(authorization));
  RETURN_IF_ERROR(auth::RequireRole(*grant, role, method));
  return grant;
}

}  // namespace dictlog::service
