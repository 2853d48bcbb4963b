#include "server/cluster/partitioning.h"

#include "common/pool_partition.h"

namespace dictlog::cluster {

int32_t PartitionOf(absl::string_view pool, int32_t partitions) {
  return static_cast<int32_t>(PoolPartition(pool, static_cast<uint32_t>(partitions)));
}

}  // namespace dictlog::cluster
