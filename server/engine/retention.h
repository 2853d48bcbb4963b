// Retention: deletes the oldest records of pools over their `max_age` or `max_bytes`
// (pool options; ADR 0015). A pass looks at each such pool's oldest records (at most
// RetentionOptions::max_records_per_pass, from the records family and, in block mode,
// the indexed blocks), decides where the expired ones end (block mode: only between
// blocks, so a block goes whole with its records), and
// writes one atomic batch: RocksDB range deletions of (pool, seq) ranges in the
// records, blocks and times families, the counters of the pool and of every
// dictionary those records named decreased by exactly what goes, and the pool's new
// low-water mark (PoolRecord.retained_from_seq) in the catalog. Reads of ids below the
// mark are NOT_FOUND "expired". Then it compacts the expired ranges so the disk space
// comes back: once a pool's backlog is drained (a pass found fewer than
// max_records_per_pass of it due; a block-aligned cut that expires fewer is not
// drained), or after kCompactAfterPasses full passes of it. A
// compaction rewrites the table files that straddle the range's end, so compacting
// after every pass of a long backlog would rewrite the pool's remaining files once per
// pass (quadratic in the backlog); compacting the run's whole range once is linear.
//
// A pass holds the dictionary manager's write gate exclusively (as dictionary gc does):
// no append, block seal or re-compression step of any pool runs meanwhile, so every
// seq allocated is written and the counters it reads are final. The work per pass is
// bounded, so appends wait at most one pool's bounded pass.
//
// Thread safety: all methods may be called concurrently. The background thread (if
// any) runs a pass every RetentionOptions::interval, and the next one at once while
// passes keep expiring records (each releases the write gate), until destruction.
#ifndef DICTLOG_SERVER_ENGINE_RETENTION_H_
#define DICTLOG_SERVER_ENGINE_RETENTION_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "codec/dictionary.h"
#include "server/pool/pool_registry.h"
#include "server/store/store.h"

namespace dictlog::engine {

struct RetentionOptions {
  // Time between background passes. Default 1 minute. Zero: no background thread
  // (passes run only through RunPass).
  absl::Duration interval = absl::Minutes(1);
  // Most records one pass looks at per pool. Default 10,000.
  size_t max_records_per_pass = 10000;
  // The time records expire against; called from the pass's thread. Null: the store's
  // clock (Store::Now, which appends are stamped with).
  std::function<absl::Time()> clock;
};

// What retention has done since the server started.
struct RetentionStats {
  uint64_t runs = 0;         // Passes over all pools.
  uint64_t compactions = 0;  // Compactions of expired ranges (one per pool and run).
  struct Expired {
    uint64_t records = 0;
    uint64_t stored_bytes = 0;
  };
  std::map<std::string, Expired> expired;  // By pool name.
};

class Retention {
 public:
  // Borrows everything; all must outlive the Retention. `write_gate` is the dictionary
  // manager's.
  Retention(store::Store* store, pool::PoolRegistry* registry,
            const codec::DictionaryLookup* dictionaries, absl::Mutex* write_gate,
            RetentionOptions options);
  Retention(const Retention&) = delete;
  Retention& operator=(const Retention&) = delete;
  ~Retention();

  // One pass over every pool with a limit; the records it expired. A pool whose pass
  // fails is reported on stderr and skipped; the first error is returned after all.
  absl::StatusOr<uint64_t> RunPass();
  RetentionStats Stats() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // What one pass expired of one pool.
  struct Expired {
    uint64_t records = 0;
    uint64_t end_seq = 0;  // Every seq below it is gone (with records > 0).
    // The pass stopped at its record limit with every record it looked at expiring:
    // more may be due (a block-aligned cut may still expire fewer than the limit).
    bool behind = false;
  };
  // The records of `pool` this pass expires, all written; not compacted yet.
  absl::StatusOr<Expired> ExpirePool(pool::Pool& pool, absl::Time now);
  // Notes what a pass expired of `pool`; compacts the pool's expired range when its
  // backlog is drained or it has waited kCompactAfterPasses passes.
  absl::Status MaybeCompact(const pool::Pool& pool, const Expired& expired)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(pass_mu_);
  void Loop();

  store::Store* const store_;
  pool::PoolRegistry* const registry_;
  const codec::DictionaryLookup* const dictionaries_;
  absl::Mutex* const write_gate_;
  const RetentionOptions options_;

  mutable absl::Mutex mu_;
  RetentionStats stats_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::CondVar wake_;
  absl::Mutex pass_mu_;  // One pass at a time.
  // Pools whose expired ranges are not compacted yet: pool id -> (end seq, passes).
  struct Uncompacted {
    uint64_t end_seq = 0;
    int passes = 0;
  };
  std::map<uint32_t, Uncompacted> uncompacted_ ABSL_GUARDED_BY(pass_mu_);
  std::thread thread_;   // Last: started when everything else is ready.
};

}  // namespace dictlog::engine

#endif  // DICTLOG_SERVER_ENGINE_RETENTION_H_
