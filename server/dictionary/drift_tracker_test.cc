#include "server/dictionary/drift_tracker.h"

#include "gtest/gtest.h"

namespace dictlog::dictionary {
namespace {

constexpr uint32_t kPool = 1;
constexpr uint32_t kDict = 32768;

TEST(DriftTrackerTest, EmptyUntilAppendsWithTheActiveDictionary) {
  DriftTracker tracker(1000);
  EXPECT_EQ(tracker.Signal(kPool, kDict, 3.0).dictionary_id, 0u);
  // After a restart nothing is measured yet, but the ratio to compare with is known.
  EXPECT_DOUBLE_EQ(tracker.Signal(kPool, kDict, 3.0).activation_ratio, 3.0);
  EXPECT_FALSE(tracker.Signal(kPool, kDict, 3.0).full);
  tracker.Record(kPool, 0, 400, 400);  // No dictionary: not tracked.
  EXPECT_EQ(tracker.Signal(kPool, kDict, 3.0).recent_raw_bytes, 0u);
  tracker.Record(kPool, kDict, 300, 100);
  const DriftSignal signal = tracker.Signal(kPool, kDict, 3.0);
  EXPECT_EQ(signal.dictionary_id, kDict);
  EXPECT_EQ(signal.recent_raw_bytes, 300u);
  EXPECT_DOUBLE_EQ(signal.recent_ratio, 3.0);
  EXPECT_FALSE(signal.full);  // Less than half the window.
  EXPECT_EQ(signal.degraded_percent, 0);
  // Another active dictionary: the window measured the old one.
  EXPECT_EQ(tracker.Signal(kPool, kDict + 1, 3.0).dictionary_id, 0u);
}

// The first window fell 20% short of the evaluation: the reference comes down by 10%
// only (kFirstWindowShortfall), and the window is degraded against that.
TEST(DriftTrackerTest, DegradedPercentAgainstTheEvaluationLessTheShortfall) {
  DriftTracker tracker(1000);
  for (int i = 0; i < 5; ++i) tracker.Record(kPool, kDict, 100, 50);  // 2x, 500 bytes.
  DriftSignal signal = tracker.Signal(kPool, kDict, 2.5);
  ASSERT_TRUE(signal.full);
  EXPECT_DOUBLE_EQ(signal.recent_ratio, 2.0);
  EXPECT_DOUBLE_EQ(signal.first_window_ratio, 2.0);
  EXPECT_DOUBLE_EQ(signal.activation_ratio, 2.25);
  EXPECT_NEAR(signal.degraded_percent, 100 * (1 - 2.0 / 2.25), 1e-9);
  // Better than evaluated: negative, against the evaluation.
  EXPECT_NEAR(tracker.Signal(kPool, kDict, 1.6).degraded_percent, -25.0, 1e-9);
}

// A first window a little below the evaluation (held-out records overstate new ones)
// is the reference: the same ratio later is no drift; 10% below it is.
TEST(DriftTrackerTest, FirstWindowWithinTheShortfallIsTheReference) {
  DriftTracker tracker(1000);
  for (int i = 0; i < 5; ++i) tracker.Record(kPool, kDict, 100, 50);  // 2x.
  for (int i = 0; i < 5; ++i) tracker.Record(kPool, kDict, 100, 50);
  DriftSignal signal = tracker.Signal(kPool, kDict, 2.1);
  EXPECT_DOUBLE_EQ(signal.activation_ratio, 2.0);
  EXPECT_NEAR(signal.degraded_percent, 0, 1e-9);
  for (int i = 0; i < 20; ++i) tracker.Record(kPool, kDict, 100, 60);  // 1.67x.
  signal = tracker.Signal(kPool, kDict, 2.1);
  EXPECT_DOUBLE_EQ(signal.activation_ratio, 2.0);
  EXPECT_NEAR(signal.recent_ratio, 100.0 / 60, 1e-9);
  EXPECT_NEAR(signal.degraded_percent, 100 * (1 - (100.0 / 60) / 2.0), 1e-9);
}

TEST(DriftTrackerTest, ReferenceRatio) {
  EXPECT_DOUBLE_EQ(DriftTracker::ReferenceRatio(3.0, 0), 3.0);   // No window yet.
  EXPECT_DOUBLE_EQ(DriftTracker::ReferenceRatio(0, 2.0), 2.0);   // No evaluation.
  EXPECT_DOUBLE_EQ(DriftTracker::ReferenceRatio(3.0, 3.5), 3.0); // Better: the evaluation.
  EXPECT_DOUBLE_EQ(DriftTracker::ReferenceRatio(3.0, 2.8), 2.8);
  EXPECT_DOUBLE_EQ(DriftTracker::ReferenceRatio(3.0, 1.5), 2.7); // At most 10% lower.
}

TEST(DriftTrackerTest, WindowForgetsOldAppends) {
  DriftTracker tracker(1000);
  for (int i = 0; i < 10; ++i) tracker.Record(kPool, kDict, 100, 25);  // 4x.
  EXPECT_DOUBLE_EQ(tracker.Signal(kPool, kDict, 4.0).recent_ratio, 4.0);
  // The data changes: after a whole window of 2x appends, only they count.
  for (int i = 0; i < 10; ++i) tracker.Record(kPool, kDict, 100, 50);
  const DriftSignal signal = tracker.Signal(kPool, kDict, 4.0);
  EXPECT_DOUBLE_EQ(signal.recent_ratio, 2.0);
  EXPECT_NEAR(signal.degraded_percent, 50.0, 1e-9);
  EXPECT_LE(signal.recent_raw_bytes, 1000u);
  EXPECT_EQ(signal.newer_raw_bytes, 0u);  // The newer half has just become the older.
  tracker.Record(kPool, kDict, 100, 50);
  EXPECT_EQ(tracker.Signal(kPool, kDict, 4.0).newer_raw_bytes, 100u);
}

// One append of many windows' bytes (a large batch) counts as half a window: the
// next half window of appends weighs as much.
TEST(DriftTrackerTest, LargeAppendDoesNotOutweighLaterOnes) {
  DriftTracker tracker(1000);
  tracker.Record(kPool, kDict, 100000, 25000);  // 4x.
  for (int i = 0; i < 4; ++i) tracker.Record(kPool, kDict, 100, 100);  // 1x.
  const DriftSignal signal = tracker.Signal(kPool, kDict, 4.0);
  EXPECT_EQ(signal.recent_raw_bytes, 900u);
  EXPECT_EQ(signal.newer_raw_bytes, 400u);
  EXPECT_NEAR(signal.recent_ratio, 900.0 / (125 + 400), 1e-9);
  EXPECT_DOUBLE_EQ(signal.older_ratio, 4.0);
  EXPECT_EQ(signal.older_span_bytes, 100000u);
  EXPECT_GT(signal.degraded_percent, 50);
}

TEST(DriftTrackerTest, WithoutEvaluationTheFirstFullWindowIsTheReference) {
  DriftTracker tracker(1000);
  for (int i = 0; i < 5; ++i) tracker.Record(kPool, kDict, 100, 25);  // 4x.
  EXPECT_DOUBLE_EQ(tracker.Signal(kPool, kDict, 0).activation_ratio, 4.0);
  for (int i = 0; i < 10; ++i) tracker.Record(kPool, kDict, 100, 40);  // 2.5x.
  EXPECT_NEAR(tracker.Signal(kPool, kDict, 0).degraded_percent, 37.5, 1e-9);
}

TEST(DriftTrackerTest, NewDictionaryOrResetStartsAgain) {
  DriftTracker tracker(1000);
  for (int i = 0; i < 10; ++i) tracker.Record(kPool, kDict, 100, 50);
  tracker.Record(kPool, kDict + 1, 100, 20);
  const DriftSignal signal = tracker.Signal(kPool, kDict + 1, 5.0);
  EXPECT_EQ(signal.recent_raw_bytes, 100u);
  EXPECT_FALSE(signal.full);
  tracker.Reset(kPool);
  EXPECT_EQ(tracker.Signal(kPool, kDict + 1, 5.0).dictionary_id, 0u);
  // Pools are separate.
  tracker.Record(kPool + 1, kDict, 100, 50);
  EXPECT_EQ(tracker.Signal(kPool, kDict, 5.0).dictionary_id, 0u);
}

}  // namespace
}  // namespace dictlog::dictionary
