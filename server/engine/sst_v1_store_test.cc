// A store whose table files were written with the column families' RocksDB options as
// they were before ADR 0024 (the fixture testdata/sst_v1_store, see
// testdata/make_sst_v1_store.cc: every record in SST files, none in a WAL) stays
// readable with today's options: every record of its record-mode and block-mode pools
// through Get and MultiGet, before and after appends and a compaction that rewrite
// table files with today's options beside the old ones.
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "codec/test_dictionary.h"
#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "server/engine/log_engine.h"

namespace dictlog::engine {
namespace {

constexpr char kFixture[] = "server/engine/testdata/sst_v1_store";

// A pool of the fixture: its name, lines and categories.
struct FixturePool {
  std::string name;
  std::vector<std::string> lines;
  const char* even;
  const char* odd;
};

std::vector<FixturePool> Pools() {
  return {{"recs", codec::SyntheticLogLines(1200, 11), "rec-a", "rec-b"},
          {"blks", codec::SyntheticLogLines(600, 12), "blk-a", "blk-b"}};
}

class SstV1StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.store.path = FixtureCopy(kFixture);
    options_.auto_train = false;
    options_.routes = {{"", "rec-", "recs"}, {"", "blk-", "blks"}};
    Reopen();
  }

  void Reopen() {
    engine_.reset();
    auto engine = LogEngine::Open(options_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
  }

  // Every record of `pool`, through MultiGet (64 ids a call, as clients read) and Get.
  void ExpectEveryRecord(const FixturePool& pool) {
    SCOPED_TRACE(pool.name);
    std::vector<std::string> ids;
    for (size_t i = 0; i < pool.lines.size(); ++i) {
      ids.push_back(pool.name + "/" + std::to_string(i + 1));
    }
    for (size_t start = 0; start < ids.size(); start += 64) {
      const size_t n = std::min<size_t>(64, ids.size() - start);
      auto results = engine_->MultiGet(absl::MakeConstSpan(ids).subspan(start, n));
      ASSERT_TRUE(results.ok()) << results.status();
      for (size_t k = 0; k < n; ++k) {
        const size_t i = start + k;
        ASSERT_TRUE((*results)[k].ok()) << ids[i] << ": " << (*results)[k].status();
        ASSERT_EQ((*results)[k]->payload(), pool.lines[i]) << ids[i];
        ASSERT_EQ((*results)[k]->category(), i % 2 == 0 ? pool.even : pool.odd) << ids[i];
      }
    }
    for (size_t i = 0; i < ids.size(); ++i) {
      auto one = engine_->Get(ids[i]);
      ASSERT_TRUE(one.ok()) << ids[i] << ": " << one.status();
      ASSERT_EQ(one->payload(), pool.lines[i]) << ids[i];
    }
  }

  EngineOptions options_;
  std::unique_ptr<LogEngine> engine_;
};

TEST_F(SstV1StoreTest, TheFixtureHoldsItsRecordsInTableFiles) {
  size_t tables = 0;
  bool wal = false;
  // The fixture as written by the old code (opening it writes to its WAL).
  for (const auto& file : std::filesystem::directory_iterator(RunfilePath(kFixture))) {
    if (file.path().extension() == ".sst") ++tables;
    if (file.path().extension() == ".log" && file.file_size() > 0) wal = true;
  }
  EXPECT_GE(tables, 2u);  // At least the records and blocks families.
  EXPECT_FALSE(wal);
}

TEST_F(SstV1StoreTest, ReadsEveryRecord) {
  for (const FixturePool& pool : Pools()) {
    ExpectEveryRecord(pool);
    EXPECT_EQ(engine_->GetPool(pool.name)->stats().records(), pool.lines.size());
  }
  EXPECT_NE(engine_->GetPool("recs")->active_dictionary_id(), 0u);
}

TEST_F(SstV1StoreTest, ReadsEveryRecordBesideTablesWrittenWithTodaysOptions) {
  // Re-compressing "recs" rewrites its records and compacts its key range: new table
  // files with today's options, old ones for the other families and pools.
  v1::RecompressRequest recompress;
  recompress.set_pool("recs");
  ASSERT_TRUE(engine_->Recompress(recompress).ok());
  ASSERT_TRUE(engine_->WaitForRecompressForTest("recs", absl::Seconds(60)));
  std::vector<AppendInput> more;
  const std::vector<std::string> lines = codec::SyntheticLogLines(100, 13);
  for (const std::string& line : lines) more.push_back({"rec-a", line});
  auto appended = engine_->Append(more);
  ASSERT_TRUE(appended.ok()) << appended.status();
  for (const FixturePool& pool : Pools()) ExpectEveryRecord(pool);
  auto last = engine_->Get((*appended).back());
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(last->payload(), lines.back());
}

// The fixture has no seq leases (catalog 'S' entries, ADR 0041): its pools go on one
// past their last record, and a clean close leaves them consecutive. Nor has it a seq
// floor or a synced mark (ADR 0044): nothing is skipped, and a new pool starts at 1.
TEST_F(SstV1StoreTest, PoolsWithoutSeqLeasesContinueAfterTheirLastRecord) {
  EXPECT_FALSE(engine_->WalDroppedAtOpen().synced_writes_lost);
  AppendInput fresh{"fresh", "a pool the fixture does not have"};
  auto created = engine_->Append({&fresh, 1});
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ((*created)[0], "fresh/1");
  const uint64_t stored = engine_->GetPool("recs")->stats().records();
  AppendInput input{"rec-a", "one more"};
  auto first = engine_->Append({&input, 1});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ((*first)[0], absl::StrCat("recs/", stored + 1));
  Reopen();
  auto second = engine_->Append({&input, 1});
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ((*second)[0], absl::StrCat("recs/", stored + 2));
  for (const FixturePool& pool : Pools()) ExpectEveryRecord(pool);
}

}  // namespace
}  // namespace dictlog::engine
