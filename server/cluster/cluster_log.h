// ClusterLog: cluster mode's engine::ReplicatedLog (docs/cluster.md, ADR 0017). Append
// turns one Append/AppendBatch call into ONE message of dictlog.records (a
// ClusterBatch) on the partition of its pools, and answers once Kafka acknowledged it
// (acks=all); its records get seqs (offset << 16) + i + 1. A pool is recorded in
// dictlog.meta (ClusterPool) before its first message. The materializer reports what
// this node applied (MarkApplied); reads wait on it (AwaitApplied).
//
// Thread safety: all methods may be called concurrently.
#ifndef DICTLOG_SERVER_CLUSTER_CLUSTER_LOG_H_
#define DICTLOG_SERVER_CLUSTER_CLUSTER_LOG_H_

#include <cstdint>
#include <functional>
#include <string>
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

  // The materializer applied every message of `partition` up to `offset`.
  void MarkApplied(int32_t partition, int64_t offset);
  // The last applied offset of `partition`; -1 if none.
  int64_t Applied(int32_t partition) const;

  int32_t partitions() const { return options_.partitions; }

 private:
  // Records `pool` in dictlog.meta once per process.
  absl::Status AnnouncePool(const std::string& pool, int32_t partition);
  absl::Status NotApplied(absl::string_view pool, uint64_t seq, int32_t partition) const;

  const ClusterLogOptions options_;
  const ProduceFn produce_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<int32_t, int64_t> applied_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> announced_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dictlog::cluster

#endif  // DICTLOG_SERVER_CLUSTER_CLUSTER_LOG_H_
