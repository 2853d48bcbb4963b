#include "common/pool_partition.h"

namespace dictlog {

uint64_t PoolHash(absl::string_view pool) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : pool) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

uint32_t PoolPartition(absl::string_view pool, uint32_t partitions) {
  return static_cast<uint32_t>(PoolHash(pool) % partitions);
}

}  // namespace dictlog
