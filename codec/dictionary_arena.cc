#include "codec/dictionary_arena.h"

#include <sys/mman.h>

#include <cstdint>

namespace dictlog::codec {
namespace {

// An anonymous mapping of `bytes` (a multiple of kHugePageBytes) starting on a
// kHugePageBytes boundary, so that every 2 MiB of it can be one huge page.
char* MapAligned(size_t bytes) {
  const size_t align = DictionaryArena::kHugePageBytes;
  void* raw = mmap(nullptr, bytes + align, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + align - 1) & ~(align - 1);
  if (aligned > start) munmap(raw, aligned - start);
  const uintptr_t end = start + bytes + align;
  if (end > aligned + bytes) {
    munmap(reinterpret_cast<void*>(aligned + bytes), end - aligned - bytes);
  }
  return reinterpret_cast<char*>(aligned);
}

size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

DictionaryArena::~DictionaryArena() {
  for (const auto& [start, bytes] : regions_) munmap(start, bytes);
  for (const auto& [start, bytes] : own_mappings_) munmap(start, bytes);
}

DictionaryArena& DictionaryArena::Global() {
  static DictionaryArena* const arena = new DictionaryArena();
  return *arena;
}

size_t DictionaryArena::BlockBytes(size_t bytes) {
  return RoundUp(bytes == 0 ? 1 : bytes, kAlignment);
}

char* DictionaryArena::NewRegionLocked(size_t bytes) {
  char* start = MapAligned(bytes);
  if (start == nullptr) return nullptr;
  // Only advice: where the kernel declines (THP "never"), ordinary pages serve.
  madvise(start, bytes, MADV_HUGEPAGE);
  stats_.region_bytes += bytes;
  return start;
}

bool DictionaryArena::SameRegionLocked(const char* a, const char* b) const {
  for (const auto& [start, bytes] : regions_) {
    const bool has_a = a >= start && a < start + bytes;
    const bool has_b = b >= start && b < start + bytes;
    if (has_a || has_b) return has_a && has_b;
  }
  return false;
}

void DictionaryArena::AddFreeLocked(char* start, size_t bytes) {
  free_by_size_.emplace(bytes, start);
  free_by_address_.emplace(start, bytes);
}

void DictionaryArena::RemoveFreeLocked(char* start, size_t bytes) {
  free_by_address_.erase(start);
  auto [first, last] = free_by_size_.equal_range(bytes);
  for (auto it = first; it != last; ++it) {
    if (it->second == start) {
      free_by_size_.erase(it);
      return;
    }
  }
}

void* DictionaryArena::Allocate(size_t bytes) {
  const size_t need = BlockBytes(bytes);
  absl::MutexLock lock(&mu_);
  if (need > kRegionBytes) {
    const size_t mapped = RoundUp(need, kHugePageBytes);
    char* start = NewRegionLocked(mapped);
    if (start == nullptr) return nullptr;
    own_mappings_.emplace(start, mapped);
    stats_.used_bytes += need;
    return start;
  }
  auto it = free_by_size_.lower_bound(need);
  if (it == free_by_size_.end()) {
    char* start = NewRegionLocked(kRegionBytes);
    if (start == nullptr) return nullptr;
    regions_.emplace_back(start, kRegionBytes);
    // Regions are never merged with each other (mappings need not be adjacent).
    it = free_by_size_.emplace(kRegionBytes, start);
    free_by_address_.emplace(start, kRegionBytes);
    stats_.free_bytes += kRegionBytes;
  }
  const size_t size = it->first;
  char* const block = it->second;
  RemoveFreeLocked(block, size);
  if (size > need) AddFreeLocked(block + need, size - need);
  stats_.free_bytes -= need;
  stats_.used_bytes += need;
  return block;
}

void DictionaryArena::Free(void* block, size_t bytes) {
  if (block == nullptr) return;
  const size_t need = BlockBytes(bytes);
  char* const start = static_cast<char*>(block);
  absl::MutexLock lock(&mu_);
  stats_.used_bytes -= need;
  auto own = own_mappings_.find(start);
  if (own != own_mappings_.end()) {
    munmap(start, own->second);
    stats_.region_bytes -= own->second;
    own_mappings_.erase(own);
    return;
  }
  stats_.free_bytes += need;
  char* merged = start;
  size_t merged_bytes = need;
  auto next = free_by_address_.find(start + need);
  if (next != free_by_address_.end() && SameRegionLocked(start, next->first)) {
    merged_bytes += next->second;
    RemoveFreeLocked(next->first, next->second);
  }
  auto prev = free_by_address_.lower_bound(start);
  if (prev != free_by_address_.begin()) {
    --prev;
    if (prev->first + prev->second == start && SameRegionLocked(prev->first, start)) {
      merged = prev->first;
      merged_bytes += prev->second;
      RemoveFreeLocked(prev->first, prev->second);
    }
  }
  AddFreeLocked(merged, merged_bytes);
}

DictionaryArena::Stats DictionaryArena::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

}  // namespace dictlog::codec
