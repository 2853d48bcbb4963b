// AutoTrainer's scheduling (issue 19): pools train concurrently, each on its own
// thread, and a pool that already holds full size gets a quick first dictionary
// followed by the full candidate search at its next doubling; the bulk-load policy
// (ADR 0029) ends growth after a training on a full sample and narrows the search of
// any training whose sample supports the configured size (ADR 0050). Driven through LogEngine
// (real RocksDB, real zstd training); waits on conditions, no sleeps.
#include "server/dictionary/auto_trainer.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "codec/test_dictionary.h"
#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "server/engine/log_engine.h"

namespace dictlog::dictionary {
namespace {

class AutoTrainerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.store.path = FreshTestDir();
    options_.auto_trainer.first_min_bytes = 16384;  // dictlogd's defaults.
    options_.auto_trainer.min_bytes_multiple = 8;   // Full size at 128 KiB.
    options_.default_pool_options.set_dictionary_bytes(16384);
  }

  void Open() {
    auto engine = engine::LogEngine::Open(options_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
  }

  // One append of `count` records (~240 KB for 2,000: past full size at once).
  void AppendBatch(const std::string& category, int count, uint32_t seed) {
    const std::vector<std::string> lines = codec::SyntheticLogLines(count, seed);
    std::vector<engine::AppendInput> records;
    for (const std::string& line : lines) records.push_back({category, line});
    auto ids = engine_->Append(records);
    ASSERT_TRUE(ids.ok()) << ids.status();
  }

  // One append of `count` lines of 150 formats, each with ~100 bytes of its own fixed
  // text: more than a 4 or 8 KiB dictionary holds, so the 16 KiB candidate wins.
  void AppendVaried(const std::string& category, int count, uint32_t seed) {
    std::mt19937 words(7);  // The formats are the same for every seed.
    std::vector<std::string> formats(150);
    for (std::string& format : formats) {
      while (format.size() < 100) absl::StrAppend(&format, "w", words() % 100000, " ");
    }
    std::mt19937 rng(seed);
    std::vector<engine::AppendInput> records;
    std::vector<std::string> lines;
    for (int i = 0; i < count; ++i) {
      lines.push_back(absl::StrCat(formats[rng() % formats.size()], "id=", rng() % 1000000));
    }
    for (const std::string& line : lines) records.push_back({category, line});
    auto ids = engine_->Append(records);
    ASSERT_TRUE(ids.ok()) << ids.status();
  }

  std::vector<v1::DictionaryInfo> Dictionaries(const std::string& pool) {
    v1::ListDictionariesRequest request;
    request.set_pool(pool);
    auto list = engine_->ListDictionaries(request);
    EXPECT_TRUE(list.ok()) << list.status();
    return {list->dictionaries().begin(), list->dictionaries().end()};
  }

  engine::EngineOptions options_;
  std::unique_ptr<engine::LogEngine> engine_;
};

// Two pools queued together train at the same time: each training, once its
// dictionary is stored, waits until the other one has stored its own too. With one
// training thread the first would wait for the second in vain.
TEST_F(AutoTrainerTest, TwoPoolsTrainConcurrently) {
  options_.auto_trainer.threads = 2;
  Open();
  absl::Mutex mu;
  int stored = 0;
  int met = 0;
  engine_->DictionaryManagerForTest().SetAfterStoreHookForTest([&](uint32_t) {
    absl::MutexLock lock(&mu);
    ++stored;
    auto both = [&]() { return stored >= 2; };
    if (mu.AwaitWithTimeout(absl::Condition(&both), absl::Seconds(60))) ++met;
  });
  AppendBatch("alpha", 2000, 1);
  AppendBatch("beta", 2000, 2);
  ASSERT_TRUE(engine_->WaitForAutoTrainingForTest(absl::Seconds(180)));
  absl::MutexLock lock(&mu);
  EXPECT_EQ(stored, 2);
  EXPECT_EQ(met, 2) << "a training waited for the other in vain: not concurrent";
  EXPECT_EQ(engine_->AutoTrainingStats().activated, 2u);
}

// A pool whose first append already holds full size: its first dictionary comes from
// one candidate; once its raw bytes have doubled it is trained again with every
// candidate (without quick_first, the full-size first training was the last).
TEST_F(AutoTrainerTest, QuickFirstDictionaryThenFullSearch) {
  options_.auto_trainer.quick_first = true;
  Open();
  AppendBatch("alpha", 2000, 3);
  ASSERT_TRUE(engine_->WaitForAutoTrainingForTest(absl::Seconds(120)));
  EXPECT_EQ(engine_->AutoTrainingStats().quick_first, 1u);
  ASSERT_EQ(Dictionaries("alpha").size(), 1u);

  AppendBatch("alpha", 2500, 4);  // Past twice the raw bytes of the first training.
  ASSERT_TRUE(engine_->WaitForAutoTrainingForTest(absl::Seconds(120)));
  const AutoTrainerStats stats = engine_->AutoTrainingStats();
  EXPECT_EQ(stats.quick_first, 1u);  // The second training searched every candidate.
  EXPECT_EQ(stats.activated + stats.not_activated, 2u);
  EXPECT_EQ(Dictionaries("alpha").size(), 2u);

  AppendBatch("alpha", 8000, 5);  // Full search done: no more growth.
  ASSERT_TRUE(engine_->WaitForAutoTrainingForTest(absl::Seconds(120)));
  EXPECT_EQ(Dictionaries("alpha").size(), 2u);
}

// Pools first queued below full size get the full search from the start.
TEST_F(AutoTrainerTest, QuickFirstOnlyAtFullSize) {
  options_.auto_trainer.quick_first = true;
  Open();
  AppendBatch("alpha", 200, 6);  // ~24 KB: the early first training.
  ASSERT_TRUE(engine_->WaitForAutoTrainingForTest(absl::Seconds(120)));
  EXPECT_EQ(engine_->AutoTrainingStats().quick_first, 0u);
  EXPECT_GE(engine_->AutoTrainingStats().activated + engine_->AutoTrainingStats().not_activated,
            1u);
}

// The manager's kQuick training tries exactly one candidate (its note lists them).
TEST_F(AutoTrainerTest, QuickSearchTriesOneCandidate) {
  options_.auto_train = false;
  Open();
  AppendBatch("alpha", 2000, 7);
  auto quick = engine_->DictionaryManagerForTest().Train("alpha", 0, false, "train", 0,
                                                         CandidateSearch::kQuick);
  ASSERT_TRUE(quick.ok()) << quick.status();
  EXPECT_TRUE(absl::StrContains(quick->activation_note(), "tried: 16384/fastcover-d8"))
      << quick->activation_note();
  EXPECT_FALSE(absl::StrContains(quick->activation_note(), ","))
      << quick->activation_note();
  auto full = engine_->DictionaryManagerForTest().Train("alpha", 0, false, "train");
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_TRUE(absl::StrContains(full->activation_note(), "16384/fastcover-d6"))
      << full->activation_note();
}

class BulkPolicyTest : public AutoTrainerTest {
 protected:
  void SetUp() override {
    AutoTrainerTest::SetUp();
    options_.auto_trainer.threads = 1;
    options_.dictionaries.sample_budget_multiple = 10;  // 160 KiB.
  }

  // Queues pool "beta" early (~24 KB) while the only training thread is held in
  // alpha's training, lets beta grow to ~264 KB (past the sample budget) before its
  // training starts, then appends ~240 KB more to beta. Beta is notified again when
  // its first training ends (appends came while it was queued): without the policy
  // its growth is due then already.
  void TrainOnAFullSampleThenGrow() {
    absl::Notification release;
    bool first = true;  // Only the training thread calls the hook.
    engine_->DictionaryManagerForTest().SetAfterStoreHookForTest([&](uint32_t) {
      if (std::exchange(first, false)) release.WaitForNotification();  // alpha's.
    });
    AppendBatch("alpha", 200, 11);
    AppendBatch("beta", 200, 12);   // Queued behind alpha at ~24 KB: not full size.
    AppendBatch("beta", 2000, 13);  // Still queued: its sample will be the budget.
    release.Notify();
    ASSERT_TRUE(engine_->WaitForAutoTrainingForTest(absl::Seconds(180)));
    ASSERT_FALSE(Dictionaries("beta").empty());
    AppendBatch("beta", 2000, 14);  // Past twice the ~24 KB beta was queued at.
    ASSERT_TRUE(engine_->WaitForAutoTrainingForTest(absl::Seconds(180)));
    engine_->DictionaryManagerForTest().SetAfterStoreHookForTest(nullptr);
  }
};

// A training whose sample was the whole budget is the pool's last growth training,
// though the pool was queued far below full size, and it tried the configured size
// only (ADR 0035; alpha's first training, on ~24 KB, searched every size).
TEST_F(BulkPolicyTest, FullSampleEndsGrowth) {
  options_.auto_trainer.bulk_policy = true;
  Open();
  TrainOnAFullSampleThenGrow();
  EXPECT_EQ(Dictionaries("beta").size(), 1u);
  EXPECT_EQ(Dictionaries("beta")[0].size_bytes(), 16384u);
  EXPECT_EQ(engine_->AutoTrainingStats().full_sample, 1u);
  EXPECT_EQ(engine_->AutoTrainingStats().narrowed, 1u);
}

// Without the policy the same pool is trained again at its next doubling, and every
// training searches every size.
TEST_F(BulkPolicyTest, WithoutThePolicyAFullSampleIsGrownAgain) {
  Open();
  TrainOnAFullSampleThenGrow();
  EXPECT_EQ(Dictionaries("beta").size(), 2u);
  EXPECT_EQ(engine_->AutoTrainingStats().full_sample, 0u);
  EXPECT_EQ(engine_->AutoTrainingStats().narrowed, 0u);
}

// A first training on ~22 KB (supports 4 KiB at most) searches every size; one on
// ~110 KB (supports the configured 16 KiB: below full size and below the sample
// budget) tries 16 KiB only, and so does the growth after it (ADR 0050).
TEST_F(AutoTrainerTest, ATrainingWhoseSampleSupportsTheConfiguredSizeTriesThatSizeOnly) {
  options_.auto_trainer.bulk_policy = true;
  Open();
  AppendVaried("small", 200, 14);
  ASSERT_TRUE(engine_->WaitForAutoTrainingForTest(absl::Seconds(120)));
  ASSERT_EQ(Dictionaries("small").size(), 1u);
  EXPECT_LT(Dictionaries("small")[0].size_bytes(), 16384u);
  EXPECT_EQ(engine_->AutoTrainingStats().narrowed, 0u);

  AppendVaried("alpha", 1000, 15);
  ASSERT_TRUE(engine_->WaitForAutoTrainingForTest(absl::Seconds(120)));
  ASSERT_EQ(Dictionaries("alpha").size(), 1u);
  ASSERT_EQ(Dictionaries("alpha")[0].size_bytes(), 16384u);
  EXPECT_EQ(engine_->AutoTrainingStats().narrowed, 1u);
  AppendVaried("alpha", 2000, 16);  // Past twice: the growth at full size.
  ASSERT_TRUE(engine_->WaitForAutoTrainingForTest(absl::Seconds(120)));
  ASSERT_EQ(Dictionaries("alpha").size(), 2u);
  EXPECT_EQ(engine_->AutoTrainingStats().narrowed, 2u);
  EXPECT_EQ(Dictionaries("alpha")[1].size_bytes(), 16384u);
}

// Without the policy the same trainings search every size.
TEST_F(AutoTrainerTest, WithoutThePolicyEveryTrainingSearchesEverySize) {
  Open();
  AppendVaried("alpha", 1000, 15);
  ASSERT_TRUE(engine_->WaitForAutoTrainingForTest(absl::Seconds(120)));
  ASSERT_EQ(Dictionaries("alpha").size(), 1u);
  EXPECT_EQ(engine_->AutoTrainingStats().narrowed, 0u);
}

// Drift trainings too: a pool grown on synthetic lines, then fed lines of other
// formats, is retrained on them (its first drift training, on ~16 KB, searches every
// size) and grown on them; the growth whose sample (the data since the drift) reaches
// 80 KiB tries 16 KiB only, and the pool ends on a 16 KiB drift dictionary.
TEST_F(AutoTrainerTest, DriftTrainingsOnASampleOfTheConfiguredSizeTryThatSizeOnly) {
  options_.auto_trainer.bulk_policy = true;
  Open();
  AppendBatch("alpha", 2000, 17);  // ~240 KB: one training at full size.
  ASSERT_TRUE(engine_->WaitForAutoTrainingForTest(absl::Seconds(120)));
  const uint64_t narrowed_before = engine_->AutoTrainingStats().narrowed;
  for (uint32_t batch = 0; batch < 80; ++batch) {  // ~176 KB, 20 lines at a time.
    AppendVaried("alpha", 20, 100 + batch);
    ASSERT_TRUE(engine_->WaitForAutoTrainingForTest(absl::Seconds(120)));
  }
  const AutoTrainerStats stats = engine_->AutoTrainingStats();
  EXPECT_GE(stats.drift_retrains, 1u);
  EXPECT_GT(stats.narrowed, narrowed_before);
  v1::DictionaryInfo active;
  for (const v1::DictionaryInfo& d : Dictionaries("alpha")) {
    if (d.active()) active = d;
  }
  EXPECT_EQ(active.source(), "drift");
  EXPECT_EQ(active.size_bytes(), 16384u);
}

// Appends that take a pool past its next training point while its training runs
// queue nothing then (one training per pool at a time); the pool is notified again
// when that training ends, so it is grown though no append follows (the end of a bulk
// load). The hook holds the first training until the second append is done.
TEST_F(AutoTrainerTest, AppendsDuringATrainingAreNotifiedAgain) {
  Open();
  absl::Notification appended;
  bool first = true;  // Only the training thread calls the hook.
  engine_->DictionaryManagerForTest().SetAfterStoreHookForTest([&](uint32_t) {
    if (std::exchange(first, false)) appended.WaitForNotification();
  });
  AppendBatch("alpha", 200, 41);  // ~24 KB: queued for its first training.
  AppendBatch("alpha", 400, 42);  // ~72 KB, past twice that, while it trains.
  appended.Notify();
  ASSERT_TRUE(engine_->WaitForAutoTrainingForTest(absl::Seconds(180)));
  engine_->DictionaryManagerForTest().SetAfterStoreHookForTest(nullptr);
  const AutoTrainerStats stats = engine_->AutoTrainingStats();
  EXPECT_EQ(stats.activated + stats.not_activated, 2u);
  EXPECT_EQ(stats.failed, 0u);
}

// A pool degraded past its drift threshold with no earlier dictionary gets no
// reactivation attempt (it could activate nothing): the growth due at the same append
// is queued at once, not left for a later append.
TEST_F(AutoTrainerTest, NoReactivationAttemptWithoutAnEarlierDictionary) {
  Open();
  AppendBatch("alpha", 200, 51);  // ~24 KB: the first training.
  ASSERT_TRUE(engine_->WaitForAutoTrainingForTest(absl::Seconds(180)));
  ASSERT_EQ(Dictionaries("alpha").size(), 1u);
  AppendVaried("alpha", 600, 52);  // ~66 KB of other lines in one append: degraded.
  ASSERT_TRUE(engine_->WaitForAutoTrainingForTest(absl::Seconds(180)));
  const AutoTrainerStats stats = engine_->AutoTrainingStats();
  EXPECT_EQ(stats.activated + stats.not_activated, 2u);
  EXPECT_EQ(stats.drift_reactivations, 0u);
}

// The training threads run at the configured nice value (dictlogd's --auto_train_nice),
// the thread that appends keeps its own. The hook runs on the training thread, once the
// dictionary is stored.
TEST_F(AutoTrainerTest, TrainingsRunAtTheConfiguredNiceValue) {
  const int own = getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)));
  options_.auto_trainer.nice = own + 7;
  Open();
  std::atomic<int> seen{-100};
  engine_->DictionaryManagerForTest().SetAfterStoreHookForTest([&](uint32_t) {
    seen = getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)));
  });
  AppendBatch("niced", 2000, 7);
  ASSERT_TRUE(engine_->WaitForAutoTrainingForTest(absl::Seconds(180)));
  EXPECT_EQ(seen.load(), own + 7);
  EXPECT_EQ(getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid))), own);
}

}  // namespace
}  // namespace dictlog::dictionary
