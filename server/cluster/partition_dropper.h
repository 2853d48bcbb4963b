// PartitionDropper: deletes this node's copy of partitions it no longer holds
// (docs/cluster.md "Dropping partitions no longer held", ADR 0030). A partition with
// data here (a stored applied offset) that the assignment in force does not give this
// node is dropped once both hold: it has been unheld for the grace period (by this
// process's clock: a restart starts it again), and the shard map shows enough OTHER
// live nodes serving it that have applied at least what this node applied: as many
// as its assigned replicas besides this node, or every other live node if fewer (at
// least one). A partition held again before that is not dropped. The drop itself is
// the owner's (DropFn: ClusterNode deletes the records, keeping the dictionaries).
//
// Thread safety: every method may be called concurrently; DropFn and CompactFn are
// called from Check's thread, never under this class's lock.
#ifndef DICTLOG_SERVER_CLUSTER_PARTITION_DROPPER_H_
#define DICTLOG_SERVER_CLUSTER_PARTITION_DROPPER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "proto/dictlog.pb.h"
#include "server/cluster/shard_directory.h"

namespace dictlog::cluster {

struct DropperOptions {
  // How long a partition stays unheld before its data may go. Default 10 minutes.
  absl::Duration grace = absl::Minutes(10);
  // The clock (tests inject theirs). Default absl::Now.
  std::function<absl::Time()> now = [] { return absl::Now(); };
};

// What one drop deleted.
struct DroppedPartition {
  uint32_t pools = 0;
  uint64_t records = 0;
  uint64_t stored_bytes = 0;
};

struct DropperStats {
  uint64_t partitions_dropped = 0;
  uint64_t records_dropped = 0;
  uint64_t bytes_dropped = 0;  // Stored bytes.
  uint64_t pending = 0;        // Partitions unheld with data here, not dropped yet.
};

class PartitionDropper {
 public:
  // Deletes the partition's data, or fails (ABORTED: it is held again; the store's
  // errors: retried at the next Check).
  using DropFn = std::function<absl::StatusOr<DroppedPartition>(int32_t partition)>;

  // `directory` is borrowed and must outlive this.
  PartitionDropper(DropperOptions options, const ShardDirectory* directory, DropFn drop);

  PartitionDropper(const PartitionDropper&) = delete;
  PartitionDropper& operator=(const PartitionDropper&) = delete;

  // The partitions this node has data of and does not hold now, each with the last
  // offset applied here (replaces the last call's; a partition already pending keeps
  // its start, one no longer listed is cancelled). Logged.
  void SetUnheld(const std::map<int32_t, int64_t>& unheld) ABSL_LOCKS_EXCLUDED(mu_);
  // Drops every pending partition whose grace has passed and whose other replicas
  // caught up (one DropFn call each). Call periodically.
  void Check() ABSL_LOCKS_EXCLUDED(mu_);
  DropperStats Stats() const ABSL_LOCKS_EXCLUDED(mu_);

  // Whether `map` shows `partition` served by enough other live nodes (see above)
  // that have applied past `applied_offset`, this node being `self`.
  static bool HeldElsewhere(const v1::ShardMap& map, const std::string& self,
                            int32_t partition, int64_t applied_offset);

 private:
  struct Pending {
    absl::Time since;
    int64_t applied_offset = -1;
  };

  const DropperOptions options_;
  const ShardDirectory* const directory_;
  const DropFn drop_;
  mutable absl::Mutex mu_;
  std::map<int32_t, Pending> pending_ ABSL_GUARDED_BY(mu_);
  DropperStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dictlog::cluster

#endif  // DICTLOG_SERVER_CLUSTER_PARTITION_DROPPER_H_
