// TokenScopes: which category-limited tokens may touch a category, as a comparable
// key (the scope isolation of --isolate_scopes, docs/security.md). Two categories
// whose keys differ are visible to different sets of limited tokens, so they must not
// share a pool (nor its dictionary). Tokens without category patterns see every
// category and are left out of every key.
//
// Thread safety: immutable after construction; any thread may call it concurrently.
#ifndef DICTLOG_SERVER_AUTH_TOKEN_SCOPES_H_
#define DICTLOG_SERVER_AUTH_TOKEN_SCOPES_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "server/auth/token_file.h"

namespace dictlog::auth {

class TokenScopes {
 public:
  // Keeps the grants that are limited to categories.
  explicit TokenScopes(const std::vector<TokenEntry>& entries);

  // The scope key of `category`: the tokens-file lines of the limited tokens that
  // allow it, e.g. "4,5"; empty if only unlimited tokens may touch it.
  std::string KeyOf(absl::string_view category) const;

  // The one scope key of every category starting with `prefix`, or nullopt if a
  // limited token allows some of them but not all (e.g. prefix "web" and a token
  // limited to "web.a*").
  std::optional<std::string> KeyOfPrefix(absl::string_view prefix) const;

  // For messages: "the tokens of lines 4,5" or "only unlimited tokens".
  static std::string Describe(absl::string_view key);

 private:
  std::vector<Grant> limited_;
};

}  // namespace dictlog::auth

#endif  // DICTLOG_SERVER_AUTH_TOKEN_SCOPES_H_
