// Materializer: applies dictlog.records into this node's engine (cluster mode,
// docs/cluster.md). One thread reads every partition from where the store says it
// stopped (the offset is written in the same RocksDB WriteBatch as the records of
// each message: a restart resumes exactly, nothing missing, nothing applied twice)
// and hands each ClusterBatch to LogEngine::ApplyLogged, then tells ClusterLog
// (MarkApplied) so waiting reads proceed.
//
// A message that can never apply here (it does not parse, a limit or route of this
// node refuses it) is logged and skipped: its offset alone is stored. Other failures
// (the store) are retried until they pass or the materializer stops.
//
// Dictionary messages (ADR 0020) are applied at their position too: the id a new
// dictionary gets is resolved against the dictionaries this node applied before it
// (dictionary_ids.h), so every node decides the same.
//
// It applies only the partitions it is given (those this node holds, ADR 0022) and
// reports its progress on each to the ShardDirectory: a partition is `serving` once
// applied up to the partition's end as queried when this materializer started (a
// newly held partition is built from its stored offset, or the start, first). A
// serving partition whose lag stays above a bound stops serving until it is close to
// the end again (serving_gate.h); each change is logged. Building is throttled
// (rebuild_throttle.h): past the rate, fetching the partitions being built pauses
// while the served ones go on; progress is logged every 10 s per partition.
//
// Thread safety: Start and the destructor from one thread; the thread is its own;
// Stats from any thread.
#ifndef DICTLOG_SERVER_CLUSTER_MATERIALIZER_H_
#define DICTLOG_SERVER_CLUSTER_MATERIALIZER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "server/cluster/cluster.pb.h"
#include "server/cluster/cluster_log.h"
#include "server/cluster/consumer.h"
#include "server/cluster/rebuild_throttle.h"
#include "server/cluster/serving_gate.h"
#include "server/cluster/shard_directory.h"
#include "server/engine/log_engine.h"

namespace dictlog::cluster {

struct PartitionProgress {
  int32_t partition = 0;
  int64_t applied_offset = -1;  // The last message applied here; -1: none.
  int64_t high_watermark = -1;  // The offset the partition's next message gets; -1: unknown.
};

struct MaterializerStats {
  uint64_t applied_messages = 0;
  uint64_t skipped_messages = 0;
  uint64_t dictionary_messages = 0;  // Dictionaries and activations applied.
  uint64_t rebuild_bytes = 0;        // Of messages applied to partitions being built.
  double rebuild_paused_seconds = 0;  // Building paused by the throttle.
  std::vector<PartitionProgress> partitions;
};

struct MaterializerOptions {
  // When a built partition lagging behind stops serving, and serves again.
  ServingGateOptions serving;
  // Bytes of messages per second applied to partitions being built (all of them
  // together); 0: unlimited. Default 32 MiB/s.
  int64_t rebuild_bytes_per_second = int64_t{32} << 20;
  // Tests only: waits this long after applying each message (a node falling behind).
  absl::Duration apply_delay_for_test = absl::ZeroDuration();
};

class Materializer {
 public:
  // Reads the stored offsets, tells `log` about them and starts the thread. `engine`
  // and `log` are borrowed and must outlive this.
  // `held`: the partitions to apply; `directory` (may be null) hears the progress.
  static absl::StatusOr<std::unique_ptr<Materializer>> Start(const std::string& bootstrap,
                                                             engine::LogEngine* engine,
                                                             ClusterLog* log,
                                                             std::vector<int32_t> held,
                                                             ShardDirectory* directory,
                                                             MaterializerOptions options = {});
  ~Materializer();  // Stops the thread (after the message it is applying).

  Materializer(const Materializer&) = delete;
  Materializer& operator=(const Materializer&) = delete;

  // Since start-up, and where each partition stands. Any thread.
  MaterializerStats Stats() const;

 private:
  Materializer(std::unique_ptr<Consumer> consumer, engine::LogEngine* engine,
               ClusterLog* log, std::vector<int32_t> held, ShardDirectory* directory,
               const MaterializerOptions& options);
  void Run();
  // Tells the directory where each held partition stands (serving once caught up to
  // its end as of the start; asks for that end again while unknown).
  void Report();
  // Partition held_[index] lags `lag` messages (-1: unknown): its gate decides, logged.
  void UpdateGate(size_t index, int64_t lag);
  // held_'s index of `partition`, or held_.size().
  size_t IndexOf(int32_t partition) const;
  // `bytes` were applied to a partition being built: pauses building when past the rate.
  void Throttle(size_t bytes);
  // Resumes building once the pause is over.
  void Resume(absl::Time now);
  // Marks held_[index] serving once applied up to its target (logged), else logs its
  // progress every 10 s.
  void CheckBuilt(size_t index, int64_t next, int64_t end, absl::Time now);
  // Applies one message, retrying store errors; false only when stopping.
  bool Apply(const LogMessage& message);
  absl::Status ApplyOne(const LogMessage& message);
  // A control message (ADR 0020): resolves the dictionary's id, then applies it.
  absl::Status ApplyDictionary(const LogMessage& message, const ClusterDictionary& logged);

  std::unique_ptr<Consumer> consumer_;
  engine::LogEngine* const engine_;
  ClusterLog* const log_;
  std::atomic<uint64_t> applied_{0};
  std::atomic<uint64_t> skipped_{0};
  std::atomic<uint64_t> dictionaries_{0};
  const std::vector<int32_t> held_;
  ShardDirectory* const directory_;
  // Per held_ entry (thread only): the end to catch up to (-1: not known yet), and
  // whether it has been reached (then it stays serving).
  std::vector<int64_t> targets_;
  std::vector<bool> serving_;
  std::vector<ServingGate> gates_;  // Per held_ entry (thread only), once built.
  const absl::Duration apply_delay_;
  absl::Time reported_ = absl::InfinitePast();  // The last Report (thread only).
  // Building (thread only): where each held_ entry started, when progress was logged.
  const absl::Time started_ = absl::Now();
  std::vector<int64_t> first_next_;
  std::vector<absl::Time> logged_;
  RebuildThrottle throttle_;
  std::vector<int32_t> paused_;  // Partitions paused by the throttle, until paused_until_.
  absl::Time paused_until_ = absl::InfinitePast();
  absl::Time paused_since_ = absl::InfinitePast();
  std::atomic<uint64_t> rebuild_bytes_{0};
  std::atomic<int64_t> paused_ms_{0};
  absl::Notification stop_;
  std::thread thread_;  // Last: started once the rest is set.
};

}  // namespace dictlog::cluster

#endif  // DICTLOG_SERVER_CLUSTER_MATERIALIZER_H_
