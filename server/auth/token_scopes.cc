#include "server/auth/token_scopes.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace dictlog::auth {
namespace {

enum class Coverage { kNone, kSome, kAll };

// How much of "every category starting with `prefix`" one pattern allows.
Coverage PatternCoverage(absl::string_view pattern, absl::string_view prefix) {
  if (absl::EndsWith(pattern, "*")) {
    pattern.remove_suffix(1);
    if (absl::StartsWith(prefix, pattern)) return Coverage::kAll;
    return absl::StartsWith(pattern, prefix) ? Coverage::kSome : Coverage::kNone;
  }
  return absl::StartsWith(pattern, prefix) ? Coverage::kSome : Coverage::kNone;
}

Coverage GrantCoverage(const Grant& grant, absl::string_view prefix) {
  Coverage coverage = Coverage::kNone;
  for (const std::string& pattern : grant.categories) {
    const Coverage one = PatternCoverage(pattern, prefix);
    if (one == Coverage::kAll) return Coverage::kAll;
    if (one == Coverage::kSome) coverage = Coverage::kSome;
  }
  return coverage;
}

void AddLine(int line, std::string* key) {
  absl::StrAppend(key, key->empty() ? "" : ",", line);
}

}  // namespace

TokenScopes::TokenScopes(const std::vector<TokenEntry>& entries) {
  for (const TokenEntry& entry : entries) {
    if (!entry.grant.categories.empty()) limited_.push_back(entry.grant);
  }
}

std::string TokenScopes::KeyOf(absl::string_view category) const {
  std::string key;
  for (const Grant& grant : limited_) {
    if (grant.AllowsCategory(category)) AddLine(grant.line, &key);
  }
  return key;
}

std::optional<std::string> TokenScopes::KeyOfPrefix(absl::string_view prefix) const {
  std::string key;
  for (const Grant& grant : limited_) {
    switch (GrantCoverage(grant, prefix)) {
      case Coverage::kAll:
        AddLine(grant.line, &key);
        break;
      case Coverage::kSome:
        return std::nullopt;
      case Coverage::kNone:
        break;
    }
  }
  return key;
}

std::string TokenScopes::Describe(absl::string_view key) {
  if (key.empty()) return "only unlimited tokens";
  return absl::StrCat("the tokens of lines ", key);
}

}  // namespace dictlog::auth
