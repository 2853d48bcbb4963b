// LogEngine::DropPartition: cluster mode's deletion of a partition this node no longer
// holds (docs/cluster.md "Dropping partitions no longer held", ADR 0030): its pools'
// records go, the pools and every dictionary stay.
#include <cstdio>
#include <functional>

#include "common/status_macros.h"
#include "server/engine/log_engine.h"

namespace dictlog::engine {

absl::StatusOr<LogEngine::PartitionDrop> LogEngine::DropPartition(
    uint32_t partition, const std::function<bool(absl::string_view pool)>& in_partition) {
  if (options_.replicated_log == nullptr) {
    return absl::FailedPreconditionError("DropPartition outside cluster mode");
  }
  PartitionDrop drop;
  {
    // Exclusive: no append, seal or retention pass is between its look-up and its
    // write, so the counts taken here are exactly what the batch deletes.
    absl::MutexLock gate(&manager_->write_gate());
    std::vector<std::shared_ptr<pool::Pool>> pools;
    for (std::shared_ptr<pool::Pool>& pool : registry_->List()) {
      if (in_partition(pool->name())) pools.push_back(std::move(pool));
    }
    for (const std::shared_ptr<pool::Pool>& pool : pools) drop.pool_ids.push_back(pool->id());
    RETURN_IF_ERROR(store_->DropPartitionData(partition, drop.pool_ids));
    for (const std::shared_ptr<pool::Pool>& pool : pools) {
      store::PoolCounters gone = pool->counters();
      drop.records += gone.records;
      drop.stored_bytes += gone.stored_bytes;
      store::PoolCounters delta;
      delta -= gone;
      pool->AddCounters(delta);
      pool->set_last_time_entry_ms(0);  // A rebuild writes its time entries again.
    }
  }
  return drop;
}

void LogEngine::CompactDroppedPartition(const PartitionDrop& drop) {
  for (const uint32_t id : drop.pool_ids) {
    if (absl::Status compacted = store_->CompactPool(id); !compacted.ok()) {
      std::fprintf(stderr, "dictlogd: compacting the dropped records of pool id %u: %s\n",
                   id, compacted.ToString().c_str());
    }
  }
}

}  // namespace dictlog::engine
