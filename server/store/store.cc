#include "server/store/store.h"

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/listener.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <system_error>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "codec/dictionary.h"
#include "codec/varint.h"
#include "server/store/background_errors.h"
#include "server/store/empty_wals.h"
#include "server/store/keys.h"
#include "server/store/request_expiry.h"
#include "server/store/rocksdb_status.h"
#include "server/store/store_dir.h"
#include "server/store/synced_mark.h"
#include "server/store/wal_drop_log.h"

namespace dictlog::store {
namespace {

constexpr char kRecordsFamily[] = "records";
constexpr char kCatalogFamily[] = "catalog";
constexpr char kCountersFamily[] = "counters";
constexpr char kDictionariesFamily[] = "dictionaries";
constexpr char kBlocksFamily[] = "blocks";
constexpr char kRequestsFamily[] = "requests";
constexpr char kTimesFamily[] = "times";

rocksdb::Slice ToSlice(absl::string_view s) { return rocksdb::Slice(s.data(), s.size()); }

// The seq of the record under the iterator, or 0 if it belongs to another pool.
absl::StatusOr<uint64_t> SeqInPool(const rocksdb::Iterator& it, uint32_t pool_id) {
  uint32_t found_pool = 0;
  uint64_t seq = 0;
  if (!ParseRecordKey(absl::string_view(it.key().data(), it.key().size()), &found_pool,
                      &seq)) {
    return absl::DataLossError("malformed key in the records column family");
  }
  return found_pool == pool_id ? seq : 0;
}

// Column family options whose table blocks live in `cache` (every family shares one).
rocksdb::ColumnFamilyOptions FamilyOptions(const std::shared_ptr<rocksdb::Cache>& cache,
                                           bool bloom_filter, size_t block_bytes = 4096) {
  rocksdb::ColumnFamilyOptions options;
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = cache;
  table.block_size = block_bytes;
  if (bloom_filter) table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return options;
}

rocksdb::CompressionType ToRocks(TableCompression compression) {
  switch (compression) {
    case TableCompression::kLz4:
      return rocksdb::kLZ4Compression;
    case TableCompression::kZstd:
      return rocksdb::kZSTD;
    case TableCompression::kNone:
      break;
  }
  return rocksdb::kNoCompression;
}

// The records family (single records' frames, block entries). No data-block hash index:
// tried, it cost 1.5 bytes a record on disk (+2.9% of the SST bytes in
// benchmarks/compare), and searching inside a block is under 1% of a Get's profile.
// Blocks of `block_bytes` (Options::records_block_bytes, ADR 0033).
rocksdb::ColumnFamilyOptions RecordsFamilyOptions(const std::shared_ptr<rocksdb::Cache>& cache,
                                                  TableCompression compression,
                                                  size_t block_bytes, size_t file_bytes) {
  rocksdb::ColumnFamilyOptions options =
      FamilyOptions(cache, /*bloom_filter=*/true, block_bytes);
  options.target_file_size_base = file_bytes;  // Options::table_file_bytes.
  // Most reads are of records already flushed: a Bloom filter over the memtable's keys
  // lets them skip its skip list. Sized at 1% of the memtable's bytes: 671 KB for
  // 64 MiB, about 8 bits a key when records store ~40 bytes (~700,000 entries), so it
  // stays within a core's L2 cache. At 5% (3.4 MB) each append's update of it missed
  // the cache: 6.6% of an append handler's time (ADR 0010's amendment).
  options.memtable_whole_key_filtering = true;
  options.memtable_prefix_bloom_size_ratio = 0.01;
  options.compression = ToRocks(compression);
  return options;
}

// The blocks family: each value is a zstd frame of up to block_bytes; another pass over
// it would only cost CPU.
rocksdb::ColumnFamilyOptions BlocksFamilyOptions(const std::shared_ptr<rocksdb::Cache>& cache,
                                                 size_t file_bytes) {
  rocksdb::ColumnFamilyOptions options = FamilyOptions(cache, /*bloom_filter=*/true);
  options.target_file_size_base = file_bytes;  // Options::table_file_bytes.
  options.compression = rocksdb::kNoCompression;
  return options;
}

// RocksDB's info logs (LOG, LOG.old.*) take at most kInfoLogFiles x kInfoLogBytes.
constexpr size_t kInfoLogBytes = 16 << 20;
constexpr size_t kInfoLogFiles = 8;

// Room a resume needs beyond the memtables it flushes (a new WAL, MANIFEST and OPTIONS
// records). In RocksDB 7.8 a resume whose flush fails makes the error fatal until the
// database is reopened, so Store resumes only once the disk has this much more than
// the memtables hold.
constexpr uint64_t kResumeSlackBytes = 1 << 20;

rocksdb::ColumnFamilyOptions CountersFamilyOptions(
    const std::shared_ptr<rocksdb::Cache>& cache) {
  rocksdb::ColumnFamilyOptions options = FamilyOptions(cache, /*bloom_filter=*/false);
  options.merge_operator = NewPoolCountersMergeOperator();
  return options;
}

}  // namespace

absl::StatusOr<TableCompression> ParseTableCompression(absl::string_view name) {
  if (name == "none") return TableCompression::kNone;
  if (name == "lz4") return TableCompression::kLz4;
  if (name == "zstd") return TableCompression::kZstd;
  return absl::InvalidArgumentError(
      absl::StrCat("table compression must be none, lz4 or zstd, not '", name, "'"));
}

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const Options& options) {
  if (options.records_block_bytes < kLeastRecordsBlockBytes ||
      options.records_block_bytes > kMostRecordsBlockBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "records block size must be ", kLeastRecordsBlockBytes, "..", kMostRecordsBlockBytes,
        " bytes, not ", options.records_block_bytes));
  }
  if (options.table_file_bytes == 0) {
    return absl::InvalidArgumentError("table file size must be positive");
  }
  if (options.max_wal_bytes == 0) {  // RocksDB would read 0 as its own 4 GiB.
    return absl::InvalidArgumentError("the WAL bound must be positive");
  }
  if (options.max_open_files != -1 && options.max_open_files < 20) {
    return absl::InvalidArgumentError(absl::StrCat(
        "open table files must be -1 (all) or at least 20, not ", options.max_open_files));
  }
  RETURN_IF_ERROR(CheckStoreDir(options.path));  // Never a new store over an old one's files.
  std::error_code error;
  if (options.read_only) {
    if (!std::filesystem::exists(options.path + "/CURRENT", error)) {
      return absl::NotFoundError(absl::StrCat("no store at ", options.path));
    }
  } else {
    std::filesystem::create_directories(options.path, error);  // RocksDB makes one level.
  }
  if (error) {
    return absl::UnavailableError(
        absl::StrCat("cannot create data directory ", options.path, ": ", error.message()));
  }
  rocksdb::DBOptions db_options;
  db_options.create_if_missing = true;
  db_options.create_missing_column_families = true;
  db_options.paranoid_checks = true;
  // The MANIFEST lists the closed, synced logs it still needs, and an open that misses
  // one (deleted, cut below its synced size, or dropped by a MANIFEST whose newest edit
  // was cut after the log's deletion) is refused rather than replaying around the gap
  // (ADR 0046).
  db_options.track_and_verify_wals_in_manifest = true;
  auto background_errors = std::make_shared<BackgroundErrors>();
  db_options.listeners.push_back(background_errors);
  // RocksDB's info log: rolled past kInfoLogBytes, the newest kInfoLogFiles kept. By
  // default it never rolls and keeps 1000: a running node's LOG grew by ~20 KB a
  // statistics dump (every 10 minutes) plus every flush and compaction, without bound,
  // and each open added a LOG.old of ~110 KB (its options for eight column families).
  db_options.max_log_file_size = kInfoLogBytes;
  db_options.keep_log_file_num = kInfoLogFiles;
  // Options::max_wal_bytes. RocksDB's default (4 GiB here) let the WALs of a load of
  // 6,000,000 records reach 339 MB, 1.8x its SST bytes, the first WAL still among them.
  db_options.max_total_wal_size = options.max_wal_bytes;
  db_options.max_open_files = options.max_open_files;
  // Every flush takes all families at once (ADR 0042), so no family's table files get
  // ahead of an older log the others still need. Without it a flush of one family (a
  // full memtable, a pool delete's or retention's compaction) left older logs live, and
  // a damaged byte in one of them made every open fail ("SST file is ahead of WALs in
  // CF records"), where the recovery otherwise drops the log from the damage on.
  db_options.atomic_flush = true;
  std::unique_ptr<rocksdb::Env> env;
  if (options.file_system != nullptr) {
    env = rocksdb::NewCompositeEnv(options.file_system);
    db_options.env = env.get();
  }
  // The LOG file RocksDB would make (rolled as above), tapped for what recovery drops.
  std::shared_ptr<rocksdb::Logger> info_log;
  RETURN_IF_ERROR(FromRocks(rocksdb::CreateLoggerFromOptions(options.path, db_options, &info_log),
                            absl::StrCat("opening the info log in ", options.path)));
  auto wal_drop_log = std::make_shared<WalDropLog>(std::move(info_log));
  db_options.info_log = wal_drop_log;
  std::shared_ptr<rocksdb::Cache> cache = rocksdb::NewLRUCache(options.block_cache_bytes);
  std::vector<rocksdb::ColumnFamilyDescriptor> families = {
      {rocksdb::kDefaultColumnFamilyName, FamilyOptions(cache, false)},
      {kRecordsFamily, RecordsFamilyOptions(cache, options.records_compression,
                                            options.records_block_bytes,
                                            options.table_file_bytes)},
      {kCatalogFamily, FamilyOptions(cache, false)},
      {kCountersFamily, CountersFamilyOptions(cache)},
      {kDictionariesFamily, FamilyOptions(cache, false)},
      {kBlocksFamily, BlocksFamilyOptions(cache, options.table_file_bytes)},
      // Most lookups are of new request ids, absent: a Bloom filter answers them in
      // memory.
      {kRequestsFamily, FamilyOptions(cache, true)},
  };
  auto request_expiry =
      std::make_unique<RequestExpiry>(options.request_window, options.clock_for_test);
  families.back().options.compaction_filter = request_expiry.get();
  // Append times (ADR 0015): small; LZ4 shares out the repeated high bytes of keys.
  families.push_back({kTimesFamily, FamilyOptions(cache, false)});
  families.back().options.compression = rocksdb::kLZ4Compression;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw_db = nullptr;
  const rocksdb::Status opened =
      options.read_only
          ? rocksdb::DB::OpenForReadOnly(db_options, options.path, families, &handles,
                                         &raw_db)
          : rocksdb::DB::Open(db_options, options.path, families, &handles, &raw_db);
  if (!opened.ok()) return OpenRefusal(options.path, opened);
  std::unique_ptr<rocksdb::DB> db(raw_db);
  if (!options.read_only) DeleteStaleEmptyWals(db.get());  // RocksDB 7.8 leaves one per open.
  std::unique_ptr<Store> store(new Store(std::move(env), std::move(db), std::move(handles),
                                         options, std::move(request_expiry),
                                         std::move(cache)));
  store->background_errors_ = std::move(background_errors);
  store->wal_dropped_at_open_ = wal_drop_log->drops();
  if (!options.read_only) store->CheckSyncedMark(options.path);
  return store;
}

Store::Store(std::unique_ptr<rocksdb::Env> env, std::unique_ptr<rocksdb::DB> db,
             std::vector<rocksdb::ColumnFamilyHandle*> handles, const Options& options,
             std::unique_ptr<rocksdb::CompactionFilter> request_expiry,
             std::shared_ptr<rocksdb::Cache> block_cache)
    : env_(std::move(env)),
      request_expiry_(std::move(request_expiry)),
      db_(std::move(db)),
      handles_(std::move(handles)),
      block_cache_(std::move(block_cache)),
      block_cache_budget_(options.block_cache_bytes),
      path_(options.path),
      sync_writes_(options.sync_writes),
      read_only_(options.read_only),
      request_window_(options.request_window),
      clock_(options.clock_for_test),
      before_synced_write_for_test_(options.before_synced_write_for_test) {
  records_ = handles_[1];
  catalog_ = handles_[2];
  counters_ = handles_[3];
  dictionaries_ = handles_[4];
  blocks_ = handles_[5];
  requests_ = handles_[6];
  times_ = handles_[7];
}

void Store::ReserveBlockCache(size_t bytes) {
  block_cache_->SetCapacity(block_cache_budget_ - std::min(bytes, block_cache_budget_ / 2));
}

Store::~Store() {
  for (rocksdb::ColumnFamilyHandle* handle : handles_) {
    db_->DestroyColumnFamilyHandle(handle);
  }
  db_->Close();
}

absl::StatusOr<std::vector<StoredPool>> Store::LoadPools() const {
  std::vector<StoredPool> pools;
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), catalog_));
  const std::string prefix(1, kPoolPrefix);
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    StoredPool pool;
    if (!pool.record.ParseFromArray(it->value().data(),
                                    static_cast<int>(it->value().size()))) {
      return absl::DataLossError(
          absl::StrCat("catalog entry for pool '", it->key().ToString().substr(1),
                       "' does not parse"));
    }
    pools.push_back(std::move(pool));
  }
  RETURN_IF_ERROR(FromRocks(it->status(), "reading the pool catalog"));
  for (StoredPool& pool : pools) RETURN_IF_ERROR(LoadPoolDetails(&pool));
  return pools;
}

absl::Status Store::LoadPoolDetails(StoredPool* pool) const {
  const uint32_t id = pool->record.id();
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), catalog_));
  const std::string prefix = CategoryKeyPrefix(id);
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    absl::string_view value(it->value().data(), it->value().size());
    uint32_t index = 0;
    if (!codec::GetVarint32(&value, &index) || !value.empty()) {
      return absl::DataLossError(
          absl::StrCat("category entry of pool ", id, " does not parse"));
    }
    pool->categories.emplace_back(index, it->key().ToString().substr(prefix.size()));
  }
  RETURN_IF_ERROR(FromRocks(it->status(), "reading categories"));
  std::sort(pool->categories.begin(), pool->categories.end());

  const std::string lost = LostSeqsPrefix(id);
  for (it->Seek(lost); it->Valid() && it->key().starts_with(lost); it->Next()) {
    if (it->key().size() != lost.size() + 8 || it->value().size() != 8) {
      return absl::DataLossError(absl::StrCat("lost seqs entry of pool ", id, " does not parse"));
    }
    pool->lost_seqs.emplace_back(GetFixed64BE(it->key().data() + lost.size()),
                                 GetFixed64BE(it->value().data()));
  }
  RETURN_IF_ERROR(FromRocks(it->status(), "reading lost seqs"));
  ASSIGN_OR_RETURN(pool->counters, ReadCounters(CounterKey(id)));
  ASSIGN_OR_RETURN(pool->seq_ceiling, ReadSeqCeiling(id));
  absl::StatusOr<uint64_t> last = NewestSeq(id);
  if (last.ok()) {
    pool->last_seq = *last;
  } else if (absl::IsDataLoss(last.status()) && pool->seq_ceiling != 0) {
    // The lease is written before the seqs it covers are (ADR 0041), and the log is
    // replayed as a prefix (ADR 0042): it is past every seq the pool handed out. One
    // damaged table block then costs reads of the records in it (DATA_LOSS), not the
    // open of every pool.
    pool->newest_unreadable = last.status();
  } else {
    return last.status();
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> Store::NewestSeq(uint32_t pool_id) const {
  ASSIGN_OR_RETURN(const uint64_t last, LastSeq(pool_id));
  // Sealing deletes indexed blocks' records: the newest may be in a block.
  ASSIGN_OR_RETURN(const uint64_t last_indexed, LastIndexedSeq(pool_id));
  return std::max(last, last_indexed);
}

absl::StatusOr<PoolCounters> Store::ReadCounters(const std::string& key,
                                                 const ReadSnapshot* snapshot) const {
  std::string value;
  PoolCounters counters;
  rocksdb::ReadOptions read;
  if (snapshot != nullptr) read.snapshot = snapshot->snapshot_;
  rocksdb::Status s = db_->Get(read, counters_, key, &value);
  if (s.IsNotFound()) return counters;
  RETURN_IF_ERROR(FromRocks(s, "reading counters"));
  if (!DecodePoolCounters(value, &counters)) {
    return absl::DataLossError("stored counters are corrupt");
  }
  return counters;
}

absl::Status Store::ResumeIfStopped() {
  if (!write_failed_.load()) return absl::OkStatus();
  uint64_t free_bytes = 0;
  uint64_t memtables = 0;
  db_->GetAggregatedIntProperty("rocksdb.cur-size-all-mem-tables", &memtables);
  const uint64_t needed = memtables + kResumeSlackBytes;
  rocksdb::Env* env = env_ != nullptr ? env_.get() : rocksdb::Env::Default();
  if (env->GetFreeSpace(path_, &free_bytes).ok() && free_bytes < needed) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "writes stopped after a failed write: the disk has ", free_bytes,
        " bytes free; writes resume once it has ", needed));
  }
  const rocksdb::Status resumed = db_->Resume();
  if (!resumed.ok()) {
    const absl::Status stopped = WritesStopped();
    return stopped.ok() ? FromRocks(resumed, "resuming writes after a failed write")
                        : stopped;
  }
  background_errors_->Clear();
  write_failed_.store(false);
  return absl::OkStatus();
}

absl::Status Store::WritesStopped() const { return background_errors_->Stopped(); }

void Store::CheckSyncedMark(const std::string& path) {
  synced_mark_ = std::make_unique<SyncedMark>(path);
  absl::StatusOr<std::optional<uint64_t>> mark = SyncedMark::Read(path);
  const uint64_t last = db_->GetLatestSequenceNumber();
  WalDrops& drops = wal_dropped_at_open_;
  if (!mark.ok()) {
    drops.synced_writes_lost = true;  // Unknown: assume the worst (ADR 0044).
    drops.synced_lost_why = std::string(mark.status().message());
  } else if (mark->has_value() && last < **mark) {
    drops.synced_writes_lost = true;
    drops.synced_lost_why = absl::StrCat("the store's last sequence, ", last,
                                         ", is below that of its newest synced write, ",
                                         **mark);
  }
}

absl::Status Store::Write(rocksdb::WriteBatch* batch, absl::string_view what, bool sync) {
  if (read_only_) {
    return absl::FailedPreconditionError(absl::StrCat(what, ": the store is open read-only"));
  }
  RETURN_IF_ERROR(ResumeIfStopped());
  rocksdb::WriteOptions options;
  options.sync = sync_writes_ || sync;
  // A write that gives out an id: its sequences are above every one before it.
  const uint64_t before = sync ? db_->GetLatestSequenceNumber() : 0;
  if (sync && before_synced_write_for_test_) before_synced_write_for_test_();
  const rocksdb::Status s = db_->Write(options, batch);
  if (!s.ok()) return WriteFailed(s, what);
  return sync ? RaiseSyncedMark(before, batch->Count()) : absl::OkStatus();
}

absl::Status Store::WriteFailed(const rocksdb::Status& s, absl::string_view what) {
  write_failed_.store(true);
  const absl::Status stopped = WritesStopped();
  if (!stopped.ok()) return absl::Status(stopped.code(), absl::StrCat(what, ": ", stopped.message()));
  return FromRocks(s, what);
}

uint64_t Store::LatestSequenceForTest() const { return db_->GetLatestSequenceNumber(); }

// The mark must be a sequence of the synced write, or of a synced write logged after
// it: a replay that kept the write then ends at or past the mark, and one that lost
// it (and, the replay being a prefix, everything logged after it) ends below. Its
// first sequence is before + 1 only when no other write took sequences between the
// read of `before` and it (after - before == count). Otherwise a one-sequence write
// (kSyncedMarkKey in the default family) is synced after it, until one takes exactly
// the next sequence: that number marks both. Before, the mark was before + 1 always,
// and a write lost with the log it went to read as kept when writes that raced it
// went to the log before (corruption_test's `delete` target: `Late/1` given again).
absl::Status Store::RaiseSyncedMark(uint64_t before, uint64_t count) {
  constexpr int kAttempts = 4;
  if (count == 0) return absl::OkStatus();  // Nothing written: no sequence taken.
  uint64_t after = db_->GetLatestSequenceNumber();
  for (int attempt = 0; after - before != count && attempt < kAttempts; ++attempt) {
    rocksdb::WriteOptions synced;
    synced.sync = true;
    before = after;
    count = 1;
    const rocksdb::Status s = db_->Put(synced, handles_[0], kSyncedMarkKey, rocksdb::Slice());
    if (!s.ok()) return WriteFailed(s, "marking a synced write");
    after = db_->GetLatestSequenceNumber();
  }
  // Still raced: `after` is past the write, so the mark errs high. A replay that loses
  // only unsynced writes logged after it then reads as a loss of synced ones: a
  // needless 2^32 skip, never an id given again.
  return synced_mark_->Raise(after - count + 1);
}

absl::Status Store::Put(rocksdb::ColumnFamilyHandle* family, absl::string_view key,
                        absl::string_view value, absl::string_view what, bool sync) {
  rocksdb::WriteBatch batch;
  RETURN_IF_ERROR(FromRocks(batch.Put(family, ToSlice(key), ToSlice(value)), what));
  return Write(&batch, what, sync);
}

absl::StatusOr<uint64_t> Store::LastSeq(uint32_t pool_id) const {
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), records_));
  it->SeekForPrev(RecordKey(pool_id, UINT64_MAX));
  uint32_t found_pool = 0;
  uint64_t seq = 0;
  if (it->Valid() &&
      ParseRecordKey(absl::string_view(it->key().data(), it->key().size()), &found_pool,
                     &seq) &&
      found_pool == pool_id) {
    return seq;
  }
  RETURN_IF_ERROR(FromRocks(it->status(), "finding the last record"));
  return 0;
}

struct Store::PoolBounds {
  std::string lower;
  std::string upper;
  rocksdb::Slice lower_slice;
  rocksdb::Slice upper_slice;
};

std::unique_ptr<rocksdb::Iterator> Store::IndexedBlockIterator(
    uint32_t pool_id, uint64_t from_seq, PoolBounds* bounds,
    const ReadSnapshot* snapshot) const {
  // Bounded to the pool's indexed blocks: a seek never leaves them, and blocks found
  // through entry values (all keyed before from_seq) are out of its range.
  bounds->lower = RecordKey(pool_id, from_seq);
  bounds->upper = pool_id == UINT32_MAX ? std::string(kRecordKeyBytes, '\xff')
                                        : RecordKey(pool_id + 1, 0);
  bounds->lower_slice = bounds->lower;
  bounds->upper_slice = bounds->upper;
  rocksdb::ReadOptions read;
  read.iterate_lower_bound = &bounds->lower_slice;
  read.iterate_upper_bound = &bounds->upper_slice;
  if (snapshot != nullptr) read.snapshot = snapshot->snapshot_;
  return std::unique_ptr<rocksdb::Iterator>(db_->NewIterator(read, blocks_));
}

namespace {

// The indexed block under the iterator; false for a key of another form.
bool IndexedBlockAt(const rocksdb::Iterator& it, IndexedBlock* block) {
  uint32_t pool_id = 0;
  return ParseIndexedBlockKey(absl::string_view(it.key().data(), it.key().size()),
                              &pool_id, &block->first_seq, &block->last_seq);
}

enum class Forward { kFound, kAbsent, kUnknown };

// Finds the indexed block holding `seq` moving forward only: a seek to the first block
// keyed at or after `seq - reach` (not before `from_seq`, the iterator's lower bound),
// then the next ones until one ends at or after `seq`. A forward seek costs RocksDB
// less than SeekForPrev's reverse iteration. kUnknown when the first block found
// already starts past `seq` (the holding block, if any, starts before `seq - reach`)
// or too many blocks lie in between: the caller seeks backward.
Forward SeekForward(rocksdb::Iterator* it, uint32_t pool_id, uint64_t from_seq,
                    uint64_t seq, uint64_t reach, IndexedBlock* block) {
  constexpr int kMostSteps = 8;
  const uint64_t start = seq - from_seq > reach ? seq - reach : from_seq;
  int visited = 0;
  for (it->Seek(IndexedBlockKey(pool_id, start, 0)); it->Valid() && visited < kMostSteps;
       it->Next()) {
    if (!IndexedBlockAt(*it, block)) continue;
    ++visited;
    if (block->first_seq > seq) {
      // Blocks never overlap: past the first one, seq falls in a gap between two.
      return visited > 1 || start == from_seq ? Forward::kAbsent : Forward::kUnknown;
    }
    if (block->last_seq >= seq) return Forward::kFound;
  }
  if (!it->Valid() && it->status().ok()) {
    // Every block from start on ends before seq; one starting before start would
    // overlap them if it reached seq.
    return visited > 0 || start == from_seq ? Forward::kAbsent : Forward::kUnknown;
  }
  return Forward::kUnknown;  // Too many steps, or an error the backward seek meets too.
}

}  // namespace

absl::StatusOr<bool> Store::SeekBlockHolding(rocksdb::Iterator* it, uint32_t pool_id,
                                             uint64_t from_seq, uint64_t seq,
                                             IndexedBlock* block) const {
  std::atomic<uint64_t>& hint = span_hints_[pool_id % kSpanHints];
  const uint64_t span = hint.load(std::memory_order_relaxed);
  if (span != 0) {
    // A quarter more than the last block's span: measured on loghub's block2k store,
    // 56% of the seeks land on the holding block, 42% one block before it, and 0.4%
    // fall back (RESULTS.md "Forward seeks to indexed blocks").
    switch (SeekForward(it, pool_id, from_seq, seq, span + span / 4 + 2, block)) {
      case Forward::kFound:
        hint.store(block->last_seq - block->first_seq + 1, std::memory_order_relaxed);
        return true;
      case Forward::kAbsent:
        return false;
      case Forward::kUnknown:
        break;
    }
  }
  it->SeekForPrev(IndexedBlockKey(pool_id, seq, UINT64_MAX));
  if (!it->Valid()) {
    // Each seek starts the iterator's status afresh: an error not taken here would
    // read as "no block holds it".
    RETURN_IF_ERROR(FromRocks(it->status(), "finding a record's block"));
    return false;
  }
  if (!IndexedBlockAt(*it, block) || block->last_seq < seq) return false;
  hint.store(block->last_seq - block->first_seq + 1, std::memory_order_relaxed);
  return true;
}

absl::StatusOr<uint64_t> Store::LastIndexedSeq(uint32_t pool_id) const {
  PoolBounds bounds;
  std::unique_ptr<rocksdb::Iterator> it = IndexedBlockIterator(pool_id, 0, &bounds);
  IndexedBlock block;
  for (it->SeekToLast(); it->Valid(); it->Prev()) {
    if (IndexedBlockAt(*it, &block)) return block.last_seq;
  }
  RETURN_IF_ERROR(FromRocks(it->status(), "finding the last block"));
  return 0;
}

absl::StatusOr<IndexedBlockSearch> Store::FindIndexedBlocks(
    uint32_t pool_id, uint64_t from_seq, absl::Span<const uint64_t> seqs) const {
  IndexedBlockSearch search;
  search.block_of.assign(seqs.size(), -1);
  PoolBounds bounds;
  std::unique_ptr<rocksdb::Iterator> it = IndexedBlockIterator(pool_id, from_seq, &bounds);
  std::map<uint64_t, int64_t> index;  // First seq -> index into search.blocks.
  for (size_t i = 0; i < seqs.size(); ++i) {
    if (seqs[i] < from_seq) continue;
    IndexedBlock block;
    absl::StatusOr<bool> held = SeekBlockHolding(it.get(), pool_id, from_seq, seqs[i], &block);
    if (!held.ok()) {
      if (search.failed.empty()) search.failed.resize(seqs.size());
      search.failed[i] = held.status();
      continue;
    }
    if (!*held) continue;
    auto [found, added] =
        index.try_emplace(block.first_seq, static_cast<int64_t>(search.blocks.size()));
    if (added) {
      block.value = it->value().ToString();
      search.blocks.push_back(std::move(block));
    }
    search.block_of[i] = found->second;
  }
  return search;
}

absl::StatusOr<std::vector<IndexedBlock>> Store::ScanIndexedBlocks(
    uint32_t pool_id, uint64_t from_seq, uint64_t seq, size_t max_blocks,
    const ReadSnapshot* snapshot) const {
  std::vector<IndexedBlock> out;
  PoolBounds bounds;
  std::unique_ptr<rocksdb::Iterator> it =
      IndexedBlockIterator(pool_id, from_seq, &bounds, snapshot);
  it->SeekForPrev(IndexedBlockKey(pool_id, seq, UINT64_MAX));
  if (!it->Valid()) {
    RETURN_IF_ERROR(FromRocks(it->status(), "scanning blocks"));
    it->SeekToFirst();
  }
  for (; it->Valid() && out.size() < max_blocks; it->Next()) {
    IndexedBlock block;
    if (!IndexedBlockAt(*it, &block) || block.last_seq < seq) continue;
    block.value = it->value().ToString();
    out.push_back(std::move(block));
  }
  RETURN_IF_ERROR(FromRocks(it->status(), "scanning blocks"));
  return out;
}

absl::StatusOr<std::vector<IndexedBlock>> Store::LatestIndexedBlocks(
    uint32_t pool_id, uint64_t from_seq, uint64_t before_seq, size_t max_blocks) const {
  std::vector<IndexedBlock> out;
  if (before_seq == 0) return out;
  PoolBounds bounds;
  std::unique_ptr<rocksdb::Iterator> it = IndexedBlockIterator(pool_id, from_seq, &bounds);
  for (it->SeekForPrev(IndexedBlockKey(pool_id, before_seq - 1, UINT64_MAX));
       it->Valid() && out.size() < max_blocks; it->Prev()) {
    IndexedBlock block;
    if (!IndexedBlockAt(*it, &block)) continue;
    block.value = it->value().ToString();
    out.push_back(std::move(block));
  }
  RETURN_IF_ERROR(FromRocks(it->status(), "reading the newest blocks"));
  return out;
}

absl::Status Store::PutPool(const storage::PoolRecord& pool) {
  return Put(catalog_, PoolKey(pool.name()), pool.SerializeAsString(),
             "writing the pool catalog", /*sync=*/true);
}

absl::Status Store::PutSeqCeilings(absl::Span<const SeqCeiling> ceilings,
                                   std::optional<uint64_t> seq_floor) {
  rocksdb::WriteBatch batch;
  for (const SeqCeiling& ceiling : ceilings) {
    std::string value;
    PutFixed64BE(ceiling.next_seq, &value);
    RETURN_IF_ERROR(FromRocks(batch.Put(catalog_, SeqCeilingKey(ceiling.pool_id), value),
                              "batching a seq lease"));
  }
  if (seq_floor.has_value()) {
    std::string value;
    PutFixed64BE(*seq_floor, &value);
    RETURN_IF_ERROR(FromRocks(batch.Put(catalog_, std::string(1, kSeqFloorKey), value),
                              "batching the seq floor"));
  }
  return Write(&batch, "writing seq leases", /*sync=*/true);
}

absl::Status Store::PutLostSeqs(absl::Span<const LostSeqs> lost) {
  rocksdb::WriteBatch batch;
  for (const LostSeqs& range : lost) {
    std::string value;
    PutFixed64BE(range.last, &value);
    RETURN_IF_ERROR(FromRocks(
        batch.Put(catalog_, LostSeqsKey(range.pool_id, range.first), value),
        "batching lost seqs"));
  }
  return Write(&batch, "writing lost seqs", /*sync=*/true);
}

absl::Status Store::PutPoolCounters(uint32_t pool_id, const PoolCounters& counters) {
  rocksdb::WriteBatch batch;
  RETURN_IF_ERROR(FromRocks(
      batch.Put(counters_, CounterKey(pool_id), EncodePoolCounters(counters)),
      "batching pool counters"));
  return Write(&batch, "writing pool counters", /*sync=*/true);
}

absl::StatusOr<uint64_t> Store::SeqFloor() const {
  std::string value;
  const rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), catalog_, std::string(1, kSeqFloorKey), &value);
  if (s.IsNotFound()) return 0;
  RETURN_IF_ERROR(FromRocks(s, "reading the seq floor"));
  if (value.size() != 8) return absl::DataLossError("the seq floor does not parse");
  return GetFixed64BE(value.data());
}

absl::StatusOr<uint64_t> Store::ReadSeqCeiling(uint32_t pool_id) const {
  std::string value;
  const rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), catalog_, SeqCeilingKey(pool_id), &value);
  if (s.IsNotFound()) return 0;
  RETURN_IF_ERROR(FromRocks(s, "reading a seq lease"));
  if (value.size() != 8) {
    return absl::DataLossError(absl::StrCat("seq lease of pool ", pool_id, " does not parse"));
  }
  return GetFixed64BE(value.data());
}

absl::Status Store::PutCategory(uint32_t pool_id, uint32_t index,
                                absl::string_view category) {
  std::string value;
  codec::PutVarint32(index, &value);
  return Put(catalog_, CategoryKey(pool_id, category), value, "writing a category");
}

absl::Status Store::WriteRecords(absl::Span<const RecordWrite> records,
                                 const RequestWrite* request, const LogPosition* applied,
                                 absl::Span<const BlockWrite> blocks) {
  rocksdb::WriteBatch batch;
  if (applied != nullptr) RETURN_IF_ERROR(BatchLogPosition(*applied, &batch));
  if (request != nullptr) {
    const std::string key = RequestKey(request->principal, request->request_id);
    RETURN_IF_ERROR(FromRocks(batch.Put(requests_, key, request->entry.SerializeAsString()),
                              "batching a request id"));
  }
  // Counter deltas by pool and by dictionary id; keys are built once per call.
  absl::flat_hash_map<uint32_t, PoolCounters> pools;
  absl::flat_hash_map<uint32_t, PoolCounters> dictionaries;
  for (const RecordWrite& record : records) {
    if (record.in_block) continue;
    RETURN_IF_ERROR(FromRocks(
        batch.Put(records_, RecordKey(record.pool_id, record.seq), ToSlice(record.value)),
        "batching a record"));
    const PoolCounters one{1, record.raw_bytes, record.value.size()};
    pools[record.pool_id] += one;
    if (record.dictionary_id != 0) dictionaries[record.dictionary_id] += one;
  }
  for (const BlockWrite& block : blocks) {
    RETURN_IF_ERROR(FromRocks(
        batch.Put(blocks_, IndexedBlockKey(block.pool_id, block.first_seq, block.last_seq),
                  ToSlice(block.value)),
        "batching a block"));
    const PoolCounters counted{block.records, block.raw_bytes, block.value.size()};
    pools[block.pool_id] += counted;
    if (block.dictionary_id != 0) dictionaries[block.dictionary_id] += counted;
  }
  for (const auto& [pool_id, delta] : pools) {
    RETURN_IF_ERROR(FromRocks(
        batch.Merge(counters_, CounterKey(pool_id), EncodePoolCounters(delta)),
        "batching counters"));
  }
  for (const auto& [dictionary_id, delta] : dictionaries) {
    RETURN_IF_ERROR(FromRocks(batch.Merge(counters_, DictionaryCounterKey(dictionary_id),
                                          EncodePoolCounters(delta)),
                              "batching counters"));
  }
  std::vector<RecordRef> time_entries;
  RETURN_IF_ERROR(BatchAppendTimes(records, &batch, &time_entries));
  RETURN_IF_ERROR(Write(&batch, "writing records"));
  // After the commit (time_range_cache.h): a concurrent append may have committed a
  // later entry of the pool first, and a range read meanwhile may hold this one's seq.
  for (const RecordRef& entry : time_entries) time_ranges_.Invalidate(entry.pool_id, entry.seq);
  return absl::OkStatus();
}

absl::StatusOr<storage::AppendedRequest> Store::GetAppendedRequest(
    absl::string_view request_id, absl::string_view principal) const {
  std::string value;
  RETURN_IF_ERROR(FromRocks(
      db_->Get(rocksdb::ReadOptions(), requests_, RequestKey(principal, request_id),
               &value),
      "reading a request id"));
  storage::AppendedRequest entry;
  if (!entry.ParseFromString(value)) {
    return absl::DataLossError(
        absl::StrCat("stored entry of request id ", request_id, " does not parse"));
  }
  if (RequestExpired(entry, request_window_, Now())) {
    return absl::NotFoundError(absl::StrCat("request id ", request_id, " expired"));
  }
  return entry;
}

absl::Status Store::CompactRequestsForTest() {
  return FromRocks(db_->CompactRange(rocksdb::CompactRangeOptions(), requests_, nullptr,
                                     nullptr),
                   "compacting request ids");
}

absl::Status Store::RewriteRecords(absl::Span<const RecordRewrite> rewrites,
                                   const storage::RecompressState& progress) {
  rocksdb::WriteBatch batch;
  std::map<std::string, PoolCounters> deltas;
  for (const RecordRewrite& r : rewrites) {
    const std::string key = r.block && r.last_seq != 0
                                ? IndexedBlockKey(r.pool_id, r.seq, r.last_seq)
                                : RecordKey(r.pool_id, r.seq);
    RETURN_IF_ERROR(FromRocks(batch.Put(r.block ? blocks_ : records_, key, ToSlice(r.value)),
                              "batching a record"));
    deltas[CounterKey(r.pool_id)].stored_bytes += r.value.size() - r.old_stored_bytes;
    if (r.old_dictionary_id != 0) {
      deltas[DictionaryCounterKey(r.old_dictionary_id)] -=
          PoolCounters{r.records, r.raw_bytes, r.old_stored_bytes};
    }
    if (r.dictionary_id != 0) {
      deltas[DictionaryCounterKey(r.dictionary_id)] +=
          PoolCounters{r.records, r.raw_bytes, r.value.size()};
    }
  }
  for (const auto& [key, delta] : deltas) {
    RETURN_IF_ERROR(FromRocks(batch.Merge(counters_, key, EncodePoolCounters(delta)),
                              "batching counters"));
  }
  RETURN_IF_ERROR(FromRocks(batch.Put(catalog_, RecompressKey(progress.pool_id()),
                                      progress.SerializeAsString()),
                            "batching progress"));
  return Write(&batch, "rewriting records");
}

absl::Status Store::PutRecompressState(const storage::RecompressState& state) {
  rocksdb::WriteBatch batch;
  RETURN_IF_ERROR(FromRocks(
      batch.Put(catalog_, RecompressKey(state.pool_id()), state.SerializeAsString()),
      "batching progress"));
  return Write(&batch, "writing re-compression progress");
}

absl::StatusOr<std::vector<storage::RecompressState>> Store::LoadRecompressStates() const {
  std::vector<storage::RecompressState> states;
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), catalog_));
  const std::string prefix(1, kRecompressPrefix);
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    states.emplace_back();
    if (!states.back().ParseFromArray(it->value().data(),
                                      static_cast<int>(it->value().size()))) {
      return absl::DataLossError("a re-compression state does not parse");
    }
  }
  RETURN_IF_ERROR(FromRocks(it->status(), "reading re-compression states"));
  return states;
}

absl::Status Store::PutDictionary(const storage::DictionaryRecord& dictionary) {
  rocksdb::WriteBatch batch;
  RETURN_IF_ERROR(FromRocks(batch.Put(dictionaries_, DictionaryKey(dictionary.id()),
                                      dictionary.SerializeAsString()),
                            "batching a dictionary"));
  return Write(&batch, "writing a dictionary", /*sync=*/true);
}

absl::StatusOr<std::vector<storage::DictionaryRecord>> Store::LoadDictionaries() const {
  // No lease to step over damage up to: the first damage met fails the load.
  ASSIGN_OR_RETURN(ReadableDictionaries loaded, LoadReadableDictionaries(0));
  RETURN_IF_ERROR(loaded.damage);
  return std::move(loaded.dictionaries);
}

absl::StatusOr<ReadableDictionaries> Store::LoadReadableDictionaries(uint32_t below) const {
  ReadableDictionaries loaded;
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), dictionaries_));
  const auto parse = [&](absl::string_view value) {
    loaded.dictionaries.emplace_back();
    return loaded.dictionaries.back().ParseFromArray(value.data(),
                                                     static_cast<int>(value.size()));
  };
  uint32_t next = codec::kMinDictionaryId;  // The smallest id not read or stepped over.
  it->SeekToFirst();
  while (true) {
    for (; it->Valid(); it->Next()) {
      const absl::string_view value(it->value().data(), it->value().size());
      if (it->key().size() != 4 || !parse(value)) {
        return absl::DataLossError("a stored dictionary does not parse");
      }
      next = loaded.dictionaries.back().id() + 1;
    }
    const absl::Status status = FromRocks(it->status(), "reading dictionaries");
    if (status.ok()) return loaded;
    if (!absl::IsDataLoss(status)) return status;
    if (loaded.damage.ok()) loaded.damage = status;
    // Step over the damaged block id by id. A point read still finds a dictionary
    // whose newest version is elsewhere (the damage hit an older one).
    for (;; ++next) {
      if (next >= below) return loaded;
      it->Seek(DictionaryKey(next));
      if (it->status().ok()) break;  // Past the damage: read on from here.
      std::string value;
      const absl::Status read =
          FromRocks(db_->Get(rocksdb::ReadOptions(), dictionaries_, DictionaryKey(next), &value),
                    absl::StrCat("reading dictionary ", next));
      if (read.ok()) {
        if (!parse(value)) return absl::DataLossError("a stored dictionary does not parse");
      } else if (absl::IsDataLoss(read)) {
        loaded.unreadable.push_back(next);
      } else if (!absl::IsNotFound(read)) {
        return read;
      }
    }
  }
}

absl::Status Store::PutDictionaryIdLease(uint32_t next_id) {
  std::string value;
  PutFixed32BE(next_id, &value);
  rocksdb::WriteBatch batch;
  RETURN_IF_ERROR(FromRocks(
      batch.Put(catalog_, std::string(1, kDictionaryIdLeaseKey), value),
      "batching the dictionary id lease"));
  RETURN_IF_ERROR(Write(&batch, "writing the dictionary id lease", /*sync=*/true));
  return Flush().status();
}

absl::StatusOr<uint32_t> Store::DictionaryIdLease() const {
  std::string value;
  const rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), catalog_,
                                     std::string(1, kDictionaryIdLeaseKey), &value);
  if (s.IsNotFound()) return 0;
  RETURN_IF_ERROR(FromRocks(s, "reading the dictionary id lease"));
  if (value.size() != 4) return absl::DataLossError("the dictionary id lease does not parse");
  return GetFixed32BE(value.data());
}

absl::StatusOr<std::string> Store::DictionaryContent(uint32_t dictionary_id) const {
  std::string value;
  RETURN_IF_ERROR(FromRocks(db_->Get(rocksdb::ReadOptions(), dictionaries_,
                                     DictionaryKey(dictionary_id), &value),
                            absl::StrCat("reading dictionary ", dictionary_id)));
  storage::DictionaryRecord record;
  if (!record.ParseFromString(value)) {
    return absl::DataLossError(absl::StrCat("stored dictionary ", dictionary_id,
                                            " does not parse"));
  }
  if (record.retired()) {
    return absl::NotFoundError(absl::StrCat("dictionary ", dictionary_id, " was retired"));
  }
  return std::move(*record.mutable_content());
}

absl::StatusOr<bool> Store::DictionaryIdUsed(uint32_t dictionary_id) const {
  std::string value;
  const rocksdb::Status status =
      db_->Get(rocksdb::ReadOptions(), dictionaries_, DictionaryKey(dictionary_id), &value);
  if (status.IsNotFound()) return false;
  RETURN_IF_ERROR(FromRocks(status, absl::StrCat("reading dictionary ", dictionary_id)));
  return true;
}

absl::StatusOr<PoolCounters> Store::DictionaryReferences(uint32_t dictionary_id) const {
  return ReadCounters(DictionaryCounterKey(dictionary_id));
}

absl::StatusOr<bool> Store::AllRecordsUse(uint32_t pool_id, uint32_t dictionary_id) const {
  if (dictionary_id == 0) return false;  // Records without a dictionary are not counted.
  const std::unique_ptr<ReadSnapshot> snapshot = Snapshot();
  ASSIGN_OR_RETURN(const PoolCounters pool, ReadCounters(CounterKey(pool_id), snapshot.get()));
  ASSIGN_OR_RETURN(const PoolCounters named,
                   ReadCounters(DictionaryCounterKey(dictionary_id), snapshot.get()));
  return named.records == pool.records;
}

absl::Status Store::RetireDictionary(const storage::DictionaryRecord& dictionary) {
  storage::DictionaryRecord tombstone;
  tombstone.set_id(dictionary.id());
  tombstone.set_pool_id(dictionary.pool_id());
  tombstone.set_pool(dictionary.pool());
  tombstone.set_retired(true);
  rocksdb::WriteBatch batch;
  RETURN_IF_ERROR(FromRocks(batch.Put(dictionaries_, DictionaryKey(dictionary.id()),
                                      tombstone.SerializeAsString()),
                            "batching a tombstone"));
  RETURN_IF_ERROR(FromRocks(batch.Delete(counters_, DictionaryCounterKey(dictionary.id())),
                            "batching a delete"));
  return Write(&batch, "retiring a dictionary");
}

absl::Status Store::SealBlock(const BlockSeal& seal) {
  rocksdb::WriteBatch batch;
  std::map<std::string, PoolCounters> deltas;
  const std::string block_key = seal.indexed
                                    ? IndexedBlockKey(seal.pool_id, seal.first_seq, seal.last_seq)
                                    : RecordKey(seal.pool_id, seal.first_seq);
  RETURN_IF_ERROR(FromRocks(batch.Put(blocks_, block_key, ToSlice(seal.value)),
                            "batching a block"));
  PoolCounters& pool = deltas[CounterKey(seal.pool_id)];
  pool.stored_bytes += seal.value.size();
  PoolCounters block{0, 0, seal.value.size()};
  for (const BlockSeal::Entry& entry : seal.entries) {
    const std::string key = RecordKey(seal.pool_id, entry.seq);
    RETURN_IF_ERROR(FromRocks(seal.indexed ? batch.Delete(records_, key)
                                           : batch.Put(records_, key, ToSlice(entry.value)),
                              "batching a block entry"));
    pool.stored_bytes += entry.value.size() - entry.old_stored_bytes;
    if (entry.old_dictionary_id != 0) {
      deltas[DictionaryCounterKey(entry.old_dictionary_id)] -=
          PoolCounters{1, entry.raw_bytes, entry.old_stored_bytes};
    }
    block += PoolCounters{1, entry.raw_bytes, 0};
  }
  if (seal.dictionary_id != 0) deltas[DictionaryCounterKey(seal.dictionary_id)] += block;
  for (const auto& [key, delta] : deltas) {
    RETURN_IF_ERROR(FromRocks(batch.Merge(counters_, key, EncodePoolCounters(delta)),
                              "batching counters"));
  }
  return Write(&batch, "sealing a block");
}

std::vector<absl::StatusOr<std::string>> Store::MultiGetBlocks(
    absl::Span<const RecordRef> keys) const {
  return MultiGetFrom(blocks_, keys, "reading a block");
}

ReadSnapshot::~ReadSnapshot() { db_->ReleaseSnapshot(snapshot_); }

std::unique_ptr<ReadSnapshot> Store::Snapshot() const {
  return std::unique_ptr<ReadSnapshot>(new ReadSnapshot(db_.get(), db_->GetSnapshot()));
}

absl::StatusOr<std::string> Store::GetRecord(RecordRef ref) const {
  // Pinned: the value is copied once, out of the block cache, not twice.
  rocksdb::PinnableSlice value;
  RETURN_IF_ERROR(FromRocks(db_->Get(rocksdb::ReadOptions(), records_,
                                     RecordKey(ref.pool_id, ref.seq), &value),
                            "reading a record"));
  return value.ToString();
}

std::vector<absl::StatusOr<std::string>> Store::MultiGetRecords(
    absl::Span<const RecordRef> refs) const {
  return MultiGetFrom(records_, refs, "reading a record");
}

std::vector<absl::StatusOr<std::string>> Store::MultiGetFrom(
    rocksdb::ColumnFamilyHandle* family, absl::Span<const RecordRef> refs,
    absl::string_view what) const {
  std::vector<std::string> keys;
  keys.reserve(refs.size());
  for (const RecordRef& ref : refs) keys.push_back(RecordKey(ref.pool_id, ref.seq));
  std::vector<rocksdb::Slice> slices(keys.begin(), keys.end());
  std::vector<rocksdb::PinnableSlice> values(refs.size());
  std::vector<rocksdb::Status> statuses(refs.size());
  db_->MultiGet(rocksdb::ReadOptions(), family, slices.size(), slices.data(),
                values.data(), statuses.data());
  std::vector<absl::StatusOr<std::string>> results;
  results.reserve(refs.size());
  // Misses are common (a block-mode pool's sealed records): one NOT_FOUND per call,
  // shared, instead of a message formatted and allocated for each.
  absl::Status not_found;
  for (size_t i = 0; i < refs.size(); ++i) {
    if (statuses[i].ok()) {
      results.emplace_back(values[i].ToString());
    } else if (statuses[i].IsNotFound()) {
      if (not_found.ok()) not_found = FromRocks(statuses[i], what);
      results.emplace_back(not_found);
    } else {
      results.emplace_back(FromRocks(statuses[i], what));
    }
  }
  return results;
}

absl::StatusOr<std::vector<ScannedRecord>> Store::LatestRecords(uint32_t pool_id,
                                                                uint64_t before_seq,
                                                                size_t max_records,
                                                                uint64_t after_seq) const {
  std::vector<ScannedRecord> out;
  if (before_seq <= after_seq + 1) return out;
  const std::string lower = RecordKey(pool_id, after_seq + 1);
  const rocksdb::Slice lower_slice(lower);
  rocksdb::ReadOptions read;
  read.iterate_lower_bound = &lower_slice;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read, records_));
  for (it->SeekForPrev(RecordKey(pool_id, before_seq - 1));
       it->Valid() && out.size() < max_records; it->Prev()) {
    ASSIGN_OR_RETURN(const uint64_t seq, SeqInPool(*it, pool_id));
    if (seq == 0) break;  // Past the pool's records.
    out.push_back({seq, it->value().ToString()});
  }
  RETURN_IF_ERROR(FromRocks(it->status(), "reading the newest records"));
  return out;
}

absl::StatusOr<std::vector<ScannedRecord>> Store::ScanRecords(uint32_t pool_id,
                                                              uint64_t from_seq,
                                                              size_t max_records,
                                                              size_t max_bytes,
                                                              uint64_t end_seq,
                                                              const ReadSnapshot* snapshot) const {
  std::vector<ScannedRecord> out;
  if (from_seq >= end_seq) return out;
  const std::string upper = end_seq == UINT64_MAX ? std::string() : RecordKey(pool_id, end_seq);
  const rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions read;
  if (!upper.empty()) read.iterate_upper_bound = &upper_slice;
  if (snapshot != nullptr) read.snapshot = snapshot->snapshot_;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read, records_));
  size_t bytes = 0;
  for (it->Seek(RecordKey(pool_id, from_seq));
       it->Valid() && out.size() < max_records && bytes < max_bytes; it->Next()) {
    ASSIGN_OR_RETURN(const uint64_t seq, SeqInPool(*it, pool_id));
    if (seq == 0) break;  // Past the pool's records.
    out.push_back({seq, it->value().ToString()});
    bytes += out.back().value.size();
  }
  RETURN_IF_ERROR(FromRocks(it->status(), "scanning records"));
  return out;
}


namespace {

// Why `dir` cannot receive a checkpoint, or OK; removes it if it is an empty directory
// (RocksDB creates the directory itself).
absl::Status PrepareCheckpointDir(const std::filesystem::path& dir) {
  if (dir.empty() || !dir.is_absolute()) {
    return absl::InvalidArgumentError(
        absl::StrCat("backup directory must be an absolute path, got \"",
                     dir.string(), "\""));
  }
  std::error_code error;
  const std::filesystem::path parent = dir.lexically_normal().parent_path();
  if (!std::filesystem::is_directory(parent, error)) {
    return absl::FailedPreconditionError(
        absl::StrCat("parent directory ", parent.string(), " does not exist"));
  }
  if (!std::filesystem::exists(dir, error)) return absl::OkStatus();
  if (!std::filesystem::is_directory(dir, error) ||
      !std::filesystem::is_empty(dir, error)) {
    return absl::AlreadyExistsError(
        absl::StrCat(dir.string(), " exists and is not an empty directory"));
  }
  if (!std::filesystem::remove(dir, error)) {
    return absl::UnavailableError(
        absl::StrCat("cannot replace empty directory ", dir.string(), ": ",
                     error.message()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<uint64_t> Store::Checkpoint(const std::string& dir) {
  const std::filesystem::path path = std::filesystem::path(dir).lexically_normal();
  RETURN_IF_ERROR(PrepareCheckpointDir(path));
  rocksdb::Checkpoint* raw = nullptr;
  RETURN_IF_ERROR(FromRocks(rocksdb::Checkpoint::Create(db_.get(), &raw),
                            "preparing a checkpoint"));
  std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
  uint64_t sequence = 0;
  // log_size_for_flush 0: memtables are flushed first, so the copy needs no WAL replay.
  RETURN_IF_ERROR(FromRocks(checkpoint->CreateCheckpoint(path.string(), 0, &sequence),
                            absl::StrCat("writing a checkpoint to ", path.string())));
  return sequence;
}

absl::StatusOr<uint64_t> Store::Flush() {
  rocksdb::FlushOptions options;
  options.wait = true;
  options.allow_write_stall = true;  // Wait as long as it takes, as a shutdown does.
  RETURN_IF_ERROR(FromRocks(db_->Flush(options, handles_), "flushing memtables"));
  uint64_t bytes = 0;
  for (const auto& [family, size] : IntProperty("rocksdb.live-sst-files-size")) bytes += size;
  return bytes;
}

std::vector<std::pair<std::string, uint64_t>> Store::IntProperty(
    absl::string_view name) const {
  std::vector<std::pair<std::string, uint64_t>> values;
  const std::string property(name);
  for (rocksdb::ColumnFamilyHandle* family : handles_) {
    uint64_t value = 0;
    if (db_->GetIntProperty(family, property, &value)) {
      values.emplace_back(family->GetName(), value);
    }
  }
  return values;
}

}  // namespace dictlog::store
