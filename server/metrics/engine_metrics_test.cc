#include "server/metrics/engine_metrics.h"

#include <zstd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "codec/test_dictionary.h"
#include "common/command_line.h"
#include "common/file_damage.h"
#include "common/test_dir.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "rocksdb/version.h"
#include "server/store/table_damage.h"

namespace dictlog::service {
namespace {

TEST(EngineMetricsTest, NoEngineRendersOnlyRpcMetricsAndStoreClosed) {
  metrics::RpcMetrics rpc;
  const std::string text = RenderMetrics(nullptr, rpc);
  EXPECT_TRUE(absl::StrContains(text, "\ndictlog_store_open 0\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "dictlog_appended_records_total 0\n"));
  EXPECT_FALSE(absl::StrContains(text, "dictlog_pool_records"));
}

// Issue 17: the versions the server runs with, as a metric (also while it opens).
TEST(EngineMetricsTest, BuildInfoNamesTheRunTimeVersions) {
  metrics::RpcMetrics rpc;
  const std::string text = RenderMetrics(nullptr, rpc);
  const std::string expected = absl::StrCat(
      "\ndictlog_build_info{version=\"", kDictlogVersion, "\",zstd=\"", ZSTD_versionString(),
      "\",grpc=\"", grpc::Version(), "\",rocksdb=\"", rocksdb::GetRocksVersionAsString(),
      "\"} 1\n");
  EXPECT_TRUE(absl::StrContains(text, expected)) << expected << text;
  EXPECT_TRUE(absl::StrContains(text, "# TYPE dictlog_build_info gauge\n"));
}

TEST(EngineMetricsTest, PoolsCacheAndRocksDbFromARealEngine) {
  engine::EngineOptions options;
  options.store.path = FreshTestDir();
  options.auto_train = false;
  auto engine = engine::LogEngine::Open(options);
  ASSERT_TRUE(engine.ok()) << engine.status();
  std::vector<engine::AppendInput> records;
  const std::string payload(300, 'a');  // Compresses well.
  for (int i = 0; i < 10; ++i) records.push_back({"web", payload});
  records.push_back({"db", "x"});
  ASSERT_TRUE((*engine)->Append(records).ok());
  ASSERT_TRUE((*engine)->Get("web/3").ok());

  metrics::RpcMetrics rpc;
  const std::string text = RenderMetrics(engine->get(), rpc);
  EXPECT_TRUE(absl::StrContains(text, "\ndictlog_store_open 1\n"));
  EXPECT_TRUE(absl::StrContains(text, "dictlog_pool_records{pool=\"web\"} 10\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "dictlog_pool_raw_bytes{pool=\"web\"} 3000\n"));
  EXPECT_TRUE(absl::StrContains(text, "dictlog_pool_records{pool=\"db\"} 1\n"));
  EXPECT_TRUE(absl::StrContains(text, "dictlog_pool_reads_total{pool=\"web\"} 1\n"));
  EXPECT_TRUE(absl::StrContains(text, "dictlog_pool_active_dictionary_id{pool=\"web\"} 0\n"));
  EXPECT_TRUE(absl::StrContains(text, "dictlog_pool_dictionaries{pool=\"web\"} 0\n"));
  EXPECT_TRUE(absl::StrContains(text, "dictlog_pool_drift_degraded_percent{pool=\"web\"} 0\n"));
  EXPECT_TRUE(absl::StrContains(text, "# TYPE dictlog_pool_drift_retrains_total counter\n"));
  EXPECT_TRUE(absl::StrContains(text, "# TYPE dictlog_pool_compression_ratio gauge\n"));
  EXPECT_FALSE(absl::StrContains(text, "dictlog_pool_compression_ratio{pool=\"web\"} 0\n"));
  EXPECT_TRUE(
      absl::StrContains(text, "dictlog_dictionary_cache_budget_bytes 268435456\n"));
  EXPECT_TRUE(absl::StrContains(text, "dictlog_rocksdb_estimate_num_keys{family=\"records\"} "));
  EXPECT_TRUE(absl::StrContains(text, "\ndictlog_rocksdb_num_running_compactions "));
  // The block cache is the store's (256 MiB by default), none of it given to decoded
  // blocks yet (ADR 0038).
  EXPECT_TRUE(absl::StrContains(text, "\ndictlog_rocksdb_block_cache_capacity 268435456\n"));
  EXPECT_TRUE(absl::StrContains(text, "\ndictlog_rocksdb_block_cache_usage "));
  EXPECT_TRUE(absl::StrContains(
      text, "dictlog_rocksdb_estimate_pending_compaction_bytes{family=\"records\"} "));
  // No pool has had a re-compression job: the families are there, without samples.
  EXPECT_TRUE(absl::StrContains(text, "# TYPE dictlog_recompress_running gauge\n"));
  EXPECT_FALSE(absl::StrContains(text, "dictlog_recompress_running{"));
}

TEST(EngineMetricsTest, AutomaticTrainingCountsItsAttempt) {
  engine::EngineOptions options;
  options.store.path = FreshTestDir();
  options.auto_trainer.min_bytes_multiple = 1;  // Starts at 16 KiB of records.
  auto engine = engine::LogEngine::Open(options);
  ASSERT_TRUE(engine.ok()) << engine.status();
  std::vector<std::string> lines;
  for (int i = 0; i < 1000; ++i) {  // ~115 KB: enough to train 16 KiB.
    lines.push_back("081109 2036" + std::to_string(10 + i % 50) + " " +
                    std::to_string(1000 + i * 7) + " INFO dfs.DataNode$PacketResponder: " +
                    "Received block blk_" + std::to_string(i * 7919) + " of size " +
                    std::to_string(67108864 - i) + " from /10.250.19." +
                    std::to_string(i % 200));
  }
  std::vector<engine::AppendInput> records;
  for (const std::string& line : lines) records.push_back({"HDFS", line});
  ASSERT_TRUE((*engine)->Append(records).ok());
  ASSERT_TRUE((*engine)->WaitForAutoTrainingForTest(absl::Seconds(30)));

  const std::string text = RenderMetrics(engine->get(), metrics::RpcMetrics());
  EXPECT_TRUE(absl::StrContains(text, "\ndictlog_auto_training_queued 0\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "\ndictlog_auto_training_running 0\n"));
  EXPECT_TRUE(
      absl::StrContains(text, "dictlog_auto_trainings_total{result=\"activated\"} 1\n"))
      << text;
  EXPECT_TRUE(
      absl::StrContains(text, "dictlog_auto_trainings_total{result=\"failed\"} 0\n"));
  // Appended before the first dictionary: stored raw, re-encoded once it came.
  EXPECT_TRUE(
      absl::StrContains(text, "\ndictlog_records_raw_before_dictionary_total 1000\n"))
      << text;
  EXPECT_FALSE(
      absl::StrContains(text, "dictlog_pool_active_dictionary_id{pool=\"HDFS\"} 0\n"));
  // That re-encode is the pool's re-compression job: every record read.
  ASSERT_TRUE((*engine)->WaitForRecompressForTest("HDFS", absl::Seconds(30)));
  const std::string done = RenderMetrics(engine->get(), metrics::RpcMetrics());
  EXPECT_TRUE(absl::StrContains(done, "dictlog_recompress_records_done{pool=\"HDFS\"} 1000\n"))
      << done;
  EXPECT_TRUE(absl::StrContains(done, "dictlog_recompress_unreadable{pool=\"HDFS\"} 0\n"))
      << done;
}

}  // namespace
}  // namespace dictlog::service

namespace dictlog::service {
namespace {

TEST(EngineMetricsTest, RetentionCountsItsPassesAndWhatItExpired) {
  engine::EngineOptions options;
  options.store.path = FreshTestDir();
  options.auto_train = false;
  options.retention.interval = absl::ZeroDuration();
  auto now = std::make_shared<std::atomic<int64_t>>(1764000000000);
  options.store.clock_for_test = [now] { return absl::FromUnixMillis(now->load()); };
  auto engine = engine::LogEngine::Open(options);
  ASSERT_TRUE(engine.ok()) << engine.status();
  std::vector<engine::AppendInput> records(10, {"web", "a line of the web pool"});
  ASSERT_TRUE((*engine)->Append(records).ok());
  v1::PoolOptions update;
  update.set_max_age_seconds(60);
  ASSERT_TRUE((*engine)->UpdatePool("web", update).ok());
  *now += 61000;
  ASSERT_TRUE((*engine)->RunRetentionForTest().ok());
  const std::string text = RenderMetrics(engine->get(), metrics::RpcMetrics());
  EXPECT_TRUE(absl::StrContains(text, "\ndictlog_retention_runs_total 1\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "\ndictlog_retention_compactions_total ")) << text;
  EXPECT_TRUE(
      absl::StrContains(text, "dictlog_retention_expired_records_total{pool=\"web\"} 10\n"))
      << text;
  EXPECT_TRUE(absl::StrContains(text, "dictlog_retention_expired_bytes_total{pool=\"web\"} "));
}

TEST(EngineMetricsTest, FollowCountsRecordsSentAndFollowersConnected) {
  engine::EngineOptions options;
  options.store.path = FreshTestDir();
  options.auto_train = false;
  auto engine = engine::LogEngine::Open(options);
  ASSERT_TRUE(engine.ok()) << engine.status();
  std::vector<engine::AppendInput> records(10, {"web", "a line of the web pool"});
  ASSERT_TRUE((*engine)->Append(records).ok());
  engine::FollowSpec spec;
  spec.pool = "web";
  spec.from_start = true;
  size_t received = 0;
  std::string during;
  const absl::Status status = (*engine)->Follow(
      spec,
      [&](std::vector<v1::Record> chunk) {
        received += chunk.size();
        during = RenderMetrics(engine->get(), metrics::RpcMetrics());
        return absl::OkStatus();
      },
      [&] { return received >= 10 ? absl::CancelledError("done") : absl::OkStatus(); });
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled);
  EXPECT_TRUE(absl::StrContains(during, "\ndictlog_followers 1\n")) << during;
  const std::string text = RenderMetrics(engine->get(), metrics::RpcMetrics());
  EXPECT_TRUE(absl::StrContains(text, "\ndictlog_followers 0\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "\ndictlog_follow_records_sent_total 10\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "\ndictlog_follow_fell_behind_total 0\n")) << text;
}

// A real engine on `path`, without automatic training.
absl::StatusOr<std::unique_ptr<engine::LogEngine>> OpenEngine(const std::string& path) {
  engine::EngineOptions options;
  options.store.path = path;
  options.auto_train = false;
  return engine::LogEngine::Open(options);
}

TEST(EngineMetricsTest, CountsDeletedPools) {
  auto engine = OpenEngine(FreshTestDir());
  ASSERT_TRUE(engine.ok()) << engine.status();
  EXPECT_TRUE(absl::StrContains(RenderMetrics(engine->get(), metrics::RpcMetrics()),
                                "\ndictlog_pools_deleted_total 0\n"));
  ASSERT_TRUE((*engine)->Append({{"web", "a line"}}).ok());
  ASSERT_TRUE((*engine)->DeletePool("web").ok());
  const std::string text = RenderMetrics(engine->get(), metrics::RpcMetrics());
  EXPECT_TRUE(absl::StrContains(text, "\ndictlog_pools_deleted_total 1\n")) << text;
}

// A write-ahead log damaged between a close and an open: the gauge says the replay
// stopped short; the next open finds a clean log.
TEST(EngineMetricsTest, WalRecoveryDropsOfTheLastOpen) {
  const std::string path = FreshTestDir();
  {
    auto engine = OpenEngine(path);
    ASSERT_TRUE(engine.ok()) << engine.status();
    EXPECT_TRUE(absl::StrContains(RenderMetrics(engine->get(), metrics::RpcMetrics()),
                                  "\ndictlog_wal_recovery_drops 0\n"));
    std::mt19937 rng(1);
    for (int i = 0; i < 100; ++i) {  // Incompressible: 200 KB of log.
      std::string payload(2000, ' ');
      for (char& c : payload) c = static_cast<char>('a' + rng() % 26);
      ASSERT_TRUE((*engine)->Append({{"web", payload}}).ok());
    }
  }
  const std::string wal = LargestWal(path);
  ASSERT_GT(std::filesystem::file_size(wal), 100000u);
  FlipByte(wal, std::filesystem::file_size(wal) / 2);
  {
    auto engine = OpenEngine(path);
    ASSERT_TRUE(engine.ok()) << engine.status();
    const std::string text = RenderMetrics(engine->get(), metrics::RpcMetrics());
    EXPECT_FALSE(absl::StrContains(text, "\ndictlog_wal_recovery_drops 0\n")) << text;
    EXPECT_TRUE(absl::StrContains(text, "\ndictlog_wal_recovery_drops ")) << text;
  }
  auto engine = OpenEngine(path);
  ASSERT_TRUE(engine.ok()) << engine.status();
  EXPECT_TRUE(absl::StrContains(RenderMetrics(engine->get(), metrics::RpcMetrics()),
                                "\ndictlog_wal_recovery_drops 0\n"));
}

// A pool whose newest records were damaged between a close and an open: its gauge is 1
// (it went on from its seq lease), the undamaged pool's 0; appends go on past the lease.
TEST(EngineMetricsTest, APoolDamagedAtOpenIsCounted) {
  const std::string path = FreshTestDir();
  {
    auto engine = OpenEngine(path);
    ASSERT_TRUE(engine.ok()) << engine.status();
    ASSERT_TRUE((*engine)->Append({{"web", "a line"}}).ok());
    std::mt19937 rng(2);
    for (int batch = 0; batch < 30; ++batch) {  // "db", the last pool: the newest keys.
      std::vector<engine::AppendInput> records;
      std::vector<std::string> payloads(100, std::string(100, ' '));
      for (std::string& payload : payloads) {
        for (char& c : payload) c = static_cast<char>('a' + rng() % 26);
        records.push_back({"db", payload});
      }
      ASSERT_TRUE((*engine)->Append(records).ok());
    }
    EXPECT_TRUE(absl::StrContains(RenderMetrics(engine->get(), metrics::RpcMetrics()),
                                  "\ndictlog_pool_damaged_at_open{pool=\"db\"} 0\n"));
    ASSERT_TRUE((*engine)->Flush().ok());
  }
  ASSERT_TRUE(store::DamageNewestRecordsBlock(path).ok());
  auto engine = OpenEngine(path);
  ASSERT_TRUE(engine.ok()) << engine.status();
  const std::string text = RenderMetrics(engine->get(), metrics::RpcMetrics());
  EXPECT_TRUE(absl::StrContains(text, "\ndictlog_pool_damaged_at_open{pool=\"db\"} 1\n"))
      << text;
  EXPECT_TRUE(absl::StrContains(text, "\ndictlog_pool_damaged_at_open{pool=\"web\"} 0\n"))
      << text;
  EXPECT_TRUE(absl::StrContains(text, "# TYPE dictlog_pool_damaged_at_open gauge\n"));
  EXPECT_EQ((*engine)->Get("db/3000").status().code(), absl::StatusCode::kDataLoss);
  absl::StatusOr<std::vector<std::string>> appended = (*engine)->Append({{"db", "after"}});
  ASSERT_TRUE(appended.ok()) << appended.status();
  uint64_t seq = 0;
  ASSERT_TRUE(absl::SimpleAtoi(absl::StripPrefix((*appended)[0], "db/"), &seq)) << (*appended)[0];
  EXPECT_GT(seq, 3000u);  // Past every id given before the damage.
  EXPECT_TRUE((*engine)->Get((*appended)[0]).ok());
  EXPECT_TRUE(absl::StrContains(text, "\ndictlog_store_writes_stopped 0\n")) << text;
  // Deleting the pool compacts its key range, through the damaged block: the delete is
  // done, its compaction fails, RocksDB stops every write from then on, and the gauge
  // says so.
  EXPECT_TRUE((*engine)->DeletePool("db").ok());
  EXPECT_TRUE(absl::StrContains(RenderMetrics(engine->get(), metrics::RpcMetrics()),
                                "\ndictlog_store_writes_stopped 1\n"));
  const absl::Status refused = (*engine)->Append({{"web", "after the stop"}}).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kDataLoss) << refused;
  EXPECT_TRUE(absl::StrContains(refused.message(), "writes stopped")) << refused;
}

// A stored dictionary unreadable at open (not a pool's active one): the gauge is 1.
TEST(EngineMetricsTest, DictionariesUnreadableAtOpen) {
  const std::string path = FreshTestDir();
  {
    auto engine = OpenEngine(path);
    ASSERT_TRUE(engine.ok()) << engine.status();
    const std::vector<std::string> lines = codec::SyntheticLogLines(1000, 4);
    std::vector<engine::AppendInput> records;
    for (const std::string& line : lines) records.push_back({"web", line});
    ASSERT_TRUE((*engine)->Append(records).ok());
    v1::TrainDictionaryRequest train;
    train.set_pool("web");  // Stored, not activated.
    ASSERT_TRUE((*engine)->TrainDictionary(train).ok());
    EXPECT_TRUE(absl::StrContains(RenderMetrics(engine->get(), metrics::RpcMetrics()),
                                  "\ndictlog_dictionaries_unreadable_at_open 0\n"));
    ASSERT_TRUE((*engine)->Flush().ok());
  }
  ASSERT_TRUE(store::DamageTableData(path, "dictionaries", 0.5).ok());
  auto engine = OpenEngine(path);
  ASSERT_TRUE(engine.ok()) << engine.status();
  const std::string text = RenderMetrics(engine->get(), metrics::RpcMetrics());
  EXPECT_TRUE(absl::StrContains(text, "\ndictlog_dictionaries_unreadable_at_open 1\n")) << text;
}

}  // namespace
}  // namespace dictlog::service
