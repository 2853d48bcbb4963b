// A store written while the catalog stored dictlog.v1 messages (the fixture
// testdata/catalog_v1_store, see testdata/make_catalog_v1_store.cc) opens with today's
// code, and every catalog field it wrote reads back: pool options, the dictionary and
// its evaluation, the re-compression job's status. Enums are compared as numbers so
// the test reads the same whichever message types the catalog uses.

#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "server/engine/log_engine.h"
#include "server/store/store.h"

namespace dictlog::engine {
namespace {

std::unique_ptr<LogEngine> OpenFixture() {
  EngineOptions options;
  options.store.path = FixtureCopy("server/engine/testdata/catalog_v1_store");
  options.auto_train = false;
  auto engine = LogEngine::Open(options);
  EXPECT_TRUE(engine.ok()) << engine.status();
  return engine.ok() ? std::move(*engine) : nullptr;
}

TEST(CatalogV1StoreTest, PoolOptionsReadBack) {
  std::unique_ptr<LogEngine> engine = OpenFixture();
  ASSERT_NE(engine, nullptr);
  auto tuned = engine->GetPool("tuned");
  ASSERT_TRUE(tuned.ok()) << tuned.status();
  EXPECT_EQ(tuned->options().compression_level(), 7);
  EXPECT_EQ(tuned->options().dictionary_bytes(), 4096u);
  EXPECT_EQ(static_cast<int>(tuned->options().storage_mode()), 1);     // RECORD
  EXPECT_EQ(static_cast<int>(tuned->options().dictionary_mode()), 1);  // FULL
  EXPECT_EQ(tuned->options().block_bytes(), 2048u);
  EXPECT_EQ(tuned->options().compact_compression_level(), 11);
  EXPECT_EQ(tuned->stats().records(), 400u);
  auto blocky = engine->GetPool("blocky");
  ASSERT_TRUE(blocky.ok()) << blocky.status();
  EXPECT_EQ(blocky->options().compression_level(), -5);
  EXPECT_EQ(blocky->options().dictionary_bytes(), 8192u);
  EXPECT_EQ(static_cast<int>(blocky->options().storage_mode()), 2);     // BLOCK
  EXPECT_EQ(static_cast<int>(blocky->options().dictionary_mode()), 2);  // COMPACT
  EXPECT_EQ(blocky->options().block_bytes(), 16384u);
  EXPECT_EQ(blocky->options().compact_compression_level(), 12);
}

TEST(CatalogV1StoreTest, PoolRecordsReadBackFromTheStore) {
  store::Store::Options options;
  options.path = FixtureCopy("server/engine/testdata/catalog_v1_store");
  auto opened = store::Store::Open(options);
  ASSERT_TRUE(opened.ok()) << opened.status();
  auto pools = (*opened)->LoadPools();
  ASSERT_TRUE(pools.ok()) << pools.status();
  ASSERT_EQ(pools->size(), 2u);
  for (const store::StoredPool& pool : *pools) {
    SCOPED_TRACE(pool.record.name());
    EXPECT_GT(pool.record.id(), 0u);
    EXPECT_GT(pool.record.created_unix_ms(), 1700000000000);  // 2023-11 or later.
    EXPECT_TRUE(pool.record.options().has_compression_level());
    EXPECT_TRUE(pool.record.options().has_dictionary_bytes());
    EXPECT_TRUE(pool.record.options().has_storage_mode());
    EXPECT_TRUE(pool.record.options().has_dictionary_mode());
    EXPECT_TRUE(pool.record.options().has_block_bytes());
    EXPECT_TRUE(pool.record.options().has_compact_compression_level());
  }
}

TEST(CatalogV1StoreTest, DictionaryAndItsEvaluationReadBack) {
  std::unique_ptr<LogEngine> engine = OpenFixture();
  ASSERT_NE(engine, nullptr);
  v1::ListDictionariesRequest request;
  request.set_pool("tuned");
  auto listed = engine->ListDictionaries(request);
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->dictionaries_size(), 1);
  const v1::DictionaryInfo& dict = listed->dictionaries(0);
  EXPECT_EQ(dict.id(), 32768u);
  EXPECT_EQ(dict.pool(), "tuned");
  EXPECT_EQ(dict.size_bytes(), 4096u);
  EXPECT_EQ(dict.created_unix_ms(), 1795546933645);
  EXPECT_TRUE(dict.active());
  EXPECT_EQ(dict.records(), 400u);
  EXPECT_EQ(dict.source(), "train");
  EXPECT_EQ(static_cast<int>(dict.mode()), 1);  // FULL
  ASSERT_TRUE(dict.has_evaluation());
  const v1::DictionaryEvaluation& eval = dict.evaluation();
  EXPECT_EQ(eval.records(), 40u);
  EXPECT_EQ(eval.raw_bytes(), 4596u);
  EXPECT_DOUBLE_EQ(eval.ratio(), 3.3843888070692194);
  EXPECT_EQ(eval.baseline_dictionary_id(), 0u);
  EXPECT_DOUBLE_EQ(eval.baseline_ratio(), 1.0314183123877918);
  EXPECT_DOUBLE_EQ(eval.gain(), 2.2812960235640647);
  EXPECT_DOUBLE_EQ(eval.compress_mb_per_s(), 11.9317620157864);
  EXPECT_DOUBLE_EQ(eval.decompress_mb_per_s(), 55.239488505230128);
  EXPECT_EQ(eval.samples_used(), 360u);
  EXPECT_EQ(eval.samples_excluded(), 0u);
  EXPECT_DOUBLE_EQ(eval.train_seconds(), 0.060430086);
  auto tuned = engine->GetPool("tuned");
  ASSERT_TRUE(tuned.ok()) << tuned.status();
  EXPECT_EQ(tuned->active_dictionary_id(), 32768u);
}

TEST(CatalogV1StoreTest, RecordsDecodeWithTheStoredDictionary) {
  std::unique_ptr<LogEngine> engine = OpenFixture();
  ASSERT_NE(engine, nullptr);
  auto first = engine->Get("tuned/1");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->payload(),
            "081109 203500 100 INFO dfs.DataNode$PacketResponder: Received block "
            "blk_7000000 of size 67108864 from /10.250.0.0");
  auto last = engine->Get("tuned/400");
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(last->payload(),
            "081109 203539 129 INFO dfs.DataNode$PacketResponder: Received block "
            "blk_7005187 of size 67106071 from /10.250.0.148");
}

TEST(CatalogV1StoreTest, RecompressStatusReadsBack) {
  std::unique_ptr<LogEngine> engine = OpenFixture();
  ASSERT_NE(engine, nullptr);
  v1::RecompressRequest request;
  request.set_pool("tuned");
  auto status = engine->GetRecompressStatus(request);
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->pool(), "tuned");
  EXPECT_EQ(static_cast<int>(status->state()), 3);  // DONE
  EXPECT_EQ(status->target_dictionary_id(), 32768u);
  EXPECT_EQ(status->records_done(), 400u);
  EXPECT_EQ(status->records_total(), 400u);
  EXPECT_EQ(status->records_rewritten(), 400u);
  EXPECT_EQ(status->bytes_before(), 44574u);
  EXPECT_EQ(status->bytes_after(), 12154u);
  EXPECT_EQ(status->error(), "");
  EXPECT_EQ(status->records_kept(), 0u);  // Field 12 (ADR 0051): absent in this job.
}

}  // namespace
}  // namespace dictlog::engine
