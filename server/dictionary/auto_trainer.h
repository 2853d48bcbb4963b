// AutoTrainer: gives pools their first dictionary, early, grows it, and retrains it
// when the pool's data drifts. After appends, the engine tells it which pools grew; a
// pool without a dictionary that holds at least first_min_bytes (or, with that 0,
// min_bytes_multiple x its dictionary size), and min_records records, is queued, and
// a background thread trains (sized to the data: dictionary_sizing.h) and, if the
// gain is enough, activates a dictionary for it. `threads` threads train at once
// (dictlogd: 2, at most the machine's cores), each a different pool, the queue's
// oldest first: a pool that reaches its training point does not wait for every pool
// queued before it. Each training holds its sample (at most the manager's sample
// budget, 1.6 MB for a 16 KiB dictionary) and the trainer's working memory, so memory
// grows with `threads`, not with the pools queued. A pool is queued again each time its
// raw bytes have doubled since, until it has been queued with a dictionary at
// min_bytes_multiple x its dictionary size or more, or a first dictionary queued there
// (both try the full size) has been activated (so with first_min_bytes 16 KiB and a
// 16 KiB dictionary: at 16, 32, 64 and 128 KiB; a pool that jumps from 16 KiB to 1 MB:
// once more, at 1 MB); a pool without a dictionary is tried at each doubling, as
// before.
//
// Quick first dictionary (quick_first): a pool with no dictionary queued at full size
// or more (e.g. its first append was a large batch) is trained from one candidate
// (CandidateSearch::kQuick) instead of up to nine, so its appends get a dictionary
// (and its earlier records their re-encode) seconds sooner; once that is activated,
// the pool is queued again when its raw bytes have doubled since, for the full
// candidate search (gated like any growth; with bulk_policy, every trainer setting at
// the configured size, below). Pools queued below full size get the full
// search from the start (their samples are small, so it is cheap). A restart in
// between forgets the full search still due.
//
// Bulk-load policy (bulk_policy; ADR 0029): a training that starts when the pool holds
// its whole sample budget (the manager's SampleBudgetBytes: 1.6 MB for 16 KiB) counts
// as the training at full size, however small the pool was when it was queued: once
// activated, the pool is not grown (a growth would sample the same budget of the same
// pool's newer records; a change in the data is drift's to find). And any training
// (first, growth, drift retraining or its growth) whose sample, when it starts,
// supports the pool's configured size tries that size only (CandidateSearch::kLargest:
// fastCover d=8 and d=6, and COVER on samples up to 256 KiB: 2 or 3 candidates instead
// of 6 or 9; ADR 0029, 0035, 0050): on such samples the configured size won 321 of
// 325 logged trainings, the other 4 by at most 0.3%. Smaller samples search every
// size; a one-candidate training (kQuick) stays one candidate.
//
// Drift (docs/dictionaries.md): a pool whose growth is done is checked after each
// append: when its DriftTracker signal is degraded by at least its
// drift_threshold_percent option (0: never), the pool's data starts again (its
// origin) at the window's newer half, or its older half if that alone is degraded
// too. Once it holds first_min_bytes since, it is
// trained on its records since the origin only, and grown from there (at each doubling
// of the data since the origin, up to full size), each candidate activated only on
// measured gain. After a drift retraining, the next needs at least min_bytes_multiple
// x the dictionary size of new appends, twice as much after each further one, activated
// or not (back-off: data that alternates between formats drifts at every switch, and a
// retraining on the newest burst always gains on it), back to the least for a drift
// that comes kDriftSettledMultiple x the wait or more after the last retraining. After
// a drift retraining that activated nothing, the pool's next ones try one candidate
// (CandidateSearch::kQuick) until any dictionary of it is activated again: the full
// search found nothing better for such data already, and a change of format that
// needs a new dictionary gains far more than the activation gain with any candidate
// (if one is activated, the growth on the new data searches in full). And while that
// dictionary stays active, degraded windows within the threshold of the range of
// ratios that started such retrainings are the same data: they start no retraining
// and no reactivation check (ADR 0052). One training per pool at a time, as for all.
//
// Drift back: whenever a pool with a dictionary is degraded past its threshold (during
// growth too, and before a drift retraining is due) and has an earlier dictionary, the
// trainer first measures the
// pool's earlier dictionaries (DictionaryManager::ReactivateBest, at most
// kMaxReactivationCandidates) on the degraded part of the window and activates the
// best if it beats the active one by the activation gain: data that returns to an
// earlier format gets that format's broad dictionary back at once, instead of a narrow
// one trained on a burst. Drift then judges it against the ratio it was reactivated
// with (DictionaryManager::DriftReferenceRatio), not its evaluation on its whole
// training mix, which a single section of that mix may fall short of. If the
// dictionary it replaced was a drift one, the drift is over: a drift retraining
// pending is dropped and a growth on drifted data stops (ADR 0036). Otherwise a drift
// retraining pending goes on, gated against it, and a growth on drifted data restarts
// from where the data changed back (the degraded part), so it never mixes the burst
// with the return. A training due when an attempt is queued waits for the next Notify
// after it. An attempt that finds nothing better waits for a window's bytes of appends
// before the next, twice as long after each further one (reset by any activation).
//
// Appends during a pool's training or attempt queue nothing for it (one at a time per
// pool); when it ends, a pool that had such appends is notified again (through
// `find_pool`), so a training point they reached is not missed when no append follows.
//
// When a dictionary is activated, the trainer calls `on_activated` (the engine
// re-encodes the records stored before a first or grown dictionary; after drift, its
// upkeep policy decides). When a training of a pool that had no dictionary when it was
// queued ends without one (failed, or too little gain), it calls `on_first_missed`
// (the engine then compresses what the pool stored uncompressed for its first
// dictionary).
//
// Thread safety: Notify and WaitIdle may be called from any thread. `on_activated`
// and `on_first_missed` run on the training threads, concurrently for different pools
// when threads > 1.
// The destructor lets the trainings in progress finish, then stops the threads.
#ifndef DICTLOG_SERVER_DICTIONARY_AUTO_TRAINER_H_
#define DICTLOG_SERVER_DICTIONARY_AUTO_TRAINER_H_

#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "server/dictionary/dictionary_manager.h"
#include "server/dictionary/drift_tracker.h"
#include "server/pool/pool.h"

namespace dictlog::dictionary {

struct AutoTrainerOptions {
  // Train when a pool holds this many times its dictionary size. Default 8 (128 KiB
  // for the default 16 KiB dictionary).
  uint64_t min_bytes_multiple = 8;
  // ... and at least this many records. Default 20: zstd's trainers need 5 training
  // records, and the evaluation holds out every 10th record, so 20 is the least that
  // leaves it two (a pool of long records, 1-2 KiB each, reaches the first training
  // point with 8 to 16: it waits for 20, not for 100 as before, storing raw meanwhile).
  uint64_t min_records = 20;
  // First training at this many raw bytes, then again at each doubling below
  // min_bytes_multiple x the dictionary size. 0 (the default here; dictlogd's
  // --auto_train_first_bytes is 16384): only at min_bytes_multiple x.
  uint64_t first_min_bytes = 0;
  // Trainings at once (different pools). Default 1; dictlogd's --auto_train_threads
  // is 2 (at most the machine's cores). 0 counts as 1.
  size_t threads = 1;
  // A first dictionary queued at full size is trained from one candidate, the full
  // search following at the pool's next doubling (above). Default false (dictlogd's
  // --auto_train_quick_first too: ADR 0023).
  bool quick_first = false;
  // The bulk-load policy above. Default false (dictlogd's --auto_train_bulk_policy is
  // true).
  bool bulk_policy = false;
  // The training threads' nice value (Linux: per thread; 0 leaves them as created;
  // threads they start, e.g. a re-encode job's, inherit it): trainings take the CPU
  // that appends and reads leave. Default 0 (dictlogd's --auto_train_nice: 10).
  int nice = 0;
};

// What automatic training has done since start-up.
struct AutoTrainerStats {
  uint64_t queued = 0;         // Pools waiting to be trained.
  bool training = false;       // A training is running.
  uint64_t running = 0;        // Trainings running now (at most `threads`).
  uint64_t activated = 0;      // Trainings whose dictionary was activated.
  uint64_t not_activated = 0;  // Trainings whose gain was too small.
  uint64_t failed = 0;         // Trainings that failed (e.g. too little data).
  uint64_t drift_retrains = 0;  // Trainings that drift started (all pools).
  uint64_t drift_reactivations = 0;  // Earlier dictionaries activated again (all pools).
  uint64_t quick_first = 0;    // Quick first dictionaries trained (quick_first).
  // Drift retrainings that tried one candidate (the pool's last one activated nothing).
  uint64_t quick_drift = 0;
  // bulk_policy: activated trainings whose full sample ended the pool's growth, and
  // trainings that tried the configured size only (their sample supported it).
  uint64_t full_sample = 0;
  uint64_t narrowed = 0;
};

// An activation by automatic training.
struct AutoActivation {
  std::string pool;
  bool drift = false;  // Of a retraining after drift (or its growth since).
  double gain = 0;     // The evaluation's gain over the dictionary it replaced.
};

class AutoTrainer {
 public:
  // A drift this many times the current back-off after the last drift retraining
  // counts as new: it waits the least again.
  static constexpr uint64_t kDriftSettledMultiple = 8;

  // Called on the trainer's thread after a dictionary was activated, before the
  // trainer counts as idle again.
  using ActivationCallback = std::function<void(const AutoActivation& activation)>;
  // Called on the trainer's thread after a first training ended without a dictionary.
  using FirstMissedCallback = std::function<void(const std::string& pool)>;
  // The pool named `pool` as Notify takes it, or null if it is gone or not trained here:
  // called on the trainer's thread to notify again a pool whose appends arrived while
  // it was queued or training (their Notify queued nothing then).
  using PoolLookup = std::function<std::shared_ptr<const pool::Pool>(const std::string& pool)>;

  // `manager` and `drift` are borrowed and must outlive the trainer; `drift` may be
  // null (no drift retraining). The callbacks may be empty, and what they use must
  // outlive the trainer too.
  AutoTrainer(DictionaryManager* manager, const DriftTracker* drift,
              AutoTrainerOptions options, ActivationCallback on_activated = nullptr,
              FirstMissedCallback on_first_missed = nullptr, PoolLookup find_pool = nullptr);
  AutoTrainer(const AutoTrainer&) = delete;
  AutoTrainer& operator=(const AutoTrainer&) = delete;
  ~AutoTrainer();

  // Queues `pool` for training if it has reached its next training point, or drifted
  // (see above). Cheap when it has not.
  void Notify(const pool::Pool& pool) ABSL_LOCKS_EXCLUDED(mu_);
  // Blocks until nothing is queued or training, or `timeout` passes; true if idle.
  bool WaitIdle(absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu_);
  AutoTrainerStats Stats() const ABSL_LOCKS_EXCLUDED(mu_);
  // Drift retrainings of pool `pool_id` since start-up.
  uint64_t DriftRetrains(uint32_t pool_id) const ABSL_LOCKS_EXCLUDED(mu_);
  // Earlier dictionaries of pool `pool_id` activated again since start-up.
  uint64_t DriftReactivations(uint32_t pool_id) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // A pool to train, whether it had reached full size (since its origin) when it was
  // queued (its training then tries the configured size: once activated, it is grown),
  // and, after drift, how many of its newest payload bytes to sample.
  struct Queued {
    std::string pool;
    uint32_t pool_id = 0;
    bool full = false;
    bool drift = false;          // Since a drift.
    bool drift_trigger = false;  // The retraining the drift itself started.
    bool reactivate = false;     // Not a training: ReactivateBest.
    bool quick = false;          // A quick first dictionary (CandidateSearch::kQuick).
    bool first = false;          // The pool had no dictionary when queued.
    uint32_t active_id = 0;      // The pool's active dictionary when queued.
    // The candidates to try (bulk_policy: kLargest once the sample supports the
    // configured size, decided when the training starts: see above).
    CandidateSearch search = CandidateSearch::kFull;
    uint64_t sample_budget = 0;     // The manager's SampleBudgetBytes for the pool.
    uint64_t configured_bytes = 0;  // The pool's dictionary_bytes option.
    uint64_t raw_at_start = 0;   // The pool's raw bytes when the training started.
    // A reactivation's: where the degraded data began, and the first training point
    // from there (a growth on drifted data restarts there if one is activated).
    uint64_t restart_origin = 0;
    uint64_t restart_next = 0;
    uint64_t raw_bytes = 0;      // The pool's, when queued.
    uint64_t sample_bytes = 0;   // 0: the manager's budget.
  };
  // Per pool, what automatic training has decided so far.
  struct PoolState {
    // Raw bytes the pool must reach before it is queued (again); UINT64_MAX: never
    // (grown to full size; only drift queues it).
    uint64_t next = 0;
    // Raw bytes where the pool's current data began: where drift was found.
    uint64_t origin = 0;
    // Back-off: no drift retraining before the pool's raw bytes reach this, and the
    // next back-off (0: not yet set).
    uint64_t drift_not_before = 0;
    uint64_t drift_backoff = 0;
    uint64_t drift_last = 0;  // Raw bytes when the last drift retraining was queued.
    uint64_t drift_retrains = 0;
    // Back-off of reactivation attempts, like drift_not_before / drift_backoff.
    uint64_t reactivate_not_before = 0;
    uint64_t reactivate_backoff = 0;
    uint64_t drift_reactivations = 0;
    bool drifted = false;        // Trained on the data since `origin` only.
    // The active dictionary a drift retraining that activated nothing was queued
    // under (0: none, or something was activated since): while the pool's active
    // dictionary is still this one, its next drift retraining tries one candidate. A
    // dictionary activated on request (or rolled back to) ends it like any activation.
    uint32_t drift_futile_for = 0;
    // The degraded windows' ratios that started such retrainings under
    // drift_futile_for, least and greatest (0: unknown): while it is active, a degraded
    // window within the threshold of that range is the same data no dictionary did
    // better on, and starts nothing (ADR 0052).
    double drift_futile_low = 0;
    double drift_futile_high = 0;
    double drift_mark_ratio = 0;  // The window's ratio when drift was last found.
    bool drift_pending = false;  // The next training is the one drift starts.
    uint64_t raw_seen = 0;       // The pool's raw bytes at its latest Notify.
    // Notify found the pool in flight since it was queued: it is notified again
    // when that ends, so that a training point reached meanwhile is not missed when
    // no append follows (the end of a bulk load).
    bool notified_in_flight = false;
  };

  void Run();
  // The oldest queued entry whose pool is not training now; queue_.end() if none.
  std::deque<Queued>::iterator NextRunnable() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The training (or reactivation) of `queued`, and what it did to the pool's state;
  // the pool stays in running_ (Run takes it out after NotifyAgain).
  void TrainOne(const Queued& queued);
  // Notifies the pool of `queued` again if its appends came while it was in flight.
  void NotifyAgain(const Queued& queued) ABSL_LOCKS_EXCLUDED(mu_);
  void ReactivateOne(const Queued& queued) ABSL_LOCKS_EXCLUDED(mu_);
  void Record(const Queued& queued, const absl::StatusOr<v1::TrainDictionaryResponse>& result)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Whether `pool` (with a dictionary) is degraded past its threshold and due for a
  // reactivation attempt; if so, queues it. A pool with no earlier dictionary to try
  // gets no attempt, and is backed off as after one that found nothing better.
  // Degraded, grown and not backed off, the pool also gets its new origin and next
  // (drift) training, attempt or not (the caller queues that training behind the
  // attempt when it is due).
  bool Degraded(const pool::Pool& pool, uint64_t raw_bytes, PoolState* state)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // An attempt at `raw_bytes` found nothing better (or had nothing to try): the next
  // waits for a window's bytes of appends, twice as long after each further one.
  void BackOffReactivation(uint64_t raw_bytes, PoolState* state) const;
  // Whether a degraded window at `recent_ratio` is still the data drift retrainings
  // found nothing better for under `active`: within `threshold` percent of the range of
  // the windows' ratios that started them (PoolState::drift_futile_low, _high).
  static bool SameFutileData(const PoolState& state, uint32_t active, double recent_ratio,
                             uint32_t threshold);
  // bulk_policy: whether `queued`, starting now (raw_at_start set), samples the pool's
  // whole sample budget since its origin (not a drift retraining, quick first or
  // reactivation).
  bool SamplesFullBudget(const Queued& queued, const PoolState& state) const;
  // The drift retraining part of Degraded: data starts again `back` bytes ago.
  void MarkDrift(const pool::Pool& pool, uint64_t raw_bytes, uint64_t back,
                 const DriftSignal& signal, PoolState* state) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The raw bytes at which `pool` is first trained, and the bytes up to which a pool
  // with a dictionary is still trained again (growth).
  uint64_t FirstPoint(const pool::Pool& pool) const;
  uint64_t FullPoint(const pool::Pool& pool) const;
  // The candidate search of a training queued in `state`: kQuick for a quick first
  // dictionary or a drift retraining after one without gain, kFull otherwise.
  static CandidateSearch SearchFor(const PoolState& state, const Queued& queued);
  // Whether the sample of `queued`, a training starting now (raw_at_start set), is
  // large enough for its configured size (bulk_policy: then it tries that size only).
  static bool SupportsConfiguredSize(const Queued& queued);

  DictionaryManager* const manager_;
  const DriftTracker* const drift_;
  const AutoTrainerOptions options_;
  const ActivationCallback on_activated_;
  const FirstMissedCallback on_first_missed_;
  const PoolLookup find_pool_;

  mutable absl::Mutex mu_;
  std::deque<Queued> queue_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint32_t, PoolState> pools_ ABSL_GUARDED_BY(mu_);  // By pool id.
  // Pools queued or training: never queued twice.
  absl::flat_hash_set<std::string> in_flight_ ABSL_GUARDED_BY(mu_);
  // Pools whose training (or reactivation) runs now: one thread each.
  absl::flat_hash_set<std::string> running_ ABSL_GUARDED_BY(mu_);
  AutoTrainerStats done_ ABSL_GUARDED_BY(mu_);  // Only the counts.
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace dictlog::dictionary

#endif  // DICTLOG_SERVER_DICTIONARY_AUTO_TRAINER_H_
