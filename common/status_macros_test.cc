#include "common/status_macros.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace dictlog {
namespace {

absl::StatusOr<std::unique_ptr<int>> MakeInt(bool ok) {
  if (!ok) return absl::NotFoundError("no int");
  return std::make_unique<int>(7);
}

absl::StatusOr<int> Twice(bool ok) {
  ASSIGN_OR_RETURN(std::unique_ptr<int> value, MakeInt(ok));
  return *value * 2;
}

absl::Status Check(absl::Status in, int* reached) {
  RETURN_IF_ERROR(in);
  ++*reached;
  return absl::OkStatus();
}

TEST(StatusMacrosTest, AssignOrReturnMovesValue) {
  absl::StatusOr<int> result = Twice(true);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(*result, 14);
}

TEST(StatusMacrosTest, AssignOrReturnPropagatesError) {
  absl::StatusOr<int> result = Twice(false);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(result.status().message(), "no int");
}

TEST(StatusMacrosTest, ReturnIfErrorStopsOnError) {
  int reached = 0;
  EXPECT_TRUE(Check(absl::OkStatus(), &reached).ok());
  EXPECT_EQ(reached, 1);
  EXPECT_EQ(Check(absl::DataLossError("x"), &reached).code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(reached, 1);
}

}  // namespace
}  // namespace dictlog
