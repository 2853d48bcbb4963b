// LogEngine::DropPartition (partition_drop.cc) on a real store: a partition's pools
// lose their records, times, counts and the partition's applied offset; other pools,
// every pool and every dictionary stay; the log applied again rebuilds it exactly.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codec/test_dictionary.h"
#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "server/engine/log_engine.h"

namespace dictlog::engine {
namespace {

using ::absl::StatusCode;

// Everything is applied already: reads never wait; appends are not made here.
class AppliedLog : public ReplicatedLog {
 public:
  absl::StatusOr<std::vector<uint64_t>> Append(const LogAppend&) override {
    return absl::UnimplementedError("the test applies messages itself");
  }
  absl::Status AwaitApplied(absl::string_view, uint64_t) const override {
    return absl::OkStatus();
  }
  absl::Status CheckApplied(absl::string_view, uint64_t) const override {
    return absl::OkStatus();
  }
};

constexpr uint32_t kDictionaryId = 40001;

class PartitionDropTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.store.path = FreshTestDir();
    options_.auto_train = false;
    options_.replicated_log = &log_;
    Reopen();
    lines_ = codec::SyntheticLogLines(30, 5);
  }

  void Reopen() {
    engine_.reset();
    auto engine = LogEngine::Open(options_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
  }

  // Message `offset` of `partition`: 10 of lines_ into pool `pool` (category = pool).
  void Apply(const std::string& pool, uint32_t partition, int64_t offset) {
    LoggedBatch batch;
    for (size_t i = 0; i < 10; ++i) {
      batch.records.push_back({pool, lines_[(offset * 10 + i) % lines_.size()]});
      batch.pools.push_back(pool);
      batch.seqs.push_back((static_cast<uint64_t>(offset) << 16) + i + 1);
    }
    batch.append_unix_ms = 1'700'000'000'000 + offset;
    batch.position = {partition, offset};
    absl::Status status = engine_->ApplyLogged(batch);
    ASSERT_TRUE(status.ok()) << status;
  }

  // Pool "web" (partition 1) with a dictionary and 3 messages; "apps" (partition 0).
  void Fill() {
    FillWeb(/*dictionary_held=*/false);
    Apply("apps", 0, 0);
  }

  // Partition 1's log: a message, a dictionary (activated), two messages.
  void FillWeb(bool dictionary_held) {
    Apply("web", 1, 0);
    LogDictionary dictionary;
    dictionary.pool = "web";
    dictionary.id = kDictionaryId;
    dictionary.content = codec::TrainDictionaryForTest(codec::SyntheticLogLines(400, 7),
                                                       4096, kDictionaryId);
    dictionary.activate = true;
    ASSERT_TRUE(engine_->ApplyLoggedDictionary(dictionary, dictionary_held, {1, 1}).ok());
    Apply("web", 1, 2);
    Apply("web", 1, 3);
  }

  uint64_t Records(const std::string& pool) {
    absl::StatusOr<v1::PoolInfo> info = engine_->GetPool(pool);
    EXPECT_TRUE(info.ok()) << info.status();
    return info.ok() ? info->stats().records() : 0;
  }

  absl::StatusOr<LogEngine::PartitionDrop> DropWeb() {
    return engine_->DropPartition(1, [](absl::string_view pool) { return pool == "web"; });
  }

  AppliedLog log_;
  EngineOptions options_;
  std::unique_ptr<LogEngine> engine_;
  std::vector<std::string> lines_;
};

TEST_F(PartitionDropTest, DropsThePartitionsRecordsAndKeepsPoolsAndDictionaries) {
  Fill();
  const absl::StatusOr<v1::PoolInfo> before = engine_->GetPool("web");
  ASSERT_TRUE(before.ok());
  absl::StatusOr<LogEngine::PartitionDrop> drop = DropWeb();
  ASSERT_TRUE(drop.ok()) << drop.status();
  EXPECT_EQ(drop->records, 30u);
  EXPECT_EQ(drop->stored_bytes, before->stats().stored_bytes());
  ASSERT_EQ(drop->pool_ids.size(), 1u);
  engine_->CompactDroppedPartition(*drop);

  EXPECT_EQ(engine_->Get("web/1").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(engine_->Get(absl::StrCat("web/", (uint64_t{3} << 16) + 1)).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(Records("web"), 0u);
  EXPECT_TRUE(engine_->Get("apps/1").ok());
  EXPECT_EQ(Records("apps"), 10u);
  absl::StatusOr<LogEngine::HeldDictionary> held = engine_->DictionaryHeld(kDictionaryId);
  ASSERT_TRUE(held.ok());
  EXPECT_EQ(held->pool, "web");
  EXPECT_FALSE(held->content.empty());
  EXPECT_EQ(engine_->GetPool("web")->active_dictionary_id(), kDictionaryId);
  absl::StatusOr<std::vector<store::LogPosition>> positions = engine_->LogPositions();
  ASSERT_TRUE(positions.ok());
  ASSERT_EQ(positions->size(), 1u);  // Partition 1 builds from offset 0 again.
  EXPECT_EQ((*positions)[0].partition, 0u);

  Reopen();  // Nothing comes back, the counts agree.
  EXPECT_EQ(engine_->Get("web/1").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(Records("web"), 0u);
  EXPECT_EQ(Records("apps"), 10u);
}

TEST_F(PartitionDropTest, TheLogAppliedAgainRebuildsThePartitionExactly) {
  Fill();
  const std::string last = absl::StrCat("web/", (uint64_t{3} << 16) + 10);
  const absl::StatusOr<v1::Record> original = engine_->Get(last);
  ASSERT_TRUE(original.ok()) << original.status();
  ASSERT_TRUE(DropWeb().ok());
  FillWeb(/*dictionary_held=*/true);  // Assigned back: built from offset 0.
  EXPECT_EQ(Records("web"), 30u);
  EXPECT_EQ(Records("apps"), 10u);
  absl::StatusOr<v1::Record> rebuilt = engine_->Get(last);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status();
  EXPECT_EQ(rebuilt->payload(), original->payload());
  EXPECT_EQ(rebuilt->append_time_unix_ms(), original->append_time_unix_ms());
  Reopen();
  EXPECT_EQ(Records("web"), 30u);
}

TEST(PartitionDropSingleNodeTest, IsRefusedOutsideClusterMode) {
  EngineOptions options;
  options.store.path = FreshTestDir();
  absl::StatusOr<std::unique_ptr<LogEngine>> engine = LogEngine::Open(options);
  ASSERT_TRUE(engine.ok()) << engine.status();
  EXPECT_EQ((*engine)
                ->DropPartition(0, [](absl::string_view) { return true; })
                .status()
                .code(),
            StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace dictlog::engine
