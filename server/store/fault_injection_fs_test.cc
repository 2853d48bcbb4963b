#include "server/store/fault_injection_fs.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "common/test_dir.h"
#include "gtest/gtest.h"

namespace dictlog::store {
namespace {

using rocksdb::FileOptions;
using rocksdb::IOOptions;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class FaultInjectionFsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir();
    std::filesystem::create_directories(dir_);
    ASSERT_TRUE(fs_->NewDirectory(dir_, IOOptions(), &directory_, nullptr).ok());
  }

  std::unique_ptr<rocksdb::FSWritableFile> Create(const std::string& name) {
    std::unique_ptr<rocksdb::FSWritableFile> file;
    EXPECT_TRUE(fs_->NewWritableFile(dir_ + "/" + name, FileOptions(), &file, nullptr).ok());
    return file;
  }

  std::string dir_;
  std::shared_ptr<FaultInjectionFs> fs_ = std::make_shared<FaultInjectionFs>();
  std::unique_ptr<rocksdb::FSDirectory> directory_;
};

TEST_F(FaultInjectionFsTest, PowerLossKeepsSyncedBytesOnly) {
  auto file = Create("wal");
  ASSERT_TRUE(file->Append("synced|", IOOptions(), nullptr).ok());
  ASSERT_TRUE(file->Sync(IOOptions(), nullptr).ok());
  ASSERT_TRUE(directory_->Fsync(IOOptions(), nullptr).ok());
  ASSERT_TRUE(file->Append("lost", IOOptions(), nullptr).ok());
  EXPECT_EQ(ReadAll(dir_ + "/wal"), "synced|lost");

  fs_->PowerOff();
  EXPECT_FALSE(file->Append("after", IOOptions(), nullptr).ok());
  EXPECT_FALSE(file->Sync(IOOptions(), nullptr).ok());
  EXPECT_FALSE(fs_->DeleteFile(dir_ + "/wal", IOOptions(), nullptr).ok());
  file.reset();
  FaultInjectionFs::DropStats stats = fs_->RestorePower();
  EXPECT_EQ(stats.bytes_dropped, 4u);
  EXPECT_EQ(ReadAll(dir_ + "/wal"), "synced|");
}

TEST_F(FaultInjectionFsTest, FileCreatedAfterTheLastDirectorySyncIsGone) {
  auto kept = Create("kept");
  ASSERT_TRUE(kept->Append("a", IOOptions(), nullptr).ok());
  ASSERT_TRUE(kept->Sync(IOOptions(), nullptr).ok());
  ASSERT_TRUE(directory_->Fsync(IOOptions(), nullptr).ok());
  auto orphan = Create("orphan");
  ASSERT_TRUE(orphan->Append("b", IOOptions(), nullptr).ok());
  ASSERT_TRUE(orphan->Sync(IOOptions(), nullptr).ok());  // Synced, but not its entry.
  fs_->PowerOff();
  kept.reset();
  orphan.reset();
  EXPECT_EQ(fs_->RestorePower().files_deleted, 1u);
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/kept"));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/orphan"));
}

TEST_F(FaultInjectionFsTest, FullDiskWritesWhatFitsThenFailsWithNoSpace) {
  auto file = Create("f");
  fs_->SetFreeBytes(5);
  rocksdb::IOStatus s = file->Append("0123456789", IOOptions(), nullptr);
  EXPECT_TRUE(s.IsNoSpace()) << s.ToString();
  std::unique_ptr<rocksdb::FSWritableFile> g;
  EXPECT_TRUE(fs_->NewWritableFile(dir_ + "/g", FileOptions(), &g, nullptr).IsNoSpace());
  EXPECT_EQ(fs_->no_space_errors(), 2u);
  fs_->ClearSpaceLimit();
  EXPECT_TRUE(file->Append("ab", IOOptions(), nullptr).ok());
  file.reset();
  EXPECT_EQ(ReadAll(dir_ + "/f"), "01234ab");
}

}  // namespace
}  // namespace dictlog::store
