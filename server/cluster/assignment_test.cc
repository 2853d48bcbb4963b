#include "server/cluster/assignment.h"

#include <map>

#include "gtest/gtest.h"

namespace dictlog::cluster {
namespace {

using ::std::string;
using ::std::vector;

TEST(AssignmentTest, PartitionGoesToConsecutiveOrdinals) {
  EXPECT_EQ(ReplicaOrdinals(0, 3, 2), (vector<int>{0, 1}));
  EXPECT_EQ(ReplicaOrdinals(1, 3, 2), (vector<int>{1, 2}));
  EXPECT_EQ(ReplicaOrdinals(2, 3, 2), (vector<int>{2, 0}));  // wraps around
  EXPECT_EQ(ReplicaOrdinals(7, 3, 2), (vector<int>{1, 2}));  // 7 mod 3 = 1
}

TEST(AssignmentTest, ReplicasAreDistinctAndCappedAtTheNodeCount) {
  EXPECT_EQ(ReplicaOrdinals(1, 2, 5), (vector<int>{1, 0}));
  EXPECT_EQ(ReplicaOrdinals(4, 1, 2), (vector<int>{0}));
  EXPECT_EQ(ReplicaOrdinals(0, 4, 0), (vector<int>{0, 1, 2, 3}));  // 0: every node
  EXPECT_TRUE(ReplicaOrdinals(0, 0, 2).empty());
  EXPECT_TRUE(ReplicaOrdinals(-1, 3, 2).empty());
}

TEST(AssignmentTest, NamesFromTheListOrThisNodeAlone) {
  const vector<string> nodes = {"a", "b", "c"};
  EXPECT_EQ(ReplicasOf(2, nodes, 2, "b"), (vector<string>{"c", "a"}));
  EXPECT_EQ(ReplicasOf(5, {}, 2, "solo"), (vector<string>{"solo"}));
  EXPECT_EQ(PartitionsHeldBy("a", 8, nodes, 2, "a"), (vector<int32_t>{0, 2, 3, 5, 6}));
  EXPECT_EQ(PartitionsHeldBy("solo", 3, {}, 2, "solo"), (vector<int32_t>{0, 1, 2}));
  EXPECT_TRUE(PartitionsHeldBy("x", 3, nodes, 2, "x").empty());  // not in the list
}

TEST(AssignmentTest, EveryPartitionHasItsCopiesAndLoadIsEven) {
  const vector<string> nodes = {"n0", "n1", "n2", "n3", "n4"};
  std::map<string, int> load;
  for (int32_t p = 0; p < 20; ++p) {
    const vector<string> replicas = ReplicasOf(p, nodes, 2, "n0");
    ASSERT_EQ(replicas.size(), 2u);
    EXPECT_NE(replicas[0], replicas[1]);
    for (const string& name : replicas) ++load[name];
  }
  for (const string& name : nodes) EXPECT_EQ(load[name], 8) << name;  // 20 * 2 / 5
}

}  // namespace
}  // namespace dictlog::cluster
