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
// newly held partition is built from its stored offset, or the start, first).
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
  std::vector<PartitionProgress> partitions;
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
                                                             ShardDirectory* directory);
  ~Materializer();  // Stops the thread (after the message it is applying).

  Materializer(const Materializer&) = delete;
  Materializer& operator=(const Materializer&) = delete;

  // Since start-up, and where each partition stands. Any thread.
  MaterializerStats Stats() const;

 private:
  Materializer(std::unique_ptr<Consumer> consumer, engine::LogEngine* engine,
               ClusterLog* log, std::vector<int32_t> held, ShardDirectory* directory);
  void Run();
  // Tells the directory where each held partition stands (serving once caught up to
  // its end as of the start; asks for that end again while unknown).
  void Report();
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
  absl::Notification stop_;
  std::thread thread_;  // Last: started once the rest is set.
};

}  // namespace dictlog::cluster

#endif  // DICTLOG_SERVER_CLUSTER_MATERIALIZER_H_
