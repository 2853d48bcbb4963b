#include "server/store/wal_drop_log.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "common/file_damage.h"
#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"

namespace dictlog::store {
namespace {

TEST(WalDropLogTest, DroppedBytesReadsRecoveryReportsOnly) {
  EXPECT_EQ(WalDropLog::DroppedBytes(
                "/data/000004.log: dropping 32768 bytes; Corruption: checksum mismatch"),
            32768);
  EXPECT_EQ(WalDropLog::DroppedBytes("(ignoring error) /d/9.log: dropping 7 bytes; x"), 7);
  EXPECT_EQ(WalDropLog::DroppedBytes("Recovering log #4 mode 2"), -1);
  EXPECT_EQ(WalDropLog::DroppedBytes("f: dropping many bytes; x"), -1);
  EXPECT_EQ(WalDropLog::DroppedBytes("f: dropping -3 bytes; x"), -1);
  EXPECT_EQ(WalDropLog::DroppedBytes("dropping 5 bytes"), -1);
}

// A real RocksDB, its WAL damaged or cut between a close and an open.
class WalDropLogDbTest : public ::testing::Test {
 protected:
  void SetUp() override { path_ = FreshTestDir(); }

  // Opens the DB with a fresh tap; returns what its recovery dropped.
  WalDrops Open() {
    db_.reset();
    rocksdb::Options options;
    options.create_if_missing = true;
    options.paranoid_checks = true;
    std::shared_ptr<rocksdb::Logger> base;
    EXPECT_TRUE(rocksdb::CreateLoggerFromOptions(path_, options, &base).ok());
    auto tap = std::make_shared<WalDropLog>(base);
    options.info_log = tap;
    rocksdb::DB* db = nullptr;
    const rocksdb::Status s = rocksdb::DB::Open(options, path_, &db);
    EXPECT_TRUE(s.ok()) << s.ToString();
    db_.reset(db);
    return tap->drops();
  }

  // 300 writes of 1 KB each: about 300 KB of WAL, none flushed.
  void Fill() {
    for (int i = 0; i < 300; ++i) {
      ASSERT_TRUE(db_->Put(rocksdb::WriteOptions(), "k" + std::to_string(i),
                           std::string(1000, 'a' + i % 26))
                      .ok());
    }
  }

  int Found() {
    int found = 0;
    std::string value;
    for (int i = 0; i < 300; ++i) {
      found += db_->Get(rocksdb::ReadOptions(), "k" + std::to_string(i), &value).ok();
    }
    return found;
  }

  std::string path_;
  std::unique_ptr<rocksdb::DB> db_;
};

TEST_F(WalDropLogDbTest, ADamagedRecordIsReportedWithWhatFollowedIt) {
  EXPECT_EQ(Open().reports, 0u);
  Fill();
  db_.reset();
  const std::string wal = LargestWal(path_);
  const uint64_t size = std::filesystem::file_size(wal);
  ASSERT_GT(size, 250000u);
  FlipByte(wal, size / 3);
  const WalDrops drops = Open();
  EXPECT_GE(drops.reports, 1u);
  EXPECT_GT(drops.bytes, 0u);  // What the first report names; the replay stops there.
  EXPECT_NE(drops.first.find("Corruption"), std::string::npos) << drops.first;
  EXPECT_LT(Found(), 150);  // Point-in-time recovery: the writes after it are gone.
  EXPECT_GT(Found(), 50);   // Those before it are not.
  std::ifstream log(path_ + "/LOG");
  std::stringstream text;
  text << log.rdbuf();
  EXPECT_NE(text.str().find("dropping"), std::string::npos);  // Still in RocksDB's LOG.
}

TEST_F(WalDropLogDbTest, ACleanLogReportsNothingATornTailIsReported) {
  Open();
  Fill();
  db_.reset();
  EXPECT_EQ(Open().reports, 0u);  // Clean.
  EXPECT_EQ(Found(), 300);
  Fill();
  db_.reset();
  const std::string wal = LargestWal(path_);
  std::filesystem::resize_file(wal, std::filesystem::file_size(wal) - 300);  // Torn.
  const WalDrops drops = Open();  // RocksDB 7.8 reports a cut record too.
  EXPECT_EQ(drops.reports, 1u) << drops.first;
  EXPECT_NE(drops.first.find("truncated"), std::string::npos) << drops.first;
  EXPECT_EQ(Found(), 300);  // The cut record rewrote a key written before.
}

}  // namespace
}  // namespace dictlog::store
