#include "server/pool/block_tail.h"

#include <algorithm>

namespace dictlog::pool {

void BlockTail::Add(Record record) {
  absl::MutexLock lock(&mu_);
  if (raw_by_seq_.emplace(record.seq, record.raw_bytes).second) bytes_ += record.raw_bytes;
  NoteOpenFromLocked();
}

uint64_t BlockTail::Reserve(std::atomic<uint64_t>& next_seq, uint64_t count) {
  absl::MutexLock lock(&mu_);
  const uint64_t first = next_seq.fetch_add(count);
  pending_.insert(first);
  NoteOpenFromLocked();
  return first;
}

void BlockTail::Land(uint64_t first, const std::vector<Record>& written, bool cut) {
  absl::MutexLock lock(&mu_);
  for (const Record& record : written) {
    if (raw_by_seq_.emplace(record.seq, record.raw_bytes).second) bytes_ += record.raw_bytes;
  }
  pending_.erase(first);
  if (cut) cuts_.insert(first);
  NoteOpenFromLocked();
}

void BlockTail::NoteOpenFromLocked() {
  uint64_t from = raw_by_seq_.empty() ? UINT64_MAX : raw_by_seq_.begin()->first;
  if (!pending_.empty()) from = std::min(from, *pending_.begin());
  open_from_.store(from, std::memory_order_release);
}

void BlockTail::DropPassedCutsLocked() {
  while (!cuts_.empty()) {
    const uint64_t cut = *cuts_.begin();
    if (!raw_by_seq_.empty() && raw_by_seq_.begin()->first < cut) return;
    if (!pending_.empty() && *pending_.begin() < cut) return;
    cuts_.erase(cuts_.begin());
  }
}

std::vector<BlockTail::Record> BlockTail::TakeBlock(uint64_t block_bytes) {
  absl::MutexLock lock(&mu_);
  std::vector<Record> taken;
  DropPassedCutsLocked();
  if ((bytes_ < block_bytes && cuts_.empty()) || raw_by_seq_.empty()) return taken;
  const uint64_t pending = pending_.empty() ? UINT64_MAX : *pending_.begin();
  const auto cut = cuts_.upper_bound(raw_by_seq_.begin()->first);
  const uint64_t limit = cut == cuts_.end() ? pending : std::min(pending, *cut);
  // Everything before the cut has landed: nothing will join those records.
  const bool closed = cut != cuts_.end() && *cut <= pending;
  uint64_t ready = 0;  // Payload before the limit.
  for (auto it = raw_by_seq_.begin();
       it != raw_by_seq_.end() && it->first < limit && ready < block_bytes; ++it) {
    ready += it->second;
  }
  if (ready == 0 || (ready < block_bytes && !closed)) return taken;
  uint64_t sum = 0;
  auto it = raw_by_seq_.begin();
  while (it != raw_by_seq_.end() && it->first < limit &&
         (taken.empty() || sum + it->second <= block_bytes)) {
    sum += it->second;
    taken.push_back({it->first, it->second});
    it = raw_by_seq_.erase(it);
  }
  bytes_ -= sum;
  NoteOpenFromLocked();
  return taken;
}

void BlockTail::Restore(const std::vector<Record>& records) {
  for (const Record& record : records) Add(record);
}

std::optional<uint64_t> BlockTail::OldestSeq() const {
  absl::MutexLock lock(&mu_);
  if (raw_by_seq_.empty()) return std::nullopt;
  return raw_by_seq_.begin()->first;
}

size_t BlockTail::records() const {
  absl::MutexLock lock(&mu_);
  return raw_by_seq_.size();
}

uint64_t BlockTail::bytes() const {
  absl::MutexLock lock(&mu_);
  return bytes_;
}

}  // namespace dictlog::pool
