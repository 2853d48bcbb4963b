// PoolRegistry: every pool of a server by name and id, loaded from the store at
// start-up; creates pools (on first append or on request), updates their options and
// removes deleted ones, persisting each change in the store's catalog before it takes
// effect. It remembers deleted pools (their catalog tombstones): a pool created under
// a deleted pool's name gets a new id and starts its seqs past the deleted pool's, so
// an old id never names a new record; pool ids are never reused. A new pool also
// starts at the store's seq floor (Store::SeqFloor) or after.
//
// Thread safety: all methods may be called concurrently. Returned pools stay valid
// for as long as the caller holds them.
#ifndef DICTLOG_SERVER_POOL_POOL_REGISTRY_H_
#define DICTLOG_SERVER_POOL_POOL_REGISTRY_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "server/pool/pool.h"
#include "server/store/store.h"

namespace dictlog::pool {

class PoolRegistry {
 public:
  // `store` is borrowed and must outlive the registry. `defaults` (resolved) are the
  // options of pools created without explicit ones. With `skip` (single-node mode,
  // for ids a lost stretch of writes may have handed out: the write-ahead log's replay
  // dropped writes, ADR 0044), first writes in one synced batch a lease `skip` seqs
  // past every pool's next seq and a seq floor `skip` above the store's, so that every
  // pool, those stored and any created later under a lost pool's name, starts past
  // them.
  static absl::StatusOr<std::unique_ptr<PoolRegistry>> Load(store::Store* store,
                                                            v1::PoolOptions defaults,
                                                            uint64_t skip = 0);

  PoolRegistry(const PoolRegistry&) = delete;
  PoolRegistry& operator=(const PoolRegistry&) = delete;

  // nullptr if there is no such pool.
  std::shared_ptr<Pool> Find(absl::string_view name) const ABSL_LOCKS_EXCLUDED(mu_);
  std::shared_ptr<Pool> FindById(uint32_t id) const ABSL_LOCKS_EXCLUDED(mu_);

  // The pool named `name`, created with the default options if missing.
  absl::StatusOr<std::shared_ptr<Pool>> GetOrCreate(absl::string_view name)
      ABSL_LOCKS_EXCLUDED(mu_);
  // ALREADY_EXISTS if the pool exists; INVALID_ARGUMENT for bad name or options.
  absl::StatusOr<std::shared_ptr<Pool>> Create(absl::string_view name,
                                               const v1::PoolOptions& options)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Applies the fields set in `update`. NOT_FOUND if the pool does not exist.
  absl::StatusOr<std::shared_ptr<Pool>> Update(absl::string_view name,
                                               const v1::PoolOptions& update)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Records `dictionary_id` (0: none) as the pool's active dictionary in the catalog.
  // NOT_FOUND if the pool does not exist.
  absl::StatusOr<std::shared_ptr<Pool>> SetActiveDictionaryId(absl::string_view name,
                                                              uint32_t dictionary_id)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Deleting a pool (LogEngine::DeletePool). Remove writes the pool's tombstone
  // (pending), marks the pool deleted and forgets it: from then on the name is free
  // and the pool's id is never handed out again. FAILED_PRECONDITION while an earlier
  // delete of the name is pending. The caller then deletes the pool's data
  // (Store::DeletePoolData) and calls FinishRemove, which removes its catalog entry
  // unless a new pool of the name has replaced it.
  absl::StatusOr<storage::DeletedPool> Remove(Pool& pool) ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status FinishRemove(const storage::DeletedPool& tombstone) ABSL_LOCKS_EXCLUDED(mu_);
  // Whether a pool named `name` was deleted (its tombstone).
  bool WasDeleted(absl::string_view name) const ABSL_LOCKS_EXCLUDED(mu_);
  // Whether pool id `id` was ever handed out (a pool of it may have been deleted).
  bool WasAllocated(uint32_t id) const ABSL_LOCKS_EXCLUDED(mu_);

  // Runs `write` on a copy of `pool`'s catalog entry under the registry's lock, so no
  // Update or activation interleaves with it; `write` changes the entry, persists it
  // (with whatever else belongs in the same batch) and sets it on the pool.
  absl::Status Rewrite(Pool& pool,
                       const std::function<absl::Status(storage::PoolRecord&)>& write)
      ABSL_LOCKS_EXCLUDED(mu_);

  // How many pools there are.
  size_t Count() const ABSL_LOCKS_EXCLUDED(mu_);

  // Every pool, ordered by name.
  std::vector<std::shared_ptr<Pool>> List() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  PoolRegistry(store::Store* store, v1::PoolOptions defaults)
      : store_(store), defaults_(std::move(defaults)) {}

  // Loads the tombstones and finishes the deletes a restart interrupted.
  absl::Status LoadDeleted(std::vector<store::StoredPool>* stored)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Load's `skip`: raises each entry's lease and the floor, in one synced write.
  absl::Status SkipSeqsLocked(uint64_t skip, std::vector<store::StoredPool>* stored)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<std::shared_ptr<Pool>> CreateLocked(absl::string_view name,
                                                     const v1::PoolOptions& options)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  store::Store* const store_;
  const v1::PoolOptions defaults_;

  mutable absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<Pool>, std::less<>> by_name_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint32_t, std::shared_ptr<Pool>> by_id_ ABSL_GUARDED_BY(mu_);
  uint32_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  uint64_t seq_floor_ ABSL_GUARDED_BY(mu_) = 0;  // Store::SeqFloor, as loaded.
  // Tombstones of deleted pools, by name.
  std::map<std::string, storage::DeletedPool, std::less<>> deleted_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dictlog::pool

#endif  // DICTLOG_SERVER_POOL_POOL_REGISTRY_H_
