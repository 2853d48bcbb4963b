// Records appended before their pool's first dictionary (EngineOptions::
// raw_before_dictionary_bytes): stored uncompressed, read back byte-identical, and
// compressed once by the first dictionary's re-encode; a first training that
// activates nothing compresses them without one. Real RocksDB and zstd training;
// waits on conditions, no sleeps.
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "codec/test_dictionary.h"
#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "server/engine/log_engine.h"

namespace dictlog::engine {
namespace {

class RawBeforeDictionaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.store.path = FreshTestDir();
    options_.auto_trainer.first_min_bytes = 16384;  // dictlogd's defaults.
    options_.default_pool_options.set_dictionary_bytes(16384);
  }

  void Open() {
    auto engine = LogEngine::Open(options_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
  }

  // Appends `count` synthetic log lines to `category`; returns their ids.
  std::vector<std::string> Append(const std::string& category, int count, uint32_t seed) {
    const std::vector<std::string> lines = codec::SyntheticLogLines(count, seed);
    std::vector<AppendInput> records;
    for (const std::string& line : lines) {
      records.push_back({category, line});
      payloads_.push_back(line);
    }
    auto ids = engine_->Append(records);
    EXPECT_TRUE(ids.ok()) << ids.status();
    if (ids.ok()) ids_.insert(ids_.end(), ids->begin(), ids->end());
    return ids.ok() ? *ids : std::vector<std::string>();
  }

  v1::PoolInfo Pool(const std::string& name) {
    auto info = engine_->GetPool(name);
    EXPECT_TRUE(info.ok()) << info.status();
    return info.ok() ? *info : v1::PoolInfo();
  }

  // Every record appended so far reads back as it was appended.
  void ExpectAllReadBack() {
    for (size_t i = 0; i < ids_.size(); ++i) {
      auto record = engine_->Get(ids_[i]);
      ASSERT_TRUE(record.ok()) << ids_[i] << ": " << record.status();
      ASSERT_EQ(record->payload(), payloads_[i]) << ids_[i];
    }
  }

  // Holds the trainer after it stores a dictionary, before it is activated.
  void HoldTraining() {
    engine_->DictionaryManagerForTest().SetAfterStoreHookForTest([this](uint32_t) {
      absl::MutexLock lock(&mu_);
      stored_ = true;
      mu_.Await(absl::Condition(&released_));
    });
  }
  void AwaitStored() {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(&stored_));
  }
  void Release() {
    absl::MutexLock lock(&mu_);
    released_ = true;
  }

  EngineOptions options_;
  std::unique_ptr<LogEngine> engine_;
  std::vector<std::string> ids_;
  std::vector<std::string> payloads_;
  absl::Mutex mu_;
  bool stored_ ABSL_GUARDED_BY(mu_) = false;
  bool released_ ABSL_GUARDED_BY(mu_) = false;
};

// Before the first dictionary: raw, readable; after it: re-encoded, fewer bytes, still
// readable; later appends use the dictionary.
TEST_F(RawBeforeDictionaryTest, StoredRawThenReencodedByFirstDictionary) {
  Open();
  HoldTraining();
  Append("alpha", 400, 1);  // ~48 KB: queued for its first training.
  AwaitStored();            // Training done, not activated yet.
  Append("alpha", 600, 2);  // Still before the dictionary.
  v1::PoolInfo before = Pool("alpha");
  EXPECT_EQ(before.stats().records(), 1000u);
  EXPECT_GE(before.stats().stored_bytes(), before.stats().raw_bytes()) << "not stored raw";
  EXPECT_EQ(engine_->RawBeforeDictionaryRecords(), 1000u);
  ExpectAllReadBack();

  Release();
  ASSERT_TRUE(engine_->WaitForAutoTrainingForTest(absl::Seconds(120)));
  ASSERT_TRUE(engine_->WaitForRecompressForTest("alpha", absl::Seconds(120)));
  v1::RecompressRequest request;
  request.set_pool("alpha");
  auto job = engine_->GetRecompressStatus(request);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->state(), v1::RecompressStatus::DONE);
  EXPECT_EQ(job->records_rewritten(), 1000u);
  v1::PoolInfo after = Pool("alpha");
  ASSERT_NE(after.active_dictionary_id(), 0u);
  EXPECT_LT(2 * after.stats().stored_bytes(), after.stats().raw_bytes()) << "not compressed";
  ExpectAllReadBack();

  Append("alpha", 100, 3);  // With the dictionary at append.
  EXPECT_EQ(engine_->RawBeforeDictionaryRecords(), 1000u);
  ExpectAllReadBack();
}

// The cap: a pool already holding raw_before_dictionary_bytes compresses at once.
TEST_F(RawBeforeDictionaryTest, PoolAtTheCapCompressesAtOnce) {
  options_.raw_before_dictionary_bytes = 8 << 10;
  options_.auto_trainer.first_min_bytes = 1 << 30;  // No training in this test.
  Open();
  Append("alpha", 100, 4);  // Below the cap before the call: raw.
  EXPECT_EQ(engine_->RawBeforeDictionaryRecords(), 100u);
  const v1::PoolInfo first = Pool("alpha");
  EXPECT_GE(first.stats().stored_bytes(), first.stats().raw_bytes());
  Append("alpha", 100, 5);  // Past it: compressed without a dictionary.
  EXPECT_EQ(engine_->RawBeforeDictionaryRecords(), 100u);
  const v1::PoolInfo second = Pool("alpha");
  EXPECT_LT(second.stats().stored_bytes() - first.stats().stored_bytes(),
            second.stats().raw_bytes() - first.stats().raw_bytes());
  ExpectAllReadBack();
}

// Without automatic training (or with the option 0) nothing is stored raw.
TEST_F(RawBeforeDictionaryTest, OnlyWhenADictionaryIsComing) {
  options_.auto_train = false;
  Open();
  Append("alpha", 200, 6);
  EXPECT_EQ(engine_->RawBeforeDictionaryRecords(), 0u);
  const v1::PoolInfo info = Pool("alpha");
  EXPECT_LT(info.stats().stored_bytes(), info.stats().raw_bytes());
  engine_.reset();

  options_.auto_train = true;
  options_.raw_before_dictionary_bytes = 0;
  options_.store.path = FreshTestDir();
  Open();
  Append("beta", 200, 7);
  EXPECT_EQ(engine_->RawBeforeDictionaryRecords(), 0u);
  ASSERT_TRUE(engine_->WaitForAutoTrainingForTest(absl::Seconds(120)));
}

// A first training that activates nothing: what was stored raw is compressed without
// a dictionary, and the pool's next appends are compressed at once.
TEST_F(RawBeforeDictionaryTest, FirstTrainingWithoutDictionaryCompressesThem) {
  options_.dictionaries.activation_min_gain = 1000;  // No candidate is good enough.
  Open();
  Append("alpha", 400, 8);
  ASSERT_TRUE(engine_->WaitForAutoTrainingForTest(absl::Seconds(120)));
  ASSERT_EQ(engine_->AutoTrainingStats().not_activated, 1u);
  ASSERT_TRUE(engine_->WaitForRecompressForTest("alpha", absl::Seconds(120)));
  const v1::PoolInfo info = Pool("alpha");
  EXPECT_EQ(info.active_dictionary_id(), 0u);
  EXPECT_LT(info.stats().stored_bytes(), info.stats().raw_bytes()) << "left raw";
  Append("alpha", 100, 9);
  EXPECT_EQ(engine_->RawBeforeDictionaryRecords(), 400u);
  ExpectAllReadBack();
}

}  // namespace
}  // namespace dictlog::engine
