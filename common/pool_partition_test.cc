#include "common/pool_partition.h"

#include "gtest/gtest.h"

namespace dictlog {
namespace {

// The same vectors as client/python/shard_routing_test.py: both clients and the server
// must agree byte for byte.
TEST(PoolPartitionTest, HashMatchesFixedVectors) {
  EXPECT_EQ(PoolHash(""), 14695981039346656037ull);
  EXPECT_EQ(PoolHash("a"), 12638187200555641996ull);  // 0xaf63dc4c8601ec8c
  EXPECT_EQ(PoolHash("HDFS"), 5951860782854754122ull);
  EXPECT_EQ(PoolHash("web"), 6818697334544801521ull);
  EXPECT_EQ(PoolHash("Z\xc3\xbcrich"), 1078683963132214720ull);  // UTF-8 bytes
}

TEST(PoolPartitionTest, PartitionMatchesFixedVectors) {
  EXPECT_EQ(PoolPartition("HDFS", 1), 0u);
  EXPECT_EQ(PoolPartition("HDFS", 3), 2u);
  EXPECT_EQ(PoolPartition("HDFS", 8), 2u);
  EXPECT_EQ(PoolPartition("HDFS", 64), 10u);
  EXPECT_EQ(PoolPartition("web", 2), 1u);
  EXPECT_EQ(PoolPartition("web", 64), 49u);
  EXPECT_EQ(PoolPartition("pool7", 8), 4u);
  EXPECT_EQ(PoolPartition("", 8), 5u);
}

}  // namespace
}  // namespace dictlog
