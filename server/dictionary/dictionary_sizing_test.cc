#include "server/dictionary/dictionary_sizing.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "codec/test_dictionary.h"

namespace dictlog::dictionary {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(CandidateSizesTest, SmallSamplesGetSmallerSizes) {
  // 16 KiB of records: 2 KiB is the largest size with 5x the sample, then 1 KiB.
  EXPECT_THAT(CandidateSizes(16 << 10, 16 << 10), ElementsAre(2048, 1024));
  EXPECT_THAT(CandidateSizes(32 << 10, 16 << 10), ElementsAre(4096, 2048, 1024));
  EXPECT_THAT(CandidateSizes(64 << 10, 16 << 10), ElementsAre(8192, 4096, 2048));
}

TEST(CandidateSizesTest, LargeSamplesTryTheConfiguredSizeAndTwoHalvings) {
  EXPECT_THAT(CandidateSizes(80 << 10, 16 << 10), ElementsAre(16384, 8192, 4096));
  EXPECT_THAT(CandidateSizes(100 << 20, 16 << 10), ElementsAre(16384, 8192, 4096));
  EXPECT_THAT(CandidateSizes(100 << 20, 1500), ElementsAre(1500));  // Floor 1 KiB.
  EXPECT_THAT(CandidateSizes(100 << 20, 512), ElementsAre(512));    // Below the floor.
}

TEST(CandidatesTest, CoverOnlyOnSmallSamples) {
  const std::vector<Candidate> small = Candidates(32 << 10, 16 << 10);
  ASSERT_EQ(small.size(), 9u);
  EXPECT_EQ(CandidateName(small[0]), "4096/fastcover-d8");
  EXPECT_EQ(CandidateName(small[1]), "4096/fastcover-d6");
  EXPECT_EQ(CandidateName(small[2]), "4096/cover-d8");
  const std::vector<Candidate> large = Candidates(1 << 20, 16 << 10);
  ASSERT_EQ(large.size(), 6u);
  for (const Candidate& c : large) {
    EXPECT_EQ(c.algorithm, trainer::TrainOptions::Algorithm::kFastCover) << CandidateName(c);
  }
}

// kQuick: the first candidate of the full search only (the largest size, fastCover d=8).
TEST(CandidatesTest, QuickSearchIsTheFirstCandidateOnly) {
  for (size_t sample : {size_t{32} << 10, size_t{1} << 20}) {
    const std::vector<Candidate> quick = Candidates(sample, 16 << 10, CandidateSearch::kQuick);
    ASSERT_EQ(quick.size(), 1u);
    EXPECT_EQ(CandidateName(quick[0]), CandidateName(Candidates(sample, 16 << 10)[0]));
  }
  EXPECT_THAT(Candidates(1024, 16 << 10, CandidateSearch::kQuick), IsEmpty());
}

// kLargest (growth after a configured-size winner): every trainer setting of the full
// search at its first (largest) size, none of the halvings.
TEST(CandidatesTest, LargestSearchIsTheFirstSizesSettingsOnly) {
  const std::vector<Candidate> small = Candidates(200 << 10, 16 << 10, CandidateSearch::kLargest);
  ASSERT_EQ(small.size(), 3u);
  EXPECT_EQ(CandidateName(small[0]), "16384/fastcover-d8");
  EXPECT_EQ(CandidateName(small[1]), "16384/fastcover-d6");
  EXPECT_EQ(CandidateName(small[2]), "16384/cover-d8");
  const std::vector<Candidate> large = Candidates(1 << 20, 16 << 10, CandidateSearch::kLargest);
  ASSERT_EQ(large.size(), 2u);
  EXPECT_EQ(CandidateName(large[1]), "16384/fastcover-d6");
  EXPECT_THAT(Candidates(1024, 16 << 10, CandidateSearch::kLargest), IsEmpty());
}

TEST(CandidateSizesTest, TooLittleDataTriesNothing) {
  EXPECT_THAT(CandidateSizes(5 * 1024 - 1, 16 << 10), IsEmpty());
  EXPECT_THAT(CandidateSizes(0, 16 << 10), IsEmpty());
  EXPECT_THAT(CandidateSizes(5 * 1024, 16 << 10), ElementsAre(1024));
}

trainer::TrainOptions Options(size_t bytes) {
  trainer::TrainOptions options;
  options.dictionary_bytes = bytes;
  options.dictionary_id = 40000;
  return options;
}

size_t Bytes(const std::vector<std::string>& records) {
  size_t n = 0;
  for (const std::string& r : records) n += r.size();
  return n;
}

TEST(TrainBestSizeTest, KeepsTheBestHeldOutRatioOfTheSizesTried) {
  const std::vector<std::string> records = codec::SyntheticLogLines(300, 5);
  ASSERT_LT(Bytes(records), 4u * 16384);  // Below what a 16 KiB dictionary needs.
  auto result = TrainBestSize(records, Options(16384), "");
  ASSERT_TRUE(result.ok()) << result.status();
  // Three sizes (4, 2 and 1 KiB for ~40 KB) x fastCover d=8, d=6 and COVER.
  ASSERT_EQ(result->tried.size(), Candidates(Bytes(records), 16384).size());
  ASSERT_EQ(result->tried.size(), 9u);
  ASSERT_EQ(result->ratios.size(), result->tried.size());
  double best = 0;
  for (double r : result->ratios) best = std::max(best, r);
  EXPECT_EQ(result->best.evaluation.candidate_ratio, best);
  EXPECT_EQ(result->ratios[result->best_index], best);
  EXPECT_LE(result->best.dictionary.size(), result->tried[result->best_index].bytes);
  EXPECT_GT(result->best.evaluation.gain, 0);
  EXPECT_GT(result->train_seconds, 0);
}

TEST(TrainBestSizeTest, TooLittleDataIsTheConfiguredSizesError) {
  const std::vector<std::string> records = codec::SyntheticLogLines(20, 6);
  auto result = TrainBestSize(records, Options(16384), "");
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(result.status().message().find("16384-byte dictionary"), std::string::npos)
      << result.status();
}

TEST(TrainBestSizeTest, BadIdIsInvalidArgument) {
  trainer::TrainOptions options = Options(16384);
  options.dictionary_id = 1;
  auto result = TrainBestSize(codec::SyntheticLogLines(300, 7), options, "");
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dictlog::dictionary
