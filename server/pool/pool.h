// Pool: the live state of one pool: identity, options, active dictionary, the next
// sequence number, its categories and its counters. Created by PoolRegistry from the
// store's catalog; persistent changes go through the registry or CategoryIndex.
//
// Thread safety: all methods may be called concurrently.
#ifndef DICTLOG_SERVER_POOL_POOL_H_
#define DICTLOG_SERVER_POOL_POOL_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "proto/dictlog.pb.h"
#include "codec/dictionary.h"
#include "server/pool/block_tail.h"
#include "server/store/store.h"

namespace dictlog::pool {

class Pool {
 public:
  explicit Pool(const store::StoredPool& stored);
  // The first seq a pool loaded from `stored` hands out (next_seq() once loaded).
  static uint64_t NextSeq(const store::StoredPool& stored);

  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  uint32_t id() const { return id_; }
  const std::string& name() const { return name_; }

  storage::PoolRecord record() const ABSL_LOCKS_EXCLUDED(mu_);
  v1::PoolOptions options() const ABSL_LOCKS_EXCLUDED(mu_);
  // Replaces the catalog entry held in memory (the caller has persisted it).
  void set_record(const storage::PoolRecord& record) ABSL_LOCKS_EXCLUDED(mu_);
  // Retention's low-water mark (PoolRecord.retained_from_seq): records with a smaller
  // seq were deleted. 0: none was.
  uint64_t retained_from() const { return retained_from_.load(); }
  // The time of the pool's newest append-time entry written since the server started
  // (0: none yet): appends within the same resolution bucket write none (ADR 0015).
  int64_t last_time_entry_ms() const { return last_time_entry_ms_.load(); }
  void set_last_time_entry_ms(int64_t ms) { last_time_entry_ms_.store(ms); }

  // Why the pool's newest records could not be found when it was loaded (a damaged
  // table block), or OK; it then went on from its seq lease
  // (store::StoredPool::newest_unreadable).
  const absl::Status& newest_unreadable() const { return newest_unreadable_; }
  // The range of seqs a salvage lost that holds `seq` (store::StoredPool::lost_seqs),
  // or nullopt.
  std::optional<std::pair<uint64_t, uint64_t>> LostRangeHolding(uint64_t seq) const;
  // The first lost range that meets [from, to), or nullopt. Ranges that overlap were
  // merged at load; a binary search.
  std::optional<std::pair<uint64_t, uint64_t>> FirstLostIn(uint64_t from, uint64_t to) const;
  // Every such range, [first, last], disjoint and in order.
  const std::vector<std::pair<uint64_t, uint64_t>>& lost_seqs() const { return lost_seqs_; }
  // The first seq of a pool created under the name of a deleted one (smaller seqs
  // were that pool's ids: PoolRecord.first_seq); 0 for a name never deleted.
  uint64_t first_seq() const { return first_seq_; }
  // The seq the next AllocateSeqs returns.
  uint64_t next_seq() const { return next_seq_.load(); }
  // Set once the pool is deleted (PoolRegistry::Remove): writers that found it before
  // must write nothing more of it.
  bool deleted() const { return deleted_.load(); }
  void set_deleted() { deleted_.store(true); }

  // Reserves `count` consecutive sequence numbers and returns the first. Numbers of a
  // failed write are never reused, so a pool's seqs increase but may have gaps.
  uint64_t AllocateSeqs(uint64_t count) { return next_seq_.fetch_add(count); }
  // Cluster mode: records were written with seqs given by the log (up to next - 1):
  // later allocations start at `next` or after.
  void AdvanceSeqs(uint64_t next) {
    uint64_t now = next_seq_.load();
    while (now < next && !next_seq_.compare_exchange_weak(now, next)) {
    }
  }
  // AllocateSeqs for an append (count >= 1): in block mode the seqs stay pending in
  // the tail until the caller lands them (BlockTail::Land), written or not.
  uint64_t ReserveSeqs(uint64_t count) {
    return indexed_from_ != 0 ? tail_.Reserve(next_seq_, count) : AllocateSeqs(count);
  }
  // Seqs a single-node append takes from ReserveSeqs are handed out only once the
  // pool's lease covers them: returns at once if seqs below `end` are covered, else
  // writes (synced) a lease of `end` + kSeqLease and waits for it. A power loss can
  // then take acknowledged records but not their ids: the reopened pool starts at
  // its lease (StoredPool::seq_ceiling). Concurrent callers share one write.
  absl::Status CoverSeqs(uint64_t end, store::Store& store) ABSL_LOCKS_EXCLUDED(lease_mu_);
  // Leases `lease` seqs past each pool's next seq (never less than it has) in one
  // synced write, holding every pool's lease mutex: at start-up (one fsync instead of
  // one at each pool's first append).
  static absl::Status LeaseAll(absl::Span<const std::shared_ptr<Pool>> pools,
                               store::Store& store, uint64_t lease = kSeqLease);
  // Seqs one lease covers: a write per this many records at most. The seqs between
  // the last one handed out and the lease are skipped after a power loss or a crash.
  static constexpr uint64_t kSeqLease = uint64_t{1} << 20;
  static constexpr uint64_t kRestoreLease = uint64_t{1} << 32;
  // The lease to write when the pool closes cleanly (next_seq: no seq is skipped on
  // reopen), if it took one since it was loaded.
  std::optional<store::SeqCeiling> ExactLease() const;
  // Block mode: the first seq sealed into indexed blocks (found by their seq ranges,
  // ADR 0016); the records before it are sealed behind entry values. 0 in record mode.
  uint64_t indexed_from_seq() const { return indexed_from_; }
  // Block mode with indexed blocks: the seqs below this are sealed into blocks, being
  // sealed, or single for good (records that fill a block alone), so a read may look in
  // the blocks first. A hint that may be stale (BlockTail::OpenFrom); 0 in record mode.
  uint64_t sealed_below() const {
    return indexed_from_ == 0 ? 0 : std::min(tail_.OpenFrom(), next_seq());
  }
  // Records read from the pool since the server started (the heat that
  // DICTIONARY_MODE_AUTO weighs).
  void CountReads(uint64_t n) { reads_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t reads() const { return reads_.load(std::memory_order_relaxed); }

  // The index that stored records use for `category`: 0 for the pool's own name,
  // otherwise 1, 2, ... in order of first appearance. A new category is persisted in
  // `store` before its index is returned.
  absl::StatusOr<uint32_t> CategoryIndex(absl::string_view category, store::Store& store)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The index of a category the pool has already stored, if any.
  std::optional<uint32_t> FindCategoryIndex(absl::string_view category) const
      ABSL_LOCKS_EXCLUDED(mu_);
  // The categories stored under an index of their own (1, 2, ...), in index order:
  // every category but the pool's own name.
  std::vector<std::string> Categories() const ABSL_LOCKS_EXCLUDED(mu_);
  size_t CategoryCount() const ABSL_LOCKS_EXCLUDED(mu_);
  // DATA_LOSS if no category has this index.
  absl::StatusOr<std::string> CategoryName(uint32_t index) const ABSL_LOCKS_EXCLUDED(mu_);

  void AddCounters(const store::PoolCounters& delta) ABSL_LOCKS_EXCLUDED(mu_);
  store::PoolCounters counters() const ABSL_LOCKS_EXCLUDED(mu_);
  uint32_t active_dictionary_id() const ABSL_LOCKS_EXCLUDED(mu_);

  // The bytes of the active dictionary (the caller has persisted its id); nullptr
  // clears it.
  void SetActiveDictionary(std::shared_ptr<const codec::DecoderDictionary> dictionary)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Whether the pool has an active dictionary to compress with: false without one, and
  // for a pool whose active dictionary could not be read when the store opened.
  bool has_active_dictionary() const ABSL_LOCKS_EXCLUDED(mu_);
  // Records why the pool's active dictionary could not be read when the store opened
  // (the pool goes on without one); shown with newest_unreadable() in Info().
  void SetActiveUnreadable(absl::Status why) ABSL_LOCKS_EXCLUDED(mu_);
  // The encoder for the active dictionary at the pool's current level (built on first
  // use after an activation or level change); nullptr if the pool has none.
  absl::StatusOr<std::shared_ptr<const codec::EncoderDictionary>> Encoder()
      ABSL_LOCKS_EXCLUDED(mu_);

  // Name, options, counters, active dictionary, categories, and what was found
  // damaged at open (damaged_at_open: the newest records, the active dictionary).
  v1::PoolInfo Info() const ABSL_LOCKS_EXCLUDED(mu_);

  bool block_mode() const { return options().storage_mode() == v1::STORAGE_MODE_BLOCK; }
  // Block mode: the records not yet packed into a block.
  BlockTail& tail() { return tail_; }

 private:
  const uint32_t id_;
  const std::string name_;
  std::atomic<uint64_t> next_seq_;
  const uint64_t indexed_from_;
  std::atomic<uint64_t> reads_{0};
  std::atomic<uint64_t> retained_from_;  // Mirrors record_.retained_from_seq().
  const uint64_t first_seq_;
  // Sorted by first seq; fixed at load.
  const std::vector<std::pair<uint64_t, uint64_t>> lost_seqs_;
  const absl::Status newest_unreadable_;
  std::atomic<bool> deleted_{false};
  std::atomic<int64_t> last_time_entry_ms_{0};
  BlockTail tail_;
  // Seqs below this are covered by a lease written since the pool was loaded (0:
  // none yet). Raised under lease_mu_ once the lease is durable.
  std::atomic<uint64_t> leased_{0};
  absl::Mutex lease_mu_;

  mutable absl::Mutex mu_;
  storage::PoolRecord record_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> categories_ ABSL_GUARDED_BY(mu_);  // [i - 1]: index i.
  absl::flat_hash_map<std::string, uint32_t> category_index_ ABSL_GUARDED_BY(mu_);
  store::PoolCounters counters_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const codec::DecoderDictionary> active_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const codec::EncoderDictionary> encoder_ ABSL_GUARDED_BY(mu_);
  absl::Status active_unreadable_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dictlog::pool

#endif  // DICTLOG_SERVER_POOL_POOL_H_
