#include "server/cluster/partitioning.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace dictlog::cluster {
namespace {

TEST(PartitioningTest, SeqRoundTripsOffsetAndIndex) {
  EXPECT_EQ(SeqOf(0, 0), 1u);  // ids start at 1 as in single-node mode
  EXPECT_EQ(SeqOf(0, 65535), 65536u);
  EXPECT_EQ(SeqOf(1, 0), 65537u);
  for (int64_t offset : {int64_t{0}, int64_t{1}, int64_t{12345}, kMaxOffset}) {
    for (uint64_t index : {uint64_t{0}, uint64_t{7}, kMaxBatchRecords - 1}) {
      EXPECT_EQ(OffsetOf(SeqOf(offset, index)), offset);
    }
  }
  EXPECT_LT(SeqOf(5, kMaxBatchRecords - 1), SeqOf(6, 0));  // increasing across messages
}

TEST(PartitioningTest, PartitionIsStableAndSpreads) {
  EXPECT_EQ(PartitionOf("HDFS", 8), PartitionOf("HDFS", 8));
  std::set<int32_t> seen;
  for (int i = 0; i < 200; ++i) {
    const int32_t p = PartitionOf(absl::StrCat("pool", i), 8);
    ASSERT_GE(p, 0);
    ASSERT_LT(p, 8);
    seen.insert(p);
  }
  EXPECT_EQ(seen.size(), 8u);
  EXPECT_EQ(PartitionOf("anything", 1), 0);
}

}  // namespace
}  // namespace dictlog::cluster
