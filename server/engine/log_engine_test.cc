#include "server/engine/log_engine.h"

#include <algorithm>
#include <filesystem>
#include <functional>


#include "absl/strings/str_cat.h"
#include "common/file_damage.h"
#include "common/test_dir.h"
#include "server/store/fault_injection_fs.h"
#include "gtest/gtest.h"
#include "codec/record_codec.h"

namespace dictlog::engine {
namespace {

using ::absl::StatusCode;

class LogEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.store.path = FreshTestDir();
    options_.max_record_bytes = 1000;
    options_.max_batch_records = 5;
    options_.max_multiget_ids = 4;
    options_.routes = {{"", "app-", "apps"}};
    Reopen();
  }

  void Reopen() {
    engine_.reset();
    auto engine = LogEngine::Open(options_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
  }

  std::string AppendOne(absl::string_view category, absl::string_view payload) {
    AppendInput input{category, payload};
    auto ids = engine_->Append({&input, 1});
    EXPECT_TRUE(ids.ok()) << ids.status();
    return ids.ok() ? (*ids)[0] : "";
  }

  std::vector<v1::Record> ScanAll(const ScanSpec& spec) {
    std::vector<v1::Record> all;
    absl::Status status = engine_->Scan(spec, [&](std::vector<v1::Record> chunk) {
      for (auto& r : chunk) all.push_back(std::move(r));
      return absl::OkStatus();
    });
    EXPECT_TRUE(status.ok()) << status;
    return all;
  }

  // Damage to the write-ahead log loses the writes logged from it on, leases among
  // them; see the definition.
  void ExpectLostIdsSkipped(const std::function<void(const std::string& wal)>& damage,
                            bool reported);

  EngineOptions options_;
  std::unique_ptr<LogEngine> engine_;
};

TEST_F(LogEngineTest, AppendThenGetRoundTripsAndIdsIncrease) {
  EXPECT_EQ(AppendOne("HDFS", "first line"), "HDFS/1");
  EXPECT_EQ(AppendOne("HDFS", "second line"), "HDFS/2");
  absl::StatusOr<v1::Record> record = engine_->Get("HDFS/2");
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->id(), "HDFS/2");
  EXPECT_EQ(record->category(), "HDFS");
  EXPECT_EQ(record->payload(), "second line");
}

TEST_F(LogEngineTest, ACleanCloseKeepsSeqsConsecutive) {
  EXPECT_EQ(AppendOne("HDFS", "a"), "HDFS/1");
  Reopen();
  EXPECT_EQ(AppendOne("HDFS", "b"), "HDFS/2");
  Reopen();
  Reopen();  // No append in between: the lease is left as it was.
  EXPECT_EQ(AppendOne("HDFS", "c"), "HDFS/3");
}

// Without sync_writes a power loss may take acknowledged records, but their ids are
// never given to other records: the pool starts again at its lease.
TEST_F(LogEngineTest, IdsLostInAPowerLossAreNeverHandedOutAgain) {
  auto fs = std::make_shared<store::FaultInjectionFs>();
  options_.store.file_system = fs;
  Reopen();
  EXPECT_EQ(AppendOne("HDFS", "lost one"), "HDFS/1");
  EXPECT_EQ(AppendOne("HDFS", "lost two"), "HDFS/2");
  fs->PowerOff();
  engine_.reset();
  fs->RestorePower();
  Reopen();
  EXPECT_EQ(engine_->Get("HDFS/1").status().code(), StatusCode::kNotFound);
  // The first append (seqs below 2) leased the seqs below 2 + kSeqLease.
  EXPECT_EQ(AppendOne("HDFS", "after"), absl::StrCat("HDFS/", 2 + pool::Pool::kSeqLease));
  EXPECT_EQ(engine_->Get("HDFS/2").status().code(), StatusCode::kNotFound);
}

// A backup's copy is leased kRestoreLease seqs past what it holds: a store restored
// from it never gives out again the ids the live store gave after the backup. A pool
// the live store creates after it is not in the copy: restored, a pool of its name
// starts at the copy's seq floor (ADR 0044). The live store's leases and floor stay.
TEST_F(LogEngineTest, ARestoredBackupStartsPastTheIdsGivenAfterIt) {
  const std::string root = FreshTestDir() + "-backups";
  ASSERT_TRUE(std::filesystem::create_directories(root));
  options_.backup_root = root;
  Reopen();
  EXPECT_EQ(AppendOne("HDFS", "before"), "HDFS/1");
  v1::BackupRequest backup;
  backup.set_dir(root + "/copy");
  ASSERT_TRUE(engine_->Backup(backup).ok());
  EXPECT_EQ(AppendOne("HDFS", "after the backup"), "HDFS/2");  // The live store goes on.
  EXPECT_EQ(AppendOne("later", "after the backup"), "later/1");
  {  // The live store as a crash would leave it (a copy of its files, all synced):
     // the backup moved neither its leases nor its floor.
    store::Store::Options image = options_.store;
    image.path = root + "/crash-image";
    std::filesystem::copy(options_.store.path, image.path,
                          std::filesystem::copy_options::recursive);
    auto live_store = store::Store::Open(image);
    ASSERT_TRUE(live_store.ok()) << live_store.status();
    auto live_pools = (*live_store)->LoadPools();
    ASSERT_TRUE(live_pools.ok()) << live_pools.status();
    ASSERT_EQ(live_pools->size(), 2u);
    for (const store::StoredPool& pool : *live_pools) {
      EXPECT_LE(pool.seq_ceiling, 2 + pool::Pool::kSeqLease) << pool.record.name();
    }
    EXPECT_EQ(*(*live_store)->SeqFloor(), 0u);
  }
  Reopen();
  EXPECT_EQ(AppendOne("later2", "live, reopened"), "later2/1");
  engine_.reset();
  options_.store.path = root + "/copy";
  Reopen();
  EXPECT_EQ(engine_->Get("HDFS/1")->payload(), "before");
  EXPECT_EQ(engine_->Get("HDFS/2").status().code(), StatusCode::kNotFound);
  // The copy's lease of HDFS, its first one, plus kRestoreLease.
  EXPECT_EQ(AppendOne("HDFS", "restored"),
            absl::StrCat("HDFS/", 2 + pool::Pool::kSeqLease + pool::Pool::kRestoreLease));
  EXPECT_EQ(AppendOne("later", "restored"), absl::StrCat("later/", 1 + pool::Pool::kRestoreLease));
}

// Damage to the write-ahead log loses the writes logged from it on, leases among them:
// a lease written after the damage covered ids that were given out and are gone now.
// Every pool, and a pool lost with those writes when it is created again, starts past
// them (ADR 0044). `damage` harms the log written after a flush; `reported`: whether
// RocksDB's replay reports it (else the store's synced mark finds it).
void LogEngineTest::ExpectLostIdsSkipped(
    const std::function<void(const std::string& wal)>& damage, bool reported) {
  std::unique_ptr<LogEngine>& engine = engine_;
  ASSERT_TRUE(engine->CreatePool("quiet", v1::PoolOptions()).ok());
  EXPECT_EQ(AppendOne("HDFS", "kept"), "HDFS/1");  // Leases below 2 + kSeqLease.
  ASSERT_TRUE(engine->Flush().ok());  // The log starts again after it.
  EXPECT_EQ(AppendOne("quiet", "lost"), "quiet/1");  // Its first lease is logged here.
  EXPECT_EQ(AppendOne("new", "lost"), "new/1");      // The pool itself is logged here.
  EXPECT_EQ(AppendOne("HDFS", "lost"), "HDFS/2");
  engine.reset();
  const std::string wal = LargestWal(options_.store.path);
  ASSERT_FALSE(wal.empty());
  damage(wal);

  Reopen();
  EXPECT_EQ(engine->WalDroppedAtOpen().reports > 0, reported);
  EXPECT_EQ(engine->WalDroppedAtOpen().synced_writes_lost, true);
  EXPECT_EQ(engine->Get("HDFS/1")->payload(), "kept");
  EXPECT_EQ(engine->Get("HDFS/2").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(engine->Get("quiet/1").status().code(), StatusCode::kNotFound);
  const uint64_t skip = pool::Pool::kRestoreLease;
  EXPECT_EQ(AppendOne("quiet", "after"), absl::StrCat("quiet/", 1 + skip));
  EXPECT_EQ(AppendOne("new", "after"), absl::StrCat("new/", 1 + skip));
  EXPECT_EQ(engine->Get("new/1").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(AppendOne("HDFS", "after"),
            absl::StrCat("HDFS/", 2 + pool::Pool::kSeqLease + skip));

  Reopen();  // Nothing lost since: nothing is skipped again.
  EXPECT_EQ(engine->WalDroppedAtOpen().reports, 0u);
  EXPECT_FALSE(engine->WalDroppedAtOpen().synced_writes_lost);
  EXPECT_EQ(AppendOne("new", "then"), absl::StrCat("new/", 2 + skip));
}

TEST_F(LogEngineTest, IdsLostWithADamagedWalAreNeverHandedOutAgain) {
  // In the log's first record: the replay stops before it.
  ExpectLostIdsSkipped([](const std::string& wal) { FlipByte(wal, 10); }, true);
}

TEST_F(LogEngineTest, IdsLostWithADeletedWalAreNeverHandedOutAgain) {
  ExpectLostIdsSkipped([](const std::string& wal) { std::filesystem::remove(wal); }, false);
}

TEST_F(LogEngineTest, BatchIsAtomicAcrossPoolsAndKeepsInputOrder) {
  std::vector<AppendInput> batch = {{"a", "1"}, {"b", "2"}, {"a", "3"}};
  auto ids = engine_->Append(batch);
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(*ids, (std::vector<std::string>{"a/1", "b/1", "a/2"}));
  EXPECT_EQ(engine_->Get("a/2")->payload(), "3");
}

TEST_F(LogEngineTest, InvalidAppendsAreRejectedAndWriteNothing) {
  const std::string big(1001, 'x');
  const std::string long_category(129, 'c');
  const std::vector<std::vector<AppendInput>> bad = {
      {},                                            // empty batch
      {{"", "payload"}},                             // empty category
      {{long_category, "payload"}},                  // category too long
      {{"has space", "payload"}},                    // bad category bytes
      {{"ok", big}},                                 // payload over the limit
      {{"ok", "fine"}, {"ok", big}},                 // one bad record fails all
      {{"a", "1"}, {"a", "2"}, {"a", "3"}, {"a", "4"}, {"a", "5"}, {"a", "6"}},
  };
  for (const auto& batch : bad) {
    EXPECT_EQ(engine_->Append(batch).status().code(), StatusCode::kInvalidArgument);
  }
  EXPECT_TRUE(engine_->ListPools().empty());
  Reopen();
  EXPECT_TRUE(engine_->ListPools().empty());
}

TEST_F(LogEngineTest, GetErrorsAreSpecific) {
  AppendOne("HDFS", "x");
  EXPECT_EQ(engine_->Get("HDFS").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(engine_->Get("HDFS/0").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(engine_->Get("nope/1").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(engine_->Get("HDFS/2").status().code(), StatusCode::kNotFound);
}

TEST_F(LogEngineTest, MultiGetReturnsPerIdResultsInOrder) {
  AppendOne("x", "one");
  AppendOne("y", "two");
  auto results = engine_->MultiGet({"y/1", "bad", "x/9", "x/1"});
  ASSERT_TRUE(results.ok());
  ASSERT_EQ(results->size(), 4u);
  EXPECT_EQ((*results)[0]->payload(), "two");
  EXPECT_EQ((*results)[1].status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*results)[2].status().code(), StatusCode::kNotFound);
  EXPECT_EQ((*results)[3]->payload(), "one");
  EXPECT_EQ(engine_->MultiGet({"x/1", "x/1", "x/1", "x/1", "x/1"}).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(LogEngineTest, PrefixRuleSharesAPoolAndKeepsEachCategory) {
  EXPECT_EQ(AppendOne("app-web", "GET /"), "apps/1");
  EXPECT_EQ(AppendOne("app-db", "SELECT 1"), "apps/2");
  EXPECT_EQ(AppendOne("app-web", "GET /x"), "apps/3");
  Reopen();
  EXPECT_EQ(engine_->Get("apps/2")->category(), "app-db");
  EXPECT_EQ(AppendOne("app-new", "z"), "apps/4");
  std::vector<v1::Record> web = ScanAll({"app-web", "", "", 0});
  ASSERT_EQ(web.size(), 2u);
  EXPECT_EQ(web[1].payload(), "GET /x");
  EXPECT_EQ(ScanAll({"", "apps", "", 0}).size(), 4u);
  EXPECT_TRUE(ScanAll({"app-never", "", "", 0}).empty());
  v1::PoolInfo info = *engine_->GetPool("apps");
  EXPECT_EQ(info.categories_size(), 3);
}

TEST_F(LogEngineTest, ScanHonoursFromIdLimitAndChunks) {
  for (int i = 0; i < 600; ++i) AppendOne("s", "line " + std::to_string(i));
  std::vector<v1::Record> all = ScanAll({"", "s", "", 0});
  ASSERT_EQ(all.size(), 600u);
  EXPECT_EQ(all[599].id(), "s/600");
  std::vector<v1::Record> some = ScanAll({"s", "", "s/100", 5});
  ASSERT_EQ(some.size(), 5u);
  EXPECT_EQ(some[0].payload(), "line 99");
  auto fail = [](std::vector<v1::Record>) { return absl::CancelledError("stop"); };
  EXPECT_EQ(engine_->Scan({"", "s", "", 0}, fail).code(), StatusCode::kCancelled);
  auto ok = [](std::vector<v1::Record>) { return absl::OkStatus(); };
  EXPECT_EQ(engine_->Scan({"", "s", "other/1", 0}, ok).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(engine_->Scan({"s", "s", "", 0}, ok).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(engine_->Scan({"", "missing", "", 0}, ok).code(), StatusCode::kNotFound);
}

TEST_F(LogEngineTest, StatsCountRawAndStoredBytesAndSurviveReopen) {
  // Compressed at append (by default a pool stores raw until its first dictionary).
  options_.raw_before_dictionary_bytes = 0;
  Reopen();
  const std::string compressible(900, 'a');
  AppendOne("p", compressible);
  AppendOne("p", "q!");  // Incompressible: stored raw with one header byte.
  v1::PoolInfo info = *engine_->GetPool("p");
  EXPECT_EQ(info.stats().records(), 2u);
  EXPECT_EQ(info.stats().raw_bytes(), 902u);
  EXPECT_LT(info.stats().stored_bytes(), 100u);
  Reopen();
  v1::PoolInfo again = *engine_->GetPool("p");
  EXPECT_EQ(again.stats().SerializeAsString(), info.stats().SerializeAsString());
  EXPECT_EQ(AppendOne("p", "next"), "p/3");
}

TEST_F(LogEngineTest, CreateAndUpdatePoolValidate) {
  v1::PoolOptions options;
  options.set_compression_level(-7);
  ASSERT_TRUE(engine_->CreatePool("fast", options).ok());
  EXPECT_EQ(engine_->CreatePool("fast", options).status().code(),
            StatusCode::kAlreadyExists);
  AppendOne("fast", std::string(500, 'f'));
  EXPECT_EQ(engine_->Get("fast/1")->payload(), std::string(500, 'f'));
  v1::PoolOptions bad;
  bad.set_compression_level(23);
  EXPECT_EQ(engine_->UpdatePool("fast", bad).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(engine_->GetPool("fast")->options().compression_level(), -7);
}

TEST_F(LogEngineTest, CorruptStoredRecordIsDataLoss) {
  AppendOne("c", std::string(300, 'c'));
  const uint32_t pool_id = 1;
  engine_.reset();
  {
    auto store = store::Store::Open(options_.store);
    ASSERT_TRUE(store.ok());
    std::string bad(1, '\x01');  // A zstd frame header that is cut short.
    bad += '\xff';
    ASSERT_TRUE((*store)->WriteRecords({{pool_id, 1, 300, bad}}).ok());
  }
  Reopen();
  EXPECT_EQ(engine_->Get("c/1").status().code(), StatusCode::kDataLoss);
}

TEST_F(LogEngineTest, VerifyListsExactlyTheCorruptRecords) {
  for (int i = 0; i < 300; ++i) AppendOne(i % 2 ? "a" : "b", "line " + std::to_string(i));
  const auto never = [] { return false; };
  auto clean = engine_->Verify({}, never);
  ASSERT_TRUE(clean.ok()) << clean.status();
  EXPECT_EQ(clean->records_checked(), 300u);
  EXPECT_EQ(clean->pools_checked(), 2u);
  EXPECT_EQ(clean->corrupt_records(), 0u);

  engine_.reset();
  {
    auto store = store::Store::Open(options_.store);
    ASSERT_TRUE(store.ok());
    const std::string bad = "\x01\xff";  // A zstd frame header that is cut short.
    const std::string unknown_category = "\x04\x09x";  // Raw, category index 9.
    ASSERT_TRUE((*store)->WriteRecords({{1, 7, 10, bad}, {2, 20, 10, unknown_category}}).ok());
  }
  Reopen();
  auto found = engine_->Verify({}, never);
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->records_checked(), 300u);
  ASSERT_EQ(found->corrupt_records(), 2u);
  std::vector<std::string> ids;
  for (const auto& corrupt : found->corrupt()) {
    ids.push_back(corrupt.id());
    EXPECT_NE(corrupt.error().find("DATA_LOSS"), std::string::npos) << corrupt.error();
  }
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<std::string>{"a/20", "b/7"}));

  v1::VerifyRequest one;
  one.set_pool("a");
  one.set_max_listed(1);
  auto only_a = engine_->Verify(one, never);
  ASSERT_TRUE(only_a.ok());
  EXPECT_EQ(only_a->records_checked(), 150u);
  EXPECT_EQ(only_a->corrupt_records(), 1u);
  one.set_pool("nope");
  EXPECT_EQ(engine_->Verify(one, never).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(engine_->Verify({}, [] { return true; }).status().code(),
            StatusCode::kCancelled);
}

// Seqs a salvage lost (Store::PutLostSeqs) are listed apart from corrupt records: every
// range counted, at most max_listed listed, only for the pools verified.
TEST_F(LogEngineTest, VerifyCountsEveryLostRangeAndListsAtMostMaxListed) {
  for (int i = 0; i < 300; ++i) AppendOne(i % 2 ? "a" : "b", "line " + std::to_string(i));
  engine_.reset();
  {
    auto store = store::Store::Open(options_.store);
    ASSERT_TRUE(store.ok());
    std::vector<store::Store::LostSeqs> lost;
    for (uint64_t k = 0; k < 15; ++k) lost.push_back({2, 10 * k + 1, 10 * k + 2});  // Pool a.
    ASSERT_TRUE((*store)->PutLostSeqs(lost).ok());
  }
  Reopen();
  const auto never = [] { return false; };
  auto all = engine_->Verify({}, never);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->corrupt_records(), 0u);
  EXPECT_EQ(all->lost_ranges(), 15u);
  ASSERT_EQ(all->lost_size(), 15);  // max_listed 0: 100.
  EXPECT_EQ(all->lost(0).pool(), "a");
  EXPECT_EQ(all->lost(0).first_id(), "a/1");
  EXPECT_EQ(all->lost(0).last_id(), "a/2");
  EXPECT_EQ(all->lost(14).first_id(), "a/141");
  EXPECT_EQ(all->lost(14).last_id(), "a/142");

  v1::VerifyRequest capped;
  capped.set_max_listed(4);
  auto four = engine_->Verify(capped, never);
  ASSERT_TRUE(four.ok()) << four.status();
  EXPECT_EQ(four->lost_ranges(), 15u);
  EXPECT_EQ(four->lost_size(), 4);
  capped.set_pool("b");
  auto b = engine_->Verify(capped, never);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->lost_ranges(), 0u);
  EXPECT_EQ(b->records_checked(), 150u);
}

TEST_F(LogEngineTest, RejectsBadEngineOptions) {
  EngineOptions bad = options_;
  bad.max_record_bytes = codec::kMaxRecordBytes + 1;
  engine_.reset();
  EXPECT_EQ(LogEngine::Open(bad).status().code(), StatusCode::kInvalidArgument);
  bad = options_;
  bad.routes = {{"x", "x-", "p"}};
  EXPECT_EQ(LogEngine::Open(bad).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dictlog::engine

namespace dictlog::engine {
namespace {

// MultiGet and Scan ask their interrupt between chunks and stop with its status.
// MultiGet does not ask before its first chunk (in a gRPC handler that costs a poll of
// its completion queue): a call of one chunk never asks.
TEST(LogEngineInterruptTest, LongReadsStopWhenInterrupted) {
  EngineOptions options;
  options.store.path = FreshTestDir();
  options.auto_train = false;
  auto engine = LogEngine::Open(options);
  ASSERT_TRUE(engine.ok()) << engine.status();
  std::vector<std::string> payloads(3000, "a log line of moderate length");
  std::vector<AppendInput> batch;
  for (const std::string& p : payloads) batch.push_back({"p", p});
  auto ids = (*engine)->Append(batch);
  ASSERT_TRUE(ids.ok()) << ids.status();

  int asked = 0;
  auto stop_at_once = [&] {
    ++asked;
    return absl::DeadlineExceededError("deadline");
  };
  auto one_chunk = (*engine)->MultiGet(
      absl::MakeConstSpan(*ids).subspan(0, LogEngine::kReadChunkIds), stop_at_once);
  ASSERT_TRUE(one_chunk.ok()) << one_chunk.status();
  EXPECT_EQ(one_chunk->size(), LogEngine::kReadChunkIds);
  EXPECT_EQ(asked, 0);
  EXPECT_EQ((*engine)->GetPool("p")->reads(), LogEngine::kReadChunkIds);

  auto results = (*engine)->MultiGet(*ids, stop_at_once);
  EXPECT_EQ(results.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(asked, 1);
  // Only its first chunk was read: kReadChunkIds more.
  EXPECT_EQ((*engine)->GetPool("p")->reads(), 2 * LogEngine::kReadChunkIds);

  int scan_asks = 0;
  auto stop_after_one = [&] {
    return ++scan_asks > 1 ? absl::DeadlineExceededError("deadline") : absl::OkStatus();
  };

  size_t scanned = 0;
  absl::Status status = (*engine)->Scan(
      {"", "p", "", 0},
      [&](std::vector<v1::Record> chunk) {
        scanned += chunk.size();
        return absl::OkStatus();
      },
      stop_after_one);
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_GT(scanned, 0u);
  EXPECT_LT(scanned, payloads.size());
  // Without an interrupt, everything is read.
  EXPECT_EQ((*(*engine)->MultiGet(*ids)).size(), payloads.size());
}

}  // namespace
}  // namespace dictlog::engine
