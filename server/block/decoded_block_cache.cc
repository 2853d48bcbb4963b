#include "server/block/decoded_block_cache.h"

#include <utility>

#include "absl/hash/hash.h"

namespace dictlog::block {
namespace {

// Bytes rounded up to the whole MiB on_held is told of.
size_t HeldRounded(size_t bytes) {
  constexpr size_t kStep = size_t{1} << 20;
  return (bytes + kStep - 1) / kStep * kStep;
}

}  // namespace

DecodedBlockCache::DecodedBlockCache(size_t capacity_bytes,
                                     std::function<void(size_t held_bytes)> on_held)
    : capacity_(capacity_bytes),
      on_held_(std::move(on_held)),
      admission_(capacity_bytes == 0 ? 0 : kAdmissionSlots) {}

size_t DecodedBlockCache::Cost(const IndexedContent& content) {
  constexpr size_t kBookkeeping = 160;  // Map node, entry, shared_ptr control block.
  return content.content->capacity() + content.entries.capacity() * sizeof(codec::IndexedEntry) +
         kBookkeeping;
}

bool DecodedBlockCache::off() const {
  return lookups_.load(std::memory_order_relaxed) < off_until_.load(std::memory_order_relaxed);
}

bool DecodedBlockCache::Probing() {
  const uint64_t n = lookups_.fetch_add(1, std::memory_order_relaxed);
  if (n < off_until_.load(std::memory_order_relaxed)) return false;
  if (n % kWindow == kWindow - 1) {
    // The window ends: too few hits turn the cache off for the next windows, and what
    // it holds goes (by the time it probes again, the reads have moved on).
    const uint64_t hits = window_hits_.exchange(0, std::memory_order_relaxed);
    if (hits * kMinHitShare < kWindow) {
      off_until_.store(n + 1 + kOffWindows * kWindow, std::memory_order_relaxed);
      Empty();
    }
  }
  return true;
}

void DecodedBlockCache::Empty() {
  {
    absl::MutexLock lock(&mu_);
    if (by_start_.empty()) return;
    by_start_.clear();
    order_.clear();
    bytes_ = 0;
  }
  ReportHeld();
}

void DecodedBlockCache::ReportHeld() {
  if (!on_held_) return;
  absl::MutexLock lock(&report_mu_);
  const size_t held = HeldRounded(bytes());
  if (held == reported_) return;
  reported_ = held;
  on_held_(held);
}

std::shared_ptr<const IndexedContent> DecodedBlockCache::Find(uint32_t pool_id,
                                                              uint64_t seq) {
  if (capacity_ == 0 || !Probing()) return nullptr;
  absl::ReaderMutexLock lock(&mu_);
  // The last block of the pool starting at or before seq.
  auto it = by_start_.upper_bound(Key(pool_id, seq));
  if (it == by_start_.begin()) return nullptr;
  --it;
  if (it->first.first != pool_id || it->second.last_seq < seq) return nullptr;
  it->second.referenced->store(true, std::memory_order_relaxed);
  window_hits_.fetch_add(1, std::memory_order_relaxed);
  return it->second.content;
}

bool DecodedBlockCache::Admit(Key key) {
  // 0 is never a stored hash (an empty slot).
  const uint64_t hash = absl::HashOf(key.first, key.second) | 1;
  std::atomic<uint64_t>& slot = admission_[hash % kAdmissionSlots];
  if (slot.load(std::memory_order_relaxed) == hash) return true;
  slot.store(hash, std::memory_order_relaxed);
  return false;
}

void DecodedBlockCache::Offer(uint32_t pool_id, uint64_t first_seq, uint64_t last_seq,
                              std::shared_ptr<const IndexedContent> content) {
  if (capacity_ == 0 || content == nullptr || off()) return;
  const size_t cost = Cost(*content);
  if (cost > capacity_ / 4) return;
  const Key key(pool_id, first_seq);
  if (!Admit(key)) return;
  bool step_changed = false;
  {
    absl::MutexLock lock(&mu_);
    const size_t before = HeldRounded(bytes_);
    auto [it, added] = by_start_.try_emplace(key);
    if (added) {
      it->second.referenced = std::make_unique<std::atomic<bool>>(false);
      order_.push_back(key);
    } else {
      bytes_ -= it->second.cost;
    }
    it->second.last_seq = last_seq;
    it->second.content = std::move(content);
    it->second.cost = cost;
    bytes_ += cost;
    EvictLocked();
    step_changed = HeldRounded(bytes_) != before;
  }
  if (step_changed) ReportHeld();
}

void DecodedBlockCache::EvictLocked() {
  // Each pass over a referenced block clears its mark, so the loop ends within two
  // passes over the cached blocks.
  while (bytes_ > capacity_ && !order_.empty()) {
    const Key key = order_.front();
    order_.pop_front();
    auto it = by_start_.find(key);
    if (it == by_start_.end()) continue;  // Not expected: order_ names each key once.
    if (it->second.referenced->exchange(false, std::memory_order_relaxed)) {
      order_.push_back(key);
      continue;
    }
    bytes_ -= it->second.cost;
    by_start_.erase(it);
  }
}

size_t DecodedBlockCache::bytes() const {
  absl::ReaderMutexLock lock(&mu_);
  return bytes_;
}

size_t DecodedBlockCache::blocks() const {
  absl::ReaderMutexLock lock(&mu_);
  return by_start_.size();
}

}  // namespace dictlog::block
