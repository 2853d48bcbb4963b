#include "client/shard_router.h"

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/pool_partition.h"

namespace dictlog::client {
namespace {

absl::Status Malformed(absl::string_view why) {
  return absl::DataLossError(absl::StrCat("malformed shard map: ", why));
}

}  // namespace

absl::StatusOr<ShardTable> BuildShardTable(const v1::ShardMap& map) {
  ShardTable table;
  table.epoch = map.epoch();
  if (map.partitions() == 0) return table;
  if (map.assignments_size() != static_cast<int64_t>(map.partitions())) {
    return Malformed(absl::StrCat(map.partitions(), " partitions but ",
                                  map.assignments_size(), " assignments"));
  }
  absl::flat_hash_map<std::string, const v1::ShardNode*> nodes;
  for (const v1::ShardNode& node : map.nodes()) {
    if (!nodes.emplace(node.name(), &node).second) {
      return Malformed(absl::StrCat("node \"", node.name(), "\" listed twice"));
    }
  }
  table.partitions = map.partitions();
  table.serving.resize(map.partitions());
  for (int i = 0; i < map.assignments_size(); ++i) {
    const v1::PartitionReplicas& assignment = map.assignments(i);
    if (assignment.partition() != static_cast<uint32_t>(i)) {
      return Malformed(absl::StrCat("assignment ", i, " is of partition ",
                                    assignment.partition(), " (of ", map.partitions(),
                                    ", in order)"));
    }
    if (assignment.replicas().empty()) {
      return Malformed(absl::StrCat("partition ", i, " has no replicas"));
    }
    std::vector<std::string> not_live;
    for (const v1::ReplicaState& replica : assignment.replicas()) {
      auto node = nodes.find(replica.node());
      if (node == nodes.end()) {
        return Malformed(absl::StrCat("partition ", i, " names node \"", replica.node(),
                                      "\", not one of the map's nodes"));
      }
      const std::string& address = node->second->address();
      if (!replica.serving() || address.empty()) continue;  // Not routable yet.
      (node->second->live() ? table.serving[i] : not_live).push_back(address);
    }
    if (table.serving[i].empty()) table.serving[i] = std::move(not_live);
  }
  return table;
}

absl::string_view PoolOfId(absl::string_view id) {
  const size_t slash = id.rfind('/');
  return slash == absl::string_view::npos ? absl::string_view() : id.substr(0, slash);
}

int64_t PartitionOfPool(const ShardTable& table, absl::string_view pool) {
  if (table.partitions == 0 || pool.empty()) return -1;
  return PoolPartition(pool, table.partitions);
}

ShardRouter::ShardRouter(std::shared_ptr<v1::LogStore::Stub> seed, FetchMap fetch,
                         MakeStub make_stub, Options options)
    : seed_(std::move(seed)),
      fetch_(std::move(fetch)),
      make_stub_(std::move(make_stub)),
      options_(options),
      table_(std::make_shared<const ShardTable>()) {}

ReadTarget ShardRouter::Seed() const { return ReadTarget{seed_, "", false}; }

void ShardRouter::Refresh(bool after_failure) {
  {
    absl::MutexLock lock(&mu_);
    if (fetching_) {  // Coalesce: use the fetch under way.
      mu_.Await(absl::Condition(
          +[](bool* fetching) { return !*fetching; }, &fetching_));
      return;
    }
    const absl::Duration fresh_for =
        after_failure ? options_.refresh_interval : options_.ttl;
    if (fetched_ && absl::Now() - fetched_at_ < fresh_for) return;
    fetching_ = true;
  }
  fetches_.fetch_add(1);
  if (after_failure) refreshes_after_failure_.fetch_add(1);
  absl::StatusOr<v1::ShardMap> map = fetch_();
  absl::StatusOr<ShardTable> table =
      map.ok() ? BuildShardTable(*map) : absl::StatusOr<ShardTable>(map.status());
  absl::MutexLock lock(&mu_);
  fetching_ = false;
  fetched_ = true;
  fetched_at_ = absl::Now();
  if (table.ok()) {
    if (table_ == nullptr || table->epoch != table_->epoch) epoch_changes_.fetch_add(1);
    table_ = std::make_shared<const ShardTable>(*std::move(table));
    map_error_ = absl::OkStatus();
  } else if (absl::IsUnimplemented(map.status())) {
    table_ = std::make_shared<const ShardTable>();  // A server without GetShardMap.
    map_error_ = absl::OkStatus();
  } else if (map.ok()) {
    map_error_ = table.status();  // Malformed: refused.
  }
  // Any other fetch error keeps the previous table (none: the seed).
}

absl::StatusOr<std::shared_ptr<const ShardTable>> ShardRouter::Table() {
  bool stale;
  {
    absl::MutexLock lock(&mu_);
    stale = !fetched_ || absl::Now() - fetched_at_ >= options_.ttl;
  }
  if (stale) Refresh(/*after_failure=*/false);
  absl::MutexLock lock(&mu_);
  if (!map_error_.ok()) return map_error_;
  return table_;
}

std::shared_ptr<v1::LogStore::Stub> ShardRouter::StubFor(const std::string& address) {
  {
    absl::MutexLock lock(&mu_);
    auto it = stubs_.find(address);
    if (it != stubs_.end()) return it->second;
  }
  std::shared_ptr<v1::LogStore::Stub> stub = make_stub_(address);
  absl::MutexLock lock(&mu_);
  return stubs_.emplace(address, std::move(stub)).first->second;  // First one wins.
}

std::shared_ptr<const ShardTable> ShardRouter::CurrentTable() {
  absl::MutexLock lock(&mu_);
  return table_;
}

void ShardRouter::NoteUnresponsive(const std::string& address) {
  absl::MutexLock lock(&mu_);
  avoid_until_[address] = absl::Now() + options_.avoid_unresponsive_for;
}

bool ShardRouter::Unresponsive(const std::string& address) {
  absl::MutexLock lock(&mu_);
  auto it = avoid_until_.find(address);
  if (it == avoid_until_.end()) return false;
  if (absl::Now() < it->second) return true;
  avoid_until_.erase(it);
  return false;
}

ReadTarget ShardRouter::Pick(int64_t partition, absl::string_view avoid) {
  return Choose(partition, avoid, /*fallback=*/true);
}

ReadTarget ShardRouter::Choose(int64_t partition, absl::string_view avoid, bool fallback) {
  const std::shared_ptr<const ShardTable> table = CurrentTable();
  if (partition < 0 || partition >= static_cast<int64_t>(table->serving.size())) {
    return Seed();
  }
  const std::vector<std::string>& serving = table->serving[partition];
  const size_t n = serving.size();
  const uint64_t start = next_.fetch_add(1);
  const std::string* suspect = nullptr;  // Unresponsive lately, but serving.
  for (size_t k = 0; k < n; ++k) {
    const std::string& address = serving[(start + k) % n];
    if (address == avoid) continue;
    if (!Unresponsive(address)) return ReadTarget{StubFor(address), address, true};
    if (suspect == nullptr) suspect = &address;
  }
  if (fallback && suspect != nullptr) return ReadTarget{StubFor(*suspect), *suspect, true};
  return Seed();
}

absl::StatusOr<ReadTarget> ShardRouter::Retarget(int64_t partition,
                                                 absl::string_view failed,
                                                 absl::Span<const std::string> hint) {
  retargets_.fetch_add(1);
  Refresh(/*after_failure=*/true);
  {
    absl::MutexLock lock(&mu_);
    if (!map_error_.ok()) return map_error_;
  }
  ReadTarget target = Choose(partition, failed, /*fallback=*/false);
  if (target.direct) return target;
  for (const std::string& address : hint) {
    if (!address.empty() && address != failed && !Unresponsive(address)) {
      return ReadTarget{StubFor(address), address, true};
    }
  }
  return Seed();
}

ShardRouter::Stats ShardRouter::stats() const {
  Stats stats;
  stats.fetches = fetches_.load();
  stats.refreshes_after_failure = refreshes_after_failure_.load();
  stats.retargets = retargets_.load();
  stats.epoch_changes = epoch_changes_.load();
  absl::MutexLock lock(&mu_);
  stats.epoch = table_ == nullptr ? 0 : table_->epoch;
  return stats;
}

}  // namespace dictlog::client
