// LogEngine::DeletePool: a pool and everything of it goes (docs/storage-format.md,
// "Deleting a pool"; ADR 0015).
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/engine/log_engine.h"
#include "server/pool/names.h"

namespace dictlog::engine {

absl::StatusOr<v1::DeletePoolResponse> LogEngine::DeletePool(absl::string_view name) {
  if (!RefusedInCluster("DeletePool").ok()) {  // Its own message: what happens instead.
    return absl::FailedPreconditionError(
        "DeletePool is not available in cluster mode: it would delete the pool on this "
        "node alone (a replicated delete is planned). A pool's records go through "
        "retention (max_age_seconds, max_bytes of the pool's options in the --config "
        "file; docs/cluster.md)");
  }
  RETURN_IF_ERROR(pool::ValidateName(name, "pool name"));
  std::shared_ptr<pool::Pool> pool;
  storage::DeletedPool tombstone;
  {
    // Exclusive: no append, block seal, re-compression step or retention pass of any
    // pool is between its look-up and its write, so none can write to this pool after
    // it is marked deleted (each checks under the gate, or finds it gone).
    absl::MutexLock gate(&manager_->write_gate());
    ASSIGN_OR_RETURN(pool, FindPool(name));
    ASSIGN_OR_RETURN(tombstone, registry_->Remove(*pool));
  }
  // Other pools' appends and reads go on from here; this pool changes no more.
  v1::DeletePoolResponse response;
  const store::PoolCounters counters = pool->counters();
  response.set_name(pool->name());
  response.set_records(counters.records);
  response.set_raw_bytes(counters.raw_bytes);
  response.set_stored_bytes(counters.stored_bytes);
  response.set_categories(static_cast<uint32_t>(pool->CategoryCount()));
  response.set_next_id(pool::FormatRecordId(pool->name(), tombstone.next_seq()));
  // A failure leaves the tombstone pending: the next start finishes the delete.
  RETURN_IF_ERROR(store_->DeletePoolData(pool->id()));
  ASSIGN_OR_RETURN(const size_t dictionaries, manager_->ForgetPool(pool->id()));
  response.set_dictionaries(static_cast<uint32_t>(dictionaries));
  RETURN_IF_ERROR(registry_->FinishRemove(tombstone));
  pools_deleted_.fetch_add(1, std::memory_order_relaxed);
  // The space comes back; the delete is complete without it.
  if (absl::Status compacted = store_->CompactPool(pool->id()); !compacted.ok()) {
    std::fprintf(stderr, "dictlogd: compacting deleted pool '%s' failed: %s\n",
                 pool->name().c_str(), compacted.ToString().c_str());
  }
  return response;
}

}  // namespace dictlog::engine
