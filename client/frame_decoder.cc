#include "client/frame_decoder.h"

#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_sizeof_DDict.
#include <zstd.h>

#include "absl/strings/str_cat.h"
#include "codec/dictionary_check.h"

namespace dictlog::client {
namespace {

// The calling thread's decompression context, freed when the thread exits.
ZSTD_DCtx* ThreadContext() {
  struct Owned {
    ZSTD_DCtx* dctx = ZSTD_createDCtx();
    ~Owned() { ZSTD_freeDCtx(dctx); }
  };
  thread_local Owned owned;
  return owned.dctx;
}

}  // namespace

absl::StatusOr<std::shared_ptr<const Ddict>> Ddict::Create(absl::string_view content) {
  if (content.size() < 8 || ZSTD_getDictID_fromDict(content.data(), content.size()) == 0) {
    return absl::InvalidArgumentError("not a zstd dictionary");
  }
  ZSTD_DDict* ddict = ZSTD_createDDict(content.data(), content.size());
  if (ddict == nullptr) return absl::InvalidArgumentError("malformed zstd dictionary");
  return std::shared_ptr<const Ddict>(
      new Ddict(ddict, ZSTD_sizeof_DDict(ddict), codec::DictionaryCheck(content)));
}

Ddict::~Ddict() { ZSTD_freeDDict(ddict_); }

std::shared_ptr<const Ddict> DdictCache::Find(uint32_t id, uint32_t check) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(id);
  if (it == entries_.end() || (check != 0 && it->second.ddict->check() != check)) {
    ++stats_.misses;
    return nullptr;
  }
  ++stats_.hits;
  lru_.splice(lru_.begin(), lru_, it->second.lru);
  return it->second.ddict;
}

absl::StatusOr<std::shared_ptr<const Ddict>> DdictCache::Insert(uint32_t id,
                                                                absl::string_view content) {
  absl::StatusOr<std::shared_ptr<const Ddict>> ddict = Ddict::Create(content);
  if (!ddict.ok()) return ddict.status();
  absl::MutexLock lock(&mu_);
  auto [it, added] = entries_.try_emplace(id);
  if (!added && it->second.ddict->check() == (*ddict)->check()) {
    // Another thread fetched it meanwhile: keep one.
    lru_.splice(lru_.begin(), lru_, it->second.lru);
    return it->second.ddict;
  }
  if (!added) {  // Another dictionary under the same id (a restored store): replace it.
    stats_.bytes -= it->second.ddict->memory_bytes();
    --stats_.entries;
    ++stats_.replaced;
    lru_.erase(it->second.lru);
  }
  lru_.push_front(id);
  it->second = Entry{*ddict, lru_.begin()};
  stats_.bytes += (*ddict)->memory_bytes();
  ++stats_.entries;
  EvictLocked();
  return *ddict;
}

void DdictCache::EvictLocked() {
  while (stats_.bytes > budget_ && lru_.size() > 1) {
    auto it = entries_.find(lru_.back());
    stats_.bytes -= it->second.ddict->memory_bytes();
    --stats_.entries;
    ++stats_.evictions;
    entries_.erase(it);
    lru_.pop_back();
  }
}

DdictCacheStats DdictCache::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

absl::StatusOr<std::string> DecodeFrame(absl::string_view frame, const Ddict* ddict) {
  const unsigned long long size = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN) {
    return absl::DataLossError("stored frame does not decode: malformed frame header");
  }
  if (size > kMaxFrameContentBytes) {
    return absl::DataLossError("stored frame declares an oversized content size");
  }
  ZSTD_DCtx* dctx = ThreadContext();
  ZSTD_DCtx_refDDict(dctx, ddict ? ddict->get() : nullptr);
  std::string payload(size, '\0');
  const size_t n =
      ZSTD_decompressDCtx(dctx, payload.data(), payload.size(), frame.data(), frame.size());
  if (ZSTD_isError(n) || n != size) {
    return absl::DataLossError(absl::StrCat(
        "stored frame does not decode: ",
        ZSTD_isError(n) ? ZSTD_getErrorName(n) : "content size mismatch"));
  }
  return payload;
}

}  // namespace dictlog::client
