// NameAdmission: the gate every new pool, and every new category of a pool, passes
// before it is created (issue 16): at most `max_pools` pools, at most
// `max_categories_per_pool` categories in a pool besides its own name, and, with
// scope isolation, no pool holding categories of different token scopes (their
// records would share one dictionary: a compression side channel, docs/security.md).
// An append's pools and categories are admitted all or none: a batch with one record
// over a limit creates nothing and fails (RESOURCE_EXHAUSTED, or FAILED_PRECONDITION
// for isolation). Messages name only the caller's own category, never a pool or
// another category.
//
// Thread safety: all methods may be called concurrently. Creations are serialised by
// one mutex, taken only when an append needs something new. The router, registry and
// store are borrowed and must outlive it.
#ifndef DICTLOG_SERVER_ENGINE_NAME_ADMISSION_H_
#define DICTLOG_SERVER_ENGINE_NAME_ADMISSION_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "server/engine/append_input.h"
#include "server/pool/pool_registry.h"
#include "server/pool/router.h"
#include "server/store/store.h"

namespace dictlog::engine {

// The scope key of a category (auth::TokenScopes::KeyOf): categories with different
// keys are visible to different category-limited tokens.
using ScopeOf = std::function<std::string(absl::string_view category)>;

struct NameLimits {
  // Most pools; 0: no limit. Pools created at start-up from the configuration and
  // pools already stored count but are never refused. Default 4096.
  size_t max_pools = 4096;
  // Most categories in one pool besides the pool's own name; 0: no limit. Default 1024.
  size_t max_categories_per_pool = 1024;
  // Scope isolation (--isolate_scopes) when set: a category joins a pool only if its
  // key equals the key of what the pool holds, and appends to a pool that already
  // mixes scopes (stored before isolation was on) are refused. Default: unset.
  ScopeOf scope_of;
};

class NameAdmission {
 public:
  // Finds the stored pools that mix scopes (only with scope_of).
  NameAdmission(NameLimits limits, const pool::Router* router,
                pool::PoolRegistry* registry, store::Store* store);

  NameAdmission(const NameAdmission&) = delete;
  NameAdmission& operator=(const NameAdmission&) = delete;

  // Names of the pools that mixed scopes when the store was opened (empty without
  // scope isolation); appends to them are refused.
  const std::vector<std::string>& mixed_pools() const { return mixed_names_; }

  // Creates every pool and category `records` (validated) need, or none of them.
  absl::Status Admit(absl::Span<const AppendInput> records) ABSL_LOCKS_EXCLUDED(mu_);

  // Admin CreatePool: counts against max_pools (RESOURCE_EXHAUSTED when full).
  absl::StatusOr<std::shared_ptr<pool::Pool>> CreatePool(absl::string_view name,
                                                         const v1::PoolOptions& options)
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // What one append would add: pools, and categories per pool (by pool name).
  struct Plan {
    std::vector<std::string> pools;
    std::vector<std::pair<std::string, std::string>> categories;  // (pool, category)
  };

  // The category every other member of pool `name` must share a scope with: its
  // own name if that routes to it, else its first category; empty if none.
  std::string Representative(absl::string_view name, const pool::Pool* pool,
                             const Plan& plan) const;
  absl::Status CheckIsolated(absl::string_view pool_name, const pool::Pool* pool,
                             absl::string_view category, const Plan& plan) const;
  absl::StatusOr<Plan> PlanLocked(absl::Span<const AppendInput> records) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CreateLocked(const Plan& plan) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool Mixes(const pool::Pool& pool) const;

  const NameLimits limits_;
  const pool::Router& router_;
  pool::PoolRegistry& registry_;
  store::Store& store_;
  absl::flat_hash_set<uint32_t> mixed_;  // Pool ids; immutable after construction.
  std::vector<std::string> mixed_names_;

  absl::Mutex mu_;  // Held while planning and creating.
};

}  // namespace dictlog::engine

#endif  // DICTLOG_SERVER_ENGINE_NAME_ADMISSION_H_
