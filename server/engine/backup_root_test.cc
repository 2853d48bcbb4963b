// ConfineBackupDir over a real directory tree with symbolic links.
#include "server/engine/backup_root.h"

#include <filesystem>
#include <fstream>

#include "common/test_dir.h"
#include "gtest/gtest.h"

namespace dictlog::engine {
namespace {

namespace fs = std::filesystem;
using ::absl::StatusCode;

class BackupRootTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = FreshTestDir();
    fs::create_directories(base_);
    base_ = fs::canonical(base_).string();
    root_ = base_ + "/backups";
    fs::create_directories(root_ + "/nightly");
    fs::create_directories(base_ + "/elsewhere");
  }

  StatusCode Code(const std::string& dir, const std::string& root = "") {
    return ConfineBackupDir(root.empty() ? root_ : root, dir).status().code();
  }

  std::string base_, root_;
};

TEST_F(BackupRootTest, AcceptsNewDirectoriesInsideTheRoot) {
  EXPECT_EQ(*ConfineBackupDir(root_, root_ + "/today"), root_ + "/today");
  EXPECT_EQ(*ConfineBackupDir(root_, root_ + "/nightly/today/"), root_ + "/nightly/today");
  EXPECT_EQ(*ConfineBackupDir(root_ + "/", root_ + "/x/../today"), root_ + "/today");
  // A root given through a symbolic link is resolved too.
  fs::create_directory_symlink(root_, base_ + "/root-link");
  EXPECT_EQ(*ConfineBackupDir(base_ + "/root-link", base_ + "/root-link/today"),
            root_ + "/today");
}

TEST_F(BackupRootTest, RefusesEverythingOutsideTheRoot) {
  for (const std::string& dir :
       {base_ + "/elsewhere/copy", root_ + "/../elsewhere/copy", root_,
        root_ + "/", root_ + "/.", root_ + "/nightly/../..", root_ + "-sibling/copy",
        std::string("/"), std::string("/etc/dictlog-copy"), std::string("/tmp")}) {
    EXPECT_EQ(Code(dir), StatusCode::kPermissionDenied) << dir;
  }
}

TEST_F(BackupRootTest, ResolvesSymbolicLinksOutOfTheRoot) {
  fs::create_directory_symlink(base_ + "/elsewhere", root_ + "/escape");
  EXPECT_EQ(Code(root_ + "/escape/copy"), StatusCode::kPermissionDenied);
  // The directory itself, or the .tmp RocksDB clears first, as a link elsewhere.
  fs::create_directory_symlink(base_ + "/elsewhere", root_ + "/linked");
  EXPECT_EQ(Code(root_ + "/linked"), StatusCode::kPermissionDenied);
  fs::create_directory_symlink(base_ + "/elsewhere", root_ + "/staged.tmp");
  EXPECT_EQ(Code(root_ + "/staged"), StatusCode::kPermissionDenied);
  // A link that stays inside the root is fine.
  fs::create_directory_symlink(root_ + "/nightly", root_ + "/latest");
  EXPECT_EQ(*ConfineBackupDir(root_, root_ + "/latest/copy"), root_ + "/nightly/copy");
}

TEST_F(BackupRootTest, OffWithoutARootAndOtherPreconditions) {
  EXPECT_EQ(ConfineBackupDir("", root_ + "/today").status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(Code(root_ + "/today", base_ + "/no-such-root"),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(Code(root_ + "/missing/today"), StatusCode::kFailedPrecondition);
  EXPECT_EQ(Code("relative/today"), StatusCode::kInvalidArgument);
  EXPECT_EQ(Code(""), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dictlog::engine
