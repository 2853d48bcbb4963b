// A block-mode store written before indexed blocks (the fixture testdata/v1_block_store,
// as v1_block_store_test reads it) keeps its old blocks and entry values, and seals
// what is appended after the upgrade into indexed blocks (ADR 0016): their records
// leave the records family, and every record, old and new, reads back through Get,
// MultiGet, Scan and Verify, before and after a restart, with exact counters.
#include <filesystem>

#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "codec/test_dictionary.h"
#include "server/engine/log_engine.h"
#include "server/engine/v1_block_fixture.h"
#include "server/store/store.h"

namespace dictlog::engine {
namespace {

constexpr size_t kFixtureRecords = 750;


class V1BlockStoreUpgradeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.store.path = V1BlockFixtureCopy();
    options_.auto_train = false;
    options_.routes = {{"", "app-", "apps"}};
    Reopen();
    lines_ = V1BlockFixtureLines();
  }

  void Reopen() {
    engine_.reset();
    auto engine = LogEngine::Open(options_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
  }

  // Appends `count` new lines in batches of 40; one record in 100 is larger than the
  // pool's 2 KiB blocks, so it stays single inside an indexed block's seq range.
  void AppendNew(size_t count) {
    std::vector<std::string> more = codec::SyntheticLogLines(count, 11);
    for (size_t i = 0; i < more.size(); i += 100) more[i] = std::string(3000, 'L') + more[i];
    for (size_t start = 0; start < more.size(); start += 40) {
      std::vector<AppendInput> batch;
      for (size_t i = start; i < std::min(start + 40, more.size()); ++i) {
        batch.push_back({V1BlockFixtureCategory(lines_.size() + i), more[i]});
      }
      auto appended = engine_->Append(batch);
      ASSERT_TRUE(appended.ok()) << appended.status();
    }
    lines_.insert(lines_.end(), more.begin(), more.end());
  }

  void ExpectEveryRecord() {
    std::vector<std::string> ids;
    for (size_t i = 0; i < lines_.size(); ++i) ids.push_back("apps/" + std::to_string(i + 1));
    auto results = engine_->MultiGet(ids);
    ASSERT_TRUE(results.ok()) << results.status();
    for (size_t i = 0; i < lines_.size(); ++i) {
      ASSERT_TRUE((*results)[i].ok()) << ids[i] << ": " << (*results)[i].status();
      ASSERT_EQ((*results)[i]->payload(), lines_[i]) << ids[i];
      ASSERT_EQ((*results)[i]->category(), V1BlockFixtureCategory(i)) << ids[i];
      auto one = engine_->Get(ids[i]);
      ASSERT_TRUE(one.ok()) << ids[i] << ": " << one.status();
      ASSERT_EQ(one->payload(), lines_[i]) << ids[i];
      ASSERT_EQ(one->category(), V1BlockFixtureCategory(i)) << ids[i];
    }
    const std::string past = "apps/" + std::to_string(lines_.size() + 1);
    EXPECT_EQ(engine_->Get(past).status().code(), absl::StatusCode::kNotFound);
    auto missing = engine_->MultiGet({past});
    ASSERT_TRUE(missing.ok());
    EXPECT_EQ((*missing)[0].status().code(), absl::StatusCode::kNotFound);
  }

  void ExpectScans() {
    for (const char* category : {"app-a", "app-b"}) {
      std::vector<std::string> scanned;
      ScanSpec spec;
      spec.category = category;
      ASSERT_TRUE(engine_->Scan(spec, [&](std::vector<v1::Record> chunk) {
        for (v1::Record& r : chunk) scanned.push_back(r.payload());
        return absl::OkStatus();
      }).ok());
      std::vector<std::string> expected;
      for (size_t i = 0; i < lines_.size(); ++i) {
        if (std::string(V1BlockFixtureCategory(i)) == category) expected.push_back(lines_[i]);
      }
      EXPECT_EQ(scanned, expected) << category;
    }
    ScanSpec from;
    from.pool = "apps";
    from.from_id = "apps/" + std::to_string(kFixtureRecords - 5);
    from.limit = 300;
    std::vector<std::string> scanned;
    ASSERT_TRUE(engine_->Scan(from, [&](std::vector<v1::Record> chunk) {
      for (v1::Record& r : chunk) scanned.push_back(r.payload());
      return absl::OkStatus();
    }).ok());
    EXPECT_EQ(scanned, std::vector<std::string>(lines_.begin() + kFixtureRecords - 6,
                                                lines_.begin() + kFixtureRecords + 294));
  }

  EngineOptions options_;
  std::unique_ptr<LogEngine> engine_;
  std::vector<std::string> lines_;
};

TEST_F(V1BlockStoreUpgradeTest, ReadsOldAndNewRecordsBeforeAndAfterARestart) {
  AppendNew(1000);
  ExpectEveryRecord();
  ExpectScans();
  Reopen();
  ExpectEveryRecord();
  ExpectScans();
  const v1::PoolInfo pool = *engine_->GetPool("apps");
  EXPECT_EQ(pool.stats().records(), lines_.size());
  uint64_t raw = 0;
  for (const std::string& line : lines_) raw += line.size();
  EXPECT_EQ(pool.stats().raw_bytes(), raw);
  auto verify = engine_->Verify(v1::VerifyRequest(), [] { return false; });
  ASSERT_TRUE(verify.ok()) << verify.status();
  EXPECT_EQ(verify->records_checked(), lines_.size());
  EXPECT_EQ(verify->corrupt_records(), 0u);
  EXPECT_TRUE(verify->pool_errors().empty());
  // Appends keep numbering on from the newest indexed block after the restart.
  auto next = engine_->Append({{"app-a", "after the restart"}});
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->front(), "apps/" + std::to_string(lines_.size() + 1));
}

TEST_F(V1BlockStoreUpgradeTest, NewRecordsLeaveTheRecordsFamilyOldOnesKeepTheirEntries) {
  AppendNew(1000);
  engine_.reset();
  store::Store::Options store_options;
  store_options.path = options_.store.path;
  auto store = store::Store::Open(store_options);
  ASSERT_TRUE(store.ok()) << store.status();
  auto pools = (*store)->LoadPools();
  ASSERT_TRUE(pools.ok()) << pools.status();
  ASSERT_EQ(pools->size(), 1u);
  const storage::PoolRecord& record = (*pools)[0].record;
  EXPECT_EQ(record.indexed_blocks_from_seq(), kFixtureRecords + 1);
  EXPECT_EQ((*pools)[0].last_seq, lines_.size());
  // Every fixture record still has its value; most new ones are only in blocks.
  size_t single_new = 0;
  for (uint64_t seq = 1; seq <= lines_.size(); ++seq) {
    absl::StatusOr<std::string> value = (*store)->GetRecord({record.id(), seq});
    if (seq <= kFixtureRecords) {
      ASSERT_TRUE(value.ok()) << seq << ": " << value.status();
    } else if (value.ok()) {
      ++single_new;
    } else {
      ASSERT_EQ(value.status().code(), absl::StatusCode::kNotFound) << seq;
    }
  }
  EXPECT_GE(single_new, 10u);   // The large records, and the open tail.
  EXPECT_LT(single_new, 100u);  // Not the rest.
  std::vector<uint64_t> seqs;
  for (uint64_t seq = kFixtureRecords + 2; seq < lines_.size() - 60; ++seq) {
    if (seq % 100 != 51) seqs.push_back(seq);  // Not the large ones.
  }
  auto found = (*store)->FindIndexedBlocks(record.id(), kFixtureRecords + 1, seqs);
  ASSERT_TRUE(found.ok()) << found.status();
  for (size_t k = 0; k < seqs.size(); ++k) EXPECT_GE(found->block_of[k], 0) << seqs[k];
}

}  // namespace
}  // namespace dictlog::engine
