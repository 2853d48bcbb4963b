#include "training/evaluate.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "codec/dictionary.h"
#include "codec/record_codec.h"
#include "codec/test_dictionary.h"

namespace dictlog::trainer {
namespace {

// A dictionary trained on other lines than those evaluated.
const std::string& TrainedDictionary() {
  static const std::string* const dictionary = new std::string(
      codec::TrainDictionaryForTest(codec::SyntheticLogLines(3000, 1), 8192, 40000));
  return *dictionary;
}

uint64_t StoredBytes(const std::vector<std::string>& records,
                     const std::string& dictionary, int level) {
  std::shared_ptr<const codec::EncoderDictionary> encoder;
  if (!dictionary.empty()) encoder = *codec::EncoderDictionary::Create(dictionary, level);
  codec::EncodeOptions options;
  options.compression_level = level;
  options.dictionary = encoder.get();
  uint64_t bytes = 0;
  for (const std::string& record : records) {
    std::string stored;
    EXPECT_TRUE(codec::EncodeRecord(record, options, &stored).ok());
    bytes += stored.size();
  }
  return bytes;
}

TEST(EvaluateTest, RatiosAndGainComeFromStoredSizes) {
  const auto records = codec::SyntheticLogLines(500, 7);
  absl::StatusOr<Evaluation> evaluation = Evaluate(records, TrainedDictionary(), "", 3);
  ASSERT_TRUE(evaluation.ok()) << evaluation.status();
  uint64_t raw = 0;
  for (const std::string& record : records) raw += record.size();
  EXPECT_EQ(evaluation->records, 500u);
  EXPECT_EQ(evaluation->raw_bytes, raw);
  EXPECT_EQ(evaluation->candidate_bytes, StoredBytes(records, TrainedDictionary(), 3));
  EXPECT_EQ(evaluation->baseline_bytes, StoredBytes(records, "", 3));
  EXPECT_DOUBLE_EQ(evaluation->candidate_ratio,
                   static_cast<double>(raw) / evaluation->candidate_bytes);
  EXPECT_DOUBLE_EQ(evaluation->baseline_ratio,
                   static_cast<double>(raw) / evaluation->baseline_bytes);
  EXPECT_DOUBLE_EQ(evaluation->gain,
                   evaluation->candidate_ratio / evaluation->baseline_ratio - 1);
  EXPECT_GT(evaluation->compress_mb_per_s, 0);
  EXPECT_GT(evaluation->decompress_mb_per_s, 0);
}

TEST(EvaluateTest, TrainedDictionaryHasPositiveGainOverNone) {
  absl::StatusOr<Evaluation> evaluation =
      Evaluate(codec::SyntheticLogLines(300, 2), TrainedDictionary(), "", 3);
  ASSERT_TRUE(evaluation.ok()) << evaluation.status();
  EXPECT_GT(evaluation->gain, 0.5) << "a trained dictionary should beat none by far";
}

TEST(EvaluateTest, SameDictionaryAsBaselineHasNoGain) {
  const std::string& dictionary = TrainedDictionary();
  absl::StatusOr<Evaluation> evaluation =
      Evaluate(codec::SyntheticLogLines(100, 3), dictionary, dictionary, 3);
  ASSERT_TRUE(evaluation.ok()) << evaluation.status();
  EXPECT_EQ(evaluation->candidate_bytes, evaluation->baseline_bytes);
  EXPECT_EQ(evaluation->gain, 0);
}

TEST(EvaluateTest, NoCandidateAgainstATrainedBaselineHasNegativeGain) {
  absl::StatusOr<Evaluation> evaluation =
      Evaluate(codec::SyntheticLogLines(100, 4), "", TrainedDictionary(), 3);
  ASSERT_TRUE(evaluation.ok()) << evaluation.status();
  EXPECT_LT(evaluation->gain, 0);
}

TEST(EvaluateTest, EmptyRecordsHaveRatioOne) {
  absl::StatusOr<Evaluation> evaluation = Evaluate({"", ""}, TrainedDictionary(), "", 3);
  ASSERT_TRUE(evaluation.ok()) << evaluation.status();
  EXPECT_EQ(evaluation->raw_bytes, 0u);
  EXPECT_EQ(evaluation->candidate_ratio, 1);
  EXPECT_EQ(evaluation->gain, 0);
}

TEST(EvaluateTest, NoRecordsIsInvalidArgument) {
  EXPECT_EQ(Evaluate({}, TrainedDictionary(), "", 3).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(EvaluateTest, GarbageBaselineIsInvalidArgument) {
  absl::Status status =
      Evaluate(codec::SyntheticLogLines(10, 5), TrainedDictionary(), "not a dict", 3)
          .status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("baseline"), std::string::npos) << status;
}

TEST(EvaluateTest, GarbageCandidateIsInvalidArgument) {
  absl::Status status =
      Evaluate(codec::SyntheticLogLines(10, 5), std::string(1000, 'x'), "", 3).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("candidate"), std::string::npos) << status;
}

}  // namespace
}  // namespace dictlog::trainer
