#include "server/store/store_dir.h"

#include <rocksdb/status.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "common/test_dir.h"
#include "gtest/gtest.h"

namespace dictlog::store {
namespace {

void Touch(const std::string& path) { ASSERT_TRUE(std::ofstream(path) << "x") << path; }

// A fresh, empty directory (created).
std::string NewDir(const std::string& suffix = "") {
  const std::string dir = FreshTestDir(suffix);
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(StoreDirTest, AMissingOrEmptyDirectoryMayHoldANewStore) {
  const std::string dir = NewDir();
  EXPECT_TRUE(CheckStoreDir(dir + "/not_yet").ok());
  EXPECT_TRUE(CheckStoreDir(dir).ok());
  Touch(dir + "/LOG");  // Not a store's data: RocksDB's info log, other files.
  Touch(dir + "/notes.txt");
  Touch(dir + "/dpkg.log");
  Touch(dir + "/MANIFEST-notes");
  EXPECT_TRUE(CheckStoreDir(dir).ok());
}

TEST(StoreDirTest, AStoreWithItsCurrentFileOpens) {
  const std::string dir = NewDir();
  Touch(dir + "/CURRENT");
  Touch(dir + "/MANIFEST-000005");
  Touch(dir + "/000004.log");
  Touch(dir + "/000007.sst");
  EXPECT_TRUE(CheckStoreDir(dir).ok());
}

TEST(StoreDirTest, AStoreWithoutItsCurrentFileIsDataLossNamingWhatItHolds) {
  for (const char* file : {"000007.sst", "000004.log", "MANIFEST-000005"}) {
    const std::string dir = NewDir(file);
    Touch(dir + "/" + file);
    const absl::Status status = CheckStoreDir(dir);
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << file << ": " << status;
    EXPECT_NE(status.message().find(file), absl::string_view::npos) << status;
    EXPECT_NE(status.message().find("no CURRENT file"), absl::string_view::npos) << status;
  }
}

TEST(StoreDirTest, ManyFilesAreCountedNotAllNamed) {
  const std::string dir = NewDir();
  for (int i = 10; i < 20; ++i) Touch(dir + "/0000" + std::to_string(i) + ".sst");
  const absl::Status status = CheckStoreDir(dir);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(status.message().find("and 7 more"), absl::string_view::npos) << status;
}

// RocksDB 7.8's words for a WAL the MANIFEST lists (store_test has the real refusal).
TEST(StoreDirTest, AMissingOrShortListedLogIsNamedAsDataLoss) {
  const absl::Status missing = OpenRefusal(
      "/data", rocksdb::Status::Corruption("Missing WAL with log number: 61."));
  EXPECT_EQ(missing.code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(missing.message(), "write-ahead log 000061.log")) << missing;
  EXPECT_TRUE(absl::StrContains(missing.message(), "is missing")) << missing;
  EXPECT_TRUE(absl::StrContains(missing.message(), "restore a backup")) << missing;
  const absl::Status shorter = OpenRefusal(
      "/data", rocksdb::Status::Corruption(
                   "Size mismatch: WAL (log number: 1234567) in MANIFEST is 66369 bytes , "
                   "but actually is 3740 bytes on disk."));
  EXPECT_EQ(shorter.code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(shorter.message(), "1234567.log, which")) << shorter;
  EXPECT_TRUE(absl::StrContains(shorter.message(), "shorter than its synced size")) << shorter;
}

TEST(StoreDirTest, OtherRefusalsKeepRocksDbsWordsAndTheirCode) {
  const absl::Status table = OpenRefusal(
      "/data", rocksdb::Status::Corruption("file is too short (1044 bytes) to be an sstable"));
  EXPECT_EQ(table.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(table.message(),
            "opening database at /data: Corruption: file is too short (1044 bytes) to be an "
            "sstable");
  const absl::Status gone = OpenRefusal("/data", rocksdb::Status::PathNotFound("MANIFEST-9"));
  EXPECT_EQ(gone.code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(gone.message(), "a file the store names is missing")) << gone;
  const absl::Status busy = OpenRefusal("/data", rocksdb::Status::IOError("lock held"));
  EXPECT_EQ(busy.code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace dictlog::store
