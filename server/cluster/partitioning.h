// Partitioning: which partition of dictlog.records holds a pool's records, and how a
// record's seq encodes its message's offset (docs/cluster.md "Ids", ADR 0017).
// Stateless, thread-safe.
#ifndef DICTLOG_SERVER_CLUSTER_PARTITIONING_H_
#define DICTLOG_SERVER_CLUSTER_PARTITIONING_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace dictlog::cluster {

// Records one message (one Append/AppendBatch call) may hold: a seq's low 16 bits.
inline constexpr uint64_t kMaxBatchRecords = uint64_t{1} << 16;
// Offsets a seq can encode (seq must fit 64 bits).
inline constexpr int64_t kMaxOffset = (int64_t{1} << 47) - 1;

// FNV-1a of the pool name modulo `partitions` (> 0): the same on every node
// (common/pool_partition.h, shared with the clients).
int32_t PartitionOf(absl::string_view pool, int32_t partitions);

// Record `index` (0-based) of the message at `offset`: (offset << 16) + index + 1.
inline uint64_t SeqOf(int64_t offset, uint64_t index) {
  return (static_cast<uint64_t>(offset) << 16) + index + 1;
}
// The offset of the message holding record `seq` (>= 1).
inline int64_t OffsetOf(uint64_t seq) { return static_cast<int64_t>((seq - 1) >> 16); }

}  // namespace dictlog::cluster

#endif  // DICTLOG_SERVER_CLUSTER_PARTITIONING_H_
