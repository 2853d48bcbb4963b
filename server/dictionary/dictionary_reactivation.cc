// DictionaryManager::ReactivateBest: when a pool's data drifts back to what an earlier
// dictionary was trained on, that dictionary is measured on the newest records and
// activated again (docs/dictionaries.md, "Drift"). Cheap next to a training: a few
// dictionaries, each compressing a window's worth of records once.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "codec/dictionary.h"
#include "codec/record_codec.h"
#include "common/status_macros.h"
#include "server/dictionary/dictionary_manager.h"
#include "server/pool/pool_options.h"

namespace dictlog::dictionary {
namespace {

double Ratio(uint64_t raw, uint64_t stored) {
  return stored == 0 ? 0 : static_cast<double>(raw) / static_cast<double>(stored);
}

}  // namespace

std::vector<uint32_t> DictionaryManager::EarlierDictionaries(uint32_t pool_id,
                                                             uint32_t active) const {
  std::vector<uint32_t> ids;
  absl::MutexLock lock(&mu_);
  for (auto it = records_.rbegin(); it != records_.rend(); ++it) {
    if (ids.size() == kMaxReactivationCandidates) break;
    if (it->second.pool_id() == pool_id && it->first != active) ids.push_back(it->first);
  }
  return ids;
}

absl::StatusOr<uint64_t> DictionaryManager::StoredBytesWith(
    const pool::Pool& pool, uint32_t id, const std::vector<std::string>& records) const {
  ASSIGN_OR_RETURN(const std::string content, store_->DictionaryContent(id));
  const int level = pool::FrameCompressionLevel(pool.options(),
                                                codec::IsCompactDictionary(content));
  ASSIGN_OR_RETURN(std::shared_ptr<const codec::EncoderDictionary> encoder,
                   codec::EncoderDictionary::Create(content, level));
  codec::EncodeOptions options;
  options.dictionary = encoder.get();
  uint64_t stored = 0;
  std::string out;
  for (const std::string& record : records) {
    out.clear();
    RETURN_IF_ERROR(codec::EncodeRecord(record, options, &out));
    stored += out.size();
  }
  return stored;
}

absl::StatusOr<Reactivation> DictionaryManager::ReactivateBest(absl::string_view pool_name,
                                                               size_t sample_bytes) {
  std::shared_ptr<pool::Pool> pool = pools_->Find(pool_name);
  if (pool == nullptr) return absl::NotFoundError(absl::StrCat("no pool '", pool_name, "'"));
  const uint32_t active = pool->active_dictionary_id();
  if (active == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("pool '", pool_name, "' has no active dictionary"));
  }
  Reactivation result;
  const std::vector<uint32_t> earlier = EarlierDictionaries(pool->id(), active);
  if (earlier.empty()) {
    result.note = "no earlier dictionary to compare";
    return result;
  }
  ASSIGN_OR_RETURN(const std::vector<std::string> sample, Sample(*pool, sample_bytes));
  if (sample.size() < 5) {
    result.note = "too few records to compare";
    return result;
  }
  uint64_t raw = 0;
  for (const std::string& record : sample) raw += record.size();
  ASSIGN_OR_RETURN(const uint64_t active_stored, StoredBytesWith(*pool, active, sample));
  result.active_ratio = Ratio(raw, active_stored);
  result.note = absl::StrFormat("on %zu recent records: active %u %.2fx", sample.size(),
                                active, result.active_ratio);
  for (uint32_t id : earlier) {
    absl::StatusOr<uint64_t> stored = StoredBytesWith(*pool, id, sample);
    if (!stored.ok()) continue;  // Retired by a gc meanwhile.
    ++result.tried;
    const double ratio = Ratio(raw, *stored);
    absl::StrAppendFormat(&result.note, ", %u %.2fx", id, ratio);
    if (ratio > result.ratio) {
      result.id = id;
      result.ratio = ratio;
    }
  }
  if (result.id == 0 || result.active_ratio == 0) return result;
  result.gain = result.ratio / result.active_ratio - 1;
  if (result.gain < options_.activation_min_gain) return result;
  absl::MutexLock lock(&mu_);
  // Not if the pool's active dictionary changed meanwhile (an operator's activation).
  std::shared_ptr<pool::Pool> now = pools_->Find(pool_name);
  if (now == nullptr || now->active_dictionary_id() != active) return result;
  auto replaced = records_.find(active);
  result.replaced_drift = replaced != records_.end() && replaced->second.source() == "drift";
  RETURN_IF_ERROR(ActivateLocked(*now, result.id).status());
  reactivated_ratio_[result.id] = result.ratio;
  result.activated = true;
  return result;
}

}  // namespace dictlog::dictionary
