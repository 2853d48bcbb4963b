#include "codec/block_format.h"

#include "gtest/gtest.h"
#include "codec/record_codec.h"

namespace dictlog::codec {
namespace {

TEST(BlockFormatTest, RoundTripsPayloadsInOrder) {
  const std::string long_payload(300, 'x');  // Outlives the views below.
  const std::vector<absl::string_view> payloads = {"first", "", long_payload,
                                                   "\x01\x02 binary"};
  const std::string content = EncodeBlockContent(payloads);
  absl::StatusOr<std::vector<absl::string_view>> parsed = ParseBlockContent(content);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, payloads);
}

TEST(BlockFormatTest, EmptyBlockParses) {
  absl::StatusOr<std::vector<absl::string_view>> parsed =
      ParseBlockContent(EncodeBlockContent({}));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(parsed->empty());
}

// Found by tests/fuzz (crashes/block_content): an overlong count (0x98 0x00 for 24)
// parsed like the canonical one, so a corrupt block content could pass as another.
TEST(BlockFormatTest, OverlongVarintIsDataLoss) {
  std::string content = EncodeBlockContent({"a", "b"});
  ASSERT_EQ(content[0], '\x02');
  content.replace(0, 1, "\x82\x00");
  EXPECT_EQ(ParseBlockContent(content).status().code(), absl::StatusCode::kDataLoss);
}

TEST(BlockFormatTest, EveryTruncationAndTrailingByteIsDataLoss) {
  const std::string content = EncodeBlockContent({"alpha", "beta", "gamma"});
  for (size_t n = 0; n < content.size(); ++n) {
    EXPECT_EQ(ParseBlockContent(content.substr(0, n)).status().code(),
              absl::StatusCode::kDataLoss)
        << n;
  }
  EXPECT_EQ(ParseBlockContent(content + "!").status().code(), absl::StatusCode::kDataLoss);
}

TEST(BlockFormatTest, HugeCountIsDataLossWithoutAllocating) {
  const std::string content = "\xff\xff\xff\xff\xff\xff\xff\xff\x7f";  // ~2^63 entries.
  EXPECT_EQ(ParseBlockContent(content).status().code(), absl::StatusCode::kDataLoss);
}

TEST(IndexedBlockFormatTest, RoundTripsSeqsCategoriesAndPayloads) {
  const std::vector<IndexedEntry> entries = {
      {100, 0, "first"}, {101, 2, ""}, {250, 1, "after a gap"}, {251, 0, "\x01 binary"}};
  const std::string content = EncodeIndexedBlockContent(entries);
  absl::StatusOr<std::vector<IndexedEntry>> parsed = ParseIndexedBlockContent(content, 100);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->size(), entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ((*parsed)[i].seq, entries[i].seq);
    EXPECT_EQ((*parsed)[i].category_index, entries[i].category_index);
    EXPECT_EQ((*parsed)[i].payload, entries[i].payload);
  }
}

TEST(IndexedBlockFormatTest, MalformedContentIsDataLoss) {
  const std::string content = EncodeIndexedBlockContent({{7, 0, "alpha"}, {9, 0, "beta"}});
  for (size_t n = 0; n < content.size(); ++n) {
    EXPECT_EQ(ParseIndexedBlockContent(content.substr(0, n), 7).status().code(),
              absl::StatusCode::kDataLoss)
        << n;
  }
  EXPECT_EQ(ParseIndexedBlockContent(content + "!", 7).status().code(),
            absl::StatusCode::kDataLoss);
  // A zero delta after the first entry would give two records one seq.
  const std::string repeated = EncodeIndexedBlockContent({{7, 0, "a"}, {7, 0, "b"}});
  EXPECT_EQ(ParseIndexedBlockContent(repeated, 7).status().code(),
            absl::StatusCode::kDataLoss);
  const std::string huge = "\xff\xff\xff\xff\xff\xff\xff\xff\x7f";
  EXPECT_EQ(ParseIndexedBlockContent(huge, 1).status().code(), absl::StatusCode::kDataLoss);
}

TEST(BlockEntryTest, ParsesBackEntryAndCategory) {
  std::string value;
  ASSERT_TRUE(EncodeBlockEntry(3, 300, 7, &value).ok());
  absl::StatusOr<RecordView> view = ParseRecord(value);
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(view->encoding, Encoding::kBlockEntry);
  EXPECT_EQ(view->category_index, 3u);
  EXPECT_EQ(view->block_back, 300u);
  EXPECT_EQ(view->block_entry, 7u);
  EXPECT_EQ(view->dictionary_id, 0u);
}

TEST(BlockEntryTest, IsSmall) {
  std::string value;
  ASSERT_TRUE(EncodeBlockEntry(0, 40, 40, &value).ok());
  EXPECT_EQ(value.size(), 3u);  // Flags, back, entry.
}

TEST(BlockEntryTest, DoesNotDecodeAloneOrExportAsAFrame) {
  std::string value;
  ASSERT_TRUE(EncodeBlockEntry(0, 1, 1, &value).ok());
  struct NoDictionaries : DictionaryLookup {
    std::shared_ptr<const DecoderDictionary> Find(uint32_t) const override {
      return nullptr;
    }
  } none;
  EXPECT_EQ(DecodeRecord(value, none).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(StandardFrame(value).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(BlockEntryTest, MalformedEntryIsDataLoss) {
  std::string value;
  ASSERT_TRUE(EncodeBlockEntry(0, 1, 1, &value).ok());
  EXPECT_EQ(ParseRecord(value.substr(0, 2)).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(ParseRecord(value + "x").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(ParseRecord("\x03\x01\x01").status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace dictlog::codec
