// EncodeWorkers: a small, fixed set of threads that helps an append compress a large
// batch (ADR 0021). ParallelFor(n, task) runs task(0..n-1), each index exactly once,
// on the calling thread and on whichever helpers are idle; it returns when every
// index has run. The caller always works, so a call never waits for a helper: with
// all helpers busy (other appends' batches) it runs the whole loop itself.
//
// Helpers are created once (threads - 1 of them) and live as long as the object; the
// work waiting for them is at most one loop per concurrent caller, so neither threads
// nor queued work grow with the load.
//
// Helpers run at the priority of the thread that created the object. A caller running
// at a lower priority (a higher Linux nice value: the background training and
// re-encode threads, ADR 0034) is not helped: its loop runs on its own thread alone,
// so background work never takes a full-priority helper from the appends.
//
// Thread safety: all methods may be called concurrently. `task` must be safe to call
// from several threads at once for different indexes.
#ifndef DICTLOG_SERVER_ENGINE_ENCODE_WORKERS_H_
#define DICTLOG_SERVER_ENGINE_ENCODE_WORKERS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"

namespace dictlog::engine {

class EncodeWorkers {
 public:
  // The default number of threads an append compresses with: min(2, hardware threads).
  static size_t DefaultThreads();

  // `threads` >= 1 counts the caller: threads - 1 helpers are started (none for 1).
  explicit EncodeWorkers(size_t threads);
  EncodeWorkers(const EncodeWorkers&) = delete;
  EncodeWorkers& operator=(const EncodeWorkers&) = delete;
  // Stops and joins the helpers; no ParallelFor may be running.
  ~EncodeWorkers();

  // Runs task(i) for every i in [0, n), each once, here and on idle helpers (here
  // alone when the calling thread runs at a lower priority than the helpers).
  void ParallelFor(size_t n, absl::FunctionRef<void(size_t)> task);

  // The calling thread's nice value (Linux: per thread; 0 where unknown).
  static int CallerNice();

  size_t threads() const { return helpers_.size() + 1; }
  // Indexes helpers (not callers) have run so far (tests).
  uint64_t HelperTasksForTest() const { return helper_tasks_.load(); }

 private:
  struct Loop;
  void HelperMain();
  // Runs indexes of `loop` until none is left; returns how many it ran.
  static size_t Work(Loop& loop);

  absl::Mutex mu_;
  std::deque<Loop*> loops_ ABSL_GUARDED_BY(mu_);  // Loops helpers may join.
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<uint64_t> helper_tasks_{0};
  const int helpers_nice_;  // CallerNice() of the constructing thread.
  std::vector<std::thread> helpers_;
};

}  // namespace dictlog::engine

#endif  // DICTLOG_SERVER_ENGINE_ENCODE_WORKERS_H_
