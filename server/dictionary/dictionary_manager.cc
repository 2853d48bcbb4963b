#include "server/dictionary/dictionary_manager.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "training/compact.h"
#include "training/trainer.h"
#include "server/block/block_reader.h"
#include "codec/dictionary_check.h"
#include "codec/record_codec.h"
#include "server/dictionary/dictionary_sizing.h"
#include "server/pool/pool_options.h"
#include "server/store/catalog_convert.h"

namespace dictlog::dictionary {
namespace {

constexpr size_t kSampleChunk = 1024;
// Times a chunk is read again because a gc retired dictionaries meanwhile.
constexpr int kMaxRereads = 8;
constexpr uint32_t kDictionaryMagic = 0xEC30A437;

uint32_t LoadLE32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

void StoreLE32(uint32_t v, std::string* s, size_t at) {
  for (int i = 0; i < 4; ++i) (*s)[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

v1::DictionaryEvaluation ToProto(const trainer::TrainResult& result, uint32_t baseline_id) {
  const trainer::Evaluation& e = result.evaluation;
  v1::DictionaryEvaluation out;
  out.set_records(e.records);
  out.set_raw_bytes(e.raw_bytes);
  out.set_ratio(e.candidate_ratio);
  out.set_baseline_dictionary_id(baseline_id);
  out.set_baseline_ratio(e.baseline_ratio);
  out.set_gain(e.gain);
  out.set_compress_mb_per_s(e.compress_mb_per_s);
  out.set_decompress_mb_per_s(e.decompress_mb_per_s);
  out.set_samples_used(result.samples_used);
  out.set_samples_excluded(result.samples_excluded);
  out.set_train_seconds(result.train_seconds);
  return out;
}

// TrainBestSize as a TrainResult; `note` says what was tried ("tried: 4096/fastcover-d8
// 2.41x, 2048/fastcover-d8 2.52x (kept), ...; 0.12 s").
absl::StatusOr<trainer::TrainResult> TrainSized(const std::vector<std::string>& sample,
                                                const trainer::TrainOptions& options,
                                                absl::string_view baseline,
                                                CandidateSearch search, std::string* note) {
  ASSIGN_OR_RETURN(SizedTrainResult sized, TrainBestSize(sample, options, baseline, search));
  *note = "tried:";
  for (size_t i = 0; i < sized.tried.size(); ++i) {
    absl::StrAppendFormat(note, "%s %s %.2fx%s", i == 0 ? "" : ",",
                          CandidateName(sized.tried[i]), sized.ratios[i],
                          i == sized.best_index ? " (kept)" : "");
  }
  absl::StrAppendFormat(note, "; %.2f s", sized.train_seconds);
  return std::move(sized.best);
}

}  // namespace

absl::StatusOr<std::unique_ptr<DictionaryManager>> DictionaryManager::Load(
    store::Store* store, pool::PoolRegistry* pools, DictionaryCache* dictionaries,
    DictionaryManagerOptions options) {
  std::unique_ptr<DictionaryManager> manager(
      new DictionaryManager(store, pools, dictionaries, options));
  RETURN_IF_ERROR(manager->LoadAll());
  return manager;
}

absl::Status DictionaryManager::LoadAll() {
  // Single-node mode keeps an id lease, so it can go on without dictionaries it cannot
  // read; cluster mode's ids come from the log, which can rebuild them.
  const bool leased = !options_.publish;
  uint32_t lease = 0;
  if (leased) {
    ASSIGN_OR_RETURN(lease, store_->DictionaryIdLease());
  }
  store::ReadableDictionaries stored;
  if (lease == 0) {
    ASSIGN_OR_RETURN(stored.dictionaries, store_->LoadDictionaries());
  } else {
    ASSIGN_OR_RETURN(stored, store_->LoadReadableDictionaries(lease));
  }
  absl::MutexLock lock(&mu_);
  next_id_ = codec::kMinDictionaryId;
  for (storage::DictionaryRecord& record : stored.dictionaries) {
    next_id_ = std::max(next_id_, record.id() + 1);  // Retired ids are never reused.
    if (record.retired()) continue;
    record.set_size_bytes(static_cast<uint32_t>(record.content().size()));
    record.set_compact(codec::IsCompactDictionary(record.content()));
    record.set_content_check(codec::DictionaryCheck(record.content()));
    record.clear_content();  // Decoded on demand by the cache.
    records_[record.id()] = std::move(record);
  }
  if (!stored.damage.ok()) {
    next_id_ = std::max(next_id_, lease);  // The unreadable ones' ids lie below it.
  }
  std::string unreadable;
  if (!stored.unreadable.empty()) {
    unreadable = absl::StrCat(
        stored.unreadable.size(), " dictionary id(s) cannot be read, ",
        stored.unreadable.front(),
        stored.unreadable.size() > 1 ? absl::StrCat(" to ", stored.unreadable.back()) : "",
        " (", stored.damage.message(), ")");
  }
  if (leased && lease < next_id_) {  // A store from before leases, or a lease used up.
    lease = next_id_ + kIdLeaseStep;
    RETURN_IF_ERROR(store_->PutDictionaryIdLease(lease));
  }
  lease_ = lease;
  for (const std::shared_ptr<pool::Pool>& pool : pools_->List()) {
    const uint32_t active = pool->record().active_dictionary_id();
    if (active == 0) continue;
    absl::StatusOr<std::shared_ptr<const codec::DecoderDictionary>> dict =
        dictionaries_->Pin(active);
    if (leased && absl::IsDataLoss(dict.status())) {  // Leased by now (above).
      // Appends go on without a dictionary (Pool::Encoder) until one is activated; the
      // automatic trainer sees a pool without one (Pool::has_active_dictionary).
      const std::string why = absl::StrCat("its active dictionary ", active,
                                           " cannot be read (", dict.status().message(),
                                           "); it goes on without one");
      absl::StrAppend(&unreadable, unreadable.empty() ? "" : "; ", "pool '", pool->name(),
                      "' goes on without its active dictionary ", active);
      pool->SetActiveUnreadable(absl::DataLossError(why));
      continue;
    }
    if (!dict.ok()) {
      return absl::DataLossError(absl::StrCat("pool '", pool->name(), "' names dictionary ",
                                              active, ": ", dict.status().message()));
    }
    pool->SetActiveDictionary(*std::move(dict));
  }
  if (!unreadable.empty()) unreadable_at_open_ = absl::DataLossError(unreadable);
  return absl::OkStatus();
}

absl::StatusOr<uint32_t> DictionaryManager::AllocateId() {
  absl::MutexLock lock(&mu_);
  if (!options_.publish && next_id_ >= lease_) {
    RETURN_IF_ERROR(store_->PutDictionaryIdLease(next_id_ + kIdLeaseStep));
    lease_ = next_id_ + kIdLeaseStep;
  }
  return next_id_++;
}

absl::StatusOr<std::vector<std::string>> DictionaryManager::Sample(
    const pool::Pool& pool, size_t budget_bytes) const {
  std::vector<std::string> newest_first;
  size_t bytes = 0;
  uint64_t before = UINT64_MAX;
  // Block mode: below the newest indexed block the records family holds mostly the
  // deletions of their records; the blocks are sampled after.
  uint64_t after = 0;
  if (pool.indexed_from_seq() != 0) {
    ASSIGN_OR_RETURN(after, store_->LastIndexedSeq(pool.id()));
  }
  int rereads = 0;
  while (bytes < budget_bytes) {
    const uint64_t read_at = RetiredGeneration();
    ASSIGN_OR_RETURN(std::vector<store::ScannedRecord> chunk,
                     store_->LatestRecords(pool.id(), before, kSampleChunk, after));
    std::vector<absl::StatusOr<codec::DecodedRecord>> decoded =
        block::DecodeScanned(*store_, *dictionaries_, pool.id(), chunk);
    const bool failed = std::any_of(decoded.begin(), decoded.end(),
                                    [](const auto& d) { return !d.ok(); });
    // A gc since the read may have retired a dictionary the chunk's old frames named.
    if (failed && RetiredGeneration() != read_at && rereads++ < kMaxRereads) continue;
    for (absl::StatusOr<codec::DecodedRecord>& record : decoded) {
      // A record that cannot be read (damage, a dictionary unreadable since the store
      // opened) is left out of the sample; anything else fails the training.
      if (absl::IsDataLoss(record.status())) continue;
      RETURN_IF_ERROR(record.status());
      bytes += record->payload.size();
      newest_first.push_back(std::move(record->payload));
      if (bytes >= budget_bytes) break;
    }
    if (chunk.size() < kSampleChunk) break;
    before = chunk.back().seq;
  }
  if (bytes < budget_bytes && pool.indexed_from_seq() != 0) {
    RETURN_IF_ERROR(SampleIndexedBlocks(pool, budget_bytes, &bytes, &newest_first));
  }
  std::reverse(newest_first.begin(), newest_first.end());
  return newest_first;
}

absl::Status DictionaryManager::SampleIndexedBlocks(
    const pool::Pool& pool, size_t budget_bytes, size_t* bytes,
    std::vector<std::string>* newest_first) const {
  constexpr size_t kBlocksChunk = 16;
  uint64_t before = UINT64_MAX;
  while (*bytes < budget_bytes) {
    ASSIGN_OR_RETURN(std::vector<store::IndexedBlock> blocks,
                     store_->LatestIndexedBlocks(pool.id(), pool.indexed_from_seq(), before,
                                                 kBlocksChunk));
    for (const store::IndexedBlock& block : blocks) {
      absl::StatusOr<block::IndexedContent> decoded =
          block::DecodeIndexedBlock(*dictionaries_, block);
      if (absl::IsDataLoss(decoded.status())) continue;  // As Sample: left out.
      RETURN_IF_ERROR(decoded.status());
      const block::IndexedContent& content = *decoded;
      for (auto e = content.entries.rbegin(); e != content.entries.rend(); ++e) {
        if (*bytes >= budget_bytes) return absl::OkStatus();
        *bytes += e->payload.size();
        newest_first->emplace_back(e->payload);
      }
    }
    if (blocks.size() < kBlocksChunk) break;
    before = blocks.back().first_seq;
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::DictionaryInfo> DictionaryManager::Add(
    storage::DictionaryRecord record,
    absl::FunctionRef<absl::StatusOr<v1::DictionaryInfo>(const storage::DictionaryRecord&)>
        then) {
  ASSIGN_OR_RETURN(std::shared_ptr<const codec::DecoderDictionary> dict,
                   codec::DecoderDictionary::Create(record.content()));
  record.set_size_bytes(static_cast<uint32_t>(record.content().size()));
  record.set_compact(dict->compact());
  RETURN_IF_ERROR(store_->PutDictionary(record));
  dictionaries_->Insert(std::move(dict));
  record.set_content_check(codec::DictionaryCheck(record.content()));
  record.clear_content();
  if (after_store_for_test_) after_store_for_test_(record.id());
  // A gc from here on finds the dictionary listed; `then` runs before it can.
  absl::MutexLock lock(&mu_);
  if (pools_->FindById(record.pool_id()) == nullptr) {
    // Its pool was deleted while it trained (ForgetPool ran or runs after us).
    dictionaries_->Erase(record.id());
    RETURN_IF_ERROR(store_->RetireDictionary(record));
    return absl::FailedPreconditionError(
        absl::StrCat("pool '", record.pool(), "' was deleted"));
  }
  auto [it, inserted] = records_.insert_or_assign(record.id(), std::move(record));
  return then(it->second);
}

absl::StatusOr<v1::TrainDictionaryResponse> DictionaryManager::Train(
    absl::string_view pool_name, uint32_t dictionary_bytes, bool activate,
    absl::string_view source, size_t sample_bytes, CandidateSearch search) {
  std::shared_ptr<pool::Pool> pool = pools_->Find(pool_name);
  if (pool == nullptr) return absl::NotFoundError(absl::StrCat("no pool '", pool_name, "'"));
  const storage::PoolRecord pool_record = pool->record();
  const bool sized = dictionary_bytes == 0;  // The pool's size: fit it to the data.
  if (sized) dictionary_bytes = pool_record.options().dictionary_bytes();
  v1::PoolOptions size_check;
  size_check.set_dictionary_bytes(dictionary_bytes);
  RETURN_IF_ERROR(pool::ValidatePoolOptions(size_check));
  size_t budget = options_.sample_budget_multiple * dictionary_bytes;
  if (sample_bytes != 0) budget = std::min(budget, sample_bytes);
  ASSIGN_OR_RETURN(std::vector<std::string> sample, Sample(*pool, budget));
  const uint32_t baseline_id = pool_record.active_dictionary_id();
  std::shared_ptr<const codec::DecoderDictionary> baseline = dictionaries_->Find(baseline_id);
  trainer::TrainOptions train_options;
  train_options.dictionary_bytes = dictionary_bytes;
  ASSIGN_OR_RETURN(train_options.dictionary_id, AllocateId());
  train_options.compact = NextMode(*pool).mode == v1::DICTIONARY_MODE_COMPACT;
  train_options.compression_level =
      pool::FrameCompressionLevel(store::FromCatalog(pool_record.options()), train_options.compact);
  // Like with like: a compact candidate is judged against the compact form of a full
  // baseline, or a switch to compact could never show a gain.
  absl::string_view baseline_bytes = baseline ? baseline->content() : absl::string_view();
  std::string compact_baseline;
  if (baseline && train_options.compact && !baseline->compact()) {
    ASSIGN_OR_RETURN(compact_baseline, trainer::MakeCompact(baseline_bytes, {}));
    baseline_bytes = compact_baseline;
  }
  std::string sizes_note;
  absl::StatusOr<trainer::TrainResult> result =
      sized ? TrainSized(sample, train_options, baseline_bytes, search, &sizes_note)
            : trainer::TrainAndEvaluate(sample, train_options, baseline_bytes);
  if (!result.ok()) {
    return absl::Status(result.status().code(),
                        absl::StrCat("pool '", pool_name, "': ", result.status().message()));
  }
  storage::DictionaryRecord record;
  record.set_id(train_options.dictionary_id);
  record.set_pool_id(pool->id());
  record.set_pool(pool->name());
  record.set_content(std::move(result->dictionary));
  record.set_created_unix_ms(absl::ToUnixMillis(absl::Now()));
  record.set_source(std::string(source));
  *record.mutable_evaluation() = store::ToCatalog(ToProto(*result, baseline_id));
  v1::TrainDictionaryResponse response;
  const double gain = result->evaluation.gain;
  const bool activating = activate && gain >= options_.activation_min_gain;
  if (options_.publish) {  // Cluster mode: through the log.
    ASSIGN_OR_RETURN(*response.mutable_dictionary(),
                     options_.publish(std::move(record), activating, baseline_id));
    if (activating && !response.dictionary().active()) {
      response.set_activation_note(
          "not activated: another activation of the pool came first in the log");
      return response;
    }
  } else {
    ASSIGN_OR_RETURN(
        *response.mutable_dictionary(),
        Add(std::move(record),
            [&](const storage::DictionaryRecord& added) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
              return activating ? ActivateLocked(*pool, added.id()) : InfoLocked(added);
            }));
  }
  response.set_activated(activating);
  if (activating) {
    response.set_activation_note(absl::StrFormat("activated: gain %+.1f%% >= %.1f%%",
                                                 100 * gain, 100 * options_.activation_min_gain));
  } else {
    response.set_activation_note(
        activate ? absl::StrFormat("not activated: gain %+.1f%% < %.1f%%", 100 * gain,
                                   100 * options_.activation_min_gain)
                 : "not activated (not requested)");
  }
  if (!sizes_note.empty()) {
    response.set_activation_note(absl::StrCat(response.activation_note(), "; ", sizes_note));
  }
  return response;
}

absl::Status DictionaryManager::AddLogged(storage::DictionaryRecord record) {
  {
    absl::MutexLock lock(&mu_);
    next_id_ = std::max(next_id_, record.id() + 1);
  }
  return Add(std::move(record),
             [&](const storage::DictionaryRecord& added) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
               return InfoLocked(added);
             })
      .status();
}

double DictionaryManager::DriftReferenceRatio(uint32_t id) const {
  absl::MutexLock lock(&mu_);
  if (auto reactivated = reactivated_ratio_.find(id); reactivated != reactivated_ratio_.end()) {
    return reactivated->second;
  }
  auto it = records_.find(id);
  if (it == records_.end()) return 0;
  return it->second.has_evaluation() ? it->second.evaluation().ratio()
                                     : it->second.first_window_ratio();
}

absl::Status DictionaryManager::RecordFirstWindowRatio(uint32_t id, double ratio) {
  absl::MutexLock lock(&mu_);
  auto it = records_.find(id);
  if (it == records_.end()) return absl::NotFoundError(absl::StrCat("no dictionary ", id));
  if (it->second.has_evaluation() || it->second.first_window_ratio() > 0 || ratio <= 0) {
    return absl::OkStatus();
  }
  storage::DictionaryRecord updated = it->second;
  ASSIGN_OR_RETURN(*updated.mutable_content(), store_->DictionaryContent(id));
  updated.set_first_window_ratio(ratio);
  RETURN_IF_ERROR(store_->PutDictionary(updated));
  it->second.set_first_window_ratio(ratio);
  return absl::OkStatus();
}

absl::StatusOr<v1::DictionaryInfo> DictionaryManager::ActivateLocked(const pool::Pool& pool,
                                                                     uint32_t id) {
  auto it = records_.find(id);
  if (it == records_.end()) {
    return absl::NotFoundError(absl::StrCat("no dictionary ", id));
  }
  if (it->second.pool_id() != pool.id()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dictionary ", id, " belongs to pool '", it->second.pool(), "', not '",
        pool.name(), "'"));
  }
  const uint32_t previous = pool.active_dictionary_id();
  ASSIGN_OR_RETURN(std::shared_ptr<const codec::DecoderDictionary> dict,
                   dictionaries_->Pin(id));
  absl::StatusOr<std::shared_ptr<pool::Pool>> updated =
      pools_->SetActiveDictionaryId(pool.name(), id);
  if (!updated.ok()) {
    dictionaries_->Unpin(id);
    return updated.status();
  }
  (*updated)->SetActiveDictionary(std::move(dict));
  if (previous != 0) dictionaries_->Unpin(previous);
  reactivated_ratio_.erase(id);  // ReactivateBest sets it again after this.
  return InfoLocked(it->second);
}

absl::StatusOr<v1::DictionaryInfo> DictionaryManager::Activate(absl::string_view pool_name,
                                                               uint32_t id) {
  std::shared_ptr<pool::Pool> pool = pools_->Find(pool_name);
  if (pool == nullptr) return absl::NotFoundError(absl::StrCat("no pool '", pool_name, "'"));
  absl::MutexLock lock(&mu_);
  return ActivateLocked(*pool, id);
}

absl::StatusOr<uint32_t> DictionaryManager::FindIdentical(const pool::Pool& pool,
                                                          const std::string& content) const {
  std::vector<uint32_t> candidates;  // Same pool, same size: worth reading.
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, record] : records_) {
      if (record.pool_id() == pool.id() && record.size_bytes() == content.size()) {
        candidates.push_back(id);
      }
    }
  }
  for (uint32_t id : candidates) {
    ASSIGN_OR_RETURN(std::string stored, store_->DictionaryContent(id));
    StoreLE32(LoadLE32(content, 4), &stored, 4);  // Compare all but the id.
    if (stored == content) return id;
  }
  return 0;
}

absl::StatusOr<v1::DictionaryInfo> DictionaryManager::ImportedInfo(const pool::Pool& pool,
                                                                   uint32_t id,
                                                                   bool activate) {
  absl::MutexLock lock(&mu_);
  if (activate) return ActivateLocked(pool, id);
  auto it = records_.find(id);
  if (it == records_.end()) return absl::NotFoundError(absl::StrCat("no dictionary ", id));
  return InfoLocked(it->second);
}

absl::StatusOr<v1::DictionaryInfo> DictionaryManager::Import(absl::string_view pool_name,
                                                             std::string content,
                                                             bool activate) {
  std::shared_ptr<pool::Pool> pool = pools_->Find(pool_name);
  if (pool == nullptr) return absl::NotFoundError(absl::StrCat("no pool '", pool_name, "'"));
  if (content.size() < 8 || LoadLE32(content, 0) != kDictionaryMagic) {
    return absl::InvalidArgumentError(
        "not a zstd dictionary (missing the dictionary magic number)");
  }
  const uint32_t file_id = LoadLE32(content, 4);
  absl::MutexLock import_lock(&import_mu_);
  ASSIGN_OR_RETURN(const uint32_t existing, FindIdentical(*pool, content));
  if (existing != 0) {
    ASSIGN_OR_RETURN(v1::DictionaryInfo info, ImportedInfo(*pool, existing, activate));
    info.set_imported_id(file_id);
    info.set_import_existing(true);
    info.set_import_note(absl::StrCat(
        "identical (but for its id ", file_id, ") to dictionary ", existing, " of pool ",
        pool->name(), ", stored on ", absl::FormatTime("%Y-%m-%d %H:%M:%S UTC",
        absl::FromUnixMillis(info.created_unix_ms()), absl::UTCTimeZone()),
        ": nothing new stored"));
    return info;
  }
  storage::DictionaryRecord record;
  ASSIGN_OR_RETURN(const uint32_t id, AllocateId());
  record.set_id(id);
  StoreLE32(record.id(), &content, 4);  // Our id replaces the one it was trained with.
  RETURN_IF_ERROR(codec::DecoderDictionary::Create(content).status());
  // Appends compress with it once it is active. zstd decodes with dictionaries it
  // cannot compress with (e.g. a Huffman tree without all 256 literals), which would
  // make every append to the pool fail (found by tests/fuzz, dictionary_import).
  RETURN_IF_ERROR(codec::EncoderDictionary::Create(
                      content, pool::FrameCompressionLevel(pool->options(),
                                                           codec::IsCompactDictionary(content)))
                      .status());
  record.set_pool_id(pool->id());
  record.set_pool(pool->name());
  record.set_content(std::move(content));
  record.set_created_unix_ms(absl::ToUnixMillis(absl::Now()));
  record.set_source("import");
  ASSIGN_OR_RETURN(
      v1::DictionaryInfo info,
      Add(std::move(record),
          [&](const storage::DictionaryRecord& added) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
            return activate ? ActivateLocked(*pool, added.id()) : InfoLocked(added);
          }));
  info.set_imported_id(file_id);
  if (file_id != info.id()) {
    info.set_import_note(absl::StrCat(
        "the file's dictionary id ", file_id, " is stored as ", info.id(),
        ": the server assigns every dictionary id itself, so that an id names one "
        "dictionary for good (record frames refer to it, and ids are never reused)"));
  } else {
    info.set_import_note(absl::StrCat("stored as dictionary ", info.id()));
  }
  return info;
}

absl::StatusOr<v1::DictionaryInfo> DictionaryManager::InfoLocked(
    const storage::DictionaryRecord& record) const {
  v1::DictionaryInfo info;
  info.set_id(record.id());
  info.set_pool(record.pool());
  info.set_size_bytes(record.size_bytes());
  info.set_content_check(record.content_check());
  info.set_created_unix_ms(record.created_unix_ms());
  std::shared_ptr<pool::Pool> pool = pools_->FindById(record.pool_id());
  info.set_active(pool && pool->record().active_dictionary_id() == record.id());
  ASSIGN_OR_RETURN(store::PoolCounters refs, store_->DictionaryReferences(record.id()));
  info.set_records(refs.records);
  info.set_source(record.source());
  if (record.has_evaluation()) *info.mutable_evaluation() = store::FromCatalog(record.evaluation());
  info.set_mode(record.compact() ? v1::DICTIONARY_MODE_COMPACT : v1::DICTIONARY_MODE_FULL);
  return info;
}

DictionaryManager::ServerHeat DictionaryManager::Heat() const {
  ServerHeat heat;
  for (const std::shared_ptr<pool::Pool>& p : pools_->List()) heat.all_reads += p->reads();
  heat.live_dictionaries = dictionaries_->stats().pinned;
  return heat;
}

ModeChoice DictionaryManager::NextMode(const pool::Pool& pool, const ServerHeat& heat) const {
  ModeInputs in;
  in.option = pool.options().dictionary_mode();
  in.pool_reads = pool.reads();
  in.all_reads = heat.all_reads;
  // Live once this pool has one: a pool's first dictionary adds to the count.
  in.live_dictionaries = heat.live_dictionaries + (pool.active_dictionary_id() == 0 ? 1 : 0);
  in.full_slots = options_.auto_full_dictionaries;
  return ChooseDictionaryMode(in);
}

absl::StatusOr<std::vector<v1::DictionaryInfo>> DictionaryManager::List(
    absl::string_view pool) const {
  absl::ReaderMutexLock lock(&mu_);
  std::vector<v1::DictionaryInfo> infos;
  for (const auto& [id, record] : records_) {
    if (!pool.empty() && record.pool() != pool) continue;
    ASSIGN_OR_RETURN(v1::DictionaryInfo info, InfoLocked(record));
    infos.push_back(std::move(info));
  }
  return infos;
}

uint32_t DictionaryManager::ContentCheck(uint32_t id) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = records_.find(id);
  return it == records_.end() ? 0 : it->second.content_check();
}

absl::StatusOr<v1::GetDictionaryResponse> DictionaryManager::Get(uint32_t id) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = records_.find(id);
  std::shared_ptr<const codec::DecoderDictionary> dict = dictionaries_->Find(id);
  if (it == records_.end() || dict == nullptr) {
    return absl::NotFoundError(absl::StrCat("no dictionary ", id));
  }
  v1::GetDictionaryResponse response;
  ASSIGN_OR_RETURN(*response.mutable_dictionary(), InfoLocked(it->second));
  response.set_content(std::string(dict->content()));
  return response;
}

absl::Status DictionaryManager::RetireLocked(const storage::DictionaryRecord& record) {
  ++retired_generation_;  // Before the dictionary can go missing for any reader.
  RETURN_IF_ERROR(store_->RetireDictionary(record));
  dictionaries_->Erase(record.id());
  reactivated_ratio_.erase(record.id());
  return absl::OkStatus();
}

absl::StatusOr<size_t> DictionaryManager::ForgetPool(uint32_t pool_id) {
  absl::MutexLock lock(&mu_);
  size_t forgotten = 0;
  for (auto it = records_.begin(); it != records_.end();) {
    if (it->second.pool_id() != pool_id) {
      ++it;
      continue;
    }
    RETURN_IF_ERROR(RetireLocked(it->second));
    it = records_.erase(it);
    ++forgotten;
  }
  return forgotten;
}

absl::StatusOr<std::vector<v1::DictionaryInfo>> DictionaryManager::Gc(bool dry_run,
                                                                      absl::string_view pool) {
  absl::MutexLock gate(&write_gate_);  // No append or rewrite is in flight.
  absl::MutexLock lock(&mu_);
  std::vector<v1::DictionaryInfo> deleted;
  for (auto it = records_.begin(); it != records_.end();) {
    if (!pool.empty() && it->second.pool() != pool) {
      ++it;
      continue;
    }
    ASSIGN_OR_RETURN(v1::DictionaryInfo info, InfoLocked(it->second));
    if (info.active() || info.records() != 0) {
      ++it;
      continue;
    }
    if (!dry_run) {
      RETURN_IF_ERROR(RetireLocked(it->second));
      it = records_.erase(it);
    } else {
      ++it;
    }
    deleted.push_back(std::move(info));
  }
  return deleted;
}

}  // namespace dictlog::dictionary
