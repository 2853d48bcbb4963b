// Block mode through LogEngine over a real RocksDB: appends become readable at once,
// are packed into blocks behind the scenes, and read back through Get, MultiGet, Scan
// and GetFrame, across dictionary training, re-compression, gc and restarts.
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "common/file_damage.h"
#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "codec/test_dictionary.h"
#include "server/engine/log_engine.h"
#include "server/pool/names.h"
#include "server/store/store.h"

namespace dictlog::engine {
namespace {

using ::absl::StatusCode;

class BlockModeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.store.path = FreshTestDir();
    options_.auto_trainer.min_bytes_multiple = 8;  // 8 x 4 KiB = 32 KiB.
    options_.default_pool_options.set_dictionary_bytes(4096);
    options_.routes = {{"", "app-", "apps"}};
    v1::PoolOptions block;
    block.set_storage_mode(v1::STORAGE_MODE_BLOCK);
    block.set_block_bytes(2048);
    options_.pools = {{"apps", block}};
    Reopen();
  }

  void Reopen() {
    engine_.reset();
    auto engine = LogEngine::Open(options_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
  }

  // Appends lines alternately to categories app-a and app-b, in batches of 50.
  std::vector<std::string> Append(const std::vector<std::string>& lines) {
    std::vector<std::string> ids;
    for (size_t start = 0; start < lines.size(); start += 50) {
      std::vector<AppendInput> batch;
      for (size_t i = start; i < std::min(lines.size(), start + 50); ++i) {
        batch.push_back({i % 2 == 0 ? "app-a" : "app-b", lines[i]});
      }
      auto appended = engine_->Append(batch);
      EXPECT_TRUE(appended.ok()) << appended.status();
      if (appended.ok()) ids.insert(ids.end(), appended->begin(), appended->end());
    }
    return ids;
  }

  void ExpectAllReadBack(const std::vector<std::string>& ids,
                         const std::vector<std::string>& lines) {
    for (size_t start = 0; start < ids.size(); start += 1000) {
      std::vector<std::string> chunk(ids.begin() + start,
                                     ids.begin() + std::min(ids.size(), start + 1000));
      auto results = engine_->MultiGet(chunk);
      ASSERT_TRUE(results.ok()) << results.status();
      for (size_t i = 0; i < chunk.size(); ++i) {
        ASSERT_TRUE((*results)[i].ok()) << chunk[i] << ": " << (*results)[i].status();
        ASSERT_EQ((*results)[i]->payload(), lines[start + i]) << chunk[i];
        ASSERT_EQ((*results)[i]->category(), (start + i) % 2 == 0 ? "app-a" : "app-b");
      }
    }
  }

  std::vector<v1::Record> ScanCategory(const std::string& category) {
    std::vector<v1::Record> all;
    ScanSpec spec;
    spec.category = category;
    absl::Status status = engine_->Scan(spec, [&](std::vector<v1::Record> chunk) {
      for (auto& r : chunk) all.push_back(std::move(r));
      return absl::OkStatus();
    });
    EXPECT_TRUE(status.ok()) << status;
    return all;
  }

  EngineOptions options_;
  std::unique_ptr<LogEngine> engine_;
};

// After a damaged write-ahead log the pool's seqs skip 2^32 (ADR 0044): its blocks
// and tail from before, and those written after the skip, all read back.
TEST_F(BlockModeTest, RecordsOnBothSidesOfASkipAfterADamagedLogReadBack) {
  const std::vector<std::string> lines = codec::SyntheticLogLines(900, 3);
  const std::vector<std::string> before(lines.begin(), lines.begin() + 401);
  const std::vector<std::string> ids = Append(before);  // Blocks and an open tail.
  ASSERT_TRUE(engine_->Flush().ok());
  const std::vector<std::string> lost = Append({lines.begin() + 401, lines.begin() + 500});
  engine_.reset();
  FlipByte(LargestWal(options_.store.path), 10);  // Takes every write after the flush.
  Reopen();
  ASSERT_GE(engine_->WalDroppedAtOpen().reports, 1u);
  EXPECT_EQ(engine_->Get(lost.front()).status().code(), StatusCode::kNotFound);
  const std::vector<std::string> after_lines(lines.begin() + 500, lines.end());
  const std::vector<std::string> after = Append(after_lines);
  ASSERT_EQ(after.size(), after_lines.size());
  auto first_after = pool::ParseRecordId(after.front());
  ASSERT_TRUE(first_after.ok());
  EXPECT_GE(first_after->seq, uint64_t{1} << 32);
  ExpectAllReadBack(ids, before);
  ExpectAllReadBack(after, after_lines);
  Reopen();
  ExpectAllReadBack(ids, before);
  ExpectAllReadBack(after, after_lines);
  EXPECT_EQ(ScanCategory("app-a").size(), 201u + 200u);
}

TEST_F(BlockModeTest, EveryReadPathReturnsWhatWasAppended) {
  const std::vector<std::string> lines = codec::SyntheticLogLines(400, 1);
  const std::vector<std::string> ids = Append(lines);
  ASSERT_EQ(ids.size(), lines.size());
  ExpectAllReadBack(ids, lines);
  // Unary Get of the first record (packed long ago) and of the newest (in the tail).
  for (size_t i : {size_t{0}, lines.size() - 1}) {
    auto record = engine_->Get(ids[i]);
    ASSERT_TRUE(record.ok()) << record.status();
    EXPECT_EQ(record->payload(), lines[i]);
  }
  // Scan by category keeps append order and filters by each record's own category.
  std::vector<v1::Record> b = ScanCategory("app-b");
  ASSERT_EQ(b.size(), lines.size() / 2);
  for (size_t k = 0; k < b.size(); ++k) {
    EXPECT_EQ(b[k].id(), ids[2 * k + 1]);
    EXPECT_EQ(b[k].payload(), lines[2 * k + 1]);
  }
  // A missing id is NOT_FOUND next to found ones.
  auto mixed = engine_->MultiGet({ids[5], "apps/99999"});
  ASSERT_TRUE(mixed.ok());
  EXPECT_TRUE((*mixed)[0].ok());
  EXPECT_EQ((*mixed)[1].status().code(), StatusCode::kNotFound);
  // Behind the scenes the oldest records are in indexed blocks (no value of their own
  // in the records family; ADR 0016), the newest single.
  const uint32_t pool_id = 1;  // "apps", the first pool created.
  engine_.reset();
  auto store = store::Store::Open(options_.store);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ((*store)->GetRecord({pool_id, 1}).status().code(), StatusCode::kNotFound);
  const uint64_t seq1 = 1;
  auto found = (*store)->FindIndexedBlocks(pool_id, 1, {&seq1, 1});
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->block_of[0], 0);
  auto last = codec::ParseRecord(*(*store)->GetRecord({pool_id, lines.size()}));
  ASSERT_TRUE(last.ok());
  EXPECT_NE(last->encoding, codec::Encoding::kBlockEntry);
}

// Blocks read again are kept decompressed (ADR 0038) within the block cache's budget:
// what they hold comes out of RocksDB's block cache, in whole MiB, and reads go on
// answering the same records.
TEST_F(BlockModeTest, DecodedBlocksComeOutOfTheBlockCache) {
  options_.store.block_cache_bytes = size_t{8} << 20;
  Reopen();
  auto capacity = [&] {
    const auto values = engine_->StoreProperty("rocksdb.block-cache-capacity");
    return values.empty() ? uint64_t{0} : values.front().second;
  };
  const std::vector<std::string> lines = codec::SyntheticLogLines(1500, 3);
  const std::vector<std::string> ids = Append(lines);
  ASSERT_EQ(ids.size(), lines.size());
  EXPECT_EQ(capacity(), uint64_t{8} << 20);
  ExpectAllReadBack(ids, lines);  // Each block offered once: not kept yet.
  EXPECT_EQ(capacity(), uint64_t{8} << 20);
  ExpectAllReadBack(ids, lines);  // Offered again: kept.
  const uint64_t shrunk = capacity();
  EXPECT_LT(shrunk, uint64_t{8} << 20);
  EXPECT_GE(shrunk, uint64_t{4} << 20);  // The decoded cache gets half the budget at most.
  EXPECT_EQ(shrunk % (1 << 20), 0u);
  ExpectAllReadBack(ids, lines);
}

// Appends from several threads finish out of seq order; sealed blocks still never
// overlap (a late record is not packed past), so every record is found by its seq.
TEST_F(BlockModeTest, ConcurrentAppendsSealNonOverlappingBlocks) {
  constexpr int kThreads = 4;
  constexpr int kBatches = 60;
  const std::vector<std::string> lines = codec::SyntheticLogLines(kThreads * kBatches * 7, 21);
  std::vector<std::vector<std::pair<std::string, std::string>>> appended(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int b = 0; b < kBatches; ++b) {
        std::vector<AppendInput> batch;
        const size_t first = (t * kBatches + b) * 7;
        for (size_t i = first; i < first + 7; ++i) batch.push_back({"app-a", lines[i]});
        auto ids = engine_->Append(batch);
        ASSERT_TRUE(ids.ok()) << ids.status();
        for (size_t k = 0; k < 7; ++k) appended[t].push_back({(*ids)[k], lines[first + k]});
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& mine : appended) {
      std::vector<std::string> ids;
      for (const auto& [id, line] : mine) ids.push_back(id);
      auto results = engine_->MultiGet(ids);
      ASSERT_TRUE(results.ok()) << results.status();
      for (size_t i = 0; i < mine.size(); ++i) {
        ASSERT_TRUE((*results)[i].ok()) << ids[i] << ": " << (*results)[i].status();
        ASSERT_EQ((*results)[i]->payload(), mine[i].second) << ids[i];
      }
    }
    Reopen();
  }
  engine_.reset();
  auto store = store::Store::Open(options_.store);
  ASSERT_TRUE(store.ok()) << store.status();
  auto blocks = (*store)->ScanIndexedBlocks(1, 1, 1, 100000);
  ASSERT_TRUE(blocks.ok()) << blocks.status();
  EXPECT_GT(blocks->size(), 20u);
  uint64_t previous_last = 0;
  for (const store::IndexedBlock& block : *blocks) {
    EXPECT_GT(block.first_seq, previous_last) << "blocks overlap";
    EXPECT_GE(block.last_seq, block.first_seq);
    previous_last = block.last_seq;
  }
}

// The records family's entries (puts and deletions) in its memtable.
uint64_t RecordsFamilyEntries(const LogEngine& engine, const char* property) {
  for (const auto& [family, value] : engine.StoreProperty(property)) {
    if (family == "records") return value;
  }
  ADD_FAILURE() << "no records family";
  return 0;
}

// A large append seals its own records straight into blocks (ADR 0021): no value of
// their own is written and deleted again, and what does not fill a block (its last
// records, less than 2 KiB) goes to the tail. Counters, ids and reads are those of
// records written one by one and sealed.
TEST_F(BlockModeTest, LargeAppendsSealStraightIntoBlocks) {
  const std::vector<std::string> lines = codec::SyntheticLogLines(400, 31);
  std::vector<AppendInput> batch;
  uint64_t raw = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    batch.push_back({i % 2 == 0 ? "app-a" : "app-b", lines[i]});
    raw += lines[i].size();
  }
  auto ids = engine_->Append(batch, "large-1");
  ASSERT_TRUE(ids.ok()) << ids.status();
  // At most a block's worth of small records was written single (the tail).
  EXPECT_LT(RecordsFamilyEntries(*engine_, "rocksdb.num-entries-active-mem-table"),
            2048u / 60);
  EXPECT_EQ(RecordsFamilyEntries(*engine_, "rocksdb.num-deletes-active-mem-table"), 0u);
  // A retry writes nothing and answers the same ids.
  auto again = engine_->Append(batch, "large-1");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *ids);
  // The first dictionary's re-compression rewrites the blocks: let it finish first.
  ASSERT_TRUE(engine_->WaitForAutoTrainingForTest(absl::Seconds(60)));
  ASSERT_TRUE(engine_->WaitForRecompressForTest("apps", absl::Seconds(60)));
  const v1::PoolInfo info = *engine_->GetPool("apps");
  EXPECT_EQ(info.stats().records(), lines.size());
  EXPECT_EQ(info.stats().raw_bytes(), raw);
  ExpectAllReadBack(*ids, lines);
  std::vector<v1::Record> b = ScanCategory("app-b");
  ASSERT_EQ(b.size(), lines.size() / 2);
  EXPECT_EQ(b.back().id(), ids->back());
  auto verified = engine_->Verify({}, [] { return false; });
  ASSERT_TRUE(verified.ok()) << verified.status();
  EXPECT_EQ(verified->records_checked(), lines.size());
  EXPECT_EQ(verified->corrupt_records(), 0u);
  // The store's counters say the same after a restart; the tail is recovered.
  Reopen();
  EXPECT_EQ(engine_->GetPool("apps")->stats().records(), info.stats().records());
  EXPECT_EQ(engine_->GetPool("apps")->stats().stored_bytes(), info.stats().stored_bytes());
  ExpectAllReadBack(*ids, lines);
}

// Verify's records pass and its indexed-blocks pass read at different moments. A large
// append made between them (from the cancellation check after the records pass has
// counted the tail) seals that tail into an indexed block: the blocks pass does not
// count those records again. Before, it counted 420 of the 410 stored.
TEST_F(BlockModeTest, VerifyCountsEachRecordOnceWhileAnAppendSeals) {
  const std::vector<std::string> tail = codec::SyntheticLogLines(10, 41);
  ASSERT_EQ(Append(tail).size(), tail.size());
  const std::vector<std::string> lines = codec::SyntheticLogLines(400, 42);
  std::vector<AppendInput> large;  // Views into `lines`, which outlives the calls.
  for (const std::string& line : lines) large.push_back({"app-a", line});
  int calls = 0;
  auto verified = engine_->Verify({}, [&] {
    // The second call comes after the records pass read the tail.
    if (++calls == 2) {
      EXPECT_TRUE(engine_->Append(large).ok());
    }
    return false;
  });
  ASSERT_TRUE(verified.ok()) << verified.status();
  ASSERT_GE(calls, 2);
  // The tail once, and the new records that either pass found (all of them, or fewer).
  EXPECT_GE(verified->records_checked(), tail.size());
  EXPECT_LE(verified->records_checked(), tail.size() + large.size());
  EXPECT_EQ(verified->corrupt_records(), 0u);
  auto again = engine_->Verify({}, [] { return false; });
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->records_checked(), tail.size() + large.size());
}

// Small appends (into the tail), a large one that seals its own blocks, a record too
// large for a block inside it, and more small ones: the tail's records before the
// large append are sealed as a short block, none crosses its blocks, and every record
// reads back, before and after a restart.
TEST_F(BlockModeTest, TailRecordsNeverShareABlockAcrossAnAppendsOwnBlocks) {
  std::vector<std::string> lines = codec::SyntheticLogLines(600, 32);
  lines[300] = std::string(5000, 'L');  // Single: its payload alone fills a block.
  std::vector<std::string> ids;
  auto append = [&](size_t begin, size_t end) {
    std::vector<AppendInput> batch;
    for (size_t i = begin; i < end; ++i) {
      batch.push_back({i % 2 == 0 ? "app-a" : "app-b", lines[i]});
    }
    auto appended = engine_->Append(batch);
    ASSERT_TRUE(appended.ok()) << appended.status();
    ids.insert(ids.end(), appended->begin(), appended->end());
  };
  for (size_t i = 0; i < 9; ++i) append(i, i + 1);  // About 1 KiB: stays in the tail.
  append(9, 509);
  for (size_t i = 509; i < 600; i += 3) append(i, std::min<size_t>(600, i + 3));
  ExpectAllReadBack(ids, lines);
  Reopen();
  ExpectAllReadBack(ids, lines);
  engine_.reset();
  auto store = store::Store::Open(options_.store);
  ASSERT_TRUE(store.ok()) << store.status();
  auto blocks = (*store)->ScanIndexedBlocks(1, 1, 1, 100000);
  ASSERT_TRUE(blocks.ok()) << blocks.status();
  ASSERT_FALSE(blocks->empty());
  EXPECT_EQ(blocks->front().first_seq, 1u);
  EXPECT_EQ(blocks->front().last_seq, 9u);  // The short block before the cut.
  uint64_t previous_last = 0;
  for (const store::IndexedBlock& block : *blocks) {
    EXPECT_GT(block.first_seq, previous_last) << "blocks overlap";
    previous_last = block.last_seq;
  }
  EXPECT_TRUE((*store)->GetRecord({1, 301}).ok());  // The large record, single.
}

// MultiGet looks for sealed records in their blocks first. A record that fills a block
// alone stays single, inside a block's seq range: it is read from the records family
// after its block search misses, within the response budget like any other record.
TEST_F(BlockModeTest, MultiGetFindsSingleRecordsBetweenBlocksWithinTheBudget) {
  std::vector<std::string> lines = codec::SyntheticLogLines(300, 51);
  for (size_t i = 5; i < lines.size(); i += 37) lines[i] = std::string(5000, 'a' + i % 26);
  const std::vector<std::string> ids = Append(lines);
  ASSERT_EQ(ids.size(), lines.size());
  ExpectAllReadBack(ids, lines);
  Reopen();
  ExpectAllReadBack(ids, lines);

  constexpr size_t kBudget = 16 << 10;
  options_.max_response_bytes = kBudget;
  Reopen();
  auto results = engine_->MultiGet(ids);
  ASSERT_TRUE(results.ok()) << results.status();
  size_t answered = 0;
  uint64_t bytes = 0;
  while (answered < ids.size() && (*results)[answered].ok()) {
    ASSERT_EQ((*results)[answered]->payload(), lines[answered]) << ids[answered];
    bytes += lines[answered].size();
    ++answered;
  }
  EXPECT_GT(answered, 5u);  // The first large record among them.
  EXPECT_LT(answered, ids.size());
  EXPECT_LE(bytes, kBudget);
  EXPECT_GT(bytes + lines[answered].size(), kBudget);  // Admitted in request order.
  for (size_t i = answered; i < ids.size(); ++i) {
    EXPECT_EQ((*results)[i].status().code(), StatusCode::kResourceExhausted) << ids[i];
  }
}

// Get looks in the blocks first for a seq below the pool's sealed_below(); a record
// that fills a block alone is not in one, and is found by reading again records family
// first.
TEST_F(BlockModeTest, GetFindsSingleRecordsBetweenBlocks) {
  std::vector<std::string> lines = codec::SyntheticLogLines(300, 53);
  for (size_t i = 5; i < lines.size(); i += 37) lines[i] = std::string(5000, 'a' + i % 26);
  const std::vector<std::string> ids = Append(lines);
  ASSERT_EQ(ids.size(), lines.size());
  for (int pass = 0; pass < 2; ++pass) {  // From the memtable, then from table files.
    for (size_t i = 0; i < ids.size(); ++i) {
      auto record = engine_->Get(ids[i]);
      ASSERT_TRUE(record.ok()) << ids[i] << ": " << record.status();
      ASSERT_EQ(record->payload(), lines[i]) << ids[i];
      ASSERT_EQ(record->category(), i % 2 == 0 ? "app-a" : "app-b");
    }
    Reopen();
  }
  // Past the last seq: no record, with or without a block around it.
  auto parsed = pool::ParseRecordId(ids.back());
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(engine_->Get(pool::FormatRecordId(parsed->pool, parsed->seq + 1)).status().code(),
            StatusCode::kNotFound);
}

// Seals move records from their single values into blocks while MultiGets and Gets
// look for them blocks first: every acknowledged record is found, whichever side of a
// seal its reads fall on (blocks, then the records family, then blocks again).
TEST_F(BlockModeTest, ReadsWhileSealingFindEveryAcknowledgedRecord) {
  const std::vector<std::string> lines = codec::SyntheticLogLines(1200, 52);
  absl::Mutex mu;
  std::vector<std::string> acknowledged;  // Ids, in append order.
  size_t read_rounds = 0;                 // Under mu.
  std::atomic<bool> done{false};
  std::thread appender([&] {
    for (size_t i = 0; i < lines.size(); i += 2) {  // Two records a call: seals follow.
      auto ids = engine_->Append({{"app-a", lines[i]}, {"app-a", lines[i + 1]}});
      ASSERT_TRUE(ids.ok()) << ids.status();
      absl::MutexLock lock(&mu);
      acknowledged.insert(acknowledged.end(), ids->begin(), ids->end());
      if (i == lines.size() / 2) {
        // Halfway, until the reader has read a round (a busy host may not have run it
        // yet), so that reads do overlap the seals of the second half.
        mu.AwaitWithTimeout(absl::Condition(
                                +[](size_t* rounds) { return *rounds > 0; }, &read_rounds),
                            absl::Seconds(30));
      }
    }
    done = true;
  });
  {
    // Until the first acknowledgement: rounds with nothing to read would use up the
    // bound below before a slow (sanitized) appender acknowledged anything.
    absl::MutexLock lock(&mu);
    mu.AwaitWithTimeout(absl::Condition(+[](std::vector<std::string>* ids) {
                          return !ids->empty();
                        }, &acknowledged),
                        absl::Seconds(30));
  }
  size_t reads = 0;
  for (int round = 0; round < 100000 && !done; ++round) {
    std::vector<std::string> ids;
    {
      absl::MutexLock lock(&mu);
      // The newest 64 (tail, or being sealed) and every 7th before them.
      const size_t n = acknowledged.size();
      for (size_t i = n > 64 ? n - 64 : 0; i < n; ++i) ids.push_back(acknowledged[i]);
      for (size_t i = round % 7; i + 64 < n; i += 7) ids.push_back(acknowledged[i]);
    }
    if (ids.empty()) continue;
    auto results = engine_->MultiGet(ids);
    ASSERT_TRUE(results.ok()) << results.status();
    for (size_t k = 0; k < ids.size(); ++k) {
      ASSERT_TRUE((*results)[k].ok()) << ids[k] << ": " << (*results)[k].status();
      auto parsed = pool::ParseRecordId(ids[k]);
      ASSERT_TRUE(parsed.ok());
      ASSERT_EQ((*results)[k]->payload(), lines[parsed->seq - 1]) << ids[k];
    }
    for (size_t k = 0; k < ids.size(); k += 5) {  // Some of the same alone.
      auto record = engine_->Get(ids[k]);
      ASSERT_TRUE(record.ok()) << ids[k] << ": " << record.status();
      ASSERT_EQ(record->payload(), (*results)[k]->payload()) << ids[k];
    }
    reads += ids.size();
    absl::MutexLock lock(&mu);
    ++read_rounds;
  }
  appender.join();
  EXPECT_GT(reads, 0u);
  engine_.reset();  // The reads above looked in blocks: most records were sealed.
  auto store = store::Store::Open(options_.store);
  ASSERT_TRUE(store.ok()) << store.status();
  auto blocks = (*store)->ScanIndexedBlocks(1, 1, 1, 100000);
  ASSERT_TRUE(blocks.ok()) << blocks.status();
  ASSERT_FALSE(blocks->empty());
  EXPECT_GT(blocks->back().last_seq, lines.size() / 2);
}

uint64_t FamilyProperty(const LogEngine& engine, const char* family, const char* property) {
  for (const auto& [name, value] : engine.StoreProperty(property)) {
    if (name == family) return value;
  }
  ADD_FAILURE() << "no family " << family;
  return 0;
}

// A large append's blocks are written before the pool's dictionary exists; Recompress
// re-encodes them, and compacts the pool's ranges before it shows DONE, so the values
// it replaced leave the SST files.
TEST_F(BlockModeTest, RecompressLeavesNoReplacedBlocksOnDisk) {
  options_.auto_train = false;
  Reopen();
  const std::vector<std::string> lines = codec::SyntheticLogLines(2000, 33);
  std::vector<AppendInput> batch;
  for (const std::string& line : lines) batch.push_back({"app-a", line});
  ASSERT_TRUE(engine_->Append(batch).ok());
  Reopen();  // Flushes the blocks into an SST file.
  const uint64_t before = FamilyProperty(*engine_, "blocks", "rocksdb.total-sst-files-size");
  ASSERT_GT(before, 0u);
  v1::TrainDictionaryRequest train;
  train.set_pool("apps");
  auto trained = engine_->TrainDictionary(train);
  ASSERT_TRUE(trained.ok()) << trained.status();
  v1::ActivateDictionaryRequest activate;
  activate.set_pool("apps");
  activate.set_id(trained->dictionary().id());
  ASSERT_TRUE(engine_->ActivateDictionary(activate).ok());
  v1::RecompressRequest request;
  request.set_pool("apps");
  ASSERT_TRUE(engine_->Recompress(request).ok());
  ASSERT_TRUE(engine_->WaitForRecompressForTest("apps", absl::Seconds(60)));
  ASSERT_EQ(engine_->GetRecompressStatus(request)->state(), v1::RecompressStatus::DONE);
  const uint64_t after = FamilyProperty(*engine_, "blocks", "rocksdb.total-sst-files-size");
  EXPECT_LT(after, before);  // Only the smaller, re-encoded blocks.
  std::vector<std::string> ids;
  for (size_t i = 0; i < lines.size(); ++i) ids.push_back("apps/" + std::to_string(i + 1));
  auto results = engine_->MultiGet(ids);
  ASSERT_TRUE(results.ok());
  for (size_t i = 0; i < lines.size(); ++i) {
    ASSERT_TRUE((*results)[i].ok()) << ids[i];
    ASSERT_EQ((*results)[i]->payload(), lines[i]);
  }
}

// A block that cannot be read (its stored value damaged) is left as it is stored and
// counted once, by its first seq, in the job's status; the blocks before and after it
// are re-encoded and read back.
TEST_F(BlockModeTest, RecompressLeavesAnUnreadableBlockAndReencodesTheRest) {
  options_.auto_train = false;
  options_.recompressor.batch_records = 64;  // Four blocks a step.
  Reopen();
  const std::vector<std::string> lines = codec::SyntheticLogLines(2000, 35);
  const auto append_all = [&](const std::vector<std::string>& part) {
    std::vector<AppendInput> batch;
    for (const std::string& line : part) batch.push_back({"app-a", line});
    auto ids = engine_->Append(batch);  // Large: sealed straight into indexed blocks.
    EXPECT_TRUE(ids.ok()) << ids.status();
    return ids.ok() ? *ids : std::vector<std::string>();
  };
  const std::vector<std::string> first(lines.begin(), lines.begin() + 1000);
  const std::vector<std::string> second(lines.begin() + 1000, lines.end());
  const std::vector<std::string> first_ids = append_all(first);
  engine_.reset();
  uint64_t damaged_seq = 0;
  {
    auto store = store::Store::Open(options_.store);
    ASSERT_TRUE(store.ok()) << store.status();
    auto pools = (*store)->LoadPools();
    ASSERT_TRUE(pools.ok() && pools->size() == 1) << pools.status();
    const store::StoredPool& apps = pools->front();
    ASSERT_EQ(apps.last_seq, first.size());
    damaged_seq = apps.last_seq + 1;
    store::BlockWrite bad;  // Ten records' block whose frame header is cut short.
    bad.pool_id = apps.record.id();
    bad.first_seq = damaged_seq;
    bad.last_seq = damaged_seq + 9;
    bad.records = 10;
    bad.raw_bytes = 10;
    bad.value = "\x01\xff";
    ASSERT_TRUE((*store)->WriteRecords({}, nullptr, nullptr, {bad}).ok());
  }
  Reopen();
  const std::string damaged_id = "apps/" + std::to_string(damaged_seq);
  ASSERT_EQ(engine_->Get(damaged_id).status().code(), StatusCode::kDataLoss);
  const std::vector<std::string> second_ids = append_all(second);
  v1::TrainDictionaryRequest train;
  train.set_pool("apps");
  train.set_activate(true);
  auto trained = engine_->TrainDictionary(train);
  ASSERT_TRUE(trained.ok() && trained->activated()) << trained.status();

  v1::RecompressRequest request;
  request.set_pool("apps");
  ASSERT_TRUE(engine_->Recompress(request).ok());
  ASSERT_TRUE(engine_->WaitForRecompressForTest("apps", absl::Seconds(60)));
  auto job = engine_->GetRecompressStatus(request);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->state(), v1::RecompressStatus::DONE) << job->error();
  EXPECT_EQ(job->unreadable(), 1u);
  ASSERT_EQ(job->unreadable_seqs_size(), 1);
  EXPECT_EQ(job->unreadable_seqs(0), damaged_seq);
  EXPECT_EQ(job->records_done(), lines.size());  // The unreadable block's are not known.
  EXPECT_GT(job->records_rewritten(), lines.size() - 2048 / 60);  // All but a tail.
  auto dictionaries = engine_->ListDictionaries({});
  ASSERT_TRUE(dictionaries.ok()) << dictionaries.status();
  ASSERT_EQ(dictionaries->dictionaries_size(), 1);
  EXPECT_EQ(dictionaries->dictionaries(0).records(), job->records_rewritten());
  for (const auto& [ids, part] : {std::pair{first_ids, first}, std::pair{second_ids, second}}) {
    auto results = engine_->MultiGet(ids);
    ASSERT_TRUE(results.ok()) << results.status();
    for (size_t i = 0; i < ids.size(); ++i) {
      ASSERT_TRUE((*results)[i].ok()) << ids[i] << ": " << (*results)[i].status();
      ASSERT_EQ((*results)[i]->payload(), part[i]) << ids[i];
    }
  }
  EXPECT_EQ(engine_->Get(damaged_id).status().code(), StatusCode::kDataLoss);
}

TEST_F(BlockModeTest, PackedRecordsExportAsStandardFrames) {
  const std::vector<std::string> lines = codec::SyntheticLogLines(100, 2);
  const std::vector<std::string> ids = Append(lines);
  auto frame = engine_->GetFrame(ids[0]);
  ASSERT_TRUE(frame.ok()) << frame.status();
  EXPECT_EQ(frame->dictionary_id(), 0u);  // Exported alone, without the block's dict.
  std::string out(lines[0].size() + 16, '\0');
  const size_t n = ZSTD_decompress(out.data(), out.size(), frame->frame().data(),
                                   frame->frame().size());
  ASSERT_FALSE(ZSTD_isError(n)) << ZSTD_getErrorName(n);
  out.resize(n);
  EXPECT_EQ(out, lines[0]);
}

TEST_F(BlockModeTest, BlocksWithADictionaryBeatSingleRecordsAndSurviveRestarts) {
  v1::PoolOptions record_mode;
  record_mode.set_storage_mode(v1::STORAGE_MODE_RECORD);
  ASSERT_TRUE(engine_->CreatePool("singles", record_mode).ok());
  const std::vector<std::string> lines = codec::SyntheticLogLines(1500, 3);
  std::vector<AppendInput> to_singles;
  for (const std::string& line : lines) to_singles.push_back({"singles", line});
  for (size_t i = 0; i < to_singles.size(); i += 500) {
    ASSERT_TRUE(engine_->Append(absl::MakeSpan(to_singles).subspan(i, 500)).ok());
  }
  std::vector<std::string> ids = Append(lines);
  ASSERT_TRUE(engine_->WaitForAutoTrainingForTest(absl::Seconds(60)));
  ASSERT_NE(engine_->GetPool("apps")->active_dictionary_id(), 0u);
  // Both pools re-compress with their dictionaries; then compare stored bytes.
  for (const char* pool : {"apps", "singles"}) {
    v1::RecompressRequest request;
    request.set_pool(pool);
    ASSERT_TRUE(engine_->Recompress(request).ok());
    ASSERT_TRUE(engine_->WaitForRecompressForTest(pool, absl::Seconds(60)));
    auto status = engine_->GetRecompressStatus(request);
    ASSERT_EQ(status->state(), v1::RecompressStatus::DONE) << status->error();
  }
  const v1::PoolInfo blocks = *engine_->GetPool("apps");
  const v1::PoolInfo singles = *engine_->GetPool("singles");
  EXPECT_EQ(blocks.stats().raw_bytes(), singles.stats().raw_bytes());
  EXPECT_LT(blocks.stats().stored_bytes(), singles.stats().stored_bytes());
  // Every record names (through its block) the active dictionary: the older ones are
  // unreferenced and gc retires them.
  auto gc = engine_->GcDictionaries({});
  ASSERT_TRUE(gc.ok()) << gc.status();
  ExpectAllReadBack(ids, lines);
  Reopen();
  ExpectAllReadBack(ids, lines);
  EXPECT_EQ(engine_->GetPool("apps")->stats().stored_bytes(), blocks.stats().stored_bytes());
  // Appends after the restart pack the recovered tail with them.
  const std::vector<std::string> more = codec::SyntheticLogLines(100, 4);
  std::vector<std::string> more_ids = Append(more);
  ExpectAllReadBack(more_ids, more);
  ExpectAllReadBack(ids, lines);
}

TEST_F(BlockModeTest, StorageModeIsFixedButBlockSizeMayChange) {
  v1::PoolOptions to_record;
  to_record.set_storage_mode(v1::STORAGE_MODE_RECORD);
  EXPECT_EQ(engine_->UpdatePool("apps", to_record).status().code(),
            StatusCode::kFailedPrecondition);
  v1::PoolOptions bigger;
  bigger.set_block_bytes(8192);
  auto updated = engine_->UpdatePool("apps", bigger);
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ(updated->options().block_bytes(), 8192u);
  EXPECT_EQ(updated->options().storage_mode(), v1::STORAGE_MODE_BLOCK);
  v1::PoolOptions too_big;
  too_big.set_block_bytes(1 << 20);
  EXPECT_EQ(engine_->UpdatePool("apps", too_big).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dictlog::engine
