// The tokens file of dictlogd (--tokens_file): which bearer tokens exist and what each
// may do. One token a line:
//
//   # comment
//   TOKEN          ROLE  [CATEGORY-PATTERN,...]
//   sha256:HEX64   ROLE  [CATEGORY-PATTERN,...]
//
// TOKEN is the secret itself (at least 16 printable ASCII characters, no spaces);
// sha256:HEX64 is the lowercase hex SHA-256 of the secret, so the file need not hold
// it (`printf %s "$TOKEN" | sha256sum`). ROLE is reader, writer or admin. A pattern
// is a category name or a prefix ending in '*'; without patterns every category is
// allowed. Admin tokens cannot be limited to categories (Admin RPCs act on pools).
// Only digests are kept in memory; errors name the line number, never a field of the
// file (a token written in the wrong place would otherwise be printed).
//
// Thread safety: plain values and free functions; Grant is immutable once parsed.
#ifndef DICTLOG_SERVER_AUTH_TOKEN_FILE_H_
#define DICTLOG_SERVER_AUTH_TOKEN_FILE_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace dictlog::auth {

// Ordered: each role may do everything the ones before it may.
enum class Role { kReader = 0, kWriter = 1, kAdmin = 2 };

absl::string_view RoleName(Role role);

using Digest = std::array<uint8_t, 32>;

// SHA-256 of `data`.
Digest Sha256(absl::string_view data);

inline constexpr size_t kPrincipalBytes = 16;

// The principal of the token whose digest is `digest`: kPrincipalBytes bytes of a
// domain-separated SHA-256 of it, stable across restarts and tokens-file edits (it
// scopes stored request ids), and never equal to anything in the tokens file.
std::string PrincipalOf(const Digest& digest);

// What one token may do.
struct Grant {
  Role role = Role::kReader;
  // Empty: every category. Otherwise exact names, or prefixes written "PREFIX*".
  std::vector<std::string> categories;
  // Line of the tokens file it came from (0 for grants not from a file); used in
  // messages to name a token without printing it.
  int line = 0;
  // PrincipalOf the token's digest; empty for grants not from a file (no tokens
  // file: every caller is the one anonymous principal).
  std::string principal;

  bool AllowsCategory(absl::string_view category) const;
};

struct TokenEntry {
  Digest digest;
  Grant grant;
};

// INVALID_ARGUMENT naming the line for a malformed line, a short token, an unknown
// role, a bad pattern, an admin token with patterns, a duplicate token, or no tokens.
absl::StatusOr<std::vector<TokenEntry>> ParseTokenFile(absl::string_view text);

// Reads and parses `path`; NOT_FOUND if it cannot be read.
absl::StatusOr<std::vector<TokenEntry>> LoadTokenFile(const std::string& path);

}  // namespace dictlog::auth

#endif  // DICTLOG_SERVER_AUTH_TOKEN_FILE_H_
