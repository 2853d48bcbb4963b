// Retention: deletes the oldest records of pools over their `max_age` or `max_bytes`
// (pool options; ADR 0015). A pass looks at each such pool's oldest records (at most
// RetentionOptions::max_records_per_pass, from the records family and, in block mode,
// the indexed blocks), decides where the expired ones end (block mode: only between
// blocks, so a block goes whole with its records), and
// writes one atomic batch: RocksDB range deletions of (pool, seq) ranges in the
// records, blocks and times families, the counters of the pool and of every
// dictionary those records named decreased by exactly what goes, and the pool's new
// low-water mark (PoolRecord.retained_from_seq) in the catalog. Then it compacts the
// ranges so the disk space comes back. Reads of ids below the mark are NOT_FOUND
// "expired".
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
  uint64_t runs = 0;  // Passes over all pools.
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
  // The records of `pool` this pass expires (0 if none), all written.
  absl::StatusOr<uint64_t> ExpirePool(pool::Pool& pool, absl::Time now);
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
  std::thread thread_;   // Last: started when everything else is ready.
};

}  // namespace dictlog::engine

#endif  // DICTLOG_SERVER_ENGINE_RETENTION_H_
