// Dropping partitions no longer held, end to end (docs/cluster.md "Dropping partitions
// no longer held", ADR 0030): 3 Kafka brokers and 2 real dictlogd nodes holding the 3
// partitions of dictlog.records twice (--cluster_replicas=2), started by
// deploy/local-cluster/cluster.sh. Records go into pools of every partition and a
// dictionary is trained for one pool of partition 1; then dictlogd-3 joins with the
// 3-node list and dictlogd-1 is restarted with it (ADR 0031: a node applies what its
// own list gives it until then): partition 1 moves from dictlogd-1 to dictlogd-2 and
// dictlogd-3, so
// once its grace (--cluster_drop_unheld_after_ms, 1.5 s here) passed and both serve it
// caught up, dictlogd-1's own store counts none of partition 1's records (GetPool
// answers from the node's store) while it keeps the dictionary and the pools it still
// holds, and every record still reads through dictlogd-1 (forwarded).
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/client.h"
#include "codec/test_dictionary.h"
#include "common/pool_partition.h"
#include "gtest/gtest.h"
#include "tests/cluster/cluster_test_environment.h"
#include "tests/cluster/local_cluster.h"
#include "tests/e2e/server_process.h"

namespace dictlog {
namespace {

constexpr uint32_t kPartitions = 3;
const std::string kFlags = absl::StrCat(
    "--kafka_partitions=", kPartitions,
    " --cluster_announce_interval_ms=300 --cluster_drop_unheld_after_ms=1500");

testing::ClusterTestEnvironment* const env = testing::ClusterTestEnvironment::Add(
    {.name = "drop", .nodes = 2, .replicas = 2, .dictlogd_flags = kFlags});
testing::LocalCluster* const& cluster = env->cluster();

std::map<std::string, std::string> addresses;  // Of nodes cluster.sh up did not make.

std::unique_ptr<client::Client> ClientOf(const std::string& node) {
  client::ClientOptions options;
  options.server = addresses.count(node) ? addresses[node] : cluster->AddressOf(node);
  options.own_connection = true;
  options.routing = false;  // Through this node: it serves or forwards.
  return std::make_unique<client::Client>(options);
}

// Polls `check` every 50 ms until it is true or `timeout` passes; whether it became true.
template <typename Check>
bool WaitFor(absl::Duration timeout, Check check) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!check()) {
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Milliseconds(50));  // polls a condition
  }
  return true;
}

// Whether `node`'s map says every partition is served by exactly `nodes`' replicas
// that apply it, at an epoch of at least `epoch`.
bool Settled(const std::string& node, uint64_t epoch, size_t replicas) {
  absl::StatusOr<v1::ShardMap> map = ClientOf(node)->GetShardMap();
  if (!map.ok() || map->epoch() < epoch || map->assignments_size() != kPartitions) return false;
  for (const v1::PartitionReplicas& p : map->assignments()) {
    size_t serving = 0;
    for (const v1::ReplicaState& replica : p.replicas()) serving += replica.serving() ? 1 : 0;
    if (serving != replicas || static_cast<size_t>(p.replicas_size()) != replicas) return false;
  }
  return true;
}

// The records of `pool` that `node`'s own store counts (GetPool answers from it).
int64_t StoredRecords(const std::string& node, const std::string& pool) {
  absl::StatusOr<v1::PoolInfo> info = ClientOf(node)->GetPool(pool);
  return info.ok() ? static_cast<int64_t>(info->stats().records()) : -1;
}

std::string PoolOf(const std::string& id) { return id.substr(0, id.rfind('/')); }

TEST(DropE2eTest, ANodeDropsAPartitionItNoLongerHoldsAndKeepsItsDictionaries) {
  ASSERT_TRUE(cluster != nullptr);
  ASSERT_TRUE(WaitFor(absl::Seconds(60), [] { return Settled("dictlogd-1", 1, 2); }));
  const uint64_t epoch = ClientOf("dictlogd-1")->GetShardMap()->epoch();

  // 400 log lines into each of 9 pools (4 calls of 100), spread over the 3 partitions.
  const std::vector<std::string> lines = codec::SyntheticLogLines(400, 3);
  std::vector<std::pair<std::string, std::string>> records;  // id, payload
  std::map<uint32_t, std::vector<std::string>> pools_of;      // partition -> pools
  std::unique_ptr<client::Client> writer = ClientOf("dictlogd-1");
  for (int p = 0; p < 9; ++p) {
    for (size_t first = 0; first < lines.size(); first += 100) {
      std::vector<v1::RecordToAppend> batch(100);
      for (size_t i = 0; i < batch.size(); ++i) {
        batch[i].set_category(absl::StrCat("drop-", p));
        batch[i].set_payload(lines[first + i]);
      }
      absl::StatusOr<std::vector<std::string>> ids = writer->AppendBatch(batch);
      ASSERT_TRUE(ids.ok()) << ids.status();
      for (size_t i = 0; i < ids->size(); ++i) records.emplace_back((*ids)[i], lines[first + i]);
    }
    const std::string pool = PoolOf(records.back().first);
    pools_of[PoolPartition(pool, kPartitions)].push_back(pool);
  }
  ASSERT_FALSE(pools_of[1].empty()) << "no pool of partition 1 among 9";
  ASSERT_FALSE(pools_of[0].empty()) << "no pool of partition 0 among 9";
  const std::string moved = pools_of[1][0];
  const std::string kept = pools_of[0][0];
  v1::TrainDictionaryRequest train;
  train.set_pool(moved);
  train.set_dictionary_bytes(4096);
  train.set_activate(true);
  absl::StatusOr<v1::TrainDictionaryResponse> trained = writer->TrainDictionary(train);
  ASSERT_TRUE(trained.ok()) << trained.status();
  const uint32_t dictionary = trained->dictionary().id();
  ASSERT_TRUE(WaitFor(absl::Seconds(10), [&] {
    return StoredRecords("dictlogd-1", moved) == 400 && StoredRecords("dictlogd-1", kept) == 400;
  }));

  // dictlogd-3 joins: partition 1 is held by dictlogd-2 and dictlogd-3 from now on.
  absl::StatusOr<std::string> added = testing::StartAddedNode(
      *cluster, "dictlogd-3",
      absl::StrCat(kFlags, " --cluster_nodes=dictlogd-1,dictlogd-2,dictlogd-3"));
  ASSERT_TRUE(added.ok()) << added.status();
  addresses["dictlogd-3"] = *added;
  ASSERT_TRUE(WaitFor(absl::Seconds(60), [&] { return Settled("dictlogd-1", epoch + 1, 2); }));
  // The operator's next step (ADR 0031): dictlogd-1 goes on applying what its own
  // 2-node list gives it until it is restarted with the 3-node list.
  ASSERT_TRUE(WaitFor(absl::Seconds(60), [&] { return Settled("dictlogd-3", epoch + 1, 2); }));
  const absl::Status restarted =
      env->Restart("dictlogd-1", "--cluster_nodes=dictlogd-1,dictlogd-2,dictlogd-3");
  ASSERT_TRUE(restarted.ok()) << restarted;
  ASSERT_TRUE(WaitFor(absl::Seconds(60), [&] { return Settled("dictlogd-1", epoch + 1, 2); }));

  const absl::Time settled = absl::Now();
  EXPECT_TRUE(WaitFor(absl::Seconds(60), [&] { return StoredRecords("dictlogd-1", moved) == 0; }))
      << "dictlogd-1 still stores " << StoredRecords("dictlogd-1", moved) << " records of "
      << moved;
  std::printf("partition 1 dropped on dictlogd-1 %.1f s after the map settled\n",
              absl::ToDoubleSeconds(absl::Now() - settled));
  EXPECT_EQ(StoredRecords("dictlogd-1", kept), 400) << "partition 0 is still held";
  v1::ListDictionariesRequest list;
  list.set_pool(moved);
  absl::StatusOr<v1::ListDictionariesResponse> dictionaries =
      ClientOf("dictlogd-1")->ListDictionaries(list);
  ASSERT_TRUE(dictionaries.ok()) << dictionaries.status();
  bool found = false;
  for (const v1::DictionaryInfo& info : dictionaries->dictionaries()) {
    found = found || info.id() == dictionary;
  }
  EXPECT_TRUE(found) << "dictionary " << dictionary << " of " << moved << " was dropped";

  // Every record reads through every node (dictlogd-1 forwards partition 1's).
  for (const std::string node : {"dictlogd-1", "dictlogd-2", "dictlogd-3"}) {
    std::unique_ptr<client::Client> reader = ClientOf(node);
    int wrong = 0;
    for (const auto& [id, payload] : records) {
      absl::StatusOr<v1::Record> record = reader->Get(id);
      if (!record.ok() || record->payload() != payload) {
        if (++wrong <= 3) ADD_FAILURE() << node << " " << id << ": " << record.status();
      }
    }
    EXPECT_EQ(wrong, 0) << node;
  }
  absl::StatusOr<std::string> logged = testing::RunCommand(absl::StrCat(
      "grep 'dropped partition' '", cluster->dir(), "/dictlogd-1/console.log'"));
  ASSERT_TRUE(logged.ok()) << logged.status();
  std::printf("%s", logged->c_str());
  EXPECT_NE(logged->find("dropped partition 1:"), std::string::npos) << *logged;
}

}  // namespace
}  // namespace dictlog
