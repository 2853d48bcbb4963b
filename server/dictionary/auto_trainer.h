// AutoTrainer: gives pools their first dictionary, early, and grows it. After appends,
// the engine tells it which pools grew; a pool without a dictionary that holds at least
// first_min_bytes (or, with that 0, min_bytes_multiple x its dictionary size), and
// min_records records, is queued, and one background thread trains (sized to the data:
// dictionary_sizing.h) and, if the gain is enough, activates a dictionary for it. A
// pool is queued again each time its raw bytes have doubled since, until it has been
// queued with a dictionary at min_bytes_multiple x its dictionary size or more, or a
// first dictionary queued there (both try the full size) has been activated (so with
// first_min_bytes 16 KiB and a 16 KiB dictionary: at 16, 32, 64 and 128 KiB; a pool
// that jumps from 16 KiB to 1 MB: once more, at 1 MB); a pool without a dictionary is
// tried at each doubling, as before. When a first or grown dictionary is
// activated, the trainer calls `on_first_dictionary` (the engine starts a background
// re-encode of the records the pool stored before it, so the pool's ratio shows what
// its dictionary does; a pool is small while it grows, so this is cheap).
//
// Thread safety: Notify and WaitIdle may be called from any thread. The destructor
// lets a training in progress finish, then stops the thread.
#ifndef DICTLOG_SERVER_DICTIONARY_AUTO_TRAINER_H_
#define DICTLOG_SERVER_DICTIONARY_AUTO_TRAINER_H_

#include <deque>
#include <functional>
#include <string>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "server/dictionary/dictionary_manager.h"
#include "server/pool/pool.h"

namespace dictlog::dictionary {

struct AutoTrainerOptions {
  // Train when a pool holds this many times its dictionary size. Default 8 (128 KiB
  // for the default 16 KiB dictionary).
  uint64_t min_bytes_multiple = 8;
  // ... and at least this many records. Default 100.
  uint64_t min_records = 100;
  // First training at this many raw bytes, then again at each doubling below
  // min_bytes_multiple x the dictionary size. 0 (the default here; dictlogd's
  // --auto_train_first_bytes is 16384): only at min_bytes_multiple x.
  uint64_t first_min_bytes = 0;
};

// What automatic training has done since start-up.
struct AutoTrainerStats {
  uint64_t queued = 0;         // Pools waiting to be trained.
  bool training = false;       // A training is running.
  uint64_t activated = 0;      // Trainings whose dictionary was activated.
  uint64_t not_activated = 0;  // Trainings whose gain was too small.
  uint64_t failed = 0;         // Trainings that failed (e.g. too little data).
};

class AutoTrainer {
 public:
  // Called on the trainer's thread with the name of a pool whose first (or grown)
  // dictionary was just activated, before the trainer counts as idle again.
  using FirstDictionaryCallback = std::function<void(const std::string& pool)>;

  // `manager` is borrowed and must outlive the trainer; `on_first_dictionary` may be
  // empty, and what it uses must outlive the trainer too.
  AutoTrainer(DictionaryManager* manager, AutoTrainerOptions options,
              FirstDictionaryCallback on_first_dictionary = nullptr);
  AutoTrainer(const AutoTrainer&) = delete;
  AutoTrainer& operator=(const AutoTrainer&) = delete;
  ~AutoTrainer();

  // Queues `pool` for training if it has reached its next training point (see above).
  // Cheap when it has not.
  void Notify(const pool::Pool& pool) ABSL_LOCKS_EXCLUDED(mu_);
  // Blocks until nothing is queued or training, or `timeout` passes; true if idle.
  bool WaitIdle(absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu_);
  AutoTrainerStats Stats() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Run();

  DictionaryManager* const manager_;
  const AutoTrainerOptions options_;
  const FirstDictionaryCallback on_first_dictionary_;

  mutable absl::Mutex mu_;
  // A pool to train, and whether it had reached full size when it was queued (its
  // training then tries the configured size: once activated, it is grown).
  struct Queued {
    std::string pool;
    uint32_t pool_id = 0;
    bool full = false;
  };
  std::deque<Queued> queue_ ABSL_GUARDED_BY(mu_);
  // The raw bytes at which `pool` is first trained, and the bytes up to which a pool
  // with a dictionary is still trained again (growth).
  uint64_t FirstPoint(const pool::Pool& pool) const;
  uint64_t FullPoint(const pool::Pool& pool) const;

  // Pool id -> raw bytes the pool must reach before it is queued (again); UINT64_MAX:
  // never (its dictionary has grown to full size).
  absl::flat_hash_map<uint32_t, uint64_t> next_attempt_ ABSL_GUARDED_BY(mu_);
  // Pools queued or training: never queued twice.
  absl::flat_hash_set<std::string> in_flight_ ABSL_GUARDED_BY(mu_);
  bool busy_ ABSL_GUARDED_BY(mu_) = false;
  AutoTrainerStats done_ ABSL_GUARDED_BY(mu_);  // Only the three counts.
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace dictlog::dictionary

#endif  // DICTLOG_SERVER_DICTIONARY_AUTO_TRAINER_H_
