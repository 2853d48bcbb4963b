#include "codec/dictionary_format.h"

#include <string>

#include "gtest/gtest.h"
#include "codec/test_dictionary.h"

namespace dictlog::codec {
namespace {

std::string TrainedDictionary() {
  return codec::TrainDictionaryForTest(codec::SyntheticLogLines(2000, 7), 8 << 10, 40001);
}

FseTable RoundTrip(const FseTable& table, int max_symbol, int max_log) {
  std::string bytes;
  EXPECT_TRUE(WriteFseTable(table, &bytes).ok());
  size_t used = 0;
  absl::StatusOr<FseTable> back = ReadFseTable(bytes, max_symbol, max_log, &used);
  EXPECT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(used, bytes.size());
  return back.ok() ? *back : FseTable{};
}

TEST(DictionaryFormatTest, ParseThenSerializeGivesTheSameBytes) {
  const std::string dict = TrainedDictionary();
  absl::StatusOr<DictionaryParts> parts = ParseDictionary(dict);
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_EQ(parts->id, 40001u);
  EXPECT_GE(parts->literal_lengths.accuracy_log, kMinAccuracyLog);
  EXPECT_FALSE(parts->content.empty());
  absl::StatusOr<std::string> again = SerializeDictionary(*parts);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, dict);
}

TEST(DictionaryFormatTest, FseTablesRoundTripWithZeroRunsAndLowProbabilities) {
  FseTable table;
  table.accuracy_log = 6;
  // 64 cells: zero runs of 1, 3, 4 and 8 symbols, "-1" counts, and a big symbol.
  table.counts = {20, 0, 10, 0, 0, 0, -1, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 24, -1};
  const FseTable back = RoundTrip(table, 35, 9);
  EXPECT_EQ(back.accuracy_log, 6);
  EXPECT_EQ(back.counts, table.counts);
}

TEST(DictionaryFormatTest, FseTableAtEveryAccuracyLogRoundTrips) {
  for (int log = kMinAccuracyLog; log <= kMaxMatchLengthLog; ++log) {
    FseTable table;
    table.accuracy_log = log;
    int left = 1 << log;
    for (int s = 0; s <= kMaxMatchLengthSymbol && left > 0; ++s) {
      const int c = std::max(1, std::min(left, (1 << log) / (s + 2)));
      table.counts.push_back(static_cast<int16_t>(c));
      left -= c;
    }
    table.counts.back() = static_cast<int16_t>(table.counts.back() + left);
    EXPECT_EQ(RoundTrip(table, kMaxMatchLengthSymbol, kMaxMatchLengthLog).counts,
              table.counts)
        << "log " << log;
  }
}

TEST(DictionaryFormatTest, WriteRejectsCountsThatDoNotFillTheTable) {
  std::string out;
  EXPECT_TRUE(absl::IsInvalidArgument(WriteFseTable({6, {30, 30}}, &out)));
  EXPECT_TRUE(absl::IsInvalidArgument(WriteFseTable({4, {8, 8}}, &out)));
  EXPECT_TRUE(out.empty());
}

TEST(DictionaryFormatTest, ReadRejectsALogAboveTheTablesMaximum) {
  std::string bytes;
  ASSERT_TRUE(WriteFseTable({9, {256, 256}}, &bytes).ok());
  size_t used = 0;
  EXPECT_TRUE(absl::IsDataLoss(ReadFseTable(bytes, kMaxOffsetSymbol, kMaxOffsetLog, &used).status()));
}

TEST(DictionaryFormatTest, ReadRejectsASymbolBeyondTheMaximum) {
  FseTable table{5, {}};
  table.counts.assign(32, 1);  // Symbols 0..31; offsets allow them, literal lengths too.
  std::string bytes;
  ASSERT_TRUE(WriteFseTable(table, &bytes).ok());
  size_t used = 0;
  EXPECT_TRUE(ReadFseTable(bytes, 31, 8, &used).ok());
  EXPECT_TRUE(absl::IsDataLoss(ReadFseTable(bytes, 30, 8, &used).status()));
}

TEST(DictionaryFormatTest, EveryTruncationIsDataLossNeverACrash) {
  const std::string dict = TrainedDictionary();
  absl::StatusOr<DictionaryParts> parts = ParseDictionary(dict);
  ASSERT_TRUE(parts.ok());
  const size_t header = dict.size() - parts->content.size();
  for (size_t n = 0; n < header; ++n) {
    EXPECT_TRUE(absl::IsDataLoss(ParseDictionary(dict.substr(0, n)).status())) << n;
  }
}

TEST(DictionaryFormatTest, RejectsWrongMagicAndRepeatOffsetsBeyondTheContent) {
  std::string dict = TrainedDictionary();
  std::string bad_magic = dict;
  bad_magic[0] ^= 1;
  EXPECT_TRUE(absl::IsDataLoss(ParseDictionary(bad_magic).status()));
  absl::StatusOr<DictionaryParts> parts = ParseDictionary(dict);
  ASSERT_TRUE(parts.ok());
  parts->repeat_offsets[1] = static_cast<uint32_t>(parts->content.size() + 1);
  absl::StatusOr<std::string> bad_rep = SerializeDictionary(*parts);
  ASSERT_TRUE(bad_rep.ok());
  absl::Status status = ParseDictionary(*bad_rep).status();
  EXPECT_TRUE(absl::IsDataLoss(status));
  EXPECT_NE(status.message().find("repeat offset"), std::string::npos) << status;
}

}  // namespace
}  // namespace dictlog::codec
