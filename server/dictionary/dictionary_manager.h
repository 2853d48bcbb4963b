// DictionaryManager: the lifecycle of a server's dictionaries. It trains candidates
// on a pool's newest stored records, evaluates them against the pool's active
// dictionary, keeps every version (in the store; decoded on demand by the
// DictionaryCache that every decode uses, each pool's active one pinned there),
// activates and rolls back, imports dictionaries trained elsewhere, and retires those
// that nothing references (gc).
//
// Sampling reads the pool's newest records from the store (up to sample_budget_multiple
// x the dictionary size), so a sample never depends on memory a crash would lose.
//
// Thread safety: all methods may be called concurrently; changes are serialized
// internally. Training runs without holding locks. Appends that encode with a
// dictionary hold write_gate() shared until their write is done; gc holds it
// exclusively, so it never retires a dictionary an append is about to reference.
// Readers hold nothing: a read that took a stored value before a re-compression
// rewrote it may find the value's dictionary retired by a gc since. RetiredGeneration()
// moves before every retirement, so such a reader knows to read the value again
// (docs/dictionaries.md, "Reads during re-compression and gc").
#ifndef DICTLOG_SERVER_DICTIONARY_DICTIONARY_MANAGER_H_
#define DICTLOG_SERVER_DICTIONARY_DICTIONARY_MANAGER_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "proto/dictlog.pb.h"
#include "server/dictionary/dictionary_cache.h"
#include "server/dictionary/dictionary_mode.h"
#include "server/dictionary/dictionary_sizing.h"
#include "server/pool/pool_registry.h"
#include "server/store/store.h"

namespace dictlog::dictionary {

// What ReactivateBest measured and did.
struct Reactivation {
  bool activated = false;
  uint32_t id = 0;           // The best earlier dictionary (0: none was tried).
  double ratio = 0;          // Its ratio on the sample (stored form).
  double active_ratio = 0;   // The active dictionary's on the same records.
  double gain = 0;           // ratio / active_ratio - 1.
  size_t tried = 0;          // Earlier dictionaries evaluated.
  // Activated, and the dictionary it replaced was trained by drift (source "drift"):
  // the data went back from a burst.
  bool replaced_drift = false;
  std::string note;          // For the log: what was tried and why (not) activated.
};

// ReactivateBest tries at most this many of a pool's earlier dictionaries, the newest.
inline constexpr size_t kMaxReactivationCandidates = 4;

struct DictionaryManagerOptions {
  // TrainDictionary(activate=true) and automatic training activate a candidate only if
  // it beats the active dictionary (or none) by at least this much. Default 3%.
  double activation_min_gain = 0.03;
  // Sample budget, as a multiple of the dictionary size. Default 100.
  size_t sample_budget_multiple = 100;
  // DICTIONARY_MODE_AUTO's full_slots (dictionary_mode.h).
  size_t auto_full_dictionaries = 64;
  // Cluster mode (docs/cluster.md, ADR 0020): where Train sends a trained dictionary
  // (`activate`: if the pool's active one is still `base_id`) instead of storing it;
  // answers with its info once this node applied it from the log (AddLogged). Empty:
  // single-node mode.
  std::function<absl::StatusOr<v1::DictionaryInfo>(storage::DictionaryRecord record,
                                                   bool activate, uint32_t base_id)>
      publish;
};

class DictionaryManager {
 public:
  // Loads the metadata of every stored dictionary and pins each pool's active one in
  // `dictionaries`. All pointers are borrowed and must outlive the manager. DATA_LOSS if a pool's
  // active dictionary is missing or a stored dictionary is malformed. In single-node
  // mode a store with a dictionary id lease loads without the dictionaries it cannot
  // read (a damaged table block; unreadable_at_open() says which), and a pool whose
  // active dictionary is one of them goes on without a dictionary until one is
  // activated; ids go on from the lease, so none is given twice.
  static absl::StatusOr<std::unique_ptr<DictionaryManager>> Load(
      store::Store* store, pool::PoolRegistry* pools, DictionaryCache* dictionaries,
      DictionaryManagerOptions options);

  // Ids a dictionary id lease covers at a time (one synced write per this many).
  static constexpr uint32_t kIdLeaseStep = 64;

  DictionaryManager(const DictionaryManager&) = delete;
  DictionaryManager& operator=(const DictionaryManager&) = delete;

  // Trains a candidate (`dictionary_bytes` 0: the pool's option) and stores it; with
  // `activate`, activates it if its gain reaches activation_min_gain. `source` is
  // recorded ("auto", "drift", "train"). `sample_bytes` (0: the sample budget) limits
  // the sample to the pool's newest records of about that many payload bytes (drift:
  // only the data since it changed). `search` (sized trainings only): how many
  // candidates to try (dictionary_sizing.h). NOT_FOUND for an unknown pool;
  // FAILED_PRECONDITION if the pool (or the sample) holds too little data.
  absl::StatusOr<v1::TrainDictionaryResponse> Train(
      absl::string_view pool, uint32_t dictionary_bytes, bool activate,
      absl::string_view source, size_t sample_bytes = 0,
      CandidateSearch search = CandidateSearch::kFull) ABSL_LOCKS_EXCLUDED(mu_);
  // The most payload bytes a training at `dictionary_bytes` samples: the sample budget
  // (sample_budget_multiple x the size).
  size_t SampleBudgetBytes(uint32_t dictionary_bytes) const {
    return options_.sample_budget_multiple * dictionary_bytes;
  }
  // Drift back (docs/dictionaries.md, "Drift"): compresses the pool's newest records of
  // about `sample_bytes` payload bytes with its active dictionary and with up to
  // kMaxReactivationCandidates of its earlier dictionaries (the newest ids; retired
  // ones are gone), each in the stored form appends use, and activates the best
  // earlier one if it beats the active one by activation_min_gain. Trains nothing and
  // stores nothing but the activation; until the dictionary is activated otherwise or
  // the server restarts, drift judges it against the ratio measured here
  // (DriftReferenceRatio). NOT_FOUND for an unknown pool;
  // FAILED_PRECONDITION if it has no active dictionary. Too few records (< 5) or no
  // earlier dictionary: not activated.
  absl::StatusOr<Reactivation> ReactivateBest(absl::string_view pool, size_t sample_bytes)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Whether the pool has an earlier dictionary than `active` that ReactivateBest would
  // try (else an attempt can only end without one).
  bool HasEarlierDictionaries(uint32_t pool_id, uint32_t active) const
      ABSL_LOCKS_EXCLUDED(mu_) {
    return !EarlierDictionaries(pool_id, active).empty();
  }
  // The ratio drift compares dictionary `id`'s recent appends with: the ratio it was
  // activated with. That is the ratio ReactivateBest measured on the records that
  // brought it back, if it was last activated there (memory only); else the held-out
  // ratio it was evaluated with when trained, or without an evaluation (imported) the
  // first window ratio recorded below; 0 if none or unknown.
  double DriftReferenceRatio(uint32_t id) const ABSL_LOCKS_EXCLUDED(mu_);
  // Persists `ratio` as dictionary `id`'s first window ratio, if it has no evaluation
  // and none recorded yet (a no-op otherwise): the drift comparison then survives a
  // restart. NOT_FOUND if unknown.
  absl::Status RecordFirstWindowRatio(uint32_t id, double ratio) ABSL_LOCKS_EXCLUDED(mu_);
  // NOT_FOUND if either is unknown; INVALID_ARGUMENT if the dictionary belongs to
  // another pool.
  absl::StatusOr<v1::DictionaryInfo> Activate(absl::string_view pool, uint32_t id)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Stores `content` (a standard zstd dictionary) for `pool` under a new id, or, if
  // the pool has a dictionary identical to it but for the id, returns that one and
  // stores nothing. Either way, `activate` activates the result, and the info says
  // what became of the content's id (imported_id, import_existing, import_note).
  absl::StatusOr<v1::DictionaryInfo> Import(absl::string_view pool, std::string content,
                                            bool activate) ABSL_LOCKS_EXCLUDED(mu_, import_mu_);
  // Every dictionary (of one pool if `pool` is not empty), by id.
  absl::StatusOr<std::vector<v1::DictionaryInfo>> List(absl::string_view pool) const
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<v1::GetDictionaryResponse> Get(uint32_t id) const ABSL_LOCKS_EXCLUDED(mu_);
  // The content check (codec::DictionaryCheck) of dictionary `id`, which frames carry
  // beside its id; 0 if the id is unknown or retired.
  uint32_t ContentCheck(uint32_t id) const ABSL_LOCKS_EXCLUDED(mu_);
  // Cluster mode's materializer: stores a dictionary applied from the log under the
  // id its record names (the log decided it), not activated.
  absl::Status AddLogged(storage::DictionaryRecord record) ABSL_LOCKS_EXCLUDED(mu_);
  // Deletes (or with dry_run only lists) the dictionaries no record references and no
  // pool has active (of `pool` only, if not empty).
  absl::StatusOr<std::vector<v1::DictionaryInfo>> Gc(bool dry_run,
                                                     absl::string_view pool = {})
      ABSL_LOCKS_EXCLUDED(mu_);

  // Forgets the dictionaries of pool `pool_id`, which the registry no longer has (a
  // deleted pool): retires any still stored (Store::DeletePoolData retires those it
  // finds; this catches one a training stored meanwhile) and drops them from the
  // cache, pinned or not. Returns how many it forgot. A dictionary stored for the pool
  // after this is retired by the call that stores it (FAILED_PRECONDITION).
  absl::StatusOr<size_t> ForgetPool(uint32_t pool_id) ABSL_LOCKS_EXCLUDED(mu_);

  absl::Mutex& write_gate() { return write_gate_; }

  // Why some stored dictionaries could not be read when the store opened (DATA_LOSS,
  // naming the ids around them), or OK. Reads of records that name one are DATA_LOSS.
  const absl::Status& unreadable_at_open() const { return unreadable_at_open_; }

  // Moves (increases) before gc retires a dictionary. A reader takes it before reading
  // stored values; if a decode of them fails and it has moved since, the values may
  // name a dictionary retired after a re-compression rewrote them: read them again.
  uint64_t RetiredGeneration() const { return retired_generation_.load(); }

  // What DICTIONARY_MODE_AUTO weighs across the server: reads of every pool, and the
  // live (pinned) dictionaries. Sums over all pools: take it once per listing.
  struct ServerHeat {
    uint64_t all_reads = 0;
    size_t live_dictionaries = 0;
  };
  ServerHeat Heat() const;
  // The form `pool`'s next dictionary takes, and why.
  ModeChoice NextMode(const pool::Pool& pool, const ServerHeat& heat) const;
  ModeChoice NextMode(const pool::Pool& pool) const { return NextMode(pool, Heat()); }

  // Test hook: runs in Train and Import once the new dictionary (its id) is stored and
  // decodable, before the manager lists it. Set before those calls start.
  void SetAfterStoreHookForTest(std::function<void(uint32_t id)> hook) {
    after_store_for_test_ = std::move(hook);
  }

 private:
  DictionaryManager(store::Store* store, pool::PoolRegistry* pools,
                    DictionaryCache* dictionaries, DictionaryManagerOptions options)
      : store_(store), pools_(pools), dictionaries_(dictionaries), options_(options) {}

  absl::Status LoadAll() ABSL_LOCKS_EXCLUDED(mu_);
  // The pool's newest payloads up to `budget_bytes`, oldest first. Records (and
  // blocks) that read as DATA_LOSS are left out.
  absl::StatusOr<std::vector<std::string>> Sample(const pool::Pool& pool,
                                                  size_t budget_bytes) const;
  // Sample's part from the pool's indexed blocks (block mode), newest first, until
  // *bytes reaches the budget.
  absl::Status SampleIndexedBlocks(const pool::Pool& pool, size_t budget_bytes,
                                   size_t* bytes, std::vector<std::string>* newest_first) const;
  // The next dictionary id; in single-node mode below the stored id lease, which it
  // moves kIdLeaseStep ids on (a synced write) when it runs out.
  absl::StatusOr<uint32_t> AllocateId() ABSL_LOCKS_EXCLUDED(mu_);
  // The id of `pool`'s dictionary equal to `content` but for the id bytes, if any.
  absl::StatusOr<uint32_t> FindIdentical(const pool::Pool& pool,
                                         const std::string& content) const
      ABSL_LOCKS_EXCLUDED(mu_);
  // Import's info for the dictionary `id` (activated with `activate`).
  absl::StatusOr<v1::DictionaryInfo> ImportedInfo(const pool::Pool& pool, uint32_t id,
                                                  bool activate) ABSL_LOCKS_EXCLUDED(mu_);
  // Persists the dictionary and makes it decodable, then runs `then` (activation or
  // its info) under mu_ without releasing it in between, so a gc cannot retire the new
  // dictionary first.
  absl::StatusOr<v1::DictionaryInfo> Add(
      storage::DictionaryRecord record,
      absl::FunctionRef<absl::StatusOr<v1::DictionaryInfo>(const storage::DictionaryRecord&)>
          then) ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<v1::DictionaryInfo> ActivateLocked(const pool::Pool& pool, uint32_t id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Retires `record`'s dictionary in the store and forgets it everywhere but records_
  // (the caller erases it there: it may be iterating).
  absl::Status RetireLocked(const storage::DictionaryRecord& record)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<v1::DictionaryInfo> InfoLocked(const storage::DictionaryRecord& record) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Stored bytes of `records` compressed one by one with dictionary `id` at the level
  // `pool`'s frames use with it (dictionary_reactivation.cc).
  absl::StatusOr<uint64_t> StoredBytesWith(const pool::Pool& pool, uint32_t id,
                                           const std::vector<std::string>& records) const;
  // The pool's earlier dictionaries to try, newest first: not `active`, at most
  // kMaxReactivationCandidates.
  std::vector<uint32_t> EarlierDictionaries(uint32_t pool_id, uint32_t active) const
      ABSL_LOCKS_EXCLUDED(mu_);

  store::Store* const store_;
  pool::PoolRegistry* const pools_;
  DictionaryCache* const dictionaries_;
  const DictionaryManagerOptions options_;

  absl::Mutex write_gate_;
  // Held by Import from its look-up of identical content to its store: two imports of
  // the same content store one dictionary. Taken before mu_.
  absl::Mutex import_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  std::atomic<uint64_t> retired_generation_{0};
  std::function<void(uint32_t)> after_store_for_test_;
  mutable absl::Mutex mu_;
  // Metadata of every dictionary (content left empty: the store has it).
  std::map<uint32_t, storage::DictionaryRecord> records_ ABSL_GUARDED_BY(mu_);
  uint32_t next_id_ ABSL_GUARDED_BY(mu_) = 0;
  // The stored dictionary id lease (Store::DictionaryIdLease); 0 in cluster mode.
  uint32_t lease_ ABSL_GUARDED_BY(mu_) = 0;
  // Set by LoadAll only, before the manager is shared.
  absl::Status unreadable_at_open_;
  // The ratio each dictionary ReactivateBest activated was measured at there; erased
  // when the dictionary is activated any other way or retired.
  absl::flat_hash_map<uint32_t, double> reactivated_ratio_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dictlog::dictionary

#endif  // DICTLOG_SERVER_DICTIONARY_DICTIONARY_MANAGER_H_
