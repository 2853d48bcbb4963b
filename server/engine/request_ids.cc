#include "server/engine/request_ids.h"

#include <cstring>
#include <memory>

namespace dictlog::engine {
namespace {

constexpr uint64_t kMultiplier = 0x9e3779b97f4a7c15ULL;

uint64_t Mix(uint64_t h, uint64_t word) {
  h ^= word;
  h *= kMultiplier;
  return h ^ (h >> 29);
}

// The eight bytes at `p` as a little-endian number, whatever this machine's order
// (fingerprints are stored: they must not depend on it).
uint64_t LoadLittleEndian64(const char* p) {
  uint64_t word;
  std::memcpy(&word, p, sizeof(word));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  word = __builtin_bswap64(word);
#endif
  return word;
}

// Eight bytes at a time (little-endian), then the tail and the length, so "ab" + "c"
// and "a" + "bc" differ.
uint64_t MixBytes(uint64_t h, absl::string_view bytes) {
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) h = Mix(h, LoadLittleEndian64(bytes.data() + i));
  uint64_t tail = 0;
  for (size_t j = bytes.size(); j > i; --j) tail = (tail << 8) | static_cast<uint8_t>(bytes[j - 1]);
  h = Mix(h, tail);
  return Mix(h, bytes.size());
}

}  // namespace

uint64_t RequestFingerprint(absl::Span<const AppendInput> records) {
  uint64_t h = Mix(0x243f6a8885a308d3ULL, records.size());
  for (const AppendInput& record : records) {
    h = MixBytes(h, record.category);
    h = MixBytes(h, record.payload);
  }
  return h;
}

void AddToIdRuns(uint32_t pool_id, uint64_t seq, storage::AppendedRequest* entry) {
  if (entry->runs_size() > 0) {
    storage::AppendedRequest::IdRun* last = entry->mutable_runs(entry->runs_size() - 1);
    if (last->pool_id() == pool_id && last->first_seq() + last->count() == seq) {
      last->set_count(last->count() + 1);
      return;
    }
  }
  storage::AppendedRequest::IdRun* run = entry->add_runs();
  run->set_pool_id(pool_id);
  run->set_first_seq(seq);
  run->set_count(1);
}

std::unique_ptr<InFlightRequests::Slot> InFlightRequests::Acquire(absl::string_view id) {
  absl::MutexLock lock(&mu_);
  while (held_.contains(id)) {
    ++waiting_;
    released_.Wait(&mu_);
    --waiting_;
  }
  held_.emplace(id);
  return std::make_unique<Slot>(this, std::string(id));
}

bool InFlightRequests::WaitForWaitersForTest(int n, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto waiting = [this, n]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return waiting_ >= n; };
  return mu_.AwaitWithTimeout(absl::Condition(&waiting), timeout);
}

void InFlightRequests::Release(const std::string& id) {
  absl::MutexLock lock(&mu_);
  held_.erase(id);
  released_.SignalAll();
}

}  // namespace dictlog::engine
