#include "server/dictionary/auto_trainer.h"

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

void AutoTrainer::Notify(const pool::Pool& pool) {
  if (pool.active_dictionary_id() != 0) return;
  const store::PoolCounters counters = pool.counters();
  const uint64_t threshold =
      options_.min_bytes_multiple * pool.options().dictionary_bytes();
  if (counters.records < options_.min_records || counters.raw_bytes < threshold) return;
  absl::MutexLock lock(&mu_);
  uint64_t& next = next_attempt_[pool.id()];
  if (counters.raw_bytes < next || in_flight_.contains(pool.name())) return;
  next = 2 * counters.raw_bytes;  // A failed or unactivated attempt waits for 2x data.
  in_flight_.insert(pool.name());
  queue_.push_back(pool.name());
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
    std::string pool;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
        return stop_ || !queue_.empty();
      };
      mu_.Await(absl::Condition(&ready));
      if (stop_) return;
      pool = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
    }
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
    // Only pools without a dictionary are queued: an activation here is the first.
    if (result.ok() && result->activated() && on_first_dictionary_) {
      on_first_dictionary_(pool);
    }
    absl::MutexLock lock(&mu_);
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
