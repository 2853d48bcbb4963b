#include "server/pool/block_tail.h"

namespace dictlog::pool {

void BlockTail::Add(Record record) {
  absl::MutexLock lock(&mu_);
  if (raw_by_seq_.emplace(record.seq, record.raw_bytes).second) bytes_ += record.raw_bytes;
}

uint64_t BlockTail::Reserve(std::atomic<uint64_t>& next_seq, uint64_t count) {
  absl::MutexLock lock(&mu_);
  const uint64_t first = next_seq.fetch_add(count);
  pending_.insert(first);
  return first;
}

void BlockTail::Land(uint64_t first, const std::vector<Record>& written) {
  absl::MutexLock lock(&mu_);
  for (const Record& record : written) {
    if (raw_by_seq_.emplace(record.seq, record.raw_bytes).second) bytes_ += record.raw_bytes;
  }
  pending_.erase(first);
}

std::vector<BlockTail::Record> BlockTail::TakeBlock(uint64_t block_bytes) {
  absl::MutexLock lock(&mu_);
  std::vector<Record> taken;
  if (bytes_ < block_bytes || raw_by_seq_.empty()) return taken;
  const uint64_t limit = pending_.empty() ? UINT64_MAX : *pending_.begin();
  uint64_t ready = 0;  // Payload before the oldest pending seq.
  for (auto it = raw_by_seq_.begin();
       it != raw_by_seq_.end() && it->first < limit && ready < block_bytes; ++it) {
    ready += it->second;
  }
  if (ready < block_bytes) return taken;
  uint64_t sum = 0;
  auto it = raw_by_seq_.begin();
  while (it != raw_by_seq_.end() && it->first < limit &&
         (taken.empty() || sum + it->second <= block_bytes)) {
    sum += it->second;
    taken.push_back({it->first, it->second});
    it = raw_by_seq_.erase(it);
  }
  bytes_ -= sum;
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
