#include "server/store/background_errors.h"

#include "gtest/gtest.h"
#include "rocksdb/status.h"

namespace dictlog::store {
namespace {

rocksdb::Status WithSeverity(const rocksdb::Status& status, rocksdb::Status::Severity severity) {
  return rocksdb::Status(status, severity);
}

TEST(BackgroundErrorsTest, AnErrorThatStopsWritesIsKeptWithWhatFailed) {
  BackgroundErrors errors;
  EXPECT_TRUE(errors.Stopped().ok());
  rocksdb::Status corruption = WithSeverity(
      rocksdb::Status::Corruption("block checksum mismatch in /d/000034.sst"),
      rocksdb::Status::kUnrecoverableError);
  errors.OnBackgroundError(rocksdb::BackgroundErrorReason::kCompaction, &corruption);
  EXPECT_EQ(errors.Stopped().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(errors.Stopped().message(),
            "writes stopped after a failed compaction: Corruption: block checksum "
            "mismatch in /d/000034.sst");
  EXPECT_FALSE(corruption.ok());  // Left as it is: RocksDB still stops writes.
  // The first error says why; a later one does not replace it.
  rocksdb::Status io = WithSeverity(rocksdb::Status::IOError("later"),
                                    rocksdb::Status::kHardError);
  errors.OnBackgroundError(rocksdb::BackgroundErrorReason::kFlush, &io);
  EXPECT_EQ(errors.Stopped().code(), absl::StatusCode::kDataLoss);
  errors.Clear();
  EXPECT_TRUE(errors.Stopped().ok());
  errors.OnBackgroundError(rocksdb::BackgroundErrorReason::kFlush, &io);
  EXPECT_EQ(errors.Stopped().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(errors.Stopped().message(), "writes stopped after a failed flush: IO error: later");
}

TEST(BackgroundErrorsTest, ASoftErrorLeavesWritesGoing) {
  BackgroundErrors errors;
  rocksdb::Status soft = WithSeverity(rocksdb::Status::NoSpace("compaction output"),
                                      rocksdb::Status::kSoftError);
  errors.OnBackgroundError(rocksdb::BackgroundErrorReason::kCompaction, &soft);
  EXPECT_TRUE(errors.Stopped().ok());
}

TEST(BackgroundErrorsTest, RocksDbsOwnRecoveryIsTurnedOff) {
  BackgroundErrors errors;
  bool auto_recovery = true;
  errors.OnErrorRecoveryBegin(rocksdb::BackgroundErrorReason::kFlush,
                              rocksdb::Status::NoSpace(), &auto_recovery);
  EXPECT_FALSE(auto_recovery);
}

}  // namespace
}  // namespace dictlog::store
