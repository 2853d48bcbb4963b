// Scans by append time (ScanSpec::since_ms/until_ms) over a real RocksDB with an
// injected clock, in record mode and block mode: loghub lines appended at known times
// come back in exact ranges (since included, until excluded), records without a time
// are in none, and a scan of a short range seeks through the time index: it reads
// about the records of the range, not the pool (counted by ScannedRecordsForTest).
#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "server/engine/log_engine.h"
#include "training/files.h"

namespace dictlog::engine {
namespace {

constexpr int64_t kStartMs = 1764000000000;
constexpr int kPerCall = 40;

// The lines of a loghub sample (runfiles of @loghub).
std::vector<std::string> LoghubLines(const std::string& name) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  absl::StatusOr<std::vector<std::string>> lines =
      trainer::ReadLines(std::string(srcdir == nullptr ? "." : srcdir) + "/loghub/" + name);
  EXPECT_TRUE(lines.ok()) << lines.status();
  return lines.ok() ? *std::move(lines) : std::vector<std::string>();
}

int64_t CallMs(int call) { return kStartMs + int64_t{call} * 60000; }

class ScanTimeTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    lines_ = LoghubLines("HDFS.log");
    ASSERT_EQ(lines_.size(), 2000u);  // Reused in turn past the 2,000th record.
    options_.store.path = FreshTestDir();
    options_.auto_train = false;
    options_.retention.interval = absl::ZeroDuration();
    options_.store.clock_for_test = [now = now_ms_] { return absl::FromUnixMillis(*now); };
    if (GetParam()) {
      options_.default_pool_options.set_storage_mode(v1::STORAGE_MODE_BLOCK);
      options_.default_pool_options.set_block_bytes(2048);
    }
    auto engine = LogEngine::Open(options_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
  }

  // `calls` append calls of kPerCall lines to category HDFS, call k at CallMs(k) (so
  // its records are HDFS/(k*kPerCall+1) .. HDFS/((k+1)*kPerCall)); the first
  // `untimed` calls at the epoch, which stores no time (as before append times).
  void Fill(int calls, int untimed = 0) {
    for (int call = 0; call < calls; ++call) {
      *now_ms_ = call < untimed ? 0 : CallMs(call);
      std::vector<AppendInput> batch;
      for (int k = 0; k < kPerCall; ++k) {
        batch.push_back({"HDFS", lines_[(call * kPerCall + k) % lines_.size()]});
      }
      ASSERT_TRUE(engine_->Append(batch).ok());
    }
  }

  // The seqs a scan of pool HDFS returns, checking each record's time is in range.
  absl::StatusOr<std::vector<uint64_t>> Seqs(std::optional<int64_t> since,
                                             std::optional<int64_t> until,
                                             const std::string& from = "") {
    ScanSpec spec;
    spec.pool = "HDFS";
    spec.from_id = from;
    spec.since_ms = since;
    spec.until_ms = until;
    std::vector<uint64_t> seqs;
    absl::Status status = engine_->Scan(spec, [&](std::vector<v1::Record> chunk) {
      for (const v1::Record& r : chunk) {
        seqs.push_back(std::stoull(r.id().substr(5)));
        EXPECT_TRUE(r.has_append_time_unix_ms()) << r.id();
        EXPECT_GE(r.append_time_unix_ms(), since.value_or(INT64_MIN)) << r.id();
        EXPECT_LT(r.append_time_unix_ms(), until.value_or(INT64_MAX)) << r.id();
        EXPECT_EQ(r.payload(), lines_[(seqs.back() - 1) % lines_.size()]) << r.id();
      }
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    return seqs;
  }

  // Seqs of calls [first, end).
  static std::vector<uint64_t> CallSeqs(int first, int end) {
    std::vector<uint64_t> seqs;
    for (int s = first * kPerCall + 1; s <= end * kPerCall; ++s) seqs.push_back(s);
    return seqs;
  }

  std::shared_ptr<std::atomic<int64_t>> now_ms_ =
      std::make_shared<std::atomic<int64_t>>(kStartMs);
  std::vector<std::string> lines_;
  EngineOptions options_;
  std::unique_ptr<LogEngine> engine_;
};

TEST_P(ScanTimeTest, ExactRangesWithSinceIncludedAndUntilExcluded) {
  Fill(50, /*untimed=*/2);
  EXPECT_EQ(*Seqs(CallMs(10), CallMs(20)), CallSeqs(10, 20));
  EXPECT_EQ(*Seqs(CallMs(10) + 1, CallMs(20)), CallSeqs(11, 20));  // Call 10 is before.
  EXPECT_EQ(*Seqs(CallMs(10), CallMs(20) + 1), CallSeqs(10, 21));  // Call 20 is in.
  EXPECT_EQ(*Seqs(CallMs(10) - 1, CallMs(10) + 1), CallSeqs(10, 11));
  EXPECT_EQ(*Seqs(CallMs(45), std::nullopt), CallSeqs(45, 50));
  // Records without a time (the first 2 calls) are in no range.
  EXPECT_EQ(*Seqs(std::nullopt, CallMs(5)), CallSeqs(2, 5));
  EXPECT_EQ(*Seqs(INT64_MIN, CallMs(3)), CallSeqs(2, 3));
  // from_id and the range together: the later start wins.
  const std::vector<uint64_t> two_calls = CallSeqs(10, 12);  // 401..480
  EXPECT_EQ(*Seqs(CallMs(10), CallMs(12), "HDFS/425"),
            std::vector<uint64_t>(two_calls.begin() + 24, two_calls.end()));
  EXPECT_EQ(*Seqs(CallMs(10), CallMs(12), "HDFS/100"), CallSeqs(10, 12));
}

TEST_P(ScanTimeTest, EmptyRangesAndSinceAfterUntil) {
  Fill(10);
  EXPECT_TRUE(Seqs(CallMs(5), CallMs(5))->empty());            // since == until
  EXPECT_TRUE(Seqs(CallMs(5) + 1, CallMs(6))->empty());        // between two calls
  EXPECT_TRUE(Seqs(CallMs(10), std::nullopt)->empty());        // after the last
  EXPECT_TRUE(Seqs(std::nullopt, CallMs(0))->empty());         // before the first
  auto reversed = Seqs(CallMs(6), CallMs(5));
  EXPECT_EQ(reversed.status().code(), absl::StatusCode::kInvalidArgument) << reversed.status();
}

TEST_P(ScanTimeTest, CategoryScanAndLimitWithARange) {
  Fill(10);
  ScanSpec spec;
  spec.category = "HDFS";
  spec.since_ms = CallMs(3);
  spec.until_ms = CallMs(6);
  spec.limit = 50;
  std::vector<std::string> ids;
  ASSERT_TRUE(engine_->Scan(spec, [&](std::vector<v1::Record> chunk) {
    for (const v1::Record& r : chunk) ids.push_back(r.id());
    return absl::OkStatus();
  }).ok());
  ASSERT_EQ(ids.size(), 50u);
  EXPECT_EQ(ids.front(), absl::StrCat("HDFS/", 3 * kPerCall + 1));
}

// A scan of the last 2 minutes of 10,000 records reads about their 80, not the pool:
// it seeks through the time index (and stops at `until`) instead of filtering.
TEST_P(ScanTimeTest, ShortRangeSeeksInsteadOfReadingThePool) {
  Fill(250);
  const uint64_t before_all = engine_->ScannedRecordsForTest();
  ASSERT_EQ(Seqs(std::nullopt, std::nullopt)->size(), 250u * kPerCall);
  EXPECT_GE(engine_->ScannedRecordsForTest() - before_all, 250u * kPerCall);

  const uint64_t before_tail = engine_->ScannedRecordsForTest();
  EXPECT_EQ(*Seqs(CallMs(248), std::nullopt), CallSeqs(248, 250));
  // At most one chunk (256 records) past the range's 80.
  EXPECT_LE(engine_->ScannedRecordsForTest() - before_tail, 2u * 256);

  const uint64_t before_middle = engine_->ScannedRecordsForTest();
  EXPECT_EQ(*Seqs(CallMs(100), CallMs(102)), CallSeqs(100, 102));
  EXPECT_LE(engine_->ScannedRecordsForTest() - before_middle, 2u * 256);
}

INSTANTIATE_TEST_SUITE_P(Modes, ScanTimeTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Block" : "Record"; });

}  // namespace
}  // namespace dictlog::engine
