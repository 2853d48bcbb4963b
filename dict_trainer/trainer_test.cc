#include "dict_trainer/trainer.h"

#include <random>

#include "gtest/gtest.h"
#include "server/codec/dictionary.h"
#include "server/codec/record_codec.h"
#include "server/codec/test_dictionary.h"

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

TEST(TrainerTest, ReservedIdIsInvalidArgument) {
  const auto samples = codec::SyntheticLogLines(3000, 1);
  EXPECT_EQ(TrainDictionary(samples, {8192, 100, 3}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dictlog::trainer
