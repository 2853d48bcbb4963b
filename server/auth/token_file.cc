#include "server/auth/token_file.h"

#include <openssl/sha.h>

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"

namespace dictlog::auth {
namespace {

constexpr size_t kMinTokenLength = 16;
constexpr absl::string_view kHashPrefix = "sha256:";

// The file holds secrets: errors name the line, never a field of it.
absl::Status LineError(int line, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("tokens file line ", line, ": ", message));
}

bool IsTokenChar(char c) { return c > ' ' && c < 127; }

absl::StatusOr<Digest> ParseHexDigest(absl::string_view hex, int line) {
  Digest digest;
  if (hex.size() != 2 * digest.size()) {
    return LineError(line, "sha256: needs 64 lowercase hex digits");
  }
  for (size_t i = 0; i < digest.size(); ++i) {
    int value = 0;
    for (const char c : hex.substr(2 * i, 2)) {
      int nibble = -1;
      if (c >= '0' && c <= '9') nibble = c - '0';
      if (c >= 'a' && c <= 'f') nibble = c - 'a' + 10;
      if (nibble < 0) return LineError(line, "sha256: needs 64 lowercase hex digits");
      value = value * 16 + nibble;
    }
    digest[i] = static_cast<uint8_t>(value);
  }
  return digest;
}

absl::StatusOr<Digest> ParseToken(absl::string_view field, int line) {
  if (absl::StartsWith(field, kHashPrefix)) {
    return ParseHexDigest(field.substr(kHashPrefix.size()), line);
  }
  if (field.size() < kMinTokenLength) {
    return LineError(line, absl::StrCat("a token needs at least ", kMinTokenLength,
                                        " characters"));
  }
  for (const char c : field) {
    if (!IsTokenChar(c)) return LineError(line, "a token is printable ASCII");
  }
  return Sha256(field);
}

absl::StatusOr<Role> ParseRole(absl::string_view field, int line) {
  for (const Role role : {Role::kReader, Role::kWriter, Role::kAdmin}) {
    if (field == RoleName(role)) return role;
  }
  return LineError(line, "unknown role (reader, writer or admin)");
}

absl::StatusOr<std::vector<std::string>> ParsePatterns(absl::string_view field, int line) {
  std::vector<std::string> patterns;
  for (absl::string_view pattern : absl::StrSplit(field, ',')) {
    const size_t star = pattern.find('*');
    if (pattern.empty() || (star != absl::string_view::npos && star + 1 != pattern.size())) {
      return LineError(line, "bad category pattern (NAME or PREFIX*)");
    }
    patterns.emplace_back(pattern);
  }
  return patterns;
}

absl::StatusOr<TokenEntry> ParseLine(absl::string_view text, int line) {
  const std::vector<absl::string_view> fields =
      absl::StrSplit(text, absl::ByAnyChar(" \t"), absl::SkipEmpty());
  if (fields.size() < 2 || fields.size() > 3) {
    return LineError(line, "expected TOKEN ROLE [CATEGORY-PATTERN,...]");
  }
  TokenEntry entry;
  ASSIGN_OR_RETURN(entry.digest, ParseToken(fields[0], line));
  ASSIGN_OR_RETURN(entry.grant.role, ParseRole(fields[1], line));
  if (fields.size() == 3) {
    ASSIGN_OR_RETURN(entry.grant.categories, ParsePatterns(fields[2], line));
    if (entry.grant.role == Role::kAdmin) {
      return LineError(line, "an admin token cannot be limited to categories");
    }
  }
  entry.grant.line = line;
  entry.grant.principal = PrincipalOf(entry.digest);
  return entry;
}

}  // namespace

absl::string_view RoleName(Role role) {
  switch (role) {
    case Role::kReader:
      return "reader";
    case Role::kWriter:
      return "writer";
    case Role::kAdmin:
      return "admin";
  }
  return "?";
}

Digest Sha256(absl::string_view data) {
  Digest digest;
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest.data());
  return digest;
}

std::string PrincipalOf(const Digest& digest) {
  std::string input("dictlog principal");
  input.push_back('\0');
  input.append(reinterpret_cast<const char*>(digest.data()), digest.size());
  const Digest derived = Sha256(input);
  return std::string(reinterpret_cast<const char*>(derived.data()), kPrincipalBytes);
}

bool Grant::AllowsCategory(absl::string_view category) const {
  if (categories.empty()) return true;
  for (const std::string& pattern : categories) {
    if (absl::EndsWith(pattern, "*")) {
      if (absl::StartsWith(category, absl::string_view(pattern).substr(
                                         0, pattern.size() - 1))) {
        return true;
      }
    } else if (category == pattern) {
      return true;
    }
  }
  return false;
}

absl::StatusOr<std::vector<TokenEntry>> ParseTokenFile(absl::string_view text) {
  std::vector<TokenEntry> entries;
  int line = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++line;
    const absl::string_view stripped = absl::StripAsciiWhitespace(raw);
    if (stripped.empty() || stripped[0] == '#') continue;
    ASSIGN_OR_RETURN(TokenEntry entry, ParseLine(stripped, line));
    for (const TokenEntry& other : entries) {
      if (other.digest == entry.digest) {
        return LineError(line, absl::StrCat("the same token as line ", other.grant.line));
      }
    }
    entries.push_back(std::move(entry));
  }
  if (entries.empty()) return absl::InvalidArgumentError("tokens file holds no tokens");
  return entries;
}

absl::StatusOr<std::vector<TokenEntry>> LoadTokenFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read tokens file ", path));
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::vector<TokenEntry>> entries = ParseTokenFile(text.str());
  if (!entries.ok()) {
    return absl::Status(entries.status().code(),
                        absl::StrCat(path, ": ", entries.status().message()));
  }
  return entries;
}

}  // namespace dictlog::auth
