// LogEngine::DeletePool over a real RocksDB, in record mode, block mode with indexed
// blocks and blocks found through entry values (a store from before indexed blocks):
// everything of the pool goes from every column family, its ids answer NOT_FOUND "was
// deleted", the name can be created again with a new id and seqs past the old ones,
// pool ids are never reused, a restart finishes a delete interrupted at either step,
// and other pools' appends and reads are unaffected while a delete runs (threads).
#include <atomic>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "codec/test_dictionary.h"
#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "server/engine/engine_test_util.h"
#include "server/engine/log_engine.h"
#include "server/store/store.h"

namespace dictlog::engine {
namespace {

enum class Layout { kRecord, kIndexed, kEntries };

class PoolDeleteTest : public ::testing::TestWithParam<Layout> {
 protected:
  void SetUp() override {
    options_.store.path = FreshTestDir();
    options_.auto_train = false;
    options_.retention.interval = absl::ZeroDuration();
    options_.default_pool_options.set_dictionary_bytes(4096);
    if (GetParam() != Layout::kRecord) {
      options_.default_pool_options.set_storage_mode(v1::STORAGE_MODE_BLOCK);
      options_.default_pool_options.set_block_bytes(1024);
    }
    Reopen();
    if (GetParam() == Layout::kEntries) {
      // Pool "web" as a store from before indexed blocks holds it.
      ASSERT_TRUE(engine_->CreatePool("web", v1::PoolOptions()).ok());
      engine_.reset();
      const absl::Status set = SetIndexedBlocksFrom(options_.store, "web", 1000000);
      ASSERT_TRUE(set.ok()) << set;
      Reopen();
    }
  }

  void Reopen() {
    engine_.reset();
    auto engine = LogEngine::Open(options_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
  }

  // Runs `use` on the store opened alone (the engine closed).
  void WithStore(const std::function<void(store::Store&)>& use) {
    engine_.reset();
    auto store = store::Store::Open(options_.store);
    ASSERT_TRUE(store.ok()) << store.status();
    use(**store);
  }

  std::vector<std::string> AppendLines(const std::string& category, int n, int seed) {
    const std::vector<std::string> lines = codec::SyntheticLogLines(n, seed);
    std::vector<AppendInput> batch;  // Views into `lines`, which outlives the call.
    for (const std::string& line : lines) batch.push_back({category, line});
    auto ids = engine_->Append(batch);
    EXPECT_TRUE(ids.ok()) << ids.status();
    return ids.ok() ? *ids : std::vector<std::string>();
  }

  // 600 records of "web" in 10 calls, with a dictionary trained and activated after
  // the first 180 (so records and blocks name one); 100 records of "api".
  void Fill() {
    for (int call = 0; call < 10; ++call) {
      AppendLines("web", 60, call);
      if (call == 2) TrainAndActivate("web");
    }
    api_ids_ = AppendLines("api", 100, 99);
  }

  void TrainAndActivate(const std::string& pool) {
    const absl::Status activated = engine::TrainAndActivate(*engine_, pool);
    ASSERT_TRUE(activated.ok()) << activated;
  }

  uint32_t PoolId(const std::string& name) {
    auto info = engine_->GetPool(name);
    EXPECT_TRUE(info.ok()) << info.status();
    uint32_t id = 0;
    WithStore([&](store::Store& store) {
      auto pools = store.LoadPools();
      ASSERT_TRUE(pools.ok());
      for (const store::StoredPool& p : *pools) {
        if (p.record.name() == name) id = p.record.id();
      }
    });
    Reopen();
    return id;
  }

  // Nothing keyed by pool id `id` is left in any column family.
  void ExpectNothingOf(uint32_t id) {
    WithStore([&](store::Store& store) {
      auto records = store.ScanRecords(id, 0, SIZE_MAX);
      ASSERT_TRUE(records.ok());
      EXPECT_TRUE(records->empty()) << records->size() << " records left";
      auto indexed = store.ScanIndexedBlocks(id, 0, 0, SIZE_MAX);
      ASSERT_TRUE(indexed.ok());
      EXPECT_TRUE(indexed->empty()) << indexed->size() << " indexed blocks left";
      auto entry_blocks = store.MultiGetBlocks({{id, 1}});
      EXPECT_TRUE(absl::IsNotFound(entry_blocks[0].status()));
      auto times = store.AppendTimes({{id, 1}, {id, 599}});
      ASSERT_TRUE(times.ok());
      EXPECT_FALSE((*times)[0].has_value());
      EXPECT_FALSE((*times)[1].has_value());
      auto pools = store.LoadPools();
      ASSERT_TRUE(pools.ok());
      for (const store::StoredPool& p : *pools) EXPECT_NE(p.record.id(), id);
      auto dictionaries = store.LoadDictionaries();
      ASSERT_TRUE(dictionaries.ok());
      for (const storage::DictionaryRecord& d : *dictionaries) {
        if (d.pool_id() != id) continue;
        EXPECT_TRUE(d.retired()) << d.id();
        EXPECT_TRUE(d.content().empty()) << d.id();
        auto refs = store.DictionaryReferences(d.id());
        ASSERT_TRUE(refs.ok());
        EXPECT_EQ(refs->records, 0u);
      }
      auto states = store.LoadRecompressStates();
      ASSERT_TRUE(states.ok());
      for (const storage::RecompressState& s : *states) EXPECT_NE(s.pool_id(), id);
    });
    Reopen();
  }

  void ExpectApiIntact() {
    auto got = engine_->MultiGet(api_ids_);
    ASSERT_TRUE(got.ok());
    for (const auto& r : *got) EXPECT_TRUE(r.ok()) << r.status();
    auto info = engine_->GetPool("api");
    ASSERT_TRUE(info.ok());
    EXPECT_EQ(info->stats().records(), api_ids_.size());
  }

  EngineOptions options_;
  std::unique_ptr<LogEngine> engine_;
  std::vector<std::string> api_ids_;
};

TEST_P(PoolDeleteTest, EverythingOfThePoolGoesAndItsIdsAnswerDeleted) {
  Fill();
  const uint32_t web = PoolId("web");
  auto before = engine_->GetPool("web");
  ASSERT_TRUE(before.ok());

  auto deleted = engine_->DeletePool("web");
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(deleted->records(), 600u);
  EXPECT_EQ(deleted->raw_bytes(), before->stats().raw_bytes());
  EXPECT_EQ(deleted->stored_bytes(), before->stats().stored_bytes());
  EXPECT_EQ(deleted->dictionaries(), 1u);
  EXPECT_EQ(deleted->next_id(), "web/601");
  EXPECT_EQ(engine_->PoolsDeleted(), 1u);

  auto got = engine_->Get("web/1");
  EXPECT_TRUE(absl::IsNotFound(got.status())) << got.status();
  EXPECT_TRUE(absl::StrContains(got.status().message(), "deleted")) << got.status();
  EXPECT_TRUE(absl::IsNotFound(engine_->GetPool("web").status()));
  EXPECT_TRUE(absl::IsNotFound(engine_->DeletePool("web").status()));
  v1::ListDictionariesRequest list;
  auto dictionaries = engine_->ListDictionaries(list);
  ASSERT_TRUE(dictionaries.ok());
  EXPECT_EQ(dictionaries->dictionaries_size(), 0);
  ExpectApiIntact();
  ExpectNothingOf(web);
  ExpectApiIntact();  // And after a restart.
  EXPECT_TRUE(absl::IsNotFound(engine_->Get("web/1").status()));
}

TEST_P(PoolDeleteTest, UnknownPoolIsNotFoundAndBadNameInvalid) {
  EXPECT_TRUE(absl::IsNotFound(engine_->DeletePool("nope").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(engine_->DeletePool("").status()));
}

TEST_P(PoolDeleteTest, NameComesBackWithNewIdAndSeqsPastTheOldOnes) {
  Fill();
  const uint32_t old_id = PoolId("web");
  ASSERT_TRUE(engine_->DeletePool("web").ok());
  // An append of the category creates the pool again.
  std::vector<std::string> ids = AppendLines("web", 5, 7);
  ASSERT_EQ(ids.size(), 5u);
  EXPECT_EQ(ids[0], "web/601");
  const uint32_t new_id = PoolId("web");
  EXPECT_GT(new_id, PoolId("api"));  // A fresh id, above every other.
  EXPECT_NE(new_id, old_id);
  for (const char* old : {"web/1", "web/600"}) {
    auto got = engine_->Get(old);
    EXPECT_TRUE(absl::IsNotFound(got.status())) << got.status();
    EXPECT_TRUE(absl::StrContains(got.status().message(), "deleted")) << got.status();
  }
  auto mine = engine_->MultiGet(ids);
  ASSERT_TRUE(mine.ok());
  for (const auto& r : *mine) EXPECT_TRUE(r.ok()) << r.status();
  Reopen();
  EXPECT_TRUE(absl::IsNotFound(engine_->Get("web/3").status()));
  EXPECT_TRUE(engine_->Get(ids[4]).ok());
  EXPECT_EQ(AppendLines("web", 1, 8)[0], "web/606");
  ExpectApiIntact();
}

TEST_P(PoolDeleteTest, PoolIdsAreNeverReused) {
  Fill();
  const uint32_t api = PoolId("api");  // The greatest id.
  ASSERT_TRUE(engine_->DeletePool("api").ok());
  Reopen();
  ASSERT_TRUE(engine_->CreatePool("other", v1::PoolOptions()).ok());
  EXPECT_GT(PoolId("other"), api);
}

// A restart after the tombstone, or after the range deletions, finishes the delete.
TEST_P(PoolDeleteTest, RestartFinishesAnInterruptedDelete) {
  Fill();
  const uint32_t web = PoolId("web");
  for (bool data_deleted : {false, true}) {
    WithStore([&](store::Store& store) {
      storage::DeletedPool tombstone;
      tombstone.set_pool_id(web);
      tombstone.set_name("web");
      tombstone.set_next_seq(601);
      tombstone.set_pending(true);
      ASSERT_TRUE(store.BeginPoolDelete(tombstone).ok());
      if (data_deleted) {
        ASSERT_TRUE(store.DeletePoolData(web).ok());
      }
    });
    Reopen();
    EXPECT_TRUE(absl::IsNotFound(engine_->GetPool("web").status()));
    EXPECT_TRUE(absl::IsNotFound(engine_->Get("web/1").status()));
    ExpectNothingOf(web);
    ExpectApiIntact();
    EXPECT_EQ(AppendLines("web", 1, 3)[0], "web/601");
    if (!data_deleted) {
      ASSERT_TRUE(engine_->DeletePool("web").ok());  // The new one; web/601 goes.
    }
  }
}

// Appends and reads of another pool while "web" is deleted: all succeed. Appends to
// "web" racing the delete land before it (then go with it) or after it, in a new pool
// of the name: nothing is left under the old pool's id.
TEST_P(PoolDeleteTest, OtherPoolsAreUnaffectedAndRacingAppendsLeaveNoOrphans) {
  Fill();
  const uint32_t web = PoolId("web");
  std::atomic<bool> stop{false};
  std::atomic<int> api_appends{0}, api_reads{0}, web_appends{0}, failures{0};
  std::vector<std::string> web_ids;
  std::thread api_writer([&] {
    for (int i = 0; !stop.load(); ++i) {
      auto ids = engine_->Append({{"api", absl::StrCat("api line ", i)}});
      if (ids.ok()) {
        ++api_appends;
      } else {
        ++failures;
      }
    }
  });
  std::thread api_reader([&] {
    while (!stop.load()) {
      auto got = engine_->MultiGet(api_ids_);
      if (!got.ok()) {
        ++failures;
        continue;
      }
      for (const auto& r : *got) {
        if (!r.ok()) ++failures;
      }
      ++api_reads;
    }
  });
  std::thread web_writer([&] {
    for (int i = 0; !stop.load(); ++i) {
      auto ids = engine_->Append({{"web", absl::StrCat("web racing line ", i)}});
      if (ids.ok()) {
        web_ids.push_back((*ids)[0]);  // Read after the join only.
        ++web_appends;
      }
      // Failing cleanly is allowed: NOT_FOUND or FAILED_PRECONDITION only.
      if (!ids.ok() && !absl::IsNotFound(ids.status()) &&
          !absl::IsFailedPrecondition(ids.status())) {
        ++failures;
      }
    }
  });
  // Let every thread get going (progress, not time), then delete.
  while (api_appends.load() < 50 || api_reads.load() < 2 || web_appends.load() < 50) {
    std::this_thread::yield();
  }
  auto deleted = engine_->DeletePool("web");
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  const int api_at_delete = api_appends.load();
  const int web_at_delete = web_appends.load();
  while (api_appends.load() < api_at_delete + 50 || web_appends.load() < web_at_delete + 20) {
    std::this_thread::yield();
  }
  stop = true;
  api_writer.join();
  api_reader.join();
  web_writer.join();
  EXPECT_EQ(failures.load(), 0);
  const uint64_t next = std::stoull(deleted->next_id().substr(4));
  std::vector<std::string> after;
  for (const std::string& id : web_ids) {
    const uint64_t seq = std::stoull(id.substr(4));
    if (seq >= next) {
      after.push_back(id);
    } else {
      EXPECT_TRUE(absl::IsNotFound(engine_->Get(id).status())) << id;
    }
  }
  EXPECT_FALSE(after.empty());  // Appends after the delete made a new pool "web".
  auto got = engine_->MultiGet(after);
  ASSERT_TRUE(got.ok());
  for (const auto& r : *got) EXPECT_TRUE(r.ok()) << r.status();
  ExpectNothingOf(web);
}

INSTANTIATE_TEST_SUITE_P(Layouts, PoolDeleteTest,
                         ::testing::Values(Layout::kRecord, Layout::kIndexed,
                                           Layout::kEntries));

}  // namespace
}  // namespace dictlog::engine
