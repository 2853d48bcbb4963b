// A block-mode store written by the block format as of commit ce02c49 (the fixture
// testdata/v1_block_store, see testdata/make_v1_block_store.cc: every sealed record
// has its own entry value in the records family) stays readable: every record through
// Get, MultiGet and Scan, its counters, Verify, and appends after the upgrade (which
// pack the old open tail with them).
#include <filesystem>

#include "absl/time/time.h"
#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "codec/test_dictionary.h"
#include "server/engine/log_engine.h"
#include "server/engine/v1_block_fixture.h"

namespace dictlog::engine {
namespace {

class V1BlockStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.store.path = V1BlockFixtureCopy();
    options_.auto_train = false;
    options_.routes = {{"", "app-", "apps"}};
    Reopen();
  }

  void Reopen() {
    engine_.reset();
    auto engine = LogEngine::Open(options_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
  }

  void ExpectEveryRecord(const std::vector<std::string>& lines) {
    std::vector<std::string> ids;
    for (size_t i = 0; i < lines.size(); ++i) ids.push_back("apps/" + std::to_string(i + 1));
    auto results = engine_->MultiGet(ids);
    ASSERT_TRUE(results.ok()) << results.status();
    for (size_t i = 0; i < lines.size(); ++i) {
      ASSERT_TRUE((*results)[i].ok()) << ids[i] << ": " << (*results)[i].status();
      ASSERT_EQ((*results)[i]->payload(), lines[i]) << ids[i];
      ASSERT_EQ((*results)[i]->category(), V1BlockFixtureCategory(i)) << ids[i];
      auto one = engine_->Get(ids[i]);
      ASSERT_TRUE(one.ok()) << ids[i] << ": " << one.status();
      ASSERT_EQ(one->payload(), lines[i]) << ids[i];
    }
  }

  EngineOptions options_;
  std::unique_ptr<LogEngine> engine_;
};

TEST_F(V1BlockStoreTest, ReadsEveryRecordAndItsCounters) {
  const std::vector<std::string> lines = V1BlockFixtureLines();
  ExpectEveryRecord(lines);
  const v1::PoolInfo pool = *engine_->GetPool("apps");
  EXPECT_EQ(pool.options().storage_mode(), v1::STORAGE_MODE_BLOCK);
  EXPECT_EQ(pool.stats().records(), lines.size());
  uint64_t raw = 0;
  for (const std::string& line : lines) raw += line.size();
  EXPECT_EQ(pool.stats().raw_bytes(), raw);
  EXPECT_NE(pool.active_dictionary_id(), 0u);
  EXPECT_LT(pool.stats().stored_bytes(), raw / 2);  // blocks with the dictionary
  EXPECT_EQ(engine_->Get("apps/" + std::to_string(lines.size() + 1)).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(V1BlockStoreTest, ScansAndVerifies) {
  const std::vector<std::string> lines = V1BlockFixtureLines();
  std::vector<v1::Record> scanned;
  ScanSpec spec;
  spec.category = "app-b";
  ASSERT_TRUE(engine_->Scan(spec, [&](std::vector<v1::Record> chunk) {
    for (auto& r : chunk) scanned.push_back(std::move(r));
    return absl::OkStatus();
  }).ok());
  std::vector<std::string> expected;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (std::string(V1BlockFixtureCategory(i)) == "app-b") expected.push_back(lines[i]);
  }
  ASSERT_EQ(scanned.size(), expected.size());
  for (size_t k = 0; k < expected.size(); ++k) EXPECT_EQ(scanned[k].payload(), expected[k]);
  auto verify = engine_->Verify(v1::VerifyRequest(), [] { return false; });
  ASSERT_TRUE(verify.ok()) << verify.status();
  EXPECT_EQ(verify->records_checked(), lines.size());
  EXPECT_EQ(verify->corrupt_records(), 0u);
  EXPECT_TRUE(verify->pool_errors().empty());
}

// Append times (ADR 0015) came after this store: its records read with none, not a
// wrong one; records appended after the upgrade have theirs.
TEST_F(V1BlockStoreTest, OldRecordsHaveNoAppendTimeNewOnesDo) {
  options_.store.clock_for_test = [] { return absl::FromUnixMillis(1764000000123); };
  Reopen();
  const std::vector<std::string> lines = V1BlockFixtureLines();
  const std::vector<std::string> more = codec::SyntheticLogLines(40, 9);
  std::vector<AppendInput> batch;
  for (size_t i = 0; i < more.size(); ++i) batch.push_back({V1BlockFixtureCategory(i), more[i]});
  ASSERT_TRUE(engine_->Append(batch).ok());
  std::vector<std::string> ids;
  for (size_t i = 0; i < lines.size() + more.size(); ++i) {
    ids.push_back("apps/" + std::to_string(i + 1));
  }
  auto results = engine_->MultiGet(ids);
  ASSERT_TRUE(results.ok()) << results.status();
  for (size_t i = 0; i < ids.size(); ++i) {
    ASSERT_TRUE((*results)[i].ok()) << (*results)[i].status();
    EXPECT_EQ((*results)[i]->has_append_time_unix_ms(), i >= lines.size()) << ids[i];
    if (i >= lines.size()) {
      EXPECT_EQ((*results)[i]->append_time_unix_ms(), 1764000000123) << ids[i];
    }
  }
  EXPECT_FALSE(engine_->Get("apps/1")->has_append_time_unix_ms());
  ScanSpec spec;
  spec.pool = "apps";
  size_t scanned = 0;
  ASSERT_TRUE(engine_->Scan(spec, [&](std::vector<v1::Record> chunk) {
    for (const v1::Record& r : chunk) {
      EXPECT_EQ(r.has_append_time_unix_ms(), scanned++ >= lines.size()) << r.id();
    }
    return absl::OkStatus();
  }).ok());
  EXPECT_EQ(scanned, ids.size());
}

TEST_F(V1BlockStoreTest, AppendsAfterTheUpgradeKeepEveryRecordReadable) {
  std::vector<std::string> lines = V1BlockFixtureLines();
  const std::vector<std::string> more = codec::SyntheticLogLines(200, 9);
  for (size_t start = 0; start < more.size(); start += 50) {
    std::vector<AppendInput> batch;
    for (size_t i = start; i < start + 50; ++i) batch.push_back({V1BlockFixtureCategory(i), more[i]});
    auto appended = engine_->Append(batch);
    ASSERT_TRUE(appended.ok()) << appended.status();
    EXPECT_EQ(appended->front(), "apps/" + std::to_string(lines.size() + start + 1));
  }
  lines.insert(lines.end(), more.begin(), more.end());
  ExpectEveryRecord(lines);
  Reopen();
  ExpectEveryRecord(lines);
  EXPECT_EQ(engine_->GetPool("apps")->stats().records(), lines.size());
}

}  // namespace
}  // namespace dictlog::engine
