// Partition assignment and routing end to end (docs/cluster.md "Shard map", ADR 0022):
// 3 Kafka brokers and 3 real dictlogd nodes (--cluster_replicas=2, 4 partitions)
// started once for the binary by deploy/local-cluster/cluster.sh. GetShardMap lists 2
// serving replicas per partition on different nodes; loghub appended through one node
// reads back byte-identical from every node (forwarded where the node does not hold
// the pool's partition); a `dictlog-route: direct` read on a non-holder gets
// FAILED_PRECONDITION with a NotServedHere naming the holders; a node killed with
// SIGKILL shows as not live within 10 s while the others still answer every record,
// and serves again once restarted and caught up. Last, one node restarted with
// --cluster_replicas=3 writes a new assignment (epoch + 1) that the others follow: each
// builds the partitions it did not hold from the log, then serves them.
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
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

const std::string kFlags =
    absl::StrCat("--kafka_partitions=", kPartitions, " --cluster_announce_interval_ms=500");

testing::ClusterTestEnvironment* const env = testing::ClusterTestEnvironment::Add(
    {.name = "shards", .nodes = 3, .replicas = 2, .dictlogd_flags = kFlags});
testing::LocalCluster* const& cluster = env->cluster();

int ServingReplicas(const v1::PartitionReplicas& partition) {
  int serving = 0;
  for (const v1::ReplicaState& replica : partition.replicas()) serving += replica.serving();
  return serving;
}

bool AllServing(const v1::ShardMap& map) { return testing::AllServing(map, kPartitions, 2); }

bool Live(const v1::ShardMap& map, const std::string& name) {
  for (const v1::ShardNode& node : map.nodes()) {
    if (node.name() == name) return node.live();
  }
  return false;
}

// The node that does not hold `partition` (3 nodes, 2 replicas).
std::string NonHolder(const v1::ShardMap& map, int32_t partition) {
  std::set<std::string> holders;
  for (const v1::ReplicaState& replica : map.assignments(partition).replicas()) {
    holders.insert(replica.node());
  }
  for (const std::string& node : kNodes) {
    if (!holders.count(node)) return node;
  }
  return "";
}

struct Category {
  std::string name;
  std::vector<std::string> lines, ids;
};

// Loghub appended through dictlogd-1 once, for the tests that read it.
const std::vector<Category>& Loghub() {
  static const std::vector<Category>* categories = [] {
    auto* out = new std::vector<Category>;
    absl::StatusOr<std::vector<trainer::LogFile>> logs =
        trainer::ReadLogFiles(testing::RunfilePath("../loghub"));
    EXPECT_TRUE(logs.ok()) << logs.status();
    if (!logs.ok()) return out;
    std::unique_ptr<client::Client> writer = env->ClientOf("dictlogd-1");
    for (trainer::LogFile& log : *logs) {
      Category& category = out->emplace_back();
      category.name = log.name;
      category.lines = std::move(log.lines);
      for (size_t start = 0; start < category.lines.size(); start += 500) {
        std::vector<v1::RecordToAppend> records;
        for (size_t i = start; i < std::min(category.lines.size(), start + 500); ++i) {
          records.emplace_back();
          records.back().set_category(category.name);
          records.back().set_payload(category.lines[i]);
        }
        auto appended = writer->AppendBatch(records);
        EXPECT_TRUE(appended.ok()) << appended.status();
        if (!appended.ok()) break;
        category.ids.insert(category.ids.end(), appended->begin(), appended->end());
      }
    }
    return out;
  }();
  return *categories;
}

// Every record of `category` through `node`: MultiGet (retried while a replica still
// applies: UNAVAILABLE), Get of one, Scan of all, in order and byte-identical.
void CheckNode(const client::Client& node, const Category& category) {
  SCOPED_TRACE(category.name);
  for (size_t start = 0; start < category.ids.size(); start += 500) {
    const size_t end = std::min(category.ids.size(), start + 500);
    std::vector<std::string> ids(category.ids.begin() + start, category.ids.begin() + end);
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    auto results = node.MultiGet(ids);
    auto unavailable = [&] {
      if (!results.ok()) return absl::IsUnavailable(results.status());
      for (const auto& result : *results) {
        if (absl::IsUnavailable(result.status())) return true;
      }
      return false;
    };
    while (unavailable() && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(100));  // polls a condition
      results = node.MultiGet(ids);
    }
    ASSERT_TRUE(results.ok()) << results.status();
    for (size_t j = 0; j < ids.size(); ++j) {
      ASSERT_TRUE((*results)[j].ok()) << ids[j] << ": " << (*results)[j].status();
      ASSERT_EQ((*results)[j]->payload(), category.lines[start + j]) << ids[j];
      ASSERT_EQ((*results)[j]->id(), ids[j]);
    }
  }
  absl::StatusOr<v1::Record> one = node.Get(category.ids[category.ids.size() / 2]);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->payload(), category.lines[category.ids.size() / 2]);
  v1::ScanRequest scan;
  scan.set_category(category.name);
  size_t n = 0;
  absl::Status status = node.Scan(scan, [&](const v1::Record& record) {
    if (n >= category.lines.size() || record.payload() != category.lines[n] ||
        record.id() != category.ids[n]) {
      return absl::InternalError(absl::StrCat("scan mismatch at ", n));
    }
    ++n;
    return absl::OkStatus();
  });
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(n, category.lines.size());
}

TEST(ShardE2eTest, MapListsTwoServingReplicasPerPartitionOnDifferentNodes) {
  ASSERT_TRUE(cluster != nullptr);
  for (const std::string& asked : kNodes) {
    SCOPED_TRACE(asked);
    absl::StatusOr<v1::ShardMap> map = env->WaitForMap(asked, absl::Seconds(60), AllServing);
    ASSERT_TRUE(map.ok()) << map.status();
    ASSERT_TRUE(AllServing(*map)) << map->DebugString();
    EXPECT_EQ(map->partitions(), static_cast<uint32_t>(kPartitions));
    EXPECT_EQ(map->answered_by(), asked);
    EXPECT_GE(map->epoch(), 1u);
    ASSERT_EQ(map->nodes_size(), 3);
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(map->nodes(i).name(), kNodes[i]);
      EXPECT_EQ(map->nodes(i).address(), cluster->AddressOf(kNodes[i]));
    }
    for (int p = 0; p < kPartitions; ++p) {
      const v1::PartitionReplicas& replicas = map->assignments(p);
      ASSERT_EQ(replicas.replicas_size(), 2);
      EXPECT_NE(replicas.replicas(0).node(), replicas.replicas(1).node());
      EXPECT_EQ(replicas.replicas(0).node(), kNodes[p % 3]);  // By ordinal.
      EXPECT_EQ(replicas.replicas(1).node(), kNodes[(p + 1) % 3]);
    }
  }
}

TEST(ShardE2eTest, LoghubThroughOneNodeReadsBackFromEveryNode) {
  ASSERT_TRUE(cluster != nullptr);
  const std::vector<Category>& categories = Loghub();
  ASSERT_EQ(categories.size(), 10u);
  for (const Category& category : categories) {
    ASSERT_EQ(category.ids.size(), category.lines.size()) << category.name;
  }
  for (const std::string& node : kNodes) {
    SCOPED_TRACE(node);
    std::unique_ptr<client::Client> reader = env->ClientOf(node);
    for (const Category& category : categories) CheckNode(*reader, category);
  }
}

TEST(ShardE2eTest, DirectReadOnANonHolderNamesTheHolders) {
  ASSERT_TRUE(cluster != nullptr);
  const std::vector<Category>& categories = Loghub();
  ASSERT_FALSE(categories.empty());
  absl::StatusOr<v1::ShardMap> map = env->WaitForMap("dictlogd-1", absl::Seconds(60), AllServing);
  ASSERT_TRUE(map.ok()) << map.status();
  const Category& category = categories[0];
  const std::string& id = category.ids[0];
  const int32_t partition =
      cluster::PartitionOf(id.substr(0, id.rfind('/')), kPartitions);
  const std::string non_holder = NonHolder(*map, partition);
  ASSERT_FALSE(non_holder.empty());

  grpc::ClientContext context;
  context.AddMetadata("dictlog-route", "direct");
  v1::GetRequest request;
  request.set_id(id);
  v1::GetResponse response;
  const grpc::Status status = env->StubOf(non_holder)->Get(&context, request, &response);
  ASSERT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << status.error_message();
  v1::RpcStatus details;
  ASSERT_TRUE(details.ParseFromString(status.error_details()));
  EXPECT_EQ(details.code(), static_cast<int>(grpc::StatusCode::FAILED_PRECONDITION));
  ASSERT_EQ(details.details_size(), 1);
  EXPECT_EQ(details.details(0).type_url(), "type.googleapis.com/dictlog.v1.NotServedHere");
  v1::NotServedHere where;
  ASSERT_TRUE(where.ParseFromString(details.details(0).value()));
  EXPECT_EQ(where.partition(), static_cast<uint32_t>(partition));
  EXPECT_EQ(where.epoch(), map->epoch());
  std::set<std::string> named(where.replica_addresses().begin(),
                              where.replica_addresses().end());
  std::set<std::string> holders;
  for (const v1::ReplicaState& replica : map->assignments(partition).replicas()) {
    holders.insert(cluster->AddressOf(replica.node()));
  }
  EXPECT_EQ(named, holders);

  // The same read without the header is forwarded: the record.
  grpc::ClientContext forwarded;
  const grpc::Status ok = env->StubOf(non_holder)->Get(&forwarded, request, &response);
  ASSERT_TRUE(ok.ok()) << ok.error_message();
  EXPECT_EQ(response.record().payload(), category.lines[0]);
}

TEST(ShardE2eTest, AKilledNodeIsNotLiveAndTheOtherReplicaAnswers) {
  ASSERT_TRUE(cluster != nullptr);
  const std::vector<Category>& categories = Loghub();
  ASSERT_EQ(categories.size(), 10u);
  ASSERT_TRUE(env->WaitForMap("dictlogd-1", absl::Seconds(60), AllServing).ok());
  ASSERT_TRUE(cluster->Kill("dictlogd-2", "KILL").ok());
  const absl::Time killed = absl::Now();
  absl::StatusOr<v1::ShardMap> map = env->WaitForMap(
      "dictlogd-1", absl::Seconds(10), [](const v1::ShardMap& m) { return !Live(m, "dictlogd-2"); });
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_FALSE(Live(*map, "dictlogd-2")) << map->DebugString();
  std::printf("dictlogd-2 not live in the map %.1f s after SIGKILL\n",
              absl::ToDoubleSeconds(absl::Now() - killed));
  for (const std::string& node : {std::string("dictlogd-1"), std::string("dictlogd-3")}) {
    SCOPED_TRACE(node);
    std::unique_ptr<client::Client> reader = env->ClientOf(node);
    for (const Category& category : categories) CheckNode(*reader, category);
  }
  absl::Status started = cluster->Start("dictlogd-2");
  ASSERT_TRUE(started.ok()) << started;
  map = env->WaitForMap("dictlogd-1", absl::Seconds(60), AllServing);
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_TRUE(AllServing(*map)) << map->DebugString();
  CheckNode(*env->ClientOf("dictlogd-2"), categories[1]);
}

// Runs last: it changes the cluster's assignment.
TEST(ShardE2eTest, ANewAssignmentIsFollowedAndNewPartitionsAreBuiltThenServed) {
  ASSERT_TRUE(cluster != nullptr);
  const std::vector<Category>& categories = Loghub();
  ASSERT_EQ(categories.size(), 10u);
  absl::StatusOr<v1::ShardMap> before = env->WaitForMap("dictlogd-1", absl::Seconds(60), AllServing);
  ASSERT_TRUE(before.ok()) << before.status();
  absl::Status started = env->Restart("dictlogd-3", "--cluster_replicas=3");
  ASSERT_TRUE(started.ok()) << started;
  auto everywhere = [&](const v1::ShardMap& map) {
    if (map.epoch() != before->epoch() + 1 || map.assignments_size() != kPartitions) return false;
    for (const v1::PartitionReplicas& p : map.assignments()) {
      if (ServingReplicas(p) != 3) return false;
    }
    return true;
  };
  for (const std::string& node : kNodes) {  // Nodes 1 and 2 follow the log's.
    absl::StatusOr<v1::ShardMap> map = env->WaitForMap(node, absl::Seconds(90), everywhere);
    ASSERT_TRUE(map.ok()) << map.status();
    ASSERT_TRUE(everywhere(*map)) << node << ": " << map->DebugString();
  }
  for (const std::string& node : kNodes) {
    SCOPED_TRACE(node);
    std::unique_ptr<client::Client> reader = env->ClientOf(node);
    for (const Category& category : categories) CheckNode(*reader, category);
  }
}

}  // namespace
}  // namespace dictlog
