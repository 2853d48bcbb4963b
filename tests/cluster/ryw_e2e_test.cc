// Appends through any node and read-your-writes in cluster mode (docs/cluster.md
// "Write path", "Read-your-writes", ADR 0025): 3 Kafka brokers and 3 real dictlogd
// nodes (--cluster_replicas=2, 4 partitions, no automatic training) started once for
// the binary by deploy/local-cluster/cluster.sh.
//
// - Records appended through the node that does not hold their pool's partition, after
//   the pool has an active dictionary, are stored as frames naming that dictionary, and
//   take the same stored bytes (within 2%) as the same records appended through a
//   holder: the non-holder forwards the append to a serving replica.
// - Read-your-writes: RYW_TRIALS (default 1,000; the documented full run 10,000)
//   times, one Append through a random node, then at once one Get of its id on a random
//   node (plain calls, no client routing, no retry). The Get answers the record in
//   >= 99.9% of the trials (within the read barrier's wait, --kafka_apply_wait_ms) and
//   never NOT_FOUND; the counts and latencies are printed (benchmarks/RESULTS.md), also
//   apart for Gets on a node serving the partition and Gets it forwards.
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/client.h"
#include "gtest/gtest.h"
#include "proto/dictlog.grpc.pb.h"
#include "server/cluster/partitioning.h"
#include "tests/cluster/cluster_test_environment.h"
#include "tests/e2e/server_process.h"
#include "training/files.h"

namespace dictlog {
namespace {

constexpr int kPartitions = 4;
const std::vector<std::string> kNodes = {"dictlogd-1", "dictlogd-2", "dictlogd-3"};

// No automatic training: the first test activates the one dictionary it compares.
// RYW_DICTLOGD_FLAGS adds flags (e.g. --kafka_apply_wait_ms=0: no read barrier).
std::string Flags() {
  const char* extra = std::getenv("RYW_DICTLOGD_FLAGS");
  return absl::StrCat("--kafka_partitions=", kPartitions,
                      " --cluster_announce_interval_ms=500 --auto_train=false ",
                      extra != nullptr ? extra : "");
}

testing::ClusterTestEnvironment* const env = testing::ClusterTestEnvironment::Add(
    {.name = "ryw", .nodes = 3, .replicas = 2, .dictlogd_flags = Flags()});
testing::LocalCluster* const& cluster = env->cluster();

// A client of `node` alone: no routing, so reads are forwarded by the node itself.
std::unique_ptr<client::Client> ClientOf(const std::string& node) {
  return env->ClientOf(node, /*routing=*/false);
}

// Polls `node`'s map until every partition has 2 serving replicas and every node is
// live (at most 60 s); the last map.
absl::StatusOr<v1::ShardMap> WaitAllServing(const std::string& node) {
  auto all_serving = [](const v1::ShardMap& map) {
    return testing::AllServing(map, kPartitions, 2);
  };
  absl::StatusOr<v1::ShardMap> map = env->WaitForMap(node, absl::Seconds(60), all_serving);
  if (map.ok() && !all_serving(*map)) {
    return absl::DeadlineExceededError(map->DebugString());
  }
  return map;
}

// The lines of loghub's `name` log.
std::vector<std::string> LoghubLines(const std::string& name) {
  absl::StatusOr<std::vector<trainer::LogFile>> logs =
      trainer::ReadLogFiles(testing::RunfilePath("../loghub"));
  EXPECT_TRUE(logs.ok()) << logs.status();
  if (!logs.ok()) return {};
  for (trainer::LogFile& log : *logs) {
    if (log.name == name) return std::move(log.lines);
  }
  ADD_FAILURE() << "no loghub log " << name;
  return {};
}

// Appends lines [from, to) as `category` through `node`, 100 a call; their ids.
std::vector<std::string> AppendLines(const client::Client& node, const std::string& category,
                                     const std::vector<std::string>& lines, size_t from,
                                     size_t to) {
  std::vector<std::string> ids;
  for (size_t start = from; start < to; start += 100) {
    std::vector<v1::RecordToAppend> records;
    for (size_t i = start; i < std::min(to, start + 100); ++i) {
      records.emplace_back();
      records.back().set_category(category);
      records.back().set_payload(lines[i]);
    }
    auto appended = node.AppendBatch(records);
    EXPECT_TRUE(appended.ok()) << appended.status();
    if (!appended.ok()) return ids;
    ids.insert(ids.end(), appended->begin(), appended->end());
  }
  return ids;
}

// The stored frames of `ids` read on `node` (MultiGetFrames, 500 a call).
std::vector<v1::RecordFrame> FramesOf(const client::Client& node,
                                      const std::vector<std::string>& ids) {
  std::vector<v1::RecordFrame> frames;
  for (size_t start = 0; start < ids.size(); start += 500) {
    std::vector<std::string> chunk(ids.begin() + start,
                                   ids.begin() + std::min(ids.size(), start + 500));
    auto got = node.MultiGetFrames(chunk);
    EXPECT_TRUE(got.ok()) << got.status();
    if (!got.ok()) return frames;
    for (size_t i = 0; i < chunk.size(); ++i) {
      EXPECT_TRUE((*got)[i].ok()) << chunk[i] << ": " << (*got)[i].status();
      if ((*got)[i].ok()) frames.push_back(*std::move((*got)[i]));
    }
  }
  return frames;
}

size_t StoredBytes(const std::vector<v1::RecordFrame>& frames) {
  size_t bytes = 0;
  for (const v1::RecordFrame& frame : frames) bytes += frame.frame().size() + frame.payload().size();
  return bytes;
}

TEST(RywE2eTest, AppendsThroughANonHolderAreCompressedWithThePoolsDictionary) {
  ASSERT_TRUE(cluster != nullptr);
  absl::StatusOr<v1::ShardMap> map = WaitAllServing("dictlogd-1");
  ASSERT_TRUE(map.ok()) << map.status();
  const std::string category = "HDFS";  // Routes to the pool of its name.
  const int32_t partition = cluster::PartitionOf(category, kPartitions);
  std::vector<std::string> holders;
  for (const v1::ReplicaState& replica : map->assignments(partition).replicas()) {
    holders.push_back(replica.node());
  }
  ASSERT_EQ(holders.size(), 2u);
  std::string non_holder;
  for (const std::string& node : kNodes) {
    if (std::find(holders.begin(), holders.end(), node) == holders.end()) non_holder = node;
  }
  ASSERT_FALSE(non_holder.empty());
  const std::vector<std::string> lines = LoghubLines(category);
  ASSERT_EQ(lines.size(), 2000u);  // loghub's sample: 2,000 lines a log.

  // The pool's records to train on, through a holder, then its dictionary activated.
  std::unique_ptr<client::Client> holder = ClientOf(holders[0]);
  ASSERT_EQ(AppendLines(*holder, category, lines, 0, 1000).size(), 1000u);
  v1::TrainDictionaryRequest train;
  train.set_pool(category);
  train.set_activate(true);
  absl::StatusOr<v1::TrainDictionaryResponse> trained = holder->TrainDictionary(train);
  ASSERT_TRUE(trained.ok()) << trained.status();
  ASSERT_TRUE(trained->activated()) << trained->activation_note();
  const uint32_t dictionary = trained->dictionary().id();
  for (const std::string& node : holders) {  // Both replicas applied the activation.
    std::unique_ptr<client::Client> replica = ClientOf(node);
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    absl::StatusOr<v1::PoolInfo> pool = replica->GetPool(category);
    while ((!pool.ok() || pool->active_dictionary_id() != dictionary) &&
           absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(100));  // polls a condition
      pool = replica->GetPool(category);
    }
    ASSERT_TRUE(pool.ok()) << pool.status();
    ASSERT_EQ(pool->active_dictionary_id(), dictionary) << node;
  }

  // The other 1,000 records through a holder, and again through the non-holder.
  const std::vector<std::string> through_holder =
      AppendLines(*holder, category, lines, 1000, 2000);
  const std::vector<std::string> through_other =
      AppendLines(*ClientOf(non_holder), category, lines, 1000, 2000);
  ASSERT_EQ(through_holder.size(), 1000u);
  ASSERT_EQ(through_other.size(), 1000u);
  const std::vector<v1::RecordFrame> held = FramesOf(*holder, through_holder);
  const std::vector<v1::RecordFrame> other = FramesOf(*holder, through_other);
  ASSERT_EQ(held.size(), 1000u);
  ASSERT_EQ(other.size(), 1000u);
  size_t named = 0, differ = 0;  // Frames naming the dictionary; other dictionaries.
  for (size_t i = 0; i < other.size(); ++i) {
    named += other[i].dictionary_id() == dictionary;
    differ += other[i].dictionary_id() != held[i].dictionary_id();
  }
  EXPECT_EQ(differ, 0u) << "records naming another dictionary than the same through a holder";
  EXPECT_GE(named, 990u) << "frames naming dictionary " << dictionary;
  const size_t held_bytes = StoredBytes(held), other_bytes = StoredBytes(other);
  std::printf("ryw: 1000 HDFS lines stored in %zu bytes through holder %s, %zu through "
              "non-holder %s (%zu naming dictionary %u)\n",
              held_bytes, holders[0].c_str(), other_bytes, non_holder.c_str(), named,
              dictionary);
  EXPECT_LE(other_bytes, held_bytes * 102 / 100);
  EXPECT_GE(other_bytes, held_bytes * 98 / 100);
}

// Whether `node` is a replica of the partition of `pool` in `map`.
bool Holds(const v1::ShardMap& map, const std::string& node, const std::string& pool) {
  const int32_t partition = cluster::PartitionOf(pool, kPartitions);
  for (const v1::ReplicaState& replica : map.assignments(partition).replicas()) {
    if (replica.node() == node) return true;
  }
  return false;
}

// The value at quantile q of `sorted` (ascending, not empty).
double Quantile(const std::vector<double>& sorted, double q) {
  return sorted[std::min(sorted.size() - 1, static_cast<size_t>(q * sorted.size()))];
}

int Trials() {
  const char* env = std::getenv("RYW_TRIALS");
  return env != nullptr && std::atoi(env) > 0 ? std::atoi(env) : 1000;
}

// One Get of `id` on `stub` (no routing header: a non-holder forwards it).
grpc::Status GetOnce(v1::LogStore::Stub* stub, const std::string& id, v1::GetResponse* out) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::GetRequest request;
  request.set_id(id);
  return stub->Get(&context, request, out);
}

// One append as a client following the API's contract does it: under `request_id`,
// repeated with the same request_id (at most 3 attempts) while the answer is UNAVAILABLE,
// which a node forwarding the append gives when the holder did not answer within its
// attempt timeout (the append may or may not have been applied: ADR 0024). `*retries`
// counts the repeats.
grpc::Status AppendOnce(v1::LogStore::Stub* stub, const std::string& category,
                        const std::string& payload, const std::string& request_id,
                        std::string* id, int* retries) {
  v1::AppendRequest request;
  request.set_category(category);
  request.set_payload(payload);
  request.set_request_id(request_id);
  grpc::Status status;
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (attempt > 0) ++*retries;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(15));
    v1::AppendResponse response;
    status = stub->Append(&context, request, &response);
    *id = response.id();
    if (status.error_code() != grpc::StatusCode::UNAVAILABLE) break;
  }
  return status;
}

TEST(RywE2eTest, GetOnARandomNodeRightAfterAppendAnswersTheRecord) {
  ASSERT_TRUE(cluster != nullptr);
  ASSERT_TRUE(WaitAllServing("dictlogd-1").ok());
  absl::StatusOr<v1::ShardMap> map = WaitAllServing("dictlogd-1");
  ASSERT_TRUE(map.ok()) << map.status();
  const std::vector<std::string> lines = LoghubLines("Apache");
  ASSERT_FALSE(lines.empty());
  std::vector<std::unique_ptr<v1::LogStore::Stub>> stubs;
  for (const std::string& node : kNodes) stubs.push_back(env->StubOf(node));
  // Two categories on each partition (each routes to the pool of its name).
  std::vector<std::string> categories;
  std::map<int32_t, int> per_partition;
  for (int i = 0; categories.size() < 2 * kPartitions; ++i) {
    const std::string name = absl::StrCat("ryw", i);
    if (per_partition[cluster::PartitionOf(name, kPartitions)]++ < 2) {
      categories.push_back(name);
    }
  }
  const int trials = Trials();
  std::mt19937_64 random(std::random_device{}());
  std::map<grpc::StatusCode, int> outcomes;
  int answered = 0, append_failures = 0, append_retries = 0;
  std::vector<double> get_ms, append_ms;
  std::map<bool, std::vector<double>> get_ms_by_holder;  // Reader serves the partition.
  for (int t = 0; t < trials; ++t) {
    const std::string& category = categories[random() % categories.size()];
    const std::string payload = absl::StrCat(t, " ", lines[random() % lines.size()]);
    const size_t writer = random() % stubs.size(), reader = random() % stubs.size();
    std::string id;
    const absl::Time appending = absl::Now();
    const grpc::Status appended = AppendOnce(stubs[writer].get(), category, payload,
                                             absl::StrCat("ryw-", t), &id, &append_retries);
    append_ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - appending));
    if (!appended.ok()) {  // Not a trial: nothing was acknowledged.
      ++append_failures;
      ADD_FAILURE() << "append through " << kNodes[writer] << ": " << appended.error_message();
      continue;
    }
    v1::GetResponse got;
    const absl::Time reading = absl::Now();
    const grpc::Status status = GetOnce(stubs[reader].get(), id, &got);
    get_ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - reading));
    get_ms_by_holder[Holds(*map, kNodes[reader], category)].push_back(get_ms.back());
    ++outcomes[status.error_code()];
    if (status.ok()) {
      ASSERT_EQ(got.record().payload(), payload) << id;
      ++answered;
    } else {
      EXPECT_NE(status.error_code(), grpc::StatusCode::NOT_FOUND)
          << id << " appended through " << kNodes[writer] << ", read on " << kNodes[reader]
          << ": " << status.error_message();
      std::printf("ryw: trial %d %s via %s, Get on %s: code %d %s\n", t, id.c_str(),
                  kNodes[writer].c_str(), kNodes[reader].c_str(), status.error_code(),
                  status.error_message().c_str());
    }
  }
  ASSERT_FALSE(get_ms.empty());
  std::sort(get_ms.begin(), get_ms.end());
  std::sort(append_ms.begin(), append_ms.end());
  const int gets = static_cast<int>(get_ms.size());
  std::printf(
      "ryw: trials=%d appends_failed=%d append_retries=%d answered=%d unavailable=%d "
      "not_found=%d other=%d get_ms p50=%.2f p99=%.2f max=%.2f append_ms p50=%.2f p99=%.2f\n",
      trials, append_failures, append_retries, answered, outcomes[grpc::StatusCode::UNAVAILABLE],
      outcomes[grpc::StatusCode::NOT_FOUND],
      gets - answered - outcomes[grpc::StatusCode::UNAVAILABLE] -
          outcomes[grpc::StatusCode::NOT_FOUND],
      Quantile(get_ms, 0.5), Quantile(get_ms, 0.99), get_ms.back(), Quantile(append_ms, 0.5),
      Quantile(append_ms, 0.99));
  for (auto& [holder, ms] : get_ms_by_holder) {
    std::sort(ms.begin(), ms.end());
    std::printf("ryw: Gets on a node %s: %zu, get_ms p50=%.2f p99=%.2f\n",
                holder ? "serving the partition" : "forwarding them", ms.size(),
                Quantile(ms, 0.5), Quantile(ms, 0.99));
  }
  EXPECT_EQ(outcomes[grpc::StatusCode::NOT_FOUND], 0);
  EXPECT_EQ(append_failures, 0);
  // A retry answers a holder that was slow once, not one that stopped answering.
  EXPECT_LE(append_retries * 100, trials) << append_retries << " retried appends";
  EXPECT_GE(answered * 1000, gets * 999) << "answered " << answered << " of " << gets;
}

}  // namespace
}  // namespace dictlog
