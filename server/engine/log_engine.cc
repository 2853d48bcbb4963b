#include "server/engine/log_engine.h"

#include <algorithm>
#include <cstdio>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "server/block/block_reader.h"
#include "codec/record_codec.h"
#include "server/pool/names.h"
#include "server/store/keys.h"

namespace dictlog::engine {
namespace {

// Times DecodeRead reads failed records again while gc keeps retiring dictionaries.
constexpr int kMaxRereads = 8;

absl::Status ValidateOptions(const EngineOptions& options) {
  if (options.max_record_bytes > codec::kMaxRecordBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_record_bytes ", options.max_record_bytes, " exceeds the format limit ",
        codec::kMaxRecordBytes));
  }
  if (options.replicated_log != nullptr &&
      options.default_pool_options.storage_mode() == v1::STORAGE_MODE_BLOCK) {
    return absl::InvalidArgumentError("cluster mode keeps pools in record mode (block mode "
                                      "is not replicated yet): default storage_mode block");
  }
  if (options.max_batch_records == 0 || options.max_multiget_ids == 0 ||
      options.max_response_bytes == 0) {
    return absl::InvalidArgumentError("batch and response limits must be positive");
  }
  return pool::ValidatePoolOptions(options.default_pool_options);
}

// The append time of each scanned record of pool `pool_id` (in seq order: one seek).
absl::StatusOr<std::vector<std::optional<int64_t>>> ChunkTimes(
    const store::Store& store, uint32_t pool_id,
    const std::vector<store::ScannedRecord>& chunk) {
  std::vector<store::RecordRef> refs;
  refs.reserve(chunk.size());
  for (const store::ScannedRecord& r : chunk) refs.push_back({pool_id, r.seq});
  return store.AppendTimes(refs);
}

}  // namespace

absl::StatusOr<std::unique_ptr<LogEngine>> LogEngine::Open(EngineOptions options) {
  RETURN_IF_ERROR(ValidateOptions(options));
  ASSIGN_OR_RETURN(pool::Router router, pool::Router::Create(options.routes));
  ASSIGN_OR_RETURN(std::unique_ptr<store::Store> store,
                   store::Store::Open(options.store));
  const store::WalDrops& dropped = store->wal_dropped_at_open();
  if (dropped.reports > 0) {
    std::fprintf(stderr,
                 "dictlogd: WARNING: recovering the write-ahead log stopped at a damaged or "
                 "cut record; the writes logged from it on were not replayed (RocksDB: %s). "
                 "After a power loss without --sync_writes that is the unsynced tail; "
                 "otherwise the log was damaged and acknowledged writes are lost. RocksDB's "
                 "LOG file in the data directory has its account.\n",
                 dropped.first.c_str());
  }
  if (dropped.synced_writes_lost) {
    std::fprintf(stderr,
                 "dictlogd: WARNING: writes the store acknowledged as synced are missing "
                 "(%s): a write-ahead log was damaged, cut or deleted\n",
                 dropped.synced_lost_why.c_str());
  }
  // The dropped writes may have held leases: ids they covered may have been given out,
  // and would be again. Every pool, and any pool created later, starts past them (ADR
  // 0044). Cluster mode takes its seqs from the log.
  const uint64_t skip = (dropped.reports > 0 || dropped.synced_writes_lost) &&
                                options.replicated_log == nullptr
                            ? pool::Pool::kRestoreLease
                            : 0;
  ASSIGN_OR_RETURN(std::unique_ptr<pool::PoolRegistry> registry,
                   pool::PoolRegistry::Load(store.get(), options.default_pool_options, skip));
  if (skip != 0) {
    std::fprintf(stderr,
                 "dictlogd: WARNING: every pool's ids go on %llu seqs past where the "
                 "log's replay left them, so no id lost with the dropped writes is "
                 "given again\n",
                 static_cast<unsigned long long>(pool::Pool::kRestoreLease));
  }
  for (const std::shared_ptr<pool::Pool>& pool : registry->List()) {
    if (pool->newest_unreadable().ok()) continue;
    std::fprintf(stderr,
                 "dictlogd: WARNING: pool '%s': its newest records cannot be read (%s); it "
                 "goes on from its seq lease, %llu, and reads of the damaged records are "
                 "DATA_LOSS\n",
                 pool->name().c_str(), pool->newest_unreadable().ToString().c_str(),
                 static_cast<unsigned long long>(pool->next_seq()));
  }
  for (const auto& [name, pool_options] : options.pools) {
    if (registry->Find(name) != nullptr) continue;
    RETURN_IF_ERROR(registry->Create(name, pool_options).status());
  }
  std::unique_ptr<LogEngine> engine(new LogEngine(
      std::move(options), std::move(router), std::move(store), std::move(registry)));
  for (const std::string& name : engine->names_.mixed_pools()) {
    std::fprintf(stderr,
                 "dictlogd: pool '%s' holds categories of different token scopes; "
                 "with --isolate_scopes its appends are refused\n",
                 name.c_str());
  }
  RETURN_IF_ERROR(engine->OpenDictionaries());
  RETURN_IF_ERROR(engine->RecoverBlockTails());
  if (engine->options_.replicated_log == nullptr) {  // Cluster mode's seqs are the log's.
    // Not fatal (a full disk): reads still serve, and each pool's first append leases.
    if (absl::Status s = pool::Pool::LeaseAll(engine->registry_->List(), *engine->store_);
        !s.ok()) {
      std::fprintf(stderr, "dictlogd: seq leases not written at start (%s): each pool "
                   "writes its own at its first append\n", s.ToString().c_str());
    }
  }
  engine->retention_ = std::make_unique<Retention>(
      engine->store_.get(), engine->registry_.get(), &engine->dictionaries_,
      &engine->manager_->write_gate(), engine->options_.retention);
  return engine;
}

absl::Status LogEngine::OpenDictionaries() {
  dictionary::DictionaryManagerOptions manager_options = options_.dictionaries;
  if (options_.replicated_log != nullptr) {  // Dictionaries travel in the log.
    manager_options.publish = [this](storage::DictionaryRecord record, bool activate,
                                     uint32_t base_id) {
      return PublishDictionary(std::move(record), activate, base_id);
    };
  }
  ASSIGN_OR_RETURN(manager_, dictionary::DictionaryManager::Load(
                                 store_.get(), registry_.get(), &dictionaries_,
                                 manager_options));
  if (!manager_->unreadable_at_open().ok()) {
    std::fprintf(stderr,
                 "dictlogd: WARNING: %s; records that name them read as DATA_LOSS, and no "
                 "dictionary id is given again (ids go on from the stored id lease)\n",
                 manager_->unreadable_at_open().ToString().c_str());
  }
  dictionary::RecompressorOptions recompressor_options = options_.recompressor;
  if (!recompressor_options.parallel_for) {  // Jobs re-encode on idle encode helpers too.
    recompressor_options.parallel_for = [this](size_t n, absl::FunctionRef<void(size_t)> task) {
      encode_workers_.ParallelFor(n, task);
    };
  }
  ASSIGN_OR_RETURN(recompressor_, dictionary::Recompressor::Load(
                                      store_.get(), registry_.get(), &dictionaries_,
                                      manager_.get(), recompressor_options));
  if (!options_.auto_train) return absl::OkStatus();
  auto_trainer_ = std::make_unique<dictionary::AutoTrainer>(
      manager_.get(), &drift_, options_.auto_trainer,
      [this](const dictionary::AutoActivation& activation) { OnAutoActivated(activation); },
      [this](const std::string& pool) { OnFirstNotActivated(pool); },
      [this](const std::string& name) -> std::shared_ptr<const pool::Pool> {
        std::shared_ptr<pool::Pool> pool = registry_->Find(name);
        if (pool == nullptr || !TrainsHere(*pool)) return nullptr;
        return pool;
      });
  return absl::OkStatus();
}

void LogEngine::OnAutoActivated(const dictionary::AutoActivation& activation) {
  // Cluster mode re-encodes nothing on its own: every node stores the same frames.
  if (options_.replicated_log != nullptr) return;
  if (!activation.drift) {
    if (options_.recompress_first_dictionary) RecompressFirst(activation.pool);
    return;
  }
  std::shared_ptr<pool::Pool> pool = registry_->Find(activation.pool);
  if (pool == nullptr) return;
  const v1::PoolOptions options = pool->options();
  if (!options.auto_upkeep()) return;  // Manual: dictlog recompress, dict gc.
  const uint32_t min_gain = pool::UpkeepMinGainPercent(options);
  if (100 * activation.gain < min_gain) {
    std::fprintf(stderr,
                 "dictlogd: pool '%s': no automatic upkeep: gain %+.1f%% < %u%%\n",
                 activation.pool.c_str(), 100 * activation.gain, min_gain);
    return;
  }
  Upkeep(activation.pool);
}

void LogEngine::Upkeep(const std::string& pool) {
  absl::StatusOr<v1::RecompressStatus> job =
      recompressor_->Start(pool, [this](const std::string& done) {
        absl::StatusOr<std::vector<v1::DictionaryInfo>> retired =
            manager_->Gc(/*dry_run=*/false, done);
        if (retired.ok()) {
          ++upkeep_runs_;
          std::fprintf(stderr, "dictlogd: pool '%s': upkeep: re-encoded, %zu unreferenced "
                       "dictionaries retired\n", done.c_str(), retired->size());
        } else {
          std::fprintf(stderr, "dictlogd: pool '%s': upkeep gc failed: %s\n", done.c_str(),
                       retired.status().ToString().c_str());
        }
      });
  if (job.ok()) {
    std::fprintf(stderr, "dictlogd: pool '%s': upkeep: re-encoding %llu records with its "
                 "new dictionary\n", pool.c_str(),
                 static_cast<unsigned long long>(job->records_total()));
  } else {
    std::fprintf(stderr, "dictlogd: pool '%s': upkeep failed to start: %s\n", pool.c_str(),
                 job.status().ToString().c_str());
  }
}

dictionary::DriftSignal LogEngine::DriftOf(const pool::Pool& pool) const {
  const uint32_t active = pool.active_dictionary_id();
  if (active == 0) return {};
  return drift_.Signal(pool.id(), active, manager_->DriftReferenceRatio(active));
}

void LogEngine::OnFirstNotActivated(const std::string& pool) {
  std::shared_ptr<pool::Pool> found = registry_->Find(pool);
  if (found == nullptr || options_.replicated_log != nullptr) return;
  {
    absl::MutexLock lock(&compress_now_mu_);
    if (!compress_now_.insert(found->id()).second) return;  // Done already.
  }
  if (!options_.recompress_first_dictionary || options_.raw_before_dictionary_bytes == 0) {
    return;  // Nothing was stored raw.
  }
  std::fprintf(stderr, "dictlogd: pool '%s': no first dictionary yet: its records are "
               "compressed without one from now on\n", pool.c_str());
  RecompressFirst(pool);  // Compresses what it stored raw (no dictionary: the level's).
}

void LogEngine::RecompressFirst(const std::string& pool) {
  // Appends that looked up the pool's encoder before this have written once the gate
  // is free: the job's last seq covers every record stored raw or without dictionary.
  // A job still running (the first dictionary's, when a growth follows it) is followed
  // by one over the records up to then: its own covers those before its start only.
  { absl::MutexLock gate(&manager_->write_gate()); }
  absl::StatusOr<v1::RecompressStatus> job = recompressor_->StartOrFollow(pool);
  if (job.ok()) {
    std::fprintf(stderr,
                 "dictlogd: pool '%s': re-encoding with its first dictionary the "
                 "records stored before it (of %llu)\n",
                 pool.c_str(), static_cast<unsigned long long>(job->records_total()));
  } else {
    std::fprintf(stderr, "dictlogd: pool '%s': re-encoding before its first dictionary "
                 "failed to start: %s\n", pool.c_str(), job.status().ToString().c_str());
  }
}

absl::Status LogEngine::RecoverBlockTails() {
  for (const std::shared_ptr<pool::Pool>& pool : registry_->List()) {
    if (!pool->block_mode()) continue;
    // A failure (a corrupt block of the store) must not keep the server down: the
    // pool's newest records stay single values; reads of corrupt ones are DATA_LOSS.
    absl::Status status = sealer_.RecoverTail(*pool);
    if (!status.ok()) {
      std::fprintf(stderr, "dictlogd: pool '%s': recovering its open block tail failed: %s\n",
                   pool->name().c_str(), status.ToString().c_str());
    }
  }
  return absl::OkStatus();
}

LogEngine::LogEngine(EngineOptions options, pool::Router router,
                     std::unique_ptr<store::Store> store,
                     std::unique_ptr<pool::PoolRegistry> registry)
    : options_(std::move(options)),
      router_(std::move(router)),
      store_(std::move(store)),
      registry_(std::move(registry)),
      names_(options_.names, &router_, registry_.get(), store_.get()),
      dictionaries_(
          [store = store_.get()](uint32_t id) { return store->DictionaryContent(id); },
          options_.dictionary_cache),
      // Held bytes come out of the block cache's budget (ADR 0038).
      decoded_blocks_(
          std::min(options_.decoded_block_cache_bytes, store_->block_cache_budget() / 2),
          [store = store_.get()](size_t held) { store->ReserveBlockCache(held); }),
      sealer_(store_.get(), &dictionaries_),
      follows_(options_.follow),
      encode_workers_(std::max<size_t>(options_.encode_threads, 1)),
      drift_(options_.drift_window_bytes) {}

LogEngine::~LogEngine() {
  // A clean close leaves each leased pool's lease at its next seq, so the next open
  // skips none (after a crash it skips to the lease).
  std::vector<store::SeqCeiling> exact;
  for (const std::shared_ptr<pool::Pool>& pool : registry_->List()) {
    if (std::optional<store::SeqCeiling> lease = pool->ExactLease()) exact.push_back(*lease);
  }
  if (exact.empty()) return;
  if (absl::Status s = store_->PutSeqCeilings(exact); !s.ok()) {
    std::fprintf(stderr, "dictlogd: seq leases not written at close (%s): the next start "
                 "skips up to %llu seqs in each pool that took appends\n",
                 s.ToString().c_str(), static_cast<unsigned long long>(pool::Pool::kSeqLease));
  }
}

absl::Status LogEngine::ValidateAppend(absl::Span<const AppendInput> records) const {
  if (records.empty()) return absl::InvalidArgumentError("no records to append");
  if (records.size() > options_.max_batch_records) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch of ", records.size(), " records exceeds the limit of ",
                     options_.max_batch_records));
  }
  for (size_t i = 0; i < records.size(); ++i) {
    // A run of one category is checked once.
    const bool same = i > 0 && records[i].category == records[i - 1].category;
    absl::Status status =
        same ? absl::OkStatus() : pool::ValidateName(records[i].category, "category");
    if (status.ok() && records[i].payload.size() > options_.max_record_bytes) {
      status = absl::InvalidArgumentError(
          absl::StrCat("payload of ", records[i].payload.size(),
                       " bytes exceeds --max_record_bytes=", options_.max_record_bytes));
    }
    if (!status.ok()) {
      if (records.size() == 1) return status;
      return absl::InvalidArgumentError(
          absl::StrCat("record ", i, ": ", status.message()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> LogEngine::Append(
    absl::Span<const AppendInput> records, absl::string_view request_id,
    absl::string_view principal) {
  RETURN_IF_ERROR(ValidateAppend(records));
  if (request_id.empty()) return AppendOnce(records, nullptr);
  RETURN_IF_ERROR(pool::ValidateName(request_id, "request id"));
  if (principal.size() > store::kMaxPrincipalBytes) {
    return absl::InvalidArgumentError("principal longer than 255 bytes");
  }
  const uint64_t fingerprint = RequestFingerprint(records);
  // A retry arriving while its first attempt still runs waits for it here; another
  // principal's request with the same id does not.
  std::unique_ptr<InFlightRequests::Slot> slot =
      in_flight_requests_.Acquire(store::RequestKey(principal, request_id));
  absl::StatusOr<storage::AppendedRequest> earlier =
      store_->GetAppendedRequest(request_id, principal);
  if (earlier.ok()) return EarlierIds(request_id, fingerprint, *earlier);
  if (!absl::IsNotFound(earlier.status())) return earlier.status();
  store::RequestWrite request;
  request.request_id = std::string(request_id);
  request.principal = std::string(principal);
  request.entry.set_created_unix_ms(absl::ToUnixMillis(store_->Now()));
  request.entry.set_fingerprint(fingerprint);
  return AppendOnce(records, &request);
}

absl::StatusOr<std::vector<std::string>> LogEngine::EarlierIds(
    absl::string_view request_id, uint64_t fingerprint,
    const storage::AppendedRequest& earlier) const {
  if (earlier.fingerprint() != fingerprint) {
    return absl::AlreadyExistsError(absl::StrCat(
        "request id ", request_id, " was used by an append of other records"));
  }
  std::vector<std::string> ids;
  for (const storage::AppendedRequest::IdRun& run : earlier.runs()) {
    std::shared_ptr<pool::Pool> pool = registry_->FindById(run.pool_id());
    if (pool == nullptr && registry_->WasAllocated(run.pool_id())) {
      return absl::FailedPreconditionError(absl::StrCat(
          "request id ", request_id, " appended to a pool that was deleted since"));
    }
    if (pool == nullptr) {
      return absl::DataLossError(absl::StrCat("request id ", request_id,
                                              " names unknown pool id ", run.pool_id()));
    }
    for (uint64_t k = 0; k < run.count(); ++k) {
      ids.push_back(pool::FormatRecordId(pool->name(), run.first_seq() + k));
    }
  }
  return ids;
}

absl::StatusOr<std::vector<std::string>> LogEngine::AppendOnce(
    absl::Span<const AppendInput> records, store::RequestWrite* request,
    const Placement* placement) {
  // New pools and categories first, all or none: a refused append leaves nothing.
  RETURN_IF_ERROR(names_.Admit(records));
  if (options_.replicated_log != nullptr && placement == nullptr) {
    return AppendToLog(records, request);
  }
  std::vector<std::shared_ptr<pool::Pool>> pools(records.size());
  absl::StatusOr<std::vector<std::string>> ids;
  {
    // Dictionary gc waits for appends holding this, so none of the dictionaries they
    // encode with can disappear before their records are written.
    absl::ReaderMutexLock gate(&manager_->write_gate());
    TailAdditions tails;
    ids = AppendValidated(records, &pools, &tails, request, placement);
    if (ids.ok()) SealBlocks(tails);
  }
  if (ids.ok() && auto_trainer_ != nullptr) {
    pool::Pool* last = nullptr;
    for (const std::shared_ptr<pool::Pool>& pool : pools) {
      if (pool.get() != last && TrainsHere(*pool)) auto_trainer_->Notify(*pool);
      last = pool.get();
    }
  }
  return ids;
}

void LogEngine::SealBlocks(const TailAdditions& tails) {
  for (const auto& [pool, added] : tails) {
    // The records are durable as single values already: a failed seal costs only
    // space, and the next append to the pool retries it.
    absl::Status status =
        sealer_.AddAndSeal(*pool, added.written, added.first, added.sealed_own);
    if (!status.ok()) {
      std::fprintf(stderr, "dictlogd: sealing a block of pool '%s' failed: %s\n",
                   pool->name().c_str(), status.ToString().c_str());
    }
  }
}

absl::StatusOr<std::vector<std::string>> LogEngine::AppendValidated(
    absl::Span<const AppendInput> records, std::vector<std::shared_ptr<pool::Pool>>* out,
    TailAdditions* tails, store::RequestWrite* request, const Placement* placement) {
  std::vector<std::shared_ptr<pool::Pool>>& pools = *out;
  // One time per call (a logged batch's: the writer's).
  const int64_t now_ms =
      placement != nullptr ? placement->now_ms : absl::ToUnixMillis(store_->Now());
  std::vector<uint32_t> categories(records.size());
  PoolBatches batch;
  RETURN_IF_ERROR(RouteBatch(records, now_ms, placement, &pools, &categories, &batch));
  std::vector<store::RecordWrite> writes(records.size());
  RETURN_IF_ERROR(EncodeBatch(records, pools, categories, placement, &batch,
                              &writes));
  if (placement != nullptr) {  // The log's seqs; later local ones start after them.
    for (size_t i = 0; i < records.size(); ++i) {
      writes[i].seq = placement->seqs[i];
      PoolBatch& pb = batch[pools[i].get()];
      pb.next_seq = std::max(pb.next_seq, writes[i].seq + 1);
    }
    for (auto& [pool, pb] : batch) {  // Before AdvanceSeqs: a new feed starts below.
      pb.first_seq = follows_.ReserveApplied(*pool, pb.next_seq - 1);
      if (pb.first_seq == 0) pb.first_seq = pb.next_seq;  // Nothing to land.
    }
    for (size_t i = 0; i < records.size(); ++i) pools[i]->AdvanceSeqs(writes[i].seq + 1);
  } else {
    for (auto& [pool, pb] : batch) {
      pb.next_seq = follows_.Reserve(*pool, pb.added.records);
      pb.first_seq = pb.next_seq;
      if (pool->indexed_from_seq() != 0) (*tails)[pool].first = pb.next_seq;
    }
    PoolBatch* pb = nullptr;
    for (size_t i = 0; i < records.size(); ++i) {
      if (i == 0 || pools[i] != pools[i - 1]) pb = &batch[pools[i].get()];
      writes[i].seq = pb->next_seq++;
    }
  }
  std::vector<store::BlockWrite> blocks;
  for (auto& [pool, pb] : batch) {
    for (store::BlockWrite& block : pb.sealed) {
      // Planned over the pool's positions: its seqs are first_seq + position.
      block.first_seq += pb.first_seq;
      block.last_seq += pb.first_seq;
      blocks.push_back(std::move(block));
    }
  }

  if (request != nullptr) {
    for (size_t i = 0; i < records.size(); ++i) {
      AddToIdRuns(writes[i].pool_id, writes[i].seq, &request->entry);
    }
  }
  absl::Status written;
  if (placement == nullptr) {  // Ids are given only under a durable lease.
    for (const auto& [pool, pb] : batch) {
      if (written.ok()) written = pool->CoverSeqs(pb.next_seq, *store_);
    }
  }
  if (written.ok()) {
    written = store_->WriteRecords(writes, request,
                                   placement != nullptr ? placement->applied : nullptr, blocks);
  }
  if (!written.ok()) {
    for (const auto& [pool, added] : *tails) pool->tail().Land(added.first, {});
    tails->clear();
    for (const auto& [pool, pb] : batch) {
      // An applied message's range stays pending: the materializer applies it again.
      if (placement == nullptr) follows_.Land(*pool, pb.first_seq, pb.added.records, nullptr);
    }
    return written;
  }
  for (const auto& [pool, pb] : batch) {
    pool->AddCounters(pb.added);
    raw_before_dictionary_ += pb.raw_records;
    // The time reads give these records: this call's entry, or the bucket's.
    const int64_t time_ms = pb.time_ms != 0 ? pb.time_ms : pool->last_time_entry_ms();
    drift_.Record(pool->id(), pb.encoder ? pb.encoder->id() : 0, pb.drift_raw,
                  pb.drift_stored);
    if (pb.time_ms != 0) pool->set_last_time_entry_ms(pb.time_ms);
    if (placement != nullptr) {
      if (pb.next_seq > pb.first_seq) {
        follows_.Land(*pool, pb.first_seq, pb.next_seq - pb.first_seq, [&, pool = pool] {
          return AppliedRecords(*pool, *out, writes, time_ms);
        });
      }
      continue;
    }
    follows_.Land(*pool, pb.first_seq, pb.added.records, [&, pool = pool] {
      return FollowedRecords(*pool, records, *out, writes, time_ms);
    });
  }
  if (placement == nullptr) AddToTails(pools, writes, batch, tails);
  std::vector<std::string> ids;
  ids.reserve(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    ids.push_back(pool::FormatRecordId(pools[i]->name(), writes[i].seq));
  }
  return ids;
}

std::vector<v1::Record> LogEngine::FollowedRecords(
    const pool::Pool& pool, absl::Span<const AppendInput> records,
    absl::Span<const std::shared_ptr<pool::Pool>> pools,
    absl::Span<const store::RecordWrite> writes, int64_t time_ms) {
  std::vector<v1::Record> followed;
  for (size_t i = 0; i < records.size(); ++i) {  // In seq order within the pool.
    if (pools[i].get() != &pool) continue;
    v1::Record& record = followed.emplace_back();
    record.set_id(pool::FormatRecordId(pool.name(), writes[i].seq));
    record.set_category(std::string(records[i].category));
    record.set_payload(std::string(records[i].payload));
    if (time_ms != 0) record.set_append_time_unix_ms(time_ms);
  }
  return followed;
}

bool LogEngine::NewTimeEntry(const pool::Pool& pool, int64_t now_ms) const {
  const int64_t bucket = absl::ToInt64Milliseconds(options_.append_time_resolution);
  const int64_t last = pool.last_time_entry_ms();
  if (bucket <= 0 || last == 0) return true;
  return now_ms / bucket != last / bucket;
}

absl::Status LogEngine::MissingRecord(const pool::Pool& pool, uint64_t seq) {
  const std::string id = pool::FormatRecordId(pool.name(), seq);
  if (seq < pool.first_seq()) {
    return absl::NotFoundError(absl::StrCat(
        "record ", id, " is not this pool's: its ids start at ",
        pool::FormatRecordId(pool.name(), pool.first_seq()),
        " (a pool of that name was deleted, or lost with writes the store dropped, "
        "before it was created)"));
  }
  if (seq < pool.retained_from()) {
    return absl::NotFoundError(absl::StrCat(
        "record ", id, " expired: retention deleted the pool's records before ",
        pool::FormatRecordId(pool.name(), pool.retained_from())));
  }
  if (const auto lost = pool.LostRangeHolding(seq)) return LostRecords(pool, *lost);
  return absl::NotFoundError(absl::StrCat("no record ", id));
}

absl::Status LogEngine::CutAtLostSeqs(const pool::Pool& pool, uint64_t from,
                                      std::vector<store::ScannedRecord>* chunk) {
  uint64_t expected = from;  // The next seq a record could have.
  for (size_t i = 0; i < chunk->size(); ++i) {
    const uint64_t seq = (*chunk)[i].seq;
    if (const auto lost = pool.FirstLostIn(expected, seq)) {
      if (i == 0) return LostRecords(pool, *lost);
      chunk->resize(i);  // Answered; the next chunk starts at the gap.
      return absl::OkStatus();
    }
    expected = seq + 1;
  }
  if (chunk->empty()) {  // The pool's end: nothing stored from `from` on.
    if (const auto lost = pool.FirstLostIn(from, pool.next_seq())) {
      return LostRecords(pool, *lost);
    }
  }
  return absl::OkStatus();
}

absl::Status LogEngine::LostRecords(const pool::Pool& pool,
                                    const std::pair<uint64_t, uint64_t>& lost) {
  return absl::DataLossError(absl::StrCat(
      "records ", pool::FormatRecordId(pool.name(), lost.first), " to ",
      pool::FormatRecordId(pool.name(), lost.second),
      " (those that existed) were lost to a damaged table block when this store was "
      "salvaged (docs/operations.md, \"Salvaging a damaged store\")"));
}

absl::StatusOr<std::shared_ptr<pool::Pool>> LogEngine::FindPool(
    absl::string_view name) const {
  std::shared_ptr<pool::Pool> pool = registry_->Find(name);
  if (pool != nullptr) return pool;
  if (registry_->WasDeleted(name)) {
    return absl::NotFoundError(absl::StrCat("no pool '", name, "': the pool was deleted"));
  }
  return absl::NotFoundError(absl::StrCat("no pool '", name, "'"));
}

std::vector<absl::StatusOr<codec::DecodedRecord>> LogEngine::DecodeRead(
    absl::Span<const store::RecordRef> refs, absl::Span<const absl::string_view> values,
    uint64_t read_at, block::ByteBudget* budget, absl::Span<const uint64_t> indexed_from) const {
  std::vector<absl::StatusOr<codec::DecodedRecord>> decoded;
  if (values.size() == 1 && budget == nullptr && indexed_from.empty()) {
    decoded.push_back(block::DecodeOne(*store_, ReadLookup(), refs[0], values[0]));
  } else {
    decoded = block::DecodeStored(*store_, ReadLookup(), refs, values, budget, indexed_from,
                                  &decoded_blocks_);
  }
  for (int reread = 0; reread < kMaxRereads; ++reread) {
    const uint64_t now = manager_->RetiredGeneration();
    if (now == read_at) break;  // A failure is not gc's doing.
    read_at = now;
    std::vector<size_t> failed;
    std::vector<store::RecordRef> again;
    for (size_t i = 0; i < decoded.size(); ++i) {
      // A record the budget refused was not read for its dictionary: nothing to redo.
      if (decoded[i].ok() || absl::IsResourceExhausted(decoded[i].status())) continue;
      failed.push_back(i);
      again.push_back(refs[i]);
    }
    if (failed.empty()) break;
    std::vector<absl::StatusOr<std::string>> fresh = store_->MultiGetRecords(again);
    std::vector<store::RecordRef> fresh_refs;
    std::vector<absl::string_view> fresh_values;
    std::vector<uint64_t> fresh_from;
    std::vector<size_t> positions;
    for (size_t k = 0; k < failed.size(); ++k) {
      const uint64_t from = indexed_from.empty() ? 0 : indexed_from[failed[k]];
      // Sealing moves a record into an indexed block; otherwise records are never
      // deleted: keep the first error.
      if (!fresh[k].ok() && (from == 0 || !absl::IsNotFound(fresh[k].status()))) continue;
      fresh_refs.push_back(again[k]);
      fresh_values.push_back(fresh[k].ok() ? absl::string_view(*fresh[k]) : "");
      fresh_from.push_back(fresh[k].ok() ? 0 : from);
      positions.push_back(failed[k]);
    }
    std::vector<absl::StatusOr<codec::DecodedRecord>> redecoded = block::DecodeStored(
        *store_, ReadLookup(), fresh_refs, fresh_values, nullptr, fresh_from);
    for (size_t k = 0; k < positions.size(); ++k) {
      decoded[positions[k]] = std::move(redecoded[k]);
    }
  }
  return decoded;
}

void LogEngine::SetLookupHookForTest(LookupHook::Hook hook) {
  lookup_hook_ =
      hook ? std::make_unique<LookupHook>(&dictionaries_, std::move(hook)) : nullptr;
}

absl::StatusOr<v1::Record> LogEngine::ToRecord(
    const pool::Pool& pool, uint64_t seq,
    absl::StatusOr<codec::DecodedRecord> decoded) const {
  std::string id = pool::FormatRecordId(pool.name(), seq);
  // A gap in an indexed block's seqs, or a block retention deleted as it was read.
  if (absl::IsNotFound(decoded.status())) return MissingRecord(pool, seq);
  if (!decoded.ok()) {
    return absl::Status(decoded.status().code(),
                        absl::StrCat("record ", id, ": ", decoded.status().message()));
  }
  v1::Record record;
  ASSIGN_OR_RETURN(*record.mutable_category(), pool.CategoryName(decoded->category_index));
  record.set_id(std::move(id));
  record.set_payload(std::move(decoded->payload));
  return record;
}

absl::StatusOr<LogEngine::StoredValue> LogEngine::ReadStored(absl::string_view id,
                                                             bool blocks_first) const {
  ASSIGN_OR_RETURN(pool::RecordId parsed, pool::ParseRecordId(id));
  RETURN_IF_ERROR(AppliedHere(parsed, nullptr));
  StoredValue stored;
  ASSIGN_OR_RETURN(stored.pool, FindPool(parsed.pool));
  stored.seq = parsed.seq;
  if (parsed.seq < stored.pool->retained_from()) return MissingRecord(*stored.pool, parsed.seq);
  if (blocks_first && ReadBlocksFirst(*stored.pool, parsed.seq)) {
    stored.indexed_from = IndexedFrom(*stored.pool, parsed.seq);
    stored.blocks_first = true;
    return stored;
  }
  absl::StatusOr<std::string> value = store_->GetRecord({stored.pool->id(), parsed.seq});
  if (absl::IsNotFound(value.status())) {
    stored.indexed_from = IndexedFrom(*stored.pool, parsed.seq);
    if (stored.indexed_from != 0) return stored;
    return MissingRecord(*stored.pool, parsed.seq);
  }
  RETURN_IF_ERROR(value.status());
  stored.value = *std::move(value);
  return stored;
}

absl::StatusOr<codec::DecodedRecord> LogEngine::DecodeStoredValue(const StoredValue& stored,
                                                                   uint64_t read_at) const {
  const store::RecordRef ref{stored.pool->id(), stored.seq};
  const absl::string_view value = stored.value;
  if (stored.indexed_from != 0) {  // Sealed into an indexed block.
    return std::move(DecodeRead({&ref, 1}, {&value, 1}, read_at, nullptr,
                                {&stored.indexed_from, 1})[0]);
  }
  // The common case without DecodeRead's vector; a failure goes through it.
  absl::StatusOr<codec::DecodedRecord> decoded =
      block::DecodeOne(*store_, ReadLookup(), ref, value);
  if (!decoded.ok() && manager_->RetiredGeneration() != read_at) {
    decoded = std::move(DecodeRead({&ref, 1}, {&value, 1}, read_at)[0]);
  }
  return decoded;
}

absl::StatusOr<v1::Record> LogEngine::Get(absl::string_view id) const {
  const uint64_t read_at = manager_->RetiredGeneration();
  ASSIGN_OR_RETURN(StoredValue stored, ReadStored(id, /*blocks_first=*/true));
  stored.pool->CountReads(1);
  const store::RecordRef ref{stored.pool->id(), stored.seq};
  absl::StatusOr<codec::DecodedRecord> decoded = DecodeStoredValue(stored, read_at);
  if (stored.blocks_first && absl::IsNotFound(decoded.status())) {
    // Rare (a record that fills a block alone, a gap, a seal that committed between
    // the two reads): read again records family first, as MultiGet does; sealing only
    // ever moves a record from there into a block.
    ASSIGN_OR_RETURN(stored, ReadStored(id));
    decoded = DecodeStoredValue(stored, read_at);
  }
  if (!decoded.ok() && stored.seq < stored.pool->retained_from()) {
    return MissingRecord(*stored.pool, stored.seq);  // Its block went as it was read.
  }
  ASSIGN_OR_RETURN(v1::Record record, ToRecord(*stored.pool, stored.seq, std::move(decoded)));
  ASSIGN_OR_RETURN(const std::vector<std::optional<int64_t>> time,
                   store_->AppendTimes({&ref, 1}));
  if (time[0].has_value()) record.set_append_time_unix_ms(*time[0]);
  return record;
}

absl::StatusOr<std::vector<absl::StatusOr<v1::Record>>> LogEngine::MultiGet(
    absl::Span<const std::string> ids, const Interrupt& interrupt) const {
  std::vector<absl::StatusOr<v1::Record>> results;
  results.reserve(std::min(ids.size(), options_.max_multiget_ids));
  RETURN_IF_ERROR(ReadInChunks(ids, interrupt,
                               [&](absl::Span<const std::string> chunk, block::ByteBudget* budget) {
                                 MultiGetChunk(chunk, budget, &results);
                               }));
  return results;
}

absl::Status LogEngine::ReadInChunks(absl::Span<const std::string> ids,
                                     const Interrupt& interrupt,
                                     const ChunkReader& read_chunk) const {
  if (ids.size() > options_.max_multiget_ids) {
    return absl::InvalidArgumentError(absl::StrCat(
        "MultiGet of ", ids.size(), " ids exceeds the limit of ", options_.max_multiget_ids));
  }
  block::ByteBudget budget(options_.max_response_bytes);
  for (size_t start = 0; start < ids.size(); start += kReadChunkIds) {
    // Between chunks only: asking costs a gRPC handler a poll of its completion queue
    // (4% of a served block2k MultiGet's CPU when asked before every call's first chunk).
    // Past the budget a chunk reads nothing: no work left to stop.
    if (start > 0 && interrupt && !budget.exhausted()) RETURN_IF_ERROR(interrupt());
    read_chunk(ids.subspan(start, kReadChunkIds), &budget);
  }
  return absl::OkStatus();
}

LogEngine::ChunkRefs LogEngine::ResolveIds(absl::Span<const std::string> ids,
                                           absl::Span<absl::Status> errors) const {
  ChunkRefs chunk;
  absl::flat_hash_map<std::pair<uint32_t, uint64_t>, size_t> distinct_index;
  absl::flat_hash_set<std::string> waited;  // Pools AppliedHere waited for.
  // Each pool found looked up once: a chunk's ids mostly name a few pools, and a lookup
  // takes the registry's lock and a reference (shared by every reading thread). A pool
  // not found is looked up again for each id: in cluster mode AppliedHere may wait for
  // a later id until the record that creates the pool is applied.
  absl::flat_hash_map<std::string, pool::Pool*> named;
  for (size_t i = 0; i < ids.size(); ++i) {
    absl::StatusOr<pool::RecordId> parsed = pool::ParseRecordId(ids[i]);
    absl::Status applied = parsed.ok() ? AppliedHere(*parsed, &waited) : parsed.status();
    if (!applied.ok()) {
      errors[i] = std::move(applied);
      continue;
    }
    pool::Pool* pool = nullptr;
    if (auto at = named.find(parsed->pool); at != named.end()) {
      pool = at->second;
    } else {
      absl::StatusOr<std::shared_ptr<pool::Pool>> found = FindPool(parsed->pool);
      if (!found.ok()) {
        errors[i] = found.status();
        continue;
      }
      chunk.held.push_back(*std::move(found));
      pool = chunk.held.back().get();
      named.emplace(parsed->pool, pool);
    }
    const store::RecordRef ref{pool->id(), parsed->seq};
    auto [it, added] =
        distinct_index.try_emplace({ref.pool_id, ref.seq}, chunk.distinct.size());
    if (added) chunk.distinct.push_back(ref);
    chunk.positions.push_back(i);
    chunk.refs.push_back(ref);
    chunk.distinct_of.push_back(it->second);
    chunk.pools.push_back(pool);
  }
  return chunk;
}

std::vector<absl::StatusOr<std::string>> LogEngine::ReadWithinBudget(
    absl::Span<const store::RecordRef> refs, const block::ByteBudget& budget) const {
  // A stored value is at most its payload plus a header byte and a category index, or
  // (a block entry) at most 21 bytes of header, category index, block and entry number.
  constexpr uint64_t kMostStoredOverhead = 24;
  constexpr size_t kLeastReadIds = 16;
  const uint64_t most_record = std::max<uint64_t>(options_.max_record_bytes, 1);
  uint64_t allowance = budget.remaining();  // Payload bytes the budget can still take.
  bool first = !budget.admitted_any();      // The first record is taken whatever its size.
  uint64_t stored = 0;
  std::vector<absl::StatusOr<std::string>> values;
  values.reserve(refs.size());
  for (size_t start = 0; start < refs.size() && stored <= allowance;) {
    const size_t n = std::min(
        refs.size() - start,
        std::max<size_t>(kLeastReadIds, (allowance - stored) / most_record));
    for (absl::StatusOr<std::string>& value :
         store_->MultiGetRecords(refs.subspan(start, n))) {
      if (value.ok()) {
        if (first) allowance += value->size();
        first = false;
        stored += value->size();
        allowance += kMostStoredOverhead;
      }
      values.push_back(std::move(value));
    }
    start += n;
  }
  return values;
}

LogEngine::ChunkValues LogEngine::ReadChunk(absl::Span<const std::string> ids,
                                            const block::ByteBudget& budget,
                                            bool blocks_first) const {
  ChunkValues read;
  read.errors.resize(ids.size());
  read.cut = ids.size();
  if (budget.exhausted()) {  // Nothing more is answered in this call.
    read.cut = 0;
    return read;
  }
  read.chunk = ResolveIds(ids, absl::MakeSpan(read.errors));
  read.read_at = manager_->RetiredGeneration();
  const std::vector<bool> sealed =
      blocks_first ? SealedRecords(read.chunk) : std::vector<bool>();
  read.values = ReadUnsealed(read.chunk.distinct, sealed, budget);
  const ChunkRefs& chunk = read.chunk;
  for (size_t j = 0; j < chunk.refs.size(); ++j) {
    const size_t i = chunk.positions[j];
    if (chunk.distinct_of[j] >= read.values.size()) {
      read.cut = i;
      break;
    }
    const absl::StatusOr<std::string>& value = read.values[chunk.distinct_of[j]];
    const pool::Pool& pool = *chunk.pools[j];
    const uint64_t seq = chunk.refs[j].seq;
    // Absent from the records family: expired, or maybe sealed into an indexed block.
    const uint64_t from = seq < pool.retained_from() ? 0 : IndexedFrom(pool, seq);
    if ((absl::IsNotFound(value.status()) && from == 0) ||
        (!value.ok() && seq < pool.retained_from())) {
      read.errors[i] = MissingRecord(pool, seq);  // Or expired.
    } else if (!value.ok() && !absl::IsNotFound(value.status())) {
      read.errors[i] = value.status();
    } else {
      read.found.push_back(j);
      read.found_refs.push_back(chunk.refs[j]);
      read.encoded.push_back(value.ok() ? absl::string_view(*value) : "");
      read.indexed_from.push_back(value.ok() ? 0 : from);
      if (!sealed.empty()) read.blocks_first.push_back(sealed[chunk.distinct_of[j]]);
    }
  }
  return read;
}

std::vector<bool> LogEngine::SealedRecords(const ChunkRefs& chunk) const {
  std::vector<bool> sealed(chunk.distinct.size(), false);
  for (size_t j = 0; j < chunk.refs.size(); ++j) {
    sealed[chunk.distinct_of[j]] = ReadBlocksFirst(*chunk.pools[j], chunk.refs[j].seq);
  }
  return sealed;
}

std::vector<absl::StatusOr<std::string>> LogEngine::ReadUnsealed(
    absl::Span<const store::RecordRef> refs, const std::vector<bool>& sealed,
    const block::ByteBudget& budget) const {
  if (std::find(sealed.begin(), sealed.end(), true) == sealed.end()) {
    return ReadWithinBudget(refs, budget);
  }
  std::vector<store::RecordRef> rest;
  std::vector<size_t> rest_at;  // Into refs.
  for (size_t d = 0; d < refs.size(); ++d) {
    if (sealed[d]) continue;
    rest.push_back(refs[d]);
    rest_at.push_back(d);
  }
  std::vector<absl::StatusOr<std::string>> read = ReadWithinBudget(rest, budget);
  const size_t cut = read.size() < rest.size() ? rest_at[read.size()] : refs.size();
  std::vector<absl::StatusOr<std::string>> values;
  values.reserve(cut);
  for (size_t d = 0, r = 0; d < cut; ++d) {
    if (sealed[d]) {
      values.push_back(absl::Status(absl::StatusCode::kNotFound, ""));  // No allocation.
    } else {
      values.push_back(std::move(read[r++]));
    }
  }
  return values;
}

bool LogEngine::MissedInBlocks(
    const ChunkValues& read, absl::Span<const absl::StatusOr<codec::DecodedRecord>> decoded) {
  for (size_t k = 0; k < read.blocks_first.size(); ++k) {
    if (read.blocks_first[k] && absl::IsNotFound(decoded[k].status())) return true;
  }
  return false;
}

void LogEngine::MultiGetChunk(absl::Span<const std::string> ids, block::ByteBudget* budget,
                              std::vector<absl::StatusOr<v1::Record>>* all) const {
  const block::ByteBudget before = *budget;
  ChunkValues read = ReadChunk(ids, *budget, /*blocks_first=*/true);
  // In request order: grouping by dictionary did not pay in dict_bench (benchmarks/results/HISTORY.md).
  std::vector<absl::StatusOr<codec::DecodedRecord>> decoded =
      DecodeRead(read.found_refs, read.encoded, read.read_at, budget, read.indexed_from);
  if (MissedInBlocks(read, decoded)) {
    // Rare: read the chunk again, the records family first (sealing only ever moves a
    // record from there into a block), with what the first pass took given back so
    // that the budget admits records in request order. The first pass's values and
    // records go first: a call holds one pass's worth at a time.
    decoded.clear();
    decoded.shrink_to_fit();
    read = ChunkValues();
    *budget = before;
    read = ReadChunk(ids, *budget);
    decoded = DecodeRead(read.found_refs, read.encoded, read.read_at, budget, read.indexed_from);
  }
  absl::Span<absl::StatusOr<v1::Record>> results = AppendErrors(read.errors, all);
  const absl::StatusOr<std::vector<std::optional<int64_t>>> times =
      store_->AppendTimes(read.found_refs);
  size_t exhausted_from = read.cut;
  for (size_t k = 0; k < read.found.size(); ++k) {
    const size_t j = read.found[k];
    if (absl::IsResourceExhausted(decoded[k].status())) {
      exhausted_from = read.chunk.positions[j];
      break;
    }
    pool::Pool& pool = *read.chunk.pools[j];
    const uint64_t seq = read.chunk.refs[j].seq;
    pool.CountReads(1);
    absl::StatusOr<v1::Record>& result = results[read.chunk.positions[j]];
    if (!decoded[k].ok() && seq < pool.retained_from()) {
      result = MissingRecord(pool, seq);  // Its block went as it was read.
      continue;
    }
    result = ToRecord(pool, seq, std::move(decoded[k]));
    if (!times.ok()) {
      if (result.ok()) result = times.status();
    } else if (result.ok() && (*times)[k].has_value()) {
      result->set_append_time_unix_ms(*(*times)[k]);
    }
  }
  ExhaustFrom(exhausted_from, budget, results);
}

absl::StatusOr<std::vector<store::ScannedRecord>> LogEngine::ScanChunk(
    const pool::Pool& pool, uint64_t seq, uint64_t* read_at) const {
  absl::StatusOr<std::vector<store::ScannedRecord>> chunk;
  for (int reread = 0; reread <= kMaxRereads; ++reread) {
    chunk = block::ScanPool(*store_, ReadLookup(), pool.id(), pool.indexed_from_seq(), seq,
                            kScanChunkRecords, kScanChunkBytes);
    // An indexed block decoded while a gc retired its old dictionary (a re-compression
    // rewrote it first) is read again.
    const uint64_t now = manager_->RetiredGeneration();
    if (chunk.ok() || now == *read_at) break;
    *read_at = now;
  }
  return chunk;
}

absl::Status LogEngine::Scan(
    const ScanSpec& spec,
    const std::function<absl::Status(std::vector<v1::Record>)>& sink,
    const Interrupt& interrupt) const {
  auto emit = [&](pool::Pool& pool, absl::Span<const store::RecordRef> refs,
                  absl::Span<const absl::string_view> values,
                  uint64_t read_at) -> absl::StatusOr<size_t> {
    block::ByteBudget budget(kScanChunkBytes);
    std::vector<absl::StatusOr<codec::DecodedRecord>> decoded =
        DecodeRead(refs, values, read_at, &budget);
    ASSIGN_OR_RETURN(const std::vector<std::optional<int64_t>> times,
                     store_->AppendTimes(refs));
    std::vector<v1::Record> out;
    for (size_t k = 0; k < refs.size(); ++k) {
      if (absl::IsResourceExhausted(decoded[k].status())) break;  // Past the chunk's bytes.
      ASSIGN_OR_RETURN(v1::Record record, ToRecord(pool, refs[k].seq, std::move(decoded[k])));
      if (times[k].has_value()) record.set_append_time_unix_ms(*times[k]);
      out.push_back(std::move(record));
    }
    const size_t answered = out.size();
    pool.CountReads(answered);
    if (answered > 0) RETURN_IF_ERROR(sink(std::move(out)));
    return answered;
  };
  return ScanChunks(spec, emit, interrupt);
}

absl::Status LogEngine::ScanChunks(const ScanSpec& spec, const ScanEmit& emit,
                                   const Interrupt& interrupt) const {
  if (spec.category.empty() == spec.pool.empty()) {
    return absl::InvalidArgumentError("Scan needs exactly one of category and pool");
  }
  if (!spec.category.empty()) RETURN_IF_ERROR(pool::ValidateName(spec.category, "category"));
  const std::string pool_name =
      spec.category.empty() ? spec.pool : router_.Route(spec.category);
  ASSIGN_OR_RETURN(std::shared_ptr<pool::Pool> pool, FindPool(pool_name));
  uint64_t seq = 1;
  if (!spec.from_id.empty()) {
    ASSIGN_OR_RETURN(seq, SeqInTarget("from_id", spec.from_id, "scanned", spec.category,
                                      pool_name));
  }
  seq = std::max(seq, pool->retained_from());  // What retention left.
  const bool ranged = spec.since_ms.has_value() || spec.until_ms.has_value();
  if (ranged) {
    ASSIGN_OR_RETURN(const std::optional<uint64_t> start, TimeRangeStart(spec, *pool, seq));
    if (!start.has_value()) return absl::OkStatus();  // Nothing at or after `since`.
    seq = *start;
  }
  const int64_t since = spec.since_ms.value_or(INT64_MIN);
  const int64_t until = spec.until_ms.value_or(INT64_MAX);
  std::optional<uint32_t> only_category;
  if (!spec.category.empty()) {
    only_category = pool->FindCategoryIndex(spec.category);
    if (!only_category.has_value()) return absl::OkStatus();  // Never stored.
  }
  uint64_t remaining = spec.limit == 0 ? UINT64_MAX : spec.limit;
  bool until_reached = false;
  while (remaining > 0 && !until_reached) {
    if (interrupt) RETURN_IF_ERROR(interrupt());
    uint64_t read_at = manager_->RetiredGeneration();
    ASSIGN_OR_RETURN(std::vector<store::ScannedRecord> chunk, ScanChunk(*pool, seq, &read_at));
    RETURN_IF_ERROR(CutAtLostSeqs(*pool, seq, &chunk));
    if (chunk.empty()) break;
    scanned_records_.fetch_add(chunk.size(), std::memory_order_relaxed);
    std::vector<std::optional<int64_t>> times;
    if (ranged) {
      ASSIGN_OR_RETURN(times, ChunkTimes(*store_, pool->id(), chunk));
    }
    std::vector<store::RecordRef> refs;
    std::vector<absl::string_view> values;
    for (size_t i = 0; i < chunk.size(); ++i) {
      const store::ScannedRecord& scanned = chunk[i];
      if (remaining == 0) break;
      if (ranged && times[i].has_value() && *times[i] >= until) {
        until_reached = true;  // Times follow seqs: nothing later is in the range.
        break;
      }
      seq = scanned.seq + 1;
      // No time (stored before times were kept), or a concurrent call's slightly
      // earlier time: not in the range.
      if (ranged && (!times[i].has_value() || *times[i] < since)) continue;
      if (only_category.has_value()) {
        ASSIGN_OR_RETURN(codec::RecordView view, codec::ParseRecord(scanned.value));
        if (view.category_index != *only_category) continue;
      }
      refs.push_back({pool->id(), scanned.seq});
      values.push_back(scanned.value);
      --remaining;
    }
    ASSIGN_OR_RETURN(const size_t answered, emit(*pool, refs, values, read_at));
    if (answered < refs.size()) {  // The next chunk starts with the first not answered.
      seq = refs[answered].seq;
      remaining += refs.size() - answered;
      until_reached = false;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<uint64_t>> LogEngine::TimeRangeStart(const ScanSpec& spec,
                                                                  const pool::Pool& pool,
                                                                  uint64_t seq) const {
  if (spec.since_ms.has_value() && spec.until_ms.has_value() &&
      *spec.since_ms > *spec.until_ms) {
    return absl::InvalidArgumentError(absl::StrCat(
        "since_unix_ms ", *spec.since_ms, " is after until_unix_ms ", *spec.until_ms));
  }
  ASSIGN_OR_RETURN(std::optional<uint64_t> start,
                   store_->FirstSeqAtOrAfterTime(pool.id(), spec.since_ms.value_or(INT64_MIN)));
  if (!start.has_value()) return start;
  return std::max(*start, seq);
}

}  // namespace dictlog::engine
