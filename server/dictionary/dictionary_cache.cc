#include "server/dictionary/dictionary_cache.h"

#include <algorithm>

#include "common/status_macros.h"

namespace dictlog::dictionary {

absl::StatusOr<std::shared_ptr<const codec::DecoderDictionary>> DictionaryCache::Load(
    uint32_t id) const {
  ASSIGN_OR_RETURN(std::string content, loader_(id));
  ASSIGN_OR_RETURN(std::shared_ptr<const codec::DecoderDictionary> dict,
                   codec::DecoderDictionary::Create(std::move(content)));
  if (dict->id() != id) {
    return absl::DataLossError("stored dictionary bytes carry another id");
  }
  builds_.fetch_add(1, std::memory_order_relaxed);
  return dict;
}

DictionaryCache::Entry& DictionaryCache::InsertLocked(
    std::shared_ptr<const codec::DecoderDictionary> dictionary) const {
  const uint32_t id = dictionary->id();
  auto [it, inserted] = entries_.try_emplace(id);
  Entry& entry = it->second;
  if (inserted) {
    bytes_ += dictionary->memory_bytes();
    entry.dictionary = std::move(dictionary);
    lru_.push_front(id);
    entry.lru = lru_.begin();
  } else if (entry.pins == 0) {
    lru_.splice(lru_.begin(), lru_, entry.lru);  // Most recently used.
  }
  return entry;
}

void DictionaryCache::EvictLocked() const {
  while (bytes_ > options_.budget_bytes && !lru_.empty()) {
    const uint32_t victim = lru_.back();
    lru_.pop_back();
    auto it = entries_.find(victim);
    bytes_ -= it->second.dictionary->memory_bytes();
    entries_.erase(it);
    evictions_.fetch_add(1, std::memory_order_relaxed);
  }
}

std::shared_ptr<const codec::DecoderDictionary> DictionaryCache::Find(uint32_t id) const {
  {
    // The common case, a pool's active dictionary: pinned, so no recency to update and
    // readers proceed side by side.
    absl::ReaderMutexLock lock(&mu_);
    if (auto it = entries_.find(id); it != entries_.end() && it->second.pins > 0) {
      hits_.fetch_add(1, std::memory_order_relaxed);
      return it->second.dictionary;
    }
  }
  {
    absl::MutexLock lock(&mu_);
    if (auto it = entries_.find(id); it != entries_.end()) {
      if (it->second.pins == 0) lru_.splice(lru_.begin(), lru_, it->second.lru);
      hits_.fetch_add(1, std::memory_order_relaxed);
      return it->second.dictionary;
    }
  }
  misses_.fetch_add(1, std::memory_order_relaxed);
  absl::StatusOr<std::shared_ptr<const codec::DecoderDictionary>> loaded = Load(id);
  if (!loaded.ok()) return nullptr;
  absl::MutexLock lock(&mu_);
  std::shared_ptr<const codec::DecoderDictionary> dict =
      InsertLocked(*std::move(loaded)).dictionary;
  EvictLocked();
  return dict;
}

size_t DictionaryCache::ResolveLocked(absl::Span<const uint32_t> ids,
                                      std::vector<const codec::DecoderDictionary*>* found,
                                      std::vector<uint32_t>* absent,
                                      std::vector<uint32_t>* unpinned) const {
  size_t hits = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] == 0 || (*found)[i] != nullptr) continue;
    if (i > 0 && ids[i - 1] == ids[i] && (*found)[i - 1] != nullptr) {
      (*found)[i] = (*found)[i - 1];
      continue;
    }
    auto it = entries_.find(ids[i]);
    if (it == entries_.end()) {
      if (absent->empty() || absent->back() != ids[i]) absent->push_back(ids[i]);
      continue;
    }
    (*found)[i] = it->second.dictionary.get();
    ++hits;
    if (it->second.pins == 0) unpinned->push_back(ids[i]);
  }
  return hits;
}

void DictionaryCache::FindMany(absl::Span<const uint32_t> ids,
                               absl::FunctionRef<void(Dictionaries)> use) const {
  // Dictionaries loaded for this call (nullptr: unknown), referenced until it ends, in
  // case the budget evicts them again at once. Each round loads what the last one
  // found absent, so the loop ends: `loaded` only grows, within `ids`.
  absl::flat_hash_map<uint32_t, std::shared_ptr<const codec::DecoderDictionary>> loaded;
  std::vector<const codec::DecoderDictionary*> found(ids.size());
  std::vector<uint32_t> absent, unpinned;
  while (true) {
    std::fill(found.begin(), found.end(), nullptr);
    absent.clear();
    unpinned.clear();
    {
      absl::ReaderMutexLock lock(&mu_);
      hits_.fetch_add(ResolveLocked(ids, &found, &absent, &unpinned),
                      std::memory_order_relaxed);
      absent.erase(std::remove_if(absent.begin(), absent.end(),
                                  [&](uint32_t id) { return loaded.contains(id); }),
                   absent.end());
      if (absent.empty()) {
        for (size_t i = 0; i < ids.size(); ++i) {
          if (found[i] != nullptr || ids[i] == 0) continue;
          found[i] = loaded[ids[i]].get();
        }
        use(found);
        break;
      }
    }
    for (uint32_t id : absent) {
      if (!loaded.contains(id)) loaded.emplace(id, Find(id));  // Find counts these.
    }
  }
  if (!unpinned.empty()) TouchAll(unpinned);
}

void DictionaryCache::TouchAll(absl::Span<const uint32_t> ids) const {
  absl::MutexLock lock(&mu_);
  for (uint32_t id : ids) {
    auto it = entries_.find(id);
    if (it != entries_.end() && it->second.pins == 0) {
      lru_.splice(lru_.begin(), lru_, it->second.lru);
    }
  }
}

void DictionaryCache::Insert(std::shared_ptr<const codec::DecoderDictionary> dictionary) {
  absl::MutexLock lock(&mu_);
  InsertLocked(std::move(dictionary));
  EvictLocked();
}

absl::StatusOr<std::shared_ptr<const codec::DecoderDictionary>> DictionaryCache::Pin(
    uint32_t id) {
  std::shared_ptr<const codec::DecoderDictionary> dict = Find(id);
  if (dict == nullptr) {
    ASSIGN_OR_RETURN(dict, Load(id));  // Reports why it could not be found.
  }
  absl::MutexLock lock(&mu_);
  Entry& entry = InsertLocked(std::move(dict));
  if (entry.pins++ == 0) {
    lru_.erase(entry.lru);
    ++pinned_;
  }
  EvictLocked();
  return entry.dictionary;
}

void DictionaryCache::Unpin(uint32_t id) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.pins == 0) return;
  if (--it->second.pins == 0) {
    lru_.push_front(id);
    it->second.lru = lru_.begin();
    --pinned_;
    EvictLocked();
  }
}

void DictionaryCache::Erase(uint32_t id) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  if (it->second.pins == 0) {
    lru_.erase(it->second.lru);
  } else {
    --pinned_;
  }
  bytes_ -= it->second.dictionary->memory_bytes();
  entries_.erase(it);
}

DictionaryCacheStats DictionaryCache::stats() const {
  absl::MutexLock lock(&mu_);
  DictionaryCacheStats s;
  s.hits = hits_.load();
  s.misses = misses_.load();
  s.builds = builds_.load();
  s.evictions = evictions_.load();
  s.bytes = bytes_;
  s.entries = entries_.size();
  s.pinned = pinned_;
  return s;
}

}  // namespace dictlog::dictionary
