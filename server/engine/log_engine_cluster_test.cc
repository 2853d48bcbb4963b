// LogEngine in cluster mode (log_engine_cluster.cc) with a fake ReplicatedLog: appends
// go to the log only, reach the store through ApplyLogged with the log's seqs and
// position, and reads wait for them instead of answering NOT_FOUND; records applied
// from the log reach Follow streams on every node.
#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "codec/record_codec.h"
#include "codec/test_dictionary.h"
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
    std::vector<EncodedRecord> encoded;
    std::string request_id, principal;
    uint64_t request_fingerprint = 0;
    int64_t append_unix_ms = 0;
  };
  // What AppendDictionary does with a dictionary message at `offset` (the test applies
  // it); unset: UNIMPLEMENTED.
  using DictionaryHandler =
      std::function<absl::StatusOr<AppliedDictionary>(const LogDictionary&, int64_t offset)>;

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
    message.encoded = append.encoded;
    message.request_fingerprint = append.request_fingerprint;
    message.request_id = std::string(append.request_id);
    message.principal = std::string(append.principal);
    message.append_unix_ms = append.append_unix_ms;
    return seqs;
  }
  absl::StatusOr<AppliedDictionary> AppendDictionary(const LogDictionary& dictionary) override {
    int64_t offset = 0;
    DictionaryHandler handler;
    {
      absl::MutexLock lock(&mu_);
      if (!on_dictionary_) return absl::UnimplementedError("no dictionary handler");
      messages_.emplace_back();  // Takes the offset; no records.
      offset = static_cast<int64_t>(messages_.size() - 1);
      handler = on_dictionary_;
    }
    return handler(dictionary, offset);
  }
  void OnDictionary(DictionaryHandler handler) {
    absl::MutexLock lock(&mu_);
    on_dictionary_ = std::move(handler);
  }
  absl::Status AwaitApplied(absl::string_view pool, uint64_t seq) const override {
    std::function<void()> on_await;
    {
      absl::MutexLock lock(&mu_);
      on_await = std::exchange(on_await_, nullptr);
    }
    if (on_await) on_await();  // What gets applied while the reader waits.
    return CheckApplied(pool, seq);
  }
  // Runs `apply` (once) in the next AwaitApplied, before it checks.
  void OnNextAwait(std::function<void()> apply) {
    absl::MutexLock lock(&mu_);
    on_await_ = std::move(apply);
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
    batch.encoded = message.encoded;
    batch.request_fingerprint = message.request_fingerprint;
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
  DictionaryHandler on_dictionary_ ABSL_GUARDED_BY(mu_);
  mutable std::function<void()> on_await_ ABSL_GUARDED_BY(mu_);
};

// A real zstd dictionary for the synthetic lines, with id `id`.
std::string DictionaryWithId(uint32_t id) {
  return codec::TrainDictionaryForTest(codec::SyntheticLogLines(400, 7), 4096, id);
}

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

// On a node that did not take the append: a MultiGet's first id names a pool this
// node has not created, at a seq already applied (NOT_FOUND); its second waits for the
// record that creates the pool. The second is read: a pool not found is not
// remembered for the rest of the chunk.
TEST_F(LogEngineClusterTest, MultiGetFindsAPoolCreatedWhileItWaited) {
  options_.routes = {{"", "app-", "apps"}, {"", "oth-", "others"}};
  Reopen();
  EngineOptions reader_options = options_;
  reader_options.store.path = FreshTestDir("reader");
  absl::StatusOr<std::unique_ptr<LogEngine>> reader = LogEngine::Open(reader_options);
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto apply_on_reader = [&](size_t k) {
    ASSERT_TRUE((*reader)->ApplyLogged(log_.Logged(k)).ok());
    log_.MarkApplied(static_cast<int64_t>(k));
  };
  ASSERT_TRUE(engine_->Append({{"oth-a", "first"}}).ok());  // Message 0: pool others.
  apply_on_reader(0);
  absl::StatusOr<std::vector<std::string>> later = engine_->Append({{"app-a", "later"}});
  ASSERT_TRUE(later.ok()) << later.status();  // Message 1: the first of pool apps.
  ASSERT_EQ(*later, std::vector<std::string>{"apps/65537"});
  log_.OnNextAwait([&] { apply_on_reader(1); });
  auto many = (*reader)->MultiGet({"apps/1", (*later)[0]});
  ASSERT_TRUE(many.ok()) << many.status();
  EXPECT_EQ((*many)[0].status().code(), StatusCode::kNotFound);
  ASSERT_TRUE((*many)[1].ok()) << (*many)[1].status();
  EXPECT_EQ((*many)[1]->payload(), "later");
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

// Pool admin would change one node's pools alone: refused before anything changes,
// with a message naming the way that works (pools in the --config file).
TEST_F(LogEngineClusterTest, PoolAdminCallsAreRefusedAndChangeNothing) {
  v1::PoolOptions declared;
  declared.set_compression_level(9);
  declared.set_max_age_seconds(3600);
  options_.pools = {{"web", declared}};
  Reopen();
  ASSERT_TRUE(engine_->Append({{"web", "kept"}}).ok());
  Apply(0);

  v1::PoolOptions options;
  options.set_compression_level(1);
  absl::Status created = engine_->CreatePool("fresh", options).status();
  EXPECT_EQ(created.code(), StatusCode::kFailedPrecondition) << created;
  EXPECT_NE(created.message().find("--config"), absl::string_view::npos) << created;
  absl::Status updated = engine_->UpdatePool("web", options).status();
  EXPECT_EQ(updated.code(), StatusCode::kFailedPrecondition) << updated;
  EXPECT_NE(updated.message().find("--config"), absl::string_view::npos) << updated;
  absl::Status deleted = engine_->DeletePool("web").status();
  EXPECT_EQ(deleted.code(), StatusCode::kFailedPrecondition) << deleted;
  EXPECT_NE(deleted.message().find("retention"), absl::string_view::npos) << deleted;

  EXPECT_TRUE(absl::IsNotFound(engine_->GetPool("fresh").status()));
  absl::StatusOr<v1::PoolInfo> web = engine_->GetPool("web");
  ASSERT_TRUE(web.ok()) << web.status();
  EXPECT_EQ(web->options().compression_level(), 9);
  EXPECT_EQ(web->options().max_age_seconds(), 3600u);
  absl::StatusOr<v1::Record> record = engine_->Get("web/1");
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->payload(), "kept");
}

// A node: its own store and log view, applying the messages of the one log.
struct Node {
  FakeLog log;
  std::unique_ptr<LogEngine> engine;
};

class LogEngineClusterDictionaryTest : public LogEngineClusterTest {
 protected:
  // Node `peer_` applies what node engine_ logs, as every node does.
  void SetUp() override {
    LogEngineClusterTest::SetUp();
    EngineOptions peer = options_;
    peer.store.path = FreshTestDir("-peer");
    peer.replicated_log = &peer_.log;
    auto engine = LogEngine::Open(peer);
    ASSERT_TRUE(engine.ok()) << engine.status();
    peer_.engine = std::move(*engine);
    log_.OnDictionary([this](const LogDictionary& d, int64_t offset) {
      return ApplyDictionary(d, offset);
    });
  }

  // As the materializer: a new dictionary keeps the id it proposes (no collision here).
  absl::StatusOr<AppliedDictionary> ApplyDictionary(LogDictionary d, int64_t offset) {
    if (!d.content.empty()) {
      d.id = next_id_++;
      for (int i = 0; i < 4; ++i) d.content[4 + i] = static_cast<char>((d.id >> (8 * i)) & 0xff);
    }
    const store::LogPosition position{0, offset};
    absl::StatusOr<AppliedDictionary> peer = peer_.engine->ApplyLoggedDictionary(d, false, position);
    if (!peer.ok()) return peer.status();
    peer_.log.MarkApplied(offset);
    absl::StatusOr<AppliedDictionary> here = engine_->ApplyLoggedDictionary(d, false, position);
    if (here.ok()) log_.MarkApplied(offset);
    return here;
  }

  // Appends through engine_ and applies the message on both nodes.
  std::vector<std::string> AppendAndApply(const std::vector<AppendInput>& records) {
    absl::StatusOr<std::vector<std::string>> ids = engine_->Append(records);
    EXPECT_TRUE(ids.ok()) << ids.status();
    const size_t k = log_.size() - 1;
    Apply(k);
    absl::Status peer = peer_.engine->ApplyLogged(log_.Logged(k));
    EXPECT_TRUE(peer.ok()) << peer;
    peer_.log.MarkApplied(static_cast<int64_t>(k));
    return ids.ok() ? *ids : std::vector<std::string>();
  }

  std::vector<AppendInput> Lines(int count, uint32_t seed) {
    lines_.push_back(codec::SyntheticLogLines(count, seed));
    std::vector<AppendInput> records;
    for (const std::string& line : lines_.back()) records.push_back({"web", line});
    return records;
  }

  // Activates a fresh dictionary of pool web through the log; its id.
  uint32_t TrainInLog(bool activate) {
    LogDictionary d;
    d.pool = "web";
    d.content = DictionaryWithId(1);
    d.activate = activate;
    d.base_id = engine_->GetPool("web")->active_dictionary_id();
    absl::StatusOr<AppliedDictionary> applied = log_.AppendDictionary(d);
    EXPECT_TRUE(applied.ok()) << applied.status();
    return applied.ok() ? applied->id : 0;
  }

  Node peer_;
  uint32_t next_id_ = 40000;
  std::deque<std::vector<std::string>> lines_;  // AppendInput views into them.
};

TEST_F(LogEngineClusterDictionaryTest, WriterCompressesWithTheLoggedDictionaryAndNodesStoreItsFrames) {
  AppendAndApply(Lines(50, 1));
  const uint32_t id = TrainInLog(/*activate=*/true);
  ASSERT_NE(id, 0u);
  EXPECT_EQ(engine_->GetPool("web")->active_dictionary_id(), id);
  EXPECT_EQ(peer_.engine->GetPool("web")->active_dictionary_id(), id);  // same position

  const std::vector<std::string> ids = AppendAndApply(Lines(50, 2));
  const LoggedBatch logged = log_.Logged(log_.size() - 1);
  ASSERT_EQ(logged.encoded.size(), 50u);
  size_t framed = 0;
  for (size_t i = 0; i < logged.encoded.size(); ++i) {
    if (!logged.encoded[i].framed) continue;
    ++framed;
    EXPECT_EQ(logged.encoded[i].dictionary_id, id);
    EXPECT_EQ(logged.encoded[i].raw_size, lines_.back()[i].size());
  }
  EXPECT_GT(framed, 40u);
  for (size_t i = 0; i < ids.size(); ++i) {
    absl::StatusOr<v1::GetFrameResponse> here = engine_->GetFrame(ids[i]);
    absl::StatusOr<v1::GetFrameResponse> there = peer_.engine->GetFrame(ids[i]);
    ASSERT_TRUE(here.ok() && there.ok()) << here.status() << there.status();
    EXPECT_EQ(here->frame(), there->frame());  // identical stored bytes on both nodes
    EXPECT_EQ(here->dictionary_id(), there->dictionary_id());
    absl::StatusOr<v1::Record> record = peer_.engine->Get(ids[i]);
    ASSERT_TRUE(record.ok()) << record.status();
    EXPECT_EQ(record->payload(), lines_.back()[i]);
  }
}

// A Follow on its own thread, collecting what it is sent until the test ends.
class FollowThread {
 public:
  FollowThread(LogEngine* engine, FollowSpec spec) {
    thread_ = std::thread([this, engine, spec = std::move(spec)] {
      absl::Status status = engine->Follow(
          spec,
          [this](std::vector<v1::Record> chunk) {
            absl::MutexLock lock(&mu_);
            for (v1::Record& record : chunk) received_.push_back(std::move(record));
            return absl::OkStatus();
          },
          [this] {
            return stop_.load() ? absl::CancelledError("test ended") : absl::OkStatus();
          });
      absl::MutexLock lock(&mu_);
      status_ = status;
      done_ = true;
    });
  }
  ~FollowThread() {
    stop_.store(true);
    thread_.join();
  }
  // Waits up to 30 s for `n` records (or the end of the stream); what it received.
  std::vector<v1::Record> WaitFor(size_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return received_.size() >= n || done_;
    };
    mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(30));
    EXPECT_FALSE(done_) << status_;
    return received_;
  }

 private:
  std::atomic<bool> stop_{false};
  absl::Mutex mu_;
  std::vector<v1::Record> received_ ABSL_GUARDED_BY(mu_);
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

// A replica that did not write them streams the records it applies: first those stored
// after the start id, then each applied message's, decoded from the writer's frames.
TEST_F(LogEngineClusterDictionaryTest, AppliedRecordsReachFollowersOnEveryReplica) {
  const std::vector<std::string> before = AppendAndApply(Lines(50, 1));
  ASSERT_NE(TrainInLog(/*activate=*/true), 0u);
  FollowSpec spec;
  spec.pool = "web";
  spec.after_id = before[24];
  FollowThread on_peer(peer_.engine.get(), spec);
  FollowThread on_writer(engine_.get(), spec);
  const std::vector<std::string> after = AppendAndApply(Lines(50, 2));
  ASSERT_GT(log_.Logged(log_.size() - 1).encoded.back().dictionary_id, 0u);  // Frames applied.
  std::vector<std::string> want(before.begin() + 25, before.end());
  want.insert(want.end(), after.begin(), after.end());
  for (FollowThread* stream : {&on_peer, &on_writer}) {
    const std::vector<v1::Record> got = stream->WaitFor(want.size());
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i].id(), want[i]);
      const std::string& line = i < 25 ? lines_[0][25 + i] : lines_.back()[i - 25];
      EXPECT_EQ(got[i].payload(), line) << want[i];
      EXPECT_GT(got[i].append_time_unix_ms(), 0) << want[i];
    }
  }
}

TEST_F(LogEngineClusterDictionaryTest, TrainDictionaryGoesThroughTheLog) {
  AppendAndApply(Lines(400, 3));
  v1::TrainDictionaryRequest request;
  request.set_pool("web");
  request.set_activate(true);
  request.set_dictionary_bytes(4096);
  absl::StatusOr<v1::TrainDictionaryResponse> trained = engine_->TrainDictionary(request);
  ASSERT_TRUE(trained.ok()) << trained.status();
  EXPECT_EQ(trained->dictionary().id(), 40000u);  // the id the log gave, not a local one
  EXPECT_EQ(trained->activated(), trained->dictionary().active());
  absl::StatusOr<v1::GetDictionaryResponse> peer = peer_.engine->GetDictionary([] {
    v1::GetDictionaryRequest r;
    r.set_id(40000);
    return r;
  }());
  ASSERT_TRUE(peer.ok()) << peer.status();
  EXPECT_EQ(peer->dictionary().source(), "train");
}

TEST_F(LogEngineClusterDictionaryTest, OfTwoActivationsFromOneBaseTheFirstInTheLogWins) {
  AppendAndApply(Lines(20, 4));
  const uint32_t first = TrainInLog(/*activate=*/false);
  const uint32_t second = TrainInLog(/*activate=*/false);
  LogDictionary a;
  a.pool = "web";
  a.id = first;
  a.activate = true;
  LogDictionary b = a;
  b.id = second;
  absl::StatusOr<AppliedDictionary> won = ApplyDictionary(a, 10);
  absl::StatusOr<AppliedDictionary> lost = ApplyDictionary(b, 11);
  ASSERT_TRUE(won.ok() && lost.ok());
  EXPECT_TRUE(won->activated);
  EXPECT_FALSE(lost->activated);
  EXPECT_EQ(engine_->GetPool("web")->active_dictionary_id(), first);
  EXPECT_EQ(peer_.engine->GetPool("web")->active_dictionary_id(), first);
  // A replay of the winner (a restart before its offset was stored) changes nothing.
  won = ApplyDictionary(a, 10);
  ASSERT_TRUE(won.ok());
  EXPECT_TRUE(won->activated);
  // ActivateDictionary from the node that lost the race is answered ABORTED... unless
  // its base is current: activating `second` now (base `first`) takes effect.
  v1::ActivateDictionaryRequest activate;
  activate.set_pool("web");
  activate.set_id(second);
  absl::StatusOr<v1::DictionaryInfo> info = engine_->ActivateDictionary(activate);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_TRUE(info->active());
  EXPECT_EQ(peer_.engine->GetPool("web")->active_dictionary_id(), second);
}

TEST_F(LogEngineClusterDictionaryTest, FrameNamingAnUnknownDictionaryIsRefusedBeforeAnythingIsWritten) {
  AppendAndApply(Lines(20, 5));
  ASSERT_NE(TrainInLog(/*activate=*/true), 0u);
  ASSERT_TRUE(engine_->Append(Lines(5, 6)).ok());
  LoggedBatch batch = log_.Logged(log_.size() - 1);
  bool renamed = false;
  for (EncodedRecord& e : batch.encoded) {
    if (!e.framed) continue;
    e.dictionary_id = 45678;  // never applied on the peer
    renamed = true;
  }
  ASSERT_TRUE(renamed);
  absl::Status status = peer_.engine->ApplyLogged(batch);
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition) << status;
  EXPECT_NE(status.message().find("unknown dictionary"), absl::string_view::npos);
  EXPECT_EQ(peer_.engine->GetPool("web")->stats().records(), 20u);
  // A frame whose header disagrees with the message: INVALID_ARGUMENT, also nothing.
  batch = log_.Logged(log_.size() - 1);
  for (EncodedRecord& e : batch.encoded) e.raw_size += e.framed ? 1 : 0;
  EXPECT_EQ(peer_.engine->ApplyLogged(batch).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(peer_.engine->GetPool("web")->stats().records(), 20u);
}

TEST_F(LogEngineClusterDictionaryTest, PayloadMessagesOfTheFirstSliceStillApply) {
  ASSERT_TRUE(engine_->Append({{"web", "an old message's payload"}}).ok());
  LoggedBatch old = log_.Logged(0);
  old.encoded.clear();  // ADR 0017's writers: payloads only
  old.records = {{"web", "an old message's payload"}};
  ASSERT_TRUE(peer_.engine->ApplyLogged(old).ok());
  peer_.log.MarkApplied(0);
  absl::StatusOr<v1::Record> record = peer_.engine->Get("web/1");
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->payload(), "an old message's payload");
}

TEST_F(LogEngineClusterDictionaryTest, AdminCallsThatWouldDivergeNodesAreRefused) {
  AppendAndApply(Lines(20, 8));
  EXPECT_EQ(engine_->GcDictionaries({}).status().code(), StatusCode::kFailedPrecondition);
  v1::RecompressRequest recompress;
  recompress.set_pool("web");
  EXPECT_EQ(engine_->Recompress(recompress).status().code(), StatusCode::kFailedPrecondition);
  v1::ImportDictionaryRequest import;
  import.set_pool("web");
  import.set_content(DictionaryWithId(33000));
  EXPECT_EQ(engine_->ImportDictionary(import).status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace dictlog::engine
