#include "server/engine/name_admission.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace dictlog::engine {
namespace {

template <typename T>
bool Contains(const std::vector<T>& items, const T& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

absl::Status NotIsolated(absl::string_view category) {
  return absl::FailedPreconditionError(absl::StrCat(
      "category '", category,
      "' would share a pool (and its dictionary) with categories of another token "
      "scope (--isolate_scopes); route it to a pool of its own scope"));
}

}  // namespace

NameAdmission::NameAdmission(NameLimits limits, const pool::Router* router,
                             pool::PoolRegistry* registry, store::Store* store)
    : limits_(std::move(limits)), router_(*router), registry_(*registry), store_(*store) {
  if (!limits_.scope_of) return;
  for (const std::shared_ptr<pool::Pool>& pool : registry_.List()) {
    if (!Mixes(*pool)) continue;
    mixed_.insert(pool->id());
    mixed_names_.push_back(pool->name());
  }
}

bool NameAdmission::Mixes(const pool::Pool& pool) const {
  std::vector<std::string> members = pool.Categories();
  if (router_.Route(pool.name()) == pool.name()) members.push_back(pool.name());
  for (const std::string& member : members) {
    if (limits_.scope_of(member) != limits_.scope_of(members.front())) return true;
  }
  return false;
}

absl::Status NameAdmission::Admit(absl::Span<const AppendInput> records) {
  bool missing = false;
  for (size_t i = 0; i < records.size(); ++i) {
    const AppendInput& record = records[i];
    // A run of one category: checked once.
    if (i > 0 && record.category == records[i - 1].category) continue;
    std::shared_ptr<pool::Pool> pool = registry_.Find(router_.Route(record.category));
    if (pool == nullptr) {
      missing = true;
    } else if (mixed_.contains(pool->id())) {
      return NotIsolated(record.category);
    } else if (!pool->FindCategoryIndex(record.category).has_value()) {
      missing = true;
    }
  }
  if (!missing) return absl::OkStatus();  // The common case: no lock.
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(Plan plan, PlanLocked(records));
  return CreateLocked(plan);
}

absl::StatusOr<NameAdmission::Plan> NameAdmission::PlanLocked(
    absl::Span<const AppendInput> records) const {
  Plan plan;
  for (const AppendInput& record : records) {
    const absl::string_view category = record.category;
    const std::string name = router_.Route(category);
    std::shared_ptr<pool::Pool> pool = registry_.Find(name);
    if (pool == nullptr && !Contains(plan.pools, name)) {
      if (limits_.max_pools != 0 &&
          registry_.Count() + plan.pools.size() >= limits_.max_pools) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "category '", category, "' needs a new pool, and the server holds its limit of ",
            limits_.max_pools, " pools (--max_pools)"));
      }
      plan.pools.push_back(name);
    }
    if (category == name) continue;  // Index 0: nothing to create.
    const std::pair<std::string, std::string> entry(name, std::string(category));
    if ((pool != nullptr && pool->FindCategoryIndex(category).has_value()) ||
        Contains(plan.categories, entry)) {
      continue;
    }
    size_t count = pool == nullptr ? 0 : pool->CategoryCount();
    for (const auto& planned : plan.categories) count += planned.first == name ? 1 : 0;
    if (limits_.max_categories_per_pool != 0 && count >= limits_.max_categories_per_pool) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "category '", category, "' would be a new category of a pool that holds its limit of ",
          limits_.max_categories_per_pool, " categories (--max_categories_per_pool)"));
    }
    RETURN_IF_ERROR(CheckIsolated(name, pool.get(), category, plan));
    plan.categories.push_back(entry);
  }
  return plan;
}

std::string NameAdmission::Representative(absl::string_view name, const pool::Pool* pool,
                                          const Plan& plan) const {
  if (router_.Route(name) == name) return std::string(name);
  if (pool != nullptr) {
    std::vector<std::string> categories = pool->Categories();
    if (!categories.empty()) return categories.front();
  }
  for (const auto& [planned_pool, category] : plan.categories) {
    if (planned_pool == name) return category;
  }
  return {};
}

absl::Status NameAdmission::CheckIsolated(absl::string_view pool_name,
                                          const pool::Pool* pool,
                                          absl::string_view category,
                                          const Plan& plan) const {
  if (!limits_.scope_of) return absl::OkStatus();
  const std::string representative = Representative(pool_name, pool, plan);
  if (representative.empty() ||
      limits_.scope_of(representative) == limits_.scope_of(category)) {
    return absl::OkStatus();
  }
  return NotIsolated(category);
}

absl::Status NameAdmission::CreateLocked(const Plan& plan) {
  for (const std::string& name : plan.pools) {
    RETURN_IF_ERROR(registry_.GetOrCreate(name).status());
  }
  for (const auto& [name, category] : plan.categories) {
    std::shared_ptr<pool::Pool> pool = registry_.Find(name);
    if (pool == nullptr) return absl::InternalError("a pool just created is missing");
    RETURN_IF_ERROR(pool->CategoryIndex(category, store_).status());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<pool::Pool>> NameAdmission::CreatePool(
    absl::string_view name, const v1::PoolOptions& options) {
  absl::MutexLock lock(&mu_);
  if (limits_.max_pools != 0 && registry_.Find(name) == nullptr &&
      registry_.Count() >= limits_.max_pools) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the server holds its limit of ", limits_.max_pools, " pools (--max_pools)"));
  }
  return registry_.Create(name, options);
}

}  // namespace dictlog::engine
