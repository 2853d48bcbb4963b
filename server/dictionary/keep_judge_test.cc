// KeepJudge: per earlier dictionary, values are kept once kMinValues of them are
// judged and the target stores them, together, at least 1.5x as large.
#include "server/dictionary/keep_judge.h"

#include "gtest/gtest.h"

namespace dictlog::dictionary {
namespace {

TEST(KeepJudgeTest, ADictionaryTheTargetDoublesIsKeptFromItsMinValuesOn) {
  KeepJudge judge;
  for (uint64_t i = 1; i < KeepJudge::kMinValues; ++i) {
    EXPECT_FALSE(judge.Keep(7, 40, 80)) << i;  // Too few judged yet.
  }
  EXPECT_TRUE(judge.Keep(7, 40, 80));
  EXPECT_TRUE(judge.Keep(7, 40, 50));  // Judged together: still 1.5x or more.
}

// A retrained dictionary's few larger records (3x here) among many smaller ones do not
// hold on to the dictionary it replaces.
TEST(KeepJudgeTest, FewMuchLargerValuesAmongSmallerOnesAreNotKept) {
  KeepJudge judge;
  for (int i = 0; i < 200; ++i) {
    const bool larger = i % 10 == 0;
    EXPECT_FALSE(judge.Keep(7, 40, larger ? 120 : 35)) << i;
  }
}

TEST(KeepJudgeTest, BelowOneAndAHalfIsNotKept) {
  KeepJudge judge;
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(judge.Keep(7, 100, 149)) << i;
  KeepJudge exact;
  for (uint64_t i = 1; i < KeepJudge::kMinValues; ++i) exact.Keep(7, 100, 150);
  EXPECT_TRUE(exact.Keep(7, 100, 150));
}

TEST(KeepJudgeTest, EachDictionaryIsJudgedOnItsOwnValues) {
  KeepJudge judge;
  for (uint64_t i = 0; i < KeepJudge::kMinValues; ++i) judge.Keep(7, 40, 120);
  EXPECT_TRUE(judge.Keep(7, 40, 120));
  EXPECT_FALSE(judge.Keep(8, 40, 120));  // Dictionary 8: its first value.
  for (uint64_t i = 0; i < KeepJudge::kMinValues; ++i) judge.Keep(9, 40, 30);
  EXPECT_FALSE(judge.Keep(9, 40, 30));
}

// A dictionary whose values may not be kept (another form) is asked about once and
// never kept; one that may is judged as above.
TEST(KeepJudgeTest, WhetherADictionaryIsKeepableIsAskedOnce) {
  KeepJudge judge;
  int asked = 0;
  for (int i = 0; i < 100; ++i) {
    EXPECT_FALSE(judge.Keep(7, 40, 120, [&] { ++asked; return false; })) << i;
  }
  EXPECT_EQ(asked, 1);
  for (uint64_t i = 1; i < KeepJudge::kMinValues; ++i) {
    judge.Keep(8, 40, 120, [&] { ++asked; return true; });
  }
  EXPECT_TRUE(judge.Keep(8, 40, 120, [&] { ++asked; return true; }));
  EXPECT_EQ(asked, 2);
}

}  // namespace
}  // namespace dictlog::dictionary
