// LogEngine in cluster mode (log_engine_cluster.cc) with a fake ReplicatedLog: appends
// go to the log only, reach the store through ApplyLogged with the log's seqs and
// position, and reads wait for them instead of answering NOT_FOUND.
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "server/engine/log_engine.h"

namespace dictlog::engine {
namespace {

using ::absl::StatusCode;

// One partition; message k's records get seqs (k << 16) + i + 1. Nothing is applied
// until the test says so; reads never wait.
class FakeLog : public ReplicatedLog {
 public:
  struct Message {
    std::vector<std::string> categories, payloads, pools;
    std::string request_id, principal;
    int64_t append_unix_ms = 0;
  };

  absl::StatusOr<std::vector<uint64_t>> Append(const LogAppend& append) override {
    absl::MutexLock lock(&mu_);
    if (!fail_.ok()) return fail_;
    Message& message = messages_.emplace_back();
    std::vector<uint64_t> seqs;
    for (size_t i = 0; i < append.records.size(); ++i) {
      message.categories.emplace_back(append.records[i].category);
      message.payloads.emplace_back(append.records[i].payload);
      seqs.push_back(((messages_.size() - 1) << 16) + i + 1);
    }
    message.pools = append.pools;
    message.request_id = std::string(append.request_id);
    message.principal = std::string(append.principal);
    message.append_unix_ms = append.append_unix_ms;
    return seqs;
  }
  absl::Status AwaitApplied(absl::string_view pool, uint64_t seq) const override {
    return CheckApplied(pool, seq);
  }
  absl::Status CheckApplied(absl::string_view pool, uint64_t seq) const override {
    absl::MutexLock lock(&mu_);
    if (static_cast<int64_t>((seq - 1) >> 16) <= applied_) return absl::OkStatus();
    return absl::UnavailableError(absl::StrCat(pool, "/", seq, " not applied"));
  }

  // Message `k` as the materializer hands it to ApplyLogged (views into the message).
  LoggedBatch Logged(size_t k) const {
    absl::MutexLock lock(&mu_);
    const Message& message = messages_[k];
    LoggedBatch batch;
    for (size_t i = 0; i < message.payloads.size(); ++i) {
      batch.records.push_back({message.categories[i], message.payloads[i]});
      batch.seqs.push_back((uint64_t{k} << 16) + i + 1);
    }
    batch.pools = message.pools;
    batch.request_id = message.request_id;
    batch.principal = message.principal;
    batch.append_unix_ms = message.append_unix_ms;
    batch.position = {0, static_cast<int64_t>(k)};
    return batch;
  }
  void MarkApplied(int64_t offset) {
    absl::MutexLock lock(&mu_);
    applied_ = offset;
  }
  size_t size() const {
    absl::MutexLock lock(&mu_);
    return messages_.size();
  }

 private:
  mutable absl::Mutex mu_;
  std::deque<Message> messages_ ABSL_GUARDED_BY(mu_);  // deque: Logged's views stay valid
  int64_t applied_ ABSL_GUARDED_BY(mu_) = -1;
  absl::Status fail_ ABSL_GUARDED_BY(mu_);
};

class LogEngineClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.store.path = FreshTestDir();
    options_.auto_train = false;
    options_.routes = {{"", "app-", "apps"}};
    options_.replicated_log = &log_;
    Reopen();
  }

  void Reopen() {
    engine_.reset();
    auto engine = LogEngine::Open(options_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
  }

  // Applies message k and tells the fake, as the materializer does.
  void Apply(size_t k) {
    absl::Status status = engine_->ApplyLogged(log_.Logged(k));
    ASSERT_TRUE(status.ok()) << status;
    log_.MarkApplied(static_cast<int64_t>(k));
  }

  FakeLog log_;
  EngineOptions options_;
  std::unique_ptr<LogEngine> engine_;
};

TEST_F(LogEngineClusterTest, AppendGoesToTheLogAndReadsWaitUntilApplied) {
  const std::vector<AppendInput> batch = {{"app-a", "one"}, {"app-b", "two"}, {"app-a", "3"}};
  absl::StatusOr<std::vector<std::string>> ids = engine_->Append(batch);
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(*ids, (std::vector<std::string>{"apps/1", "apps/2", "apps/3"}));
  ASSERT_EQ(log_.size(), 1u);  // one message for the whole batch
  EXPECT_EQ(log_.Logged(0).pools, (std::vector<std::string>{"apps", "apps", "apps"}));

  // Acknowledged but not applied here: UNAVAILABLE, never NOT_FOUND.
  EXPECT_EQ(engine_->Get("apps/1").status().code(), StatusCode::kUnavailable);
  auto many = engine_->MultiGet({"apps/1", "apps/3"});
  ASSERT_TRUE(many.ok());
  EXPECT_EQ((*many)[0].status().code(), StatusCode::kUnavailable);
  EXPECT_EQ((*many)[1].status().code(), StatusCode::kUnavailable);

  Apply(0);
  absl::StatusOr<v1::Record> record = engine_->Get("apps/2");
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->payload(), "two");
  EXPECT_EQ(record->category(), "app-b");
  many = engine_->MultiGet({"apps/1", "apps/3", "apps/4"});
  ASSERT_TRUE(many.ok());
  EXPECT_EQ((*many)[0]->payload(), "one");
  EXPECT_EQ((*many)[1]->payload(), "3");
  EXPECT_EQ((*many)[2].status().code(), StatusCode::kNotFound);  // applied, absent
  absl::StatusOr<std::vector<store::LogPosition>> positions = engine_->LogPositions();
  ASSERT_TRUE(positions.ok());
  ASSERT_EQ(positions->size(), 1u);
  EXPECT_EQ((*positions)[0].offset, 0);
}

TEST_F(LogEngineClusterTest, AppliedRecordsKeepTheLogsSeqsAcrossRestart) {
  ASSERT_TRUE(engine_->Append({{"web", "a"}}).ok());
  ASSERT_TRUE(engine_->Append({{"web", "b"}, {"web", "c"}}).ok());
  Apply(0);
  Apply(1);
  Reopen();
  absl::StatusOr<std::vector<store::LogPosition>> positions = engine_->LogPositions();
  ASSERT_TRUE(positions.ok());
  ASSERT_EQ(positions->size(), 1u);
  EXPECT_EQ((*positions)[0].offset, 1);
  const std::string second = absl::StrCat("web/", (uint64_t{1} << 16) + 2);
  absl::StatusOr<v1::Record> record = engine_->Get(second);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->payload(), "c");
  absl::StatusOr<v1::PoolInfo> pool = engine_->GetPool("web");
  ASSERT_TRUE(pool.ok());
  EXPECT_EQ(pool->stats().records(), 3u);  // counters equal the records
}

TEST_F(LogEngineClusterTest, RoutesThatDifferFromTheWritersAreRefusedAndNothingWritten) {
  ASSERT_TRUE(engine_->Append({{"app-x", "payload"}}).ok());
  LoggedBatch batch = log_.Logged(0);
  batch.pools = {"elsewhere"};
  EXPECT_EQ(engine_->ApplyLogged(batch).code(), StatusCode::kFailedPrecondition);
  absl::StatusOr<std::vector<store::LogPosition>> positions = engine_->LogPositions();
  ASSERT_TRUE(positions.ok());
  EXPECT_TRUE(positions->empty());
  ASSERT_TRUE(engine_->SkipLogged(batch.position).ok());  // the materializer's way on
  positions = engine_->LogPositions();
  ASSERT_TRUE(positions.ok());
  EXPECT_EQ(positions->size(), 1u);
}

TEST_F(LogEngineClusterTest, MalformedLoggedBatchesAreRefusedBeforeAnythingIsWritten) {
  ASSERT_TRUE(engine_->Append({{"web", "a"}}, "request-1", "alice").ok());
  LoggedBatch long_principal = log_.Logged(0);
  long_principal.principal = std::string(300, 'p');
  EXPECT_EQ(engine_->ApplyLogged(long_principal).code(), StatusCode::kInvalidArgument);
  LoggedBatch missing_seq = log_.Logged(0);
  missing_seq.seqs.clear();
  EXPECT_EQ(engine_->ApplyLogged(missing_seq).code(), StatusCode::kInvalidArgument);
  LoggedBatch empty = log_.Logged(0);
  empty.records.clear();
  empty.pools.clear();
  empty.seqs.clear();
  EXPECT_EQ(engine_->ApplyLogged(empty).code(), StatusCode::kInvalidArgument);
  absl::StatusOr<std::vector<store::LogPosition>> positions = engine_->LogPositions();
  ASSERT_TRUE(positions.ok());
  EXPECT_TRUE(positions->empty());
  EXPECT_TRUE(absl::IsNotFound(engine_->GetPool("web").status()) ||
              engine_->GetPool("web")->stats().records() == 0);
}

TEST_F(LogEngineClusterTest, RetryOfAnAppliedRequestReturnsItsIdsWithoutANewMessage) {
  absl::StatusOr<std::vector<std::string>> first =
      engine_->Append({{"web", "a"}, {"web", "b"}}, "request-1", "alice");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(log_.Logged(0).request_id, "request-1");
  Apply(0);
  absl::StatusOr<std::vector<std::string>> retry =
      engine_->Append({{"web", "a"}, {"web", "b"}}, "request-1", "alice");
  ASSERT_TRUE(retry.ok()) << retry.status();
  EXPECT_EQ(*retry, *first);
  EXPECT_EQ(log_.size(), 1u);
}

TEST_F(LogEngineClusterTest, BlockModeIsRefused) {
  engine_.reset();
  options_.default_pool_options.set_storage_mode(v1::STORAGE_MODE_BLOCK);
  EXPECT_EQ(LogEngine::Open(options_).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dictlog::engine
