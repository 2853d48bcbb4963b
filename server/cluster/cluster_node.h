// ClusterNode: what one dictlogd needs for cluster mode (docs/cluster.md): on
// Connect, the topics dictlog.records and dictlog.meta are created or verified and
// the idempotent producer opened; its ReplicatedLog goes into EngineOptions; once the
// engine is open, StartMaterializer reads dictlog.meta (the assignment, writing the
// flags' if the log's differs, once this node has built the partitions they give it:
// ADR 0031; announcements: MetaWatcher) and applies the partitions this node holds,
// and those its flags give it, into the engine (ShardDirectory::Materialized); when
// that set changes with the log's assignment, the materializer is restarted on it.
// directory() is the shard map the read handlers route with. Partitions this node has
// data of but no longer applies are dropped after a grace period once other replicas
// serve them (partition_dropper.h). server/daemon owns it.
//
// Thread safety: Connect, StartMaterializer, StopMaterializer and the destructor from
// one thread; log() and directory() are used by the engine and the services,
// MaterializerStatistics by scrapes, from any thread.
#ifndef DICTLOG_SERVER_CLUSTER_CLUSTER_NODE_H_
#define DICTLOG_SERVER_CLUSTER_CLUSTER_NODE_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "server/cluster/cluster_log.h"
#include "server/cluster/materializer.h"
#include "server/cluster/meta_watcher.h"
#include "server/cluster/partition_dropper.h"
#include "server/cluster/shard_directory.h"
#include "server/cluster/producer.h"
#include "server/engine/log_engine.h"

namespace dictlog::cluster {

struct ClusterOptions {
  // HOST:PORT,... of Kafka brokers. Required.
  std::string bootstrap;
  // This node's name (Kafka client.id, logs). Default "dictlogd".
  std::string node_name = "dictlogd";
  // Partitions of dictlog.records (fixed once the topic exists). Default 8.
  int partitions = 8;
  // Copies of every partition (min.insync.replicas: 2, or 1 with a single copy).
  // Default 3.
  int replication_factor = 3;
  // An append not acknowledged by Kafka within this fails. Default 10 s.
  absl::Duration delivery_timeout = absl::Seconds(10);
  // How long a read of an id not yet applied here waits. Default 100 ms.
  absl::Duration apply_wait = absl::Milliseconds(100);
  // Creating or verifying the topics at start-up. Default 60 s.
  absl::Duration topic_timeout = absl::Seconds(60);
  // Every node's name, the same list on every node: the one node that trains a pool's
  // dictionaries automatically is picked from it (ClusterLogOptions::nodes). Default
  // empty: this node trains every pool.
  std::vector<std::string> nodes;
  // Copies of each partition among `nodes` (assignment.h); 0: every node holds every
  // partition. Default 2.
  int replicas = 2;
  // HOST:PORT clients and peers reach this node at (announced). Required.
  std::string advertise_address;
  // How often this node announces itself in dictlog.meta. Default 1 s.
  absl::Duration announce_interval = absl::Seconds(1);
  // The materializer's: when a lagging partition stops serving (serving_gate.h).
  MaterializerOptions materializer;
  // How long a partition this node no longer holds keeps its data here before it is
  // dropped (once other replicas serve it, partition_dropper.h); zero or less: never.
  // Default 10 minutes.
  absl::Duration drop_unheld_after = absl::Minutes(10);
  // How often the dropper looks. Default 1 s.
  absl::Duration drop_check_interval = absl::Seconds(1);
};

class ClusterNode {
 public:
  // INVALID_ARGUMENT for bad options; the brokers' errors (UNAVAILABLE,
  // DEADLINE_EXCEEDED; FAILED_PRECONDITION for topics that exist with other settings).
  static absl::StatusOr<std::unique_ptr<ClusterNode>> Connect(const ClusterOptions& options);
  ~ClusterNode();  // Stops the materializer, then flushes the producer.

  ClusterNode(const ClusterNode&) = delete;
  ClusterNode& operator=(const ClusterNode&) = delete;

  // For EngineOptions::replicated_log; lives as long as this.
  engine::ReplicatedLog* log() { return log_.get(); }
  // The shard map (the read handlers route with it); lives as long as this.
  const ShardDirectory* directory() const { return directory_.get(); }
  // `listener` hears whether every partition this node holds serves (true) or not,
  // on each change, from the materializer's thread (the daemon's readiness). Call
  // before StartMaterializer.
  void SetReadinessListener(std::function<void(bool)> listener);
  // `engine` is borrowed: call StopMaterializer before it goes.
  absl::Status StartMaterializer(engine::LogEngine* engine) ABSL_LOCKS_EXCLUDED(mu_);
  void StopMaterializer() ABSL_LOCKS_EXCLUDED(mu_);
  // Zero before StartMaterializer. Any thread (metrics scrapes).
  MaterializerStats MaterializerStatistics() const ABSL_LOCKS_EXCLUDED(mu_);
  // Partitions dropped here since start-up; zero when dropping is off. Any thread.
  DropperStats DropStatistics() const;

 private:
  ClusterNode(ClusterOptions options, std::unique_ptr<Producer> producer);
  // The watcher saw a new assignment: applies the partitions it gives this node.
  void Reassign() ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status StartMaterializerLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Tells the dropper which partitions have data here but are not held_.
  void UpdateUnheldLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The dropper's DropFn: ABORTED if `partition` is held (again) or stopping.
  absl::StatusOr<DroppedPartition> DropUnheld(int32_t partition) ABSL_LOCKS_EXCLUDED(mu_);
  void RunDropper();

  const ClusterOptions options_;
  std::unique_ptr<Producer> producer_;
  std::unique_ptr<ClusterLog> log_;  // Borrows producer_.
  std::unique_ptr<ShardDirectory> directory_;
  std::unique_ptr<MetaWatcher> watcher_;  // Set and reset by the owner's thread only.
  mutable absl::Mutex mu_;
  engine::LogEngine* engine_ ABSL_GUARDED_BY(mu_) = nullptr;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<int32_t> held_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<Materializer> materializer_ ABSL_GUARDED_BY(mu_);  // Borrows log_.
  std::unique_ptr<PartitionDropper> dropper_;  // Null when dropping is off.
  absl::Notification stop_dropper_;
  std::thread dropper_thread_;  // Started by StartMaterializer, joined by StopMaterializer.
};

}  // namespace dictlog::cluster

#endif  // DICTLOG_SERVER_CLUSTER_CLUSTER_NODE_H_
