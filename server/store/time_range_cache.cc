// TimeRangeCache (time_range_cache.h).
#include "server/store/time_range_cache.h"

#include <algorithm>

namespace dictlog::store {

TimeRangeCache::TimeRangeCache(size_t capacity) : capacity_(capacity) {}

absl::btree_map<TimeRangeCache::Key, TimeRangeCache::Range>::const_iterator
TimeRangeCache::Holding(uint32_t pool_id, uint64_t seq) const {
  auto it = ranges_.upper_bound(Key{pool_id, seq});
  if (it == ranges_.begin()) return ranges_.end();
  --it;
  if (it->first.first != pool_id || it->second.last_seq < seq) return ranges_.end();
  return it;
}

std::optional<int64_t> TimeRangeCache::Find(uint32_t pool_id, uint64_t seq) const {
  absl::ReaderMutexLock lock(&mu_);
  const auto it = Holding(pool_id, seq);
  if (it == ranges_.end()) return std::nullopt;
  return it->second.unix_ms;
}

uint64_t TimeRangeCache::Version(uint32_t pool_id) const {
  absl::ReaderMutexLock lock(&mu_);
  const auto it = versions_.find(pool_id);
  return it == versions_.end() ? absent_version_ : it->second;
}

void TimeRangeCache::Fill(uint32_t pool_id, uint64_t version, uint64_t first_seq,
                          uint64_t last_seq, int64_t unix_ms) {
  if (capacity_ == 0 || first_seq > last_seq) return;
  absl::MutexLock lock(&mu_);
  const auto v = versions_.find(pool_id);
  if ((v == versions_.end() ? absent_version_ : v->second) != version) return;
  const auto known = ranges_.find(Key{pool_id, first_seq});
  if (known != ranges_.end()) {
    // Still cached, so still true: no entry landed in it since (Invalidate drops it).
    known->second.last_seq = std::max(known->second.last_seq, last_seq);
    return;
  }
  if (ranges_.size() >= capacity_) ranges_.clear();
  ranges_.insert_or_assign(Key{pool_id, first_seq}, Range{last_seq, unix_ms});
}

void TimeRangeCache::Invalidate(uint32_t pool_id, uint64_t seq) {
  absl::MutexLock lock(&mu_);
  versions_[pool_id] = ++last_version_;
  const auto it = Holding(pool_id, seq);
  if (it != ranges_.end()) ranges_.erase(it);
}

void TimeRangeCache::InvalidatePool(uint32_t pool_id) {
  absl::MutexLock lock(&mu_);
  versions_[pool_id] = ++last_version_;
  EraseRangesLocked(pool_id);
}

void TimeRangeCache::Forget(uint32_t pool_id) {
  absl::MutexLock lock(&mu_);
  versions_.erase(pool_id);
  absent_version_ = ++last_version_;
  EraseRangesLocked(pool_id);
}

void TimeRangeCache::EraseRangesLocked(uint32_t pool_id) {
  auto it = ranges_.lower_bound(Key{pool_id, 0});
  while (it != ranges_.end() && it->first.first == pool_id) it = ranges_.erase(it);
}

size_t TimeRangeCache::size() const {
  absl::ReaderMutexLock lock(&mu_);
  return ranges_.size();
}

size_t TimeRangeCache::versioned_pools() const {
  absl::ReaderMutexLock lock(&mu_);
  return versions_.size();
}

}  // namespace dictlog::store
