#include "benchmarks/load/call_log.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace dictlog::bench {
namespace {

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

std::string Contents(const std::string& path) {
  std::ifstream in(path);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

TEST(PayloadHashTest, IsFnv1a64InHex) {
  EXPECT_EQ(PayloadHash(""), "cbf29ce484222325");
  EXPECT_EQ(PayloadHash("a"), "af63dc4c8601ec8c");
  EXPECT_NE(PayloadHash("ab"), PayloadHash("ba"));
}

TEST(CallLogTest, WritesAcknowledgedAppendsAndFailedCalls) {
  const std::string acked = TempPath("acked.tsv"), errors = TempPath("errors.csv");
  auto log = CallLog::Open(acked, errors);
  ASSERT_TRUE(log.ok()) << log.status();
  (*log)->Acknowledged("P/65537", "a");
  (*log)->Failed(absl::FromUnixMillis(1700000000123), "get",
                 absl::StatusCode::kUnavailable, "P/1");
  (*log)->Failed(absl::FromUnixMillis(1700000000456), "append",
                 absl::StatusCode::kDeadlineExceeded, "");
  ASSERT_TRUE((*log)->Close().ok());
  EXPECT_EQ(Contents(acked), "P/65537\taf63dc4c8601ec8c\t1\n");
  EXPECT_EQ(Contents(errors),
            "1700000000123,get,UNAVAILABLE,P/1\n1700000000456,append,DEADLINE_EXCEEDED,\n");
}

TEST(CallLogTest, EmptyPathsWriteNothingAndAnUncreatableFileIsRefused) {
  auto none = CallLog::Open("", "");
  ASSERT_TRUE(none.ok());
  (*none)->Acknowledged("P/1", "x");
  EXPECT_TRUE((*none)->Close().ok());
  auto bad = CallLog::Open(TempPath("no/such/dir/acked"), "");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kPermissionDenied);
}

}  // namespace
}  // namespace dictlog::bench
