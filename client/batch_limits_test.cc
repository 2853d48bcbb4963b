#include "client/batch_limits.h"

#include "gtest/gtest.h"

namespace dictlog::client {
namespace {

using Ranges = std::vector<std::pair<size_t, size_t>>;

TEST(BatchLimitsTest, FullAtMaxRecordsAndFitsWithinMaxBytes) {
  BatchLimits limits(2, 8);
  EXPECT_TRUE(limits.Fits(100));  // An empty batch takes any one record.
  limits.Add(4);
  EXPECT_TRUE(limits.Fits(4));
  EXPECT_FALSE(limits.Fits(5));
  limits.Add(4);
  EXPECT_TRUE(limits.Full());
  EXPECT_FALSE(limits.Fits(0));
  limits.Clear();
  EXPECT_FALSE(limits.Full());
  EXPECT_TRUE(limits.Fits(8));
}

TEST(SplitIntoBatchesTest, BoundsBatchesByCountAndBytes) {
  EXPECT_EQ(SplitIntoBatches({1, 1, 1, 1, 1}, BatchLimits(2, 1000)),
            (Ranges{{0, 2}, {2, 4}, {4, 5}}));
  // As LineBatcher's "aaaa\nbbbb\ncccccccccc\nd\n" at 8 bytes: the oversized one alone.
  EXPECT_EQ(SplitIntoBatches({4, 4, 10, 1}, BatchLimits(100, 8)),
            (Ranges{{0, 2}, {2, 3}, {3, 4}}));
}

TEST(SplitIntoBatchesTest, NoRecordsNoBatchesAndZeroRecordsPerBatchSendsNothing) {
  EXPECT_TRUE(SplitIntoBatches({}, BatchLimits(10, 10)).empty());
  EXPECT_TRUE(SplitIntoBatches({1, 2}, BatchLimits(0, 10)).empty());
}

}  // namespace
}  // namespace dictlog::client
