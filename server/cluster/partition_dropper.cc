#include "server/cluster/partition_dropper.h"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"

namespace dictlog::cluster {

PartitionDropper::PartitionDropper(DropperOptions options, const ShardDirectory* directory,
                                   DropFn drop)
    : options_(std::move(options)), directory_(directory), drop_(std::move(drop)) {}

void PartitionDropper::SetUnheld(const std::map<int32_t, int64_t>& unheld) {
  absl::MutexLock lock(&mu_);
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (unheld.count(it->first) != 0) {
      ++it;
      continue;
    }
    std::printf("dictlogd: partition %d is held here again: its data stays\n", it->first);
    it = pending_.erase(it);
  }
  for (const auto& [partition, offset] : unheld) {
    auto [it, added] = pending_.try_emplace(partition, Pending{options_.now(), offset});
    it->second.applied_offset = offset;
    if (!added) continue;
    std::printf("dictlogd: partition %d is no longer held here: its data goes in %s, "
                "once other replicas serve it\n",
                partition, absl::FormatDuration(options_.grace).c_str());
  }
  stats_.pending = pending_.size();
  std::fflush(stdout);
}

void PartitionDropper::Check() {
  std::vector<std::pair<int32_t, int64_t>> due;
  {
    absl::MutexLock lock(&mu_);
    const absl::Time now = options_.now();
    for (const auto& [partition, pending] : pending_) {
      if (now - pending.since >= options_.grace) {
        due.emplace_back(partition, pending.applied_offset);
      }
    }
  }
  if (due.empty()) return;
  const v1::ShardMap map = directory_->Map();
  for (const auto& [partition, offset] : due) {
    if (!HeldElsewhere(map, directory_->node_name(), partition, offset)) continue;
    absl::StatusOr<DroppedPartition> dropped = drop_(partition);
    absl::MutexLock lock(&mu_);
    if (!dropped.ok()) {
      std::fprintf(stderr, "dictlogd: dropping partition %d: %s\n", partition,
                   dropped.status().ToString().c_str());
      if (absl::IsAborted(dropped.status())) pending_.erase(partition);
      stats_.pending = pending_.size();
      continue;
    }
    std::printf("dictlogd: dropped partition %d: %llu records, %llu stored bytes of %u "
                "pools (dictionaries kept)\n",
                partition, static_cast<unsigned long long>(dropped->records),
                static_cast<unsigned long long>(dropped->stored_bytes), dropped->pools);
    std::fflush(stdout);
    pending_.erase(partition);
    stats_.pending = pending_.size();
    ++stats_.partitions_dropped;
    stats_.records_dropped += dropped->records;
    stats_.bytes_dropped += dropped->stored_bytes;
  }
}

DropperStats PartitionDropper::Stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

bool PartitionDropper::HeldElsewhere(const v1::ShardMap& map, const std::string& self,
                                     int32_t partition, int64_t applied_offset) {
  absl::flat_hash_set<std::string> live_others;
  for (const v1::ShardNode& node : map.nodes()) {
    if (node.live() && node.name() != self) live_others.insert(node.name());
  }
  for (const v1::PartitionReplicas& replicas : map.assignments()) {
    if (static_cast<int32_t>(replicas.partition()) != partition) continue;
    size_t assigned = 0;
    size_t caught_up = 0;
    for (const v1::ReplicaState& replica : replicas.replicas()) {
      if (replica.node() == self) continue;
      ++assigned;
      // applied_offset is the next offset the replica applies.
      if (live_others.contains(replica.node()) && replica.serving() &&
          replica.applied_offset() > applied_offset) {
        ++caught_up;
      }
    }
    const size_t needed = std::max<size_t>(1, std::min(assigned, live_others.size()));
    return caught_up >= needed;
  }
  return false;
}

}  // namespace dictlog::cluster
