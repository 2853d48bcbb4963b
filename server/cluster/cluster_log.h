// ClusterLog: cluster mode's engine::ReplicatedLog (docs/cluster.md, ADR 0017, ADR
// 0020). Append turns one Append/AppendBatch call into ONE message of dictlog.records
// (a ClusterBatch of the records as the writer encoded them) on the partition of its
// pools, and answers once Kafka acknowledged it (acks=all); its records get seqs
// (offset << 16) + i + 1. A pool is recorded in dictlog.meta (ClusterPool) before its
// first message. AppendDictionary puts a dictionary (its id from its content) or an
// activation into the pool's partition, and into dictlog.meta, and answers once this
// node applied it. The materializer reports what this node applied (MarkApplied,
// NoteDictionary); reads wait on it (AwaitApplied). TrainsHere picks one node per
// pool from a static node list.
//
// Thread safety: all methods may be called concurrently.
#ifndef DICTLOG_SERVER_CLUSTER_CLUSTER_LOG_H_
#define DICTLOG_SERVER_CLUSTER_CLUSTER_LOG_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/engine/replicated_log.h"

namespace dictlog::cluster {

struct ClusterLogOptions {
  // Partitions of dictlog.records. Default 8.
  int32_t partitions = 8;
  // How long a read of a record not yet applied here waits. Default 100 ms.
  absl::Duration apply_wait = absl::Milliseconds(100);
  // How long AppendDictionary waits for this node to apply its message. Default 10 s.
  absl::Duration dictionary_wait = absl::Seconds(10);
  // This node's name, and every node's (the same list, in the same order, on every
  // node; a StatefulSet's pod names). Pool P is trained automatically by
  // nodes[PartitionOf(P, nodes.size())] alone. Empty list: by this node (every node
  // trains every pool; the log still decides which activation wins).
  std::string node_name;
  std::vector<std::string> nodes;
  // With partitions assigned to some nodes (ADR 0022): whether this node trains the
  // pools of a partition (its first replica, which holds the records); nullopt, or
  // unset: the rule above.
  std::function<std::optional<bool>(int32_t partition)> trains_partition;
};

class ClusterLog : public engine::ReplicatedLog {
 public:
  // Produces one message (topic, partition, key, value) and returns its offset once
  // acknowledged: Producer::Produce, or a test's fake.
  using ProduceFn = std::function<absl::StatusOr<int64_t>(
      const std::string& topic, int32_t partition, absl::string_view key,
      absl::string_view value)>;

  ClusterLog(ClusterLogOptions options, ProduceFn produce);

  // INVALID_ARGUMENT for a batch over kMaxBatchRecords, or (FAILED_PRECONDITION)
  // whose pools lie on different partitions (split it by pool); the producer's errors
  // (UNAVAILABLE, DEADLINE_EXCEEDED, ...) otherwise.
  absl::StatusOr<std::vector<uint64_t>> Append(const engine::LogAppend& append) override;
  absl::Status AwaitApplied(absl::string_view pool, uint64_t seq) const override;
  absl::Status CheckApplied(absl::string_view pool, uint64_t seq) const override;
  // INVALID_ARGUMENT for content that is not a zstd dictionary; the producer's errors;
  // DEADLINE_EXCEEDED if this node has not applied it within dictionary_wait;
  // FAILED_PRECONDITION if this node skipped it (its log says why).
  absl::StatusOr<engine::AppliedDictionary> AppendDictionary(
      const engine::LogDictionary& dictionary) override;
  bool TrainsHere(absl::string_view pool) const override;

  // The materializer stopped (shutdown): AppendDictionary stops waiting (UNAVAILABLE).
  void StopWaiting();
  // The materializer applied every message of `partition` up to `offset`.
  void MarkApplied(int32_t partition, int64_t offset);
  // The partition's data was dropped here (partition_dropper.h): nothing of it is
  // applied any more; a later materializer builds it from offset 0.
  void ForgetApplied(int32_t partition);
  // The last applied offset of `partition`; -1 if none.
  int64_t Applied(int32_t partition) const;
  // The materializer applied the dictionary message at `partition`@`offset` so
  // (before its MarkApplied). The last kNotedDictionaries are kept.
  void NoteDictionary(int32_t partition, int64_t offset, engine::AppliedDictionary applied);
  static constexpr size_t kNotedDictionaries = 256;

  int32_t partitions() const { return options_.partitions; }

 private:
  // Records `pool` in dictlog.meta once per process.
  absl::Status AnnouncePool(const std::string& pool, int32_t partition);
  absl::Status NotApplied(absl::string_view pool, uint64_t seq, int32_t partition) const;
  // Waits up to `timeout` for `partition` to be applied up to `offset` (or StopWaiting).
  bool AwaitOffset(int32_t partition, int64_t offset, absl::Duration timeout) const;

  const ClusterLogOptions options_;
  const ProduceFn produce_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<int32_t, int64_t> applied_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> announced_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  // NoteDictionary's, by (partition, offset), and their order (oldest first).
  absl::flat_hash_map<std::pair<int32_t, int64_t>, engine::AppliedDictionary> noted_
      ABSL_GUARDED_BY(mu_);
  std::deque<std::pair<int32_t, int64_t>> noted_order_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dictlog::cluster

#endif  // DICTLOG_SERVER_CLUSTER_CLUSTER_LOG_H_
