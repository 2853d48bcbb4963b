#include "server/cluster/shard_directory.h"

#include <memory>

#include "gtest/gtest.h"

namespace dictlog::cluster {
namespace {

// A clock the test moves.
struct FakeClock {
  absl::Time now = absl::FromUnixSeconds(1'700'000'000);
};

NodePartition Progress(int32_t partition, int64_t applied, int64_t end, bool serving) {
  NodePartition p;
  p.set_partition(partition);
  p.set_applied_offset(applied);
  p.set_end_offset(end);
  p.set_serving(serving);
  return p;
}

class ShardDirectoryTest : public ::testing::Test {
 protected:
  // Node `name` of a, b, c with 2 replicas over 3 partitions: 0 on a,b; 1 on b,c;
  // 2 on c,a.
  std::unique_ptr<ShardDirectory> Directory(const std::string& name) {
    DirectoryOptions options;
    options.node_name = name;
    options.address = name + ":1";
    options.partitions = 3;
    options.nodes = {"a", "b", "c"};
    options.replicas = 2;
    options.announce_interval = absl::Seconds(1);
    options.now = [this] { return clock_.now; };
    return std::make_unique<ShardDirectory>(options);
  }

  NodeAnnouncement Announced(const std::string& name, std::vector<NodePartition> held,
                             bool stopping = false) {
    NodeAnnouncement announcement;
    announcement.set_name(name);
    announcement.set_address(name + ":1");
    announcement.set_unix_ms(absl::ToUnixMillis(clock_.now));
    announcement.set_stopping(stopping);
    for (const NodePartition& p : held) *announcement.add_partitions() = p;
    return announcement;
  }

  FakeClock clock_;
};

TEST_F(ShardDirectoryTest, HoldsItsPartitionsAndServesThemOnceCaughtUp) {
  auto a = Directory("a");
  EXPECT_EQ(a->Held(), (std::vector<int32_t>{0, 2}));
  EXPECT_FALSE(a->Place(0).here);  // Nothing applied yet.
  a->SetLocal({Progress(0, 5, 5, true), Progress(2, 1, 9, false)});
  EXPECT_TRUE(a->Place(0).here);
  EXPECT_FALSE(a->Place(2).here);  // Still building.
  EXPECT_FALSE(a->Place(1).here);  // Not held.
}

TEST_F(ShardDirectoryTest, ReadyOnceEveryHeldPartitionServesAndToldOnEachChange) {
  auto a = Directory("a");
  std::vector<bool> told;
  a->SetReadinessListener([&told](bool ready) { told.push_back(ready); });
  EXPECT_FALSE(a->AllHeldServing());
  a->SetLocal({Progress(0, 5, 5, true), Progress(2, 1, 9, false)});
  EXPECT_FALSE(a->AllHeldServing());
  a->SetLocal({Progress(0, 5, 5, true), Progress(2, 9, 9, true)});
  EXPECT_TRUE(a->AllHeldServing());
  a->SetLocal({Progress(0, 6, 6, true), Progress(2, 10, 10, true)});  // No change.
  a->SetLocal({Progress(0, 6, 90000, false), Progress(2, 10, 10, true)});  // Lagging.
  EXPECT_FALSE(a->AllHeldServing());
  a->SetLocal({});  // Restarting on a new assignment: nothing held is reported yet.
  EXPECT_EQ(told, (std::vector<bool>{false, true, false}));
}

TEST_F(ShardDirectoryTest, LiveWithinThreeIntervalsOfTheLastAnnouncement) {
  auto a = Directory("a");
  a->ObserveAnnouncement(Announced("b", {Progress(0, 3, 3, true), Progress(1, 3, 3, true)}));
  EXPECT_EQ(a->Place(1).addresses, (std::vector<std::string>{"b:1"}));
  clock_.now += absl::Seconds(3);
  EXPECT_EQ(a->Place(1).addresses.size(), 1u);  // 3 intervals: still live.
  v1::ShardMap map = a->Map();
  ASSERT_EQ(map.nodes_size(), 3);
  EXPECT_TRUE(map.nodes(1).live());
  clock_.now += absl::Milliseconds(1);
  EXPECT_TRUE(a->Place(1).addresses.empty());  // Silent too long: not live.
  map = a->Map();
  EXPECT_FALSE(map.nodes(1).live());
  EXPECT_TRUE(map.nodes(0).live());   // This node is live to itself.
  EXPECT_FALSE(map.nodes(2).live());  // Never announced.
  EXPECT_EQ(map.nodes(2).announced_unix_ms(), 0);
  a->ObserveAnnouncement(Announced("b", {Progress(1, 4, 4, true)}));  // Back.
  EXPECT_EQ(a->Place(1).addresses, (std::vector<std::string>{"b:1"}));
}

TEST_F(ShardDirectoryTest, StoppingOrNotServingReplicasAreNotRoutedTo) {
  auto a = Directory("a");
  a->ObserveAnnouncement(Announced("b", {Progress(1, 0, 7, false)}));
  a->ObserveAnnouncement(Announced("c", {Progress(1, 7, 7, true)}));
  EXPECT_EQ(a->Place(1).addresses, (std::vector<std::string>{"c:1"}));
  a->ObserveAnnouncement(Announced("c", {Progress(1, 7, 7, true)}, /*stopping=*/true));
  EXPECT_TRUE(a->Place(1).addresses.empty());
}

TEST_F(ShardDirectoryTest, MapListsReplicasWithTheirOffsets) {
  auto a = Directory("a");
  a->SetLocal({Progress(0, 10, 10, true), Progress(2, 4, 4, true)});
  a->ObserveAnnouncement(Announced("b", {Progress(0, 8, 10, false), Progress(1, 6, 6, true)}));
  const v1::ShardMap map = a->Map();
  EXPECT_EQ(map.partitions(), 3u);
  EXPECT_EQ(map.answered_by(), "a");
  EXPECT_EQ(map.nodes(0).address(), "a:1");
  ASSERT_EQ(map.assignments_size(), 3);
  const v1::PartitionReplicas& p0 = map.assignments(0);
  ASSERT_EQ(p0.replicas_size(), 2);
  EXPECT_EQ(p0.replicas(0).node(), "a");
  EXPECT_TRUE(p0.replicas(0).serving());
  EXPECT_EQ(p0.replicas(0).applied_offset(), 10);
  EXPECT_EQ(p0.replicas(1).node(), "b");
  EXPECT_FALSE(p0.replicas(1).serving());
  EXPECT_EQ(p0.replicas(1).applied_offset(), 8);
  EXPECT_EQ(p0.replicas(1).end_offset(), 10);
  EXPECT_EQ(map.assignments(2).replicas(0).node(), "c");
  EXPECT_EQ(map.assignments(2).replicas(1).node(), "a");
}

TEST_F(ShardDirectoryTest, TheLogsAssignmentWinsOverTheFlags) {
  auto a = Directory("a");
  EXPECT_FALSE(a->LogHasAssignment());
  EXPECT_TRUE(a->FlagsMatch());
  EXPECT_EQ(a->Current().epoch(), 0u);
  AssignmentRecord logged;
  for (const char* node : {"c", "a"}) logged.add_nodes(node);
  logged.set_replicas(1);
  logged.set_epoch(4);
  a->ObserveAssignment(logged);
  EXPECT_FALSE(a->FlagsMatch());  // Logged loudly (a metric), followed anyway.
  EXPECT_EQ(a->Current().epoch(), 4u);
  EXPECT_EQ(a->Held(), (std::vector<int32_t>{1}));  // 0 -> c, 1 -> a, 2 -> c
  EXPECT_EQ(a->Map().epoch(), 4u);
  EXPECT_EQ(a->Map().nodes_size(), 2);
  EXPECT_EQ(a->FirstReplicaHere(1), std::optional<bool>(true));  // a trains partition 1.
  EXPECT_EQ(a->FirstReplicaHere(0), std::optional<bool>(false));
  logged.set_replicas(0);  // Every node holds every partition.
  logged.set_epoch(5);
  a->ObserveAssignment(logged);
  EXPECT_EQ(a->Held(), (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(a->FirstReplicaHere(1), std::nullopt);  // ClusterLog's rule by pool name.
}

TEST_F(ShardDirectoryTest, AnnouncementCarriesAddressProgressAndTime) {
  auto a = Directory("a");
  a->SetLocal({Progress(0, 2, 3, true)});
  NodeAnnouncement announcement = a->Announcement(false);
  EXPECT_EQ(announcement.address(), "a:1");
  EXPECT_EQ(announcement.unix_ms(), absl::ToUnixMillis(clock_.now));
  ASSERT_EQ(announcement.partitions_size(), 1);
  EXPECT_TRUE(announcement.partitions(0).serving());
  announcement = a->Announcement(true);
  EXPECT_TRUE(announcement.stopping());
  EXPECT_FALSE(announcement.partitions(0).serving());
}

TEST_F(ShardDirectoryTest, CountsRoutingDecisions) {
  auto a = Directory("a");
  a->CountForwarded("Get");
  a->CountForwarded("Get");
  a->CountForwarded("MultiGet");
  a->CountNotServedHere();
  const RoutingCounters counters = a->Counters();
  EXPECT_EQ(counters.forwarded.at("Get"), 2u);
  EXPECT_EQ(counters.forwarded.at("MultiGet"), 1u);
  EXPECT_EQ(counters.not_served_here, 1u);
}

AssignmentRecord Assignment(std::vector<std::string> nodes, uint64_t epoch) {
  AssignmentRecord assignment;
  for (const std::string& node : nodes) assignment.add_nodes(node);
  assignment.set_replicas(2);
  assignment.set_epoch(epoch);
  return assignment;
}

// ADR 0031: node d, started with the list a, b, c, d while the log says a, b, c, holds
// nothing yet but applies partition 2 (on c, d under its flags), and is ready to write
// its list once it serves it; under a, b, c, d it holds and applies just that.
TEST_F(ShardDirectoryTest, ANewNodeBuildsWhatItsFlagsGiveItBeforeItHoldsIt) {
  DirectoryOptions options;
  options.node_name = "d";
  options.partitions = 3;
  options.nodes = {"a", "b", "c", "d"};
  options.replicas = 2;
  ShardDirectory d(options);
  d.ObserveAssignment(Assignment({"a", "b", "c"}, 1));
  EXPECT_TRUE(d.Held().empty());
  EXPECT_EQ(d.Materialized(), (std::vector<int32_t>{2}));
  EXPECT_FALSE(d.FlagHeldServing());
  d.SetLocal({Progress(2, 3, 9, false)});
  EXPECT_FALSE(d.FlagHeldServing());  // Still building.
  d.SetLocal({Progress(2, 9, 9, true)});
  EXPECT_TRUE(d.FlagHeldServing());
  EXPECT_FALSE(d.Place(2).here);  // Not its partition yet: never served here.
  d.ObserveAssignment(Assignment({"a", "b", "c", "d"}, 2));
  EXPECT_EQ(d.Held(), (std::vector<int32_t>{2}));
  EXPECT_EQ(d.Materialized(), (std::vector<int32_t>{2}));
  EXPECT_TRUE(d.Place(2).here);
}

// A node whose flags still name the old list keeps applying what that list gives it, so
// an assignment that only takes partitions from it needs no restart of its materializer.
TEST_F(ShardDirectoryTest, ANodeWithOlderFlagsKeepsApplyingWhatTheyGiveIt) {
  auto a = Directory("a");  // Flags a, b, c: partitions 0 and 2.
  a->ObserveAssignment(Assignment({"a", "b", "c", "d"}, 2));
  EXPECT_EQ(a->Held(), (std::vector<int32_t>{0}));
  EXPECT_EQ(a->Materialized(), (std::vector<int32_t>{0, 2}));
  a->ObserveAssignment(Assignment({"a", "b", "c"}, 3));
  EXPECT_EQ(a->Materialized(), (std::vector<int32_t>{0, 2}));
}

}  // namespace
}  // namespace dictlog::cluster
