#include "benchmarks/compare/record_id.h"

#include "gtest/gtest.h"

namespace dictlog::compare {
namespace {

TEST(RecordIdTest, FormatAndParseRoundTrip) {
  const std::string id = FormatRecordId("HDFS", 42);
  EXPECT_EQ(id, "HDFS/42");
  absl::StatusOr<RecordId> parsed = ParseRecordId(id);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->pool, "HDFS");
  EXPECT_EQ(parsed->seq, 42u);
}

TEST(RecordIdTest, CategoryMayHoldSlashes) {
  absl::StatusOr<RecordId> parsed = ParseRecordId("a/b/7");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->pool, "a/b");
  EXPECT_EQ(parsed->seq, 7u);
}

TEST(RecordIdTest, MalformedIdsAreInvalidArgument) {
  for (const char* id : {"", "HDFS", "HDFS/", "/5", "HDFS/0", "HDFS/-1", "HDFS/+1",
                         "HDFS/1x", "HD FS/1", "HDFS/99999999999999999999999"}) {
    absl::StatusOr<RecordId> parsed = ParseRecordId(id);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << id;
  }
}

// The server's rules: dictlogd rejects a seq with leading zeros, so the comparison
// servers do too (they used to read "HDFS/007" as HDFS/7).
TEST(RecordIdTest, LeadingZerosAreRejectedLikeTheServerDoes) {
  for (const char* id : {"HDFS/007", "HDFS/01", "HDFS/00"}) {
    EXPECT_EQ(ParseRecordId(id).status().code(), absl::StatusCode::kInvalidArgument) << id;
    EXPECT_EQ(pool::ParseRecordId(id).status().code(), absl::StatusCode::kInvalidArgument)
        << id;
  }
}

TEST(RecordIdTest, CategoryRules) {
  EXPECT_TRUE(ValidateCategory("HDFS").ok());
  EXPECT_TRUE(ValidateCategory(std::string(128, 'a')).ok());
  EXPECT_FALSE(ValidateCategory("").ok());
  EXPECT_FALSE(ValidateCategory(std::string(129, 'a')).ok());
  EXPECT_FALSE(ValidateCategory("tab\there").ok());
}

TEST(RecordIdTest, KeysSortByCategoryThenSeq) {
  EXPECT_LT(RecordKey("a", 255), RecordKey("a", 256));
  EXPECT_LT(RecordKey("a", 1), RecordKey("a", 1ull << 40));
  // The 0 separator keeps "a"'s records before "a-b"'s, whatever the seq.
  EXPECT_LT(RecordKey("a", ~0ull), RecordKey("a-b", 1));
  EXPECT_EQ(RecordKey("a", 1).size(), 1u + 1u + 8u);
}

}  // namespace
}  // namespace dictlog::compare
