// ShardDirectory: this node's view of the cluster's shard map (docs/cluster.md "Shard
// map", "Liveness", ADR 0022): the assignment in force (the newest in dictlog.meta, or
// the flags' until the log has one), the newest announcement of every node, and this
// node's own progress per held partition (the materializer's). From them it answers
// GetShardMap and where a read (or an append) of a pool's partition goes (Place): here,
// or to which live replicas serving it. It also counts forwarded calls, NotServedHere
// answers and appends written here for want of a live replica.
//
// A node is live while its last announcement is at most 3 announce intervals old (its
// clock against ours: keep node clocks within an interval, NTP) and not a stopping one.
// This node is always live to itself. No agreement is needed: each node decides alone.
//
// Thread safety: every method may be called concurrently.
#ifndef DICTLOG_SERVER_CLUSTER_SHARD_DIRECTORY_H_
#define DICTLOG_SERVER_CLUSTER_SHARD_DIRECTORY_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "proto/dictlog.pb.h"
#include "server/cluster/cluster.pb.h"

namespace dictlog::cluster {

struct DirectoryOptions {
  std::string node_name = "dictlogd";
  std::string address;  // HOST:PORT clients reach this node at (--advertise_address).
  int32_t partitions = 8;
  // The flags' assignment (assignment.h): --cluster_nodes and --cluster_replicas.
  std::vector<std::string> nodes;
  int replicas = 2;
  // Nodes announce every interval; live = announced within 3 of them. Default 1 s.
  absl::Duration announce_interval = absl::Seconds(1);
  // The clock (tests inject theirs). Default absl::Now.
  std::function<absl::Time()> now = [] { return absl::Now(); };
};

// Where a read of one partition goes.
struct Placement {
  int32_t partition = 0;
  bool here = false;  // This node holds it and serves it (caught up).
  // Other live replicas announcing that they serve it, in assignment order.
  std::vector<std::string> addresses;
  uint64_t epoch = 0;
};

struct RoutingCounters {
  std::map<std::string, uint64_t> forwarded;  // By method.
  uint64_t not_served_here = 0;
  // Appends of a partition not served here written here: no live replica served it.
  uint64_t appended_without_holder = 0;
};

class ShardDirectory {
 public:
  explicit ShardDirectory(DirectoryOptions options);

  ShardDirectory(const ShardDirectory&) = delete;
  ShardDirectory& operator=(const ShardDirectory&) = delete;

  // The assignment the flags ask for (epoch 0, written_by this node).
  AssignmentRecord FlagAssignment() const;
  // Same nodes in the same order and the same replicas.
  static bool SameAssignment(const AssignmentRecord& a, const AssignmentRecord& b);
  // The newest in the log, or the flags' (epoch 0) while the log has none.
  AssignmentRecord Current() const ABSL_LOCKS_EXCLUDED(mu_);
  bool LogHasAssignment() const ABSL_LOCKS_EXCLUDED(mu_);
  // The flags agree with the assignment in force (else a metric says so).
  bool FlagsMatch() const ABSL_LOCKS_EXCLUDED(mu_);
  // Whether this node is the first replica of `partition` (it trains its pools);
  // nullopt when every node holds every partition (replicas 0) or there is no list.
  std::optional<bool> FirstReplicaHere(int32_t partition) const ABSL_LOCKS_EXCLUDED(mu_);
  // The partitions this node holds under Current(), ascending.
  std::vector<int32_t> Held() const ABSL_LOCKS_EXCLUDED(mu_);
  // The partitions this node applies, ascending: Held(), plus, while its flags ask for
  // another assignment than Current(), those the flags' would give it (built ahead of
  // that assignment, ADR 0031; routed to only once it is in force).
  std::vector<int32_t> Materialized() const ABSL_LOCKS_EXCLUDED(mu_);
  // Every partition the flags' assignment gives this node is reported serving (built
  // and caught up): a node writes the flags' assignment only then (ADR 0031).
  bool FlagHeldServing() const ABSL_LOCKS_EXCLUDED(mu_);

  // dictlog.meta, in log order: the newest assignment wins; the newest announcement
  // per node is kept (the epoch of Current() before and after: the caller reacts).
  void ObserveAssignment(const AssignmentRecord& assignment) ABSL_LOCKS_EXCLUDED(mu_);
  void ObserveAnnouncement(const NodeAnnouncement& announcement) ABSL_LOCKS_EXCLUDED(mu_);
  // The materializer's progress on the partitions this node holds (replaces the last).
  // Tells the readiness listener when AllHeldServing changes.
  void SetLocal(std::vector<NodePartition> partitions) ABSL_LOCKS_EXCLUDED(mu_);
  // Every partition this node holds under Current() is reported serving (a node
  // holding none is ready). The daemon's health service "dictlog.replicas".
  bool AllHeldServing() const ABSL_LOCKS_EXCLUDED(mu_);
  // Called with AllHeldServing's new value after a SetLocal that changed it (not under
  // a lock; SetLocal's callers are serialized). Set once, before SetLocal is called.
  void SetReadinessListener(std::function<void(bool)> listener) ABSL_LOCKS_EXCLUDED(mu_);

  // This node's announcement now.
  NodeAnnouncement Announcement(bool stopping) const ABSL_LOCKS_EXCLUDED(mu_);
  // Where a read of `partition` (0 <= partition < partitions()) goes.
  Placement Place(int32_t partition) const ABSL_LOCKS_EXCLUDED(mu_);
  // The pool's partition (partitioning.h).
  int32_t PartitionOfPool(absl::string_view pool) const;
  // GetShardMap's answer.
  v1::ShardMap Map() const ABSL_LOCKS_EXCLUDED(mu_);

  void CountForwarded(absl::string_view method) const ABSL_LOCKS_EXCLUDED(mu_);
  void CountNotServedHere() const ABSL_LOCKS_EXCLUDED(mu_);
  void CountAppendedWithoutHolder() const ABSL_LOCKS_EXCLUDED(mu_);
  RoutingCounters Counters() const ABSL_LOCKS_EXCLUDED(mu_);

  int32_t partitions() const { return options_.partitions; }
  const std::string& node_name() const { return options_.node_name; }

 private:
  bool LiveLocked(const NodeAnnouncement& announcement) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  AssignmentRecord CurrentLocked() const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  std::vector<std::string> ReplicasLocked(int32_t partition) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // This node's state of `partition`, or nullptr if it reports none.
  const NodePartition* LocalLocked(int32_t partition) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  bool AllHeldServingLocked() const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  std::vector<int32_t> HeldLocked() const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  std::vector<int32_t> FlagHeld() const;

  const DirectoryOptions options_;
  mutable absl::Mutex mu_;
  bool logged_ ABSL_GUARDED_BY(mu_) = false;
  AssignmentRecord assignment_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, NodeAnnouncement> announcements_ ABSL_GUARDED_BY(mu_);
  std::vector<NodePartition> local_ ABSL_GUARDED_BY(mu_);
  mutable RoutingCounters counters_ ABSL_GUARDED_BY(mu_);
  std::function<void(bool)> readiness_listener_ ABSL_GUARDED_BY(mu_);
  std::optional<bool> ready_ ABSL_GUARDED_BY(mu_);  // Last told to the listener.
};

}  // namespace dictlog::cluster

#endif  // DICTLOG_SERVER_CLUSTER_SHARD_DIRECTORY_H_
