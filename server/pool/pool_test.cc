#include "server/pool/pool.h"

#include <memory>
#include <thread>
#include <vector>

#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "server/store/fault_injection_fs.h"

namespace dictlog::pool {
namespace {

class PoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.path = FreshTestDir();
    Reopen();
  }

  void Reopen() {
    store_.reset();
    auto store = store::Store::Open(options_);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
  }

  // The pool as the store has it now (its catalog entry written first).
  std::unique_ptr<Pool> Load() {
    auto pools = store_->LoadPools();
    EXPECT_TRUE(pools.ok()) << pools.status();
    if (!pools.ok() || pools->empty()) return nullptr;
    return std::make_unique<Pool>(pools->front());
  }

  uint64_t StoredLease() {
    auto pools = store_->LoadPools();
    EXPECT_TRUE(pools.ok() && pools->size() == 1);
    return pools.ok() && !pools->empty() ? pools->front().seq_ceiling : 0;
  }

  void PutPool() {
    storage::PoolRecord record;
    record.set_id(1);
    record.set_name("web");
    ASSERT_TRUE(store_->PutPool(record).ok());
  }

  store::Store::Options options_;
  std::unique_ptr<store::Store> store_;
};

TEST_F(PoolTest, ALeaseCoversManyReservationsAndTheNextOneWritesAnother) {
  PutPool();
  std::unique_ptr<Pool> pool = Load();
  ASSERT_NE(pool, nullptr);
  EXPECT_FALSE(pool->ExactLease().has_value());  // No lease taken yet.
  EXPECT_EQ(StoredLease(), 0u);

  uint64_t first = pool->ReserveSeqs(10);
  ASSERT_TRUE(pool->CoverSeqs(first + 10, *store_).ok());
  EXPECT_EQ(StoredLease(), 11 + Pool::kSeqLease);
  first = pool->ReserveSeqs(5);
  ASSERT_TRUE(pool->CoverSeqs(first + 5, *store_).ok());
  EXPECT_EQ(StoredLease(), 11 + Pool::kSeqLease);  // Still covered: nothing written.

  first = pool->ReserveSeqs(Pool::kSeqLease);  // Past the lease.
  const uint64_t end = first + Pool::kSeqLease;
  ASSERT_TRUE(pool->CoverSeqs(end, *store_).ok());
  EXPECT_EQ(StoredLease(), end + Pool::kSeqLease);
  ASSERT_TRUE(pool->ExactLease().has_value());
  EXPECT_EQ(pool->ExactLease()->next_seq, end);
}

TEST_F(PoolTest, ALoadedPoolStartsAtItsLease) {
  PutPool();
  ASSERT_TRUE(store_->WriteRecords({{1, 3, 1, "x"}}).ok());
  EXPECT_EQ(Load()->next_seq(), 4u);  // No lease: after the last record.
  ASSERT_TRUE(store_->PutSeqCeilings({{1, 500}}).ok());
  Reopen();
  EXPECT_EQ(Load()->next_seq(), 500u);  // The seqs below it may have been handed out.
  ASSERT_TRUE(store_->WriteRecords({{1, 700, 1, "y"}}).ok());
  EXPECT_EQ(Load()->next_seq(), 701u);
}

TEST_F(PoolTest, LeaseAllLeasesEveryPoolInOneWrite) {
  PutPool();
  storage::PoolRecord db;
  db.set_id(2);
  db.set_name("db");
  ASSERT_TRUE(store_->PutPool(db).ok());
  ASSERT_TRUE(store_->WriteRecords({{2, 41, 1, "x"}}).ok());
  auto stored = store_->LoadPools();
  ASSERT_TRUE(stored.ok()) << stored.status();
  std::vector<std::shared_ptr<Pool>> pools;
  for (const store::StoredPool& p : *stored) pools.push_back(std::make_shared<Pool>(p));
  ASSERT_TRUE(Pool::LeaseAll(pools, *store_).ok());
  for (const std::shared_ptr<Pool>& pool : pools) {
    ASSERT_TRUE(pool->ExactLease().has_value());  // Leased: a clean close writes it.
  }
  stored = store_->LoadPools();
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ((*stored)[0].record.name(), "db");
  EXPECT_EQ((*stored)[0].seq_ceiling, 42 + Pool::kSeqLease);
  EXPECT_EQ((*stored)[1].seq_ceiling, 1 + Pool::kSeqLease);

  // A backup's longer lease; a later start-up's shorter one does not lower it.
  ASSERT_TRUE(Pool::LeaseAll(pools, *store_, Pool::kRestoreLease).ok());
  ASSERT_TRUE(Pool::LeaseAll(pools, *store_).ok());
  stored = store_->LoadPools();
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ((*stored)[0].seq_ceiling, 42 + Pool::kRestoreLease);
  EXPECT_EQ((*stored)[1].seq_ceiling, 1 + Pool::kRestoreLease);
}

TEST_F(PoolTest, ConcurrentCallersShareOneLease) {
  PutPool();
  std::unique_ptr<Pool> pool = Load();
  std::vector<std::thread> threads;
  std::vector<uint64_t> ends(8);
  for (size_t t = 0; t < ends.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 100; ++i) {
        const uint64_t first = pool->ReserveSeqs(3);
        ASSERT_TRUE(pool->CoverSeqs(first + 3, *store_).ok());
        ends[t] = std::max(ends[t], first + 3);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const uint64_t lease = StoredLease();
  for (const uint64_t end : ends) EXPECT_LE(end, lease);
  // The first caller's lease covered everyone: 2,400 seqs, one lease.
  EXPECT_LE(lease, 1 + 3 * 8 + Pool::kSeqLease);
}

TEST_F(PoolTest, AFailedLeaseWriteFailsAndCoversNothing) {
  auto fs = std::make_shared<store::FaultInjectionFs>();
  options_.file_system = fs;
  Reopen();
  PutPool();
  std::unique_ptr<Pool> pool = Load();
  fs->PowerOff();
  const uint64_t first = pool->ReserveSeqs(2);
  EXPECT_FALSE(pool->CoverSeqs(first + 2, *store_).ok());
  EXPECT_FALSE(pool->ExactLease().has_value());
  EXPECT_FALSE(pool->CoverSeqs(first + 2, *store_).ok());  // Asked again, not cached.
  store_.reset();
  fs->RestorePower();
}

// A pool loaded without its newest records (a damaged table block) starts at its lease
// and says why in its info, and so does one without its active dictionary; one loaded
// whole says nothing.
TEST_F(PoolTest, InfoSaysWhyTheNewestRecordsWereUnreadable) {
  store::StoredPool stored;
  stored.record.set_id(1);
  stored.record.set_name("web");
  stored.seq_ceiling = 5000;
  EXPECT_EQ(Pool(stored).Info().damaged_at_open(), "");
  stored.newest_unreadable = absl::DataLossError("finding the last record: bad block");
  Pool damaged(stored);
  EXPECT_EQ(damaged.next_seq(), 5000u);
  EXPECT_EQ(damaged.Info().damaged_at_open(), "DATA_LOSS: finding the last record: bad block");
  damaged.SetActiveUnreadable(absl::DataLossError("its active dictionary 32768 is lost"));
  EXPECT_EQ(damaged.Info().damaged_at_open(),
            "DATA_LOSS: finding the last record: bad block; DATA_LOSS: its active "
            "dictionary 32768 is lost");
  EXPECT_FALSE(damaged.has_active_dictionary());
}

// A salvage's lost ranges (one per damaged block and family, so they may overlap),
// looked up for single seqs and spans; many of them, as a store with much damage has.
TEST_F(PoolTest, LostRangesAreFoundAmongManyAndOverlapsMerge) {
  store::StoredPool stored;
  stored.record.set_id(1);
  stored.record.set_name("web");
  for (uint64_t i = 10000; i-- > 0;) stored.lost_seqs.push_back({i * 100 + 10, i * 100 + 19});
  stored.lost_seqs.push_back({15, 30});  // Overlaps [10, 19]: one range [10, 30].
  const Pool pool(stored);
  using Range = std::pair<uint64_t, uint64_t>;
  EXPECT_EQ(pool.LostRangeHolding(9), std::nullopt);
  EXPECT_EQ(pool.LostRangeHolding(10), (Range{10, 30}));
  EXPECT_EQ(pool.LostRangeHolding(25), (Range{10, 30}));
  EXPECT_EQ(pool.LostRangeHolding(31), std::nullopt);
  EXPECT_EQ(pool.LostRangeHolding(500019), (Range{500010, 500019}));
  EXPECT_EQ(pool.LostRangeHolding(500020), std::nullopt);
  EXPECT_EQ(pool.LostRangeHolding(999919), (Range{999910, 999919}));
  EXPECT_EQ(pool.LostRangeHolding(999920), std::nullopt);
  EXPECT_EQ(pool.FirstLostIn(31, 110), std::nullopt);  // Ends before 110's range.
  EXPECT_EQ(pool.FirstLostIn(31, 111), (Range{110, 119}));
  EXPECT_EQ(pool.FirstLostIn(115, 1000000), (Range{110, 119}));  // The first that meets.
  EXPECT_EQ(pool.FirstLostIn(120, 210), std::nullopt);
}

}  // namespace
}  // namespace dictlog::pool
