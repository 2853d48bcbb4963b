#include "server/dictionary/dictionary_cache.h"

#include <atomic>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "codec/test_dictionary.h"

namespace dictlog::dictionary {
namespace {

// Stored dictionaries 40000..40000+n-1, and how often each was loaded. The loader may
// be called from several threads at once (the cache loads outside its lock), so the
// counts are guarded.
class FakeStorage {
 public:
  explicit FakeStorage(int n) {
    for (int i = 0; i < n; ++i) {
      bytes_[40000 + i] = codec::TrainDictionaryForTest(codec::SyntheticLogLines(300, i),
                                                        2048, 40000 + i);
    }
  }
  DictionaryCache::Loader loader() {
    return [this](uint32_t id) -> absl::StatusOr<std::string> {
      {
        absl::MutexLock lock(&mu_);
        ++loads_[id];
      }
      auto it = bytes_.find(id);
      if (it == bytes_.end()) return absl::NotFoundError(absl::StrCat("no ", id));
      return it->second;
    };
  }
  int loads(uint32_t id) {
    absl::MutexLock lock(&mu_);
    return loads_[id];
  }
  size_t one_size() {
    return (*codec::DecoderDictionary::Create(bytes_.begin()->second))->memory_bytes();
  }

 private:
  std::map<uint32_t, std::string> bytes_;
  absl::Mutex mu_;
  std::map<uint32_t, int> loads_ ABSL_GUARDED_BY(mu_);
};

TEST(DictionaryCacheTest, MissLoadsThenHits) {
  FakeStorage storage(3);
  DictionaryCache cache(storage.loader(), {});
  auto dict = cache.Find(40001);
  ASSERT_NE(dict, nullptr);
  EXPECT_EQ(dict->id(), 40001u);
  EXPECT_EQ(cache.Find(40001), dict);
  EXPECT_EQ(storage.loads(40001), 1);
  EXPECT_EQ(cache.Find(49999), nullptr);
  DictionaryCacheStats stats = cache.stats();
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.misses, 2u);
  EXPECT_EQ(stats.builds, 1u);
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_EQ(stats.bytes, dict->memory_bytes());
}

TEST(DictionaryCacheTest, BudgetEvictsLeastRecentlyUsedAndRebuildsOnMiss) {
  FakeStorage storage(5);
  DictionaryCache cache(storage.loader(), {storage.one_size() * 2 + 100});
  for (uint32_t id = 40000; id < 40005; ++id) ASSERT_NE(cache.Find(id), nullptr);
  DictionaryCacheStats stats = cache.stats();
  EXPECT_EQ(stats.entries, 2u);
  EXPECT_LE(stats.bytes, storage.one_size() * 2 + 100);
  EXPECT_EQ(stats.evictions, 3u);
  ASSERT_NE(cache.Find(40004), nullptr);  // Still cached: no new load.
  EXPECT_EQ(storage.loads(40004), 1);
  ASSERT_NE(cache.Find(40000), nullptr);  // Evicted: rebuilt.
  EXPECT_EQ(storage.loads(40000), 2);
}

TEST(DictionaryCacheTest, PinnedNeverEvictedUntilUnpinned) {
  FakeStorage storage(6);
  DictionaryCache cache(storage.loader(), {storage.one_size() + 100});
  ASSERT_TRUE(cache.Pin(40000).ok());
  ASSERT_TRUE(cache.Pin(40001).ok());  // Pinned ones may exceed the budget.
  for (uint32_t id = 40002; id < 40006; ++id) ASSERT_NE(cache.Find(id), nullptr);
  ASSERT_NE(cache.Find(40000), nullptr);
  ASSERT_NE(cache.Find(40001), nullptr);
  EXPECT_EQ(storage.loads(40000), 1);
  EXPECT_EQ(storage.loads(40001), 1);
  EXPECT_EQ(cache.stats().pinned, 2u);
  cache.Unpin(40000);
  cache.Unpin(40001);
  EXPECT_EQ(cache.stats().pinned, 0u);
  EXPECT_LE(cache.stats().bytes, storage.one_size() + 100);
  EXPECT_EQ(cache.Pin(49999).status().code(), absl::StatusCode::kNotFound);
}

TEST(DictionaryCacheTest, InsertAndErase) {
  FakeStorage storage(1);
  DictionaryCache cache(storage.loader(), {});
  auto made = codec::DecoderDictionary::Create(codec::TrainDictionaryForTest(
      codec::SyntheticLogLines(300, 9), 2048, 41000));
  ASSERT_TRUE(made.ok());
  cache.Insert(*made);
  EXPECT_EQ(cache.Find(41000), *made);  // Not in storage: served from the cache.
  cache.Erase(41000);
  EXPECT_EQ(cache.Find(41000), nullptr);
  EXPECT_EQ(cache.stats().entries, 0u);
}

TEST(DictionaryCacheTest, ConcurrentLookupsUnderEvictionStayCorrect) {
  FakeStorage storage(12);
  DictionaryCache cache(storage.loader(), {storage.one_size() * 4 + 100});
  ASSERT_TRUE(cache.Pin(40000).ok());
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      for (int i = 0; i < 3000; ++i) {
        const uint32_t id = 40000 + rng() % 12;
        auto dict = cache.Find(id);
        if (dict == nullptr || dict->id() != id) ++wrong;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(storage.loads(40000), 1);  // The pinned one was never evicted.
  const DictionaryCacheStats stats = cache.stats();
  EXPECT_LE(stats.bytes, storage.one_size() * 5 + 100);
  EXPECT_GT(stats.evictions, 0u);
  EXPECT_EQ(stats.hits + stats.misses, 12000u + 1);  // + the Pin's lookup.
}

TEST(DictionaryCacheTest, FindManyResolvesEachIdInOrder) {
  FakeStorage storage(4);
  DictionaryCache cache(storage.loader(), {});
  ASSERT_TRUE(cache.Pin(40000).ok());
  ASSERT_NE(cache.Find(40001), nullptr);  // Cached, not pinned.
  const std::vector<uint32_t> ids = {40001, 0, 40000, 40000, 49999, 40002, 40001};
  std::vector<uint32_t> seen;
  cache.FindMany(ids, [&](codec::DictionaryLookup::Dictionaries dicts) {
    ASSERT_EQ(dicts.size(), ids.size());
    for (const codec::DecoderDictionary* d : dicts) seen.push_back(d ? d->id() : 0);
  });
  // 0 and the unknown id give nullptr; 40002 was loaded for the call.
  EXPECT_EQ(seen, (std::vector<uint32_t>{40001, 0, 40000, 40000, 0, 40002, 40001}));
  EXPECT_EQ(storage.loads(40002), 1);
  EXPECT_EQ(storage.loads(40000), 1);
  EXPECT_EQ(cache.stats().entries, 3u);
}

TEST(DictionaryCacheTest, FindManyRefreshesRecencyOfUnpinnedHits) {
  FakeStorage storage(3);
  DictionaryCache cache(storage.loader(), {storage.one_size() * 2 + 100});
  ASSERT_NE(cache.Find(40000), nullptr);
  ASSERT_NE(cache.Find(40001), nullptr);
  const std::vector<uint32_t> ids = {40000};
  cache.FindMany(ids, [](codec::DictionaryLookup::Dictionaries) {});
  ASSERT_NE(cache.Find(40002), nullptr);  // Evicts the least recent: 40001.
  ASSERT_NE(cache.Find(40000), nullptr);
  EXPECT_EQ(storage.loads(40000), 1);
  ASSERT_NE(cache.Find(40001), nullptr);
  EXPECT_EQ(storage.loads(40001), 2);
}

TEST(DictionaryCacheTest, ConcurrentFindManyUnderEvictionDecodesWithValidDictionaries) {
  FakeStorage storage(12);
  // Room for 3: each batch of 8 ids needs loads that evict entries other batches use.
  DictionaryCache cache(storage.loader(), {storage.one_size() * 3 + 100});
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      std::vector<uint32_t> ids(8);
      for (int i = 0; i < 400; ++i) {
        for (uint32_t& id : ids) id = 40000 + rng() % 12;
        cache.FindMany(ids, [&](codec::DictionaryLookup::Dictionaries dicts) {
          for (size_t k = 0; k < ids.size(); ++k) {
            // Reads the object: a dictionary freed meanwhile would show under ASan.
            if (dicts[k] == nullptr || dicts[k]->id() != ids[k] ||
                dicts[k]->memory_bytes() == 0) {
              ++wrong;
            }
          }
        });
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(cache.stats().evictions, 0u);
}

}  // namespace
}  // namespace dictlog::dictionary
