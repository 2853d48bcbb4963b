// Store: dictlog's durable state in one RocksDB database, and the only code that
// includes RocksDB headers. Column families: records (stored record values), catalog
// (pools, categories, re-compression progress), counters (per-pool and per-dictionary
// counts, merged), dictionaries (every dictionary version), blocks (block mode), requests
// (client request ids of recent appends, for retries), times (append times, one entry
// per pool and append call). Layout in keys.h and
// docs/storage-format.md. RocksDB errors become absl::Status in one function.
//
// Durability: a write returns after it is in RocksDB's write-ahead log; with
// Options::sync_writes the log is fsynced first (concurrent writers share one fsync,
// RocksDB's group commit). A write that fails (a full disk: RESOURCE_EXHAUSTED; an I/O
// error: UNAVAILABLE) leaves nothing of itself; RocksDB then stops taking writes, and
// each later write first tries DB::Resume() (once the disk has room for the memtables
// plus 1 MiB), so writes
// succeed again once the cause is gone. Reads keep working meanwhile.
//
// Thread safety: all methods may be called concurrently.
#ifndef DICTLOG_SERVER_STORE_STORE_H_
#define DICTLOG_SERVER_STORE_STORE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "server/store/background_errors.h"
#include "server/store/catalog.pb.h"
#include "server/store/pool_counters.h"
#include "server/store/synced_mark.h"
#include "server/store/time_range_cache.h"
#include "server/store/wal_drops.h"

namespace rocksdb {
class Cache;
class CompactionFilter;
class DB;
class Env;
class FileSystem;
class ColumnFamilyHandle;
class Iterator;
class Snapshot;
class WriteBatch;
}  // namespace rocksdb

namespace dictlog::store {

// A pool as loaded at start-up.
struct StoredPool {
  storage::PoolRecord record;
  // (category_index, category), in index order.
  std::vector<std::pair<uint32_t, std::string>> categories;
  PoolCounters counters;
  uint64_t last_seq = 0;  // 0 if the pool has no records, or if they cannot be read.
  // The pool's seq lease (PutSeqCeilings): no seq at or above it was handed out; 0 if
  // none was written (a store from before leases, or a pool that took no append).
  uint64_t seq_ceiling = 0;
  // Seq ranges [first, last] whose records a salvage lost to damaged table blocks
  // (Store::PutLostSeqs): a read of one finding nothing is DATA_LOSS, not NOT_FOUND.
  std::vector<std::pair<uint64_t, uint64_t>> lost_seqs;
  // Why the pool's newest records could not be found (a damaged table block: DATA_LOSS),
  // or OK. Set only for a pool with a lease, which covers every seq it handed out, so
  // it goes on from its lease; without one, LoadPools fails instead.
  absl::Status newest_unreadable;
};

// What Store::LoadReadableDictionaries found: the dictionaries it could read and, if
// it met damage, the first error (DATA_LOSS) and the ids a point read found damaged
// (those whose newest version is in a damaged block; empty if the damage held only
// older versions).
struct ReadableDictionaries {
  std::vector<storage::DictionaryRecord> dictionaries;
  absl::Status damage;
  std::vector<uint32_t> unreadable;
};

// A pool's seq lease: seqs below `next_seq` may have been handed out, none above.
struct SeqCeiling {
  uint32_t pool_id = 0;
  uint64_t next_seq = 0;
};

// One record to write: its key parts, stored value, payload size, the dictionary its
// frame names (0: none) and its append time in ms since the epoch (0: none; the
// records of one pool in one write share the time of that pool's smallest seq).
struct RecordWrite {
  uint32_t pool_id = 0;
  uint64_t seq = 0;
  uint64_t raw_bytes = 0;
  std::string value;
  uint32_t dictionary_id = 0;
  int64_t append_unix_ms = 0;
  // Block mode: the record is written inside one of the call's BlockWrites (ADR 0021):
  // no value of its own, counted with its block; its seq and time still count.
  bool in_block = false;
};

// Block mode: an indexed block (ADR 0016) an append writes straight from its records
// (ADR 0021), keyed (pool_id, first_seq, last_seq); its `records` records of
// `raw_bytes` payload are counted with it.
struct BlockWrite {
  uint32_t pool_id = 0;
  uint64_t first_seq = 0;
  uint64_t last_seq = 0;
  uint64_t records = 0;
  uint64_t raw_bytes = 0;
  std::string value;
  uint32_t dictionary_id = 0;
};

// A stored record (or, with `block`, a stored block of `records` records) re-encoded:
// its new value and dictionary replace the old ones.
struct RecordRewrite {
  uint32_t pool_id = 0;
  uint64_t seq = 0;  // The block's key when `block`.
  uint64_t raw_bytes = 0;
  uint64_t old_stored_bytes = 0;
  uint32_t old_dictionary_id = 0;
  std::string value;
  uint32_t dictionary_id = 0;
  bool block = false;
  uint64_t records = 1;
  // An indexed block's last seq (its key is IndexedBlockKey(pool_id, seq, last_seq));
  // 0 for a block found through entry values.
  uint64_t last_seq = 0;
};

// The request id of an append and what to remember about it (retries, docs/adr/0008).
// The id is scoped by the principal that sent it (empty: none, no tokens file).
struct RequestWrite {
  std::string request_id;
  storage::AppendedRequest entry;
  std::string principal;
};

// Cluster mode (docs/cluster.md): a Kafka partition and the offset of the message
// applied last; written in the same batch as that message's records.
struct LogPosition {
  uint32_t partition = 0;
  int64_t offset = -1;
};

struct RecordRef {
  uint32_t pool_id = 0;
  uint64_t seq = 0;
};

// Block mode: records packed into one block. The block's value goes to the blocks
// family under (pool_id, seq of its first record); each record's value is replaced by
// its entry value. An indexed block (`indexed`, ADR 0016) is keyed (pool_id, first seq,
// last seq) and its records' values are deleted instead.
struct BlockSeal {
  struct Entry {
    uint64_t seq = 0;
    uint64_t raw_bytes = 0;
    uint64_t old_stored_bytes = 0;
    uint32_t old_dictionary_id = 0;
    std::string value;  // The record's entry value; empty in an indexed block.
  };
  uint32_t pool_id = 0;
  uint64_t first_seq = 0;
  bool indexed = false;
  uint64_t last_seq = 0;  // Indexed blocks only.
  std::string value;  // The block's stored value.
  uint32_t dictionary_id = 0;
  std::vector<Entry> entries;
};

// Retention: the records of pool `pool_id` with seq < end_seq go, with their blocks and
// append times; the counters lose exactly what goes; the catalog entry (with its new
// low-water mark) is written with them.
struct Expiry {
  uint32_t pool_id = 0;
  uint64_t end_seq = 0;
  PoolCounters pool_counters;                            // What goes from the pool.
  std::map<uint32_t, PoolCounters> dictionary_counters;  // And from each dictionary.
  storage::PoolRecord record;
};

// An indexed block (block mode, ADR 0016) as stored: its key's seqs and its value.
struct IndexedBlock {
  uint64_t first_seq = 0;
  uint64_t last_seq = 0;
  std::string value;
};

// Where FindIndexedBlocks found each seq: the distinct blocks, and per seq the index of
// the one whose range holds it, or -1 (none holds it, or its search failed).
struct IndexedBlockSearch {
  std::vector<IndexedBlock> blocks;
  std::vector<int64_t> block_of;
  // Empty if every search succeeded; else one per seq: why its search failed (a
  // damaged table file: DATA_LOSS), OK where it did not. A failed search is never
  // taken for an absent block, which would make a stored record NOT_FOUND.
  std::vector<absl::Status> failed;

  // The seq at `i` found no block, and its search did not fail.
  bool Absent(size_t i) const { return block_of[i] < 0 && (failed.empty() || failed[i].ok()); }
};

// A stored record found by a scan.
struct ScannedRecord {
  uint64_t seq = 0;
  std::string value;
};

// How RocksDB compresses the table blocks of the records column family (keys, entry
// headers and the records' own zstd frames, packed 4 KiB at a time). The block cache
// holds blocks uncompressed, so this costs CPU only on cache misses.
enum class TableCompression { kNone, kLz4, kZstd };

// "none", "lz4" or "zstd"; INVALID_ARGUMENT otherwise.
absl::StatusOr<TableCompression> ParseTableCompression(absl::string_view name);

// Bounds of Store::Options::records_block_bytes.
inline constexpr size_t kLeastRecordsBlockBytes = 256;
inline constexpr size_t kMostRecordsBlockBytes = 65536;

// A point-in-time view of a Store for reads that must agree with each other: the
// blocks and records families of a block-mode pool, which sealing changes together
// (a scan that read them at two moments could miss the records a seal moved between
// its reads). Made by Store::Snapshot; released on destruction, which must come before
// the Store's. Thread safety: may be read through from several threads at once.
class ReadSnapshot {
 public:
  ~ReadSnapshot();
  ReadSnapshot(const ReadSnapshot&) = delete;
  ReadSnapshot& operator=(const ReadSnapshot&) = delete;

 private:
  friend class Store;
  ReadSnapshot(rocksdb::DB* db, const rocksdb::Snapshot* snapshot)
      : db_(db), snapshot_(snapshot) {}
  rocksdb::DB* const db_;
  const rocksdb::Snapshot* const snapshot_;
};

// What Store::SalvageInto copied of one column family, and the key ranges it could not
// read (a damaged table block: RocksDB's Corruption).
struct SalvagedFamily {
  std::string name;
  uint64_t entries = 0;  // Copied.
  uint64_t bytes = 0;    // Keys and values copied.
  // Every key k with after < k < before was lost; after is empty when the range starts
  // at the family's first key, before is empty when it runs to the end.
  struct LostRange {
    std::string after;
    std::string before;
    std::string why;  // The first error met in it.
  };
  std::vector<LostRange> lost;
};

struct SalvageReport {
  std::vector<SalvagedFamily> families;  // In the store's family order.
  uint64_t probe_seeks = 0;  // Seeks spent finding where each lost range ends.
};

class Store {
 public:
  struct Options {
    // Directory of the database; created if missing.
    std::string path;
    // Fsync the write-ahead log before acknowledging a write. Default off.
    bool sync_writes = false;
    // How long an append's request id is remembered (AppendedRequest). Older entries
    // read as absent and compactions drop them. Default 1 hour.
    absl::Duration request_window = absl::Hours(1);
    // Memory for RocksDB's cache of table blocks (records, blocks, indexes, filters),
    // shared by every column family. Reads of blocks not in it go to the file system.
    // Default 256 MiB.
    size_t block_cache_bytes = size_t{256} << 20;
    // Compression of the records column family's table blocks. Default LZ4: the
    // records' frames are compressed already, but the keys, the headers and what
    // repeats across neighbouring frames are not (ADR 0011).
    TableCompression records_compression = TableCompression::kLz4;
    // Size of the records family's table blocks (before compression), in bytes,
    // 256..65536. A read that misses the block cache reads, checks, decompresses and
    // caches one such block for one record: smaller blocks make that cheaper, at a
    // larger index (held outside the cache) and more bytes on disk (ADR 0033). Files
    // written before keep their size. Default 4 KiB (RocksDB's).
    size_t records_block_bytes = 4096;
    // Size at which compactions cut the records and blocks families' table files. Keys
    // lead with the pool id, so a compaction of one pool's key range (CompactPool:
    // after a re-compression, a retention pass, a pool delete) rewrites the files that
    // hold that pool's keys, about this much beyond them, not every pool's. Default
    // 8 MiB (RocksDB's own is 64 MiB).
    size_t table_file_bytes = size_t{8} << 20;
    // The write-ahead log files kept, in bytes, before RocksDB flushes the column
    // families holding the oldest one. A WAL stays until every family with writes in it
    // has flushed them, and some (the catalog, dictionaries) take writes rarely: without
    // a bound of its own RocksDB allows four times all families' write buffers (4 GiB
    // here), all of it replayed after a crash. Default 128 MiB (two of the records
    // family's write buffers).
    uint64_t max_wal_bytes = uint64_t{128} << 20;
    // Table files RocksDB keeps open at most (its max_open_files; the least recently
    // used closes, to be opened again when read); -1: every one, which fails writes
    // once the process's open-files limit is reached. dictlogd gives it half its limit
    // (server/daemon/open_files.h). Default -1.
    int max_open_files = -1;
    // Open for reading only (RocksDB's OpenForReadOnly: the write-ahead logs replayed in
    // memory, no file of the store written but RocksDB's LOG, no compaction); every
    // write fails with FAILED_PRECONDITION. The store must exist. For SalvageInto.
    bool read_only = false;
    // Tests only: the file system RocksDB reads and writes through (fault injection,
    // store/fault_injection_fs.h). Null: the real one.
    std::shared_ptr<rocksdb::FileSystem> file_system;
    // Tests only: the clock request ids and appends are stamped with (Now) and request
    // ids expire against, in reads and in compactions; called from any thread. Null:
    // absl::Now.
    std::function<absl::Time()> clock_for_test;
    // Tests only: called by each synced write after it read the store's last sequence
    // and before it writes (where another write can take sequences first). Null: none.
    std::function<void()> before_synced_write_for_test;
  };

  static absl::StatusOr<std::unique_ptr<Store>> Open(const Options& options);

  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  ~Store();

  // Every pool with its categories, counters and last sequence number.
  absl::StatusOr<std::vector<StoredPool>> LoadPools() const;

  // Creates or replaces a pool's catalog entry. Synced (like every write that gives
  // out an id: pools, dictionaries, tombstones, seq leases), whatever
  // Options::sync_writes says: a power loss must not take an id back once callers
  // were told it, or it could be given again to something else.
  absl::Status PutPool(const storage::PoolRecord& pool);
  // Records that `category` has index `index` in pool `pool_id`.
  absl::Status PutCategory(uint32_t pool_id, uint32_t index, absl::string_view category);

  // Writes all records and their pools' and dictionaries' counter deltas in one
  // atomic batch, with one append-time entry per pool whose records carry a time;
  // with `request`, also the request id's entry (requests family); with `applied`
  // (cluster mode), also that partition's applied offset; with `blocks`, those blocks
  // (their records are among `records`, marked in_block).
  absl::Status WriteRecords(absl::Span<const RecordWrite> records,
                            const RequestWrite* request = nullptr,
                            const LogPosition* applied = nullptr,
                            absl::Span<const BlockWrite> blocks = {});
  // Writes the pools' seq leases in one synced batch. Single-node appends take seqs
  // only below their pool's lease (pool::Pool::CoverSeqs), and a reopened pool's seqs
  // start at its lease or after: ids acknowledged without sync_writes and lost in a
  // power loss are never handed out again for other records.
  // With `seq_floor`, the same batch also writes the store's seq floor (SeqFloor).
  absl::Status PutSeqCeilings(absl::Span<const SeqCeiling> ceilings,
                              std::optional<uint64_t> seq_floor = std::nullopt);
  // Records seqs [first, last] of each pool as lost (StoredPool::lost_seqs), one batch;
  // a salvage writes them in the new store. Deleted with the pool.
  struct LostSeqs {
    uint32_t pool_id = 0;
    uint64_t first = 0;
    uint64_t last = 0;
  };
  absl::Status PutLostSeqs(absl::Span<const LostSeqs> lost);
  // Replaces pool `pool_id`'s counters (not merged: a salvage's recount of what the
  // pool holds, written before any server opens the store). Synced.
  absl::Status PutPoolCounters(uint32_t pool_id, const PoolCounters& counters);
  // The seq floor (single-node mode): no pool created from now on starts below it
  // (pool::PoolRegistry). Raised when ids a lost pool gave out may come back: after
  // the write-ahead log's replay dropped writes, and in a backup's copy. 0 if none.
  absl::StatusOr<uint64_t> SeqFloor() const;
  // Cluster mode: records `applied` alone (a log message that holds no records here).
  absl::Status PutLogPosition(const LogPosition& applied);
  // Cluster mode: every partition's applied offset (store_log_positions.cc).
  absl::StatusOr<std::vector<LogPosition>> LoadLogPositions() const;
  // The append that carried `request_id` from `principal` (keys.h RequestKey), if
  // within the request window; NOT_FOUND if there is none (or it expired); DATA_LOSS
  // if it does not parse.
  absl::StatusOr<storage::AppendedRequest> GetAppendedRequest(
      absl::string_view request_id, absl::string_view principal = {}) const;
  // Compacts the requests family now, dropping expired entries (tests).
  absl::Status CompactRequestsForTest();
  // RocksDB's last sequence number (tests).
  uint64_t LatestSequenceForTest() const;
  // Replaces stored records, moves counts between dictionaries and saves the job's
  // progress, in one atomic batch.
  absl::Status RewriteRecords(absl::Span<const RecordRewrite> rewrites,
                              const storage::RecompressState& progress);
  absl::Status PutRecompressState(const storage::RecompressState& state);
  absl::StatusOr<std::vector<storage::RecompressState>> LoadRecompressStates() const;

  // Dictionaries: every stored version, and the counts of records naming one.
  // PutDictionary is synced (its id is given out; see PutPool).
  absl::Status PutDictionary(const storage::DictionaryRecord& dictionary);
  absl::StatusOr<std::vector<storage::DictionaryRecord>> LoadDictionaries() const;
  // The dictionaries that can be read, for a store with a dictionary id lease
  // (`below`): a damaged table block of the dictionaries family is stepped over id by
  // id (at most up to `below`), each id read alone, the unreadable ones listed.
  absl::StatusOr<ReadableDictionaries> LoadReadableDictionaries(uint32_t below) const;
  // The dictionary id lease (single-node mode): no dictionary id at or above it was
  // handed out, so a store whose dictionaries cannot all be read still never gives
  // an id twice. Synced, then flushed with every family (Flush): it never lives in
  // the write-ahead log alone, where damage that drops the log's writes from some
  // record on would take it back (ADR 0044). 0 if none was written (a store from
  // before leases).
  absl::Status PutDictionaryIdLease(uint32_t next_id);
  absl::StatusOr<uint32_t> DictionaryIdLease() const;
  absl::StatusOr<PoolCounters> DictionaryReferences(uint32_t dictionary_id) const;
  // Whether every record of the pool names `dictionary_id` (not 0): the pool's stored
  // counters and the dictionary's references, read at one snapshot (every write moves
  // both in one batch), count the same records. A pool without records: true.
  absl::StatusOr<bool> AllRecordsUse(uint32_t pool_id, uint32_t dictionary_id) const;
  // The stored bytes of one dictionary. NOT_FOUND if absent or retired.
  absl::StatusOr<std::string> DictionaryContent(uint32_t dictionary_id) const;
  // Whether dictionary id `dictionary_id` was ever given: stored, or retired.
  absl::StatusOr<bool> DictionaryIdUsed(uint32_t dictionary_id) const;
  // Replaces the dictionary by a tombstone (`retired`, no content, so its id is never
  // reused) and deletes its counters.
  absl::Status RetireDictionary(const storage::DictionaryRecord& dictionary);

  // Writes a block and its records' entry values, and moves their counts from their
  // old dictionaries to the block's, in one atomic batch.
  absl::Status SealBlock(const BlockSeal& seal);
  // One result per block key (pool_id, first seq), in order; NOT_FOUND if absent.
  std::vector<absl::StatusOr<std::string>> MultiGetBlocks(
      absl::Span<const RecordRef> keys) const;
  // For each of `seqs`: the indexed block of pool `pool_id` with the greatest first seq
  // at most it (among those keyed at or after `from_seq`), if its range reaches it.
  // Indexed blocks never overlap (BlockTail), so no other block can hold the seq.
  absl::StatusOr<IndexedBlockSearch> FindIndexedBlocks(uint32_t pool_id, uint64_t from_seq,
                                                       absl::Span<const uint64_t> seqs) const;
  // Up to `max_blocks` indexed blocks of the pool (keyed at or after `from_seq`) whose
  // last seq is at least `seq`, in seq order; read from `snapshot` if given.
  absl::StatusOr<std::vector<IndexedBlock>> ScanIndexedBlocks(
      uint32_t pool_id, uint64_t from_seq, uint64_t seq, size_t max_blocks,
      const ReadSnapshot* snapshot = nullptr) const;
  // Up to `max_blocks` of the pool's newest indexed blocks (keyed at or after
  // `from_seq`) whose first seq is before `before_seq`, newest first.
  absl::StatusOr<std::vector<IndexedBlock>> LatestIndexedBlocks(uint32_t pool_id,
                                                                uint64_t from_seq,
                                                                uint64_t before_seq,
                                                                size_t max_blocks) const;

  // A consistent copy of the whole database (every column family at one point) in
  // `dir`: an absolute path whose parent exists and which is absent or an empty
  // directory. Table files are hard-linked when `dir` is on the same file system.
  // INVALID_ARGUMENT (relative or empty path), ALREADY_EXISTS (non-empty directory or
  // a file), FAILED_PRECONDITION (no parent directory). Returns a sequence number the
  // copy holds every write up to.
  absl::StatusOr<uint64_t> Checkpoint(const std::string& dir);

  // Writes every column family's memtables to table files and waits for them; returns
  // the size of the live table files (all families) after it.
  absl::StatusOr<uint64_t> Flush();

  // A RocksDB integer property (e.g. "rocksdb.total-sst-files-size") of each column
  // family, by family name; DB-wide properties repeat the same value. Properties
  // RocksDB does not know are left out.
  std::vector<std::pair<std::string, uint64_t>> IntProperty(absl::string_view name) const;
  // The time request ids are stamped with (Options::clock_for_test, or absl::Now).
  absl::Time Now() const { return clock_ ? clock_() : absl::Now(); }

  // Deletes the expired records, blocks and time entries in one atomic batch, with the
  // counter decrements and the catalog entry (store_expiry.cc); the time entry that
  // covers end_seq moves to end_seq.
  absl::Status ExpireRecords(const Expiry& expiry);
  // Compacts the pool's key range below end_seq in the records, blocks and times
  // families, so what ExpireRecords deleted leaves the disk.
  absl::Status CompactExpired(uint32_t pool_id, uint64_t end_seq);

  // Pool deletion (store_pool_delete.cc), in this order: the tombstone (pending) is
  // written first; then DeletePoolData removes everything keyed by the pool's id in
  // one atomic batch (records, both block layouts, times, counters, categories,
  // re-compression progress; its dictionaries become retired tombstones); then
  // EndPoolDelete removes the pool's catalog entry (if `remove_entry`: the name may
  // belong to a new pool already) and marks the tombstone done. Each step may be
  // repeated (a restart finishes a pending delete). CompactPool then compacts the
  // pool's ranges so the space comes back.
  absl::Status BeginPoolDelete(const storage::DeletedPool& tombstone);
  absl::StatusOr<std::vector<storage::DeletedPool>> LoadDeletedPools() const;
  absl::Status DeletePoolData(uint32_t pool_id);
  absl::Status EndPoolDelete(const storage::DeletedPool& tombstone, bool remove_entry);
  // `rewrite_bottom`: also rewrite the bottommost files of the range (drops what range
  // deletions left there); false: only compact newer data down into them, which drops
  // the values it replaces (after a re-compression) at a fraction of the cost.
  absl::Status CompactPool(uint32_t pool_id, bool rewrite_bottom = true);

  // Cluster mode: a partition this node no longer holds (docs/cluster.md "Dropping
  // partitions no longer held"): in one atomic batch, range deletions of everything
  // keyed by each of `pool_ids` (the partition's pools) in records, blocks and times,
  // their pool counters and the reference counts of their dictionaries, and the
  // partition's applied offset (a later build starts from offset 0). The pools'
  // catalog entries, categories and dictionaries stay. CompactPool gives the space back.
  absl::Status DropPartitionData(uint32_t partition, absl::Span<const uint32_t> pool_ids);
  // Tests only: pools the append-time cache keeps a version of (TimeRangeCache).
  size_t TimeCacheVersionedPoolsForTest() const { return time_ranges_.versioned_pools(); }

  // The database as it is now, for reads that must agree (ReadSnapshot).
  std::unique_ptr<ReadSnapshot> Snapshot() const;

  // NOT_FOUND if there is no such record.
  absl::StatusOr<std::string> GetRecord(RecordRef ref) const;
  // One result per ref, in order; NOT_FOUND for absent records.
  std::vector<absl::StatusOr<std::string>> MultiGetRecords(
      absl::Span<const RecordRef> refs) const;
  // Up to `max_records` records of pool `pool_id` with seq >= from_seq, in seq order;
  // stops after the record that brings their stored values to `max_bytes` or more
  // (default: no byte limit), so at least one is returned if any exists.
  // Only records with seq < end_seq: the iterator stops there, so the deletions
  // sealing leaves behind (block mode) past it are not walked. Read from `snapshot`
  // if given.
  absl::StatusOr<std::vector<ScannedRecord>> ScanRecords(
      uint32_t pool_id, uint64_t from_seq, size_t max_records,
      size_t max_bytes = SIZE_MAX, uint64_t end_seq = UINT64_MAX,
      const ReadSnapshot* snapshot = nullptr) const;
  // The append time (ms since the epoch) of each ref, in order: that of the pool's
  // time entry at or before its seq; nullopt where the pool has none (records written
  // before append times were stored, or without one). DATA_LOSS for a malformed entry.
  absl::StatusOr<std::vector<std::optional<int64_t>>> AppendTimes(
      absl::Span<const RecordRef> refs) const;
  // The first seq of the pool whose append time (that of the entry at or before it)
  // is at least `unix_ms`: the key of the first such entry, found with O(log seqs)
  // seeks, taking times as non-decreasing in seq (concurrent calls may store them
  // slightly out of order: callers check each record's time). nullopt if no entry of
  // the pool has such a time. DATA_LOSS for a malformed entry.
  absl::StatusOr<std::optional<uint64_t>> FirstSeqAtOrAfterTime(uint32_t pool_id,
                                                                int64_t unix_ms) const;
  // Up to `max_records` of the pool's newest records with after_seq < seq < before_seq,
  // newest first (the iterator does not go below after_seq).
  absl::StatusOr<std::vector<ScannedRecord>> LatestRecords(uint32_t pool_id,
                                                           uint64_t before_seq,
                                                           size_t max_records,
                                                           uint64_t after_seq = 0) const;
  // The last seq of the pool's newest indexed block; 0 if it has none.
  absl::StatusOr<uint64_t> LastIndexedSeq(uint32_t pool_id) const;

  // What recovering the write-ahead log dropped when the store opened (wal_drop_log.h):
  // a damaged record in a WAL ends its replay there (RocksDB's point-in-time
  // recovery), so the writes logged after it are lost. Nothing for a clean log or a
  // torn tail.
  const WalDrops& wal_dropped_at_open() const { return wal_dropped_at_open_; }
  // Salvage (docs/operations.md, "Salvaging a damaged store"): copies every entry of
  // every column family this store can read into `to` (a new, empty store), skipping
  // the key ranges held by damaged table blocks. Where a read fails with Corruption,
  // the copy goes on from the first key a seek can read past it, found by galloping
  // and bisecting over the key space: nothing readable after the damage is left
  // behind, and no key inside a damaged block's range is copied (not even an older
  // version of it from another file, which the damaged one may have replaced or
  // deleted). Values are copied as read: merged counters as their totals. `to` is
  // flushed at the end. `progress` is called every `progress_every` entries with the
  // report so far. Any error but Corruption stops it. Call on a store opened
  // read_only.
  absl::StatusOr<SalvageReport> SalvageInto(
      Store& to, uint64_t progress_every,
      absl::FunctionRef<void(const SalvageReport&)> progress) const;
  // Why RocksDB stopped the store's writes (BackgroundErrors): a failed background
  // flush, compaction or log write, e.g. DATA_LOSS "writes stopped after a failed
  // compaction: Corruption: ... <file>.sst" when a compaction met a damaged table
  // block; OK while writes are accepted. A stop after a full disk ends at the first
  // write once there is room again (ResumeIfStopped); a damaged table file stops
  // writes until the store is restored (docs/operations.md, "Writes stopped"). Every
  // write fails with this status meanwhile, and reads go on.
  absl::Status WritesStopped() const;

  // Options::block_cache_bytes: the memory of the block cache and of what
  // ReserveBlockCache gives room to.
  size_t block_cache_budget() const { return block_cache_budget_; }
  // Makes room in that budget for `bytes` held outside the block cache (the decoded
  // block cache, ADR 0038): the block cache's capacity becomes the budget less
  // `bytes` (less half of it at most), evicting as it must. Each call replaces the
  // last one's figure. Thread-safe.
  // (IntProperty("rocksdb.block-cache-capacity") reads the capacity.)
  void ReserveBlockCache(size_t bytes);

 private:
  Store(std::unique_ptr<rocksdb::Env> env, std::unique_ptr<rocksdb::DB> db,
        std::vector<rocksdb::ColumnFamilyHandle*> handles, const Options& options,
        std::unique_ptr<rocksdb::CompactionFilter> request_expiry,
        std::shared_ptr<rocksdb::Cache> block_cache);

  // At open: compares the store's last sequence with its SyncedMark
  // (WalDrops::synced_writes_lost), and makes the mark the synced writes raise.
  void CheckSyncedMark(const std::string& path);
  absl::Status LoadPoolDetails(StoredPool* pool) const;
  // The pool's newest seq in the records family or an indexed block; 0 if none.
  absl::StatusOr<uint64_t> NewestSeq(uint32_t pool_id) const;
  // The pool's seq lease (PutSeqCeilings); 0 if it has none.
  absl::StatusOr<uint64_t> ReadSeqCeiling(uint32_t pool_id) const;
  // Adds the append-time entries of `records` to `batch` (store_times.cc).
  // Appends the (pool, first seq) of each entry added to `entries`.
  absl::Status BatchAppendTimes(absl::Span<const RecordWrite> records,
                                rocksdb::WriteBatch* batch, std::vector<RecordRef>* entries);
  absl::StatusOr<uint64_t> LastSeq(uint32_t pool_id) const;
  // Adds a partition's applied offset to `batch` (store_log_positions.cc).
  absl::Status BatchLogPosition(const LogPosition& applied, rocksdb::WriteBatch* batch);
  // An iterator over the pool's indexed blocks keyed at or after `from_seq`; the
  // bounds live in `bounds`, which must outlive it.
  struct PoolBounds;
  std::unique_ptr<rocksdb::Iterator> IndexedBlockIterator(
      uint32_t pool_id, uint64_t from_seq, PoolBounds* bounds,
      const ReadSnapshot* snapshot = nullptr) const;
  // Positions `it` (an IndexedBlockIterator from `from_seq`) on the block holding
  // `seq` and parses it into `block`; false if none holds it, the iterator's error if
  // the seek failed. Seeks forward from `seq` less a quarter more than the seqs the
  // pool's last block found held (span_hints_), backward when that does not settle it.
  absl::StatusOr<bool> SeekBlockHolding(rocksdb::Iterator* it, uint32_t pool_id,
                                        uint64_t from_seq, uint64_t seq,
                                        IndexedBlock* block) const;
  absl::StatusOr<PoolCounters> ReadCounters(const std::string& key,
                                            const ReadSnapshot* snapshot = nullptr) const;
  // `sync`: fsync the log first even without Options::sync_writes.
  absl::Status Write(rocksdb::WriteBatch* batch, absl::string_view what, bool sync = false);
  // Raises the synced mark for a synced write that just returned (ADR 0044): to its
  // first sequence when it took the `count` sequences right after `before` (the last
  // sequence read before it), else to that of a write of its own synced after it.
  absl::Status RaiseSyncedMark(uint64_t before, uint64_t count);
  // A write RocksDB refused (`s`, not OK) of `what`: notes it, so the next write first
  // resumes, and says why, with the reason writes stopped if they did.
  absl::Status WriteFailed(const rocksdb::Status& s, absl::string_view what);
  absl::Status Put(rocksdb::ColumnFamilyHandle* family, absl::string_view key,
                   absl::string_view value, absl::string_view what, bool sync = false);
  // After a failed write RocksDB refuses writes until resumed (a full disk, an I/O
  // error): the next write first asks it to resume, and fails as it does.
  absl::Status ResumeIfStopped();
  std::vector<absl::StatusOr<std::string>> MultiGetFrom(
      rocksdb::ColumnFamilyHandle* family, absl::Span<const RecordRef> keys,
      absl::string_view what) const;

  std::unique_ptr<rocksdb::Env> env_;  // Null: the default Env. Outlives db_.
  // The requests family's compaction filter: declared before db_, so it outlives it.
  std::unique_ptr<rocksdb::CompactionFilter> request_expiry_;
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;  // Owned; destroyed before db_.
  rocksdb::ColumnFamilyHandle* records_ = nullptr;
  rocksdb::ColumnFamilyHandle* catalog_ = nullptr;
  rocksdb::ColumnFamilyHandle* counters_ = nullptr;
  rocksdb::ColumnFamilyHandle* dictionaries_ = nullptr;
  rocksdb::ColumnFamilyHandle* blocks_ = nullptr;
  rocksdb::ColumnFamilyHandle* requests_ = nullptr;
  rocksdb::ColumnFamilyHandle* times_ = nullptr;
  const std::shared_ptr<rocksdb::Cache> block_cache_;  // Shared by every family.
  const size_t block_cache_budget_;
  const std::string path_;
  const bool sync_writes_;
  const bool read_only_;
  WalDrops wal_dropped_at_open_;
  std::unique_ptr<SyncedMark> synced_mark_;  // Set at open; raised by synced writes.
  const std::function<void()> before_synced_write_for_test_;
  const absl::Duration request_window_;
  const std::function<absl::Time()> clock_;
  std::atomic<bool> write_failed_{false};
  std::shared_ptr<BackgroundErrors> background_errors_;  // Set at open; a listener of db_.
  // Append times of seq ranges read from times_ (filled by the const AppendTimes).
  mutable TimeRangeCache time_ranges_;
  // The seqs the last indexed block found held, by pool id modulo kSpanHints (0: none
  // yet). A hint of another pool or an old one costs a backward seek, never an answer.
  static constexpr size_t kSpanHints = 256;
  mutable std::atomic<uint64_t> span_hints_[kSpanHints] = {};
};

}  // namespace dictlog::store

#endif  // DICTLOG_SERVER_STORE_STORE_H_
