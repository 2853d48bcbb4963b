#include "server/engine/encode_workers.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "common/thread_name.h"
#include "gtest/gtest.h"

namespace dictlog::engine {
namespace {

TEST(EncodeWorkersTest, RunsEveryIndexOnce) {
  EncodeWorkers workers(3);
  EXPECT_EQ(workers.threads(), 3u);
  std::vector<std::atomic<int>> runs(1000);
  workers.ParallelFor(runs.size(), [&](size_t i) { runs[i].fetch_add(1); });
  for (size_t i = 0; i < runs.size(); ++i) ASSERT_EQ(runs[i].load(), 1) << i;
  workers.ParallelFor(0, [&](size_t) { ADD_FAILURE() << "no index"; });
}

// An index the caller runs waits until a helper has run one: the loop can end only
// if a helper joined it. (A helper may also take both indexes before the caller takes
// one: the loop is offered before the caller starts.)
TEST(EncodeWorkersTest, AHelperWorksBesideTheCaller) {
  EncodeWorkers workers(2);
  const std::thread::id caller = std::this_thread::get_id();
  absl::Notification helped;
  std::atomic<bool> notified{false};
  std::atomic<int> by_caller{0};
  workers.ParallelFor(2, [&](size_t) {
    if (std::this_thread::get_id() == caller) {
      by_caller.fetch_add(1);
      helped.WaitForNotification();
    } else if (!notified.exchange(true)) {
      helped.Notify();
    }
  });
  EXPECT_TRUE(helped.HasBeenNotified());
  EXPECT_LE(by_caller.load(), 1);
  EXPECT_EQ(workers.HelperTasksForTest(), 2u - by_caller.load());
}

// Helpers carry a name of their own (top -H, perf, /proc/PID/task/*/comm).
TEST(EncodeWorkersTest, HelpersAreNamed) {
  EncodeWorkers workers(2);
  const std::thread::id caller = std::this_thread::get_id();
  absl::Notification helped;
  std::string helper_name;
  workers.ParallelFor(2, [&](size_t) {
    if (std::this_thread::get_id() == caller) {
      helped.WaitForNotification();
    } else if (!helped.HasBeenNotified()) {
      helper_name = ThisThreadName();
      helped.Notify();
    }
  });
  EXPECT_EQ(helper_name, "dl-encode");
}

TEST(EncodeWorkersTest, OneThreadIsTheCallerAlone) {
  EncodeWorkers workers(1);
  const std::thread::id caller = std::this_thread::get_id();
  int elsewhere = 0;
  workers.ParallelFor(100, [&](size_t) { elsewhere += std::this_thread::get_id() != caller; });
  EXPECT_EQ(elsewhere, 0);
  EXPECT_EQ(workers.HelperTasksForTest(), 0u);
}

// A caller niced below the helpers' priority (background training and re-encode
// jobs) is not helped: every index runs on it, and the helper stays free for appends.
// The same loop from a caller at the helpers' priority is offered to the helper.
TEST(EncodeWorkersTest, ANicedCallerRunsItsLoopAlone) {
  EncodeWorkers workers(2);
  std::atomic<int> elsewhere{0};
  std::atomic<int> caller_nice{-100};
  std::thread background([&] {
    ASSERT_EQ(setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)),
                          EncodeWorkers::CallerNice() + 5), 0);
    caller_nice = EncodeWorkers::CallerNice();
    const std::thread::id caller = std::this_thread::get_id();
    // The caller's first index gives an offered loop time to be joined: a helper
    // running index 1 ends the wait at once; unhelped, it ends after 200 ms.
    absl::Notification helped;
    workers.ParallelFor(2, [&](size_t) {
      if (std::this_thread::get_id() == caller) {
        helped.WaitForNotificationWithTimeout(absl::Milliseconds(200));
      } else {
        elsewhere.fetch_add(1);
        helped.Notify();
      }
    });
  });
  background.join();
  EXPECT_EQ(caller_nice.load(), EncodeWorkers::CallerNice() + 5);
  EXPECT_EQ(elsewhere.load(), 0);
  EXPECT_EQ(workers.HelperTasksForTest(), 0u);
}

// Callers at once, more than helpers: each loop still runs every index once and
// returns (a caller never waits for a busy helper).
TEST(EncodeWorkersTest, ConcurrentCallersEachFinish) {
  EncodeWorkers workers(2);
  constexpr int kCallers = 6;
  std::vector<std::vector<std::atomic<int>>> runs(kCallers);
  for (auto& r : runs) r = std::vector<std::atomic<int>>(500);
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      for (int round = 0; round < 20; ++round) {
        workers.ParallelFor(runs[c].size(), [&](size_t i) { runs[c][i].fetch_add(1); });
      }
    });
  }
  for (std::thread& t : callers) t.join();
  for (int c = 0; c < kCallers; ++c) {
    for (size_t i = 0; i < runs[c].size(); ++i) ASSERT_EQ(runs[c][i].load(), 20);
  }
}

}  // namespace
}  // namespace dictlog::engine
