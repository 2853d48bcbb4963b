// Client-side decoding of dictlog frames (MultiGetFrames): a bounded cache of decoded
// zstd dictionaries (ZSTD_DDict) by id, and DecodeFrame, which decodes one standard
// zstd frame with the calling thread's own decompression context.
//
// A dictionary id names the same bytes for the life of a store (ids are never
// reused; docs/api.md), so a cached DDict rarely goes stale; one that gc deleted is
// simply never asked for again and ages out. The exception is a store restored from
// a backup, which gives again the ids the live store gave after it (docs/operations.md
// "Backups"): so entries are looked up by id and content check (the CRC-32 frames
// carry beside the id, codec/dictionary_check.h), and a DDict whose check differs
// from the frame's is a miss, replaced by the dictionary fetched again.
//
// Thread Safety: DdictCache is safe for concurrent use (one mutex around the map;
// building a DDict happens outside it). DecodeFrame is thread-safe (thread_local
// context). A Ddict is immutable and shared by shared_ptr.
#ifndef DICTLOG_CLIENT_FRAME_DECODER_H_
#define DICTLOG_CLIENT_FRAME_DECODER_H_

#include <cstdint>
#include <list>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

struct ZSTD_DDict_s;

namespace dictlog::client {

// No frame decodes to more than this (the server's format limit): a frame declaring
// more is DATA_LOSS, never an allocation.
inline constexpr uint64_t kMaxFrameContentBytes = 64 << 20;

// One decoded dictionary.
class Ddict {
 public:
  // INVALID_ARGUMENT if `content` is not a zstd dictionary.
  static absl::StatusOr<std::shared_ptr<const Ddict>> Create(absl::string_view content);
  Ddict(const Ddict&) = delete;
  Ddict& operator=(const Ddict&) = delete;
  ~Ddict();

  const ZSTD_DDict_s* get() const { return ddict_; }
  // Bytes the DDict holds (its tables and its copy of the content).
  size_t memory_bytes() const { return bytes_; }
  // The content's check (codec::DictionaryCheck), never 0.
  uint32_t check() const { return check_; }

 private:
  Ddict(ZSTD_DDict_s* ddict, size_t bytes, uint32_t check)
      : ddict_(ddict), bytes_(bytes), check_(check) {}
  ZSTD_DDict_s* const ddict_;
  const size_t bytes_;
  const uint32_t check_;
};

struct DdictCacheStats {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t evictions = 0;
  // Cached DDicts replaced because a frame named their id with another check.
  uint64_t replaced = 0;
  uint64_t bytes = 0;
  uint64_t entries = 0;
};

class DdictCache {
 public:
  // Holds at most `budget_bytes` of DDicts (least recently used evicted first), but
  // always the one most recently inserted.
  explicit DdictCache(size_t budget_bytes) : budget_(budget_bytes) {}
  DdictCache(const DdictCache&) = delete;
  DdictCache& operator=(const DdictCache&) = delete;

  // The cached DDict of `id` (now the most recently used) if its check is `check`
  // (0: any; a server from before checks sends none), or nullptr.
  std::shared_ptr<const Ddict> Find(uint32_t id, uint32_t check) ABSL_LOCKS_EXCLUDED(mu_);
  // Builds the DDict of dictionary `id` from its content and caches it, in place of a
  // cached one of the same id with another check. INVALID_ARGUMENT if the content is
  // not a zstd dictionary.
  absl::StatusOr<std::shared_ptr<const Ddict>> Insert(uint32_t id, absl::string_view content)
      ABSL_LOCKS_EXCLUDED(mu_);
  DdictCacheStats stats() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Entry {
    std::shared_ptr<const Ddict> ddict;
    std::list<uint32_t>::iterator lru;  // Into lru_.
  };
  void EvictLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const size_t budget_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<uint32_t, Entry> entries_ ABSL_GUARDED_BY(mu_);
  std::list<uint32_t> lru_ ABSL_GUARDED_BY(mu_);  // Most recently used first.
  DdictCacheStats stats_ ABSL_GUARDED_BY(mu_);
};

// Decodes a standard zstd frame with `ddict` (nullptr: the frame needs none). DATA_LOSS
// with the server's own messages ("stored frame does not decode: ...", "stored frame
// declares an oversized content size") if it does not decode.
absl::StatusOr<std::string> DecodeFrame(absl::string_view frame, const Ddict* ddict);

}  // namespace dictlog::client

#endif  // DICTLOG_CLIENT_FRAME_DECODER_H_
