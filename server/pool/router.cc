#include "server/pool/router.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/pool/names.h"

namespace dictlog::pool {

absl::StatusOr<Router> Router::Create(const std::vector<RouteRule>& rules) {
  Router router;
  for (const RouteRule& rule : rules) {
    RETURN_IF_ERROR(ValidateName(rule.pool, "routing rule pool"));
    if (rule.category.empty() == rule.prefix.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "routing rule for pool '", rule.pool,
          "' must set exactly one of category and prefix"));
    }
    if (!rule.category.empty()) {
      RETURN_IF_ERROR(ValidateName(rule.category, "routing rule category"));
      if (!router.exact_.emplace(rule.category, rule.pool).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("two routing rules for category '", rule.category, "'"));
      }
      continue;
    }
    RETURN_IF_ERROR(ValidateName(rule.prefix, "routing rule prefix"));
    for (const auto& [prefix, pool] : router.prefixes_) {
      if (prefix == rule.prefix) {
        return absl::InvalidArgumentError(
            absl::StrCat("two routing rules for prefix '", rule.prefix, "'"));
      }
    }
    router.prefixes_.emplace_back(rule.prefix, rule.pool);
  }
  std::stable_sort(router.prefixes_.begin(), router.prefixes_.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  return router;
}

std::string Router::Route(absl::string_view category) const {
  if (auto it = exact_.find(category); it != exact_.end()) return it->second;
  for (const auto& [prefix, pool] : prefixes_) {
    if (absl::StartsWith(category, prefix)) return pool;
  }
  return std::string(category);
}

}  // namespace dictlog::pool
