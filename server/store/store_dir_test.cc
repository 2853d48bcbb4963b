#include "server/store/store_dir.h"

#include <filesystem>
#include <fstream>
#include <string>

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

}  // namespace
}  // namespace dictlog::store
