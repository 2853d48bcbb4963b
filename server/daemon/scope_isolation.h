// Scope isolation (dictlogd --isolate_scopes, docs/security.md): categories that
// different category-limited tokens may touch never share a pool, so no tenant's
// records are compressed with a dictionary trained on another tenant's records (and
// no tenant can probe another's strings through compressed sizes). Enforced twice:
// CheckRoutesIsolated refuses, at start-up, routing rules that would put categories
// of different scopes into one pool; the engine refuses, at append time, a category
// whose scope differs from what its pool already holds (engine::NameLimits::scope_of,
// given ScopeOfCategory).
//
// Thread safety: CheckRoutesIsolated is a pure function; the ScopeOf it returns may be
// called concurrently.
#ifndef DICTLOG_SERVER_DAEMON_SCOPE_ISOLATION_H_
#define DICTLOG_SERVER_DAEMON_SCOPE_ISOLATION_H_

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "server/auth/token_scopes.h"
#include "server/engine/name_admission.h"
#include "server/pool/router.h"

namespace dictlog::service {

// INVALID_ARGUMENT naming the pool and the rules when the categories `rules` route
// into one pool (with the pool's own name, when it routes to itself) are not all in
// one scope, or a prefix rule's categories are split by a token's patterns. Exact and
// prefix rules are judged alone, so a prefix shadowed by longer rules may be refused
// although what it still routes is uniform: add rules or narrow the patterns then.
absl::Status CheckRoutesIsolated(const auth::TokenScopes& scopes,
                                 const std::vector<pool::RouteRule>& rules);

// The engine's scope key function over `scopes`.
engine::ScopeOf ScopeOfCategory(std::shared_ptr<const auth::TokenScopes> scopes);

}  // namespace dictlog::service

#endif  // DICTLOG_SERVER_DAEMON_SCOPE_ISOLATION_H_
