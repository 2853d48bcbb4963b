// BlockTail: the open tail of a block-mode pool: records already written (durable and
// readable as single values) but not yet packed into a block, by seq with their
// payload sizes. The sealer takes the oldest once they add up to a block. After a
// restart it is rebuilt from the store (BlockSealer::RecoverTail).
//
// Seqs reserved by appends still writing are *pending* (Reserve, until Land): no block
// takes a record past the oldest pending seq, so a record landing late never falls
// inside the seq range of a block sealed before it, and indexed blocks (found by their
// ranges, ADR 0016) never overlap.
//
// An append that sealed its own records straight into blocks (ADR 0021) lands with a
// *cut* at its first seq: no block takes records from both sides of a cut, so the
// tail's records before it are sealed as a short block once every seq before it has
// landed, and its records after those blocks wait for the next ones.
//
// Thread safety: all methods may be called concurrently. seal_mutex() is held by
// whoever rewrites the pool's stored records (the sealer, re-compression), so a seal
// never works from a value that changes under it.
#ifndef DICTLOG_SERVER_POOL_BLOCK_TAIL_H_
#define DICTLOG_SERVER_POOL_BLOCK_TAIL_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace dictlog::pool {

class BlockTail {
 public:
  struct Record {
    uint64_t seq = 0;
    uint64_t raw_bytes = 0;
  };

  BlockTail() = default;
  BlockTail(const BlockTail&) = delete;
  BlockTail& operator=(const BlockTail&) = delete;

  void Add(Record record) ABSL_LOCKS_EXCLUDED(mu_);
  // Takes `count` (>= 1) seqs from `next_seq` and marks them pending; returns the
  // first. Every reservation must be landed.
  uint64_t Reserve(std::atomic<uint64_t>& next_seq, uint64_t count) ABSL_LOCKS_EXCLUDED(mu_);
  // Ends the reservation starting at `first`: adds `written` (its records to pack; none
  // if the write failed) and clears its pending mark, in one step. With `cut` (the
  // append sealed blocks of its own), also puts a cut at `first`.
  void Land(uint64_t first, const std::vector<Record>& written, bool cut = false)
      ABSL_LOCKS_EXCLUDED(mu_);
  // When the records before the oldest pending seq (and before the first cut after the
  // oldest record) hold at least `block_bytes` of payload: removes and returns the
  // oldest of them whose payloads add up to at most `block_bytes` (at least one). When
  // they hold less but that cut comes first and every seq before it has landed: all of
  // them (a short block). Otherwise returns nothing.
  std::vector<Record> TakeBlock(uint64_t block_bytes) ABSL_LOCKS_EXCLUDED(mu_);
  // Puts back records a failed seal took.
  void Restore(const std::vector<Record>& records) ABSL_LOCKS_EXCLUDED(mu_);

  size_t records() const ABSL_LOCKS_EXCLUDED(mu_);
  // The smallest seq in the tail, if any.
  std::optional<uint64_t> OldestSeq() const ABSL_LOCKS_EXCLUDED(mu_);
  // The smallest seq in the tail or pending (UINT64_MAX: none), without the lock. A
  // hint for readers: every smaller seq is sealed, stays single (a record that fills a
  // block alone) or is being sealed; it may be stale by the time it is used.
  uint64_t OpenFrom() const { return open_from_.load(std::memory_order_acquire); }
  uint64_t bytes() const ABSL_LOCKS_EXCLUDED(mu_);

  absl::Mutex& seal_mutex() { return seal_mu_; }

 private:
  mutable absl::Mutex mu_;
  std::map<uint64_t, uint64_t> raw_by_seq_ ABSL_GUARDED_BY(mu_);
  uint64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  std::set<uint64_t> pending_ ABSL_GUARDED_BY(mu_);  // First seqs of reservations.
  std::set<uint64_t> cuts_ ABSL_GUARDED_BY(mu_);
  // Drops the cuts that no record or reservation lies before any more.
  void DropPassedCutsLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Publishes OpenFrom() after a change to the records or reservations.
  void NoteOpenFromLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::atomic<uint64_t> open_from_{UINT64_MAX};
  absl::Mutex seal_mu_;
};

}  // namespace dictlog::pool

#endif  // DICTLOG_SERVER_POOL_BLOCK_TAIL_H_
