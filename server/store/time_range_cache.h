// TimeRangeCache: a bounded in-memory map from seq ranges of a pool to the append time
// their records share, filled from the `times` column family's lookups (ADR 0015) so
// that a Get or MultiGet whose records fall in a known range skips the RocksDB
// iterator an append-time lookup otherwise costs (a NewIterator and a SeekForPrev per
// call: 13% of a unary Get's server CPU at scale, benchmarks/RESULTS.md).
//
// A range [first_seq, last_seq] -> unix_ms is cached only between two entries seen
// together: the entry at first_seq and the pool's next entry at last_seq + 1, or, for
// the pool's last entry, up to the largest seq a lookup answered with it (a record of
// it already stored). Every seq in it has that entry's time for as long as no entry
// lands in between. One can:
// concurrent appends reserve seqs in one order and may commit in another, so a writer
// that commits an entry at seq s later calls Invalidate(pool, s). A lookup that filled
// a range from a snapshot taken before such a commit must not keep it: fillers take a
// Version() before they create their iterator, and Fill() drops the range if the pool's
// version moved since (Invalidate bumps it after erasing what contains s).
//
// Bounded: at most `capacity` ranges; a Fill into a full cache clears it first. Versions
// are kept per pool that was invalidated until Forget (a deleted pool, or a pool whose
// records a node dropped), so pool churn does not grow the map. Versions come from one
// counter for the whole cache, so a version taken before a Forget never matches after it.
//
// Thread-safe: every method may be called from any thread.
#ifndef DICTLOG_SERVER_STORE_TIME_RANGE_CACHE_H_
#define DICTLOG_SERVER_STORE_TIME_RANGE_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace dictlog::store {

class TimeRangeCache {
 public:
  // Default capacity: 65,536 ranges, a few MiB.
  explicit TimeRangeCache(size_t capacity = size_t{1} << 16);

  TimeRangeCache(const TimeRangeCache&) = delete;
  TimeRangeCache& operator=(const TimeRangeCache&) = delete;

  // The cached time of (pool, seq); nullopt if no cached range holds it.
  std::optional<int64_t> Find(uint32_t pool_id, uint64_t seq) const;

  // The pool's version: take it before reading the entries a Fill will come from.
  uint64_t Version(uint32_t pool_id) const;

  // Caches [first_seq, last_seq] -> unix_ms, read from a snapshot taken after
  // Version(pool_id) returned `version`; dropped if the version moved since. A range
  // already cached from first_seq is only extended (a Fill never shrinks one).
  // Requires first_seq <= last_seq.
  void Fill(uint32_t pool_id, uint64_t version, uint64_t first_seq, uint64_t last_seq,
            int64_t unix_ms);

  // An entry of the pool at `seq` was committed (call after the write): drops any range
  // holding seq and makes fills from older snapshots fail.
  void Invalidate(uint32_t pool_id, uint64_t seq);

  // The pool's entries changed in ways a seq cannot describe (expiry, deletion): drops
  // all of its ranges and makes fills from older snapshots fail.
  void InvalidatePool(uint32_t pool_id);

  // The pool's records are gone (the pool deleted, or its partition dropped): drops
  // its ranges and its version entry; fills from snapshots taken before fail.
  void Forget(uint32_t pool_id);

  size_t size() const;
  // Pools with a version entry (those invalidated and not forgotten since).
  size_t versioned_pools() const;

 private:
  using Key = std::pair<uint32_t, uint64_t>;  // pool, first seq
  struct Range {
    uint64_t last_seq;
    int64_t unix_ms;
  };

  // The range at or before (pool, seq) if it holds seq, else end().
  absl::btree_map<Key, Range>::const_iterator Holding(uint32_t pool_id, uint64_t seq) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);

  const size_t capacity_;
  mutable absl::Mutex mu_;
  absl::btree_map<Key, Range> ranges_ ABSL_GUARDED_BY(mu_);
  // Drops the pool's ranges.
  void EraseRangesLocked(uint32_t pool_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::flat_hash_map<uint32_t, uint64_t> versions_ ABSL_GUARDED_BY(mu_);
  // The last version given (every invalidation and Forget takes the next one).
  uint64_t last_version_ ABSL_GUARDED_BY(mu_) = 0;
  // The version of every pool without an entry: the last Forget's.
  uint64_t absent_version_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace dictlog::store

#endif  // DICTLOG_SERVER_STORE_TIME_RANGE_CACHE_H_
