#include "server/cluster/shard_directory.h"

#include <algorithm>
#include <utility>

#include "server/cluster/assignment.h"
#include "server/cluster/partitioning.h"

namespace dictlog::cluster {
namespace {

// Announcements older than this many intervals: the node is not live.
constexpr int kLiveIntervals = 3;

// The entry of `partition` in a list of NodePartition (a vector or a repeated field).
template <typename List>
const NodePartition* Find(const List& partitions, int32_t partition) {
  for (const NodePartition& p : partitions) {
    if (p.partition() == partition) return &p;
  }
  return nullptr;
}

}  // namespace

ShardDirectory::ShardDirectory(DirectoryOptions options) : options_(std::move(options)) {}

AssignmentRecord ShardDirectory::FlagAssignment() const {
  AssignmentRecord flags;
  for (const std::string& node : options_.nodes) flags.add_nodes(node);
  flags.set_replicas(options_.replicas);
  flags.set_written_by(options_.node_name);
  return flags;
}

bool ShardDirectory::SameAssignment(const AssignmentRecord& a, const AssignmentRecord& b) {
  return a.replicas() == b.replicas() &&
         std::equal(a.nodes().begin(), a.nodes().end(), b.nodes().begin(), b.nodes().end());
}

AssignmentRecord ShardDirectory::CurrentLocked() const {
  return logged_ ? assignment_ : FlagAssignment();
}

AssignmentRecord ShardDirectory::Current() const {
  absl::ReaderMutexLock lock(&mu_);
  return CurrentLocked();
}

bool ShardDirectory::LogHasAssignment() const {
  absl::ReaderMutexLock lock(&mu_);
  return logged_;
}

bool ShardDirectory::FlagsMatch() const {
  absl::ReaderMutexLock lock(&mu_);
  return SameAssignment(CurrentLocked(), FlagAssignment());
}

std::vector<std::string> ShardDirectory::ReplicasLocked(int32_t partition) const {
  const AssignmentRecord current = CurrentLocked();
  const std::vector<std::string> nodes(current.nodes().begin(), current.nodes().end());
  return ReplicasOf(partition, nodes, current.replicas(), options_.node_name);
}

std::optional<bool> ShardDirectory::FirstReplicaHere(int32_t partition) const {
  absl::ReaderMutexLock lock(&mu_);
  const AssignmentRecord current = CurrentLocked();
  if (current.replicas() == 0 || current.nodes().empty()) return std::nullopt;
  const std::vector<std::string> replicas = ReplicasLocked(partition);
  return !replicas.empty() && replicas[0] == options_.node_name;
}

std::vector<int32_t> ShardDirectory::Held() const {
  absl::ReaderMutexLock lock(&mu_);
  return HeldLocked();
}

std::vector<int32_t> ShardDirectory::HeldLocked() const {
  const AssignmentRecord current = CurrentLocked();
  const std::vector<std::string> nodes(current.nodes().begin(), current.nodes().end());
  return PartitionsHeldBy(options_.node_name, options_.partitions, nodes, current.replicas(),
                          options_.node_name);
}

std::vector<int32_t> ShardDirectory::FlagHeld() const {
  return PartitionsHeldBy(options_.node_name, options_.partitions, options_.nodes,
                          options_.replicas, options_.node_name);
}

std::vector<int32_t> ShardDirectory::Materialized() const {
  absl::ReaderMutexLock lock(&mu_);
  std::vector<int32_t> partitions = HeldLocked();
  if (SameAssignment(CurrentLocked(), FlagAssignment())) return partitions;
  for (int32_t p : FlagHeld()) partitions.push_back(p);
  std::sort(partitions.begin(), partitions.end());
  partitions.erase(std::unique(partitions.begin(), partitions.end()), partitions.end());
  return partitions;
}

bool ShardDirectory::FlagHeldServing() const {
  absl::ReaderMutexLock lock(&mu_);
  for (int32_t partition : FlagHeld()) {
    const NodePartition* local = LocalLocked(partition);
    if (local == nullptr || !local->serving()) return false;
  }
  return true;
}

void ShardDirectory::ObserveAssignment(const AssignmentRecord& assignment) {
  absl::MutexLock lock(&mu_);
  assignment_ = assignment;  // Log order decides: the newest is the cluster's.
  logged_ = true;
}

void ShardDirectory::ObserveAnnouncement(const NodeAnnouncement& announcement) {
  if (announcement.name() == options_.node_name) return;  // Ours is fresher locally.
  absl::MutexLock lock(&mu_);
  announcements_[announcement.name()] = announcement;
}

void ShardDirectory::SetLocal(std::vector<NodePartition> partitions) {
  std::function<void(bool)> listener;
  bool ready = false;
  {
    absl::MutexLock lock(&mu_);
    local_ = std::move(partitions);
    ready = AllHeldServingLocked();
    if (ready_ == ready || !readiness_listener_) return;
    ready_ = ready;
    listener = readiness_listener_;
  }
  listener(ready);
}

bool ShardDirectory::AllHeldServing() const {
  absl::ReaderMutexLock lock(&mu_);
  return AllHeldServingLocked();
}

bool ShardDirectory::AllHeldServingLocked() const {
  for (int32_t partition : HeldLocked()) {
    const NodePartition* local = LocalLocked(partition);
    if (local == nullptr || !local->serving()) return false;
  }
  return true;
}

void ShardDirectory::SetReadinessListener(std::function<void(bool)> listener) {
  absl::MutexLock lock(&mu_);
  readiness_listener_ = std::move(listener);
}

const NodePartition* ShardDirectory::LocalLocked(int32_t partition) const {
  return Find(local_, partition);
}

bool ShardDirectory::LiveLocked(const NodeAnnouncement& announcement) const {
  if (announcement.stopping()) return false;
  const absl::Time announced = absl::FromUnixMillis(announcement.unix_ms());
  return options_.now() - announced <= kLiveIntervals * options_.announce_interval;
}

NodeAnnouncement ShardDirectory::Announcement(bool stopping) const {
  absl::ReaderMutexLock lock(&mu_);
  NodeAnnouncement out;
  out.set_name(options_.node_name);
  out.set_address(options_.address);
  out.set_unix_ms(absl::ToUnixMillis(options_.now()));
  out.set_stopping(stopping);
  out.set_epoch(CurrentLocked().epoch());
  for (const NodePartition& p : local_) {
    NodePartition* added = out.add_partitions();
    *added = p;
    if (stopping) added->set_serving(false);
  }
  return out;
}

int32_t ShardDirectory::PartitionOfPool(absl::string_view pool) const {
  return PartitionOf(pool, options_.partitions);
}

Placement ShardDirectory::Place(int32_t partition) const {
  absl::ReaderMutexLock lock(&mu_);
  Placement placement;
  placement.partition = partition;
  placement.epoch = CurrentLocked().epoch();
  for (const std::string& node : ReplicasLocked(partition)) {
    if (node == options_.node_name) {
      const NodePartition* local = LocalLocked(partition);
      placement.here = local != nullptr && local->serving();
      continue;
    }
    auto it = announcements_.find(node);
    if (it == announcements_.end() || !LiveLocked(it->second)) continue;
    const NodePartition* theirs = Find(it->second.partitions(), partition);
    if (theirs != nullptr && theirs->serving() && !it->second.address().empty()) {
      placement.addresses.push_back(it->second.address());
    }
  }
  return placement;
}

v1::ShardMap ShardDirectory::Map() const {
  absl::ReaderMutexLock lock(&mu_);
  const AssignmentRecord current = CurrentLocked();
  v1::ShardMap map;
  map.set_partitions(static_cast<uint32_t>(options_.partitions));
  map.set_epoch(current.epoch());
  map.set_answered_by(options_.node_name);
  std::vector<std::string> nodes(current.nodes().begin(), current.nodes().end());
  if (nodes.empty()) nodes.push_back(options_.node_name);
  for (const std::string& name : nodes) {
    v1::ShardNode* node = map.add_nodes();
    node->set_name(name);
    if (name == options_.node_name) {
      node->set_address(options_.address);
      node->set_live(true);
      node->set_announced_unix_ms(absl::ToUnixMillis(options_.now()));
      continue;
    }
    auto it = announcements_.find(name);
    if (it == announcements_.end()) continue;
    node->set_address(it->second.address());
    node->set_live(LiveLocked(it->second));
    node->set_announced_unix_ms(it->second.unix_ms());
  }
  for (int32_t p = 0; p < options_.partitions; ++p) {
    v1::PartitionReplicas* replicas = map.add_assignments();
    replicas->set_partition(static_cast<uint32_t>(p));
    for (const std::string& name : ReplicasLocked(p)) {
      v1::ReplicaState* state = replicas->add_replicas();
      state->set_node(name);
      const NodePartition* progress = nullptr;
      bool live = true;
      if (name == options_.node_name) {
        progress = LocalLocked(p);
      } else if (auto it = announcements_.find(name); it != announcements_.end()) {
        progress = Find(it->second.partitions(), p);
        live = LiveLocked(it->second);
      }
      if (progress == nullptr) continue;
      state->set_applied_offset(progress->applied_offset());
      state->set_end_offset(progress->end_offset());
      state->set_serving(live && progress->serving());
    }
  }
  return map;
}

void ShardDirectory::CountForwarded(absl::string_view method) const {
  absl::MutexLock lock(&mu_);
  ++counters_.forwarded[std::string(method)];
}

void ShardDirectory::CountNotServedHere() const {
  absl::MutexLock lock(&mu_);
  ++counters_.not_served_here;
}

void ShardDirectory::CountAppendedWithoutHolder() const {
  absl::MutexLock lock(&mu_);
  ++counters_.appended_without_holder;
}

RoutingCounters ShardDirectory::Counters() const {
  absl::ReaderMutexLock lock(&mu_);
  return counters_;
}

}  // namespace dictlog::cluster
