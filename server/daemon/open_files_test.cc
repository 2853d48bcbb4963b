#include "server/daemon/open_files.h"

#include <sys/resource.h>

#include <limits>

#include "gtest/gtest.h"

namespace dictlog::service {
namespace {

TEST(TableFilesForTest, HalfOfTheLimitAtLeast32AllWhenUnlimited) {
  EXPECT_EQ(TableFilesFor(1024), 512);
  EXPECT_EQ(TableFilesFor(65536), 32768);
  EXPECT_EQ(TableFilesFor(40), 32);
  EXPECT_EQ(TableFilesFor(0), 32);
  EXPECT_EQ(TableFilesFor(std::numeric_limits<uint64_t>::max()), -1);
  EXPECT_EQ(TableFilesFor(uint64_t{1} << 40), -1);
}

// Lowers this process's soft limit (its hard one stays), then raises it back.
TEST(RaiseOpenFilesLimitTest, LiftsTheSoftLimitToTheHardOne) {
  rlimit before{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &before), 0);
  ASSERT_GT(before.rlim_max, 64u);
  rlimit lowered = before;
  lowered.rlim_cur = 64;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &lowered), 0);
  absl::StatusOr<uint64_t> limit = RaiseOpenFilesLimit();
  ASSERT_TRUE(limit.ok()) << limit.status();
  rlimit after{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &after), 0);
  EXPECT_EQ(after.rlim_cur, before.rlim_max);
  EXPECT_EQ(*limit, before.rlim_max == RLIM_INFINITY ? std::numeric_limits<uint64_t>::max()
                                                     : before.rlim_max);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &before), 0);
}

}  // namespace
}  // namespace dictlog::service
