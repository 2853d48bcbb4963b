// TimeRangeCache: ranges answer the seqs they hold, per pool; fills from a snapshot
// older than an invalidation are dropped; the size stays bounded.
#include "server/store/time_range_cache.h"

#include <optional>

#include "gtest/gtest.h"

namespace dictlog::store {
namespace {

TEST(TimeRangeCacheTest, ARangeAnswersTheSeqsItHoldsOnly) {
  TimeRangeCache cache;
  cache.Fill(1, cache.Version(1), 10, 19, 500);
  EXPECT_EQ(cache.Find(1, 10), 500);
  EXPECT_EQ(cache.Find(1, 19), 500);
  EXPECT_EQ(cache.Find(1, 9), std::nullopt);
  EXPECT_EQ(cache.Find(1, 20), std::nullopt);
  EXPECT_EQ(cache.Find(2, 15), std::nullopt);  // Another pool.
  EXPECT_EQ(cache.Find(0, 15), std::nullopt);
}

TEST(TimeRangeCacheTest, AFillFromBeforeAnInvalidationIsDropped) {
  TimeRangeCache cache;
  const uint64_t before = cache.Version(1);
  const uint64_t other_pool = cache.Version(2);
  cache.Invalidate(1, 15);  // An entry at 15 committed after the snapshot was taken.
  cache.Fill(1, before, 10, 19, 500);
  EXPECT_EQ(cache.Find(1, 12), std::nullopt);
  cache.Fill(2, other_pool, 10, 19, 600);  // Pool 2's version did not move.
  EXPECT_EQ(cache.Find(2, 12), 600);
  cache.Fill(1, cache.Version(1), 10, 14, 500);
  EXPECT_EQ(cache.Find(1, 12), 500);
}

TEST(TimeRangeCacheTest, AFillExtendsAKnownRangeAndNeverShrinksIt) {
  TimeRangeCache cache;
  cache.Fill(1, cache.Version(1), 10, 15, 500);  // A pool's newest range, known to 15.
  cache.Fill(1, cache.Version(1), 10, 19, 500);
  EXPECT_EQ(cache.Find(1, 19), 500);
  cache.Fill(1, cache.Version(1), 10, 12, 500);  // A lookup that went less far.
  EXPECT_EQ(cache.Find(1, 19), 500);
  EXPECT_EQ(cache.size(), 1u);
  cache.Invalidate(1, 17);  // An entry landed inside: the range goes.
  EXPECT_EQ(cache.Find(1, 12), std::nullopt);
}

TEST(TimeRangeCacheTest, InvalidateDropsTheRangeHoldingTheSeq) {
  TimeRangeCache cache;
  cache.Fill(1, cache.Version(1), 10, 19, 500);
  cache.Fill(1, cache.Version(1), 20, 29, 600);
  cache.Invalidate(1, 25);
  EXPECT_EQ(cache.Find(1, 15), 500);
  EXPECT_EQ(cache.Find(1, 25), std::nullopt);
  cache.Invalidate(1, 40);  // Beyond every range: nothing to drop.
  EXPECT_EQ(cache.size(), 1u);
}

TEST(TimeRangeCacheTest, InvalidatePoolDropsOnlyThatPool) {
  TimeRangeCache cache;
  for (uint32_t pool : {1u, 2u, 3u}) {
    cache.Fill(pool, cache.Version(pool), 1, 9, pool * 100);
    cache.Fill(pool, cache.Version(pool), 10, 19, pool * 100 + 1);
  }
  cache.InvalidatePool(2);
  EXPECT_EQ(cache.Find(1, 15), 101);
  EXPECT_EQ(cache.Find(2, 5), std::nullopt);
  EXPECT_EQ(cache.Find(2, 15), std::nullopt);
  EXPECT_EQ(cache.Find(3, 5), 300);
  EXPECT_EQ(cache.size(), 4u);
}

TEST(TimeRangeCacheTest, SizeStaysWithinTheCapacity) {
  TimeRangeCache cache(8);
  for (uint64_t i = 0; i < 100; ++i) {
    cache.Fill(1, cache.Version(1), i * 10, i * 10 + 9, static_cast<int64_t>(i));
    EXPECT_LE(cache.size(), 8u);
  }
  EXPECT_EQ(cache.Find(1, 995), 99);  // The newest fill is kept.
  TimeRangeCache none(0);
  none.Fill(1, none.Version(1), 1, 2, 3);
  EXPECT_EQ(none.size(), 0u);
}

TEST(TimeRangeCacheTest, ForgottenPoolsLeaveNoVersionEntry) {
  TimeRangeCache cache;
  for (uint32_t pool = 1; pool <= 1000; ++pool) {  // Pools created, written, deleted.
    cache.Fill(pool, cache.Version(pool), 1, 9, 500);
    cache.Invalidate(pool, 10);
    cache.Forget(pool);
  }
  EXPECT_EQ(cache.versioned_pools(), 0u);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(TimeRangeCacheTest, AFillFromBeforeAForgetIsDropped) {
  TimeRangeCache cache;
  cache.Invalidate(1, 5);
  const uint64_t invalidated = cache.Version(1);
  const uint64_t never_invalidated = cache.Version(2);
  cache.Forget(1);
  cache.Forget(2);
  cache.Fill(1, invalidated, 10, 19, 500);
  cache.Fill(2, never_invalidated, 10, 19, 500);
  EXPECT_EQ(cache.Find(1, 12), std::nullopt);
  EXPECT_EQ(cache.Find(2, 12), std::nullopt);
  cache.Fill(1, cache.Version(1), 10, 19, 700);  // A snapshot taken after: kept.
  EXPECT_EQ(cache.Find(1, 12), 700);
}

}  // namespace
}  // namespace dictlog::store
