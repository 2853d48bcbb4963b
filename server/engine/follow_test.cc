// LogEngine::Follow over a real RocksDB: live records in order and exactly once under
// concurrent appends, catch-up from an old id switching to live without a gap or a
// duplicate, a slow follower told it fell behind that resumes without missing
// anything, cancellation, shutdown, the stream limit and category streams.
#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "server/engine/log_engine.h"

namespace dictlog::engine {
namespace {

using ::absl::StatusCode;

// A Follow running on its own thread, collecting what it is sent.
class Stream {
 public:
  Stream(LogEngine* engine, FollowSpec spec,
         std::function<void(const std::vector<v1::Record>&)> on_chunk = nullptr)
      : on_chunk_(std::move(on_chunk)) {
    thread_ = std::thread([this, engine, spec = std::move(spec)] {
      absl::Status status = engine->Follow(
          spec,
          [this](std::vector<v1::Record> chunk) {
            if (on_chunk_) on_chunk_(chunk);
            absl::MutexLock lock(&mu_);
            for (v1::Record& record : chunk) received_.push_back(std::move(record));
            return absl::OkStatus();
          },
          [this] {
            return cancel_.load() ? absl::CancelledError("test cancelled")
                                  : absl::OkStatus();
          });
      absl::MutexLock lock(&mu_);
      status_ = status;
      done_ = true;
    });
  }
  ~Stream() {
    Cancel();
    thread_.join();
  }

  void Cancel() { cancel_.store(true); }
  // Waits (up to 30 s) until it has received `n` records; false if not.
  bool WaitForRecords(size_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return received_.size() >= n || done_;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(30)) &&
           received_.size() >= n;
  }
  // Waits (up to `timeout`) for Follow to return; its status, or nullopt.
  std::optional<absl::Status> WaitForEnd(absl::Duration timeout = absl::Seconds(30)) {
    absl::MutexLock lock(&mu_);
    if (!mu_.AwaitWithTimeout(absl::Condition(&done_), timeout)) return std::nullopt;
    return status_;
  }
  // How the stream ended so far, for failure messages.
  std::string EndStatus() {
    absl::MutexLock lock(&mu_);
    return done_ ? absl::StrCat("the stream ended: ", status_.ToString())
                 : "the stream is still running";
  }
  std::vector<std::string> Ids() {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> ids;
    for (const v1::Record& record : received_) ids.push_back(record.id());
    return ids;
  }
  std::vector<v1::Record> Records() {
    absl::MutexLock lock(&mu_);
    return received_;
  }

 private:
  std::function<void(const std::vector<v1::Record>&)> on_chunk_;
  std::atomic<bool> cancel_{false};
  absl::Mutex mu_;
  std::vector<v1::Record> received_ ABSL_GUARDED_BY(mu_);
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

std::vector<std::string> IdRange(const std::string& pool, uint64_t first, uint64_t last) {
  std::vector<std::string> ids;
  for (uint64_t seq = first; seq <= last; ++seq) ids.push_back(absl::StrCat(pool, "/", seq));
  return ids;
}

class FollowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.store.path = FreshTestDir();
    options_.auto_train = false;
    options_.routes = {{"", "app-", "apps"}};
    Open();
  }
  void Open() {
    auto engine = LogEngine::Open(options_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
  }

  // Appends `n` records to `category` in batches of up to `batch`; returns their ids.
  std::vector<std::string> Append(const std::string& category, int n, int batch = 1) {
    std::vector<std::string> ids;
    for (int i = 0; i < n; i += batch) {
      std::vector<std::string> payloads;
      std::vector<AppendInput> inputs;
      for (int k = i; k < std::min(n, i + batch); ++k) {
        payloads.push_back(absl::StrCat(category, " line ", k));
      }
      for (const std::string& payload : payloads) inputs.push_back({category, payload});
      auto appended = engine_->Append(inputs);
      EXPECT_TRUE(appended.ok()) << appended.status();
      if (appended.ok()) ids.insert(ids.end(), appended->begin(), appended->end());
    }
    return ids;
  }

  static FollowSpec PoolSpec(const std::string& pool, const std::string& after = "") {
    FollowSpec spec;
    spec.pool = pool;
    spec.after_id = after;
    return spec;
  }
  static FollowSpec FromStart(FollowSpec spec) {
    spec.from_start = true;
    return spec;
  }
  static FollowSpec CategorySpec(const std::string& category) {
    FollowSpec spec;
    spec.category = category;
    return spec;
  }

  EngineOptions options_;
  std::unique_ptr<LogEngine> engine_;
};

TEST_F(FollowTest, ConcurrentAppendsArriveInIdOrderExactlyOnce) {
  // The buffer holds every record the writers append: this test is about order and
  // exactly-once, and a stream slower than four writers (under a sanitizer, on a loaded
  // machine) must not end it by falling behind. Falling behind has its own test below.
  options_.follow.buffer_records = 4096;
  engine_.reset();
  Open();
  Append("web", 3);
  Stream stream(engine_.get(), PoolSpec("web", "web/3"));
  // Once a record reaches it, the stream is subscribed: what follows comes live.
  Append("web", 1);
  ASSERT_TRUE(stream.WaitForRecords(1)) << stream.EndStatus();
  constexpr int kThreads = 4, kPerThread = 300;
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] { Append("web", kPerThread, 1 + t * 3); });
  }
  for (std::thread& writer : writers) writer.join();
  const size_t total = 1 + kThreads * kPerThread;
  ASSERT_TRUE(stream.WaitForRecords(total)) << stream.EndStatus();
  EXPECT_EQ(stream.Ids(), IdRange("web", 4, 3 + total));
  const std::vector<v1::Record> records = stream.Records();
  EXPECT_EQ(records[0].payload(), "web line 0");
  EXPECT_TRUE(records[0].has_append_time_unix_ms());
}

TEST_F(FollowTest, CatchUpFromAnOldIdThenLiveWithoutGapOrDuplicate) {
  Append("web", 300, 7);
  // Appends race with the stream's start: the switch from the store to live happens
  // while they run.
  std::thread writer([&] { Append("web", 300, 3); });
  Stream stream(engine_.get(), PoolSpec("web", "web/100"));
  writer.join();
  ASSERT_TRUE(stream.WaitForRecords(500)) << stream.EndStatus();
  EXPECT_EQ(stream.Ids(), IdRange("web", 101, 600));
  Append("web", 2);
  ASSERT_TRUE(stream.WaitForRecords(502)) << stream.EndStatus();
  EXPECT_EQ(stream.Ids(), IdRange("web", 101, 602));
}

TEST_F(FollowTest, CatchUpMatchesScanIncludingAppendTimes) {
  Append("web", 20, 4);
  Stream stream(engine_.get(), FromStart(PoolSpec("web")));
  ASSERT_TRUE(stream.WaitForRecords(20)) << stream.EndStatus();
  std::vector<v1::Record> scanned;
  ScanSpec scan;
  scan.pool = "web";
  ASSERT_TRUE(engine_
                  ->Scan(scan,
                         [&](std::vector<v1::Record> chunk) {
                           for (auto& r : chunk) scanned.push_back(std::move(r));
                           return absl::OkStatus();
                         })
                  .ok());
  const std::vector<v1::Record> followed = stream.Records();
  ASSERT_EQ(followed.size(), scanned.size());
  for (size_t i = 0; i < scanned.size(); ++i) {
    EXPECT_EQ(followed[i].SerializeAsString(), scanned[i].SerializeAsString()) << i;
  }
}

TEST_F(FollowTest, BlockModePoolCatchesUpThroughSealedBlocksThenLive) {
  v1::PoolOptions block;
  block.set_storage_mode(v1::STORAGE_MODE_BLOCK);
  block.set_block_bytes(1024);
  ASSERT_TRUE(engine_->CreatePool("blk", block).ok());
  Append("blk", 200, 9);  // ~15 bytes each: sealed into blocks as they fill.
  std::thread writer([&] { Append("blk", 200, 5); });
  Stream stream(engine_.get(), FromStart(PoolSpec("blk")));
  writer.join();
  ASSERT_TRUE(stream.WaitForRecords(400)) << stream.EndStatus();
  EXPECT_EQ(stream.Ids(), IdRange("blk", 1, 400));
  const std::vector<v1::Record> records = stream.Records();
  EXPECT_EQ(records[0].payload(), "blk line 0");
  EXPECT_EQ(records[399].payload(), "blk line 199");
}

TEST_F(FollowTest, SlowFollowerIsToldItFellBehindAndResumesWithoutMissingAnything) {
  options_.follow.buffer_records = 4;
  engine_.reset();
  Open();
  Append("web", 1);
  absl::Notification blocked, release;
  auto slow = [&](const std::vector<v1::Record>&) {  // Called on the stream's thread.
    if (blocked.HasBeenNotified()) return;
    blocked.Notify();
    release.WaitForNotification();
  };
  std::string last;
  {
    Stream stream(engine_.get(), PoolSpec("web", "web/1"), slow);
    Append("web", 1);  // The sink blocks on it: the buffer fills behind.
    ASSERT_TRUE(blocked.WaitForNotificationWithTimeout(absl::Seconds(30)));
    Append("web", 50);
    release.Notify();
    std::optional<absl::Status> end = stream.WaitForEnd();
    ASSERT_TRUE(end.has_value());
    EXPECT_EQ(end->code(), StatusCode::kAborted) << *end;
    const std::vector<std::string> got = stream.Ids();
    ASSERT_EQ(got.size(), 5u);  // The one it blocked on and the buffer's four.
    EXPECT_EQ(got, IdRange("web", 2, 6));
    last = got.back();
    EXPECT_NE(end->message().find("fell behind"), std::string::npos) << *end;
    EXPECT_NE(end->message().find("resume after " + last), std::string::npos) << *end;
  }
  Stream resumed(engine_.get(), PoolSpec("web", last));
  ASSERT_TRUE(resumed.WaitForRecords(46)) << resumed.EndStatus();
  EXPECT_EQ(resumed.Ids(), IdRange("web", 7, 52));
  EXPECT_EQ(engine_->FollowStatistics().fell_behind, 1u);
}

TEST_F(FollowTest, CancelEndsTheStreamPromptly) {
  Append("web", 1);
  Stream stream(engine_.get(), PoolSpec("web"));
  stream.Cancel();
  std::optional<absl::Status> end = stream.WaitForEnd(absl::Seconds(5));
  ASSERT_TRUE(end.has_value()) << "Follow did not return after cancel";
  EXPECT_EQ(end->code(), StatusCode::kCancelled);
  EXPECT_EQ(engine_->FollowStatistics().connected, 0u);
}

TEST_F(FollowTest, DeletingThePoolEndsItsStreamsWithNotFound) {
  Append("web", 2);
  Stream stream(engine_.get(), PoolSpec("web", "web/1"));
  ASSERT_TRUE(stream.WaitForRecords(1)) << stream.EndStatus();
  ASSERT_TRUE(engine_->DeletePool("web").ok());
  std::optional<absl::Status> end = stream.WaitForEnd(absl::Seconds(5));
  ASSERT_TRUE(end.has_value()) << "Follow did not return after DeletePool";
  EXPECT_EQ(end->code(), StatusCode::kNotFound) << *end;
  EXPECT_NE(end->message().find("deleted"), std::string::npos) << *end;
  EXPECT_EQ(stream.Ids(), IdRange("web", 2, 2));
  EXPECT_EQ(engine_->FollowStatistics().connected, 0u);
}

TEST_F(FollowTest, EndFollowsEndsStreamsAndRefusesNewOnes) {
  Append("web", 1);
  Stream waiting(engine_.get(), PoolSpec("web"));
  Stream sent(engine_.get(), PoolSpec("web", "web/1"));
  Append("web", 1);
  ASSERT_TRUE(sent.WaitForRecords(1)) << sent.EndStatus();
  engine_->EndFollows();
  std::optional<absl::Status> end = sent.WaitForEnd(absl::Seconds(5));
  ASSERT_TRUE(end.has_value()) << "Follow did not return after EndFollows";
  EXPECT_EQ(end->code(), StatusCode::kUnavailable);
  EXPECT_NE(end->message().find("resume after web/2"), std::string::npos) << *end;
  ASSERT_TRUE(waiting.WaitForEnd(absl::Seconds(5)).has_value());
  Stream late(engine_.get(), PoolSpec("web"));
  std::optional<absl::Status> refused = late.WaitForEnd(absl::Seconds(5));
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->code(), StatusCode::kUnavailable);
}

TEST_F(FollowTest, StreamsBeyondTheLimitAreResourceExhausted) {
  options_.follow.max_followers = 1;
  engine_.reset();
  Open();
  Append("web", 1);
  Stream first(engine_.get(), FromStart(PoolSpec("web")));
  ASSERT_TRUE(first.WaitForRecords(1)) << first.EndStatus();
  Stream second(engine_.get(), PoolSpec("web"));
  std::optional<absl::Status> end = second.WaitForEnd(absl::Seconds(5));
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->code(), StatusCode::kResourceExhausted) << *end;
}

TEST_F(FollowTest, CategoryStreamSendsOnlyItsCategoryAndWaitsForItsPool) {
  // Pool "apps" (of app-a and app-b) does not exist yet: the stream waits for it.
  Stream stream(engine_.get(), FromStart(CategorySpec("app-a")));
  std::vector<std::string> wanted;
  for (int round = 0; round < 20; ++round) {
    Append("app-b", 1);
    std::vector<std::string> a = Append("app-a", 1 + round % 3, 2);
    wanted.insert(wanted.end(), a.begin(), a.end());
  }
  ASSERT_TRUE(stream.WaitForRecords(wanted.size())) << stream.EndStatus();
  EXPECT_EQ(stream.Ids(), wanted);
  for (const v1::Record& record : stream.Records()) EXPECT_EQ(record.category(), "app-a");
}

TEST_F(FollowTest, BadSpecsAreInvalidArgument) {
  Append("web", 1);
  FollowSpec two_targets = PoolSpec("web");
  two_targets.category = "web";
  Stream both(engine_.get(), two_targets);
  Stream other_pool(engine_.get(), PoolSpec("web", "db/1"));
  Stream malformed(engine_.get(), PoolSpec("web", "web/x"));
  Stream two_starts(engine_.get(), FromStart(PoolSpec("web", "web/1")));
  for (Stream* stream : {&both, &other_pool, &malformed, &two_starts}) {
    std::optional<absl::Status> end = stream->WaitForEnd(absl::Seconds(5));
    ASSERT_TRUE(end.has_value());
    EXPECT_EQ(end->code(), StatusCode::kInvalidArgument) << *end;
  }
}

}  // namespace
}  // namespace dictlog::engine
