#include "server/pool/block_tail.h"

#include <atomic>
#include <thread>

#include "gtest/gtest.h"

namespace dictlog::pool {
namespace {

std::vector<uint64_t> Seqs(const std::vector<BlockTail::Record>& records) {
  std::vector<uint64_t> seqs;
  for (const BlockTail::Record& r : records) seqs.push_back(r.seq);
  return seqs;
}

TEST(BlockTailTest, TakesNothingUntilABlocksWorth) {
  BlockTail tail;
  tail.Add({1, 400});
  tail.Add({2, 400});
  EXPECT_TRUE(tail.TakeBlock(1000).empty());
  EXPECT_EQ(tail.records(), 2u);
  EXPECT_EQ(tail.bytes(), 800u);
}

// OpenFrom: the oldest seq a reader may still find single or pending, as records and
// reservations come and go (readers look for smaller seqs in blocks first).
TEST(BlockTailTest, OpenFromFollowsTheOldestRecordOrReservation) {
  BlockTail tail;
  std::atomic<uint64_t> next_seq{1};
  EXPECT_EQ(tail.OpenFrom(), UINT64_MAX);  // Nothing open.
  const uint64_t first = tail.Reserve(next_seq, 4);  // Seqs 1..4, in flight.
  EXPECT_EQ(tail.OpenFrom(), first);
  tail.Land(first, {{1, 600}, {2, 600}, {3, 600}, {4, 600}});
  EXPECT_EQ(tail.OpenFrom(), 1u);
  const uint64_t second = tail.Reserve(next_seq, 2);  // Seqs 5..6.
  EXPECT_EQ(Seqs(tail.TakeBlock(1200)), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(tail.OpenFrom(), 3u);
  EXPECT_EQ(Seqs(tail.TakeBlock(1200)), (std::vector<uint64_t>{3, 4}));
  EXPECT_EQ(tail.OpenFrom(), second);  // The reservation still in flight.
  tail.Land(second, {});  // Its write failed: nothing to pack.
  EXPECT_EQ(tail.OpenFrom(), UINT64_MAX);
  tail.Restore({{3, 600}});  // A failed seal puts its records back.
  EXPECT_EQ(tail.OpenFrom(), 3u);
}

TEST(BlockTailTest, TakesOldestRecordsUpToTheBlockSize) {
  BlockTail tail;
  tail.Add({5, 400});  // Out of order: a slower append finished later.
  tail.Add({3, 400});
  tail.Add({4, 300});
  tail.Add({6, 100});
  std::vector<BlockTail::Record> block = tail.TakeBlock(1000);
  EXPECT_EQ(Seqs(block), (std::vector<uint64_t>{3, 4}));  // 5 would overflow.
  EXPECT_EQ(tail.bytes(), 500u);
  EXPECT_TRUE(tail.TakeBlock(1000).empty());
}

TEST(BlockTailTest, TakesAtLeastOneRecord) {
  BlockTail tail;
  tail.Add({1, 5000});
  EXPECT_EQ(Seqs(tail.TakeBlock(1000)), (std::vector<uint64_t>{1}));
  EXPECT_EQ(tail.records(), 0u);
}

TEST(BlockTailTest, RestorePutsBackAFailedSeal) {
  BlockTail tail;
  for (uint64_t seq = 1; seq <= 4; ++seq) tail.Add({seq, 300});
  std::vector<BlockTail::Record> block = tail.TakeBlock(900);
  ASSERT_EQ(block.size(), 3u);
  tail.Restore(block);
  EXPECT_EQ(tail.records(), 4u);
  EXPECT_EQ(tail.bytes(), 1200u);
  tail.Add({2, 300});  // A duplicate is not counted twice.
  EXPECT_EQ(tail.bytes(), 1200u);
}

// A record landing late (seq 2 below) must not fall inside a block sealed before it:
// nothing past the oldest pending seq is taken.
TEST(BlockTailTest, TakesNothingPastThePendingSeqUntilItLands) {
  BlockTail tail;
  std::atomic<uint64_t> next_seq{1};
  const uint64_t first = tail.Reserve(next_seq, 1);
  const uint64_t second = tail.Reserve(next_seq, 1);
  const uint64_t third = tail.Reserve(next_seq, 1);
  ASSERT_EQ(first, 1u);
  tail.Land(first, {{first, 400}});
  tail.Land(third, {{third, 400}});
  EXPECT_TRUE(tail.TakeBlock(800).empty());  // Only 400 bytes before pending seq 2.
  tail.Land(second, {{second, 400}});
  EXPECT_EQ(Seqs(tail.TakeBlock(800)), (std::vector<uint64_t>{1, 2}));
  // A failed write lands nothing and stops holding the tail back.
  const uint64_t failed = tail.Reserve(next_seq, 2);
  const uint64_t later = tail.Reserve(next_seq, 1);
  tail.Land(later, {{later, 500}});
  EXPECT_TRUE(tail.TakeBlock(800).empty());
  tail.Land(failed, {});
  EXPECT_EQ(Seqs(tail.TakeBlock(900)), (std::vector<uint64_t>{3, 6}));
}

// An append that sealed blocks of its own (seqs 3..10 below, its blocks 3..8) lands
// with a cut: no block takes records from both sides of it, so the records before it
// are sealed short once nothing before it is pending, and the append's leftover (9,
// 10) waits for a block's worth of its own.
TEST(BlockTailTest, NoBlockCrossesACutAndTheRecordsBeforeItSealShort) {
  BlockTail tail;
  std::atomic<uint64_t> next_seq{1};
  const uint64_t before = tail.Reserve(next_seq, 2);   // 1, 2
  const uint64_t direct = tail.Reserve(next_seq, 8);   // 3..10
  tail.Land(direct, {{9, 400}, {10, 400}}, /*cut=*/true);
  EXPECT_TRUE(tail.TakeBlock(1000).empty());  // 1, 2 still pending.
  tail.Land(before, {{1, 300}, {2, 300}});
  // 1 + 2 + 9 would be a block's worth, but 9 lies past the cut: 1, 2 go alone.
  EXPECT_EQ(Seqs(tail.TakeBlock(1000)), (std::vector<uint64_t>{1, 2}));
  EXPECT_TRUE(tail.TakeBlock(1000).empty());  // 800 bytes after the cut: not a block.
  const uint64_t later = tail.Reserve(next_seq, 1);  // 11
  tail.Land(later, {{later, 200}});
  EXPECT_EQ(Seqs(tail.TakeBlock(1000)), (std::vector<uint64_t>{9, 10, 11}));
  EXPECT_EQ(tail.records(), 0u);
  EXPECT_EQ(tail.bytes(), 0u);
}

// A cut with nothing before it holds nothing back.
TEST(BlockTailTest, ACutWithNothingBeforeItIsDropped) {
  BlockTail tail;
  std::atomic<uint64_t> next_seq{1};
  const uint64_t direct = tail.Reserve(next_seq, 4);
  tail.Land(direct, {{4, 300}}, /*cut=*/true);
  EXPECT_TRUE(tail.TakeBlock(1000).empty());  // Not a short block: nothing before it.
  tail.Add({5, 800});
  EXPECT_EQ(Seqs(tail.TakeBlock(1000)), (std::vector<uint64_t>{4}));
}

TEST(BlockTailTest, ConcurrentAddsAndTakesLoseNothing) {
  BlockTail tail;
  std::vector<std::thread> writers;
  for (uint64_t t = 0; t < 4; ++t) {
    writers.emplace_back([&tail, t] {
      for (uint64_t i = 0; i < 1000; ++i) tail.Add({t * 1000 + i + 1, 10});
    });
  }
  size_t taken = 0;
  std::thread taker([&] {
    for (int i = 0; i < 2000; ++i) taken += tail.TakeBlock(100).size();
  });
  for (std::thread& w : writers) w.join();
  taker.join();
  EXPECT_EQ(taken + tail.records(), 4000u);
  EXPECT_EQ(tail.bytes(), tail.records() * 10);
}

}  // namespace
}  // namespace dictlog::pool
