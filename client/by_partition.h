// ByPartition: a MultiGet/MultiGetFrames split by the partition of each id's pool
// (client routing, docs/api.md "Routing"): one part per partition, the parts run in
// parallel (the first on the calling thread, each other on a thread of its own; at most
// one per partition of the map), their results merged back in request order.
//
// Thread Safety: a function over its arguments; `part` is called concurrently from
// several threads and must be thread-safe.
#ifndef DICTLOG_CLIENT_BY_PARTITION_H_
#define DICTLOG_CLIENT_BY_PARTITION_H_

#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "client/shard_router.h"

namespace dictlog::client {

// `part(ids, partition)` answers the ids of one partition (-1: ids of no pool, or an
// unsharded table: the seed), one result per id in order. A failed part fails it all
// (the first failure in partition order).
template <typename Result, typename Part>
absl::StatusOr<std::vector<absl::StatusOr<Result>>> ByPartition(
    absl::Span<const std::string> ids, const ShardTable& table, const Part& part) {
  using Results = absl::StatusOr<std::vector<absl::StatusOr<Result>>>;
  // Partition -> positions into ids, in order.
  absl::btree_map<int64_t, std::vector<size_t>> groups;
  for (size_t i = 0; i < ids.size(); ++i) {
    groups[PartitionOfPool(table, PoolOfId(ids[i]))].push_back(i);
  }
  if (groups.size() <= 1) {
    return part(ids, groups.empty() ? int64_t{-1} : groups.begin()->first);
  }
  struct Group {
    int64_t partition;
    const std::vector<size_t>* positions;
    std::vector<std::string> ids;
    Results results;
  };
  std::vector<Group> parts;
  parts.reserve(groups.size());
  for (const auto& [partition, positions] : groups) {
    Group& p = parts.emplace_back(Group{partition, &positions, {}, absl::UnknownError("")});
    p.ids.reserve(positions.size());
    for (size_t i : positions) p.ids.push_back(ids[i]);
  }
  auto run = [&part](Group* p) { p->results = part(p->ids, p->partition); };
  std::vector<std::thread> threads;
  threads.reserve(parts.size() - 1);
  for (size_t k = 1; k < parts.size(); ++k) threads.emplace_back(run, &parts[k]);
  run(&parts[0]);
  for (std::thread& thread : threads) thread.join();
  std::vector<absl::StatusOr<Result>> merged(ids.size(), absl::UnknownError(""));
  for (Group& p : parts) {
    if (!p.results.ok()) return p.results.status();
    if (p.results->size() != p.positions->size()) {
      return absl::InternalError(absl::StrCat("a part of ", p.positions->size(),
                                              " ids returned ", p.results->size(),
                                              " results"));
    }
    for (size_t k = 0; k < p.positions->size(); ++k) {
      merged[(*p.positions)[k]] = std::move((*p.results)[k]);
    }
  }
  return merged;
}

}  // namespace dictlog::client

#endif  // DICTLOG_CLIENT_BY_PARTITION_H_
