#include "server/dictionary/drift_tracker.h"

#include <algorithm>

namespace dictlog::dictionary {
namespace {

double Ratio(uint64_t raw, uint64_t stored) {
  return stored == 0 ? 0 : static_cast<double>(raw) / static_cast<double>(stored);
}

}  // namespace

double DriftTracker::ReferenceRatio(double evaluated_ratio, double first_window_ratio) {
  if (evaluated_ratio <= 0) return first_window_ratio;
  if (first_window_ratio <= 0) return evaluated_ratio;
  return std::min(evaluated_ratio,
                  std::max(first_window_ratio, (1 - kFirstWindowShortfall) * evaluated_ratio));
}

void DriftTracker::Record(uint32_t pool_id, uint32_t dictionary_id, uint64_t raw,
                          uint64_t stored) {
  if (dictionary_id == 0 || raw == 0) return;
  absl::MutexLock lock(&mu_);
  Window& w = windows_[pool_id];
  if (w.dictionary_id != dictionary_id) w = Window{dictionary_id, {}, {}, 0, 0};
  w.newer.raw += raw;
  w.newer.stored += stored;
  if (w.newer.raw < half_) return;
  // The newer half is full: it becomes the older, cut to half the window (at its
  // ratio) if one large append overfilled it, so the window never outweighs later
  // appends.
  w.older = w.newer;
  w.older_span = w.newer.raw;
  if (w.older.raw > half_) {
    w.older.stored = static_cast<uint64_t>(static_cast<double>(w.older.stored) *
                                           static_cast<double>(half_) /
                                           static_cast<double>(w.older.raw));
    w.older.raw = half_;
  }
  w.newer = Bytes();
  if (w.first_full_ratio == 0) w.first_full_ratio = Ratio(w.older.raw, w.older.stored);
}

DriftSignal DriftTracker::Signal(uint32_t pool_id, uint32_t active_id,
                                 double evaluated_ratio) const {
  DriftSignal signal;
  if (active_id == 0) return signal;
  signal.activation_ratio = evaluated_ratio;
  absl::MutexLock lock(&mu_);
  auto it = windows_.find(pool_id);
  // Nothing measured with it yet (just activated, or a restart): not full.
  if (it == windows_.end() || it->second.dictionary_id != active_id) return signal;
  const Window& w = it->second;
  signal.dictionary_id = w.dictionary_id;
  signal.recent_raw_bytes = w.older.raw + w.newer.raw;
  signal.newer_raw_bytes = w.newer.raw;
  signal.older_ratio = Ratio(w.older.raw, w.older.stored);
  signal.older_span_bytes = w.older_span;
  signal.recent_ratio = Ratio(signal.recent_raw_bytes, w.older.stored + w.newer.stored);
  signal.full = w.older.raw >= half_;
  signal.first_window_ratio = w.first_full_ratio;
  signal.activation_ratio = ReferenceRatio(evaluated_ratio, w.first_full_ratio);
  if (signal.full && signal.activation_ratio > 0 && signal.recent_ratio > 0) {
    signal.degraded_percent = 100 * (1 - signal.recent_ratio / signal.activation_ratio);
  }
  return signal;
}

void DriftTracker::Reset(uint32_t pool_id) {
  absl::MutexLock lock(&mu_);
  windows_.erase(pool_id);
}

}  // namespace dictlog::dictionary
