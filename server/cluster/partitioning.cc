#include "server/cluster/partitioning.h"

namespace dictlog::cluster {

int32_t PartitionOf(absl::string_view pool, int32_t partitions) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : pool) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return static_cast<int32_t>(hash % static_cast<uint64_t>(partitions));
}

}  // namespace dictlog::cluster
