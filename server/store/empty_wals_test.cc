// DeleteStaleEmptyWals on a real RocksDB in a fresh directory, opened and closed the way
// Store does (several column families, the default options for WALs).
#include "server/store/empty_wals.h"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/test_dir.h"
#include "gtest/gtest.h"

namespace dictlog::store {
namespace {

// The WAL files ("<number>.log") in `dir`.
int WalFiles(const std::string& dir) {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    n += entry.path().extension() == ".log";
  }
  return n;
}

class EmptyWalsTest : public ::testing::Test {
 protected:
  void SetUp() override { path_ = FreshTestDir(); }
  void TearDown() override { Close(); }

  void Open(bool avoid_flush_during_recovery = false, bool track_wals = false) {
    Close();
    rocksdb::DBOptions options;
    options.create_if_missing = true;
    options.create_missing_column_families = true;
    options.avoid_flush_during_recovery = avoid_flush_during_recovery;
    options.track_and_verify_wals_in_manifest = track_wals;
    std::vector<rocksdb::ColumnFamilyDescriptor> families = {
        {rocksdb::kDefaultColumnFamilyName, {}}, {"records", {}}, {"blocks", {}}};
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(options, path_, families, &handles_, &raw).ok());
    db_.reset(raw);
  }

  void Close() {
    for (rocksdb::ColumnFamilyHandle* handle : handles_) db_->DestroyColumnFamilyHandle(handle);
    handles_.clear();
    db_.reset();
  }

  std::string path_;
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
};

// Opens that no flush follows leave their empty WALs (RocksDB 7.8); each open deletes
// those older than its own, so the directory keeps one however often it is reopened.
TEST_F(EmptyWalsTest, ReopeningKeepsOneWal) {
  for (int i = 0; i < 3; ++i) Open();  // Without the work-around.
  const int before = WalFiles(path_);
  EXPECT_EQ(DeleteStaleEmptyWals(db_.get()), before - 1);
  EXPECT_EQ(WalFiles(path_), 1);
  for (int i = 0; i < 5; ++i) {
    Open();
    DeleteStaleEmptyWals(db_.get());
    EXPECT_EQ(WalFiles(path_), 1) << "open " << i;
  }
  ASSERT_TRUE(db_->Put({}, handles_[1], "k", "v").ok());  // The current WAL works.
  Open();
  std::string value;
  ASSERT_TRUE(db_->Get({}, handles_[1], "k", &value).ok());
  EXPECT_EQ(value, "v");
}

// A WAL holding writes not yet flushed is never deleted: what it holds is read back
// after each reopen.
TEST_F(EmptyWalsTest, AWalWithWritesIsKept) {
  Open();
  ASSERT_TRUE(db_->Put({}, handles_[2], "block", "held only by the WAL").ok());
  for (int i = 0; i < 3; ++i) {
    Open(/*avoid_flush_during_recovery=*/true);  // The WAL stays the only copy.
    EXPECT_EQ(DeleteStaleEmptyWals(db_.get()), i == 0 ? 0 : 1) << "open " << i;
    std::string value;
    ASSERT_TRUE(db_->Get({}, handles_[2], "block", &value).ok()) << "open " << i;
    EXPECT_EQ(value, "held only by the WAL");
  }
}

// The manifest lists a WAL only once it holds synced bytes (ADR 0046): empty ones are
// deleted with WALs tracked too, and the next open, which checks every listed WAL is
// there, succeeds and reads the synced write back.
TEST_F(EmptyWalsTest, EmptyWalsAreDeletedWhenTheManifestTracksWals) {
  Open(/*avoid_flush_during_recovery=*/false, /*track_wals=*/true);
  rocksdb::WriteOptions synced;
  synced.sync = true;
  ASSERT_TRUE(db_->Put(synced, handles_[0], "key", "synced").ok());
  ASSERT_TRUE(db_->Flush({}, handles_).ok());  // The synced log, closed, is listed, then deleted.
  for (int i = 0; i < 3; ++i) Open(false, true);
  const int before = WalFiles(path_);
  EXPECT_GE(before, 2);
  EXPECT_EQ(DeleteStaleEmptyWals(db_.get()), before - 1);
  EXPECT_EQ(WalFiles(path_), 1);
  Open(false, true);  // Fails if a listed log was deleted.
  std::string value;
  ASSERT_TRUE(db_->Get({}, handles_[0], "key", &value).ok());
  EXPECT_EQ(value, "synced");
}

}  // namespace
}  // namespace dictlog::store
