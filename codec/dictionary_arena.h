// DictionaryArena: the memory decoded dictionaries live in. Each DecoderDictionary
// takes one block holding its ZSTD_DDict (the decoding tables) followed by a copy of
// its bytes; blocks are carved from 16 MiB regions the kernel is asked to back with
// transparent huge pages (madvise MADV_HUGEPAGE; THP "madvise" or "always" mode).
//
// Why: with thousands of dictionaries, a cold decode touches a few lines on each of
// ~8 distinct 4 KiB pages (tables, repeat offsets, content). On 2 MiB pages the page
// walks go away: +10-19% cold records/s in dict_bench over 10,000 dictionaries
// (benchmarks/results/HISTORY.md, docs/adr/0012). If the kernel declines the advice the arena
// still works, on ordinary pages.
//
// Freed blocks merge with free neighbours and are reused best-fit (a larger block is
// split, the rest stays free); regions are never returned to the system, so the
// arena's footprint is about the peak of the dictionaries held at once (the
// dictionary cache bounds that with its budget).
// Blocks larger than a region get a mapping of their own, unmapped when freed.
//
// Thread-safe.
#ifndef DICTLOG_CODEC_DICTIONARY_ARENA_H_
#define DICTLOG_CODEC_DICTIONARY_ARENA_H_

#include <cstddef>
#include <map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace dictlog::codec {

class DictionaryArena {
 public:
  static constexpr size_t kRegionBytes = size_t{16} << 20;
  static constexpr size_t kHugePageBytes = size_t{2} << 20;
  static constexpr size_t kAlignment = 4096;  // Every block starts on a page.

  struct Stats {
    size_t region_bytes = 0;  // Mapped for blocks (regions and own mappings).
    size_t used_bytes = 0;    // In blocks handed out.
    size_t free_bytes = 0;    // Free inside regions.
  };

  DictionaryArena() = default;
  DictionaryArena(const DictionaryArena&) = delete;
  DictionaryArena& operator=(const DictionaryArena&) = delete;
  ~DictionaryArena();  // Unmaps everything: only for arenas whose blocks are all freed.

  // The process's arena (never destroyed).
  static DictionaryArena& Global();

  // Bytes a block of `bytes` really takes (rounded up to kAlignment).
  static size_t BlockBytes(size_t bytes);

  // A kAlignment-aligned block of BlockBytes(bytes) bytes; nullptr only if the system
  // refuses memory.
  void* Allocate(size_t bytes) ABSL_LOCKS_EXCLUDED(mu_);
  // Returns a block from Allocate(bytes) (same `bytes`).
  void Free(void* block, size_t bytes) ABSL_LOCKS_EXCLUDED(mu_);

  Stats stats() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  char* NewRegionLocked(size_t bytes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool SameRegionLocked(const char* a, const char* b) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AddFreeLocked(char* start, size_t bytes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RemoveFreeLocked(char* start, size_t bytes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  // Free blocks inside regions, indexed both ways.
  std::multimap<size_t, char*> free_by_size_ ABSL_GUARDED_BY(mu_);
  std::map<char*, size_t> free_by_address_ ABSL_GUARDED_BY(mu_);
  std::vector<std::pair<char*, size_t>> regions_ ABSL_GUARDED_BY(mu_);
  std::map<char*, size_t> own_mappings_ ABSL_GUARDED_BY(mu_);
  Stats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dictlog::codec

#endif  // DICTLOG_CODEC_DICTIONARY_ARENA_H_
