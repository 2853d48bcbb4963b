#include "server/daemon/scope_isolation.h"

#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace dictlog::service {
namespace {

// What routes into one pool: a description of each source and its scope key.
struct Source {
  std::string what;
  std::string key;
};

}  // namespace

absl::Status CheckRoutesIsolated(const auth::TokenScopes& scopes,
                                 const std::vector<pool::RouteRule>& rules) {
  ASSIGN_OR_RETURN(pool::Router router, pool::Router::Create(rules));
  std::map<std::string, std::vector<Source>> pools;
  for (const pool::RouteRule& rule : rules) {
    if (!rule.category.empty()) {
      pools[rule.pool].push_back(
          {absl::StrCat("category '", rule.category, "'"), scopes.KeyOf(rule.category)});
      continue;
    }
    std::optional<std::string> key = scopes.KeyOfPrefix(rule.prefix);
    if (!key.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--isolate_scopes: the routing rule for prefix '", rule.prefix, "' (pool '",
          rule.pool, "') covers categories that a category-limited token may only "
          "partly access; split the rule or change the token's patterns"));
    }
    pools[rule.pool].push_back({absl::StrCat("prefix '", rule.prefix, "'"), *key});
  }
  for (auto& [pool, sources] : pools) {
    if (router.Route(pool) == pool) {
      sources.push_back({absl::StrCat("category '", pool, "' (the pool's own name)"),
                         scopes.KeyOf(pool)});
    }
    for (const Source& source : sources) {
      if (source.key == sources.front().key) continue;
      return absl::InvalidArgumentError(absl::StrCat(
          "--isolate_scopes: pool '", pool, "' would hold ", sources.front().what, " (",
          auth::TokenScopes::Describe(sources.front().key), ") and ", source.what, " (",
          auth::TokenScopes::Describe(source.key),
          "); route categories of different token scopes to different pools"));
    }
  }
  return absl::OkStatus();
}

engine::ScopeOf ScopeOfCategory(std::shared_ptr<const auth::TokenScopes> scopes) {
  return [scopes = std::move(scopes)](absl::string_view category) {
    return scopes->KeyOf(category);
  };
}

}  // namespace dictlog::service
