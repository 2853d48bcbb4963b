#include "server/store/rocksdb_status.h"

#include <rocksdb/status.h>

#include "gtest/gtest.h"

namespace dictlog::store {
namespace {

TEST(FromRocksTest, OkIsOk) { EXPECT_TRUE(FromRocks(rocksdb::Status::OK(), "x").ok()); }

TEST(FromRocksTest, EachRocksDbStatusGetsItsMostSpecificCode) {
  const struct {
    rocksdb::Status from;
    absl::StatusCode to;
  } cases[] = {
      {rocksdb::Status::NotFound("k"), absl::StatusCode::kNotFound},
      {rocksdb::Status::Corruption("bad block"), absl::StatusCode::kDataLoss},
      {rocksdb::Status::NoSpace("disk"), absl::StatusCode::kResourceExhausted},
      {rocksdb::Status::MemoryLimit("mem"), absl::StatusCode::kResourceExhausted},
      {rocksdb::Status::Busy("busy"), absl::StatusCode::kUnavailable},
      {rocksdb::Status::TryAgain("again"), absl::StatusCode::kUnavailable},
      {rocksdb::Status::TimedOut("slow"), absl::StatusCode::kUnavailable},
      {rocksdb::Status::IOError("eio"), absl::StatusCode::kUnavailable},
      {rocksdb::Status::InvalidArgument("exists"), absl::StatusCode::kInvalidArgument},
      {rocksdb::Status::NotSupported("no"), absl::StatusCode::kInternal},
  };
  for (const auto& c : cases) {
    const absl::Status status = FromRocks(c.from, "reading x");
    EXPECT_EQ(status.code(), c.to) << c.from.ToString();
    EXPECT_NE(status.message().find("reading x: "), absl::string_view::npos) << status;
  }
}

}  // namespace
}  // namespace dictlog::store
