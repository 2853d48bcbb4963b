#include "server/auth/authorizer.h"

#include <openssl/crypto.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace dictlog::auth {
namespace {

constexpr absl::string_view kBearer = "bearer ";

// The token of "Bearer <token>" (scheme case-insensitive), or empty.
absl::string_view BearerToken(absl::string_view authorization) {
  if (authorization.size() <= kBearer.size() ||
      !absl::EqualsIgnoreCase(authorization.substr(0, kBearer.size()), kBearer)) {
    return {};
  }
  return absl::StripAsciiWhitespace(authorization.substr(kBearer.size()));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Authorizer>> Authorizer::FromFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::vector<TokenEntry> entries, LoadTokenFile(path));
  return std::make_unique<Authorizer>(std::move(entries));
}

absl::StatusOr<const Grant*> Authorizer::Authenticate(
    std::optional<absl::string_view> authorization) const {
  if (!authorization.has_value()) {
    return absl::UnauthenticatedError(
        "this server needs a bearer token (metadata \"authorization: Bearer <token>\")");
  }
  const absl::string_view token = BearerToken(*authorization);
  if (token.empty()) {
    return absl::UnauthenticatedError(
        "the authorization metadata must be \"Bearer <token>\"");
  }
  const Digest digest = Sha256(token);
  const Grant* found = nullptr;
  // Every entry is compared, in constant time, whatever matched before.
  for (const TokenEntry& entry : entries_) {
    if (CRYPTO_memcmp(entry.digest.data(), digest.data(), digest.size()) == 0) {
      found = &entry.grant;
    }
  }
  if (found == nullptr) return absl::UnauthenticatedError("unknown bearer token");
  return found;
}

const Grant& UnrestrictedGrant() {
  static const Grant* const grant = new Grant{Role::kAdmin, {}, 0};
  return *grant;
}

absl::Status RequireRole(const Grant& grant, Role needed, absl::string_view method) {
  if (grant.role >= needed) return absl::OkStatus();
  return absl::PermissionDeniedError(
      absl::StrCat(method, " needs the ", RoleName(needed), " role; the token (line ",
                   grant.line, " of the tokens file) is a ", RoleName(grant.role)));
}

absl::Status RequireCategory(const Grant& grant, absl::string_view category) {
  if (grant.AllowsCategory(category)) return absl::OkStatus();
  return absl::PermissionDeniedError(
      absl::StrCat("the token (line ", grant.line,
                   " of the tokens file) may not access category \"", category, "\""));
}

}  // namespace dictlog::auth
