#include "server/store/synced_mark.h"

#include <filesystem>
#include <fstream>

#include "common/test_dir.h"
#include "gtest/gtest.h"

namespace dictlog::store {
namespace {

class SyncedMarkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir();
    std::filesystem::create_directories(dir_);
  }
  std::string File() const { return dir_ + "/" + SyncedMark::kFileName; }

  std::string dir_;
};

TEST_F(SyncedMarkTest, NoFileIsNoMark) {
  absl::StatusOr<std::optional<uint64_t>> mark = SyncedMark::Read(dir_);
  ASSERT_TRUE(mark.ok()) << mark.status();
  EXPECT_FALSE(mark->has_value());
}

TEST_F(SyncedMarkTest, RaiseKeepsTheLargestSinceConstruction) {
  {
    SyncedMark mark(dir_);
    ASSERT_TRUE(mark.Raise(40).ok());
    ASSERT_TRUE(mark.Raise(30).ok());  // Below: nothing written.
    EXPECT_EQ(**SyncedMark::Read(dir_), 40u);
    ASSERT_TRUE(mark.Raise(41).ok());
    EXPECT_EQ(**SyncedMark::Read(dir_), 41u);
  }
  // A new mark (the next open) replaces the file at its first raise, even lower: the
  // store it belongs to compared the old one already.
  SyncedMark next(dir_);
  EXPECT_EQ(**SyncedMark::Read(dir_), 41u);
  ASSERT_TRUE(next.Raise(7).ok());
  EXPECT_EQ(**SyncedMark::Read(dir_), 7u);
}

TEST_F(SyncedMarkTest, AFileThatDoesNotCheckIsDataLoss) {
  SyncedMark mark(dir_);
  ASSERT_TRUE(mark.Raise(1234).ok());
  {
    std::fstream f(File(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(3);
    f.put('\x7f');
  }
  EXPECT_EQ(SyncedMark::Read(dir_).status().code(), absl::StatusCode::kDataLoss);
  std::filesystem::resize_file(File(), 9);
  EXPECT_EQ(SyncedMark::Read(dir_).status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(SyncedMarkTest, AnUnwritableDirectoryIsUnavailable) {
  SyncedMark mark(dir_ + "/missing");
  EXPECT_EQ(mark.Raise(1).code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace dictlog::store
