#include "server/block/batch_blocks.h"

#include <string>
#include <vector>

#include "codec/block_format.h"
#include "codec/record_codec.h"
#include "codec/test_dictionary.h"
#include "gtest/gtest.h"

namespace dictlog::block {
namespace {

std::vector<std::pair<size_t, size_t>> Ranges(const std::vector<PlannedBlock>& blocks) {
  std::vector<std::pair<size_t, size_t>> ranges;
  for (const PlannedBlock& b : blocks) ranges.emplace_back(b.begin, b.end);
  return ranges;
}

// As BlockTail::TakeBlock would take them: oldest first, up to the block size; the
// group the batch does not fill is left for the tail.
TEST(BatchBlocksTest, PlansFullBlocksAndLeavesTheRest) {
  EXPECT_EQ(Ranges(PlanBatchBlocks({400, 400, 300, 100, 500, 600, 200}, 1000)),
            (std::vector<std::pair<size_t, size_t>>{{0, 2}, {2, 5}}));
  // Exactly a block's worth at the end is a block.
  EXPECT_EQ(Ranges(PlanBatchBlocks({500, 500}, 1000)),
            (std::vector<std::pair<size_t, size_t>>{{0, 2}}));
  EXPECT_TRUE(PlanBatchBlocks({300, 300}, 1000).empty());
  EXPECT_TRUE(PlanBatchBlocks({}, 1000).empty());
}

// A record whose payload alone fills a block stays single; a block may span it.
TEST(BatchBlocksTest, RecordsThatFillABlockAloneStaySingle) {
  EXPECT_EQ(Ranges(PlanBatchBlocks({2000, 600, 5000, 300, 300, 400}, 1000)),
            (std::vector<std::pair<size_t, size_t>>{{1, 4}}));
}

TEST(BatchBlocksTest, EncodesTheIndexedContentWithTheDictionary) {
  const std::string content =
      codec::TrainDictionaryForTest(codec::SyntheticLogLines(2000, 1), 4096, 32768);
  absl::StatusOr<std::shared_ptr<const codec::EncoderDictionary>> encoder =
      codec::EncoderDictionary::Create(content, 3);
  ASSERT_TRUE(encoder.ok()) << encoder.status();
  codec::MapDictionaryLookup lookup;
  lookup.Add(*codec::DecoderDictionary::Create(content));
  const std::vector<std::string> lines = codec::SyntheticLogLines(2, 2);
  const std::string big(3000, 'x');
  const std::vector<BatchRecord> records = {{0, lines[0]}, {2, big}, {1, lines[1]}};
  std::string value;
  ASSERT_TRUE(EncodeBatchBlock(records, {0, 3}, 1000, encoder->get(), 3, &value).ok());
  absl::StatusOr<codec::RecordView> view = codec::ParseRecord(value);
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(view->dictionary_id, 32768u);
  absl::StatusOr<codec::DecodedRecord> decoded = codec::DecodeRecord(value, lookup);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  absl::StatusOr<std::vector<codec::IndexedEntry>> entries =
      codec::ParseIndexedBlockContent(decoded->payload, 100);
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), 2u);  // The 3000-byte record is not in it.
  EXPECT_EQ((*entries)[0].seq, 100u);
  EXPECT_EQ((*entries)[0].payload, lines[0]);
  EXPECT_EQ((*entries)[1].seq, 102u);  // Its seq skips the single record's.
  EXPECT_EQ((*entries)[1].category_index, 1u);
  EXPECT_EQ((*entries)[1].payload, lines[1]);
}

}  // namespace
}  // namespace dictlog::block
