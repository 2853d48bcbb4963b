#include "server/dictionary/auto_trainer.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/thread_name.h"
#include "server/pool/pool_options.h"

namespace dictlog::dictionary {

AutoTrainer::AutoTrainer(DictionaryManager* manager, const DriftTracker* drift,
                         AutoTrainerOptions options, ActivationCallback on_activated,
                         FirstMissedCallback on_first_missed, PoolLookup find_pool)
    : manager_(manager),
      drift_(drift),
      options_(options),
      on_activated_(std::move(on_activated)),
      on_first_missed_(std::move(on_first_missed)),
      find_pool_(std::move(find_pool)) {
  for (size_t i = 0; i < std::max<size_t>(1, options_.threads); ++i) {
    threads_.emplace_back([this] { Run(); });
  }
}

AutoTrainer::~AutoTrainer() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  for (std::thread& thread : threads_) thread.join();
}

uint64_t AutoTrainer::FullPoint(const pool::Pool& pool) const {
  return options_.min_bytes_multiple * pool.options().dictionary_bytes();
}

bool AutoTrainer::SamplesFullBudget(const Queued& queued, const PoolState& state) const {
  const uint64_t since_origin = queued.raw_at_start - std::min(queued.raw_at_start, state.origin);
  return options_.bulk_policy && !queued.drift && !queued.quick && !queued.reactivate &&
         queued.sample_budget > 0 && since_origin >= queued.sample_budget;
}

uint64_t AutoTrainer::FirstPoint(const pool::Pool& pool) const {
  const uint64_t full = FullPoint(pool);
  return options_.first_min_bytes == 0 ? full : std::min(options_.first_min_bytes, full);
}

CandidateSearch AutoTrainer::SearchFor(const PoolState& state, const Queued& queued) {
  if (queued.quick || (queued.drift_trigger && state.drift_futile_for != 0 &&
                       state.drift_futile_for == queued.active_id)) {
    return CandidateSearch::kQuick;
  }
  return CandidateSearch::kFull;  // Narrowed when it starts (Run): SupportsConfiguredSize.
}

bool AutoTrainer::SupportsConfiguredSize(const Queued& queued) {
  // What the manager will sample: its budget, the pool's bytes now, and after a drift
  // the data since it, whichever is least.
  uint64_t sample = std::min(queued.sample_budget, queued.raw_at_start);
  if (queued.sample_bytes != 0) sample = std::min(sample, queued.sample_bytes);
  const std::vector<size_t> sizes = CandidateSizes(sample, queued.configured_bytes);
  return !sizes.empty() && sizes.front() == queued.configured_bytes;
}

void AutoTrainer::Notify(const pool::Pool& pool) {
  const store::PoolCounters counters = pool.counters();
  const uint64_t raw = counters.raw_bytes;
  const bool has_dictionary = pool.has_active_dictionary();
  if (counters.records < options_.min_records || raw < FirstPoint(pool)) return;
  absl::MutexLock lock(&mu_);
  // A pool first seen with a dictionary (imported, trained on request, or before a
  // restart) grows from its current size, unless it is past full size (or growth is
  // off). A pool that grew past full size while its first dictionary trained is
  // trained once more, at full size.
  auto [it, inserted] = pools_.try_emplace(pool.id());
  PoolState& state = it->second;
  if (inserted && has_dictionary) {
    state.next = options_.first_min_bytes == 0 || raw >= FullPoint(pool) ? UINT64_MAX
                                                                         : 2 * raw;
  }
  state.raw_seen = raw;  // What a training queued for the pool would sample now.
  if (in_flight_.contains(pool.name())) {
    state.notified_in_flight = true;
    return;
  }
  // A reactivation attempt goes first; a training due now is queued by a later
  // Notify, once the attempt's outcome is known (it may end a drift: ReactivateOne).
  if (has_dictionary && Degraded(pool, raw, &state)) return;
  if (state.next == UINT64_MAX || raw < state.next) return;
  // Failed, unactivated and growth attempts all wait for 2x data (since the origin);
  // a dictionary trained at full size is not grown again.
  const uint64_t since = raw - std::min(raw, state.origin);
  Queued queued{pool.name(), pool.id()};
  queued.raw_bytes = raw;
  queued.full = since >= FullPoint(pool);
  queued.drift = state.drifted;
  queued.sample_bytes = state.drifted ? since : 0;
  queued.drift_trigger = state.drift_pending;
  queued.quick = options_.quick_first && !has_dictionary && queued.full;
  queued.first = !has_dictionary;
  queued.active_id = pool.active_dictionary_id();
  queued.search = SearchFor(state, queued);
  queued.sample_budget = manager_->SampleBudgetBytes(pool.options().dictionary_bytes());
  queued.configured_bytes = pool.options().dictionary_bytes();
  // One candidate at full size (quick): the full search follows at the next doubling.
  state.next = has_dictionary && queued.full && queued.search != CandidateSearch::kQuick
                   ? UINT64_MAX
                   : state.origin + 2 * since;
  if (state.drift_pending) {
    state.drift_pending = false;
    // The least wait for a first drift, or one long after the last retraining (its
    // dictionary lasted); otherwise the doubled wait Record left.
    if (state.drift_backoff == 0 ||
        raw - std::min(raw, state.drift_last) >= kDriftSettledMultiple * state.drift_backoff) {
      state.drift_backoff = FullPoint(pool);
    }
    state.drift_last = raw;
    state.drift_not_before = raw + state.drift_backoff;
    ++state.drift_retrains;
    ++done_.drift_retrains;
  }
  in_flight_.insert(pool.name());
  queue_.push_back(std::move(queued));
}

bool AutoTrainer::Degraded(const pool::Pool& pool, uint64_t raw, PoolState* state) {
  if (drift_ == nullptr) return false;
  const uint32_t active = pool.active_dictionary_id();
  const double reference = manager_->DriftReferenceRatio(active);
  const DriftSignal signal = drift_->Signal(pool.id(), active, reference);
  if (reference == 0 && signal.full) {  // Imported: keep its first window's ratio.
    manager_->RecordFirstWindowRatio(active, signal.activation_ratio).IgnoreError();
  }
  const uint32_t threshold = pool::DriftThresholdPercent(pool.options());
  if (threshold == 0 || !signal.full || signal.degraded_percent < threshold) return false;
  if (SameFutileData(*state, active, signal.recent_ratio, threshold)) return false;
  // The degraded data: the window's newer half, and its older half too if that alone
  // is degraded past the threshold.
  const bool older_degraded =
      signal.older_ratio > 0 && 100 * (1 - signal.older_ratio / signal.activation_ratio) >=
                                    static_cast<double>(threshold);
  const uint64_t back = signal.newer_raw_bytes + (older_degraded ? signal.older_span_bytes : 0);
  if (state->next == UINT64_MAX && raw >= state->drift_not_before) {
    MarkDrift(pool, raw, back, signal, state);
  }
  if (raw < state->reactivate_not_before) return false;  // Backed off.
  // Nothing to reactivate: the training due, if any, is not kept waiting for an
  // attempt that cannot activate anything; backed off as such an attempt would be, so
  // the appends that follow do not look for earlier dictionaries again each time.
  if (!manager_->HasEarlierDictionaries(pool.id(), active)) {
    BackOffReactivation(raw, state);
    return false;
  }
  Queued queued{pool.name(), pool.id()};
  queued.reactivate = true;
  queued.raw_bytes = raw;
  queued.sample_bytes = std::max(back, signal.recent_raw_bytes / 2);
  queued.restart_origin = raw - std::min(raw, back);
  queued.restart_next = queued.restart_origin + FirstPoint(pool);
  in_flight_.insert(pool.name());
  queue_.push_back(std::move(queued));
  return true;
}

bool AutoTrainer::SameFutileData(const PoolState& state, uint32_t active, double recent_ratio,
                                 uint32_t threshold) {
  if (state.drift_futile_for != active || state.drift_futile_low <= 0) return false;
  const double margin = static_cast<double>(threshold) / 100;
  return recent_ratio > state.drift_futile_low * (1 - margin) &&
         recent_ratio < state.drift_futile_high * (1 + margin);
}

void AutoTrainer::BackOffReactivation(uint64_t raw_bytes, PoolState* state) const {
  state->reactivate_backoff =
      state->reactivate_backoff == 0 ? drift_->window_bytes() : 2 * state->reactivate_backoff;
  state->reactivate_not_before = raw_bytes + state->reactivate_backoff;
}

void AutoTrainer::MarkDrift(const pool::Pool& pool, uint64_t raw, uint64_t back,
                            const DriftSignal& signal, PoolState* state) {
  // The pool's data starts again where the degraded part begins: it is trained once
  // it holds a first training's worth since (FirstPoint), on those records only, and
  // grown from there (unless an earlier dictionary is reactivated first).
  state->origin = raw - std::min(raw, back);
  state->next = state->origin + FirstPoint(pool);
  state->drifted = true;
  state->drift_pending = true;
  state->drift_mark_ratio = signal.recent_ratio;
  std::fprintf(stderr,
               "dictlogd: pool '%s': drift: recent ratio %.2fx is %.1f%% below %.2fx "
               "(threshold %u%%); retraining on the records from here once they hold "
               "%llu bytes\n",
               pool.name().c_str(), signal.recent_ratio, signal.degraded_percent,
               signal.activation_ratio, pool::DriftThresholdPercent(pool.options()),
               static_cast<unsigned long long>(FirstPoint(pool)));
}

bool AutoTrainer::WaitIdle(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto idle = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return queue_.empty() && running_.empty();
  };
  return mu_.AwaitWithTimeout(absl::Condition(&idle), timeout);
}

AutoTrainerStats AutoTrainer::Stats() const {
  absl::MutexLock lock(&mu_);
  AutoTrainerStats stats = done_;
  stats.queued = queue_.size();
  stats.training = !running_.empty();
  stats.running = running_.size();
  return stats;
}

uint64_t AutoTrainer::DriftRetrains(uint32_t pool_id) const {
  absl::MutexLock lock(&mu_);
  auto it = pools_.find(pool_id);
  return it == pools_.end() ? 0 : it->second.drift_retrains;
}

uint64_t AutoTrainer::DriftReactivations(uint32_t pool_id) const {
  absl::MutexLock lock(&mu_);
  auto it = pools_.find(pool_id);
  return it == pools_.end() ? 0 : it->second.drift_reactivations;
}

std::deque<AutoTrainer::Queued>::iterator AutoTrainer::NextRunnable() {
  return std::find_if(queue_.begin(), queue_.end(),
                      [this](const Queued& q) { return !running_.contains(q.pool); });
}

void AutoTrainer::Run() {
  NameThisThread("dl-train");
  if (options_.nice != 0 &&
      setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), options_.nice) != 0) {
    std::fprintf(stderr, "dictlogd: automatic training: cannot set nice %d: %s\n",
                 options_.nice, std::strerror(errno));
  }
  while (true) {
    Queued queued;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stop_ || NextRunnable() != queue_.end();
      };
      mu_.Await(absl::Condition(&ready));
      if (stop_) return;
      auto next = NextRunnable();
      queued = std::move(*next);
      queue_.erase(next);
      running_.insert(queued.pool);
      const PoolState& state = pools_[queued.pool_id];
      queued.raw_at_start = state.raw_seen;
      if (options_.bulk_policy && queued.search == CandidateSearch::kFull &&
          SupportsConfiguredSize(queued)) {
        queued.search = CandidateSearch::kLargest;
      }
    }
    TrainOne(queued);
    NotifyAgain(queued);
    absl::MutexLock lock(&mu_);
    running_.erase(queued.pool);  // After NotifyAgain's queueing: WaitIdle sees no gap.
  }
}

void AutoTrainer::NotifyAgain(const Queued& queued) {
  {
    absl::MutexLock lock(&mu_);
    if (stop_ || !std::exchange(pools_[queued.pool_id].notified_in_flight, false)) return;
  }
  if (!find_pool_) return;
  std::shared_ptr<const pool::Pool> pool = find_pool_(queued.pool);
  if (pool != nullptr && pool->id() == queued.pool_id) Notify(*pool);
}

void AutoTrainer::ReactivateOne(const Queued& queued) {
  absl::StatusOr<Reactivation> result =
      manager_->ReactivateBest(queued.pool, queued.sample_bytes);
  const bool activated = result.ok() && result->activated;
  if (!result.ok()) {
    std::fprintf(stderr, "dictlogd: pool '%s': reactivation check failed: %s\n",
                 queued.pool.c_str(), result.status().ToString().c_str());
  } else if (result->tried > 0) {
    std::fprintf(stderr, "dictlogd: pool '%s': %s: %s\n", queued.pool.c_str(),
                 activated ? absl::StrFormat("reactivated dictionary %u (gain %+.1f%%)",
                                             result->id, 100 * result->gain).c_str()
                           : "no earlier dictionary does better",
                 result->note.c_str());
  }
  absl::MutexLock lock(&mu_);
  PoolState& state = pools_[queued.pool_id];
  if (activated) {
    if (result->replaced_drift) {
      // Back from a burst to data an earlier dictionary was made for: the drift is
      // over. No retraining is pending and nothing grows on the drifted data (trained
      // on the return alone, a candidate fits a slice of what that dictionary covers).
      state.drift_pending = false;
      state.drifted = false;
      state.next = UINT64_MAX;
    } else if (state.drifted && !state.drift_pending) {
      // A drift retraining pending goes on, gated against this one. A growth on
      // drifted data restarts where the data changed back: grown on the burst and the
      // return together, it would fit neither.
      state.origin = queued.restart_origin;
      state.next = queued.restart_next;
    }
    state.reactivate_backoff = 0;
    state.reactivate_not_before = 0;  // The new window has to fill first anyway.
    state.drift_futile_for = 0;       // Judged against another dictionary now.
    ++state.drift_reactivations;
    ++done_.drift_reactivations;
  } else {
    BackOffReactivation(queued.raw_bytes, &state);
  }
  // Nothing was queued behind it (Notify queues no training for a pool in flight; it
  // is notified again: NotifyAgain).
  in_flight_.erase(queued.pool);
}

void AutoTrainer::TrainOne(const Queued& queued) {
  if (queued.reactivate) return ReactivateOne(queued);
  const std::string& pool = queued.pool;
  absl::StatusOr<v1::TrainDictionaryResponse> result = manager_->Train(
      pool, 0, /*activate=*/true, queued.drift ? "drift" : "auto", queued.sample_bytes,
      queued.search);
  if (result.ok()) {
    std::fprintf(stderr, "dictlogd: pool '%s': trained %sdictionary %u (%s)\n",
                 pool.c_str(), queued.quick ? "quick first " : "", result->dictionary().id(),
                 result->activation_note().c_str());
  } else {
    std::fprintf(stderr, "dictlogd: pool '%s': automatic training failed: %s\n",
                 pool.c_str(), result.status().ToString().c_str());
  }
  if (result.ok() && result->activated() && on_activated_) {
    on_activated_({pool, queued.drift, result->dictionary().evaluation().gain()});
  }
  if ((!result.ok() || !result->activated()) && queued.first && on_first_missed_) {
    on_first_missed_(pool);
  }
  Record(queued, result);
}

void AutoTrainer::Record(const Queued& queued,
                         const absl::StatusOr<v1::TrainDictionaryResponse>& result) {
  const bool activated = result.ok() && result->activated();
  absl::MutexLock lock(&mu_);
  PoolState& state = pools_[queued.pool_id];
  // Trained at full size: grown; a one-candidate one (a quick first dictionary, or a
  // drift retraining after one without gain) keeps the next doubling (Notify set it)
  // for the full search. bulk_policy: so is one that sampled the whole budget.
  const bool full_sample = SamplesFullBudget(queued, state);
  const bool one_candidate = queued.search == CandidateSearch::kQuick;
  if (activated && (queued.full || full_sample) && !one_candidate) state.next = UINT64_MAX;
  if (activated && full_sample && !queued.full) ++done_.full_sample;
  if (queued.search == CandidateSearch::kLargest) ++done_.narrowed;
  if (activated) {  // New data, new dictionary: a drift back may be tried at once.
    state.reactivate_backoff = 0;
    state.reactivate_not_before = 0;
    state.drift_futile_for = 0;
  }
  if (queued.drift_trigger && one_candidate) ++done_.quick_drift;
  if (queued.drift_trigger) {
    if (activated) {
      // A gain on the drifted data, yet the next drift may come soon (data that
      // alternates between formats): it waits twice as long, unless it comes after
      // kDriftSettledMultiple x this wait (Notify).
      state.drift_backoff *= 2;
    } else {
      // Nothing better for the drifted data: stop growing on it, wait twice as long
      // before the next drift retraining, and try one candidate then (a training
      // that failed proves nothing).
      state.next = UINT64_MAX;
      state.drifted = false;
      if (result.ok()) {
        // The degraded ratio that started it joins the range of such ratios under this
        // dictionary: until a window falls outside it by the threshold, or another
        // dictionary is activated, degraded windows start no retraining and no
        // reactivation check (ADR 0052).
        const double mark = state.drift_mark_ratio;
        if (state.drift_futile_for != queued.active_id || state.drift_futile_low <= 0) {
          state.drift_futile_low = state.drift_futile_high = mark;
        } else if (mark > 0) {
          state.drift_futile_low = std::min(state.drift_futile_low, mark);
          state.drift_futile_high = std::max(state.drift_futile_high, mark);
        }
        state.drift_futile_for = queued.active_id;
      }
      state.drift_not_before = queued.raw_bytes + state.drift_backoff;
      state.drift_backoff *= 2;
    }
  }
  if (queued.quick && result.ok()) ++done_.quick_first;
  if (!result.ok()) {
    ++done_.failed;
  } else if (activated) {
    ++done_.activated;
  } else {
    ++done_.not_activated;
  }
  in_flight_.erase(queued.pool);
}

}  // namespace dictlog::dictionary
