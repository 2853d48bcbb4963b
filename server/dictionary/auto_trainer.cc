#include "server/dictionary/auto_trainer.h"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace dictlog::dictionary {

AutoTrainer::AutoTrainer(DictionaryManager* manager, AutoTrainerOptions options,
                         FirstDictionaryCallback on_first_dictionary)
    : manager_(manager),
      options_(options),
      on_first_dictionary_(std::move(on_first_dictionary)),
      thread_([this] { Run(); }) {}

AutoTrainer::~AutoTrainer() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

uint64_t AutoTrainer::FullPoint(const pool::Pool& pool) const {
  return options_.min_bytes_multiple * pool.options().dictionary_bytes();
}

uint64_t AutoTrainer::FirstPoint(const pool::Pool& pool) const {
  const uint64_t full = FullPoint(pool);
  return options_.first_min_bytes == 0 ? full : std::min(options_.first_min_bytes, full);
}

void AutoTrainer::Notify(const pool::Pool& pool) {
  const store::PoolCounters counters = pool.counters();
  const bool has_dictionary = pool.active_dictionary_id() != 0;
  if (has_dictionary && options_.first_min_bytes == 0) return;  // No growth.
  if (counters.records < options_.min_records || counters.raw_bytes < FirstPoint(pool)) {
    return;
  }
  absl::MutexLock lock(&mu_);
  // A pool first seen with a dictionary (imported, trained on request, or before a
  // restart) grows from its current size, unless it is past full size. A pool that
  // grew past full size while its first dictionary trained is trained once more, at
  // full size.
  uint64_t& next =
      next_attempt_
          .try_emplace(pool.id(), !has_dictionary                     ? 0
                                  : counters.raw_bytes >= FullPoint(pool) ? UINT64_MAX
                                                                        : 2 * counters.raw_bytes)
          .first->second;
  if (counters.raw_bytes < next || in_flight_.contains(pool.name())) return;
  // Failed, unactivated and growth attempts all wait for 2x data; a dictionary trained
  // at full size is not grown again.
  next = has_dictionary && counters.raw_bytes >= FullPoint(pool) ? UINT64_MAX
                                                                 : 2 * counters.raw_bytes;
  in_flight_.insert(pool.name());
  queue_.push_back({pool.name(), pool.id(), counters.raw_bytes >= FullPoint(pool)});
}

bool AutoTrainer::WaitIdle(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto idle = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return queue_.empty() && !busy_; };
  return mu_.AwaitWithTimeout(absl::Condition(&idle), timeout);
}

AutoTrainerStats AutoTrainer::Stats() const {
  absl::MutexLock lock(&mu_);
  AutoTrainerStats stats = done_;
  stats.queued = queue_.size();
  stats.training = busy_;
  return stats;
}

void AutoTrainer::Run() {
  while (true) {
    Queued queued;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
        return stop_ || !queue_.empty();
      };
      mu_.Await(absl::Condition(&ready));
      if (stop_) return;
      queued = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
    }
    const std::string& pool = queued.pool;
    absl::StatusOr<v1::TrainDictionaryResponse> result =
        manager_->Train(pool, 0, /*activate=*/true, "auto");
    if (result.ok()) {
      std::fprintf(stderr, "dictlogd: pool '%s': trained dictionary %u (%s)\n",
                   pool.c_str(), result->dictionary().id(),
                   result->activation_note().c_str());
    } else {
      std::fprintf(stderr, "dictlogd: pool '%s': automatic training failed: %s\n",
                   pool.c_str(), result.status().ToString().c_str());
    }
    // Automatic activations happen only while a pool is small (first and growth): the
    // records stored before are few, so they are re-encoded every time.
    if (result.ok() && result->activated() && on_first_dictionary_) {
      on_first_dictionary_(pool);
    }
    absl::MutexLock lock(&mu_);
    if (result.ok() && result->activated() && queued.full) {
      next_attempt_[queued.pool_id] = UINT64_MAX;  // Trained at full size: grown.
    }
    if (!result.ok()) {
      ++done_.failed;
    } else if (result->activated()) {
      ++done_.activated;
    } else {
      ++done_.not_activated;
    }
    in_flight_.erase(pool);
    busy_ = false;
  }
}

}  // namespace dictlog::dictionary
