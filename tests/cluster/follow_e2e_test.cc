// Follow and Scan by category in cluster mode (ADR 0032): 3 Kafka brokers and 3 real
// dictlogd nodes (--cluster_replicas=2, 4 partitions, no automatic training) started
// once for the binary by deploy/local-cluster/cluster.sh.
//
// - A Follow of a pool sent to the node that does not hold its partition (no client
//   routing) while the appends go through another node: the node streams it from the
//   pool's first serving replica; every record arrives once, in append order. That
//   replica is then killed (SIGKILL, by pid) mid-stream: the stream goes on from the
//   other replica, after the last record passed on, without loss or repeat.
// - A routed C++ client's Follow of the pool goes to a replica; after the killed node
//   is back, the replica still serving is killed too: the client resumes on the other
//   one, without loss or repeat.
// - Scan by category on each live node returns every record of the category.
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "client/client.h"
#include "gtest/gtest.h"
#include "proto/dictlog.grpc.pb.h"
#include "server/cluster/partitioning.h"
#include "tests/cluster/cluster_test_environment.h"
#include "tests/cluster/local_cluster.h"
#include "tests/e2e/server_process.h"

namespace dictlog {
namespace {

constexpr int kPartitions = 4;
const std::vector<std::string> kNodes = {"dictlogd-1", "dictlogd-2", "dictlogd-3"};

testing::ClusterTestEnvironment* const env = testing::ClusterTestEnvironment::Add(
    {.name = "follow",
     .nodes = 3,
     .replicas = 2,
     .dictlogd_flags = absl::StrCat("--kafka_partitions=", kPartitions,
                                    " --cluster_announce_interval_ms=500 --auto_train=false")});
testing::LocalCluster* const& cluster = env->cluster();

// A client of `node`: routing as asked (without it, every call goes to `node`).
std::unique_ptr<client::Client> ClientOf(const std::string& node, bool routing = false) {
  client::ClientOptions options;
  options.server = cluster->AddressOf(node);
  options.own_connection = true;
  options.routing = routing;
  return std::make_unique<client::Client>(options);
}

// Polls `node`'s map until every partition has 2 serving replicas and every node is
// live (at most 60 s); the last map.
absl::StatusOr<v1::ShardMap> WaitAllServing(const std::string& node) {
  auto all_serving = [](const v1::ShardMap& map) {
    if (map.assignments_size() != kPartitions) return false;
    for (const v1::PartitionReplicas& p : map.assignments()) {
      int serving = 0;
      for (const v1::ReplicaState& replica : p.replicas()) serving += replica.serving();
      if (serving != 2) return false;
    }
    for (const v1::ShardNode& n : map.nodes()) {
      if (!n.live()) return false;
    }
    return true;
  };
  std::unique_ptr<client::Client> asked = ClientOf(node);
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  absl::StatusOr<v1::ShardMap> map = asked->GetShardMap();
  while (!(map.ok() && all_serving(*map)) && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(100));  // polls a condition
    map = asked->GetShardMap();
  }
  if (map.ok() && !all_serving(*map)) {
    return absl::DeadlineExceededError(map->DebugString());
  }
  return map;
}

// `n` records of `category` appended through `node` in calls of 10 (retried by the
// client); their ids.
std::vector<std::string> Append(const client::Client& node, const std::string& category,
                                int first, int n) {
  std::vector<std::string> ids;
  for (int start = first; start < first + n; start += 10) {
    std::vector<v1::RecordToAppend> records;
    for (int i = start; i < std::min(first + n, start + 10); ++i) {
      records.emplace_back();
      records.back().set_category(category);
      records.back().set_payload(absl::StrCat("line ", i, " of ", category));
    }
    auto appended = node.AppendBatch(records);
    EXPECT_TRUE(appended.ok()) << appended.status();
    if (!appended.ok()) return ids;
    ids.insert(ids.end(), appended->begin(), appended->end());
  }
  return ids;
}

// What a follow stream received, filled by its thread.
class Received {
 public:
  void Add(const v1::Record& record) {
    absl::MutexLock lock(&mu_);
    ids_.push_back(record.id());
  }
  void End(const absl::Status& status) {
    absl::MutexLock lock(&mu_);
    status_ = status;
    ended_ = true;
  }
  // Waits (up to 60 s) until `n` ids arrived or the stream ended; the ids so far.
  std::vector<std::string> WaitFor(size_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return ids_.size() >= n || ended_;
    };
    mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(60));
    EXPECT_FALSE(ended_) << status_;
    return ids_;
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> ids_ ABSL_GUARDED_BY(mu_);
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
};

// A Follow of `pool` through `client`, after `after_id` (empty: from the start), on its
// own thread until the test cancels it.
class FollowThread {
 public:
  FollowThread(const client::Client& client, const std::string& pool,
               const std::string& after_id) {
    v1::FollowRequest request;
    request.set_pool(pool);
    if (after_id.empty()) request.set_from_start(true);
    request.set_after_id(after_id);
    thread_ = std::thread([this, &client, request] {
      received_.End(client.Follow(
          request, [this](const v1::Record& record) {
            received_.Add(record);
            return absl::OkStatus();
          },
          &cancel_));
    });
  }
  ~FollowThread() {
    cancel_.Cancel();
    thread_.join();
  }
  Received& received() { return received_; }

 private:
  Received received_;
  client::FollowCancel cancel_;
  std::thread thread_;
};

// The replicas of the partition of `pool` in `map`, in assignment order.
std::vector<std::string> HoldersOf(const v1::ShardMap& map, const std::string& pool) {
  std::vector<std::string> holders;
  for (const v1::ReplicaState& replica :
       map.assignments(cluster::PartitionOf(pool, kPartitions)).replicas()) {
    holders.push_back(replica.node());
  }
  return holders;
}

std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(FollowE2eTest, FollowThroughAnyNodeSurvivesTheReplicaItStreamsFrom) {
  ASSERT_TRUE(cluster != nullptr);
  absl::StatusOr<v1::ShardMap> map = WaitAllServing("dictlogd-1");
  ASSERT_TRUE(map.ok()) << map.status();
  // A pool (a category routes to the pool of its name) that dictlogd-1 does not hold.
  std::string pool;
  for (int i = 0; pool.empty(); ++i) {
    const std::string candidate = absl::StrCat("follow", i);
    const std::vector<std::string> holders = HoldersOf(*map, candidate);
    if (std::find(holders.begin(), holders.end(), "dictlogd-1") == holders.end()) {
      pool = candidate;
    }
  }
  const std::vector<std::string> holders = HoldersOf(*map, pool);
  ASSERT_EQ(holders.size(), 2u);
  const std::string first = holders[0], second = holders[1];
  std::unique_ptr<client::Client> non_holder = ClientOf("dictlogd-1");

  // Proxied by dictlogd-1 from `first`; appends through `second`.
  std::vector<std::string> want = Append(*ClientOf(second), pool, 0, 30);
  FollowThread proxied(*non_holder, pool, "");
  want = Concat(want, Append(*ClientOf(second), pool, 30, 30));
  ASSERT_EQ(want.size(), 60u);
  EXPECT_EQ(proxied.received().WaitFor(want.size()), want);

  ASSERT_TRUE(cluster->Kill(first, "KILL").ok());  // The replica being proxied.
  ASSERT_TRUE(cluster->WaitStopped(first));
  want = Concat(want, Append(*ClientOf(second), pool, 60, 40));
  EXPECT_EQ(proxied.received().WaitFor(want.size()), want);  // Once each, in order.

  // Scan by category answers every record on each live node.
  for (const std::string& node : kNodes) {
    if (node == first) continue;
    v1::ScanRequest scan;
    scan.set_category(pool);
    std::vector<std::string> scanned;
    absl::Status status = ClientOf(node)->Scan(scan, [&](const v1::Record& record) {
      scanned.push_back(record.id());
      return absl::OkStatus();
    });
    ASSERT_TRUE(status.ok()) << node << ": " << status;
    EXPECT_EQ(scanned, want) << node;
  }

  // A routed client streams from `second` (the only one serving); once `first` serves
  // again, `second` is killed: the client resumes on `first`.
  std::unique_ptr<client::Client> routed = ClientOf("dictlogd-1", /*routing=*/true);
  FollowThread direct(*routed, pool, want.back());
  const std::vector<std::string> before_kill = want;
  ASSERT_TRUE(cluster->Start(first).ok());
  ASSERT_TRUE(WaitAllServing("dictlogd-1").ok());
  std::vector<std::string> routed_want = Append(*ClientOf(first), pool, 100, 20);
  EXPECT_EQ(direct.received().WaitFor(routed_want.size()), routed_want);
  ASSERT_TRUE(cluster->Kill(second, "KILL").ok());
  ASSERT_TRUE(cluster->WaitStopped(second));
  routed_want = Concat(routed_want, Append(*ClientOf(first), pool, 120, 20));
  EXPECT_EQ(direct.received().WaitFor(routed_want.size()), routed_want);
  EXPECT_EQ(proxied.received().WaitFor(before_kill.size() + routed_want.size()),
            Concat(before_kill, routed_want));  // The proxy followed the same switch.
  ASSERT_TRUE(cluster->Start(second).ok());
}

}  // namespace
}  // namespace dictlog
