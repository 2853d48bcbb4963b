#include "client/grpc_status.h"

#include "gtest/gtest.h"

namespace dictlog::client {
namespace {

TEST(FromGrpcStatusTest, KeepsCodeAndMessage) {
  EXPECT_TRUE(FromGrpcStatus(grpc::Status::OK).ok());
  const absl::Status status =
      FromGrpcStatus(grpc::Status(grpc::StatusCode::DATA_LOSS, "frame 7 is corrupt"));
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(status.message(), "frame 7 is corrupt");
  EXPECT_EQ(FromGrpcStatus(grpc::Status(grpc::StatusCode::UNAVAILABLE, "")).code(),
            absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace dictlog::client
