#include "training/trainer.h"

#include <cmath>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "codec/dictionary.h"
#include "codec/record_codec.h"
#include "codec/test_dictionary.h"

namespace dictlog::trainer {
namespace {

TEST(TrainerTest, TrainsADictionaryWithOurIdThatShrinksRecords) {
  const auto samples = codec::SyntheticLogLines(3000, 1);
  absl::StatusOr<std::string> dict = TrainDictionary(samples, {8192, 40000, 3});
  ASSERT_TRUE(dict.ok()) << dict.status();
  EXPECT_LE(dict->size(), 8192u);
  EXPECT_EQ(*codec::DictionaryIdOf(*dict), 40000u);
  auto encoder = codec::EncoderDictionary::Create(*dict, 3);
  ASSERT_TRUE(encoder.ok());
  size_t with = 0, without = 0;
  for (const std::string& line : codec::SyntheticLogLines(300, 2)) {
    std::string a, b;
    codec::EncodeOptions options;
    options.dictionary = encoder->get();
    ASSERT_TRUE(codec::EncodeRecord(line, options, &a).ok());
    ASSERT_TRUE(codec::EncodeRecord(line, {}, &b).ok());
    with += a.size();
    without += b.size();
  }
  EXPECT_LT(with * 2, without) << "a trained dictionary should halve these records";
}

TEST(TrainerTest, TooFewRecordsIsFailedPreconditionSayingHowMany) {
  const auto samples = codec::SyntheticLogLines(4, 1);
  absl::Status status = TrainDictionary(samples, {4096, 40000, 3}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("at least 5 records"), std::string::npos) << status;
}

TEST(TrainerTest, TooFewBytesIsFailedPrecondition) {
  const auto samples = codec::SyntheticLogLines(300, 1);  // ~40 KB for a 16 KB dict.
  absl::Status status = TrainDictionary(samples, {16384, 40000, 3}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("bytes of records"), std::string::npos) << status;
}

// Issue 20: the alternatives TrainBestSize compares, each a working dictionary.
TEST(TrainerTest, CoverAndFastCoverWithDSixTrainWorkingDictionaries) {
  const auto samples = codec::SyntheticLogLines(1000, 1);
  for (const auto& [algorithm, d] :
       {std::pair{TrainOptions::Algorithm::kCover, 8u},
        std::pair{TrainOptions::Algorithm::kCover, 6u},
        std::pair{TrainOptions::Algorithm::kFastCover, 6u}}) {
    TrainOptions options{4096, 40000, 3};
    options.algorithm = algorithm;
    options.d = d;
    absl::StatusOr<std::string> dict = TrainDictionary(samples, options);
    ASSERT_TRUE(dict.ok()) << dict.status();
    EXPECT_LE(dict->size(), 4096u);
    EXPECT_EQ(*codec::DictionaryIdOf(*dict), 40000u);
    EXPECT_TRUE(codec::EncoderDictionary::Create(*dict, 3).ok());
  }
}

// zstd 1.5.4's COVER sorts with its context in a global: trainings on several threads
// at once crashed dictlogd (segfault in COVER_strict_cmp8) or trained on each other's
// samples. Each thread's dictionaries must equal that corpus's trained alone.
TEST(TrainerTest, CoverTrainingsOnSeveralThreadsAtOnceEqualTheirSoloResults) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 3;
  TrainOptions options{4096, 40000, 3};
  options.algorithm = TrainOptions::Algorithm::kCover;
  std::vector<std::vector<std::string>> corpora;
  std::vector<std::string> alone;
  for (int t = 0; t < kThreads; ++t) {
    corpora.push_back(codec::SyntheticLogLines(1500, 10 + t));
    absl::StatusOr<std::string> dict = TrainDictionary(corpora.back(), options);
    ASSERT_TRUE(dict.ok()) << dict.status();
    alone.push_back(*std::move(dict));
  }
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round) {
        absl::StatusOr<std::string> dict = TrainDictionary(corpora[t], options);
        if (!dict.ok() || *dict != alone[t]) ++mismatches[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

TEST(TrainerTest, UnsupportedDIsInvalidArgument) {
  TrainOptions options{4096, 40000, 3};
  options.d = 7;
  EXPECT_EQ(TrainDictionary(codec::SyntheticLogLines(1000, 1), options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TrainerTest, ReservedIdIsInvalidArgument) {
  const auto samples = codec::SyntheticLogLines(3000, 1);
  EXPECT_EQ(TrainDictionary(samples, {8192, 100, 3}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// `count` records of 100-200 uniformly random bytes: zstd cannot shrink them.
std::vector<std::string> RandomRecords(int count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::string> records;
  for (int i = 0; i < count; ++i) {
    std::string record(100 + rng() % 101, '\0');
    for (char& c : record) c = static_cast<char>(rng());
    records.push_back(std::move(record));
  }
  return records;
}

// `lines` log lines with random records mixed in at random places (about one record in
// five); *noise_in_training counts the random ones TrainAndEvaluate trains on (those
// not at a held-out position: every 10th).
std::vector<std::string> LinesWithNoise(int lines, uint32_t seed,
                                        size_t* noise_in_training = nullptr) {
  std::mt19937 rng(seed);
  const auto log = codec::SyntheticLogLines(lines, seed);
  const auto noise = RandomRecords(lines / 4, seed);
  std::vector<std::string> records;
  size_t next_noise = 0, training_noise = 0;
  for (const std::string& line : log) {
    records.push_back(line);
    if (rng() % 4 != 0 || next_noise == noise.size()) continue;
    if (records.size() % 10 != 9) ++training_noise;
    records.push_back(noise[next_noise++]);
  }
  if (noise_in_training != nullptr) *noise_in_training = training_noise;
  return records;
}

TEST(TrainAndEvaluateTest, HoldsOutEveryTenthRecordAndBeatsNoDictionary) {
  absl::StatusOr<TrainResult> result =
      TrainAndEvaluate(codec::SyntheticLogLines(3000, 1), {8192, 40000, 3}, "");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*codec::DictionaryIdOf(result->dictionary), 40000u);
  EXPECT_LE(result->dictionary.size(), 8192u);
  EXPECT_EQ(result->evaluation.records, 300u);
  EXPECT_EQ(result->samples_used + result->samples_excluded, 2700u);
  EXPECT_GT(result->evaluation.gain, 0.5);
  EXPECT_GT(result->train_seconds, 0);
}

TEST(TrainAndEvaluateTest, ExcludesRecordsThatDoNotShrinkAndStillHelps) {
  size_t noise_in_training = 0;
  const auto records = LinesWithNoise(4000, 2, &noise_in_training);
  ASSERT_GT(noise_in_training, 500u);
  absl::StatusOr<TrainResult> result = TrainAndEvaluate(records, {8192, 40001, 3}, "");
  ASSERT_TRUE(result.ok()) << result.status();
  const size_t training = records.size() - records.size() / 10;
  EXPECT_EQ(result->samples_used + result->samples_excluded, training);
  EXPECT_GT(result->samples_excluded, 0u);
  EXPECT_LE(result->samples_excluded, noise_in_training)
      << "only random records should be excluded";
  EXPECT_EQ(*codec::DictionaryIdOf(result->dictionary), 40001u);
  EXPECT_GT(result->evaluation.gain, 0.3) << "the dictionary should still help";
}

TEST(TrainAndEvaluateTest, TooLittleDataIsFailedPreconditionSayingHowMuch) {
  absl::Status status =
      TrainAndEvaluate(codec::SyntheticLogLines(300, 1), {16384, 40000, 3}, "").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("needs at least 65536 bytes"), std::string::npos)
      << status;
  EXPECT_NE(status.message().find("held out"), std::string::npos) << status;

  status = TrainAndEvaluate(codec::SyntheticLogLines(5, 1), {256, 40000, 3}, "").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("at least 5 records"), std::string::npos) << status;

  EXPECT_EQ(TrainAndEvaluate({}, {256, 40000, 3}, "").status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(TrainAndEvaluateTest, TooFewLeftAfterExcludingIsFailedPrecondition) {
  // Enough bytes in all for a first 4 KB dictionary, but the log lines alone (~6 KB)
  // are fewer than the 16 KB a second one needs.
  std::vector<std::string> records = RandomRecords(300, 3);
  for (const std::string& line : codec::SyntheticLogLines(50, 3)) records.push_back(line);
  absl::Status status = TrainAndEvaluate(records, {4096, 40000, 3}, "").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("do not shrink"), std::string::npos) << status;
}

TEST(TrainAndEvaluateTest, ReportsProgressStagesInOrder) {
  std::vector<std::string> stages;
  bool fractions_in_range = true;
  const Progress progress = [&](absl::string_view stage, double fraction) {
    if (stages.empty() || stages.back() != stage) stages.emplace_back(stage);
    fractions_in_range &= fraction >= 0 && fraction <= 1;
  };
  ASSERT_TRUE(
      TrainAndEvaluate(LinesWithNoise(3000, 4), {8192, 40000, 3}, "", progress).ok());
  EXPECT_EQ(stages, (std::vector<std::string>{"split", "train", "filter", "retrain",
                                              "evaluate"}));
  EXPECT_TRUE(fractions_in_range);
}

TEST(TrainAndEvaluateTest, AgainstItsOwnKindOfBaselineGainIsSmall) {
  const std::string baseline =
      codec::TrainDictionaryForTest(codec::SyntheticLogLines(3000, 5), 8192, 40005);
  absl::StatusOr<TrainResult> result =
      TrainAndEvaluate(codec::SyntheticLogLines(3000, 6), {8192, 40006, 3}, baseline);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_GT(result->evaluation.baseline_ratio, 1.5) << "the baseline is a good one";
  EXPECT_LT(std::abs(result->evaluation.gain), 0.2);
}

TEST(TrainAndEvaluateTest, GarbageBaselineIsInvalidArgumentBeforeTraining) {
  bool trained = false;
  const Progress progress = [&](absl::string_view stage, double) {
    trained |= stage == "train";
  };
  absl::Status status = TrainAndEvaluate(codec::SyntheticLogLines(3000, 1),
                                         {8192, 40000, 3}, "garbage", progress)
                            .status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(trained);
}

}  // namespace
}  // namespace dictlog::trainer
