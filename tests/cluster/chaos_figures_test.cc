#include "tests/cluster/chaos_figures.h"

#include "gtest/gtest.h"

namespace dictlog::chaos {
namespace {

// 3 nodes a, b, c; 3 partitions held by (a,b), (b,c), (c,a); every replica serving.
v1::ShardMap ThreeNodes() {
  v1::ShardMap map;
  map.set_partitions(3);
  map.set_epoch(1);
  for (const char* name : {"a", "b", "c"}) {
    v1::ShardNode* node = map.add_nodes();
    node->set_name(name);
    node->set_live(true);
  }
  const char* holders[3][2] = {{"a", "b"}, {"b", "c"}, {"c", "a"}};
  for (int p = 0; p < 3; ++p) {
    v1::PartitionReplicas* replicas = map.add_assignments();
    replicas->set_partition(p);
    for (const char* holder : holders[p]) {
      v1::ReplicaState* replica = replicas->add_replicas();
      replica->set_node(holder);
      replica->set_serving(true);
    }
  }
  return map;
}

TEST(SettledTest, AllRunningAndServing) {
  EXPECT_TRUE(Settled(ThreeNodes(), {"a", "b", "c"}));
  EXPECT_FALSE(Settled(ThreeNodes(), {"a", "b", "c"}, /*min_epoch=*/2));
}

TEST(SettledTest, AStoppedNodeMustBeNotLiveAndNotServing) {
  v1::ShardMap map = ThreeNodes();
  EXPECT_FALSE(Settled(map, {"a", "c"}));  // b still live
  map.mutable_nodes(1)->set_live(false);
  EXPECT_FALSE(Settled(map, {"a", "c"}));  // b still serving
  map.mutable_assignments(0)->mutable_replicas(1)->set_serving(false);
  map.mutable_assignments(1)->mutable_replicas(0)->set_serving(false);
  EXPECT_TRUE(Settled(map, {"a", "c"}));   // partitions 0, 1 keep one replica each
}

TEST(SettledTest, ARunningReplicaStillBuildingIsNotSettled) {
  v1::ShardMap map = ThreeNodes();
  map.mutable_assignments(2)->mutable_replicas(0)->set_serving(false);
  EXPECT_FALSE(Settled(map, {"a", "b", "c"}));
}

// A node added that builds before the map names it leaves the map settled throughout.
TEST(EventTest, NeverUnsettledIsZero) {
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  const Event add = {"add", t0, t0 + absl::Seconds(11)};
  EXPECT_DOUBLE_EQ(add.settle_seconds(), 11.0);
  EXPECT_DOUBLE_EQ(add.unsettled_seconds(), 0.0);
}

TEST(DescribeTest, EpochLiveNodesAndServingReplicas) {
  v1::ShardMap map = ThreeNodes();
  map.mutable_nodes(1)->set_live(false);
  map.mutable_assignments(1)->mutable_replicas(0)->set_serving(false);
  EXPECT_EQ(Describe(map), "epoch 1; live a c; p0 a* b*; p1 b c*; p2 c* a*");
}

TEST(ParseFailedCallsTest, LinesAndACutLastLine) {
  auto calls = ParseFailedCalls("1000,get,UNAVAILABLE,P/1\n2000,append,DEADLINE_EXCEEDED,\n30");
  ASSERT_TRUE(calls.ok()) << calls.status();
  ASSERT_EQ(calls->size(), 2u);
  EXPECT_EQ((*calls)[0].when, absl::FromUnixMillis(1000));
  EXPECT_EQ((*calls)[0].id, "P/1");
  EXPECT_EQ((*calls)[1].code, "DEADLINE_EXCEEDED");
  EXPECT_FALSE(ParseFailedCalls("x,get\n").ok());
}

TEST(AttributeTest, WindowsAroundEventsAndSteady) {
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  std::vector<Event> events = {
      {"kill", t0 + absl::Seconds(10), t0 + absl::Seconds(12), t0 + absl::Seconds(10.5)},
      {"stop", t0 + absl::Seconds(30), absl::InfinitePast()}};
  std::vector<FailedCall> calls = {
      {t0 + absl::Seconds(9.5), "get", "UNAVAILABLE", "P/1"},   // kill, 0.5 s before
      {t0 + absl::Seconds(16), "get", "UNAVAILABLE", "P/1"},    // kill, 4 s after settling
      {t0 + absl::Seconds(20), "get", "NOT_FOUND", "P/2"},      // steady
      {t0 + absl::Seconds(100), "append", "INTERNAL", ""}};     // stop never settled
  ErrorWindows windows = Attribute(events, calls, absl::Seconds(1), absl::Seconds(5));
  EXPECT_EQ(windows.by_event[0], (std::map<std::string, int64_t>{{"UNAVAILABLE", 2}}));
  EXPECT_EQ(windows.by_event[1], (std::map<std::string, int64_t>{{"INTERNAL", 1}}));
  EXPECT_EQ(windows.steady, (std::map<std::string, int64_t>{{"NOT_FOUND", 1}}));
  EXPECT_EQ(windows.not_found, 1);
  EXPECT_DOUBLE_EQ(events[0].settle_seconds(), 2.0);
  EXPECT_DOUBLE_EQ(events[1].settle_seconds(), -1.0);
  EXPECT_DOUBLE_EQ(events[0].unsettled_seconds(), 1.5);
  EXPECT_DOUBLE_EQ(events[1].unsettled_seconds(), -1.0);
  const std::string csv = FormatCsv(events, windows, t0);
  EXPECT_EQ(csv,
            "event,at_s,settle_s,unsettled_s,code,count\nkill,10.0,2.0,1.5,UNAVAILABLE,2\n"
            "stop,30.0,-1.0,-1.0,INTERNAL,1\nsteady,,,,NOT_FOUND,1\n");
  const std::string json = FormatJson(events, windows, {5, 5, 0, 0}, t0, 7);
  EXPECT_NE(json.find("\"seed\":7"), std::string::npos);
  EXPECT_NE(json.find("\"not_found\":1"), std::string::npos);
}

}  // namespace
}  // namespace dictlog::chaos
