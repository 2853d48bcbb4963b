// LogEngine::Append with request ids: retries store one copy and return the first
// attempt's ids, across restarts, until the request window expires.
#include <atomic>
#include <thread>

#include "absl/time/clock.h"
#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "server/engine/log_engine.h"

namespace dictlog::engine {
namespace {

class AppendRetryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.store.path = FreshTestDir();
    options_.auto_train = false;
    Reopen();
  }

  void Reopen() {
    engine_.reset();
    auto engine = LogEngine::Open(options_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
  }

  uint64_t Records(const std::string& pool) {
    absl::StatusOr<v1::PoolInfo> info = engine_->GetPool(pool);
    return info.ok() ? info->stats().records() : 0;
  }

  EngineOptions options_;
  std::unique_ptr<LogEngine> engine_;
};

TEST_F(AppendRetryTest, RetryStoresOneCopyAndReturnsTheSameIds) {
  const std::vector<AppendInput> batch = {{"a", "1"}, {"b", "2"}, {"a", "3"}};
  auto first = engine_->Append(batch, "req-1");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(*first, (std::vector<std::string>{"a/1", "b/1", "a/2"}));
  auto retry = engine_->Append(batch, "req-1");
  ASSERT_TRUE(retry.ok()) << retry.status();
  EXPECT_EQ(*retry, *first);
  EXPECT_EQ(Records("a"), 2u);
  EXPECT_EQ(Records("b"), 1u);
  // Another id (or none) is another append.
  EXPECT_EQ((*engine_->Append(batch, "req-2"))[0], "a/3");
  EXPECT_EQ((*engine_->Append(batch))[0], "a/5");
}

TEST_F(AppendRetryTest, RequestIdsAreScopedByPrincipal) {
  const std::vector<AppendInput> batch = {{"a", "1"}};
  auto alice = engine_->Append(batch, "req", "alice");
  ASSERT_TRUE(alice.ok()) << alice.status();
  // Bob's request with the same id and records is his own append: not Alice's ids.
  auto bob = engine_->Append(batch, "req", "bob");
  ASSERT_TRUE(bob.ok()) << bob.status();
  EXPECT_NE(*bob, *alice);
  // Other records under the same id are no ALREADY_EXISTS for another principal.
  const std::vector<AppendInput> other = {{"a", "2"}};
  auto carol = engine_->Append(other, "req", "carol");
  ASSERT_TRUE(carol.ok()) << carol.status();
  EXPECT_EQ(Records("a"), 3u);
  // Each principal's retry still returns its own first ids; none wrote the unscoped id.
  EXPECT_EQ(*engine_->Append(batch, "req", "alice"), *alice);
  EXPECT_EQ(*engine_->Append(batch, "req", "bob"), *bob);
  EXPECT_NE(*engine_->Append(batch, "req"), *alice);
  EXPECT_EQ(Records("a"), 4u);
}

TEST_F(AppendRetryTest, SameIdWithOtherRecordsIsAlreadyExistsAndWritesNothing) {
  const std::vector<AppendInput> batch = {{"a", "1"}};
  ASSERT_TRUE(engine_->Append(batch, "req").ok());
  const std::vector<AppendInput> other = {{"a", "2"}};
  auto reused = engine_->Append(other, "req");
  EXPECT_EQ(reused.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_NE(reused.status().message().find("req"), std::string::npos);
  EXPECT_EQ(Records("a"), 1u);
}

TEST_F(AppendRetryTest, InvalidRequestIdIsRejected) {
  const std::vector<AppendInput> batch = {{"a", "1"}};
  EXPECT_EQ(engine_->Append(batch, std::string(129, 'r')).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(engine_->Append(batch, "has space").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Records("a"), 0u);
}

TEST_F(AppendRetryTest, FailedAppendIsNotRemembered) {
  const std::vector<AppendInput> bad = {{"a", "1"}, {"bad category", "2"}};
  EXPECT_FALSE(engine_->Append(bad, "req").ok());
  const std::vector<AppendInput> good = {{"a", "1"}};
  auto ids = engine_->Append(good, "req");
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ((*ids)[0], "a/1");
}

TEST_F(AppendRetryTest, RequestIdsSurviveARestart) {
  const std::vector<AppendInput> batch = {{"a", "1"}, {"a", "2"}};
  auto first = engine_->Append(batch, "req");
  ASSERT_TRUE(first.ok());
  Reopen();
  auto retry = engine_->Append(batch, "req");
  ASSERT_TRUE(retry.ok()) << retry.status();
  EXPECT_EQ(*retry, *first);
  EXPECT_EQ(Records("a"), 2u);
}

TEST_F(AppendRetryTest, ExpiredRequestIdIsForgotten) {
  // A test clock: read by RocksDB's compaction threads too.
  auto now_ms = std::make_shared<std::atomic<int64_t>>(absl::ToUnixMillis(absl::Now()));
  options_.store.clock_for_test = [now_ms] { return absl::FromUnixMillis(now_ms->load()); };
  options_.store.request_window = absl::Seconds(2);
  Reopen();
  const std::vector<AppendInput> batch = {{"a", "1"}};
  ASSERT_TRUE(engine_->Append(batch, "req").ok());
  *now_ms += 2000;  // At the end of the window: still remembered.
  EXPECT_EQ((*engine_->Append(batch, "req"))[0], "a/1");
  *now_ms += 100;
  // Past the window the id reads as absent, so the same body is a new append.
  EXPECT_EQ((*engine_->Append(batch, "req"))[0], "a/2");
  EXPECT_EQ(Records("a"), 2u);
}

TEST_F(AppendRetryTest, ConcurrentAttemptsWithOneIdStoreOneCopy) {
  std::vector<std::string> payloads;
  for (int i = 0; i < 500; ++i) payloads.push_back("payload number " + std::to_string(i));
  std::vector<AppendInput> batch;
  for (const std::string& p : payloads) batch.push_back({"a", p});
  std::vector<std::vector<std::string>> results(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto ids = engine_->Append(batch, "same");
      if (ids.ok()) results[t] = *ids;
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 4; ++t) {
    ASSERT_EQ(results[t].size(), batch.size());
    EXPECT_EQ(results[t], results[0]);
  }
  EXPECT_EQ(Records("a"), batch.size());
}

}  // namespace
}  // namespace dictlog::engine
