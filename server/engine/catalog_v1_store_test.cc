// A store written while the catalog stored dictlog.v1 messages (the fixture
// testdata/catalog_v1_store, see testdata/make_catalog_v1_store.cc) opens with today's
// code, and every catalog field it wrote reads back: pool options, the dictionary and
// its evaluation, the re-compression job's status. Enums are compared as numbers so
// the test reads the same whichever message types the catalog uses.
#include <filesystem>

#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "server/engine/log_engine.h"
#include "server/store/store.h"

namespace dictlog::engine {
namespace {

std::string FixtureCopy() {
  const std::string from = std::string(std::getenv("TEST_SRCDIR")) + "/" +
                           std::getenv("TEST_WORKSPACE") +
                           "/server/engine/testdata/catalog_v1_store";
  const std::string to = FreshTestDir();
  std::filesystem::create_directories(to);
  for (const auto& file : std::filesystem::directory_iterator(from)) {
    std::filesystem::copy_file(file.path(), to + "/" + file.path().filename().string());
  }
  return to;
}

std::unique_ptr<LogEngine> OpenFixture() {
  EngineOptions options;
  options.store.path = FixtureCopy();
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
  options.path = FixtureCopy();
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

// DICTIONARY_CHECKS

// RECOMPRESS_CHECKS

}  // namespace
}  // namespace dictlog::engine
