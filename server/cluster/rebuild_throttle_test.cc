#include "server/cluster/rebuild_throttle.h"

#include <algorithm>

#include "gtest/gtest.h"

namespace dictlog::cluster {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1700000000);

TEST(RebuildThrottleTest, UnlimitedNeverPauses) {
  RebuildThrottle throttle(0);
  EXPECT_EQ(throttle.Spend(int64_t{1} << 40, kStart), kStart);
  EXPECT_EQ(throttle.Spend(int64_t{1} << 40, kStart), kStart);
}

TEST(RebuildThrottleTest, ABurstOfOneSecondThenPausesForTheDebt) {
  RebuildThrottle throttle(1000);
  EXPECT_EQ(throttle.Spend(600, kStart), kStart);
  EXPECT_EQ(throttle.Spend(400, kStart), kStart);  // The second's worth, at once.
  // 500 bytes more: half a second of debt.
  EXPECT_EQ(throttle.Spend(500, kStart), kStart + absl::Milliseconds(500));
}

TEST(RebuildThrottleTest, KeepsTheAverageRateOverTime) {
  RebuildThrottle throttle(1000);
  absl::Time now = kStart;
  int64_t applied = 0;
  // Apply 100-byte messages as fast as the throttle lets: 10 s worth.
  while (now < kStart + absl::Seconds(10)) {
    const absl::Time until = throttle.Spend(100, now);
    applied += 100;
    now = std::max(now, until);
  }
  // 1000 B/s for 10 s, plus the first second's burst.
  EXPECT_GE(applied, 10'000);
  EXPECT_LE(applied, 11'100);
}

TEST(RebuildThrottleTest, IdleTimeRefillsOnlyUpToOneSecond) {
  RebuildThrottle throttle(1000);
  throttle.Spend(1000, kStart);
  // An hour idle earns one second's worth, not 3,600.
  const absl::Time later = kStart + absl::Hours(1);
  EXPECT_EQ(throttle.Spend(1000, later), later);
  EXPECT_EQ(throttle.Spend(1000, later), later + absl::Seconds(1));
}

}  // namespace
}  // namespace dictlog::cluster
