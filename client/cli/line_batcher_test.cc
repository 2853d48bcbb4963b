#include "client/cli/line_batcher.h"

#include <sstream>

#include "gtest/gtest.h"

namespace dictlog::cli {
namespace {

std::vector<std::vector<std::string>> AllBatches(const std::string& text, size_t records,
                                                 size_t bytes) {
  std::istringstream in(text);
  LineBatcher batcher(in, records, bytes);
  std::vector<std::vector<std::string>> batches;
  std::vector<std::string> batch;
  while (batcher.Next(&batch)) batches.push_back(batch);
  return batches;
}

TEST(LineBatcherTest, KeepsEveryByteButTheNewlines) {
  auto batches = AllBatches("a\r\n\nb\tc\nlast-without-newline", 10, 1000);
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_EQ(batches[0], (std::vector<std::string>{"a\r", "", "b\tc", "last-without-newline"}));
}

TEST(LineBatcherTest, BoundsBatchesByCountAndBytes) {
  auto by_count = AllBatches("1\n2\n3\n4\n5\n", 2, 1000);
  ASSERT_EQ(by_count.size(), 3u);
  EXPECT_EQ(by_count[2], (std::vector<std::string>{"5"}));
  auto by_bytes = AllBatches("aaaa\nbbbb\ncccccccccc\nd\n", 100, 8);
  ASSERT_EQ(by_bytes.size(), 3u);
  EXPECT_EQ(by_bytes[0], (std::vector<std::string>{"aaaa", "bbbb"}));
  EXPECT_EQ(by_bytes[1], (std::vector<std::string>{"cccccccccc"}));  // Alone, oversized.
  EXPECT_EQ(by_bytes[2], (std::vector<std::string>{"d"}));
}

TEST(LineBatcherTest, EmptyInputHasNoBatch) { EXPECT_TRUE(AllBatches("", 5, 5).empty()); }

}  // namespace
}  // namespace dictlog::cli
