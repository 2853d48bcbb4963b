#include "server/store/store.h"

#include <sys/resource.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

#include "common/file_damage.h"
#include "common/test_dir.h"
#include "server/store/fault_injection_fs.h"
#include "server/store/keys.h"
#include "server/store/table_damage.h"
#include "gtest/gtest.h"

namespace dictlog::store {
namespace {

// The MANIFEST-NNNNNN file in `dir` (a closed store keeps one); empty if there is none.
std::string ManifestIn(const std::string& dir) {
  std::string manifest;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind("MANIFEST-", 0) == 0) manifest = entry.path();
  }
  return manifest;
}

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = FreshTestDir();
    Reopen();
  }

  void Reopen() { ReopenWith({path_, false}); }

  void ReopenWith(const Store::Options& options) {
    store_.reset();
    absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
  }

  static storage::PoolRecord Pool(uint32_t id, const std::string& name) {
    storage::PoolRecord pool;
    pool.set_id(id);
    pool.set_name(name);
    pool.mutable_options()->set_compression_level(3);
    return pool;
  }

  static storage::DictionaryRecord Dictionary(uint32_t id, uint32_t pool_id) {
    storage::DictionaryRecord dict;
    dict.set_id(id);
    dict.set_pool_id(pool_id);
    dict.set_content("dictionary bytes");
    return dict;
  }

  // Writes `count` records of 100 random bytes (incompressible: many table blocks) to
  // pool `pool_id`, seqs 1..count, 100 a batch; returns their values.
  std::vector<std::string> WriteRandomRecords(uint32_t pool_id, uint64_t count, uint32_t seed) {
    std::mt19937 random(seed);
    std::vector<std::string> values;
    for (uint64_t seq = 1; seq <= count; seq += 100) {
      std::vector<RecordWrite> writes;
      for (uint64_t s = seq; s < seq + 100 && s <= count; ++s) {
        std::string value(100, '\0');
        for (char& c : value) c = static_cast<char>(random());
        values.push_back(value);
        writes.push_back({pool_id, s, 100, value});
      }
      EXPECT_TRUE(store_->WriteRecords(writes).ok());
    }
    return values;
  }

  std::string path_;
  std::unique_ptr<Store> store_;
};

TEST_F(StoreTest, EmptyStoreHasNoPools) {
  absl::StatusOr<std::vector<StoredPool>> pools = store_->LoadPools();
  ASSERT_TRUE(pools.ok());
  EXPECT_TRUE(pools->empty());
}

TEST_F(StoreTest, PoolsCategoriesCountersAndLastSeqSurviveReopen) {
  ASSERT_TRUE(store_->PutPool(Pool(1, "web")).ok());
  ASSERT_TRUE(store_->PutPool(Pool(2, "db")).ok());
  ASSERT_TRUE(store_->PutCategory(1, 1, "web-a").ok());
  ASSERT_TRUE(store_->PutCategory(1, 2, "web-b").ok());
  ASSERT_TRUE(store_->WriteRecords({{1, 1, 10, "aaaa"}, {1, 2, 20, "bb"},
                                    {2, 1, 5, "c"}}).ok());
  ASSERT_TRUE(store_->WriteRecords({{1, 3, 7, "ddd"}}).ok());
  Reopen();
  absl::StatusOr<std::vector<StoredPool>> pools = store_->LoadPools();
  ASSERT_TRUE(pools.ok()) << pools.status();
  ASSERT_EQ(pools->size(), 2u);
  const StoredPool& db = (*pools)[0];  // Catalog order is by name: "db" < "web".
  const StoredPool& web = (*pools)[1];
  EXPECT_EQ(db.record.name(), "db");
  EXPECT_EQ(db.last_seq, 1u);
  EXPECT_EQ(db.counters, (PoolCounters{1, 5, 1}));
  EXPECT_EQ(web.record.id(), 1u);
  EXPECT_EQ(web.last_seq, 3u);
  EXPECT_EQ(web.counters, (PoolCounters{3, 37, 9}));
  ASSERT_EQ(web.categories.size(), 2u);
  EXPECT_EQ(web.categories[1], (std::pair<uint32_t, std::string>(2, "web-b")));
}

// A damaged table block holding a pool's newest records: a pool with a seq lease loads
// (its lease is past every seq it handed out, ADR 0041), the damage reported; one
// without a lease cannot know its next seq, and the load fails naming the damage.
TEST_F(StoreTest, APoolWhoseNewestRecordsAreDamagedGoesOnFromItsLease) {
  ASSERT_TRUE(store_->PutPool(Pool(1, "web")).ok());
  ASSERT_TRUE(store_->PutSeqCeilings({{1, 5000}}).ok());
  WriteRandomRecords(1, 3000, 3);
  ASSERT_TRUE(store_->Flush().ok());
  store_.reset();
  ASSERT_TRUE(DamageNewestRecordsBlock(path_).ok());
  Reopen();
  absl::StatusOr<std::vector<StoredPool>> pools = store_->LoadPools();
  ASSERT_TRUE(pools.ok()) << pools.status();
  ASSERT_EQ(pools->size(), 1u);
  EXPECT_EQ((*pools)[0].seq_ceiling, 5000u);
  EXPECT_EQ((*pools)[0].last_seq, 0u);
  EXPECT_EQ((*pools)[0].newest_unreadable.code(), absl::StatusCode::kDataLoss)
      << (*pools)[0].newest_unreadable;
  // The same damage in a store whose pool has no lease (written before leases).
  store_.reset();
  std::filesystem::remove_all(path_);
  Reopen();
  ASSERT_TRUE(store_->PutPool(Pool(1, "web")).ok());
  ASSERT_TRUE(store_->WriteRecords({{1, 1, 5, "first"}, {1, 2, 6, "second"}}).ok());
  ASSERT_TRUE(store_->Flush().ok());
  store_.reset();
  ASSERT_TRUE(DamageNewestRecordsBlock(path_).ok());
  Reopen();
  pools = store_->LoadPools();
  EXPECT_EQ(pools.status().code(), absl::StatusCode::kDataLoss) << pools.status();
}

// A compaction that meets a damaged table block: RocksDB stops every write, and the
// store says why (the failed compaction and the file) in WritesStopped and in each
// refused write. Reads of what is not damaged go on; a reopen starts with writes
// accepted again.
TEST_F(StoreTest, ACompactionThatMeetsADamagedTableStopsWritesAndSaysWhy) {
  ASSERT_TRUE(store_->PutPool(Pool(1, "web")).ok());
  const std::vector<std::string> values = WriteRandomRecords(1, 3000, 5);
  ASSERT_TRUE(store_->Flush().ok());
  store_.reset();
  ASSERT_TRUE(DamageTableData(path_, "records", 0.5).ok());
  Reopen();
  EXPECT_TRUE(store_->WritesStopped().ok()) << store_->WritesStopped();
  ASSERT_TRUE(store_->WriteRecords({{1, 3001, 1, "before the compaction"}}).ok());
  const absl::Status compacted = store_->CompactPool(1);
  EXPECT_EQ(compacted.code(), absl::StatusCode::kDataLoss) << compacted;
  const absl::Status stopped = store_->WritesStopped();
  EXPECT_EQ(stopped.code(), absl::StatusCode::kDataLoss) << stopped;
  EXPECT_TRUE(absl::StartsWith(stopped.message(), "writes stopped after a failed compaction: "
                                                  "Corruption: "))
      << stopped;
  EXPECT_TRUE(absl::StrContains(stopped.message(), ".sst")) << stopped;
  for (int attempt = 0; attempt < 2; ++attempt) {  // The second asks RocksDB to resume.
    const absl::Status refused = store_->WriteRecords({{1, 3002, 1, "after"}});
    EXPECT_EQ(refused.code(), absl::StatusCode::kDataLoss) << refused;
    EXPECT_TRUE(absl::StrContains(refused.message(), "writes stopped after a failed compaction"))
        << refused;
  }
  EXPECT_EQ(*store_->GetRecord({1, 1}), values[0]);
  EXPECT_EQ(*store_->GetRecord({1, 3001}), "before the compaction");
  Reopen();
  EXPECT_TRUE(store_->WritesStopped().ok()) << store_->WritesStopped();
}

// Salvage: a damaged table block of the records family, in the middle of its data or
// at its start. Every entry outside the block's key range is copied byte for byte, the
// range is reported as the keys between two copied ones (or from the start), and none
// inside it is copied; the catalog comes along, so the new store has the pool.
TEST_F(StoreTest, SalvageCopiesEverythingButTheDamagedBlocksRange) {
  for (const double where : {0.5, 0.0}) {
    SCOPED_TRACE(where);
    store_.reset();
    std::filesystem::remove_all(path_);
    Reopen();
    ASSERT_TRUE(store_->PutPool(Pool(1, "web")).ok());
    const std::vector<std::string> values = WriteRandomRecords(1, 3000, 9);
    ASSERT_TRUE(store_->Flush().ok());
    store_.reset();
    ASSERT_TRUE(DamageTableData(path_, "records", where).ok());
    Store::Options read_only;
    read_only.path = path_;
    read_only.read_only = true;
    auto from = Store::Open(read_only);
    ASSERT_TRUE(from.ok()) << from.status();
    const std::string salvaged = path_ + "-salvaged";
    std::filesystem::remove_all(salvaged);
    Store::Options fresh;
    fresh.path = salvaged;
    auto to = Store::Open(fresh);
    ASSERT_TRUE(to.ok()) << to.status();
    int progress_calls = 0;
    auto report = (*from)->SalvageInto(**to, 1000, [&](const SalvageReport&) { ++progress_calls; });
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_GE(progress_calls, 3);
    const auto records = std::find_if(report->families.begin(), report->families.end(),
                                      [](const SalvagedFamily& f) { return f.name == "records"; });
    ASSERT_NE(records, report->families.end());
    ASSERT_EQ(records->lost.size(), 1u);
    const SalvagedFamily::LostRange& lost = records->lost[0];
    EXPECT_NE(lost.why.find("Corruption"), std::string::npos) << lost.why;
    EXPECT_EQ(lost.after.empty(), where == 0.0);
    ASSERT_FALSE(lost.before.empty());
    const std::string after_key = lost.after;
    uint64_t copied = 0;
    for (uint64_t seq = 1; seq <= values.size(); ++seq) {
      const std::string key = RecordKey(1, seq);
      absl::StatusOr<std::string> got = (*to)->GetRecord({1, seq});
      if (key > after_key && key < lost.before) {
        EXPECT_EQ(got.status().code(), absl::StatusCode::kNotFound) << seq;
      } else {
        ASSERT_TRUE(got.ok()) << seq << ": " << got.status();
        EXPECT_EQ(*got, values[seq - 1]) << seq;
        ++copied;
      }
    }
    EXPECT_EQ(records->entries, copied);
    EXPECT_GT(copied, values.size() - 200);  // One table block's worth lost at most.
    EXPECT_LT(copied, values.size());
    auto pools = (*to)->LoadPools();
    ASSERT_TRUE(pools.ok()) << pools.status();
    ASSERT_EQ(pools->size(), 1u);
    EXPECT_EQ((*pools)[0].record.name(), "web");
    // The source was only read: it still opens read-write as it did.
    from->reset();
    to->reset();
    Reopen();
  }
}

// A damaged table block of the dictionaries family (at its start, middle and end): the
// strict load fails; with the id lease the readable load steps over the block and
// names the dictionary in it.
TEST_F(StoreTest, ReadableDictionariesStepOverADamagedBlock) {
  constexpr uint32_t kFirst = 32768, kCount = 10, kLease = kFirst + 16;
  for (const auto& [where, lost] : {std::pair<double, uint32_t>{0.02, kFirst},
                                    {0.45, kFirst + 4},
                                    {0.98, kFirst + 9}}) {
    SCOPED_TRACE(where);
    store_.reset();
    std::filesystem::remove_all(path_);
    Reopen();
    EXPECT_EQ(*store_->DictionaryIdLease(), 0u);
    ASSERT_TRUE(store_->PutDictionaryIdLease(kLease).ok());
    std::mt19937 random(5);
    for (uint32_t id = kFirst; id < kFirst + kCount; ++id) {
      storage::DictionaryRecord dict = Dictionary(id, 1);
      std::string content(20000, '\0');  // Its own table block: larger than 4 KiB.
      for (char& c : content) c = static_cast<char>(random());
      dict.set_content(content);
      ASSERT_TRUE(store_->PutDictionary(dict).ok());
    }
    ASSERT_TRUE(store_->Flush().ok());
    store_.reset();
    ASSERT_TRUE(DamageTableData(path_, "dictionaries", where).ok());
    Reopen();
    EXPECT_EQ(*store_->DictionaryIdLease(), kLease);
    EXPECT_EQ(store_->LoadDictionaries().status().code(), absl::StatusCode::kDataLoss);
    absl::StatusOr<ReadableDictionaries> loaded = store_->LoadReadableDictionaries(kLease);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    EXPECT_EQ(loaded->damage.code(), absl::StatusCode::kDataLoss) << loaded->damage;
    std::set<uint32_t> missing;
    for (uint32_t id = kFirst; id < kFirst + kCount; ++id) missing.insert(id);
    for (const storage::DictionaryRecord& dict : loaded->dictionaries) {
      EXPECT_EQ(dict.content().size(), 20000u);
      missing.erase(dict.id());
    }
    EXPECT_EQ(missing, std::set<uint32_t>{lost});  // The one in the damaged block.
    EXPECT_EQ(loaded->unreadable, std::vector<uint32_t>{lost});
    EXPECT_EQ(store_->DictionaryContent(lost).status().code(), absl::StatusCode::kDataLoss);
  }
}

// Damage to an older version of a dictionary (its newest written again in a newer
// table) stops the scan; the point read of the id still finds the newest.
TEST_F(StoreTest, ReadableDictionariesReadPastADamagedOlderVersion) {
  ASSERT_TRUE(store_->PutDictionaryIdLease(32768 + 16).ok());
  storage::DictionaryRecord dict = Dictionary(32768, 1);
  dict.set_content(std::string(20000, 'o'));
  ASSERT_TRUE(store_->PutDictionary(dict).ok());
  ASSERT_TRUE(store_->Flush().ok());
  dict.set_first_window_ratio(2.5);
  ASSERT_TRUE(store_->PutDictionary(dict).ok());
  ASSERT_TRUE(store_->Flush().ok());
  store_.reset();
  ASSERT_TRUE(DamageTableData(path_, "dictionaries", 0.02).ok());  // The older table.
  Reopen();
  EXPECT_EQ(store_->LoadDictionaries().status().code(), absl::StatusCode::kDataLoss);
  absl::StatusOr<ReadableDictionaries> loaded = store_->LoadReadableDictionaries(32768 + 16);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->damage.code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(loaded->unreadable.empty());
  ASSERT_EQ(loaded->dictionaries.size(), 1u);
  EXPECT_EQ(loaded->dictionaries[0].first_window_ratio(), 2.5);
}

// Without sync_writes a power loss takes the unsynced tail of the log, but never a
// write that gives out an id: pools, dictionaries, tombstones and seq leases are synced.
TEST_F(StoreTest, IdGivingWritesSurviveAPowerLossWithoutSyncWrites) {
  auto fs = std::make_shared<FaultInjectionFs>();
  Store::Options options{path_, /*sync_writes=*/false};
  options.file_system = fs;
  ReopenWith(options);
  ASSERT_TRUE(store_->WriteRecords({{1, 1, 4, "kept"}}).ok());  // Synced by what follows.
  ASSERT_TRUE(store_->PutPool(Pool(1, "web")).ok());
  ASSERT_TRUE(store_->PutDictionary(Dictionary(7, 1)).ok());
  storage::DeletedPool tombstone;
  tombstone.set_name("old");
  tombstone.set_next_seq(40);
  ASSERT_TRUE(store_->BeginPoolDelete(tombstone).ok());
  ASSERT_TRUE(store_->PutSeqCeilings({{1, 1000}}).ok());
  ASSERT_TRUE(store_->WriteRecords({{1, 2, 4, "lost"}}).ok());  // Not synced.

  fs->PowerOff();
  store_.reset();
  EXPECT_GT(fs->RestorePower().bytes_dropped, 0u);
  ReopenWith(options);
  absl::StatusOr<std::vector<StoredPool>> pools = store_->LoadPools();
  ASSERT_TRUE(pools.ok()) << pools.status();
  ASSERT_EQ(pools->size(), 1u);
  EXPECT_EQ((*pools)[0].record.name(), "web");
  EXPECT_EQ((*pools)[0].last_seq, 1u);  // Record 2 was lost: it was never synced.
  EXPECT_EQ((*pools)[0].seq_ceiling, 1000u);
  EXPECT_TRUE(store_->DictionaryContent(7).ok());
  absl::StatusOr<std::vector<storage::DeletedPool>> deleted = store_->LoadDeletedPools();
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  ASSERT_EQ(deleted->size(), 1u);
  EXPECT_EQ((*deleted)[0].next_seq(), 40u);
}

// RocksDB's recovery stops at a damaged WAL record and opens: the store says so.
TEST_F(StoreTest, AWalDamagedInTheMiddleIsReportedAtOpen) {
  ASSERT_TRUE(store_->PutPool(Pool(1, "web")).ok());
  for (uint64_t seq = 1; seq <= 200; ++seq) {
    ASSERT_TRUE(store_->WriteRecords({{1, seq, 1000, std::string(1000, 'a' + seq % 26)}}).ok());
  }
  store_.reset();
  const std::string wal = LargestWal(path_);
  ASSERT_GT(std::filesystem::file_size(wal), 100000u);
  FlipByte(wal, std::filesystem::file_size(wal) / 2);
  Reopen();
  EXPECT_GE(store_->wal_dropped_at_open().reports, 1u);
  EXPECT_NE(store_->wal_dropped_at_open().first.find("Corruption"), std::string::npos);
  absl::StatusOr<std::vector<StoredPool>> pools = store_->LoadPools();
  ASSERT_TRUE(pools.ok()) << pools.status();
  ASSERT_EQ(pools->size(), 1u);
  EXPECT_GT((*pools)[0].last_seq, 50u);  // The replay stopped at the damage.
  EXPECT_LT((*pools)[0].last_seq, 150u);
  Reopen();  // The damage is behind it now: the next open finds a clean log.
  EXPECT_EQ(store_->wal_dropped_at_open().reports, 0u);
}

// The dictionary id lease is flushed as it is written (ADR 0044): damage to the log
// after it takes the writes logged after it, not the lease.
TEST_F(StoreTest, TheDictionaryIdLeaseOutlivesADamagedWal) {
  ASSERT_TRUE(store_->PutDictionaryIdLease(65).ok());
  ASSERT_TRUE(store_->PutPool(Pool(1, "web")).ok());
  store_.reset();
  FlipByte(LargestWal(path_), 10);  // The log's first record: the pool's.
  Reopen();
  EXPECT_GE(store_->wal_dropped_at_open().reports, 1u);
  EXPECT_TRUE(store_->LoadPools()->empty());
  EXPECT_EQ(*store_->DictionaryIdLease(), 65u);
}

// A deleted write-ahead log is replayed by nobody and reported by nobody: the synced
// mark says writes acknowledged as synced are gone (ADR 0044).
TEST_F(StoreTest, ADeletedWalIsFoundMissingBySyncedMark) {
  ASSERT_TRUE(store_->Flush().ok());
  ASSERT_TRUE(store_->PutPool(Pool(1, "web")).ok());  // Synced: it raises the mark.
  store_.reset();
  const std::string wal = LargestWal(path_);
  ASSERT_FALSE(wal.empty());
  std::filesystem::remove(wal);
  Reopen();
  EXPECT_EQ(store_->wal_dropped_at_open().reports, 0u);
  EXPECT_TRUE(store_->wal_dropped_at_open().synced_writes_lost);
  EXPECT_NE(store_->wal_dropped_at_open().synced_lost_why.find("is below"), std::string::npos);
  EXPECT_TRUE(store_->LoadPools()->empty());
  ASSERT_TRUE(store_->PutPool(Pool(1, "web")).ok());  // Raises the mark from here.
  Reopen();
  EXPECT_FALSE(store_->wal_dropped_at_open().synced_writes_lost);
}

// A synced write raced by another: the other took a sequence between the synced one's
// read of the last sequence and its write, and a flush moved it to a table file, so
// the synced write went to a new log. With that log deleted, the replay ends past the
// old mark (the last sequence read before the write, plus one) and without the write:
// the mark now sits on a synced write of the store's own after it (ADR 0044, amended).
TEST_F(StoreTest, ASyncedWriteRacedByAnotherIsFoundMissingWithItsLog) {
  Store::Options options{path_, false};
  int raced = 0;
  options.before_synced_write_for_test = [this, &raced] {
    if (raced++ > 0) return;
    EXPECT_TRUE(store_->WriteRecords({{1, 1, 5, "raced"}}).ok());  // Not synced.
    EXPECT_TRUE(store_->Flush().ok());  // To a table file; the next write, a new log.
  };
  ReopenWith(options);
  ASSERT_TRUE(store_->PutPool(Pool(1, "web")).ok());
  ASSERT_EQ(raced, 1);
  store_.reset();
  const std::string wal = LargestWal(path_);
  ASSERT_FALSE(wal.empty());
  std::filesystem::remove(wal);
  Reopen();
  EXPECT_TRUE(store_->wal_dropped_at_open().synced_writes_lost)
      << "last sequence " << store_->LatestSequenceForTest();
  EXPECT_TRUE(store_->LoadPools()->empty());
  EXPECT_EQ(*store_->GetRecord({1, 1}), "raced");
}

// Unraced, the mark is the synced write's own first sequence: the log holding only
// the writes before it can go, and the open finds nothing missing.
TEST_F(StoreTest, AnUnracedSyncedWriteMarksItsOwnSequence) {
  ASSERT_TRUE(store_->PutPool(Pool(1, "web")).ok());
  const uint64_t sequence = store_->LatestSequenceForTest();
  EXPECT_EQ(**SyncedMark::Read(path_), sequence);
}

// Unsynced writes lost with the log's tail leave the mark where it was.
TEST_F(StoreTest, SyncedMarkIgnoresUnsyncedWrites) {
  ASSERT_TRUE(store_->PutPool(Pool(1, "web")).ok());
  ASSERT_TRUE(store_->Flush().ok());
  ASSERT_TRUE(store_->WriteRecords({{1, 1, 4, "lost"}}).ok());  // Not synced.
  store_.reset();
  std::filesystem::remove(LargestWal(path_));
  Reopen();
  EXPECT_FALSE(store_->wal_dropped_at_open().synced_writes_lost);
  EXPECT_EQ((*store_->LoadPools())[0].last_seq, 0u);
}

TEST_F(StoreTest, TheSeqFloorIsWrittenWithTheLeases) {
  EXPECT_EQ(*store_->SeqFloor(), 0u);  // None yet.
  ASSERT_TRUE(store_->PutPool(Pool(1, "web")).ok());
  ASSERT_TRUE(store_->PutSeqCeilings({{1, 40}}, 77).ok());
  ASSERT_TRUE(store_->PutSeqCeilings({{1, 50}}).ok());  // Leaves the floor.
  Reopen();
  EXPECT_EQ(*store_->SeqFloor(), 77u);
  EXPECT_EQ((*store_->LoadPools())[0].seq_ceiling, 50u);
}

// RocksDB refuses a damaged MANIFEST; the store says which file, as DATA_LOSS.
TEST_F(StoreTest, ADamagedManifestRefusesTheOpenNamingIt) {
  ASSERT_TRUE(store_->PutPool(Pool(1, "web")).ok());
  store_.reset();
  const std::string manifest = ManifestIn(path_);
  ASSERT_FALSE(manifest.empty());
  FlipByte(manifest, std::filesystem::file_size(manifest) / 2);
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open({path_, false});
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss) << store.status();
  EXPECT_NE(store.status().message().find(manifest), absl::string_view::npos)
      << store.status();
}

// RocksDB, allowed to create, makes a new empty store where CURRENT is missing and then
// deletes the table files it does not name. A store that lost CURRENT is refused, every
// time, and keeps its files: with CURRENT written back it opens whole.
TEST_F(StoreTest, AStoreThatLostItsCurrentFileIsRefusedAndKept) {
  ASSERT_TRUE(store_->PutPool(Pool(1, "web")).ok());
  ASSERT_TRUE(store_->WriteRecords({{1, 1, 4, "kept"}}).ok());
  ASSERT_TRUE(store_->Flush().ok());
  ASSERT_TRUE(store_->WriteRecords({{1, 2, 6, "logged"}}).ok());  // In the WAL only.
  store_.reset();
  const std::string current = path_ + "/CURRENT";
  std::string names;
  ASSERT_TRUE(std::getline(std::ifstream(current), names));
  std::filesystem::remove(current);
  for (int attempt = 0; attempt < 2; ++attempt) {
    absl::StatusOr<std::unique_ptr<Store>> store = Store::Open({path_, false});
    ASSERT_FALSE(store.ok()) << "attempt " << attempt;
    EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss) << store.status();
    EXPECT_NE(store.status().message().find("no CURRENT file"), absl::string_view::npos)
        << store.status();
    EXPECT_FALSE(std::filesystem::exists(current));  // Nothing written.
  }
  std::ofstream(current) << names << "\n";
  Reopen();
  absl::StatusOr<std::vector<StoredPool>> pools = store_->LoadPools();
  ASSERT_TRUE(pools.ok()) << pools.status();
  ASSERT_EQ(pools->size(), 1u);
  EXPECT_EQ((*pools)[0].last_seq, 2u);
  EXPECT_EQ(*store_->GetRecord({1, 1}), "kept");
  EXPECT_EQ(*store_->GetRecord({1, 2}), "logged");
}

// The MANIFEST's newest edit (a flush: its tables, and the log it made obsolete) cut
// short after RocksDB deleted that log. Replayed without the edit, the store would
// open at the state before the flush, its tables dropped and its log gone: the flushed
// records read NOT_FOUND, while records logged later read back (a hole). The MANIFEST
// lists the synced logs it still needs (track_and_verify_wals_in_manifest): the open
// is refused, DATA_LOSS naming the log. The same cut after a crash that came before
// the log's deletion (it is still there) opens with every record.
TEST_F(StoreTest, AManifestCutInsideAFlushWhoseLogIsGoneIsRefused) {
  ASSERT_TRUE(store_->PutPool(Pool(1, "web")).ok());  // Synced: the log's size is known.
  const std::vector<std::string> values = WriteRandomRecords(1, 300, 11);
  const std::string wal = LargestWal(path_);
  const std::string saved = path_ + "-saved.log";
  std::filesystem::copy_file(wal, saved);
  ASSERT_TRUE(store_->Flush().ok());
  store_.reset();
  ASSERT_FALSE(std::filesystem::exists(wal));  // RocksDB deleted it after the flush.
  const std::string manifest = ManifestIn(path_);
  ASSERT_FALSE(manifest.empty());
  std::filesystem::resize_file(manifest, std::filesystem::file_size(manifest) - 3);
  const std::string store_dir = path_ + "-cut";
  std::filesystem::copy(path_, store_dir);
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open({store_dir, false});
  ASSERT_FALSE(store.ok()) << "opened; record 1: " << (*store)->GetRecord({1, 1}).status();
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss) << store.status();
  const std::string log_name = std::filesystem::path(wal).filename().string();
  EXPECT_TRUE(absl::StrContains(store.status().message(), log_name)) << store.status();
  // The crash image: the edit torn, the log not yet deleted.
  std::filesystem::copy_file(saved, wal);
  Reopen();
  for (uint64_t seq = 1; seq <= values.size(); ++seq) {
    absl::StatusOr<std::string> value = store_->GetRecord({1, seq});
    ASSERT_TRUE(value.ok()) << "seq " << seq << ": " << value.status();
    EXPECT_EQ(*value, values[seq - 1]) << "seq " << seq;
  }
}

TEST_F(StoreTest, ACurrentFileNamingAMissingManifestIsDataLoss) {
  ASSERT_TRUE(store_->PutPool(Pool(1, "web")).ok());
  store_.reset();
  std::ofstream(path_ + "/CURRENT") << "MANIFEST-999999\n";
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open({path_, false});
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss) << store.status();
  EXPECT_NE(store.status().message().find("MANIFEST-999999"), absl::string_view::npos)
      << store.status();
}

TEST_F(StoreTest, SeqLeasesAreReplacedAndGoWithTheirPool) {
  ASSERT_TRUE(store_->PutPool(Pool(1, "web")).ok());
  ASSERT_TRUE(store_->PutPool(Pool(2, "db")).ok());
  ASSERT_TRUE(store_->PutSeqCeilings({{1, 100}, {2, 200}}).ok());
  ASSERT_TRUE(store_->PutSeqCeilings({{1, 150}}).ok());
  ASSERT_TRUE(store_->DeletePoolData(2).ok());
  Reopen();
  absl::StatusOr<std::vector<StoredPool>> pools = store_->LoadPools();
  ASSERT_TRUE(pools.ok()) << pools.status();
  ASSERT_EQ(pools->size(), 2u);
  EXPECT_EQ((*pools)[0].record.name(), "db");
  EXPECT_EQ((*pools)[0].seq_ceiling, 0u);
  EXPECT_EQ((*pools)[1].seq_ceiling, 150u);
}

TEST_F(StoreTest, LostSeqsLoadWithTheirPoolAndGoWithIt) {
  ASSERT_TRUE(store_->PutPool(Pool(1, "web")).ok());
  ASSERT_TRUE(store_->PutPool(Pool(2, "db")).ok());
  ASSERT_TRUE(store_->PutLostSeqs({{1, 947, 978}, {2, 1, 4}, {2, 90, 100}}).ok());
  Reopen();
  absl::StatusOr<std::vector<StoredPool>> pools = store_->LoadPools();
  ASSERT_TRUE(pools.ok()) << pools.status();
  ASSERT_EQ(pools->size(), 2u);  // db, web.
  using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;
  EXPECT_EQ((*pools)[0].lost_seqs, (Ranges{{1, 4}, {90, 100}}));
  EXPECT_EQ((*pools)[1].lost_seqs, (Ranges{{947, 978}}));
  ASSERT_TRUE(store_->DeletePoolData(2).ok());
  pools = store_->LoadPools();
  ASSERT_TRUE(pools.ok()) << pools.status();
  EXPECT_TRUE((*pools)[0].lost_seqs.empty());
  EXPECT_EQ((*pools)[1].lost_seqs, (Ranges{{947, 978}}));
}

// RocksDB 7.8 leaves the empty WAL of each open that no flush follows; Store::Open
// deletes them (empty_wals.h): restarts do not pile up files.
TEST_F(StoreTest, RestartsLeaveOneWalFile) {
  ASSERT_TRUE(store_->WriteRecords({{1, 1, 1, "kept"}}).ok());
  for (int i = 0; i < 6; ++i) Reopen();
  int wals = 0;
  for (const auto& entry : std::filesystem::directory_iterator(path_)) {
    wals += entry.path().extension() == ".log";
  }
  EXPECT_EQ(wals, 1);
  const std::vector<absl::StatusOr<std::string>> values = store_->MultiGetRecords({{1, 1}});
  ASSERT_TRUE(values[0].ok()) << values[0].status();
  EXPECT_EQ(*values[0], "kept");
}

// RocksDB keeps 1000 info logs by default, one more per open; Store keeps 8.
TEST_F(StoreTest, RestartsKeepEightInfoLogs) {
  for (int i = 0; i < 12; ++i) Reopen();
  int logs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(path_)) {
    logs += entry.path().filename().string().rfind("LOG", 0) == 0;
  }
  EXPECT_EQ(logs, 8);
}

// The catalog takes one write, then only records come: the WAL holding that write is
// not kept until RocksDB's own bound (4 GiB here). Past Options::max_wal_bytes RocksDB
// flushes the families holding the oldest WAL, and the WALs shrink back under it.
TEST_F(StoreTest, WalsStayNearTheirBound) {
  Store::Options options{path_, false};
  options.max_wal_bytes = 1 << 20;
  ReopenWith(options);
  ASSERT_TRUE(store_->PutPool(Pool(1, "web")).ok());
  const std::string payload(1000, 'x');
  for (uint64_t call = 0; call < 16; ++call) {  // 16 MB of records, 1 MB a call.
    std::vector<RecordWrite> records;
    for (uint64_t i = 1; i <= 1000; ++i) records.push_back({1, call * 1000 + i, 1000, payload});
    ASSERT_TRUE(store_->WriteRecords(records).ok());
  }
  auto wal_bytes = [&] {
    uint64_t bytes = 0;
    for (const auto& entry : std::filesystem::directory_iterator(path_)) {
      if (entry.path().extension() == ".log") bytes += entry.file_size();
    }
    return bytes;
  };
  // RocksDB looks at the bound when a write comes, and flushes in the background; while
  // a flush runs, more writes pile up (under ASan several megabytes). Small writes go on
  // until the WALs are back near the bound (30 s at most); without it they stay at 16 MB.
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  for (uint64_t seq = 16001; wal_bytes() > (3u << 20) && absl::Now() < deadline; ++seq) {
    ASSERT_TRUE(store_->WriteRecords({{1, seq, 1, "x"}}).ok());
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_LE(wal_bytes(), 3u << 20);
  Store::Options unbounded{path_, false};
  unbounded.max_wal_bytes = 0;
  EXPECT_EQ(Store::Open(unbounded).status().code(), absl::StatusCode::kInvalidArgument);
}

// More table files than the process may open: RocksDB keeps at most max_open_files of
// them open and writes go on. With every file open (-1, RocksDB's default) a flush or
// compaction past the limit fails "Too many open files", and so does every write after
// it (dictlogd gives RocksDB half its limit: server/daemon/open_files.h).
TEST_F(StoreTest, MoreTableFilesThanTheOpenFilesLimitStillWrite) {
  Store::Options options{path_, false};
  options.table_file_bytes = 64 << 10;  // Compactions cut many small files.
  options.max_open_files = 20;
  ReopenWith(options);
  rlimit before{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &before), 0);
  int open_now = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    (void)entry;
    ++open_now;
  }
  rlimit lowered = before;
  lowered.rlim_cur = static_cast<rlim_t>(open_now + 64);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &lowered), 0);
  absl::Cleanup restore = [&] { setrlimit(RLIMIT_NOFILE, &before); };
  std::mt19937_64 rng(7);
  std::string payload(1000, '\0');  // Incompressible: LZ4 leaves the files their size.
  for (uint64_t call = 0; call < 100; ++call) {  // 10 MB, flushed every 100 KB.
    std::vector<RecordWrite> records;
    for (uint64_t i = 1; i <= 100; ++i) {
      for (char& c : payload) c = static_cast<char>(rng());
      records.push_back({1, call * 100 + i, 1000, payload});
    }
    ASSERT_TRUE(store_->WriteRecords(records).ok()) << "call " << call;
    ASSERT_TRUE(store_->Flush().ok()) << "call " << call;
  }
  int tables = 0;
  for (const auto& entry : std::filesystem::directory_iterator(path_)) {
    tables += entry.path().extension() == ".sst";
  }
  EXPECT_GT(tables, 64);  // More than the limit lets the process open.
  const std::vector<absl::StatusOr<std::string>> values = store_->MultiGetRecords({{1, 1}, {1, 10000}});
  ASSERT_TRUE(values[0].ok() && values[1].ok());
  EXPECT_EQ(*values[1], payload);  // The last record written.
}

TEST_F(StoreTest, GetMultiGetAndScan) {
  ASSERT_TRUE(store_->WriteRecords({{1, 1, 1, "one"}, {1, 2, 1, "two"},
                                    {1, 3, 1, "three"}, {2, 1, 1, "other"}}).ok());
  EXPECT_EQ(*store_->GetRecord({1, 2}), "two");
  EXPECT_EQ(store_->GetRecord({1, 9}).status().code(), absl::StatusCode::kNotFound);

  std::vector<absl::StatusOr<std::string>> many =
      store_->MultiGetRecords({{2, 1}, {1, 4}, {1, 1}});
  ASSERT_EQ(many.size(), 3u);
  EXPECT_EQ(*many[0], "other");
  EXPECT_EQ(many[1].status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(*many[2], "one");

  absl::StatusOr<std::vector<ScannedRecord>> scan = store_->ScanRecords(1, 2, 10);
  ASSERT_TRUE(scan.ok());
  ASSERT_EQ(scan->size(), 2u);  // Stops at the end of pool 1.
  EXPECT_EQ((*scan)[0].seq, 2u);
  EXPECT_EQ((*scan)[1].value, "three");
  EXPECT_EQ(store_->ScanRecords(1, 1, 1)->size(), 1u);
}

// Indexed block keys (pool, first seq, last seq) sort between (pool, first seq) and
// (pool, first seq + 1): an expiry up to a block boundary deletes the blocks before it
// and keeps the rest and other pools' blocks.
// An indexed block of pool `pool` holding seqs first..last (10 raw bytes each, stored in
// 2), valued "block POOL/FIRST".
BlockSeal IndexedSeal(uint32_t pool, uint64_t first, uint64_t last) {
  BlockSeal block;
  block.pool_id = pool;
  block.first_seq = first;
  block.last_seq = last;
  block.indexed = true;
  block.value = absl::StrCat("block ", pool, "/", first);
  for (uint64_t seq = first; seq <= last; ++seq) block.entries.push_back({seq, 10, 2, 0, ""});
  return block;
}

TEST_F(StoreTest, ExpiryDeletesTheIndexedBlocksKeyedBelowItsEnd) {
  ASSERT_TRUE(store_->PutPool(Pool(1, "web")).ok());
  ASSERT_TRUE(store_->PutPool(Pool(2, "db")).ok());
  auto seal = [&](uint32_t pool, uint64_t first, uint64_t last) {
    std::vector<RecordWrite> writes;
    for (uint64_t seq = first; seq <= last; ++seq) writes.push_back({pool, seq, 10, "vv"});
    ASSERT_TRUE(store_->WriteRecords(writes).ok());
    ASSERT_TRUE(store_->SealBlock(IndexedSeal(pool, first, last)).ok());
  };
  seal(1, 1, 3);
  seal(1, 4, 6);
  seal(2, 1, 2);
  Expiry expiry;
  expiry.pool_id = 1;
  expiry.end_seq = 4;
  expiry.pool_counters = {3, 30, std::string("block 1/1").size()};
  expiry.record = Pool(1, "web");
  expiry.record.set_retained_from_seq(4);
  ASSERT_TRUE(store_->ExpireRecords(expiry).ok());
  absl::StatusOr<std::vector<IndexedBlock>> web = store_->ScanIndexedBlocks(1, 1, 0, 10);
  ASSERT_TRUE(web.ok()) << web.status();
  ASSERT_EQ(web->size(), 1u);
  EXPECT_EQ((*web)[0].first_seq, 4u);
  EXPECT_EQ((*web)[0].value, "block 1/4");
  EXPECT_EQ(store_->ScanIndexedBlocks(2, 1, 0, 10)->size(), 1u);
  Reopen();
  absl::StatusOr<std::vector<StoredPool>> pools = store_->LoadPools();
  ASSERT_TRUE(pools.ok());
  EXPECT_EQ((*pools)[1].counters, (PoolCounters{3, 30, std::string("block 1/4").size()}));
}

// FindIndexedBlocks seeks forward from a hint of the pool's block span, backward when
// that does not settle it: whatever the hint (none, another pool's sharing its slot,
// one far too small or too large) and the order of the seqs, every seq finds the
// block whose range holds it, and a seq in a gap or past the blocks finds none.
TEST_F(StoreTest, FindIndexedBlocksAgreesWithTheRangesWhateverTheHint) {
  // Pools 1 and 257 share a hint slot (256 slots).
  ASSERT_TRUE(store_->PutPool(Pool(1, "web")).ok());
  ASSERT_TRUE(store_->PutPool(Pool(257, "db")).ok());
  std::map<uint32_t, std::vector<std::pair<uint64_t, uint64_t>>> ranges;
  auto seal = [&](uint32_t pool, uint64_t first, uint64_t last) {
    ASSERT_TRUE(store_->SealBlock(IndexedSeal(pool, first, last)).ok());
    ranges[pool].push_back({first, last});
  };
  // Pool 1, from seq 5: spans of 10, a gap, a block of 500 seqs, twenty of one seq,
  // another gap, then a last block.
  seal(1, 5, 14);
  seal(1, 15, 24);
  seal(1, 27, 34);
  seal(1, 35, 534);
  for (uint64_t seq = 535; seq < 555; ++seq) seal(1, seq, seq);
  seal(1, 555, 600);
  seal(1, 621, 640);
  // Pool 257, from seq 1: spans of 3.
  for (uint64_t first = 1; first < 100; first += 3) seal(257, first, first + 2);
  const std::map<uint32_t, uint64_t> from = {{1, 5}, {257, 1}};
  auto expected = [&](uint32_t pool, uint64_t seq) -> int64_t {  // first seq, or -1
    if (seq < from.at(pool)) return -1;
    for (const auto& [first, last] : ranges[pool]) {
      if (first <= seq && seq <= last) return static_cast<int64_t>(first);
    }
    return -1;
  };
  auto check = [&](uint32_t pool, const std::vector<uint64_t>& seqs) {
    absl::StatusOr<IndexedBlockSearch> found =
        store_->FindIndexedBlocks(pool, from.at(pool), seqs);
    ASSERT_TRUE(found.ok()) << found.status();
    ASSERT_EQ(found->block_of.size(), seqs.size());
    for (size_t i = 0; i < seqs.size(); ++i) {
      const int64_t at = found->block_of[i];
      const int64_t got = at < 0 ? -1 : static_cast<int64_t>(found->blocks[at].first_seq);
      ASSERT_EQ(got, expected(pool, seqs[i])) << "pool " << pool << " seq " << seqs[i];
      if (at >= 0) {
        EXPECT_EQ(found->blocks[at].value, absl::StrCat("block ", pool, "/", got));
      }
    }
  };
  std::vector<uint64_t> all;
  for (uint64_t seq = 0; seq <= 660; ++seq) all.push_back(seq);
  std::mt19937 random(7);
  for (int round = 0; round < 4; ++round) {
    for (uint32_t pool : {1u, 257u}) {
      // One at a time (each leaves its hint to the next), ascending and descending,
      // then the whole range shuffled in one call.
      for (uint64_t seq : all) check(pool, {seq});
      for (auto it = all.rbegin(); it != all.rend(); ++it) check(pool, {*it});
      std::vector<uint64_t> shuffled = all;
      std::shuffle(shuffled.begin(), shuffled.end(), random);
      check(pool, shuffled);
    }
  }
}

// A seek that meets a damaged table block fails; the next seek on the same iterator
// starts afresh. So each seq's search is judged alone: one that met the damage is
// DATA_LOSS, never "no block holds it" (a stored record read as NOT_FOUND, found by
// corruption_test), and the seqs whose blocks are intact still find them.
TEST_F(StoreTest, ASearchThatMeetsDamageIsDataLossNotAbsent) {
  ASSERT_TRUE(store_->PutPool(Pool(1, "web")).ok());
  constexpr uint64_t kBlocks = 3000;  // About 30 table blocks of 4 KiB.
  for (uint64_t seq = 1; seq <= kBlocks; ++seq) {
    ASSERT_TRUE(store_->SealBlock(IndexedSeal(1, seq, seq)).ok());
  }
  ASSERT_TRUE(store_->Flush().ok());
  store_.reset();
  const std::string table = LargestFile(path_, ".sst");  // The blocks family's.
  ASSERT_FALSE(table.empty());
  FlipByte(table, std::filesystem::file_size(table) / 3);  // A data block, not the index.
  Reopen();
  std::vector<uint64_t> seqs;
  for (uint64_t seq = 1; seq <= kBlocks; ++seq) seqs.push_back(seq);
  absl::StatusOr<IndexedBlockSearch> found = store_->FindIndexedBlocks(1, 1, seqs);
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_EQ(found->failed.size(), seqs.size());
  uint64_t failed = 0;
  for (size_t i = 0; i < seqs.size(); ++i) {
    ASSERT_FALSE(found->Absent(i)) << "seq " << seqs[i] << " read as absent";
    if (found->block_of[i] >= 0) {
      EXPECT_EQ(found->blocks[found->block_of[i]].value, absl::StrCat("block 1/", seqs[i]));
      EXPECT_TRUE(found->failed[i].ok());
    } else {
      EXPECT_EQ(found->failed[i].code(), absl::StatusCode::kDataLoss) << found->failed[i];
      ++failed;
    }
  }
  EXPECT_GT(failed, 0u);
  EXPECT_LT(failed, kBlocks / 4);  // One table block's worth, or about.
}

TEST_F(StoreTest, ConcurrentWritersMergeCountersExactly) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const uint64_t seq = 1 + static_cast<uint64_t>(t) * kPerThread + i;
        ASSERT_TRUE(store_->WriteRecords({{9, seq, 100, "xy"}}).ok());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  ASSERT_TRUE(store_->PutPool(Pool(9, "busy")).ok());
  Reopen();
  absl::StatusOr<std::vector<StoredPool>> pools = store_->LoadPools();
  ASSERT_TRUE(pools.ok());
  ASSERT_EQ(pools->size(), 1u);
  EXPECT_EQ((*pools)[0].counters,
            (PoolCounters{kThreads * kPerThread, kThreads * kPerThread * 100ULL,
                          kThreads * kPerThread * 2ULL}));
  EXPECT_EQ((*pools)[0].last_seq, static_cast<uint64_t>(kThreads * kPerThread));
}

TEST_F(StoreTest, DictionariesAndTheirReferencesPersist) {
  storage::DictionaryRecord dict;
  dict.set_id(32768);
  dict.set_pool_id(1);
  dict.set_content("dictionary bytes");
  ASSERT_TRUE(store_->PutDictionary(dict).ok());
  ASSERT_TRUE(store_->WriteRecords({{1, 1, 100, "aaaa", 32768}, {1, 2, 50, "bb", 32768},
                                    {1, 3, 10, "c", 0}}).ok());
  Reopen();
  auto dicts = store_->LoadDictionaries();
  ASSERT_TRUE(dicts.ok());
  ASSERT_EQ(dicts->size(), 1u);
  EXPECT_EQ((*dicts)[0].content(), "dictionary bytes");
  EXPECT_EQ(*store_->DictionaryReferences(32768), (PoolCounters{2, 150, 6}));
  EXPECT_EQ(*store_->DictionaryReferences(40000), (PoolCounters{}));
  EXPECT_EQ(*store_->DictionaryContent(32768), "dictionary bytes");
  EXPECT_EQ(store_->DictionaryContent(40000).status().code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(store_->RetireDictionary(dict).ok());
  dicts = store_->LoadDictionaries();
  ASSERT_EQ(dicts->size(), 1u);
  EXPECT_TRUE((*dicts)[0].retired());
  EXPECT_EQ((*dicts)[0].id(), 32768u);
  EXPECT_TRUE((*dicts)[0].content().empty());
  EXPECT_EQ(store_->DictionaryContent(32768).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(*store_->DictionaryReferences(32768), (PoolCounters{}));
}

// Cluster mode: a partition no longer held loses its pools' records, times, counts and
// applied offset in one batch; its pools, dictionaries and other pools stay.
TEST_F(StoreTest, DroppingAPartitionKeepsItsPoolsAndDictionaries) {
  ASSERT_TRUE(store_->PutPool(Pool(1, "dropped")).ok());
  ASSERT_TRUE(store_->PutPool(Pool(2, "kept")).ok());
  storage::DictionaryRecord dict;
  dict.set_id(32768);
  dict.set_pool_id(1);
  dict.set_content("dictionary bytes");
  ASSERT_TRUE(store_->PutDictionary(dict).ok());
  const LogPosition dropped_at{3, 7};
  ASSERT_TRUE(store_->WriteRecords({{1, 1, 100, "aaaa", 32768, 1000},
                                    {1, 2, 50, "bb", 32768, 1000}},
                                   nullptr, &dropped_at).ok());
  const LogPosition kept_at{4, 9};
  ASSERT_TRUE(store_->WriteRecords({{2, 1, 10, "c", 0, 2000}}, nullptr, &kept_at).ok());

  ASSERT_TRUE(store_->DropPartitionData(3, {1}).ok());
  ASSERT_TRUE(store_->CompactPool(1).ok());
  Reopen();
  EXPECT_EQ(store_->GetRecord({1, 1}).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(store_->ScanRecords(1, 0, 10)->empty());
  EXPECT_EQ((*store_->AppendTimes({{1, 2}}))[0], std::nullopt);
  EXPECT_EQ(*store_->GetRecord({2, 1}), "c");
  EXPECT_EQ((*store_->AppendTimes({{2, 1}}))[0], 2000);
  EXPECT_EQ(*store_->DictionaryContent(32768), "dictionary bytes");
  EXPECT_EQ(*store_->DictionaryReferences(32768), (PoolCounters{}));
  absl::StatusOr<std::vector<StoredPool>> pools = store_->LoadPools();
  ASSERT_TRUE(pools.ok());
  ASSERT_EQ(pools->size(), 2u);
  for (const StoredPool& pool : *pools) {
    const uint64_t records = pool.record.id() == 1 ? 0 : 1;
    EXPECT_EQ(pool.counters.records, records) << pool.record.name();
  }
  absl::StatusOr<std::vector<LogPosition>> positions = store_->LoadLogPositions();
  ASSERT_TRUE(positions.ok());
  ASSERT_EQ(positions->size(), 1u);  // Partition 3 builds from offset 0 again.
  EXPECT_EQ((*positions)[0].partition, 4u);
}

// Pool churn: a deleted pool's id is never used again, so the append-time cache must
// not keep a version for it.
TEST_F(StoreTest, DeletedPoolsLeaveNothingInTheTimeCache) {
  for (uint32_t id = 1; id <= 200; ++id) {
    ASSERT_TRUE(store_->PutPool(Pool(id, absl::StrCat("p", id))).ok());
    ASSERT_TRUE(store_->WriteRecords({{id, 1, 1, "x", 0, 1000}}).ok());
    ASSERT_TRUE(store_->AppendTimes({{id, 1}}).ok());
    ASSERT_TRUE(store_->DeletePoolData(id).ok());
  }
  EXPECT_EQ(store_->TimeCacheVersionedPoolsForTest(), 0u);
}

TEST_F(StoreTest, RewriteMovesCountsBetweenDictionariesAndSavesProgress) {
  ASSERT_TRUE(store_->PutPool(Pool(1, "p")).ok());
  ASSERT_TRUE(store_->WriteRecords({{1, 1, 100, std::string(80, 'x'), 0},
                                    {1, 2, 100, std::string(90, 'y'), 32768}}).ok());
  storage::RecompressState progress;
  progress.set_pool_id(1);
  progress.set_next_seq(3);
  progress.mutable_status()->set_records_done(2);
  ASSERT_TRUE(store_->RewriteRecords({{1, 1, 100, 80, 0, "new1", 32769},
                                      {1, 2, 100, 90, 32768, "new2!", 32769}},
                                     progress).ok());
  Reopen();
  EXPECT_EQ(*store_->GetRecord({1, 2}), "new2!");
  EXPECT_EQ(*store_->DictionaryReferences(32768), (PoolCounters{}));
  EXPECT_EQ(*store_->DictionaryReferences(32769), (PoolCounters{2, 200, 9}));
  EXPECT_EQ((*store_->LoadPools())[0].counters, (PoolCounters{2, 200, 9}));
  auto states = store_->LoadRecompressStates();
  ASSERT_TRUE(states.ok());
  ASSERT_EQ(states->size(), 1u);
  EXPECT_EQ((*states)[0].next_seq(), 3u);
  EXPECT_EQ((*states)[0].status().records_done(), 2u);
}

// What lets a re-compression finish without a scan: every record of the pool names
// the dictionary, counting records stored without one.
TEST_F(StoreTest, AllRecordsUseCountsRecordsWithoutADictionary) {
  ASSERT_TRUE(store_->PutPool(Pool(1, "p")).ok());
  EXPECT_TRUE(*store_->AllRecordsUse(1, 32768));  // No records.
  EXPECT_FALSE(*store_->AllRecordsUse(1, 0));     // No dictionary is never counted.
  ASSERT_TRUE(store_->WriteRecords({{1, 1, 100, std::string(80, 'x'), 0},
                                    {1, 2, 100, std::string(90, 'y'), 32768}}).ok());
  EXPECT_FALSE(*store_->AllRecordsUse(1, 32768));  // Record 1 has no dictionary.
  storage::RecompressState progress;
  progress.set_pool_id(1);
  ASSERT_TRUE(store_->RewriteRecords({{1, 1, 100, 80, 0, "new1", 32768}}, progress).ok());
  EXPECT_TRUE(*store_->AllRecordsUse(1, 32768));
  EXPECT_FALSE(*store_->AllRecordsUse(1, 32769));
  ASSERT_TRUE(store_->WriteRecords({{1, 3, 100, "z", 32769}}).ok());
  EXPECT_FALSE(*store_->AllRecordsUse(1, 32768));
}

// The records family's table files are cut at Options::table_file_bytes, so a
// compaction of one pool's range leaves the files that hold only other pools' keys as
// they are (with one file for every pool, it rewrote them all).
TEST_F(StoreTest, CompactingOnePoolLeavesOtherPoolsFiles) {
  Store::Options options{path_, false};
  options.records_compression = TableCompression::kNone;
  options.table_file_bytes = 64 << 10;
  ReopenWith(options);
  std::string payload;
  for (int i = 0; i < 300; ++i) payload += static_cast<char>('a' + (i * 7919 + i / 13) % 26);
  auto write_pool = [&](uint32_t pool_id, absl::string_view mark) {
    std::vector<RecordWrite> records;
    for (uint64_t seq = 1; seq <= 2000; ++seq) {
      records.push_back({pool_id, seq, 300, absl::StrCat(mark, seq, payload), 0});
    }
    ASSERT_TRUE(store_->WriteRecords(records).ok());
  };
  for (uint32_t id : {1u, 2u}) ASSERT_TRUE(store_->PutPool(Pool(id, absl::StrCat("p", id))).ok());
  write_pool(1, "a");
  write_pool(2, "a");
  ASSERT_TRUE(store_->CompactPool(1, /*rewrite_bottom=*/true).ok());  // Both, from L0.
  auto large_files = [&] {
    std::set<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(path_)) {
      if (entry.path().extension() == ".sst" && entry.file_size() >= (32 << 10)) {
        names.insert(entry.path().filename().string());
      }
    }
    return names;
  };
  const std::set<std::string> before = large_files();
  ASSERT_GE(before.size(), 10u);  // 1.2 MB of records in 64 KiB files.
  write_pool(2, "b");  // Pool 2 rewritten: its old values are garbage.
  ASSERT_TRUE(store_->CompactPool(2).ok());
  size_t kept = 0;
  for (const std::string& name : large_files()) kept += before.count(name);
  EXPECT_GE(kept, before.size() / 2 - 2) << "pool 1's files were rewritten";
  EXPECT_EQ(*store_->GetRecord({2, 7}), absl::StrCat("b7", payload));
  EXPECT_EQ(*store_->GetRecord({1, 7}), absl::StrCat("a7", payload));
}

TEST_F(StoreTest, ZeroTableFileSizeIsRefused) {
  store_.reset();
  Store::Options options{path_, false};
  options.table_file_bytes = 0;
  EXPECT_EQ(Store::Open(options).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(StoreTest, LatestRecordsAreNewestFirstWithinThePool) {
  ASSERT_TRUE(store_->WriteRecords({{1, 1, 1, "a"}, {1, 2, 1, "b"}, {1, 3, 1, "c"},
                                    {2, 1, 1, "other"}}).ok());
  auto latest = store_->LatestRecords(1, UINT64_MAX, 2);
  ASSERT_TRUE(latest.ok());
  ASSERT_EQ(latest->size(), 2u);
  EXPECT_EQ((*latest)[0].value, "c");
  EXPECT_EQ((*latest)[1].value, "b");
  auto before = store_->LatestRecords(1, 2, 10);
  ASSERT_EQ(before->size(), 1u);
  EXPECT_EQ((*before)[0].seq, 1u);
  EXPECT_TRUE(store_->LatestRecords(3, UINT64_MAX, 10)->empty());
}

TEST_F(StoreTest, CreatesMissingParentDirectories) {
  const std::string nested = path_ + "/a/b/c";
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open({nested, false});
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_TRUE(std::filesystem::exists(nested + "/CURRENT"));
}

TEST_F(StoreTest, OpeningAFileAsDatabaseFails) {
  const std::string file = path_ + "-file";
  FILE* f = std::fopen(file.c_str(), "w");
  std::fputs("not a db", f);
  std::fclose(f);
  EXPECT_FALSE(Store::Open({file, false}).ok());
}

TEST_F(StoreTest, CheckpointIsAStoreAsOfItsMoment) {
  ASSERT_TRUE(store_->PutPool(Pool(1, "web")).ok());
  ASSERT_TRUE(store_->PutCategory(1, 1, "web-a").ok());
  ASSERT_TRUE(store_->WriteRecords({{1, 1, 10, "aaaa"}, {1, 2, 20, "bb"}}).ok());
  const std::string copy = path_ + ".copy";
  absl::StatusOr<uint64_t> sequence = store_->Checkpoint(copy);
  ASSERT_TRUE(sequence.ok()) << sequence.status();
  EXPECT_GT(*sequence, 0u);
  ASSERT_TRUE(store_->WriteRecords({{1, 3, 7, "after"}}).ok());  // Not in the copy.

  absl::StatusOr<std::unique_ptr<Store>> restored = Store::Open({copy, false});
  ASSERT_TRUE(restored.ok()) << restored.status();
  absl::StatusOr<std::vector<StoredPool>> pools = (*restored)->LoadPools();
  ASSERT_TRUE(pools.ok()) << pools.status();
  ASSERT_EQ(pools->size(), 1u);
  EXPECT_EQ((*pools)[0].last_seq, 2u);
  EXPECT_EQ((*pools)[0].counters, (PoolCounters{2, 30, 6}));
  ASSERT_EQ((*pools)[0].categories.size(), 1u);
  EXPECT_EQ(*(*restored)->GetRecord({1, 2}), "bb");
  EXPECT_EQ((*restored)->GetRecord({1, 3}).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(*store_->GetRecord({1, 3}), "after");  // The source is untouched.
}

TEST_F(StoreTest, CheckpointRefusesBadDirectories) {
  EXPECT_EQ(store_->Checkpoint("relative/dir").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->Checkpoint("").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->Checkpoint(path_ + ".none/copy").status().code(),
            absl::StatusCode::kFailedPrecondition);
  const std::string full = path_ + ".full";
  std::filesystem::create_directories(full + "/sub");
  EXPECT_EQ(store_->Checkpoint(full).status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(std::filesystem::exists(full + "/sub"));
  EXPECT_EQ(store_->Checkpoint(path_).status().code(),  // The store itself.
            absl::StatusCode::kAlreadyExists);
  const std::string empty = path_ + ".empty";
  std::filesystem::create_directories(empty);
  EXPECT_TRUE(store_->Checkpoint(empty + "/").ok());  // Trailing slash too.
  EXPECT_TRUE(std::filesystem::exists(empty + "/CURRENT"));
}

TEST_F(StoreTest, IntPropertyPerColumnFamily) {
  ASSERT_TRUE(store_->WriteRecords({{1, 1, 10, "aaaa"}}).ok());
  const auto keys = store_->IntProperty("rocksdb.estimate-num-keys");
  ASSERT_EQ(keys.size(), 8u);  // default + seven families.
  bool records_seen = false;
  for (const auto& [family, value] : keys) {
    if (family == "records") {
      records_seen = true;
      EXPECT_EQ(value, 1u);
    }
  }
  EXPECT_TRUE(records_seen);
  EXPECT_TRUE(store_->IntProperty("rocksdb.no-such-property").empty());
}

}  // namespace
}  // namespace dictlog::store

namespace dictlog::store {
namespace {

TEST(StoreRequestsTest, RequestEntryIsWrittenWithRecordsAndExpiresByAge) {
  const std::string path = FreshTestDir();
  auto store = Store::Open({path, false});
  ASSERT_TRUE(store.ok()) << store.status();
  RequestWrite fresh{"fresh", {}};
  fresh.entry.set_created_unix_ms(absl::ToUnixMillis(absl::Now()));
  fresh.entry.set_fingerprint(7);
  RecordWrite record;
  record.pool_id = 1;
  record.seq = 1;
  record.value = "payload";
  ASSERT_TRUE((*store)->WriteRecords({&record, 1}, &fresh).ok());
  RequestWrite old{"old", {}};
  old.entry.set_created_unix_ms(absl::ToUnixMillis(absl::Now() - absl::Hours(2)));
  ASSERT_TRUE((*store)->WriteRecords({}, &old).ok());

  auto found = (*store)->GetAppendedRequest("fresh");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->fingerprint(), 7u);
  EXPECT_TRUE((*store)->GetRecord({1, 1}).ok());
  // Older than the default 1 h window: absent to readers, then dropped by compaction.
  EXPECT_TRUE(absl::IsNotFound((*store)->GetAppendedRequest("old").status()));
  ASSERT_TRUE((*store)->CompactRequestsForTest().ok());
  store->reset();
  Store::Options long_window{path, false};
  long_window.request_window = absl::Hours(1000);
  store = Store::Open(long_window);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_TRUE(absl::IsNotFound((*store)->GetAppendedRequest("old").status()));
  EXPECT_TRUE((*store)->GetAppendedRequest("fresh").ok());
}

TEST(StoreRequestsTest, RequestIdsAreScopedByPrincipal) {
  auto store = Store::Open({FreshTestDir(), false});
  ASSERT_TRUE(store.ok()) << store.status();
  RequestWrite alice{"req", {}, "alice-principal"};
  alice.entry.set_created_unix_ms(absl::ToUnixMillis(absl::Now()));
  alice.entry.set_fingerprint(1);
  ASSERT_TRUE((*store)->WriteRecords({}, &alice).ok());
  auto found = (*store)->GetAppendedRequest("req", "alice-principal");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->fingerprint(), 1u);
  EXPECT_TRUE(absl::IsNotFound((*store)->GetAppendedRequest("req", "bob-principal").status()));
  EXPECT_TRUE(absl::IsNotFound((*store)->GetAppendedRequest("req").status()));
  RequestWrite unscoped{"req", {}};  // No tokens file: the bare id, as before scoping.
  unscoped.entry.set_created_unix_ms(absl::ToUnixMillis(absl::Now()));
  unscoped.entry.set_fingerprint(2);
  ASSERT_TRUE((*store)->WriteRecords({}, &unscoped).ok());
  EXPECT_EQ((*store)->GetAppendedRequest("req")->fingerprint(), 2u);
  EXPECT_EQ((*store)->GetAppendedRequest("req", "alice-principal")->fingerprint(), 1u);
}

}  // namespace
}  // namespace dictlog::store

namespace dictlog::store {
namespace {

// A fresh store whose block cache budget is `bytes`.
std::unique_ptr<Store> OpenWithBlockCache(size_t bytes) {
  Store::Options options;
  options.path = FreshTestDir();
  options.block_cache_bytes = bytes;
  auto store = Store::Open(options);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? *std::move(store) : nullptr;
}

TEST(StoreBlockCacheTest, EveryFamilySharesOneCacheOfTheConfiguredSize) {
  std::unique_ptr<Store> store = OpenWithBlockCache(size_t{3} << 20);
  ASSERT_NE(store, nullptr);
  const auto capacity = store->IntProperty("rocksdb.block-cache-capacity");
  ASSERT_EQ(capacity.size(), 8u);
  for (const auto& [family, value] : capacity) EXPECT_EQ(value, size_t{3} << 20) << family;
}

// Memory held outside the block cache within its budget (the decoded block cache):
// the cache shrinks by as much, never below half, and each figure replaces the last.
TEST(StoreBlockCacheTest, ReservedBytesComeOutOfTheBlockCache) {
  std::unique_ptr<Store> store = OpenWithBlockCache(size_t{8} << 20);
  ASSERT_NE(store, nullptr);
  auto capacity = [&] {
    const auto values = store->IntProperty("rocksdb.block-cache-capacity");
    return values.empty() ? uint64_t{0} : values.front().second;
  };
  EXPECT_EQ(store->block_cache_budget(), size_t{8} << 20);
  store->ReserveBlockCache(size_t{3} << 20);
  EXPECT_EQ(capacity(), uint64_t{5} << 20);
  store->ReserveBlockCache(size_t{1} << 20);  // Replaces, not adds.
  EXPECT_EQ(capacity(), uint64_t{7} << 20);
  store->ReserveBlockCache(size_t{6} << 20);  // At most half the budget.
  EXPECT_EQ(capacity(), uint64_t{4} << 20);
  store->ReserveBlockCache(0);
  EXPECT_EQ(capacity(), uint64_t{8} << 20);
  // Records written and read back through the smaller cache as before.
  store->ReserveBlockCache(size_t{4} << 20);
  ASSERT_TRUE(store->WriteRecords({{1, 1, 5, "hello"}}).ok());
  auto value = store->GetRecord({1, 1});
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ(*value, "hello");
}

}  // namespace
}  // namespace dictlog::store

namespace dictlog::store {
namespace {

// Bytes of the records family's table files after `records` similar records are
// written and the store reopened (which flushes them into a table file).
uint64_t RecordsTableBytes(TableCompression compression, int records) {
  Store::Options options;
  options.path = FreshTestDir();
  options.records_compression = compression;
  {
    auto store = Store::Open(options);
    EXPECT_TRUE(store.ok()) << store.status();
    std::vector<RecordWrite> writes;
    for (int i = 1; i <= records; ++i) {
      writes.push_back({1, static_cast<uint64_t>(i), 40,
                        absl::StrCat("frame header ", i % 7, " and a payload ", i)});
    }
    EXPECT_TRUE((*store)->WriteRecords(writes).ok());
  }
  auto store = Store::Open(options);
  EXPECT_TRUE(store.ok()) << store.status();
  for (int i = 1; i <= records; i += records / 10) {
    auto value = (*store)->GetRecord({1, static_cast<uint64_t>(i)});
    EXPECT_TRUE(value.ok()) << value.status();
    if (value.ok()) {
      EXPECT_EQ(*value, absl::StrCat("frame header ", i % 7, " and a payload ", i));
    }
  }
  for (const auto& [family, bytes] : (*store)->IntProperty("rocksdb.total-sst-files-size")) {
    if (family == "records") return bytes;
  }
  ADD_FAILURE() << "no records family";
  return 0;
}

TEST(StoreTableCompressionTest, RecordsFamilyIsCompressedAsConfigured) {
  const uint64_t none = RecordsTableBytes(TableCompression::kNone, 5000);
  const uint64_t lz4 = RecordsTableBytes(TableCompression::kLz4, 5000);
  const uint64_t zstd = RecordsTableBytes(TableCompression::kZstd, 5000);
  EXPECT_GT(none, 0u);
  EXPECT_LT(lz4, none * 3 / 4) << "lz4 " << lz4 << " none " << none;
  EXPECT_LT(zstd, lz4) << "zstd " << zstd << " lz4 " << lz4;
}

TEST(StoreTableCompressionTest, ParsesTheThreeNames) {
  EXPECT_EQ(*ParseTableCompression("none"), TableCompression::kNone);
  EXPECT_EQ(*ParseTableCompression("lz4"), TableCompression::kLz4);
  EXPECT_EQ(*ParseTableCompression("zstd"), TableCompression::kZstd);
  EXPECT_EQ(ParseTableCompression("snappy").status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dictlog::store

namespace dictlog::store {
namespace {

// Block-cache bytes one read of a flushed record adds: the one table block it read.
uint64_t BytesCachedByOneRead(const Store::Options& options) {
  {
    auto store = Store::Open(options);
    EXPECT_TRUE(store.ok()) << store.status();
    std::vector<RecordWrite> writes;
    for (int i = 1; i <= 5000; ++i) {
      writes.push_back({1, static_cast<uint64_t>(i), 40,
                        absl::StrCat("frame header ", i % 7, " and a payload ", i)});
    }
    EXPECT_TRUE((*store)->WriteRecords(writes).ok());
  }
  auto store = Store::Open(options);  // The records are in a table file now.
  EXPECT_TRUE(store.ok()) << store.status();
  auto usage = [&] { return (*store)->IntProperty("rocksdb.block-cache-usage")[0].second; };
  const uint64_t before = usage();
  EXPECT_TRUE((*store)->GetRecord({1, 2500}).ok());
  return usage() - before;
}

TEST(StoreRecordsBlockTest, DefaultIsRocksDbsFourKiB) {
  Store::Options options;
  options.path = FreshTestDir();
  EXPECT_GT(BytesCachedByOneRead(options), 4000u);
}

TEST(StoreRecordsBlockTest, SmallerBlocksMakeAMissReadLess) {
  Store::Options options;
  options.path = FreshTestDir();
  options.records_block_bytes = 1024;
  const uint64_t cached = BytesCachedByOneRead(options);
  EXPECT_GT(cached, 512u);
  EXPECT_LT(cached, 2048u);  // 1 KiB of records and the cache's own accounting.
}

TEST(StoreRecordsBlockTest, RefusesSizesOutsideTheBounds) {
  Store::Options options;
  options.path = FreshTestDir();
  for (size_t bytes : {size_t{0}, kLeastRecordsBlockBytes - 1, kMostRecordsBlockBytes + 1}) {
    options.records_block_bytes = bytes;
    EXPECT_EQ(Store::Open(options).status().code(), absl::StatusCode::kInvalidArgument)
        << bytes;
  }
}

}  // namespace
}  // namespace dictlog::store
