// DecodedBlockCache: indexed blocks (ADR 0016) already decompressed, found by the
// (pool id, seq) of a record they hold, so that a block read again and again is
// sought in RocksDB and decompressed once rather than on every read (ADR 0038).
//
// - Bounded by bytes (decoded content, entries, bookkeeping). When full it evicts in
//   insertion order with a second chance: a block read since the last pass stays once
//   more.
// - Admission: a block is kept only on its second miss within a short memory of recent
//   misses (a fixed table of block keys), so reads spread evenly over far more blocks
//   than fit (uniform ids) do not churn the cache; blocks read again soon do get in.
// - Lookups that rarely hit stop for a while: a window of lookups that found less
//   than 1 in 16 of its blocks empties the cache and turns it off for the next 7
//   windows (lookups return nothing at once, offers keep nothing), after which it
//   probes again. So a load it cannot help (uniform reads over far more blocks than
//   fit) pays almost nothing for it, and holds no memory for it.
// - Its memory can come out of another cache's budget: `on_held` is told the bytes it
//   holds, rounded up to whole MiB, whenever that figure changes (the engine gives
//   them to the store, which shrinks RocksDB's block cache by as much; ADR 0038).
// - Content, not encoding, is cached, and a record's content never changes under its
//   id: re-compression re-encodes the same payloads, a block sealed again (cluster
//   rebuilds) holds the same records, and pool ids are never reused. Callers check
//   retention before they look here, as they do before reading the store.
//
// Thread safety: all methods may be called concurrently. Lookups share one mutex in
// reader mode; inserts, evictions and emptying take it exclusively; the admission
// table is lock-free. `on_held` is called outside that mutex, one call at a time, each
// with the figure current when it is made.
#ifndef DICTLOG_SERVER_BLOCK_DECODED_BLOCK_CACHE_H_
#define DICTLOG_SERVER_BLOCK_DECODED_BLOCK_CACHE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/synchronization/mutex.h"
#include "codec/block_format.h"

namespace dictlog::block {

// An indexed block decompressed: its entries view into `content`.
struct IndexedContent {
  std::unique_ptr<std::string> content;
  std::vector<codec::IndexedEntry> entries;
};

class DecodedBlockCache {
 public:
  // `capacity_bytes` 0: nothing is kept (Find always misses, Offer keeps nothing).
  // `on_held` (may be null) is told the bytes held, rounded up to whole MiB, each time
  // that figure changes.
  explicit DecodedBlockCache(size_t capacity_bytes,
                             std::function<void(size_t held_bytes)> on_held = nullptr);
  DecodedBlockCache(const DecodedBlockCache&) = delete;
  DecodedBlockCache& operator=(const DecodedBlockCache&) = delete;

  // The content of the cached block of pool `pool_id` whose seq range holds `seq`
  // (the caller looks for `seq` among its entries: a range may have gaps), or nullptr.
  std::shared_ptr<const IndexedContent> Find(uint32_t pool_id, uint64_t seq);
  // A block just read from the store after a Find missed it: kept if admitted (its
  // second offer within the admission table's memory) and no larger than a quarter of
  // the capacity; it replaces a cached block of the same pool and first seq. Then
  // evicts until the cache fits its capacity.
  void Offer(uint32_t pool_id, uint64_t first_seq, uint64_t last_seq,
             std::shared_ptr<const IndexedContent> content);

  size_t capacity() const { return capacity_; }
  // Bytes and blocks held (tests).
  size_t bytes() const;
  size_t blocks() const;
  // Whether lookups and offers are off for now (too few hits).
  bool off() const;
  // What a block costs the capacity: its content, its entries and bookkeeping.
  static size_t Cost(const IndexedContent& content);

 private:
  using Key = std::pair<uint32_t, uint64_t>;  // (pool id, first seq)
  struct Entry {
    uint64_t last_seq = 0;
    std::shared_ptr<const IndexedContent> content;
    size_t cost = 0;
    // Set by lookups (under the shared lock), cleared by an eviction pass.
    std::unique_ptr<std::atomic<bool>> referenced;
  };
  static constexpr size_t kAdmissionSlots = 1 << 12;
  static constexpr uint64_t kWindow = 4096;    // Lookups per window.
  static constexpr uint64_t kMinHitShare = 16;  // Fewer hits than 1/this: off.
  static constexpr uint64_t kOffWindows = 7;

  // False while the cache is off (and counts the lookup toward the window). The lookup
  // that ends a window with too few hits empties the cache.
  bool Probing();
  void Empty();
  // Tells on_held_ the bytes held now, if its rounded figure changed.
  void ReportHeld();

  // True on the second offer of `key` while its slot still remembers it.
  bool Admit(Key key);
  void EvictLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const size_t capacity_;
  const std::function<void(size_t)> on_held_;
  std::vector<std::atomic<uint64_t>> admission_;  // Hashes of recently offered keys.
  std::atomic<uint64_t> lookups_{0};
  std::atomic<uint64_t> window_hits_{0};
  std::atomic<uint64_t> off_until_{0};  // Lookup count the cache is off before.
  absl::Mutex report_mu_;
  size_t reported_ ABSL_GUARDED_BY(report_mu_) = 0;
  mutable absl::Mutex mu_;
  absl::btree_map<Key, Entry> by_start_ ABSL_GUARDED_BY(mu_);
  std::deque<Key> order_ ABSL_GUARDED_BY(mu_);  // Each cached key once, oldest first.
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace dictlog::block

#endif  // DICTLOG_SERVER_BLOCK_DECODED_BLOCK_CACHE_H_
