#include "server/service/read_scope.h"

#include "gtest/gtest.h"

namespace dictlog::service {
namespace {

const auth::Grant kWeb{auth::Role::kReader, {"web*"}, 3};
const auth::Grant kAll{auth::Role::kReader, {}, 4};

v1::Record RecordOf(const std::string& category) {
  v1::Record record;
  record.set_id("pool/1");
  record.set_category(category);
  return record;
}

TEST(ReadScopeTest, ForbiddenAndAbsentLookTheSameToALimitedToken) {
  const absl::StatusOr<v1::Record> forbidden = VisibleRecord(kWeb, "pool/1", RecordOf("db"));
  const absl::StatusOr<v1::Record> no_record =
      VisibleRecord(kWeb, "pool/1", absl::NotFoundError("no record pool/1"));
  const absl::StatusOr<v1::Record> no_pool =
      VisibleRecord(kWeb, "pool/1", absl::NotFoundError("no pool 'pool'"));
  for (const auto& result : {forbidden, no_record, no_pool}) {
    EXPECT_EQ(result.status(), absl::NotFoundError("no record pool/1"));
  }
  EXPECT_TRUE(VisibleRecord(kWeb, "pool/1", RecordOf("web.a")).ok());
  // Other errors concern the caller's input or the server, and pass.
  EXPECT_EQ(VisibleRecord(kWeb, "x", absl::InvalidArgumentError("bad id")).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ReadScopeTest, UnlimitedTokensKeepThePreciseAnswers) {
  EXPECT_EQ(VisibleRecord(kAll, "pool/1", absl::NotFoundError("no pool 'pool'")).status(),
            absl::NotFoundError("no pool 'pool'"));
  EXPECT_TRUE(VisibleRecord(kAll, "pool/1", RecordOf("db")).ok());
  EXPECT_EQ(VisibleScanStatus(kAll, absl::NotFoundError("no pool 'p'")).code(),
            absl::StatusCode::kNotFound);
  EXPECT_TRUE(RequireWholePool(kAll, absl::NotFoundError("no pool")).ok());
}

TEST(ReadScopeTest, ACategoryScanWithoutAPoolIsEmptyToALimitedToken) {
  EXPECT_TRUE(VisibleScanStatus(kWeb, absl::NotFoundError("no pool 'shared'")).ok());
  EXPECT_EQ(VisibleScanStatus(kWeb, absl::DataLossError("x")).code(),
            absl::StatusCode::kDataLoss);
}

TEST(ReadScopeTest, GetFrameNeedsTheWholePool) {
  const std::vector<std::string> web_only = {"web.a", "web"};
  const std::vector<std::string> mixed = {"web.a", "db"};
  EXPECT_TRUE(RequireWholePool(kWeb, web_only).ok());
  const absl::Status partly = RequireWholePool(kWeb, mixed);
  const absl::Status absent = RequireWholePool(kWeb, absl::NotFoundError("no pool 'db'"));
  EXPECT_EQ(partly.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(partly, absent);  // Same answer, naming nothing.
  EXPECT_EQ(partly.message().find("db"), absl::string_view::npos);
  EXPECT_EQ(RequireWholePool(kWeb, absl::InvalidArgumentError("bad id")).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dictlog::service
