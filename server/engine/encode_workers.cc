#include "server/engine/encode_workers.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/thread_name.h"

namespace dictlog::engine {

// One ParallelFor call: its indexes and the helpers working on it. Lives on the
// caller's stack; the caller unlists it and waits for `joined` to reach 0 before
// returning.
struct EncodeWorkers::Loop {
  Loop(size_t n, absl::FunctionRef<void(size_t)> task) : n(n), task(task) {}
  const size_t n;
  const absl::FunctionRef<void(size_t)> task;
  std::atomic<size_t> next{0};
  size_t joined = 0;  // Helpers inside Work(); guarded by the workers' mu_.
};

size_t EncodeWorkers::DefaultThreads() {
  const unsigned hardware = std::thread::hardware_concurrency();
  return std::clamp<size_t>(hardware, 1, 2);
}

int EncodeWorkers::CallerNice() {
  errno = 0;
  const int nice = getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)));
  return errno == 0 ? nice : 0;  // -1 is a valid nice value: errno tells the failure.
}

EncodeWorkers::EncodeWorkers(size_t threads) : helpers_nice_(CallerNice()) {
  for (size_t i = 1; i < threads; ++i) helpers_.emplace_back([this] { HelperMain(); });
}

EncodeWorkers::~EncodeWorkers() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& helper : helpers_) helper.join();
}

size_t EncodeWorkers::Work(Loop& loop) {
  size_t ran = 0;
  for (size_t i = loop.next.fetch_add(1); i < loop.n; i = loop.next.fetch_add(1)) {
    loop.task(i);
    ++ran;
  }
  return ran;
}

void EncodeWorkers::HelperMain() {
  NameThisThread("dl-encode");
  absl::MutexLock lock(&mu_);
  while (true) {
    mu_.Await(absl::Condition(
        +[](EncodeWorkers* w) ABSL_EXCLUSIVE_LOCKS_REQUIRED(w->mu_) {
          return w->stopping_ || !w->loops_.empty();
        },
        this));
    if (stopping_) return;
    Loop* loop = loops_.front();
    loops_.pop_front();  // One helper per loop: with two threads, the caller and it.
    ++loop->joined;
    mu_.Unlock();
    const size_t ran = Work(*loop);
    helper_tasks_.fetch_add(ran, std::memory_order_relaxed);
    mu_.Lock();
    --loop->joined;
  }
}

void EncodeWorkers::ParallelFor(size_t n, absl::FunctionRef<void(size_t)> task) {
  if (n == 0) return;
  Loop loop(n, task);
  const bool offered = !helpers_.empty() && n > 1 && CallerNice() <= helpers_nice_;
  if (offered) {
    absl::MutexLock lock(&mu_);
    // As many entries as helpers may usefully join (each entry draws one).
    const size_t helpers = std::min(helpers_.size(), n - 1);
    for (size_t i = 0; i < helpers; ++i) loops_.push_back(&loop);
  }
  Work(loop);
  if (!offered) return;
  absl::MutexLock lock(&mu_);
  // Entries no helper took are withdrawn; then wait for those working on it.
  loops_.erase(std::remove(loops_.begin(), loops_.end(), &loop), loops_.end());
  mu_.Await(absl::Condition(
      +[](Loop* l) { return l->joined == 0; }, &loop));
}

}  // namespace dictlog::engine
