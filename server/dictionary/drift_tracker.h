// DriftTracker: the drift signal of each pool (docs/dictionaries.md, "Drift"): the
// ratio (payload / stored bytes) of the pool's recent appends with its active
// dictionary, next to the ratio that dictionary was activated with. The engine records
// every written append; automatic training reads the signal to retrain a pool whose
// data no longer fits its dictionary; `dictlog pools`, `dict list` and the metrics
// show it.
//
// The window is the last `window_bytes` of payload (at least half of it once full):
// two halves, the older dropped when the newer fills (an append larger than a half
// counts as half the window at its ratio). Appends with another dictionary
// than the one the window holds (a new activation) start it again. Memory only: after
// a restart the window fills again (the ratio it is compared with is the dictionary's,
// kept by the DictionaryManager).
//
// Thread safety: all methods may be called concurrently.
#ifndef DICTLOG_SERVER_DICTIONARY_DRIFT_TRACKER_H_
#define DICTLOG_SERVER_DICTIONARY_DRIFT_TRACKER_H_

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace dictlog::dictionary {

// One pool's signal. Ratios are 0 while unknown.
struct DriftSignal {
  uint32_t dictionary_id = 0;   // The dictionary the window measured (0: none yet).
  uint64_t recent_raw_bytes = 0;  // Payload bytes in the window.
  uint64_t newer_raw_bytes = 0;   // ... in its newer half (the newest appends).
  double older_ratio = 0;         // Of its older half alone (0: empty).
  // The payload bytes the older half was made of (more than half the window if one
  // large append filled it): where the window's appends begin.
  uint64_t older_span_bytes = 0;
  double recent_ratio = 0;      // Of the window.
  // What the window is compared with (ReferenceRatio): the ratio the dictionary was
  // activated with (its evaluation's, or, reactivated, the ratio it was reactivated
  // with), lowered to the first full window's by at most kFirstWindowShortfall; without
  // an evaluation (e.g. imported) the first full window's.
  double activation_ratio = 0;
  // The ratio of the first half-window the dictionary filled (since its activation or a
  // restart); 0 until then.
  double first_window_ratio = 0;
  // 100 * (1 - recent / activation): how much worse recent appends do (negative:
  // better). 0 until the window is full and the activation ratio known.
  double degraded_percent = 0;
  bool full = false;  // The window holds at least half of window_bytes.
};

class DriftTracker {
 public:
  // Default window: 32 KiB of payload.
  static constexpr uint64_t kDefaultWindowBytes = 32 << 10;
  // An evaluation on held-out records overstates what the dictionary then does on new
  // appends (the held-out records lie among the ones it was trained on: by 24% on
  // loghub, benchmarks/RESULTS.md "Training cost"), so the live ratio of its first
  // window may set the reference instead, down to this fraction below the evaluation;
  // a first window worse than that is drift already, measured against the evaluation
  // less this.
  static constexpr double kFirstWindowShortfall = 0.10;

  // The reference a window is compared with: `evaluated_ratio` lowered to
  // `first_window_ratio`, by at most kFirstWindowShortfall of it; either alone when the
  // other is 0.
  static double ReferenceRatio(double evaluated_ratio, double first_window_ratio);

  explicit DriftTracker(uint64_t window_bytes = kDefaultWindowBytes)
      : half_(window_bytes < 2 ? 1 : window_bytes / 2) {}
  DriftTracker(const DriftTracker&) = delete;
  DriftTracker& operator=(const DriftTracker&) = delete;

  uint64_t window_bytes() const { return 2 * half_; }

  // An append of `raw` payload bytes stored as `stored` bytes in `pool_id`, encoded
  // with dictionary `dictionary_id` (0: the pool had none: not tracked).
  void Record(uint32_t pool_id, uint32_t dictionary_id, uint64_t raw, uint64_t stored)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The signal of `pool_id` for its active dictionary `active_id`, activated with
  // `evaluated_ratio` (0: no evaluation). If the window measured another dictionary
  // (or nothing yet, e.g. after a restart), only activation_ratio (`evaluated_ratio`)
  // is set: dictionary_id 0, not full. Empty for `active_id` 0.
  DriftSignal Signal(uint32_t pool_id, uint32_t active_id, double evaluated_ratio) const
      ABSL_LOCKS_EXCLUDED(mu_);
  // Forgets `pool_id`'s window (it starts again with the next append).
  void Reset(uint32_t pool_id) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Bytes {
    uint64_t raw = 0;
    uint64_t stored = 0;
  };
  struct Window {
    uint32_t dictionary_id = 0;
    Bytes older, newer;
    uint64_t older_span = 0;  // older.raw before it was cut to half the window.
    double first_full_ratio = 0;  // Of the window when it first became full.
  };

  const uint64_t half_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<uint32_t, Window> windows_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dictlog::dictionary

#endif  // DICTLOG_SERVER_DICTIONARY_DRIFT_TRACKER_H_
