// Authorizer: turns a call's `authorization` metadata ("Bearer <token>") into the
// Grant of that token, and checks a Grant against what a call needs (a role, a
// category). Tokens are compared as SHA-256 digests, against every known digest with
// a constant-time comparison, so the time taken says nothing about how close a guess
// was. Nothing here logs or returns a token.
//
// Codes: a missing, malformed or unknown token is UNAUTHENTICATED; a known token
// whose role or categories do not allow the call is PERMISSION_DENIED.
//
// Thread safety: immutable after construction; any thread may call it concurrently.
#ifndef DICTLOG_SERVER_AUTH_AUTHORIZER_H_
#define DICTLOG_SERVER_AUTH_AUTHORIZER_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/auth/token_file.h"

namespace dictlog::auth {

class Authorizer {
 public:
  explicit Authorizer(std::vector<TokenEntry> entries) : entries_(std::move(entries)) {}

  // Loads a tokens file (token_file.h); its errors.
  static absl::StatusOr<std::unique_ptr<Authorizer>> FromFile(const std::string& path);

  Authorizer(const Authorizer&) = delete;
  Authorizer& operator=(const Authorizer&) = delete;

  // `authorization`: the value of the call's authorization metadata, nullopt if the
  // call carries none. The returned Grant lives as long as the Authorizer.
  absl::StatusOr<const Grant*> Authenticate(
      std::optional<absl::string_view> authorization) const;

  // The tokens it knows (digests and grants).
  const std::vector<TokenEntry>& entries() const { return entries_; }

 private:
  const std::vector<TokenEntry> entries_;
};

// The Grant used when no tokens file is configured: admin, every category.
const Grant& UnrestrictedGrant();

// OK if `grant`'s role is at least `needed`; else PERMISSION_DENIED naming `method`.
absl::Status RequireRole(const Grant& grant, Role needed, absl::string_view method);

// OK if `grant` allows `category`; else PERMISSION_DENIED naming it.
absl::Status RequireCategory(const Grant& grant, absl::string_view category);

}  // namespace dictlog::auth

#endif  // DICTLOG_SERVER_AUTH_AUTHORIZER_H_
