// The partition rule of cluster mode: which partition of dictlog.records holds a pool's
// records (docs/cluster.md "Ids", ADR 0017). One copy for the server (server/cluster's
// PartitionOf) and the clients that route reads by it (client/shard_router.h; the
// Python client has the same rule and test vectors). Stateless, thread-safe.
#ifndef DICTLOG_COMMON_POOL_PARTITION_H_
#define DICTLOG_COMMON_POOL_PARTITION_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace dictlog {

// FNV-1a, 64 bits (offset basis 14695981039346656037, prime 1099511628211), over the
// pool name's bytes.
uint64_t PoolHash(absl::string_view pool);

// PoolHash(pool) modulo `partitions` (> 0): the same on every node and client.
uint32_t PoolPartition(absl::string_view pool, uint32_t partitions);

}  // namespace dictlog

#endif  // DICTLOG_COMMON_POOL_PARTITION_H_
