// Retention (pool options max_age, max_bytes; retention.h) over a real RocksDB with an
// injected clock, in record mode and in block mode with indexed blocks, with blocks
// found through entry values (a store from before indexed blocks) and with both (the
// upgrade in the middle of the pool): what is older than max_age goes and reads
// as expired, newer records stay, max_bytes keeps a pool within its limit plus one
// block, the counters of the pool and of each dictionary equal a recount of the store,
// and the disk space comes back.
#include <atomic>
#include <map>
#include <memory>

#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "codec/record_codec.h"
#include "codec/test_dictionary.h"
#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "server/engine/engine_test_util.h"
#include "server/engine/log_engine.h"
#include "server/store/store.h"

namespace dictlog::engine {
namespace {

constexpr int64_t kStartMs = 1764000000000;
constexpr int kCalls = 10;
constexpr int kPerCall = 60;

// How pool "web" stores its records.
enum class Layout { kRecord, kIndexed, kEntries, kEntriesThenIndexed };

class RetentionTest : public ::testing::TestWithParam<Layout> {
 protected:
  bool BlockMode() const { return GetParam() != Layout::kRecord; }

  void SetUp() override {
    options_.store.path = FreshTestDir();
    options_.auto_train = false;
    options_.retention.interval = absl::ZeroDuration();  // Passes run when asked.
    options_.store.clock_for_test = [now = now_ms_] {
      return absl::FromUnixMillis(now->load());
    };
    if (BlockMode()) {
      options_.default_pool_options.set_storage_mode(v1::STORAGE_MODE_BLOCK);
      options_.default_pool_options.set_block_bytes(1024);
    }
    options_.default_pool_options.set_dictionary_bytes(4096);
    Reopen();
    if (GetParam() == Layout::kEntries) SetIndexedFrom(1000000);  // Past every seq.
    if (GetParam() == Layout::kEntriesThenIndexed) SetIndexedFrom(5 * kPerCall + 1);
  }

  // Creates pool "web" whose records from `seq` on are sealed into indexed blocks and
  // those before it behind entry values (as a store from before indexed blocks).
  void SetIndexedFrom(uint64_t seq) {
    ASSERT_TRUE(engine_->CreatePool("web", v1::PoolOptions()).ok());
    engine_.reset();
    const absl::Status set = SetIndexedBlocksFrom(options_.store, "web", seq);
    ASSERT_TRUE(set.ok()) << set;
    Reopen();
  }

  void Reopen() {
    engine_.reset();
    auto engine = LogEngine::Open(options_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
  }

  // kCalls append calls of kPerCall lines to pool "web", a minute apart; a dictionary
  // is trained and activated after the third, so records name none, the first or
  // (block mode) blocks name it.
  void Fill() {
    for (int call = 0; call < kCalls; ++call) {
      *now_ms_ = kStartMs + call * 60000;
      lines_.push_back(codec::SyntheticLogLines(kPerCall, call));
      std::vector<AppendInput> batch;
      for (const std::string& line : lines_.back()) batch.push_back({"web", line});
      auto ids = engine_->Append(batch);
      ASSERT_TRUE(ids.ok()) << ids.status();
      if (call == 2) TrainAndActivate();
    }
  }

  void TrainAndActivate() {
    const absl::Status activated = engine::TrainAndActivate(*engine_, "web");
    ASSERT_TRUE(activated.ok()) << activated;
  }

  void SetLimits(uint64_t max_age_seconds, uint64_t max_bytes) {
    v1::PoolOptions update;
    if (max_age_seconds > 0) update.set_max_age_seconds(max_age_seconds);
    if (max_bytes > 0) update.set_max_bytes(max_bytes);
    ASSERT_TRUE(engine_->UpdatePool("web", update).ok());
  }

  std::string Id(int call, int k) {
    return "web/" + std::to_string(call * kPerCall + k + 1);
  }

  // Every record still there, by seq: its payload size (through Scan).
  std::map<uint64_t, uint64_t> Retained() {
    std::map<uint64_t, uint64_t> raw;
    ScanSpec spec;
    spec.pool = "web";
    EXPECT_TRUE(engine_->Scan(spec, [&](std::vector<v1::Record> chunk) {
      for (const v1::Record& r : chunk) {
        raw[std::stoull(r.id().substr(4))] = r.payload().size();
      }
      return absl::OkStatus();
    }).ok());
    return raw;
  }

  // Closes the engine and checks the pool's and every dictionary's counters against
  // the store's records and blocks; `raw` is the payload size by seq.
  void ExpectCountersEqualRecount(const std::map<uint64_t, uint64_t>& raw);

  std::shared_ptr<std::atomic<int64_t>> now_ms_ =
      std::make_shared<std::atomic<int64_t>>(kStartMs);
  std::vector<std::vector<std::string>> lines_;
  EngineOptions options_;
  std::unique_ptr<LogEngine> engine_;
};

void RetentionTest::ExpectCountersEqualRecount(const std::map<uint64_t, uint64_t>& raw) {
  engine_.reset();
  auto store = store::Store::Open(options_.store);
  ASSERT_TRUE(store.ok()) << store.status();
  auto pools = (*store)->LoadPools();
  ASSERT_TRUE(pools.ok());
  const store::StoredPool* web = nullptr;
  for (const store::StoredPool& p : *pools) {
    if (p.record.name() == "web") web = &p;
  }
  ASSERT_NE(web, nullptr);
  const uint32_t id = web->record.id();
  store::PoolCounters pool;
  std::map<uint32_t, store::PoolCounters> dicts;
  std::map<uint64_t, bool> blocks;
  uint64_t counted = 0;  // Records found in the records family or an indexed block.
  auto records = (*store)->ScanRecords(id, 0, SIZE_MAX);
  ASSERT_TRUE(records.ok());
  for (const store::ScannedRecord& r : *records) {
    ++counted;
    auto view = codec::ParseRecord(r.value);
    ASSERT_TRUE(view.ok());
    ASSERT_EQ(raw.count(r.seq), 1u) << r.seq;
    pool += {1, raw.at(r.seq), r.value.size()};
    if (view->encoding != codec::Encoding::kBlockEntry) {
      if (view->dictionary_id != 0) dicts[view->dictionary_id] += {1, raw.at(r.seq), r.value.size()};
      continue;
    }
    const uint64_t key = r.seq - view->block_back;
    auto block = (*store)->MultiGetBlocks({{id, key}});
    ASSERT_TRUE(block[0].ok()) << key;
    auto block_view = codec::ParseRecord(*block[0]);
    ASSERT_TRUE(block_view.ok());
    store::PoolCounters d{1, raw.at(r.seq), 0};
    if (blocks.emplace(key, true).second) {
      pool.stored_bytes += block[0]->size();
      d.stored_bytes = block[0]->size();
    }
    if (block_view->dictionary_id != 0) dicts[block_view->dictionary_id] += d;
  }
  // Indexed blocks: every record retained in a block's seq range is one of its records
  // (blocks never overlap; sealing deletes the records' values), and a block holds at
  // least one, or it outlived its records.
  const uint64_t indexed_from = web->record.indexed_blocks_from_seq();
  auto indexed = (*store)->ScanIndexedBlocks(id, indexed_from, 0, SIZE_MAX);
  ASSERT_TRUE(indexed.ok()) << indexed.status();
  for (const store::IndexedBlock& block : *indexed) {
    auto view = codec::ParseRecord(block.value);
    ASSERT_TRUE(view.ok());
    store::PoolCounters d{0, 0, block.value.size()};
    for (auto it = raw.lower_bound(block.first_seq);
         it != raw.end() && it->first <= block.last_seq; ++it) {
      d += {1, it->second, 0};
    }
    EXPECT_GT(d.records, 0u) << "indexed block " << block.first_seq << " outlived its records";
    counted += d.records;
    pool += d;
    if (view->dictionary_id != 0) dicts[view->dictionary_id] += d;
  }
  if (GetParam() == Layout::kIndexed || GetParam() == Layout::kEntriesThenIndexed) {
    EXPECT_FALSE(indexed->empty());  // The layout under test is there.
  }
  if (GetParam() == Layout::kEntries) {
    EXPECT_TRUE(indexed->empty());
  }
  EXPECT_EQ(counted, raw.size());
  EXPECT_EQ(web->counters, pool);
  EXPECT_EQ(web->counters.records, raw.size());
  auto dictionaries = (*store)->LoadDictionaries();
  ASSERT_TRUE(dictionaries.ok());
  ASSERT_FALSE(dictionaries->empty());
  for (const storage::DictionaryRecord& d : *dictionaries) {
    auto references = (*store)->DictionaryReferences(d.id());
    ASSERT_TRUE(references.ok());
    EXPECT_EQ(*references, dicts[d.id()]) << "dictionary " << d.id();
  }
}

TEST_P(RetentionTest, MaxAgeExpiresOlderRecordsAndKeepsNewerOnes) {
  Fill();
  // Read twice before they expire: an indexed block read again is kept decoded in
  // memory (ADR 0038), and must not answer for its records once they expired.
  for (int round = 0; round < 2; ++round) {
    ASSERT_TRUE(engine_->Get(Id(0, 0)).ok());
    auto read = engine_->MultiGet({Id(0, 5), Id(0, 1)});
    ASSERT_TRUE(read.ok() && (*read)[0].ok() && (*read)[1].ok());
  }
  *now_ms_ = kStartMs + 9 * 60000;  // The cutoff is call 3's time: it stays.
  SetLimits(/*max_age_seconds=*/6 * 60, 0);  // Calls 0..2 are older than 6 minutes.
  auto expired = engine_->RunRetentionForTest();
  ASSERT_TRUE(expired.ok()) << expired.status();
  const std::map<uint64_t, uint64_t> raw = Retained();
  ASSERT_FALSE(raw.empty());
  const uint64_t first = raw.begin()->first;
  // Whole calls older than the cutoff go (block mode: whole blocks, so a little less).
  EXPECT_LE(first, 3u * kPerCall + 1);
  if (!BlockMode()) {
    EXPECT_EQ(first, 3u * kPerCall + 1);
  }
  EXPECT_GT(first, BlockMode() ? 2u * kPerCall : 3u * kPerCall);
  EXPECT_EQ(*expired, first - 1);
  EXPECT_EQ(raw.rbegin()->first, uint64_t{kCalls} * kPerCall);
  auto gone = engine_->Get(Id(0, 0));
  EXPECT_EQ(gone.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(gone.status().message(), "expired")) << gone.status();
  auto many = engine_->MultiGet({Id(0, 5), Id(3, 0), "web/999999"});
  ASSERT_TRUE(many.ok());
  EXPECT_TRUE(absl::StrContains((*many)[0].status().message(), "expired"));
  ASSERT_TRUE((*many)[1].ok()) << (*many)[1].status();
  EXPECT_EQ((*many)[1]->payload(), lines_[3][0]);
  EXPECT_EQ((*many)[1]->append_time_unix_ms(), kStartMs + 3 * 60000);
  EXPECT_FALSE(absl::StrContains((*many)[2].status().message(), "expired"));
  // A second pass at the same time finds nothing more; the pool's info says where it
  // starts now.
  EXPECT_EQ(*engine_->RunRetentionForTest(), 0u);
  const v1::PoolInfo info = *engine_->GetPool("web");
  EXPECT_EQ(info.oldest_retained_id(), "web/" + std::to_string(first));
  Reopen();  // The mark is durable.
  EXPECT_TRUE(absl::StrContains(engine_->Get(Id(0, 1)).status().message(), "expired"));
  ExpectCountersEqualRecount(raw);
}

TEST_P(RetentionTest, MaxBytesKeepsThePoolWithinItsLimitPlusOneBlock) {
  Fill();
  const uint64_t before = engine_->GetPool("web")->stats().stored_bytes();
  const uint64_t limit = before / 3;
  SetLimits(0, limit);
  for (int pass = 0; pass < 5; ++pass) ASSERT_TRUE(engine_->RunRetentionForTest().ok());
  const uint64_t after = engine_->GetPool("web")->stats().stored_bytes();
  // Block mode deletes whole blocks and never the open tail: what is left may exceed
  // the limit by the block that straddles it and the tail (each under 1 KiB).
  EXPECT_LE(after, limit + (BlockMode() ? 2048 : 0));
  EXPECT_GE(after + 2048, limit);  // Not more than about a block below it.
  const std::map<uint64_t, uint64_t> raw = Retained();
  EXPECT_EQ(raw.rbegin()->first, uint64_t{kCalls} * kPerCall);  // The newest stay.
  ExpectCountersEqualRecount(raw);
}

TEST_P(RetentionTest, DiskSpaceComesBack) {
  options_.retention.max_records_per_pass = 100000;
  Fill();
  Fill();
  Reopen();  // Into table files.
  auto sst = [&] {
    uint64_t bytes = 0;
    for (const auto& [family, n] : engine_->StoreProperty("rocksdb.total-sst-files-size")) {
      if (family == "records" || family == "blocks") bytes += n;
    }
    return bytes;
  };
  const uint64_t before = sst();
  ASSERT_GT(before, 0u);
  *now_ms_ += 3600 * 1000;
  SetLimits(60, 0);  // Everything is older than a minute.
  ASSERT_TRUE(engine_->RunRetentionForTest().ok());
  EXPECT_LT(sst(), before / 4);
}

// A backlog drained over many passes is compacted when it is drained, not after each
// pass (which would rewrite the pool's remaining table files once per pass).
TEST_P(RetentionTest, ABacklogIsCompactedOnceItIsDrained) {
  options_.retention.max_records_per_pass = 50;
  Reopen();
  Fill();
  Reopen();  // Into table files.
  *now_ms_ += 3600 * 1000;
  SetLimits(60, 0);
  int expiring_passes = 0;
  for (int pass = 0; pass < 100; ++pass) {
    auto expired = engine_->RunRetentionForTest();
    ASSERT_TRUE(expired.ok()) << expired.status();
    if (*expired == 0) break;
    ++expiring_passes;
    if (GetParam() == Layout::kRecord && *expired == 50) {
      EXPECT_EQ(engine_->RetentionStatistics().compactions, 0u) << "pass " << pass;
    }
  }
  EXPECT_GE(expiring_passes, 5);
  const uint64_t compactions = engine_->RetentionStatistics().compactions;
  EXPECT_GE(compactions, 1u);
  // Block mode cuts between blocks, so a pass may expire fewer records than it may
  // while behind, and that counts as drained; record mode compacts exactly once.
  if (GetParam() == Layout::kRecord) {
    EXPECT_EQ(compactions, 1u);
  }
  EXPECT_LT(compactions, static_cast<uint64_t>(expiring_passes));
  // Everything went but, in block mode, the open tail (which retention never cuts).
  EXPECT_LT(Retained().size(), BlockMode() ? size_t{kPerCall} : size_t{1});
}

INSTANTIATE_TEST_SUITE_P(Layouts, RetentionTest,
                         ::testing::Values(Layout::kRecord, Layout::kIndexed,
                                           Layout::kEntries, Layout::kEntriesThenIndexed),
                         [](const ::testing::TestParamInfo<Layout>& info) {
                           switch (info.param) {
                             case Layout::kRecord: return "Record";
                             case Layout::kIndexed: return "IndexedBlocks";
                             case Layout::kEntries: return "EntryBlocks";
                             case Layout::kEntriesThenIndexed: return "EntryThenIndexedBlocks";
                           }
                           return "";
                         });

}  // namespace
}  // namespace dictlog::engine
