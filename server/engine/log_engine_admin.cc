// LogEngine's administrative calls: pools, dictionaries, re-compression, frames.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "server/engine/backup_root.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "server/block/block_reader.h"
#include "codec/record_codec.h"
#include "server/engine/log_engine.h"
#include "server/pool/names.h"
#include "server/pool/pool_registry.h"

namespace dictlog::engine {
namespace {

// `refused` (LogEngine::RefusedInCluster's answer) for a pool admin call `what`, with
// what to do instead: every node must hold the same pools, so they come from the config.
absl::Status PoolAdminRefused(absl::Status refused, absl::string_view what) {
  if (refused.ok()) return refused;
  return absl::FailedPreconditionError(absl::StrCat(
      what, " is not available in cluster mode: it would change this node's pools "
      "alone. Declare pools and routes in the --config file, the same on every node "
      "(each node creates them at start; a pool is recorded in dictlog.meta when "
      "first used; docs/cluster.md)"));
}

// Verify's list of the seq ranges a salvage lost in `pool` (pool::Pool::lost_seqs):
// each counted in lost_ranges, at most max_listed listed in all.
void ListLostSeqs(const pool::Pool& pool, size_t max_listed, v1::VerifyResponse* response) {
  for (const auto& [first, last] : pool.lost_seqs()) {
    response->set_lost_ranges(response->lost_ranges() + 1);
    if (static_cast<size_t>(response->lost_size()) >= max_listed) continue;
    v1::VerifyResponse::LostRange* lost = response->add_lost();
    lost->set_pool(pool.name());
    lost->set_first_id(pool::FormatRecordId(pool.name(), first));
    lost->set_last_id(pool::FormatRecordId(pool.name(), last));
  }
}

}  // namespace

absl::StatusOr<v1::GetFrameResponse> LogEngine::GetFrame(absl::string_view id) const {
  const uint64_t read_at = manager_->RetiredGeneration();
  ASSIGN_OR_RETURN(StoredValue stored, ReadStored(id));
  codec::RecordView view;
  if (stored.indexed_from == 0) {
    ASSIGN_OR_RETURN(view, codec::ParseRecord(stored.value));
  } else {
    view.encoding = codec::Encoding::kBlockEntry;  // In an indexed block.
  }
  v1::GetFrameResponse response;
  response.set_id(std::string(id));
  if (view.encoding == codec::Encoding::kBlockEntry) {
    // A block frame holds many records: export this one alone, without a dictionary.
    const store::RecordRef ref{stored.pool->id(), stored.seq};
    const absl::string_view value = stored.value;
    absl::StatusOr<codec::DecodedRecord> read = std::move(DecodeRead(
        {&ref, 1}, {&value, 1}, read_at, nullptr,
        stored.indexed_from != 0 ? absl::MakeConstSpan(&stored.indexed_from, 1)
                                 : absl::Span<const uint64_t>())[0]);
    if (absl::IsNotFound(read.status()) ||
        (!read.ok() && stored.seq < stored.pool->retained_from())) {
      return MissingRecord(*stored.pool, stored.seq);  // Or its block expired as it was read.
    }
    ASSIGN_OR_RETURN(codec::DecodedRecord decoded, std::move(read));
    std::string single;
    RETURN_IF_ERROR(codec::EncodeRecord(decoded.payload, codec::EncodeOptions(), &single));
    ASSIGN_OR_RETURN(*response.mutable_frame(), codec::StandardFrame(single));
    return response;
  }
  ASSIGN_OR_RETURN(*response.mutable_frame(), codec::StandardFrame(stored.value));
  response.set_dictionary_id(view.dictionary_id);
  if (view.dictionary_id != 0) {
    response.set_dictionary_check(manager_->ContentCheck(view.dictionary_id));
  }
  return response;
}

absl::StatusOr<std::vector<std::string>> LogEngine::PoolCategoriesOf(
    absl::string_view id) const {
  ASSIGN_OR_RETURN(pool::RecordId parsed, pool::ParseRecordId(id));
  ASSIGN_OR_RETURN(std::shared_ptr<pool::Pool> pool, FindPool(parsed.pool));
  return CategoriesOfPool(*pool);
}

absl::StatusOr<std::vector<std::string>> LogEngine::PoolCategories(
    absl::string_view name) const {
  ASSIGN_OR_RETURN(std::shared_ptr<pool::Pool> pool, FindPool(name));
  return CategoriesOfPool(*pool);
}

std::vector<std::string> LogEngine::CategoriesOfPool(const pool::Pool& pool) const {
  std::vector<std::string> categories = pool.Categories();
  if (router_.Route(pool.name()) == pool.name()) categories.push_back(pool.name());
  return categories;
}

absl::StatusOr<v1::VerifyResponse> LogEngine::Verify(
    const v1::VerifyRequest& request, const std::function<bool()>& cancelled) const {
  std::vector<std::shared_ptr<pool::Pool>> pools;
  if (request.pool().empty()) {
    pools = registry_->List();
  } else {
    ASSIGN_OR_RETURN(std::shared_ptr<pool::Pool> pool, FindPool(request.pool()));
    pools.push_back(std::move(pool));
  }
  // The response must stay well under a client's receive limit whatever a caller asks:
  // an entry is an id and one error message (a few hundred bytes).
  constexpr size_t kMostListed = 10000;
  const size_t max_listed = request.max_listed() == 0
                                ? 100
                                : std::min<size_t>(request.max_listed(), kMostListed);
  v1::VerifyResponse response;
  for (const std::shared_ptr<pool::Pool>& pool : pools) {
    // Records sealed between the two passes are in both: the second skips them. (One
    // snapshot for both would serve values older than a pass's gc re-read guard.)
    std::vector<uint64_t> tail_seqs;
    absl::Status status = VerifyPool(*pool, max_listed, cancelled, &response, &tail_seqs);
    if (status.ok()) {
      status = VerifyIndexedBlocks(*pool, max_listed, cancelled, tail_seqs, &response);
    }
    if (absl::IsCancelled(status)) return status;
    if (!status.ok()) {
      response.add_pool_errors(absl::StrCat(pool->name(), ": ", status.ToString()));
    }
    response.set_pools_checked(response.pools_checked() + 1);
    ListLostSeqs(*pool, max_listed, &response);
  }
  return response;
}

absl::Status LogEngine::VerifyPool(const pool::Pool& pool, size_t max_listed,
                                   const std::function<bool()>& cancelled,
                                   v1::VerifyResponse* response,
                                   std::vector<uint64_t>* tail_seqs) const {
  constexpr size_t kChunk = 256;
  const uint64_t indexed_from = pool.indexed_from_seq();
  uint64_t seq = 1;
  while (true) {
    if (cancelled()) return absl::CancelledError("Verify cancelled");
    const uint64_t read_at = manager_->RetiredGeneration();
    ASSIGN_OR_RETURN(std::vector<store::ScannedRecord> chunk,
                     store_->ScanRecords(pool.id(), seq, kChunk, kScanChunkBytes));
    if (chunk.empty()) return absl::OkStatus();
    std::vector<store::RecordRef> refs;
    std::vector<absl::string_view> values;
    for (const store::ScannedRecord& record : chunk) {
      refs.push_back({pool.id(), record.seq});
      values.push_back(record.value);
    }
    std::vector<absl::StatusOr<codec::DecodedRecord>> decoded =
        DecodeRead(refs, values, read_at);
    for (size_t i = 0; i < chunk.size(); ++i) {
      absl::Status status = decoded[i].status();
      if (status.ok()) status = pool.CategoryName(decoded[i]->category_index).status();
      response->set_records_checked(response->records_checked() + 1);
      if (indexed_from != 0 && chunk[i].seq >= indexed_from) tail_seqs->push_back(chunk[i].seq);
      if (status.ok()) continue;
      response->set_corrupt_records(response->corrupt_records() + 1);
      if (static_cast<size_t>(response->corrupt_size()) < max_listed) {
        v1::VerifyResponse::Corrupt* corrupt = response->add_corrupt();
        corrupt->set_id(pool::FormatRecordId(pool.name(), chunk[i].seq));
        corrupt->set_error(status.ToString());
      }
    }
    seq = chunk.back().seq + 1;
  }
}

absl::Status LogEngine::VerifyIndexedBlocks(const pool::Pool& pool, size_t max_listed,
                                            const std::function<bool()>& cancelled,
                                            absl::Span<const uint64_t> counted,
                                            v1::VerifyResponse* response) const {
  constexpr size_t kChunkBlocks = 64;
  constexpr int kRereads = 8;
  const uint64_t from = pool.indexed_from_seq();
  uint64_t seq = from;
  int rereads = 0;
  while (from != 0) {
    if (cancelled()) return absl::CancelledError("Verify cancelled");
    const uint64_t read_at = manager_->RetiredGeneration();
    ASSIGN_OR_RETURN(std::vector<store::IndexedBlock> blocks,
                     store_->ScanIndexedBlocks(pool.id(), from, seq, kChunkBlocks));
    if (blocks.empty()) return absl::OkStatus();
    for (const store::IndexedBlock& block : blocks) {
      absl::StatusOr<block::IndexedContent> content =
          block::DecodeIndexedBlock(ReadLookup(), block);
      if (!content.ok() && manager_->RetiredGeneration() != read_at && rereads < kRereads) {
        ++rereads;  // A gc retired its dictionary during the read: read it again.
        break;
      }
      seq = block.last_seq + 1;
      absl::Status status = content.status();
      for (size_t k = 0; status.ok() && k < content->entries.size(); ++k) {
        status = pool.CategoryName(content->entries[k].category_index).status();
      }
      // A block that does not decode counts every seq of its range (its records but
      // for gaps) as checked and corrupt; it is listed once, by its first id. Records
      // the records pass counted (sealed since) are not counted again.
      uint64_t records = 0;
      if (content.ok()) {
        for (const codec::IndexedEntry& entry : content->entries) {
          records += std::binary_search(counted.begin(), counted.end(), entry.seq) ? 0 : 1;
        }
      } else {
        records = block.last_seq - block.first_seq + 1 -
                  static_cast<uint64_t>(
                      std::upper_bound(counted.begin(), counted.end(), block.last_seq) -
                      std::lower_bound(counted.begin(), counted.end(), block.first_seq));
      }
      response->set_records_checked(response->records_checked() + records);
      if (status.ok()) continue;
      response->set_corrupt_records(response->corrupt_records() + records);
      if (static_cast<size_t>(response->corrupt_size()) < max_listed) {
        v1::VerifyResponse::Corrupt* corrupt = response->add_corrupt();
        corrupt->set_id(pool::FormatRecordId(pool.name(), block.first_seq));
        corrupt->set_error(status.ToString());
      }
    }
  }
  return absl::OkStatus();
}

std::vector<v1::PoolInfo> LogEngine::ListPools() const {
  std::vector<v1::PoolInfo> infos;
  const dictionary::DictionaryManager::ServerHeat heat = manager_->Heat();
  for (const std::shared_ptr<pool::Pool>& pool : registry_->List()) {
    infos.push_back(InfoOf(*pool, heat));
  }
  return infos;
}

absl::StatusOr<v1::PoolInfo> LogEngine::GetPool(absl::string_view name) const {
  ASSIGN_OR_RETURN(std::shared_ptr<pool::Pool> pool, FindPool(name));
  return InfoOf(*pool);
}

absl::StatusOr<v1::PoolInfo> LogEngine::CreatePool(absl::string_view name,
                                                   const v1::PoolOptions& options) {
  RETURN_IF_ERROR(PoolAdminRefused(RefusedInCluster("CreatePool"), "CreatePool"));
  ASSIGN_OR_RETURN(std::shared_ptr<pool::Pool> pool, names_.CreatePool(name, options));
  return InfoOf(*pool);
}

absl::StatusOr<v1::PoolInfo> LogEngine::UpdatePool(absl::string_view name,
                                                   const v1::PoolOptions& update) {
  RETURN_IF_ERROR(PoolAdminRefused(RefusedInCluster("UpdatePool"), "UpdatePool"));
  ASSIGN_OR_RETURN(std::shared_ptr<pool::Pool> pool, registry_->Update(name, update));
  return InfoOf(*pool);
}

v1::PoolInfo LogEngine::InfoOf(const pool::Pool& pool) const {
  return InfoOf(pool, manager_->Heat());
}

v1::PoolInfo LogEngine::InfoOf(const pool::Pool& pool,
                               const dictionary::DictionaryManager::ServerHeat& heat) const {
  v1::PoolInfo info = pool.Info();
  SetOldestRetained(pool, &info);
  const dictionary::ModeChoice next = manager_->NextMode(pool, heat);
  info.set_next_dictionary_mode(next.mode);
  info.set_dictionary_mode_reason(next.reason);
  const dictionary::DriftSignal drift = DriftOf(pool);
  info.set_drift_recent_ratio(drift.recent_ratio);
  info.set_drift_activation_ratio(drift.activation_ratio);
  info.set_drift_degraded_percent(drift.degraded_percent);
  info.set_drift_window_full(drift.full);
  if (auto_trainer_ != nullptr) {
    info.set_drift_retrains(auto_trainer_->DriftRetrains(pool.id()));
    info.set_drift_reactivations(auto_trainer_->DriftReactivations(pool.id()));
  }
  return info;
}

void LogEngine::SetOldestRetained(const pool::Pool& pool, v1::PoolInfo* info) const {
  // The oldest record is the first of the oldest indexed block or one in the records
  // family before it (whose scan stops there).
  // Both from one moment, or a seal between them could hide the oldest records.
  uint64_t seq = UINT64_MAX;
  std::unique_ptr<store::ReadSnapshot> snapshot;  // Record mode: one read, none needed.
  if (pool.indexed_from_seq() != 0) {
    snapshot = store_->Snapshot();
    absl::StatusOr<std::vector<store::IndexedBlock>> block = store_->ScanIndexedBlocks(
        pool.id(), pool.indexed_from_seq(), pool.retained_from(), 1, snapshot.get());
    if (!block.ok()) return;  // Info is best effort: no field.
    if (!block->empty()) seq = block->front().first_seq;
  }
  absl::StatusOr<std::vector<store::ScannedRecord>> oldest = store_->ScanRecords(
      pool.id(), pool.retained_from(), 1, SIZE_MAX, seq, snapshot.get());
  if (!oldest.ok()) return;
  if (!oldest->empty()) seq = oldest->front().seq;
  if (seq == UINT64_MAX) return;  // No record.
  info->set_oldest_retained_id(pool::FormatRecordId(pool.name(), seq));
  const store::RecordRef ref{pool.id(), seq};
  absl::StatusOr<std::vector<std::optional<int64_t>>> time = store_->AppendTimes({&ref, 1});
  if (time.ok() && (*time)[0].has_value()) {
    info->set_oldest_retained_time_unix_ms(*(*time)[0]);
  }
}

v1::DictionaryCacheStats LogEngine::DictionaryCacheStats() const {
  const dictionary::DictionaryCacheStats s = dictionaries_.stats();
  v1::DictionaryCacheStats out;
  out.set_hits(s.hits);
  out.set_misses(s.misses);
  out.set_builds(s.builds);
  out.set_evictions(s.evictions);
  out.set_bytes(s.bytes);
  out.set_entries(s.entries);
  out.set_pinned(s.pinned);
  out.set_budget_bytes(options_.dictionary_cache.budget_bytes);
  return out;
}

absl::StatusOr<v1::TrainDictionaryResponse> LogEngine::TrainDictionary(
    const v1::TrainDictionaryRequest& request) {
  return manager_->Train(request.pool(), request.dictionary_bytes(), request.activate(),
                         "train");
}

absl::StatusOr<v1::ListDictionariesResponse> LogEngine::ListDictionaries(
    const v1::ListDictionariesRequest& request) const {
  ASSIGN_OR_RETURN(std::vector<v1::DictionaryInfo> infos, manager_->List(request.pool()));
  v1::ListDictionariesResponse response;
  for (v1::DictionaryInfo& info : infos) {
    std::shared_ptr<pool::Pool> pool = info.active() ? registry_->Find(info.pool()) : nullptr;
    if (pool != nullptr) {
      const dictionary::DriftSignal drift = DriftOf(*pool);
      if (drift.dictionary_id == info.id()) {
        info.set_recent_ratio(drift.recent_ratio);
        info.set_recent_raw_bytes(drift.recent_raw_bytes);
        info.set_degraded_percent(drift.degraded_percent);
        info.set_recent_window_full(drift.full);
      }
    }
    *response.add_dictionaries() = std::move(info);
  }
  return response;
}

absl::StatusOr<v1::DictionaryInfo> LogEngine::ActivateDictionary(
    const v1::ActivateDictionaryRequest& request) {
  if (options_.replicated_log != nullptr) return ActivateInLog(request);
  return manager_->Activate(request.pool(), request.id());
}

absl::StatusOr<v1::GetDictionaryResponse> LogEngine::GetDictionary(
    const v1::GetDictionaryRequest& request) const {
  return manager_->Get(request.id());
}

absl::StatusOr<v1::DictionaryInfo> LogEngine::ImportDictionary(
    const v1::ImportDictionaryRequest& request) {
  RETURN_IF_ERROR(RefusedInCluster("ImportDictionary"));
  if (request.content().size() > options_.max_import_dictionary_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dictionary of ", request.content().size(),
        " bytes exceeds --max_import_dictionary_bytes=",
        options_.max_import_dictionary_bytes));
  }
  return manager_->Import(request.pool(), request.content(), request.activate());
}

absl::StatusOr<v1::GcDictionariesResponse> LogEngine::GcDictionaries(
    const v1::GcDictionariesRequest& request) {
  RETURN_IF_ERROR(RefusedInCluster("GcDictionaries"));
  ASSIGN_OR_RETURN(std::vector<v1::DictionaryInfo> deleted, manager_->Gc(request.dry_run()));
  v1::GcDictionariesResponse response;
  for (v1::DictionaryInfo& info : deleted) *response.add_deleted() = std::move(info);
  return response;
}

absl::StatusOr<v1::RecompressStatus> LogEngine::Recompress(
    const v1::RecompressRequest& request) {
  RETURN_IF_ERROR(RefusedInCluster("Recompress"));
  // Done: the pool's key ranges are compacted before the job shows DONE, so the values
  // it replaced leave the disk (appends outrun training since ADR 0021: most of a pool
  // loaded at once is re-encoded, and its old versions would stay in SST files).
  return recompressor_->Start(request.pool(), [this](const std::string& name) {
    std::shared_ptr<pool::Pool> pool = registry_->Find(name);
    if (pool == nullptr) return;
    absl::Status compacted = store_->CompactPool(pool->id(), /*rewrite_bottom=*/false);
    if (!compacted.ok()) {
      std::fprintf(stderr, "dictlogd: pool '%s': compacting after re-compression failed: %s\n",
                   name.c_str(), compacted.ToString().c_str());
    }
  });
}

absl::StatusOr<v1::RecompressStatus> LogEngine::GetRecompressStatus(
    const v1::RecompressRequest& request) const {
  return recompressor_->Status(request.pool());
}

bool LogEngine::WaitForAutoTrainingForTest(absl::Duration timeout) {
  return auto_trainer_ == nullptr || auto_trainer_->WaitIdle(timeout);
}

absl::StatusOr<v1::FlushResponse> LogEngine::Flush() {
  v1::FlushResponse response;
  ASSIGN_OR_RETURN(const uint64_t bytes, store_->Flush());
  response.set_table_file_bytes(bytes);
  return response;
}

absl::StatusOr<uint64_t> LogEngine::CheckpointWithLeases(const std::string& dir) {
  ASSIGN_OR_RETURN(const uint64_t sequence, store_->Checkpoint(dir));
  if (options_.replicated_log != nullptr) return sequence;  // Seqs come from the log.
  // Leased in the copy itself, from what it holds: a pool created while the backup
  // ran is in the copy with its first lease only, which a lease of the live pools
  // taken before the checkpoint would miss.
  store::Store::Options copy_options = options_.store;
  copy_options.path = dir;
  absl::Status leased = [&]() -> absl::Status {
    ASSIGN_OR_RETURN(std::unique_ptr<store::Store> copy, store::Store::Open(copy_options));
    return pool::PoolRegistry::Load(copy.get(), options_.default_pool_options,
                                    pool::Pool::kRestoreLease)
        .status();
  }();
  if (!leased.ok()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);  // Unleased, a restore could reuse ids.
    return absl::Status(leased.code(), absl::StrCat("leasing the backup's seqs in ", dir,
                                                    " (removed): ", leased.message()));
  }
  return sequence;
}

absl::StatusOr<v1::BackupResponse> LogEngine::Backup(const v1::BackupRequest& request) {
  const absl::Time start = absl::Now();
  v1::BackupResponse response;
  ASSIGN_OR_RETURN(std::string dir, ConfineBackupDir(options_.backup_root, request.dir()));
  // The copy holds leases far ahead: restored, its pools start past every id this
  // store gives after the backup (unless a pool takes 2^32 of them), not after the
  // copy's newest record (ADRs 0041, 0044).
  ASSIGN_OR_RETURN(const uint64_t sequence, CheckpointWithLeases(dir));
  response.set_dir(std::move(dir));
  response.set_sequence_number(sequence);
  std::error_code error;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(response.dir(), error)) {
    if (!entry.is_regular_file(error)) continue;
    response.set_files(response.files() + 1);
    response.set_bytes(response.bytes() + entry.file_size(error));
  }
  response.set_duration_ms(absl::ToInt64Milliseconds(absl::Now() - start));
  return response;
}

bool LogEngine::WaitForRecompressForTest(absl::string_view pool, absl::Duration timeout) {
  return recompressor_->WaitForTest(pool, timeout);
}

}  // namespace dictlog::engine
