// DictionaryCache: the decoded dictionaries (ZSTD_DDict) of a server, shared by all
// threads, within a memory budget. Every decode finds the dictionary named in its frame
// here. Pinned dictionaries (each pool's active one) are never evicted; the others are
// kept by recency and rebuilt from their stored bytes (through the loader) on a miss.
// Pinned dictionaries always stay, even when they alone exceed the budget.
//
// Thread safety: all methods may be called concurrently. Lookups of pinned
// dictionaries share the lock (readers only); a miss loads and builds without holding
// it, so other lookups proceed meanwhile.
#ifndef DICTLOG_SERVER_DICTIONARY_DICTIONARY_CACHE_H_
#define DICTLOG_SERVER_DICTIONARY_DICTIONARY_CACHE_H_

#include <atomic>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "codec/dictionary.h"

namespace dictlog::dictionary {

struct DictionaryCacheOptions {
  // Bytes of decoded dictionaries (content + tables) to keep. Default 256 MiB.
  size_t budget_bytes = 256 << 20;
};

struct DictionaryCacheStats {
  uint64_t hits = 0;
  uint64_t misses = 0;       // Lookups that had to load and build.
  uint64_t builds = 0;       // Dictionaries built (misses and pins of absent ones).
  uint64_t evictions = 0;
  uint64_t bytes = 0;        // Held now.
  uint64_t entries = 0;
  uint64_t pinned = 0;
};

class DictionaryCache : public codec::DictionaryLookup {
 public:
  // Returns the stored bytes of a dictionary; NOT_FOUND if there is none.
  using Loader = std::function<absl::StatusOr<std::string>(uint32_t id)>;

  DictionaryCache(Loader loader, DictionaryCacheOptions options)
      : loader_(std::move(loader)), options_(options) {}
  DictionaryCache(const DictionaryCache&) = delete;
  DictionaryCache& operator=(const DictionaryCache&) = delete;

  // The dictionary, loaded and built if needed; nullptr if unknown or unloadable.
  std::shared_ptr<const codec::DecoderDictionary> Find(uint32_t id) const override
      ABSL_LOCKS_EXCLUDED(mu_);
  // Holds the lock (shared) while `use` runs instead of taking a reference per
  // dictionary: a batch of lookups costs no atomic operation per id. Absent ones are
  // loaded first, without the lock.
  void FindMany(absl::Span<const uint32_t> ids,
                absl::FunctionRef<void(Dictionaries)> use) const override
      ABSL_LOCKS_EXCLUDED(mu_);
  // Adds a dictionary just created (most recently used).
  void Insert(std::shared_ptr<const codec::DecoderDictionary> dictionary)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Keeps the dictionary until as many Unpin calls; loads it if needed.
  absl::StatusOr<std::shared_ptr<const codec::DecoderDictionary>> Pin(uint32_t id)
      ABSL_LOCKS_EXCLUDED(mu_);
  void Unpin(uint32_t id) ABSL_LOCKS_EXCLUDED(mu_);
  // Forgets the dictionary (holders keep their reference).
  void Erase(uint32_t id) ABSL_LOCKS_EXCLUDED(mu_);

  DictionaryCacheStats stats() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Entry {
    std::shared_ptr<const codec::DecoderDictionary> dictionary;
    int pins = 0;
    std::list<uint32_t>::iterator lru;  // Valid while pins == 0.
  };

  absl::StatusOr<std::shared_ptr<const codec::DecoderDictionary>> Load(uint32_t id) const;
  // Fills found[i] for each id present; appends absent ids (not 0) to *absent and
  // unpinned present ones to *unpinned. Returns the count found.
  size_t ResolveLocked(absl::Span<const uint32_t> ids,
                       std::vector<const codec::DecoderDictionary*>* found,
                       std::vector<uint32_t>* absent, std::vector<uint32_t>* unpinned) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Marks these entries most recently used.
  void TouchAll(absl::Span<const uint32_t> ids) const ABSL_LOCKS_EXCLUDED(mu_);
  // Inserts (or finds) the entry for `dictionary`; the caller holds mu_.
  Entry& InsertLocked(std::shared_ptr<const codec::DecoderDictionary> dictionary) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EvictLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Loader loader_;
  const DictionaryCacheOptions options_;

  mutable absl::Mutex mu_;
  mutable absl::flat_hash_map<uint32_t, Entry> entries_ ABSL_GUARDED_BY(mu_);
  mutable std::list<uint32_t> lru_ ABSL_GUARDED_BY(mu_);  // Unpinned, most recent first.
  mutable size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  mutable uint64_t pinned_ ABSL_GUARDED_BY(mu_) = 0;
  mutable std::atomic<uint64_t> hits_{0}, misses_{0}, builds_{0}, evictions_{0};
};

}  // namespace dictlog::dictionary

#endif  // DICTLOG_SERVER_DICTIONARY_DICTIONARY_CACHE_H_
