#include "server/pool/names.h"

#include "gtest/gtest.h"

namespace dictlog::pool {
namespace {

TEST(NamesTest, AcceptsPrintableAsciiUpTo128Bytes) {
  EXPECT_TRUE(ValidateName("HDFS", "category").ok());
  EXPECT_TRUE(ValidateName("app/web-1:prod", "category").ok());
  EXPECT_TRUE(ValidateName(std::string(128, 'x'), "category").ok());
}

TEST(NamesTest, RejectsEmptyLongAndNonPrintable) {
  for (const std::string& bad : {std::string(), std::string(129, 'x'),
                                 std::string("has space"), std::string("tab\t"),
                                 std::string("nul\0x", 5), std::string("caf\xc3\xa9")}) {
    absl::Status status = ValidateName(bad, "category");
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(status.message().find("category"), std::string::npos);
  }
}

TEST(NamesTest, RecordIdsRoundTripAndSplitAtLastSlash) {
  EXPECT_EQ(FormatRecordId("HDFS", 42), "HDFS/42");
  absl::StatusOr<RecordId> id = ParseRecordId("app/web/18446744073709551615");
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(id->pool, "app/web");
  EXPECT_EQ(id->seq, 18446744073709551615ULL);
}

TEST(NamesTest, MalformedIdsAreInvalidArgument) {
  for (const char* bad : {"", "HDFS", "HDFS/", "/5", "HDFS/0", "HDFS/007", "HDFS/-1",
                          "HDFS/+1", "HDFS/1x", "HDFS/18446744073709551616", "a b/1"}) {
    EXPECT_EQ(ParseRecordId(bad).status().code(), absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

// Issue 17: a seq past 2^64-1 is a decimal number without leading zeros; the error
// says it overflows.
TEST(NamesTest, OverflowingSeqSaysItOverflows) {
  for (const char* big : {"HDFS/18446744073709551616", "HDFS/99999999999999999999"}) {
    absl::Status status = ParseRecordId(big).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << big;
    EXPECT_NE(status.message().find("overflows: the largest is 18446744073709551615"),
              std::string::npos)
        << status;
    EXPECT_EQ(status.message().find("leading zeros"), std::string::npos) << status;
  }
  EXPECT_NE(ParseRecordId("HDFS/007").status().message().find("leading zeros"),
            std::string::npos);
}

}  // namespace
}  // namespace dictlog::pool
