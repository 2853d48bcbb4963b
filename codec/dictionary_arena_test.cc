#include "codec/dictionary_arena.h"

#include <cstdint>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace dictlog::codec {
namespace {

constexpr size_t kBlock = 44 * 1024 + 100;  // About a 16 KiB dictionary's block.

TEST(DictionaryArenaTest, BlocksArePageAlignedDistinctAndWritable) {
  DictionaryArena arena;
  std::vector<char*> blocks;
  for (int i = 0; i < 50; ++i) {  // More than one region's worth.
    char* b = static_cast<char*>(arena.Allocate(kBlock));
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % DictionaryArena::kAlignment, 0u);
    std::memset(b, i, kBlock);
    blocks.push_back(b);
  }
  for (int i = 0; i < 50; ++i) {
    for (size_t at : {size_t{0}, kBlock / 2, kBlock - 1}) {
      ASSERT_EQ(blocks[i][at], static_cast<char>(i)) << "block " << i << " overwritten";
    }
  }
  const DictionaryArena::Stats stats = arena.stats();
  EXPECT_EQ(stats.used_bytes, 50 * DictionaryArena::BlockBytes(kBlock));
  EXPECT_EQ(stats.used_bytes + stats.free_bytes, stats.region_bytes);
  for (char* b : blocks) arena.Free(b, kBlock);
  EXPECT_EQ(arena.stats().used_bytes, 0u);
}

TEST(DictionaryArenaTest, FreedBlockIsReused) {
  DictionaryArena arena;
  void* a = arena.Allocate(kBlock);
  void* b = arena.Allocate(kBlock);
  arena.Free(a, kBlock);
  EXPECT_EQ(arena.Allocate(kBlock), a);
  const size_t regions = arena.stats().region_bytes;
  for (int i = 0; i < 100; ++i) {  // Churn at a steady population: no growth.
    void* c = arena.Allocate(kBlock);
    arena.Free(c, kBlock);
  }
  EXPECT_EQ(arena.stats().region_bytes, regions);
  arena.Free(b, kBlock);
}

TEST(DictionaryArenaTest, NeighboursMergeSoABiggerBlockFits) {
  DictionaryArena arena;
  // Fill one region exactly with 4 KiB blocks, so nothing else is free.
  const size_t page = DictionaryArena::kAlignment;
  std::vector<char*> blocks;
  for (size_t i = 0; i < DictionaryArena::kRegionBytes / page; ++i) {
    blocks.push_back(static_cast<char*>(arena.Allocate(page)));
  }
  ASSERT_EQ(arena.stats().free_bytes, 0u);
  const size_t regions = arena.stats().region_bytes;
  // Free three neighbours in the middle, out of order: they must merge into one.
  arena.Free(blocks[11], page);
  arena.Free(blocks[13], page);
  arena.Free(blocks[12], page);
  char* big = static_cast<char*>(arena.Allocate(3 * page));
  EXPECT_EQ(big, blocks[11]);
  EXPECT_EQ(arena.stats().region_bytes, regions) << "needed a new region";
}

TEST(DictionaryArenaTest, OversizedBlockGetsItsOwnMapping) {
  DictionaryArena arena;
  const size_t huge = DictionaryArena::kRegionBytes + 1;
  char* b = static_cast<char*>(arena.Allocate(huge));
  ASSERT_NE(b, nullptr);
  b[0] = 1;
  b[huge - 1] = 2;
  EXPECT_GE(arena.stats().region_bytes, huge);
  arena.Free(b, huge);
  EXPECT_EQ(arena.stats().region_bytes, 0u);
  EXPECT_EQ(arena.stats().used_bytes, 0u);
}

TEST(DictionaryArenaTest, ConcurrentAllocateAndFreeNeverShareBytes) {
  DictionaryArena arena;
  constexpr int kThreads = 4, kRounds = 200;
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&arena, &failures, t] {
      std::vector<std::pair<char*, size_t>> mine;
      for (int r = 0; r < kRounds; ++r) {
        const size_t bytes = kBlock + 4096 * (r % 5);
        char* b = static_cast<char*>(arena.Allocate(bytes));
        std::memset(b, t + 1, bytes);
        mine.emplace_back(b, bytes);
        if (r % 3 == 2) {  // Free the oldest, after checking nobody wrote into it.
          auto [old, old_bytes] = mine.front();
          for (size_t i = 0; i < old_bytes; i += 512) failures[t] += old[i] != t + 1;
          arena.Free(old, old_bytes);
          mine.erase(mine.begin());
        }
      }
      for (auto [b, bytes] : mine) {
        for (size_t i = 0; i < bytes; i += 512) failures[t] += b[i] != t + 1;
        arena.Free(b, bytes);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
  EXPECT_EQ(arena.stats().used_bytes, 0u);
}

}  // namespace
}  // namespace dictlog::codec
