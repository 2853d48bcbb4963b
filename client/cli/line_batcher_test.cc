#include "client/cli/line_batcher.h"

#include <sstream>

#include "gtest/gtest.h"

namespace dictlog::cli {
namespace {

std::vector<std::vector<std::string>> AllBatches(const std::string& text, size_t records,
                                                 size_t bytes, bool keep_cr = false) {
  std::istringstream in(text);
  LineBatcher batcher(in, records, bytes, keep_cr);
  std::vector<std::vector<std::string>> batches;
  std::vector<std::string> batch;
  while (batcher.Next(&batch)) batches.push_back(batch);
  return batches;
}

TEST(LineBatcherTest, KeepCrKeepsEveryByteButTheNewlines) {
  auto batches =
      AllBatches("a\r\n\nb\tc\r\r\n\r\nmid\rdle\nlast-without-newline\r", 10, 1000, true);
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_EQ(batches[0], (std::vector<std::string>{"a\r", "", "b\tc\r\r", "\r", "mid\rdle",
                                                  "last-without-newline\r"}));
}

// Issue 17: loghub's files end lines with CRLF; by default a record does not keep the
// '\r' (only one, and only at the end of a line).
TEST(LineBatcherTest, StripsOneTrailingCrByDefault) {
  auto batches =
      AllBatches("a\r\n\nb\tc\r\r\n\r\nmid\rdle\nlast-without-newline\r", 10, 1000);
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_EQ(batches[0], (std::vector<std::string>{"a", "", "b\tc\r", "", "mid\rdle",
                                                  "last-without-newline"}));
  auto by_bytes = AllBatches("aaa\r\nbbbb\r\n", 100, 7);  // Counted without the '\r'.
  ASSERT_EQ(by_bytes.size(), 1u);
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

// A full batch goes out without reading the next line (which may not be typed yet).
TEST(LineBatcherTest, FullBatchDoesNotReadAhead) {
  std::istringstream in("1\n2\n3\n");
  LineBatcher batcher(in, 2, 1000);
  std::vector<std::string> batch;
  ASSERT_TRUE(batcher.Next(&batch));
  EXPECT_EQ(batch, (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(in.tellg(), 4);
}

TEST(LineBatcherTest, EmptyInputHasNoBatch) { EXPECT_TRUE(AllBatches("", 5, 5).empty()); }

}  // namespace
}  // namespace dictlog::cli
