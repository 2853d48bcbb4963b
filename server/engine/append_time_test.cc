// Append times (ADR 0015): every record read through Get, MultiGet and Scan carries the
// time its append call was stored at, from the store's (injected) clock, in record and
// block mode, across a restart.
#include <atomic>
#include <memory>

#include "absl/time/time.h"
#include "codec/test_dictionary.h"
#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "server/engine/log_engine.h"

namespace dictlog::engine {
namespace {

constexpr int64_t kStartMs = 1764000000000;  // 2025-11-24T16:00:00Z

class AppendTimeTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    options_.store.path = FreshTestDir();
    options_.auto_train = false;
    options_.store.clock_for_test = [now = now_ms_] {
      return absl::FromUnixMillis(now->load());
    };
    if (GetParam()) {  // Block mode: small blocks, so most records are packed.
      options_.default_pool_options.set_storage_mode(v1::STORAGE_MODE_BLOCK);
      options_.default_pool_options.set_block_bytes(1024);
    }
    Reopen();
  }

  void Reopen() {
    engine_.reset();
    auto engine = LogEngine::Open(options_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
  }

  // Appends `n` lines to category `c` in one call at the clock's time; returns the ids.
  std::vector<std::string> AppendCall(const char* c, int n, int seed) {
    lines_.push_back(codec::SyntheticLogLines(n, seed));
    std::vector<AppendInput> batch;
    for (const std::string& line : lines_.back()) batch.push_back({c, line});
    auto ids = engine_->Append(batch);
    EXPECT_TRUE(ids.ok()) << ids.status();
    return ids.ok() ? *ids : std::vector<std::string>();
  }

  // Every record of pool `pool` through Get, MultiGet and Scan has the expected time.
  void ExpectTimes(const std::vector<std::string>& ids,
                   const std::vector<int64_t>& expected) {
    auto many = engine_->MultiGet(ids);
    ASSERT_TRUE(many.ok()) << many.status();
    for (size_t i = 0; i < ids.size(); ++i) {
      ASSERT_TRUE((*many)[i].ok()) << (*many)[i].status();
      ASSERT_TRUE((*many)[i]->has_append_time_unix_ms()) << ids[i];
      EXPECT_EQ((*many)[i]->append_time_unix_ms(), expected[i]) << ids[i];
      auto one = engine_->Get(ids[i]);
      ASSERT_TRUE(one.ok()) << one.status();
      EXPECT_EQ(one->append_time_unix_ms(), expected[i]) << ids[i];
    }
    ScanSpec spec;
    spec.pool = "web";
    std::vector<int64_t> scanned;
    ASSERT_TRUE(engine_->Scan(spec, [&](std::vector<v1::Record> chunk) {
      for (const v1::Record& r : chunk) {
        EXPECT_TRUE(r.has_append_time_unix_ms()) << r.id();
        scanned.push_back(r.append_time_unix_ms());
      }
      return absl::OkStatus();
    }).ok());
    EXPECT_EQ(scanned, expected);
  }

  std::shared_ptr<std::atomic<int64_t>> now_ms_ =
      std::make_shared<std::atomic<int64_t>>(kStartMs);
  std::vector<std::vector<std::string>> lines_;
  EngineOptions options_;
  std::unique_ptr<LogEngine> engine_;
};

TEST_P(AppendTimeTest, EveryRecordHasItsCallsTime) {
  std::vector<std::string> ids;
  std::vector<int64_t> expected;
  for (int call = 0; call < 6; ++call) {
    *now_ms_ = kStartMs + call * 60000 + call;  // A minute and a ms apart.
    const int n = call % 2 == 0 ? 40 : 1;       // Batches and single appends.
    for (const std::string& id : AppendCall("web", n, call)) {
      ids.push_back(id);
      expected.push_back(now_ms_->load());
    }
    AppendCall("other", 3, 100 + call);  // Another pool's entries in between.
  }
  ExpectTimes(ids, expected);
  *now_ms_ += 3600000;  // Reading later changes nothing; neither does a restart.
  Reopen();
  ExpectTimes(ids, expected);
}

TEST_P(AppendTimeTest, OneBatchAcrossPoolsHasOneTime) {
  *now_ms_ = kStartMs + 5;
  std::vector<AppendInput> batch = {{"web", "a"}, {"db", "b"}, {"web", "c"}};
  auto ids = engine_->Append(batch);
  ASSERT_TRUE(ids.ok()) << ids.status();
  auto records = engine_->MultiGet(*ids);
  ASSERT_TRUE(records.ok()) << records.status();
  for (const auto& record : *records) {
    ASSERT_TRUE(record.ok()) << record.status();
    EXPECT_EQ(record->append_time_unix_ms(), kStartMs + 5) << record->id();
  }
}

// Calls within one second (append_time_resolution) after the first share its entry:
// their records read its time; the next second's call has its own.
TEST_P(AppendTimeTest, CallsWithinTheResolutionShareTheFirstCallsTime) {
  *now_ms_ = kStartMs + 200;
  const std::vector<std::string> first = AppendCall("web", 3, 1);
  *now_ms_ = kStartMs + 900;
  const std::vector<std::string> second = AppendCall("web", 2, 2);
  *now_ms_ = kStartMs + 1000;
  const std::vector<std::string> third = AppendCall("web", 2, 3);
  std::vector<std::string> ids = first;
  ids.insert(ids.end(), second.begin(), second.end());
  ids.insert(ids.end(), third.begin(), third.end());
  const int64_t a = kStartMs + 200, b = kStartMs + 1000;
  ExpectTimes(ids, {a, a, a, a, a, b, b});
  uint64_t entries = 0;
  for (const auto& [family, keys] : engine_->StoreProperty("rocksdb.estimate-num-keys")) {
    if (family == "times") entries = keys;
  }
  EXPECT_EQ(entries, 2u);
}

INSTANTIATE_TEST_SUITE_P(Modes, AppendTimeTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Block" : "Record";
                         });

}  // namespace
}  // namespace dictlog::engine
