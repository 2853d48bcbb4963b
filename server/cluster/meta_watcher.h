// MetaWatcher: this node's reader and announcer of dictlog.meta (ADR 0022,
// docs/cluster.md "Shard map", "Liveness"). Start reads the topic up to its end
// (assignments, announcements; pools and dictionaries are skipped), writes the flags'
// assignment (epoch 1) if the log holds none, and announces this node. If the log
// holds another one, the flags' is written with the log's epoch + 1 only once
// `built()` says this node serves every partition it would get (ADR 0031: a joining
// node builds before the map names it; asked at start, then on every poll by the
// thread, announcing the built partitions first); dropped if the log comes to the
// flags' assignment meanwhile. Its thread keeps reading (the newest assignment and the
// newest announcement per node go into the ShardDirectory; `on_assignment` runs when
// the assignment in force changes, also by its own write) and announces this node
// every interval. The destructor announces it stopping.
//
// Thread safety: Start and the destructor from one thread; the rest is its thread's.
#ifndef DICTLOG_SERVER_CLUSTER_META_WATCHER_H_
#define DICTLOG_SERVER_CLUSTER_META_WATCHER_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "server/cluster/cluster_log.h"
#include "server/cluster/consumer.h"
#include "server/cluster/shard_directory.h"

namespace dictlog::cluster {

class MetaWatcher {
 public:
  // `directory` is borrowed and must outlive this. UNAVAILABLE/DEADLINE_EXCEEDED when
  // the brokers do not answer within `timeout`; the producer's errors.
  static absl::StatusOr<std::unique_ptr<MetaWatcher>> Start(
      const std::string& bootstrap, ShardDirectory* directory, ClusterLog::ProduceFn produce,
      absl::Duration announce_interval, absl::Duration timeout,
      std::function<void()> on_assignment, std::function<bool()> built);
  ~MetaWatcher();

  MetaWatcher(const MetaWatcher&) = delete;
  MetaWatcher& operator=(const MetaWatcher&) = delete;

 private:
  MetaWatcher(std::unique_ptr<Consumer> consumer, ShardDirectory* directory,
              ClusterLog::ProduceFn produce, absl::Duration interval,
              std::function<void()> on_assignment, std::function<bool()> built);
  // Reads up to the topic's end as of now.
  absl::Status CatchUp(absl::Duration timeout);
  // One message of dictlog.meta into the directory; true if the assignment changed.
  bool Observe(const LogMessage& message);
  absl::Status Announce(bool stopping);
  // Writes the flags' assignment with the epoch in force + 1 (1 if none) and observes it.
  absl::Status WriteFlagAssignment();
  // The deferred write: dropped once the log has the flags' assignment, written (after
  // an announcement) once built; whether it wrote.
  bool WritePendingIfBuilt();
  void Run();

  std::unique_ptr<Consumer> consumer_;
  ShardDirectory* const directory_;
  const ClusterLog::ProduceFn produce_;
  const absl::Duration interval_;
  const std::function<void()> on_assignment_;
  const std::function<bool()> built_;
  bool pending_ = false;  // The flags' assignment waits for built_ (Start, then the thread).
  absl::Notification stop_;
  std::thread thread_;  // Started last, in Start.
};

}  // namespace dictlog::cluster

#endif  // DICTLOG_SERVER_CLUSTER_META_WATCHER_H_
