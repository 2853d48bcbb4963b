// LogEngine: dictlog's storage engine without the network. It validates input, routes
// categories to pools, compresses records into frames and writes them atomically to
// the store (append path), and reads, decodes and returns them (Get, MultiGet, Scan),
// also as they are appended (Follow). The gRPC service is a thin layer over it.
//
// Invalid input is rejected before anything is written. Errors are absl::Status with
// the most specific canonical code (INVALID_ARGUMENT, NOT_FOUND, DATA_LOSS, ...).
//
// Thread safety: all methods may be called concurrently.
#ifndef DICTLOG_SERVER_ENGINE_LOG_ENGINE_H_
#define DICTLOG_SERVER_ENGINE_LOG_ENGINE_H_

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "proto/dictlog.pb.h"
#include "server/block/batch_blocks.h"
#include "server/block/block_sealer.h"
#include "server/block/byte_budget.h"
#include "server/block/decoded_block_cache.h"
#include "codec/record_codec.h"
#include "server/dictionary/auto_trainer.h"
#include "server/dictionary/dictionary_manager.h"
#include "server/dictionary/dictionary_cache.h"
#include "server/dictionary/drift_tracker.h"
#include "server/dictionary/recompressor.h"
#include "server/engine/append_input.h"
#include "server/engine/encode_workers.h"
#include "server/engine/follow_hub.h"
#include "server/engine/lookup_hook.h"
#include "server/engine/name_admission.h"
#include "server/engine/replicated_log.h"
#include "server/engine/request_ids.h"
#include "server/engine/retention.h"
#include "server/pool/pool_options.h"
#include "server/pool/names.h"
#include "server/pool/pool_registry.h"
#include "server/pool/router.h"
#include "server/store/store.h"

namespace dictlog::engine {

struct EngineOptions {
  store::Store::Options store;
  // Category -> pool rules; unmatched categories get a pool of their own name.
  std::vector<pool::RouteRule> routes;
  // Options of pools created without explicit ones (resolved). Default: level 3,
  // 16 KiB dictionaries, record mode.
  v1::PoolOptions default_pool_options = pool::BuiltinPoolOptions();
  // Pools created at start-up if missing (existing pools keep their stored options).
  std::vector<std::pair<std::string, v1::PoolOptions>> pools;
  // Append times (ADR 0015): a call writes its pool's time entry only if the pool's
  // last entry written since start-up is in an earlier bucket of this length; the
  // records of later calls in the bucket read that entry's time (at most this much
  // earlier than their own). Default 1 s; zero: an entry for every call.
  absl::Duration append_time_resolution = absl::Seconds(1);
  // Largest payload accepted by Append. Default 1 MiB; at most codec::kMaxRecordBytes.
  size_t max_record_bytes = 1 << 20;
  // Most records in one AppendBatch. Default 10,000.
  size_t max_batch_records = 10000;
  // Threads that compress one append's records and blocks, the caller included (ADR
  // 0021; EncodeWorkers). Default min(2, hardware threads); 1: the caller alone.
  size_t encode_threads = EncodeWorkers::DefaultThreads();
  // Appends with at least this many payload bytes compress on encode_threads; smaller
  // ones on the caller alone (handing work over costs more than it saves). Default
  // 64 KiB.
  uint64_t parallel_encode_min_bytes = 64 << 10;
  // Most ids in one MultiGet. Default 10,000.
  size_t max_multiget_ids = 10000;
  // Most payload bytes one MultiGet returns; duplicated ids count every time. Checked
  // against each record's stored size before it is decoded; the ids past it get a
  // RESOURCE_EXHAUSTED result each (ask again for them). The first record of a call
  // is always answered. Default 64 MiB.
  size_t max_response_bytes = 64 << 20;
  // Largest ImportDictionary content, checked before it is parsed. Default 1 MiB
  // (pool::kMaxDictionaryBytes, the largest dictionary training makes).
  size_t max_import_dictionary_bytes = pool::kMaxDictionaryBytes;
  // Backup writes only into new directories strictly inside this directory (see
  // backup_root.h). Default empty: Backup is FAILED_PRECONDITION.
  std::string backup_root;
  // Limits on new pools and categories, and scope isolation (NameAdmission).
  NameLimits names;
  // Indexed blocks kept decompressed for reads that come back to them (block mode,
  // ADR 0038), in bytes, at most half the store's block cache budget: what it holds is
  // taken out of RocksDB's block cache (Store::ReserveBlockCache). Default 16 MiB; 0:
  // none.
  size_t decoded_block_cache_bytes = 16 << 20;
  // Memory budget of decoded dictionaries (active ones are pinned). Default 256 MiB.
  dictionary::DictionaryCacheOptions dictionary_cache;
  // Dictionary training, activation threshold and sample budget.
  dictionary::DictionaryManagerOptions dictionaries;
  // Train and activate a first dictionary in the background. Default on.
  bool auto_train = true;
  dictionary::AutoTrainerOptions auto_trainer;
  // Drift signal window: the last this many payload bytes of each pool's appends with
  // its active dictionary (drift_tracker.h). Default 32 KiB.
  uint64_t drift_window_bytes = dictionary::DriftTracker::kDefaultWindowBytes;
  // When automatic training activates a pool's first dictionary, re-encode the records
  // the pool stored before it in the background (a Recompressor job, throttled like
  // any). Default on.
  bool recompress_first_dictionary = true;
  // A pool without a dictionary stores its records uncompressed (single values, not
  // blocks) while its raw bytes are below this, if automatic training and
  // recompress_first_dictionary are on and its first training has not ended without
  // a dictionary: the first dictionary's re-encode then compresses each once, instead
  // of a compression without a dictionary at append (about 3x the CPU of one with a
  // dictionary, for about 1.1x on log lines) and a decompression in the re-encode.
  // A first training that activates nothing re-encodes them without a dictionary and
  // ends this for the pool (until a restart). Default 64 MiB; 0: compress at once.
  uint64_t raw_before_dictionary_bytes = 64 << 20;
  dictionary::RecompressorOptions recompressor;
  // Retention of pools with max_age_seconds or max_bytes (retention.h): pass interval,
  // work per pass, clock.
  RetentionOptions retention;
  // Follow streams: buffer limits and the most at once (follow_hub.h).
  FollowOptions follow;
  // Cluster mode (docs/cluster.md): appends go to this log instead of the store, and
  // reach the store through ApplyLogged; reads of ids the log gave wait for them to be
  // applied. Borrowed, must outlive the engine. Default null: single-node mode.
  ReplicatedLog* replicated_log = nullptr;
};

// Asked between chunks of a long read (MultiGet, Scan): a non-OK status stops the call
// with that status (the service passes one that reports a passed deadline or a
// cancelled call). Empty: never stops.
using Interrupt = std::function<absl::Status()>;

// Whether MultiGetFrames may send a pool's frames to the caller, given every category
// the pool may hold (PoolCategoriesOf); asked once per pool and call. Empty: always.
// Where it says no, the server decodes and returns payloads (frame sizes are a
// compression side channel across a pool's categories; docs/security.md).
using FramePolicy = std::function<bool(const std::vector<std::string>& pool_categories)>;

struct ScanSpec {
  // Exactly one of category (routed; only its records) and pool (all records).
  std::string category;
  std::string pool;
  // Inclusive start id within the scanned pool; empty: the first record.
  std::string from_id;
  // At most this many records; 0: no limit.
  uint64_t limit = 0;
  // Only records whose append time is in [since_ms, until_ms) (either may be absent);
  // records without a time are in no range. The scan seeks to `since` through the
  // time index and stops at the first record at or after `until`.
  std::optional<int64_t> since_ms;
  std::optional<int64_t> until_ms;
};

struct FollowSpec {
  // Exactly one of category (routed; only its records) and pool (all records).
  std::string category;
  std::string pool;
  // Start after this id (exclusive) of the followed pool; empty: after the pool's
  // last record when the stream starts ("now").
  std::string after_id;
  // Start with the pool's first record (instead of after_id, which must be empty).
  bool from_start = false;
};

class LogEngine {
 public:
  // How long a Follow waits for records before it asks its interrupt again.
  static constexpr absl::Duration kFollowWait = absl::Milliseconds(100);

  // Ids MultiGet reads (one RocksDB MultiGet, one decode batch) between interrupts.
  static constexpr size_t kReadChunkIds = 1024;
  // Records of one Scan chunk (one sink call), and their payload bytes: a chunk holds
  // at most kScanChunkRecords records and kScanChunkBytes bytes of stored values and of
  // payloads, or one record larger than that. 2 MiB: a message (with up to 256 ids and
  // categories) fits the 4 MiB a gRPC client receives by default.
  static constexpr size_t kScanChunkRecords = 256;
  static constexpr size_t kScanChunkBytes = 2 << 20;

  // Opens the store and loads pools. INVALID_ARGUMENT for bad options.
  static absl::StatusOr<std::unique_ptr<LogEngine>> Open(EngineOptions options);

  LogEngine(const LogEngine&) = delete;
  LogEngine& operator=(const LogEngine&) = delete;
  // Writes the pools' exact seq leases (pool::Pool::ExactLease). No call may be in
  // flight.
  ~LogEngine();

  // Stores all records in one atomic write and returns their ids in input order.
  // With a `request_id` (1..128 printable ASCII bytes), the ids are remembered with the
  // records: a later call with the same id and the same records (a retry) writes
  // nothing and returns the same ids; with other records it is ALREADY_EXISTS. Calls
  // with the same id run one at a time. See Store::Options::request_window. Request
  // ids are scoped by `principal` (the caller's token, auth::Grant::principal; empty
  // without a tokens file): another principal's id is another request, so nobody can
  // claim or probe the ids of another.
  absl::StatusOr<std::vector<std::string>> Append(absl::Span<const AppendInput> records,
                                                  absl::string_view request_id = {},
                                                  absl::string_view principal = {});

  // Cluster mode's materializer: stores one message of the log (its records with the
  // log's seqs and the writer's time, its request id, and its position, all in one
  // write). Validated, admitted and routed again as Append does: INVALID_ARGUMENT,
  // RESOURCE_EXHAUSTED (name limits) or FAILED_PRECONDITION (this node routes a
  // category elsewhere than the writer did; a block-mode pool) mean the message can
  // never apply here; other errors are the store's (retry).
  absl::Status ApplyLogged(const LoggedBatch& batch);
  // Cluster mode: applies a dictionary message of the log (ADR 0020) whose id the
  // materializer resolved (`stored`: this node holds it under that id already, a
  // replay or the same dictionary twice): stores it, activates it if asked and the
  // pool's active dictionary is still the message's base, and stores `position`.
  // FAILED_PRECONDITION (the pool is unknown here, an activation names a dictionary
  // this node does not hold for the pool) means it can never apply here.
  absl::StatusOr<AppliedDictionary> ApplyLoggedDictionary(const LogDictionary& dictionary,
                                                          bool stored,
                                                          const store::LogPosition& position);
  // Cluster mode: what this node holds under dictionary id `id` (the materializer's
  // id resolution): `used` false if the id was never given; `pool` and `content`
  // empty if it was retired.
  struct HeldDictionary {
    bool used = false;
    std::string pool;
    std::string content;
  };
  absl::StatusOr<HeldDictionary> DictionaryHeld(uint32_t id) const;
  // Cluster mode: stores `position` alone (a message ApplyLogged refused for good).
  absl::Status SkipLogged(const store::LogPosition& position) {
    return store_->PutLogPosition(position);
  }
  // Cluster mode: every partition's last applied offset, as stored.
  absl::StatusOr<std::vector<store::LogPosition>> LogPositions() const {
    return store_->LoadLogPositions();
  }
  // Cluster mode: what DropPartition deleted.
  struct PartitionDrop {
    std::vector<uint32_t> pool_ids;  // Pools of the partition whose records went.
    uint64_t records = 0;            // Their records, as counted.
    uint64_t stored_bytes = 0;       // And their stored bytes.
  };
  // Cluster mode: deletes the data of `partition`, which this node no longer holds and
  // must not apply meanwhile (docs/cluster.md "Dropping partitions no longer held"):
  // the records, blocks, append times and counts of every pool for which
  // `in_partition(name)` holds, and the partition's applied offset (a later build
  // starts from offset 0), in one batch of range deletions. Pools, categories and every
  // dictionary stay. Appends wait meanwhile. FAILED_PRECONDITION outside cluster mode;
  // the store's errors (nothing deleted).
  absl::StatusOr<PartitionDrop> DropPartition(
      uint32_t partition, const std::function<bool(absl::string_view pool)>& in_partition);
  // Compacts the ranges a DropPartition deleted, so the space comes back (slow: call
  // it off the serving path); errors are logged.
  void CompactDroppedPartition(const PartitionDrop& drop);

  // INVALID_ARGUMENT for a malformed id, NOT_FOUND for an absent record; in cluster
  // mode UNAVAILABLE for an id not yet applied on this node (after a bounded wait).
  absl::StatusOr<v1::Record> Get(absl::string_view id) const;
  // One result per id, in order. INVALID_ARGUMENT (for the whole call) if there are
  // more than max_multiget_ids. Reads in chunks of kReadChunkIds ids, asking
  // `interrupt` between them (a call of one chunk never asks). Past max_response_bytes,
  // the result of the first record that does not fit and of every later id is
  // RESOURCE_EXHAUSTED (not read).
  absl::StatusOr<std::vector<absl::StatusOr<v1::Record>>> MultiGet(
      absl::Span<const std::string> ids, const Interrupt& interrupt = nullptr) const;
  // Passes the matching records to `sink` in append order, in chunks (see
  // kScanChunkBytes), until the end or the limit; stops early and returns sink's error if sink fails, or
  // `interrupt`'s, asked before each chunk is read.
  absl::Status Scan(const ScanSpec& spec,
                    const std::function<absl::Status(std::vector<v1::Record>)>& sink,
                    const Interrupt& interrupt = nullptr) const;

  // Passes the matching records to `sink` in append (id) order as they are appended,
  // each exactly once, until `interrupt` or `sink` fails (that status is returned):
  // first those already stored after spec.after_id (read from the store), then the
  // live ones. A pool that does not exist yet is waited for. INVALID_ARGUMENT for a
  // bad spec (as Scan's; after_id of another pool); RESOURCE_EXHAUSTED past
  // FollowOptions::max_followers; ABORTED once the stream's buffer overflowed (after
  // the records it held; the message names the last id passed: resume after it);
  // UNAVAILABLE once EndFollows ran (the same). Asks `interrupt` every kFollowWait.
  absl::Status Follow(const FollowSpec& spec,
                      const std::function<absl::Status(std::vector<v1::Record>)>& sink,
                      const Interrupt& interrupt);
  // Ends every Follow (UNAVAILABLE) and refuses new ones: the server is shutting down.
  void EndFollows() { follows_.Close(); }
  // One of --max_follow_streams for a Follow this node proxies to a replica (cluster
  // mode, ADR 0032); EndFollows runs `on_close`. RESOURCE_EXHAUSTED past the limit,
  // UNAVAILABLE after EndFollows.
  absl::StatusOr<std::unique_ptr<FollowHub::Slot>> HoldFollowSlot(
      std::function<void()> on_close) {
    return follows_.HoldSlot(std::move(on_close));
  }
  FollowStats FollowStatistics() const { return follows_.Stats(); }

  // The stored record as a standard zstd frame and the id of its dictionary.
  absl::StatusOr<v1::GetFrameResponse> GetFrame(absl::string_view id) const;
  // MultiGet without decoding: per id, the stored frame (standard zstd, magic restored)
  // and its dictionary id, or the payload where the server decodes (block entries,
  // records stored raw, pools `frames_for` refuses). Limits, per-id errors and
  // max_response_bytes (counted in payload bytes, the frame's content size, before
  // anything is copied or decoded) exactly as MultiGet, so both answer the same ids.
  absl::StatusOr<std::vector<absl::StatusOr<v1::RecordFrame>>> MultiGetFrames(
      absl::Span<const std::string> ids, const FramePolicy& frames_for = nullptr,
      const Interrupt& interrupt = nullptr) const;
  // The same results in packed form (MultiGetFramesRequest.packed) into `out` (empty):
  // frames appended straight from the stored values, without a message, id or status
  // per record. The call fails as MultiGetFrames' does (then `out` is unspecified).
  absl::Status MultiGetFramesPacked(absl::Span<const std::string> ids,
                                    const FramePolicy& frames_for, const Interrupt& interrupt,
                                    v1::PackedFrames* out) const;
  // Scan without decoding: the records Scan would pass, in the same order and chunks,
  // as MultiGetFrames results (frames, or payloads where the server decodes; a chunk's
  // bytes counted in payload bytes as Scan's). Same errors as Scan.
  absl::Status ScanFrames(const ScanSpec& spec, const FramePolicy& frames_for,
                          const std::function<absl::Status(std::vector<v1::RecordFrame>)>& sink,
                          const Interrupt& interrupt = nullptr) const;
  // Every category the pool of record `id` may hold: those stored under an index of
  // their own and, if it routes there, the pool's own name (so a token allowed all of
  // them may see the pool's frame sizes). INVALID_ARGUMENT for a malformed id,
  // NOT_FOUND for an absent pool.
  absl::StatusOr<std::vector<std::string>> PoolCategoriesOf(absl::string_view id) const;
  // The pool `category` routes to (--route rules; cluster mode routes Scan with it).
  std::string PoolOfCategory(absl::string_view category) const { return router_.Route(category); }
  // The same for pool `name`. NOT_FOUND for an absent pool.
  absl::StatusOr<std::vector<std::string>> PoolCategories(absl::string_view name) const;

  std::vector<v1::PoolInfo> ListPools() const;
  v1::DictionaryCacheStats DictionaryCacheStats() const;
  absl::StatusOr<v1::PoolInfo> GetPool(absl::string_view name) const;
  absl::StatusOr<v1::PoolInfo> CreatePool(absl::string_view name,
                                          const v1::PoolOptions& options);
  absl::StatusOr<v1::PoolInfo> UpdatePool(absl::string_view name,
                                          const v1::PoolOptions& update);
  // Deletes pool `name` and everything of it (pool_delete.cc; Store::DeletePoolData):
  // its ids then answer NOT_FOUND "was deleted"; a pool created under the name later
  // gets a new id and seqs past the old ones. Appends racing it land before it or
  // find no pool (then create a new one of the name, as any append of an unknown
  // category). Reads and appends of other pools go on meanwhile. NOT_FOUND for an
  // unknown pool; FAILED_PRECONDITION while an earlier delete of the name is pending.
  absl::StatusOr<v1::DeletePoolResponse> DeletePool(absl::string_view name);
  // Pools deleted since the server started (metrics).
  uint64_t PoolsDeleted() const { return pools_deleted_.load(std::memory_order_relaxed); }
  // What recovering the write-ahead log dropped when the store opened
  // (store::Store::wal_dropped_at_open).
  const store::WalDrops& WalDroppedAtOpen() const { return store_->wal_dropped_at_open(); }
  // Why RocksDB stopped the store's writes, or OK (store::Store::WritesStopped).
  absl::Status WritesStopped() const { return store_->WritesStopped(); }
  // Why some dictionaries could not be read when the store opened, or OK
  // (dictionary::DictionaryManager::unreadable_at_open).
  const absl::Status& DictionariesUnreadableAtOpen() const {
    return manager_->unreadable_at_open();
  }

  // Dictionary lifecycle (see DictionaryManager and Recompressor).
  absl::StatusOr<v1::TrainDictionaryResponse> TrainDictionary(
      const v1::TrainDictionaryRequest& request);
  absl::StatusOr<v1::ListDictionariesResponse> ListDictionaries(
      const v1::ListDictionariesRequest& request) const;
  absl::StatusOr<v1::DictionaryInfo> ActivateDictionary(
      const v1::ActivateDictionaryRequest& request);
  absl::StatusOr<v1::GetDictionaryResponse> GetDictionary(
      const v1::GetDictionaryRequest& request) const;
  absl::StatusOr<v1::DictionaryInfo> ImportDictionary(
      const v1::ImportDictionaryRequest& request);
  absl::StatusOr<v1::GcDictionariesResponse> GcDictionaries(
      const v1::GcDictionariesRequest& request);
  absl::StatusOr<v1::RecompressStatus> Recompress(const v1::RecompressRequest& request);
  absl::StatusOr<v1::RecompressStatus> GetRecompressStatus(
      const v1::RecompressRequest& request) const;

  // Decodes every stored record of request.pool (or of every pool) and reports the
  // ones that fail. NOT_FOUND for an unknown pool; CANCELLED when `cancelled` says so
  // (checked between chunks).
  absl::StatusOr<v1::VerifyResponse> Verify(const v1::VerifyRequest& request,
                                            const std::function<bool()>& cancelled) const;

  // Copies the whole store at one consistent point into request.dir (see
  // store::Store::Checkpoint for the rules and codes); counts the copy's files.
  absl::StatusOr<v1::BackupResponse> Backup(const v1::BackupRequest& request);
  // Every memtable to table files (Store::Flush); the table file bytes after it.
  absl::StatusOr<v1::FlushResponse> Flush();
  // Automatic training so far (all zero when auto_train is off).
  // Automatic upkeep runs completed since start-up (re-compression and gc done).
  uint64_t UpkeepRuns() const { return upkeep_runs_.load(); }
  // Records stored uncompressed before their pool's first dictionary since start-up
  // (EngineOptions::raw_before_dictionary_bytes).
  uint64_t RawBeforeDictionaryRecords() const { return raw_before_dictionary_.load(); }
  dictionary::AutoTrainerStats AutoTrainingStats() const {
    if (auto_trainer_ == nullptr) return dictionary::AutoTrainerStats();
    return auto_trainer_->Stats();
  }
  // A RocksDB integer property per column family (metrics).
  std::vector<std::pair<std::string, uint64_t>> StoreProperty(
      absl::string_view name) const {
    return store_->IntProperty(name);
  }

  // What retention has expired so far (metrics).
  RetentionStats RetentionStatistics() const { return retention_->Stats(); }
  // Stored records Scan and ScanFrames have read since the engine opened (tests: a
  // time-range scan seeks instead of reading the pool).
  uint64_t ScannedRecordsForTest() const { return scanned_records_.load(); }
  // Runs one retention pass now; the records it expired.
  absl::StatusOr<uint64_t> RunRetentionForTest() { return retention_->RunPass(); }

  // Waits for automatic training to go idle (tests, benchmarks). True if it did.
  bool WaitForAutoTrainingForTest(absl::Duration timeout);
  bool WaitForRecompressForTest(absl::string_view pool, absl::Duration timeout);
  // Reads (Get, MultiGet, Scan, Verify, GetFrame) call `hook` with the ids of each
  // dictionary lookup, after they read the stored values and before they look the
  // dictionaries up (lookup_hook.h). Null removes it. Set it while no read runs.
  void SetLookupHookForTest(LookupHook::Hook hook);
  dictionary::DictionaryManager& DictionaryManagerForTest() { return *manager_; }
  dictionary::Recompressor& RecompressorForTest() { return *recompressor_; }

  const EngineOptions& options() const { return options_; }

 private:
  LogEngine(EngineOptions options, pool::Router router,
            std::unique_ptr<store::Store> store,
            std::unique_ptr<pool::PoolRegistry> registry);

  // Block mode: the seqs an append reserved in each block-mode pool (from `first`)
  // and the records it wrote there.
  struct TailAddition {
    uint64_t first = 0;
    std::vector<pool::BlockTail::Record> written;
    bool sealed_own = false;  // The append wrote blocks of its own (a cut at `first`).
  };
  using TailAdditions = absl::flat_hash_map<pool::Pool*, TailAddition>;

  absl::Status ValidateAppend(absl::Span<const AppendInput> records) const;
  absl::Status OpenDictionaries();
  // Starts the background re-encode of what `pool` stored before its first (or grown)
  // dictionary: every record, to the active dictionary (Recompressor::StartOrFollow).
  void RecompressFirst(const std::string& pool);
  // What follows an automatic activation: RecompressFirst, or after drift the pool's
  // upkeep policy.
  void OnAutoActivated(const dictionary::AutoActivation& activation);
  // Automatic upkeep (pool option auto_upkeep): re-encodes the pool's records with its
  // new dictionary in the background, then retires the pool's dictionaries nothing
  // references.
  void Upkeep(const std::string& pool);
  // The drift signal of `pool`'s active dictionary.
  dictionary::DriftSignal DriftOf(const pool::Pool& pool) const;
  absl::Status RecoverBlockTails();
  // Backup's checkpoint into `dir`. Single-node, the copy is then opened once and its
  // pools' leases and its seq floor raised kRestoreLease past its own
  // (PoolRegistry::Load's skip): restored, every pool the copy holds, and any created
  // under a name the live store made after it, starts past the ids the live store
  // gives after the backup. The live store's leases and floor do not move. On a
  // failure the copy is removed. The RocksDB sequence of the checkpoint.
  absl::StatusOr<uint64_t> CheckpointWithLeases(const std::string& dir);
  // A scan does not step over records a salvage lost (ADR 0045): cuts `chunk` (read
  // from seq `from` on) before its first gap that meets a lost range, and is DATA_LOSS
  // if that is where it starts, or the chunk is empty (the pool's end) and a lost
  // range lies ahead. Records found inside a lost range (a block-mode pool's, whose
  // records family range was lost but not its blocks) are not lost.
  static absl::Status CutAtLostSeqs(const pool::Pool& pool, uint64_t from,
                                    std::vector<store::ScannedRecord>* chunk);
  // DATA_LOSS for a read of the seqs [lost.first, lost.second] a salvage lost.
  static absl::Status LostRecords(const pool::Pool& pool,
                                  const std::pair<uint64_t, uint64_t>& lost);
  // Where a logged batch's records go (ApplyLogged): the log's seqs (one per record),
  // the writer's time and the log position written with them.
  struct Placement {
    absl::Span<const uint64_t> seqs;
    int64_t now_ms = 0;
    const store::LogPosition* applied = nullptr;
    // One per record as the writer encoded it, stored as it is; empty: encode here.
    absl::Span<const EncodedRecord> encoded;
  };
  // Append's write, once validated; `request` (may be null) is written with it. In
  // cluster mode without a `placement`, the records go to the log (AppendToLog).
  absl::StatusOr<std::vector<std::string>> AppendOnce(
      absl::Span<const AppendInput> records, store::RequestWrite* request,
      const Placement* placement = nullptr);
  absl::StatusOr<std::vector<std::string>> AppendValidated(
      absl::Span<const AppendInput> records, std::vector<std::shared_ptr<pool::Pool>>* pools,
      TailAdditions* tails, store::RequestWrite* request, const Placement* placement);
  // What an append does in each of its pools, looked up once per pool (append_encode.cc).
  struct PoolBatch {
    std::shared_ptr<const codec::EncoderDictionary> encoder;
    int level = 0;
    uint64_t next_seq = 0;
    uint64_t first_seq = 0;
    store::PoolCounters added;  // Records, payload and stored bytes (blocks included).
    int64_t time_ms = 0;        // 0: the pool's time entry of this bucket exists.
    // What the drift signal gets: single records, and one record of each block
    // compressed alone as a sample (ADR 0021).
    uint64_t drift_raw = 0;
    uint64_t drift_stored = 0;
    // Block mode, records sealed straight into blocks (ADR 0021): the input positions
    // of the pool's records, the blocks planned over them, and their writes (seqs
    // relative to first_seq until the seqs are reserved).
    std::vector<size_t> members;
    std::vector<block::PlannedBlock> plan;
    std::vector<store::BlockWrite> sealed;
    uint64_t block_bytes = 0;
    // Single records are stored uncompressed (raw_before_dictionary_bytes); how many.
    bool store_raw = false;
    uint64_t raw_records = 0;
  };
  using PoolBatches = absl::flat_hash_map<pool::Pool*, PoolBatch>;
  // Each record's pool and category index (runs of one category looked up once), and
  // each pool's encoder, level and time entry.
  absl::Status RouteBatch(absl::Span<const AppendInput> records, int64_t now_ms,
                          const Placement* placement,
                          std::vector<std::shared_ptr<pool::Pool>>* pools,
                          std::vector<uint32_t>* categories, PoolBatches* batch);
  // Compresses the records (into writes) and, single-node (no `placement`) where a
  // pool's records fill blocks, seals them straight into blocks; on encode_workers_
  // when the append is large. A placement's encoded records (the writer's frames) are
  // stored as they are. Sets the writes' pools, sizes and times and the pools' counters.
  absl::Status EncodeBatch(absl::Span<const AppendInput> records,
                           absl::Span<const std::shared_ptr<pool::Pool>> pools,
                           absl::Span<const uint32_t> categories, const Placement* placement,
                           PoolBatches* batch, std::vector<store::RecordWrite>* writes);
  // Plans the blocks of each block-mode pool whose records fill one (PlanBatchBlocks)
  // and marks their records in_block.
  void PlanOwnBlocks(absl::Span<const AppendInput> records,
                     absl::Span<const std::shared_ptr<pool::Pool>> pools, PoolBatches* batch,
                     std::vector<store::RecordWrite>* writes) const;
  // Encodes block `index` of pb->plan into pb->sealed[index]; the sizes of its first
  // record compressed alone (the drift signal's sample; 0 without a dictionary).
  static absl::Status EncodeOwnBlock(absl::Span<const AppendInput> records,
                                     absl::Span<const uint32_t> categories,
                                     const pool::Pool* pool, PoolBatch* pb, size_t index,
                                     uint64_t* sample_raw, uint64_t* sample_stored);
  // Block mode: the written records that join their pools' open tails.
  static void AddToTails(absl::Span<const std::shared_ptr<pool::Pool>> pools,
                         absl::Span<const store::RecordWrite> writes,
                         const PoolBatches& batch, TailAdditions* tails);
  // Cluster mode: produces the admitted records to the log (log_engine_cluster.cc).
  absl::StatusOr<std::vector<std::string>> AppendToLog(absl::Span<const AppendInput> records,
                                                       const store::RequestWrite* request);
  // Cluster mode's writer (ADR 0020): `payload` encoded with `pool`'s active
  // dictionary as this node applied it from the log (null pool: not applied here yet,
  // no dictionary), as every node will store it.
  absl::StatusOr<EncodedRecord> EncodeForLog(pool::Pool* pool,
                                             absl::string_view payload) const;
  // Cluster mode's apply: the stored value of a record the writer encoded, with this
  // node's `category_index`. INVALID_ARGUMENT for a frame that does not parse or
  // disagrees with its size or dictionary id.
  static absl::Status StoreEncoded(const EncodedRecord& encoded, absl::string_view payload,
                                   uint32_t category_index, store::RecordWrite* write);
  // Cluster mode: FAILED_PRECONDITION unless every dictionary the batch's frames name
  // is known here (the log puts a dictionary before any frame naming it).
  absl::Status CheckFrameDictionaries(const LoggedBatch& batch) const;
  // Cluster mode: Train's way to the log (DictionaryManagerOptions::publish).
  absl::StatusOr<v1::DictionaryInfo> PublishDictionary(storage::DictionaryRecord record,
                                                       bool activate, uint32_t base_id);
  // Cluster mode's ActivateDictionary: an activation through the log.
  absl::StatusOr<v1::DictionaryInfo> ActivateInLog(const v1::ActivateDictionaryRequest& request);
  // FAILED_PRECONDITION in cluster mode for an admin call that would change this node
  // alone (`what` names it); OK in single-node mode.
  absl::Status RefusedInCluster(absl::string_view what) const;
  // Whether this node trains `pool` automatically (always in single-node mode).
  bool TrainsHere(const pool::Pool& pool) const;
  // Whether an append stores `pool`'s single records uncompressed for now: it has no
  // dictionary, and its first is coming (raw_before_dictionary_bytes).
  bool StoresRaw(const pool::Pool& pool) const;
  // Automatic training's first training of `pool` ended without a dictionary: its
  // records are compressed at once from now on, and those stored raw re-encoded.
  void OnFirstNotActivated(const std::string& pool);
  // Cluster mode: OK if record `seq` of `pool` is applied here (or single-node mode).
  // Waits (ReplicatedLog::AwaitApplied) unless `waited` already holds the pool; adds
  // it (at most one wait per pool and MultiGet chunk). `waited` null: always waits.
  absl::Status AppliedHere(const pool::RecordId& id,
                           absl::flat_hash_set<std::string>* waited) const;
  // The ids an earlier append with the same request id returned; ALREADY_EXISTS if
  // its records differ (`fingerprint`).
  absl::StatusOr<std::vector<std::string>> EarlierIds(
      absl::string_view request_id, uint64_t fingerprint,
      const storage::AppendedRequest& earlier) const;
  // Adds the records to their pools' open tails and seals the blocks that are ready.
  void SealBlocks(const TailAdditions& tails);
  absl::StatusOr<std::shared_ptr<pool::Pool>> FindPool(absl::string_view name) const;
  // Cluster mode: the records of `pool` among an applied message's, decoded from the
  // values written (the writer's frames), with the writer's time; a record that does
  // not decode is left out and logged (log_engine_cluster.cc). time_ms as
  // FollowedRecords'.
  std::vector<v1::Record> AppliedRecords(const pool::Pool& pool,
                                         absl::Span<const std::shared_ptr<pool::Pool>> pools,
                                         absl::Span<const store::RecordWrite> writes,
                                         int64_t time_ms) const;
  // The records of `pool` among an append's, as Follow passes them (time_ms 0: none).
  static std::vector<v1::Record> FollowedRecords(
      const pool::Pool& pool, absl::Span<const AppendInput> records,
      absl::Span<const std::shared_ptr<pool::Pool>> pools,
      absl::Span<const store::RecordWrite> writes, int64_t time_ms);
  // Whether an append at `now_ms` writes `pool`'s time entry (append_time_resolution).
  bool NewTimeEntry(const pool::Pool& pool, int64_t now_ms) const;
  // NOT_FOUND for record `seq` of `pool`: "expired" if retention deleted it (below the
  // pool's mark), otherwise "no record".
  static absl::Status MissingRecord(const pool::Pool& pool, uint64_t seq);
  // The pool's oldest record and its time, into `info`.
  void SetOldestRetained(const pool::Pool& pool, v1::PoolInfo* info) const;
  // Verify's work on one pool.
  // Scan's next chunk of the pool's stored values from `seq` (block::ScanPool), read
  // again while gcs retire dictionaries during the read (`read_at`: as DecodeRead's,
  // updated).
  absl::StatusOr<std::vector<store::ScannedRecord>> ScanChunk(const pool::Pool& pool,
                                                              uint64_t seq,
                                                              uint64_t* read_at) const;
  // Verify's work on the pool's records family. Appends to `tail_seqs` (ascending) the
  // seqs it counted at or after the pool's first indexed seq: its open tail, which a
  // seal may move into an indexed block before VerifyIndexedBlocks reads the blocks.
  absl::Status VerifyPool(const pool::Pool& pool, size_t max_listed,
                          const std::function<bool()>& cancelled,
                          v1::VerifyResponse* response, std::vector<uint64_t>* tail_seqs) const;
  // Verify's work on the pool's indexed blocks, not counting again the records of
  // `counted` (sorted: VerifyPool's tail_seqs). An indexed block that does not decode
  // is listed once, by its first record's id.
  absl::Status VerifyIndexedBlocks(const pool::Pool& pool, size_t max_listed,
                                   const std::function<bool()>& cancelled,
                                   absl::Span<const uint64_t> counted,
                                   v1::VerifyResponse* response) const;
  // The pool's info plus what its next dictionary would be (the manager's choice).
  v1::PoolInfo InfoOf(const pool::Pool& pool,
                      const dictionary::DictionaryManager::ServerHeat& heat) const;
  v1::PoolInfo InfoOf(const pool::Pool& pool) const;
  // The stored value of record `id` and its pool. INVALID_ARGUMENT, NOT_FOUND.
  struct StoredValue {
    std::shared_ptr<pool::Pool> pool;
    uint64_t seq = 0;
    std::string value;
    // Not 0: the record has no value of its own; it may be in an indexed block (the
    // pool's indexed_from_seq(), for block::DecodeStored).
    uint64_t indexed_from = 0;
    // The records family was not asked: the seq is below the pool's sealed_below(), so
    // the blocks were to be read first (ADR 0040). Not found there, the record must
    // be read again records family first.
    bool blocks_first = false;
  };
  // The stored value of `id`: the records family's, or (not found there) the indexed
  // blocks to look in. With `blocks_first`, a sealed seq skips the records family.
  absl::StatusOr<StoredValue> ReadStored(absl::string_view id, bool blocks_first = false) const;
  // A record's decoding from ReadStored's answer.
  absl::StatusOr<codec::DecodedRecord> DecodeStoredValue(const StoredValue& stored,
                                                         uint64_t read_at) const;
  // The ids of a MultiGet chunk that name a pool, and their records.
  struct ChunkRefs {
    std::vector<size_t> positions;           // Into the chunk's ids.
    std::vector<store::RecordRef> refs;      // One per position.
    std::vector<pool::Pool*> pools;          // One per position, into `held`.
    std::vector<std::shared_ptr<pool::Pool>> held;  // Each pool named, once.
    std::vector<size_t> distinct_of;         // Index into `distinct`, per position.
    std::vector<store::RecordRef> distinct;  // Each record once, by first occurrence.
  };
  // Resolves ids to records; sets the errors of those naming no pool.
  ChunkRefs ResolveIds(absl::Span<const std::string> ids,
                       absl::Span<absl::Status> errors) const;
  // The stored values of a prefix of `refs`, read in order in batches small enough
  // that what is held stays near what `budget` can still take: reading stops once the
  // values read are more than it can take (every later record would be refused).
  std::vector<absl::StatusOr<std::string>> ReadWithinBudget(
      absl::Span<const store::RecordRef> refs, const block::ByteBudget& budget) const;
  // What ReadChunk read of a chunk of ids. Each distinct record is read once, however
  // often it is asked for.
  struct ChunkValues {
    ChunkRefs chunk;
    std::vector<absl::Status> errors;  // Per id: its error, or OK.
    std::vector<size_t> found;         // Into chunk.refs: the records read, in order.
    std::vector<store::RecordRef> found_refs;  // Theirs.
    std::vector<absl::string_view> encoded;    // Their values (into `values`).
    // Per found record: not 0 if it has no value of its own but may be in an indexed
    // block (then its `encoded` is empty; DecodeRead's indexed_from).
    std::vector<uint64_t> indexed_from;
    // Per found record (or empty: none): looked for in indexed blocks first, without
    // reading the records family (ReadChunk's `blocks_first`; MissedInBlocks).
    std::vector<bool> blocks_first;
    size_t cut = 0;  // Ids from here on were not read: past the budget.
    uint64_t read_at = 0;  // RetiredGeneration() before the read (DecodeRead).
    std::vector<absl::StatusOr<std::string>> values;
  };
  // MultiGet's and MultiGetFrames' reads of ids (at most kReadChunkIds). Reads nothing
  // once `budget` is exhausted. With `blocks_first`, records below their pool's
  // sealed_below() are not read from the records family (where they are almost never
  // found): their blocks are searched first, and a caller that finds one in none
  // (MissedInBlocks) reads the chunk again without `blocks_first`.
  ChunkValues ReadChunk(absl::Span<const std::string> ids, const block::ByteBudget& budget,
                        bool blocks_first = false) const;
  // Per distinct record of `chunk`: whether to look for it in indexed blocks first.
  std::vector<bool> SealedRecords(const ChunkRefs& chunk) const;
  // ReadWithinBudget of the records `sealed` (empty: none) does not mark; a marked
  // record reads as NOT_FOUND. Cut where the budget stopped the reading.
  std::vector<absl::StatusOr<std::string>> ReadUnsealed(
      absl::Span<const store::RecordRef> refs, const std::vector<bool>& sealed,
      const block::ByteBudget& budget) const;
  // Whether a record of `read` looked for in blocks first is NOT_FOUND in `decoded`
  // (one per found record): no block held it. It may be single (a record that fills a
  // block alone) or have been sealed after its block search (a seal writes the block
  // and deletes the single values in one write).
  static bool MissedInBlocks(const ChunkValues& read,
                             absl::Span<const absl::StatusOr<codec::DecodedRecord>> decoded);
  // Checks the number of ids against max_multiget_ids, then calls read_chunk on each
  // kReadChunkIds of them in order with the call's response budget, asking
  // `interrupt` before each chunk after the first that may read.
  using ChunkReader =
      std::function<void(absl::Span<const std::string> ids, block::ByteBudget* budget)>;
  absl::Status ReadInChunks(absl::Span<const std::string> ids, const Interrupt& interrupt,
                            const ChunkReader& read_chunk) const;
  // Appends one result per id of a chunk to `all`: its error, or (OK: read, or past
  // the budget) UNKNOWN until the caller sets it. Returns the chunk's results.
  template <typename Result>
  static absl::Span<absl::StatusOr<Result>> AppendErrors(
      const std::vector<absl::Status>& errors, std::vector<absl::StatusOr<Result>>* all) {
    const size_t base = all->size();
    all->resize(base + errors.size());  // UNKNOWN without a message: no allocation.
    for (size_t i = 0; i < errors.size(); ++i) {
      if (!errors[i].ok()) (*all)[base + i] = errors[i];
    }
    return absl::MakeSpan(*all).subspan(base);
  }
  // Answers the ids from `from` on (past the budget) RESOURCE_EXHAUSTED and refuses
  // every later record of the call.
  template <typename Result>
  static void ExhaustFrom(size_t from, block::ByteBudget* budget,
                          absl::Span<absl::StatusOr<Result>> results) {
    if (from >= results.size()) return;
    budget->Exhaust();
    for (size_t i = from; i < results.size(); ++i) results[i] = budget->ExhaustedError();
  }
  // A FramePolicy asked at most once per pool of a call.
  class PoolFramePolicy {
   public:
    PoolFramePolicy(const LogEngine* engine, const FramePolicy& frames_for)
        : engine_(engine), frames_for_(frames_for) {}
    bool Allows(const pool::Pool& pool);

   private:
    const LogEngine* const engine_;
    const FramePolicy& frames_for_;
    absl::flat_hash_map<const pool::Pool*, bool> allowed_;
  };
  // Receives FramesOrPayloads' result of each stored value k, at most once.
  class FrameSink {
   public:
    virtual ~FrameSink() = default;
    // Value k is a frame the caller may have (`view` parsed from `value`).
    virtual void Frame(size_t k, const pool::Pool& pool, uint64_t seq,
                       const codec::RecordView& view, absl::string_view value) = 0;
    // Value k decoded here.
    virtual void Payload(size_t k, const pool::Pool& pool, uint64_t seq,
                         codec::DecodedRecord decoded) = 0;
    // Value k failed with the error MultiGet would answer.
    virtual void Error(size_t k, absl::Status error) = 0;
  };
  class RecordFrameSink;  // Into v1::RecordFrame results (multiget_frames.cc).
  class PackedSink;       // Into a v1::PackedFrames (multiget_frames.cc).
  // MultiGetFrames' work on ids (at most kReadChunkIds); appends one result per id.
  void MultiGetFramesChunk(absl::Span<const std::string> ids, PoolFramePolicy& allowed,
                           block::ByteBudget* budget,
                           std::vector<absl::StatusOr<v1::RecordFrame>>* results) const;
  // MultiGetFramesPacked's work on ids (at most kReadChunkIds); packs one result per id.
  void MultiGetFramesPackedChunk(absl::Span<const std::string> ids, PoolFramePolicy& allowed,
                                 block::ByteBudget* budget, PackedSink& out) const;
  // Gives `out` the MultiGetFrames result of stored value k of pools[k]: its frame, or
  // (not a frame, or a pool `allowed` refuses) its payload decoded here. Stops at
  // the first record `budget` refuses and returns its index (values.size(): none).
  // `indexed_from` (empty, or one per value) as ReadChunk's: a record with no value of
  // its own that may be in an indexed block is decoded here.
  size_t FramesOrPayloads(absl::Span<pool::Pool* const> pools,
                          absl::Span<const store::RecordRef> refs,
                          absl::Span<const absl::string_view> values,
                          absl::Span<const uint64_t> indexed_from, uint64_t read_at,
                          PoolFramePolicy& allowed, block::ByteBudget* budget,
                          FrameSink& out) const;
  // The result of a record stored as a frame: id, category name, standard frame, its
  // dictionary's id and `dictionary_check` (DictionaryManager::ContentCheck).
  absl::StatusOr<v1::RecordFrame> FrameOf(const pool::Pool& pool, uint64_t seq,
                                          const codec::RecordView& view,
                                          absl::string_view value,
                                          uint32_t dictionary_check) const;
  // Every category `pool` may hold (PoolCategoriesOf).
  std::vector<std::string> CategoriesOfPool(const pool::Pool& pool) const;
  // MultiGet's work on ids (at most kReadChunkIds); appends one result per id.
  void MultiGetChunk(absl::Span<const std::string> ids, block::ByteBudget* budget,
                     std::vector<absl::StatusOr<v1::Record>>* results) const;
  // Follow's parts (follow.cc): the followed pool, once it exists; the records up to
  // the follower's start, from the store; the live records.
  // The seq of `id` (request field `field`), which must be a record id of `pool_name`:
  // the pool of the `category` (if set) or the pool a Scan or Follow targets (`verb`:
  // "scanned", "followed"). INVALID_ARGUMENT otherwise, never naming a category's pool.
  static absl::StatusOr<uint64_t> SeqInTarget(absl::string_view field, absl::string_view id,
                                              absl::string_view verb,
                                              absl::string_view category,
                                              absl::string_view pool_name);
  absl::StatusOr<std::shared_ptr<pool::Pool>> AwaitFollowedPool(const std::string& name,
                                                                const Interrupt& interrupt);
  absl::Status FollowStored(const FollowSpec& spec, const pool::Pool& pool, uint64_t after,
                            Follower& follower,
                            const std::function<absl::Status(std::vector<v1::Record>)>& sink,
                            const Interrupt& interrupt, uint64_t* last_sent);
  absl::Status FollowLive(const pool::Pool& pool, uint64_t after, Follower& follower,
                          const std::function<absl::Status(std::vector<v1::Record>)>& sink,
                          const Interrupt& interrupt, uint64_t* last_sent);
  // Scan's and ScanFrames' reads: checks `spec`, then passes each chunk of matching
  // stored records of the scanned pool to `emit`, which returns how many of them it
  // answered (the rest start the next chunk) or an error that ends the scan.
  using ScanEmit = std::function<absl::StatusOr<size_t>(
      pool::Pool& pool, absl::Span<const store::RecordRef> refs,
      absl::Span<const absl::string_view> values, uint64_t read_at)>;
  absl::Status ScanChunks(const ScanSpec& spec, const ScanEmit& emit,
                          const Interrupt& interrupt) const;
  // A time-range scan's first seq in `pool` (at least `seq`): the first record whose
  // append time is at or after spec.since_ms (or the first with a time); nullopt if
  // none is. INVALID_ARGUMENT if since > until.
  absl::StatusOr<std::optional<uint64_t>> TimeRangeStart(const ScanSpec& spec,
                                                         const pool::Pool& pool,
                                                         uint64_t seq) const;
  // The value of each ref (as the store held it after RetiredGeneration() returned
  // `read_at`), decoded. A record that fails while a gc has retired dictionaries since
  // is read again and decoded again (its frame may have been re-compressed away from a
  // dictionary that gc then retired), a bounded number of times. With a `budget`, the
  // records it refuses are RESOURCE_EXHAUSTED (never read again); a record re-read was
  // already admitted.
  // `indexed_from` as block::DecodeStored's.
  std::vector<absl::StatusOr<codec::DecodedRecord>> DecodeRead(
      absl::Span<const store::RecordRef> refs, absl::Span<const absl::string_view> values,
      uint64_t read_at, block::ByteBudget* budget = nullptr,
      absl::Span<const uint64_t> indexed_from = {}) const;
  // Where a record absent from the records family may be: its pool's first indexed
  // seq if it is at or after it, else 0 (absent).
  static uint64_t IndexedFrom(const pool::Pool& pool, uint64_t seq) {
    const uint64_t from = pool.indexed_from_seq();
    return from != 0 && seq >= from ? from : 0;
  }
  // Whether a read of `seq` looks in the indexed blocks only, without asking the records
  // family first (ADR 0040): at or after the pool's first indexed seq and its retention
  // mark, and below its sealed_below().
  static bool ReadBlocksFirst(const pool::Pool& pool, uint64_t seq) {
    return IndexedFrom(pool, seq) != 0 && seq >= pool.retained_from() &&
           seq < pool.sealed_below();
  }
  // The lookup reads decode with: the cache, or the test's hook around it.
  const codec::DictionaryLookup& ReadLookup() const {
    if (lookup_hook_ != nullptr) return *lookup_hook_;
    return dictionaries_;
  }
  // The record for a decode result: id, category name, payload; errors name the id.
  absl::StatusOr<v1::Record> ToRecord(const pool::Pool& pool, uint64_t seq,
                                      absl::StatusOr<codec::DecodedRecord> decoded) const;

  const EngineOptions options_;
  const pool::Router router_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<pool::PoolRegistry> registry_;  // Borrows store_.
  NameAdmission names_;                           // Borrows router_, registry_, store_.
  dictionary::DictionaryCache dictionaries_;  // Loads through store_.
  mutable block::DecodedBlockCache decoded_blocks_;  // Reads of indexed blocks.
  block::BlockSealer sealer_;                  // Borrows store_ and dictionaries_.
  std::unique_ptr<LookupHook> lookup_hook_;    // Tests only; borrows dictionaries_.
  InFlightRequests in_flight_requests_;
  std::atomic<uint64_t> pools_deleted_{0};
  mutable std::atomic<uint64_t> scanned_records_{0};
  FollowHub follows_;  // Appends reserve their seqs and land their records here.
  EncodeWorkers encode_workers_;  // Large appends compress on it.
  dictionary::DriftTracker drift_;             // Appends record into it.
  std::atomic<uint64_t> upkeep_runs_{0};
  std::atomic<uint64_t> raw_before_dictionary_{0};
  // Pools whose first automatic training ended without a dictionary: they compress
  // their records at once again (raw_before_dictionary_bytes).
  mutable absl::Mutex compress_now_mu_;
  absl::flat_hash_set<uint32_t> compress_now_ ABSL_GUARDED_BY(compress_now_mu_);
  // Declared last: destroyed first, stopping their threads before what they borrow.
  std::unique_ptr<dictionary::DictionaryManager> manager_;
  std::unique_ptr<dictionary::Recompressor> recompressor_;
  // Null if auto_train is off. After recompressor_: it starts jobs there.
  std::unique_ptr<dictionary::AutoTrainer> auto_trainer_;
  // Takes manager_'s write gate: destroyed (its thread stopped) first.
  std::unique_ptr<Retention> retention_;
};

}  // namespace dictlog::engine

#endif  // DICTLOG_SERVER_ENGINE_LOG_ENGINE_H_
