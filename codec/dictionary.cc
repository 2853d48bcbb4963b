#include "codec/dictionary.h"

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
#include <zdict.h>

#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "codec/dictionary_arena.h"
#include "codec/dictionary_format.h"

namespace dictlog::codec {

absl::StatusOr<uint32_t> DictionaryIdOf(absl::string_view content) {
  const unsigned id = ZDICT_getDictID(content.data(), content.size());
  if (id == 0) {
    return absl::InvalidArgumentError(
        "not a zstd dictionary (missing magic or dictionary id)");
  }
  if (id < kMinDictionaryId || id > kMaxDictionaryId) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dictionary id ", id, " is outside the allowed range [", kMinDictionaryId,
        ", ", kMaxDictionaryId, "]"));
  }
  return id;
}

bool IsCompactDictionary(absl::string_view content) {
  absl::StatusOr<DictionaryParts> parts = ParseDictionary(content);
  return parts.ok() && parts->offsets.accuracy_log <= kCompactMaxAccuracyLog &&
         parts->match_lengths.accuracy_log <= kCompactMaxAccuracyLog &&
         parts->literal_lengths.accuracy_log <= kCompactMaxAccuracyLog;
}

absl::StatusOr<std::shared_ptr<const DecoderDictionary>> DecoderDictionary::Create(
    std::string content) {
  ASSIGN_OR_RETURN(const uint32_t id, DictionaryIdOf(content));
  std::shared_ptr<DecoderDictionary> dict(new DecoderDictionary(id));
  // The tables and a copy of the bytes in one arena block: ZSTD_initStaticDDict puts
  // the copy right after the ZSTD_DDict object.
  dict->block_request_ = ZSTD_estimateDDictSize(content.size(), ZSTD_dlm_byCopy);
  dict->block_ = DictionaryArena::Global().Allocate(dict->block_request_);
  if (dict->block_ == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("dictionary ", id, ": no memory for its decoding tables"));
  }
  dict->ddict_ = ZSTD_initStaticDDict(dict->block_, dict->block_request_, content.data(),
                                      content.size(), ZSTD_dlm_byCopy, ZSTD_dct_fullDict);
  if (dict->ddict_ == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("dictionary ", id, ": malformed entropy tables"));
  }
  dict->ddict_bytes_ = ZSTD_estimateDDictSize(0, ZSTD_dlm_byRef);  // sizeof(ZSTD_DDict)
  dict->content_ = absl::string_view(
      static_cast<const char*>(dict->block_) + dict->ddict_bytes_, content.size());
  dict->compact_ = IsCompactDictionary(dict->content_);
  return dict;
}

DecoderDictionary::~DecoderDictionary() {
  // A static DDict owns nothing: releasing its block is all (no ZSTD_freeDDict).
  DictionaryArena::Global().Free(block_, block_request_);
}

size_t DecoderDictionary::memory_bytes() const {
  return DictionaryArena::BlockBytes(block_request_);
}

absl::StatusOr<std::shared_ptr<const EncoderDictionary>> EncoderDictionary::Create(
    absl::string_view content, int compression_level) {
  ASSIGN_OR_RETURN(const uint32_t id, DictionaryIdOf(content));
  std::shared_ptr<EncoderDictionary> dict(new EncoderDictionary(id, compression_level));
  dict->cdict_ = ZSTD_createCDict(content.data(), content.size(), compression_level);
  if (dict->cdict_ == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("dictionary ", id, ": cannot be loaded for compression"));
  }
  dict->compact_ = IsCompactDictionary(content);
  return dict;
}

EncoderDictionary::~EncoderDictionary() { ZSTD_freeCDict(cdict_); }

void DictionaryLookup::FindMany(absl::Span<const uint32_t> ids,
                                absl::FunctionRef<void(Dictionaries)> use) const {
  std::vector<std::shared_ptr<const DecoderDictionary>> held(ids.size());
  std::vector<const DecoderDictionary*> found(ids.size(), nullptr);
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] == 0) continue;
    held[i] = i > 0 && ids[i - 1] == ids[i] ? held[i - 1] : Find(ids[i]);
    found[i] = held[i].get();
  }
  use(found);
}

}  // namespace dictlog::codec
