// The append-time index (store_times.cc): one entry per pool and write, found at or
// before a record's seq, absent for records written without a time.
#include <rocksdb/perf_context.h>
#include <rocksdb/perf_level.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <functional>
#include <optional>
#include <random>
#include <vector>

#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "server/store/store.h"

namespace dictlog::store {
namespace {

using Times = std::vector<std::optional<int64_t>>;

class StoreTimesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = FreshTestDir();
    Reopen();
  }

  void Reopen() {
    store_.reset();
    absl::StatusOr<std::unique_ptr<Store>> store = Store::Open({path_, false});
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
  }

  Times TimesOf(const std::vector<RecordRef>& refs) {
    absl::StatusOr<Times> times = store_->AppendTimes(refs);
    EXPECT_TRUE(times.ok()) << times.status();
    return times.ok() ? *times : Times();
  }

  // Records seqs [first, first + n) of `pool`, stamped `ms` (0: none).
  void Write(uint32_t pool, uint64_t first, int n, int64_t ms) {
    std::vector<RecordWrite> writes;
    for (int i = 0; i < n; ++i) {
      writes.push_back({pool, first + i, 1, "x", 0, ms});
    }
    ASSERT_TRUE(store_->WriteRecords(writes).ok());
  }

  std::string path_;
  std::unique_ptr<Store> store_;
};

TEST_F(StoreTimesTest, EachRecordHasItsWritesTime) {
  Write(1, 1, 3, 1000);
  Write(1, 4, 2, 2000);
  Write(2, 1, 2, 5000);
  Write(1, 6, 1, 3000);
  const Times expected = {1000, 1000, 1000, 2000, 2000, 3000, 5000, 5000};
  EXPECT_EQ(TimesOf({{1, 1}, {1, 2}, {1, 3}, {1, 4}, {1, 5}, {1, 6}, {2, 1}, {2, 2}}),
            expected);
  // Out of order (MultiGet), repeated, and after a reopen.
  Reopen();
  EXPECT_EQ(TimesOf({{2, 2}, {1, 5}, {1, 1}, {1, 6}, {1, 5}}),
            (Times{5000, 2000, 1000, 3000, 2000}));
}

TEST_F(StoreTimesTest, RecordsWithoutTimeHaveNone) {
  Write(1, 1, 2, 0);  // As before append times existed.
  Write(2, 1, 1, 0);
  Write(1, 3, 2, 7000);
  EXPECT_EQ(TimesOf({{1, 1}, {1, 2}, {1, 3}, {1, 4}, {2, 1}, {3, 1}}),
            (Times{std::nullopt, std::nullopt, 7000, 7000, std::nullopt, std::nullopt}));
}

TEST_F(StoreTimesTest, OneEntryPerPoolAndWriteAtItsSmallestSeq) {
  // One batch across two pools, records interleaved: each pool's entry is its first seq.
  ASSERT_TRUE(store_->WriteRecords({{1, 11, 1, "a", 0, 900},
                                    {2, 4, 1, "b", 0, 900},
                                    {1, 10, 1, "c", 0, 900}})
                  .ok());
  EXPECT_EQ(TimesOf({{1, 9}, {1, 10}, {1, 11}, {2, 3}, {2, 4}}),
            (Times{std::nullopt, 900, 900, std::nullopt, 900}));
  uint64_t entries = 0;
  for (const auto& [family, keys] : store_->IntProperty("rocksdb.estimate-num-keys")) {
    if (family == "times") entries = keys;
  }
  EXPECT_EQ(entries, 2u);
}

TEST_F(StoreTimesTest, FirstSeqAtOrAfterTimeSeeksToTheFirstCoveredSeq) {
  Write(1, 1, 5, 0);  // Records from before append times: in no range.
  for (int call = 0; call < 100; ++call) Write(1, 6 + 10 * call, 10, 1000 * (call + 1));
  Write(2, 1, 3, 500);  // Another pool's entries are not found.
  auto first = [&](int64_t ms) {
    auto seq = store_->FirstSeqAtOrAfterTime(1, ms);
    EXPECT_TRUE(seq.ok()) << seq.status();
    return seq.ok() ? *seq : std::nullopt;
  };
  EXPECT_EQ(first(INT64_MIN), std::optional<uint64_t>(6));
  EXPECT_EQ(first(1000), std::optional<uint64_t>(6));
  EXPECT_EQ(first(1001), std::optional<uint64_t>(16));
  EXPECT_EQ(first(50000), std::optional<uint64_t>(6 + 10 * 49));
  EXPECT_EQ(first(100000), std::optional<uint64_t>(6 + 10 * 99));
  EXPECT_EQ(first(100001), std::nullopt);
  EXPECT_EQ(store_->FirstSeqAtOrAfterTime(3, 0).value(), std::nullopt);  // No pool 3.
}

TEST_F(StoreTimesTest, RefsInRandomOrderSeekOnlyForDistantEntries) {
  // 20 writes of 10 records: 20 entries. 200 refs in random order (as MultiGet's ids)
  // are answered in key order, stepping over near entries instead of seeking per ref.
  for (int call = 0; call < 20; ++call) Write(1, 1 + 10 * call, 10, 1000 * (call + 1));
  std::vector<RecordRef> refs;
  for (uint64_t seq = 1; seq <= 200; ++seq) refs.push_back({1, seq});
  std::shuffle(refs.begin(), refs.end(), std::mt19937(7));
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  rocksdb::get_perf_context()->Reset();
  const Times times = TimesOf(refs);
  const uint64_t seeks = rocksdb::get_perf_context()->seek_on_memtable_count;
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
  ASSERT_EQ(times.size(), refs.size());
  for (size_t i = 0; i < refs.size(); ++i) {
    EXPECT_EQ(times[i], std::optional<int64_t>(1000 * ((refs[i].seq - 1) / 10 + 1)))
        << refs[i].seq;
  }
  EXPECT_LE(seeks, 2u);  // Before: a SeekForPrev per ref not after the previous one.
}

uint64_t SeeksFor(const std::function<void()>& lookup) {
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  rocksdb::get_perf_context()->Reset();
  lookup();
  const uint64_t seeks = rocksdb::get_perf_context()->seek_on_memtable_count;
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
  return seeks;
}

TEST_F(StoreTimesTest, ALookupInARangeSeenBeforeSeeksNothing) {
  Write(1, 1, 10, 1000);
  Write(1, 11, 10, 2000);
  Write(1, 21, 10, 3000);
  EXPECT_GE(SeeksFor([&] { EXPECT_EQ(TimesOf({{1, 3}, {1, 12}}), (Times{1000, 2000})); }), 1u);
  // Both ranges are bounded by the next entry, so they are known now: no iterator.
  EXPECT_EQ(SeeksFor([&] {
              EXPECT_EQ(TimesOf({{1, 10}, {1, 1}, {1, 20}, {1, 11}}),
                        (Times{1000, 1000, 2000, 2000}));
            }),
            0u);
  // The newest range has no next entry yet: it is known up to the largest seq looked
  // up in it, and looked up again past that.
  EXPECT_GE(SeeksFor([&] { EXPECT_EQ(TimesOf({{1, 25}}), (Times{3000})); }), 1u);
  EXPECT_EQ(SeeksFor([&] { EXPECT_EQ(TimesOf({{1, 21}, {1, 25}}), (Times{3000, 3000})); }),
            0u);
  EXPECT_GE(SeeksFor([&] { EXPECT_EQ(TimesOf({{1, 30}}), (Times{3000})); }), 1u);
  EXPECT_EQ(SeeksFor([&] { EXPECT_EQ(TimesOf({{1, 28}}), (Times{3000})); }), 0u);
}

TEST_F(StoreTimesTest, TheNewestRangeKnownSoFarEndsWhereTheNextWriteBegins) {
  Write(1, 1, 10, 1000);
  Write(2, 1, 10, 5000);  // Another pool's entry follows pool 1's last one.
  EXPECT_EQ(TimesOf({{1, 10}, {2, 4}}), (Times{1000, 5000}));  // Both pools' newest.
  Write(1, 11, 10, 2000);
  Write(2, 11, 10, 6000);
  EXPECT_EQ(TimesOf({{1, 15}, {1, 10}, {2, 11}, {2, 4}, {2, 10}}),
            (Times{2000, 1000, 6000, 5000, 5000}));
  // A write into a known newest range (a call that reserved its seqs earlier and
  // committed later) ends it there.
  EXPECT_EQ(TimesOf({{1, 20}}), (Times{2000}));
  Write(1, 18, 3, 3000);
  EXPECT_EQ(TimesOf({{1, 17}, {1, 18}, {1, 20}}), (Times{2000, 3000, 3000}));
}

TEST_F(StoreTimesTest, AnEntryCommittedOutOfOrderIsNotHiddenByAKnownRange) {
  // Two concurrent appends reserved seqs 11..20 and 21..30; the second committed first.
  Write(1, 1, 10, 1000);
  Write(1, 21, 10, 3000);
  EXPECT_EQ(TimesOf({{1, 5}}), (Times{1000}));  // Learns that 1..20 are 1000 (for now).
  Write(1, 11, 10, 2000);                        // The first append commits.
  EXPECT_EQ(TimesOf({{1, 15}, {1, 5}, {1, 25}, {1, 11}}),
            (Times{2000, 1000, 3000, 2000}));
}

TEST_F(StoreTimesTest, ADeletedPoolsRangesAreForgotten) {
  Write(1, 1, 10, 1000);
  Write(1, 11, 10, 2000);
  EXPECT_EQ(TimesOf({{1, 5}}), (Times{1000}));
  ASSERT_TRUE(store_->DeletePoolData(1).ok());
  Write(1, 1, 10, 7000);  // The same id again (a test's choice: the engine never reuses one).
  Write(1, 11, 10, 8000);
  EXPECT_EQ(TimesOf({{1, 5}, {1, 15}}), (Times{7000, 8000}));
}

TEST_F(StoreTimesTest, LookupsDuringConcurrentAppendsAnswerEachRecordsOwnTime) {
  // Writers reserve 4 seqs per call from a counter and commit in whatever order the
  // threads run; readers look up records of calls already committed (known ranges
  // included) and must see the time of the record's own call.
  constexpr int kWriters = 3;
  constexpr int kCallsPerWriter = 300;
  constexpr uint64_t kPerCall = 4;
  constexpr uint64_t kSeqs = kWriters * kCallsPerWriter * kPerCall;
  std::atomic<uint64_t> next_seq{1};
  std::vector<std::atomic<int64_t>> committed(kSeqs + 1);  // Call's time once written.
  std::atomic<int> writers_left{kWriters};
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      for (int call = 0; call < kCallsPerWriter; ++call) {
        const uint64_t first = next_seq.fetch_add(kPerCall);
        const int64_t ms = static_cast<int64_t>(first) * 10 + w;
        std::vector<RecordWrite> writes;
        for (uint64_t i = 0; i < kPerCall; ++i) writes.push_back({1, first + i, 1, "x", 0, ms});
        ASSERT_TRUE(store_->WriteRecords(writes).ok());
        for (uint64_t i = 0; i < kPerCall; ++i) committed[first + i].store(ms);
      }
      writers_left.fetch_sub(1);
    });
  }
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      std::mt19937_64 random(r);
      while (writers_left.load() > 0) {
        const uint64_t top = std::min(next_seq.load() - 1, kSeqs);
        if (top == 0) continue;
        const uint64_t seq = 1 + random() % top;
        const int64_t expected = committed[seq].load();
        if (expected == 0) continue;  // Not committed yet.
        absl::StatusOr<Times> times = store_->AppendTimes({{1, seq}});
        if (!times.ok() || (*times)[0] != expected) wrong.fetch_add(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  std::vector<RecordRef> all;
  for (uint64_t seq = 1; seq <= kSeqs; ++seq) all.push_back({1, seq});
  const Times times = TimesOf(all);
  ASSERT_EQ(times.size(), all.size());
  for (uint64_t seq = 1; seq <= kSeqs; ++seq) {
    ASSERT_EQ(times[seq - 1], std::optional<int64_t>(committed[seq].load())) << seq;
  }
}

}  // namespace
}  // namespace dictlog::store
