#include "client/cli/shard_map_output.h"

#include "gtest/gtest.h"

namespace dictlog::cli {
namespace {

v1::ShardMap TwoNodes() {
  v1::ShardMap map;
  map.set_partitions(2);
  map.set_epoch(7);
  map.set_answered_by("n1");
  v1::ShardNode* n1 = map.add_nodes();
  n1->set_name("n1");
  n1->set_address("10.0.0.1:7070");
  n1->set_live(true);
  n1->set_announced_unix_ms(1764050400000);  // 2025-11-25T06:00:00Z
  map.add_nodes()->set_name("n2");            // Never announced.
  for (uint32_t p = 0; p < 2; ++p) {
    v1::PartitionReplicas* a = map.add_assignments();
    a->set_partition(p);
    v1::ReplicaState* r = a->add_replicas();
    r->set_node(p == 0 ? "n1" : "n2");
    r->set_applied_offset(90);
    r->set_end_offset(100);
    r->set_serving(p == 0);
  }
  return map;
}

TEST(ShardMapOutputTest, TextListsNodesAndReplicas) {
  const std::string text = ShardMapText(TwoNodes(), "10.0.0.1:7070");
  EXPECT_NE(text.find("epoch 7, 2 partitions, answered by n1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("10.0.0.1:7070"), std::string::npos);
  EXPECT_NE(text.find("2025-11-25T06:00:00Z"), std::string::npos) << text;
  EXPECT_NE(text.find("never"), std::string::npos);
  EXPECT_NE(text.find("0         n1                         90          100         10 yes"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(" no\n"), std::string::npos);
}

TEST(ShardMapOutputTest, SingleNode) {
  EXPECT_EQ(ShardMapText(v1::ShardMap(), "127.0.0.1:7070"),
            "single node: every call goes to 127.0.0.1:7070\n");
}

TEST(ShardMapOutputTest, Json) {
  EXPECT_EQ(ShardMapJson(TwoNodes()),
            "{\"partitions\":2,\"epoch\":7,\"answered_by\":\"n1\",\"nodes\":["
            "{\"name\":\"n1\",\"address\":\"10.0.0.1:7070\",\"live\":true,"
            "\"announced_unix_ms\":1764050400000},"
            "{\"name\":\"n2\",\"address\":\"\",\"live\":false,\"announced_unix_ms\":0}],"
            "\"assignments\":[{\"partition\":0,\"replicas\":[{\"node\":\"n1\","
            "\"applied_offset\":90,\"end_offset\":100,\"lag\":10,\"serving\":true}]},"
            "{\"partition\":1,\"replicas\":[{\"node\":\"n2\",\"applied_offset\":90,"
            "\"end_offset\":100,\"lag\":10,\"serving\":false}]}]}");
}

}  // namespace
}  // namespace dictlog::cli
