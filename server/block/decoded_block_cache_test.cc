#include "server/block/decoded_block_cache.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace dictlog::block {
namespace {

// A decoded block of seqs first..last (every `step`-th), each payload `payload_bytes`.
std::shared_ptr<const IndexedContent> MakeBlock(uint64_t first, uint64_t last,
                                                size_t payload_bytes = 100,
                                                uint64_t step = 1) {
  auto block = std::make_shared<IndexedContent>();
  std::vector<codec::IndexedEntry> entries;
  std::string payloads;
  for (uint64_t seq = first; seq <= last; seq += step) {
    payloads += std::string(payload_bytes, static_cast<char>('a' + seq % 26));
  }
  block->content = std::make_unique<std::string>(std::move(payloads));
  size_t at = 0;
  for (uint64_t seq = first; seq <= last; seq += step) {
    block->entries.push_back(
        {seq, 1, absl::string_view(*block->content).substr(at, payload_bytes)});
    at += payload_bytes;
  }
  return block;
}

// Offers a block twice: the first offer only makes the admission table remember it.
void OfferTwice(DecodedBlockCache& cache, uint32_t pool, uint64_t first, uint64_t last,
                std::shared_ptr<const IndexedContent> block) {
  cache.Offer(pool, first, last, block);
  cache.Offer(pool, first, last, std::move(block));
}

TEST(DecodedBlockCacheTest, FindsTheBlockWhoseRangeHoldsTheSeq) {
  DecodedBlockCache cache(1 << 20);
  OfferTwice(cache, 7, 100, 115, MakeBlock(100, 115));
  OfferTwice(cache, 7, 116, 130, MakeBlock(116, 130));
  OfferTwice(cache, 8, 100, 115, MakeBlock(100, 115));
  ASSERT_EQ(cache.blocks(), 3u);
  for (uint64_t seq : {100u, 107u, 115u}) {
    std::shared_ptr<const IndexedContent> found = cache.Find(7, seq);
    ASSERT_NE(found, nullptr) << seq;
    EXPECT_EQ(found->entries.front().seq, 100u);
  }
  EXPECT_EQ(cache.Find(7, 116)->entries.front().seq, 116u);
  EXPECT_EQ(cache.Find(7, 99), nullptr);   // Before the pool's first cached block.
  EXPECT_EQ(cache.Find(7, 131), nullptr);  // Past the last block's range.
  EXPECT_EQ(cache.Find(6, 110), nullptr);  // Another pool's block does not answer.
  EXPECT_EQ(cache.Find(9, 110), nullptr);
  EXPECT_NE(cache.Find(8, 110), nullptr);
}

TEST(DecodedBlockCacheTest, AdmitsABlockOnItsSecondOffer) {
  DecodedBlockCache cache(1 << 20);
  cache.Offer(1, 10, 20, MakeBlock(10, 20));
  EXPECT_EQ(cache.Find(1, 15), nullptr);
  EXPECT_EQ(cache.blocks(), 0u);
  cache.Offer(1, 10, 20, MakeBlock(10, 20));
  EXPECT_NE(cache.Find(1, 15), nullptr);
  // Offered again (two readers missed it at once): replaced, counted once.
  const size_t bytes = cache.bytes();
  cache.Offer(1, 10, 20, MakeBlock(10, 20));
  EXPECT_EQ(cache.blocks(), 1u);
  EXPECT_EQ(cache.bytes(), bytes);
}

TEST(DecodedBlockCacheTest, StaysWithinItsCapacityAndKeepsWhatIsRead) {
  const size_t block_cost = DecodedBlockCache::Cost(*MakeBlock(0, 9));
  DecodedBlockCache cache(8 * block_cost);
  OfferTwice(cache, 1, 0, 9, MakeBlock(0, 9));  // Read between inserts: kept.
  for (uint64_t first = 10; first < 200; first += 10) {
    ASSERT_NE(cache.Find(1, 5), nullptr) << first;
    OfferTwice(cache, 1, first, first + 9, MakeBlock(first, first + 9));
    ASSERT_LE(cache.bytes(), cache.capacity());
  }
  EXPECT_EQ(cache.blocks(), 8u);
  EXPECT_NE(cache.Find(1, 5), nullptr);      // The block read all along.
  EXPECT_NE(cache.Find(1, 195), nullptr);    // The newest.
  EXPECT_EQ(cache.Find(1, 15), nullptr);     // Old and never read: evicted.
}

TEST(DecodedBlockCacheTest, KeepsNothingTooLargeOrWithoutCapacity) {
  DecodedBlockCache none(0);
  OfferTwice(none, 1, 0, 9, MakeBlock(0, 9));
  EXPECT_EQ(none.Find(1, 5), nullptr);
  EXPECT_EQ(none.blocks(), 0u);
  // A quarter of the capacity at most.
  DecodedBlockCache small(4 * DecodedBlockCache::Cost(*MakeBlock(0, 9)) - 1);
  OfferTwice(small, 1, 0, 9, MakeBlock(0, 9));
  EXPECT_EQ(small.blocks(), 0u);
}

TEST(DecodedBlockCacheTest, AGapInARangeIsTheCallersToFind) {
  DecodedBlockCache cache(1 << 20);
  OfferTwice(cache, 1, 10, 20, MakeBlock(10, 20, 50, /*step=*/2));  // 10, 12, ..., 20.
  std::shared_ptr<const IndexedContent> found = cache.Find(1, 11);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->entries.size(), 6u);
}

// A window of lookups that mostly miss turns lookups off for seven windows; then the
// cache probes again and finds what it holds.
TEST(DecodedBlockCacheTest, ACacheThatRarelyHitsTurnsItselfOffForAWhile) {
  DecodedBlockCache cache(1 << 20);
  OfferTwice(cache, 1, 0, 9, MakeBlock(0, 9));
  ASSERT_NE(cache.Find(1, 5), nullptr);  // Lookup 1 of the first window: a hit.
  for (int i = 1; i < 4096; ++i) ASSERT_EQ(cache.Find(2, i), nullptr);  // Misses.
  EXPECT_TRUE(cache.off());
  EXPECT_EQ(cache.blocks(), 0u);  // Emptied: its memory goes back.
  EXPECT_EQ(cache.bytes(), 0u);
  EXPECT_EQ(cache.Find(1, 5), nullptr);
  OfferTwice(cache, 1, 10, 19, MakeBlock(10, 19));
  EXPECT_EQ(cache.blocks(), 0u);  // Nor kept.
  for (int i = 1; i < 7 * 4096; ++i) cache.Find(2, i);
  EXPECT_FALSE(cache.off());
  OfferTwice(cache, 1, 0, 9, MakeBlock(0, 9));  // Probing again: kept and found.
  EXPECT_NE(cache.Find(1, 5), nullptr);
  // A window with enough hits keeps it on.
  for (int i = 0; i < 4096; ++i) cache.Find(1, i % 10);
  EXPECT_FALSE(cache.off());
  EXPECT_EQ(cache.blocks(), 1u);
}

// What the cache holds is reported in whole MiB as it changes (the engine takes it
// out of RocksDB's block cache), and emptying it reports 0.
TEST(DecodedBlockCacheTest, TellsWhatItHoldsInWholeMiB) {
  std::vector<size_t> told;
  DecodedBlockCache cache(8 << 20, [&](size_t held) { told.push_back(held); });
  // Blocks of 1,000 payloads of 400 bytes: about 0.42 MB each with their entries.
  auto block = [](uint64_t first) { return MakeBlock(first, first + 999, 400); };
  const size_t cost = DecodedBlockCache::Cost(*block(0));
  ASSERT_GT(cost, 400000u);
  ASSERT_LT(cost, 512u << 10);
  OfferTwice(cache, 1, 0, 999, block(0));
  EXPECT_EQ(told, std::vector<size_t>({1 << 20}));
  OfferTwice(cache, 1, 1000, 1999, block(1000));  // Two blocks: still under 1 MiB.
  EXPECT_EQ(told, std::vector<size_t>({1 << 20}));
  OfferTwice(cache, 1, 2000, 2999, block(2000));  // Three: past it.
  EXPECT_EQ(told, std::vector<size_t>({1 << 20, 2 << 20}));
  EXPECT_EQ(cache.bytes(), 3 * cost);
  // A window of misses turns it off and empties it.
  for (int i = 0; i < 4096; ++i) cache.Find(2, i);
  ASSERT_TRUE(cache.off());
  EXPECT_EQ(told, std::vector<size_t>({1 << 20, 2 << 20, 0}));
  // Without a callback nothing is told, and the cache works the same.
  DecodedBlockCache silent(8 << 20);
  OfferTwice(silent, 1, 0, 999, block(0));
  EXPECT_NE(silent.Find(1, 500), nullptr);
}

// Readers, writers and evictions at once (run under TSan in make tsan): every block
// found is the one offered for its range, whole. Half the lookups go to 10 hot blocks
// (hits, so the cache never turns itself off and empties), half cycle through 90 cold
// ones (misses, offers and evictions: 40 blocks fit).
TEST(DecodedBlockCacheTest, ConcurrentReadersAndWritersSeeWholeBlocks) {
  DecodedBlockCache cache(40 * DecodedBlockCache::Cost(*MakeBlock(0, 9)));
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 2000; ++round) {
        const int block = round % 2 == 0 ? (round / 2 + t) % 10
                                         : 10 + (round * 7 + t * 13) % 90;
        const uint64_t first = 10 * static_cast<uint64_t>(block);
        if (std::shared_ptr<const IndexedContent> found = cache.Find(2, first + 3)) {
          if (found->entries.size() != 10 || found->entries.front().seq != first ||
              found->entries[3].payload != std::string(100, static_cast<char>(
                                                                'a' + (first + 3) % 26))) {
            wrong.fetch_add(1);
          }
        } else {
          cache.Offer(2, first, first + 9, MakeBlock(first, first + 9));
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_LE(cache.bytes(), cache.capacity());
  EXPECT_FALSE(cache.off());
  EXPECT_GT(cache.blocks(), 0u);
}

}  // namespace
}  // namespace dictlog::block
