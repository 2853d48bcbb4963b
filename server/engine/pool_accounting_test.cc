// Pool accounting (pool_accounting.h) over a real RocksDB: a recount of what pool "web"
// holds equals the counters appends and re-compression kept, for the pool and for each
// dictionary, in record mode and in block mode with indexed blocks, with blocks found
// through entry values (a store from before indexed blocks) and with both; read a
// record at a time, a few at a time (chunks ending inside blocks) and in large chunks;
// and after retention removed the oldest records.
#include <map>
#include <memory>

#include "absl/time/time.h"
#include "codec/test_dictionary.h"
#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "server/dictionary/dictionary_cache.h"
#include "server/engine/engine_test_util.h"
#include "server/engine/log_engine.h"
#include "server/engine/pool_accounting.h"
#include "server/pool/pool_registry.h"
#include "server/store/store.h"

namespace dictlog::engine {
namespace {

constexpr int kCalls = 8;
constexpr int kPerCall = 50;

// How pool "web" stores its records.
enum class Layout { kRecord, kIndexed, kEntries, kEntriesThenIndexed };

class PoolAccountingTest : public ::testing::TestWithParam<Layout> {
 protected:
  void SetUp() override {
    options_.store.path = FreshTestDir();
    options_.auto_train = false;
    options_.retention.interval = absl::ZeroDuration();  // Passes run when asked.
    if (GetParam() != Layout::kRecord) {
      options_.default_pool_options.set_storage_mode(v1::STORAGE_MODE_BLOCK);
      options_.default_pool_options.set_block_bytes(1024);
    }
    options_.default_pool_options.set_dictionary_bytes(4096);
    Reopen();
    if (GetParam() == Layout::kEntries) SetIndexedFrom(1000000);  // Past every seq.
    if (GetParam() == Layout::kEntriesThenIndexed) SetIndexedFrom(4 * kPerCall + 1);
  }

  void Reopen() {
    engine_.reset();
    auto engine = LogEngine::Open(options_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
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

  // kCalls append calls to "web"; a dictionary is trained and activated after the
  // third, so records (block mode: blocks) name none or that one.
  void Fill() {
    for (int call = 0; call < kCalls; ++call) {
      // AppendInput views its payload: the lines must outlive the call.
      const std::vector<std::string> lines = codec::SyntheticLogLines(kPerCall, call);
      std::vector<AppendInput> batch;
      for (const std::string& line : lines) batch.push_back({"web", line});
      ASSERT_TRUE(engine_->Append(batch).ok());
      if (call == 2) TrainAndActivate();
    }
  }

  void TrainAndActivate() {
    const absl::Status activated = engine::TrainAndActivate(*engine_, "web");
    ASSERT_TRUE(activated.ok()) << activated;
  }

  // Closes the engine and recounts "web" from the store `chunk` records at a time:
  // the pool's and every dictionary's stored counters must equal the recount.
  void ExpectRecountEqualsCounters(size_t chunk) {
    engine_.reset();
    auto store = store::Store::Open(options_.store);
    ASSERT_TRUE(store.ok()) << store.status();
    auto registry = pool::PoolRegistry::Load(store->get(), options_.default_pool_options);
    ASSERT_TRUE(registry.ok()) << registry.status();
    std::shared_ptr<pool::Pool> web = (*registry)->Find("web");
    ASSERT_NE(web, nullptr);
    dictionary::DictionaryCache lookup(
        [s = store->get()](uint32_t id) { return s->DictionaryContent(id); }, {});
    auto counted = CountPool(**store, lookup, *web, chunk);
    ASSERT_TRUE(counted.ok()) << counted.status();
    auto pools = (*store)->LoadPools();
    ASSERT_TRUE(pools.ok());
    ASSERT_EQ(pools->size(), 1u);
    EXPECT_EQ(counted->pool, (*pools)[0].counters) << "chunk " << chunk;
    EXPECT_GT(counted->pool.records, 0u);
    auto dictionaries = (*store)->LoadDictionaries();
    ASSERT_TRUE(dictionaries.ok());
    ASSERT_FALSE(dictionaries->empty());
    for (const storage::DictionaryRecord& d : *dictionaries) {
      auto references = (*store)->DictionaryReferences(d.id());
      ASSERT_TRUE(references.ok());
      EXPECT_EQ(counted->dictionaries[d.id()], *references)
          << "dictionary " << d.id() << ", chunk " << chunk;
    }
    registry->reset();
    store->reset();
    Reopen();
  }

  EngineOptions options_;
  std::unique_ptr<LogEngine> engine_;
};

TEST_P(PoolAccountingTest, RecountEqualsTheCountersAppendsKept) {
  Fill();
  for (size_t chunk : {size_t{1}, size_t{7}, size_t{4096}}) ExpectRecountEqualsCounters(chunk);
}

TEST_P(PoolAccountingTest, RecountEqualsTheCountersAfterRetention) {
  Fill();
  v1::PoolOptions update;
  update.set_max_bytes(4000);  // Less than the pool holds: its oldest records go.
  ASSERT_TRUE(engine_->UpdatePool("web", update).ok());
  auto expired = engine_->RunRetentionForTest();
  ASSERT_TRUE(expired.ok()) << expired.status();
  ASSERT_GT(*expired, 0u);
  for (size_t chunk : {size_t{1}, size_t{7}, size_t{4096}}) ExpectRecountEqualsCounters(chunk);
}

INSTANTIATE_TEST_SUITE_P(Layouts, PoolAccountingTest,
                         ::testing::Values(Layout::kRecord, Layout::kIndexed, Layout::kEntries,
                                           Layout::kEntriesThenIndexed));

}  // namespace
}  // namespace dictlog::engine
