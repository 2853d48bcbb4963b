#include "codec/batch_decoder.h"

#include <map>
#include <random>

#include "gtest/gtest.h"
#include "codec/test_dictionary.h"

namespace dictlog::codec {
namespace {

using MapLookup = MapDictionaryLookup;

TEST(BatchDecoderTest, MixedDictionariesDecodeInInputOrderWithPerItemErrors) {
  MapLookup lookup;
  std::vector<std::shared_ptr<const EncoderDictionary>> encoders;
  for (uint32_t d = 0; d < 3; ++d) {
    const std::string content =
        TrainDictionaryForTest(SyntheticLogLines(1000, 10 + d), 4096, 40000 + d);
    lookup.Add(*DecoderDictionary::Create(content));
    encoders.push_back(*EncoderDictionary::Create(content, 3));
  }
  const std::string unknown_dict =
      TrainDictionaryForTest(SyntheticLogLines(1000, 20), 4096, 49999);
  auto unknown_encoder = *EncoderDictionary::Create(unknown_dict, 3);

  const std::vector<std::string> payloads = SyntheticLogLines(200, 30);
  std::vector<std::string> values(payloads.size());
  std::mt19937 rng(7);
  for (size_t i = 0; i < payloads.size(); ++i) {
    EncodeOptions options;
    const uint32_t pick = rng() % 5;  // 0-2: a known dictionary, 3: none, 4: unknown.
    if (pick < 3) options.dictionary = encoders[pick].get();
    if (pick == 4) options.dictionary = unknown_encoder.get();
    ASSERT_TRUE(EncodeRecord(payloads[i], options, &values[i]).ok());
  }
  values[17] = std::string(1, '\x02') + "corrupt";
  std::vector<absl::string_view> views(values.begin(), values.end());
  for (const bool group : {true, false}) {
    for (const bool prefetch : {true, false}) {
      auto results = DecodeBatch(views, lookup, {group, prefetch});
      ASSERT_EQ(results.size(), payloads.size());
      for (size_t i = 0; i < payloads.size(); ++i) {
        absl::StatusOr<RecordView> view = ParseRecord(values[i]);
        if (i == 17 || (view.ok() && view->dictionary_id == 49999)) {
          EXPECT_EQ(results[i].status().code(), absl::StatusCode::kDataLoss) << i;
        } else {
          ASSERT_TRUE(results[i].ok()) << i << ": " << results[i].status();
          EXPECT_EQ(results[i]->payload, payloads[i]) << i;
        }
      }
    }
  }
}

TEST(BatchDecoderTest, PrefetchWithADictionaryLargerThanItsTables) {
  // 64 KiB of content: more than a DDict's ~27 KB of tables (a size that once made the
  // prefetch length underflow).
  const std::vector<std::string> lines = SyntheticLogLines(6000, 40);
  const std::string content = TrainDictionaryForTest(lines, 65536, 42000);
  MapLookup lookup;
  lookup.Add(*DecoderDictionary::Create(content));
  auto encoder = *EncoderDictionary::Create(content, 3);
  std::vector<std::string> values(4);
  for (int i = 0; i < 4; ++i) {
    EncodeOptions options;
    if (i % 2 == 0) options.dictionary = encoder.get();  // Two groups: none and 42000.
    ASSERT_TRUE(EncodeRecord(lines[i], options, &values[i]).ok());
  }
  std::vector<absl::string_view> views(values.begin(), values.end());
  auto results = DecodeBatch(views, lookup, {true, true});
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(results[i].ok()) << results[i].status();
    EXPECT_EQ(results[i]->payload, lines[i]);
  }
}

TEST(BatchDecoderTest, EmptyBatch) {
  MapLookup lookup;
  EXPECT_TRUE(DecodeBatch({}, lookup).empty());
}

}  // namespace
}  // namespace dictlog::codec
