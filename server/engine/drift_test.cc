// Issue 20, drift through LogEngine (real RocksDB, real zstd training): a pool whose
// growth is done and whose data changes format is retrained on its new records and
// recovers; without drift (or with drift_threshold_percent 0) nothing is retrained; a
// retraining without gain backs off (each next one waits for twice the data); block
// mode pools share the path. Every append waits for automatic training to go idle, so
// the trainer runs as if synchronously.
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "codec/test_dictionary.h"
#include "server/engine/log_engine.h"

namespace dictlog::engine {
namespace {

// Category B: JSON access logs, nothing like SyntheticLogLines' (category A) format.
std::vector<std::string> JsonAccessLines(int count, uint32_t seed) {
  static const char* const kMethods[] = {"GET", "POST", "PUT", "DELETE"};
  static const char* const kPaths[] = {"/api/v2/users", "/api/v2/orders", "/static/app.js",
                                       "/healthz", "/api/v2/carts"};
  std::mt19937 rng(seed);
  std::vector<std::string> lines;
  for (int i = 0; i < count; ++i) {
    const uint32_t r = rng();
    lines.push_back(absl::StrFormat(
        "{\"ts\":%u,\"method\":\"%s\",\"path\":\"%s/%u\",\"status\":%d,\"latency_us\":%u,"
        "\"client\":\"192.168.%u.%u\",\"agent\":\"Mozilla/5.0 (X11; Linux x86_64)\"}",
        1790000000 + i, kMethods[r % 4], kPaths[(r >> 3) % 5], rng() % 100000,
        (r >> 7) % 7 == 0 ? 404 : 200, rng() % 90000, (r >> 9) % 256, (r >> 17) % 256));
  }
  return lines;
}

// Category C: messages of 200 fixed templates (as a service's log statements), each
// a dozen made-up words: a dictionary that learned many templates stores C far better
// than one trained on a little of it, unlike SyntheticLogLines (a few templates that
// any dictionary with some of them stores about as well).
std::vector<std::string> TemplateLines(int count, uint32_t seed) {
  static const std::vector<std::string>* const kTemplates = [] {
    std::mt19937 rng(7);
    std::vector<std::string> words(400);
    for (std::string& w : words) {
      for (int n = 4 + rng() % 7; n > 0; --n) w += static_cast<char>('a' + rng() % 26);
    }
    auto* templates = new std::vector<std::string>(200);
    for (std::string& t : *templates) {
      for (int n = 10 + rng() % 5; n > 0; --n) t += words[rng() % words.size()] + " ";
    }
    return templates;
  }();
  std::mt19937 rng(seed);
  std::vector<std::string> lines;
  for (int i = 0; i < count; ++i) {
    const uint32_t r = rng();
    lines.push_back(absl::StrFormat("2026-11-%02d %02d:%02d:%02d,%03d INFO %s/10.10.%u.%u:%u",
                                    1 + r % 28, r % 24, (r >> 5) % 60, (r >> 11) % 60,
                                    (r >> 3) % 1000, (*kTemplates)[rng() % 200],
                                    (r >> 9) % 256, (r >> 21) % 256, rng() % 65536));
  }
  return lines;
}

// Incompressible payloads: no dictionary can do better on them.
std::vector<std::string> RandomLines(int count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::string> lines;
  for (int i = 0; i < count; ++i) {
    std::string line(120, '\0');
    for (char& c : line) c = static_cast<char>(rng());
    lines.push_back(std::move(line));
  }
  return lines;
}

class DriftTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.store.path = FreshTestDir();
    options_.auto_trainer.first_min_bytes = 16384;  // dictlogd's defaults.
    options_.auto_trainer.min_bytes_multiple = 8;   // Full size at 128 KiB.
    options_.default_pool_options.set_dictionary_bytes(16384);
    auto engine = LogEngine::Open(options_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
  }

  // Appends `lines` to `pool` in batches of `batch_lines`, waiting for automatic
  // training (and re-encoding) after each; keeps the largest degraded percent seen.
  void Feed(const std::string& pool, const std::vector<std::string>& lines,
            size_t batch_lines = 20) {
    for (size_t i = 0; i < lines.size(); i += batch_lines) {
      std::vector<AppendInput> batch;
      for (size_t j = i; j < i + batch_lines && j < lines.size(); ++j) {
        batch.push_back({pool, lines[j]});
      }
      ASSERT_TRUE(engine_->Append(batch).ok());
      ASSERT_TRUE(engine_->WaitForAutoTrainingForTest(absl::Seconds(60)));
      ASSERT_TRUE(engine_->WaitForRecompressForTest(pool, absl::Seconds(60)));
      max_degraded_ = std::max(max_degraded_, Info(pool).drift_degraded_percent());
    }
  }

  // Feeds `lines` and returns the ratio (payload / stored bytes) they were stored at.
  double StoredRatioOf(const std::string& pool, const std::vector<std::string>& lines) {
    const v1::PoolStats before = Info(pool).stats();
    Feed(pool, lines);
    const v1::PoolStats after = Info(pool).stats();
    const uint64_t stored = after.stored_bytes() - before.stored_bytes();
    return stored == 0 ? 0 : static_cast<double>(after.raw_bytes() - before.raw_bytes()) /
                                 static_cast<double>(stored);
  }

  v1::PoolInfo Info(const std::string& pool) {
    auto info = engine_->GetPool(pool);
    EXPECT_TRUE(info.ok()) << info.status();
    return info.ok() ? *info : v1::PoolInfo();
  }

  std::vector<v1::DictionaryInfo> Dictionaries(const std::string& pool) {
    v1::ListDictionariesRequest request;
    request.set_pool(pool);
    auto list = engine_->ListDictionaries(request);
    EXPECT_TRUE(list.ok()) << list.status();
    return {list->dictionaries().begin(), list->dictionaries().end()};
  }

  // The pool's active dictionary (an empty one if none is).
  v1::DictionaryInfo Active(const std::string& pool) {
    for (const v1::DictionaryInfo& d : Dictionaries(pool)) {
      if (d.active()) return d;
    }
    return v1::DictionaryInfo();
  }

  void CreatePool(const std::string& name, const v1::PoolOptions& options) {
    ASSERT_TRUE(engine_->CreatePool(name, options).ok());
  }

  EngineOptions options_;
  std::unique_ptr<LogEngine> engine_;
  double max_degraded_ = -1000;
};

// Grown on A (16, 32, 64, 128 KiB), then fed more A: the signal stays near the
// evaluation and nothing is retrained. Then B: the signal degrades past 10%, the pool
// is retrained on B (source "drift") and grown on it, and its recent ratio is back
// within the threshold of the new dictionary's evaluation.
TEST_F(DriftTest, DriftRetrainsOnNewDataAndRecovers) {
  Feed("d", codec::SyntheticLogLines(4000, 30));
  const size_t grown = Dictionaries("d").size();
  ASSERT_EQ(grown, 4u);
  v1::PoolInfo info = Info("d");
  EXPECT_EQ(info.drift_retrains(), 0u);
  EXPECT_GT(info.drift_recent_ratio(), 1.5);
  EXPECT_GT(info.drift_activation_ratio(), 1.5);
  EXPECT_LT(info.drift_degraded_percent(), 10);
  v1::DictionaryInfo active = Active("d");
  ASSERT_NE(active.id(), 0u);
  EXPECT_GT(active.recent_raw_bytes(), 8u << 10);
  EXPECT_DOUBLE_EQ(active.recent_ratio(), info.drift_recent_ratio());
  EXPECT_DOUBLE_EQ(active.degraded_percent(), info.drift_degraded_percent());

  max_degraded_ = -1000;
  Feed("d", JsonAccessLines(3000, 31));  // ~400 KB of B.
  info = Info("d");
  EXPECT_GE(max_degraded_, 10);
  EXPECT_EQ(info.drift_retrains(), 1u);
  active = Active("d");
  EXPECT_EQ(active.source(), "drift");
  EXPECT_GT(Dictionaries("d").size(), grown);
  EXPECT_LT(info.drift_degraded_percent(), 10);
  EXPECT_GT(info.drift_recent_ratio(), 1.5);
  EXPECT_EQ(engine_->AutoTrainingStats().drift_retrains, 1u);
}

// A pool filled in one large batch (its dictionary trained after it, so no appends
// with it yet) that then gets B: the window's first half of B is already degraded, so
// the drift counts from the switch and the retraining comes after a first training's
// worth (16 KiB) of B, not after a window and a first training's worth (one append
// later: the append that finds the drift queues a reactivation attempt first, and the
// next one the training).
TEST_F(DriftTest, DriftCountsFromTheSwitchAfterALargeBatch) {
  const std::vector<std::string> lines = codec::SyntheticLogLines(1500, 42);
  std::vector<AppendInput> batch;  // Views into `lines`, which outlives the call.
  for (const std::string& line : lines) batch.push_back({"lb", line});
  ASSERT_TRUE(engine_->Append(batch).ok());
  ASSERT_TRUE(engine_->WaitForAutoTrainingForTest(absl::Seconds(60)));
  ASSERT_TRUE(engine_->WaitForRecompressForTest("lb", absl::Seconds(60)));
  ASSERT_NE(Info("lb").active_dictionary_id(), 0u);
  uint64_t b_bytes = 0;
  for (const std::string& line : JsonAccessLines(600, 43)) {
    ASSERT_TRUE(engine_->Append({{"lb", line}}).ok());
    ASSERT_TRUE(engine_->WaitForAutoTrainingForTest(absl::Seconds(60)));
    b_bytes += line.size();
    if (Info("lb").drift_retrains() > 0) break;
  }
  EXPECT_EQ(Info("lb").drift_retrains(), 1u);
  EXPECT_LE(b_bytes, 16384u + 2 * 200);  // Two records past the first training point.
  EXPECT_EQ(Active("lb").source(), "drift");
}

// The same switch with drift_threshold_percent 0: the signal shows the degradation,
// nothing is retrained.
TEST_F(DriftTest, ThresholdZeroTurnsDriftOff) {
  v1::PoolOptions options;
  options.set_drift_threshold_percent(0);
  CreatePool("off", options);
  Feed("off", codec::SyntheticLogLines(2500, 32));
  const size_t grown = Dictionaries("off").size();
  max_degraded_ = -1000;
  Feed("off", JsonAccessLines(1500, 33));
  EXPECT_GE(max_degraded_, 10);
  EXPECT_EQ(Info("off").drift_retrains(), 0u);
  EXPECT_EQ(Dictionaries("off").size(), grown);
}

// Incompressible data after the switch: every retraining is without gain. The first
// starts 16 KiB after the drift, the next may not before 128 KiB of appends, the one
// after 256 KiB, then 512 KiB: in ~700 KiB three retrainings (without the doubling:
// four or more).
TEST_F(DriftTest, RetrainingWithoutGainBacksOff) {
  Feed("r", codec::SyntheticLogLines(2500, 34));
  const dictionary::AutoTrainerStats before = engine_->AutoTrainingStats();
  Feed("r", RandomLines(6000, 35));  // 720,000 bytes.
  const v1::PoolInfo info = Info("r");
  EXPECT_EQ(info.drift_retrains(), 3u);
  const dictionary::AutoTrainerStats after = engine_->AutoTrainingStats();
  EXPECT_EQ(after.activated, before.activated);  // None gained.
  EXPECT_EQ(after.not_activated + after.failed,
            before.not_activated + before.failed + 3);
  // The first searched in full and found nothing better; the next two tried one
  // candidate each.
  EXPECT_EQ(after.quick_drift - before.quick_drift, 2u);
  EXPECT_NE(Active("r").source(), "drift");
}

// After a drift retraining without gain (random payloads) the next ones try one
// candidate, yet a change to data a new dictionary fits (B) is still caught by such a
// retraining, and the growth on B that follows searches in full: B is then stored
// within 10% of what a pool fed B alone stores it at.
TEST_F(DriftTest, AfterARetrainingWithoutGainOneCandidateStillCatchesANewFormat) {
  Feed("q", codec::SyntheticLogLines(2500, 34));
  Feed("q", RandomLines(3000, 35));  // 360,000 bytes: two retrainings, no gain.
  ASSERT_EQ(Info("q").drift_retrains(), 2u);
  const dictionary::AutoTrainerStats futile = engine_->AutoTrainingStats();
  EXPECT_EQ(futile.quick_drift, 1u);
  EXPECT_NE(Active("q").source(), "drift");
  Feed("q", JsonAccessLines(2500, 36));
  EXPECT_EQ(Info("q").drift_retrains(), 3u);
  EXPECT_EQ(engine_->AutoTrainingStats().quick_drift, 2u);
  EXPECT_EQ(Active("q").source(), "drift");
  const double drifted = StoredRatioOf("q", JsonAccessLines(500, 37));
  Feed("fresh", JsonAccessLines(2500, 36));
  const double fresh = StoredRatioOf("fresh", JsonAccessLines(500, 37));
  EXPECT_GT(drifted, 0.9 * fresh) << drifted << " vs " << fresh;
}

// A dictionary activated on request after a drift retraining without gain ends the
// one-candidate rule, as an automatic activation does: the next drift retraining is
// judged against another dictionary and searches in full.
TEST_F(DriftTest, ADictionaryActivatedOnRequestEndsTheOneCandidateRule) {
  Feed("m", codec::SyntheticLogLines(2500, 34));
  Feed("m", RandomLines(3000, 35));  // Two retrainings, no gain: the second was quick.
  ASSERT_EQ(Info("m").drift_retrains(), 2u);
  const dictionary::AutoTrainerStats futile = engine_->AutoTrainingStats();
  ASSERT_EQ(futile.quick_drift, 1u);
  const uint32_t active = Active("m").id();
  uint32_t other = 0;
  for (const v1::DictionaryInfo& d : Dictionaries("m")) {
    if (d.id() != active) other = d.id();
  }
  ASSERT_NE(other, 0u);
  v1::ActivateDictionaryRequest activate;
  activate.set_pool("m");
  activate.set_id(other);
  ASSERT_TRUE(engine_->ActivateDictionary(activate).ok());
  Feed("m", RandomLines(3000, 38));  // The third retraining: still no gain.
  ASSERT_EQ(Info("m").drift_retrains(), 3u);
  const dictionary::AutoTrainerStats after = engine_->AutoTrainingStats();
  EXPECT_EQ(after.quick_drift, 1u);  // Searched in full.
  EXPECT_EQ(after.activated, futile.activated);
}

// Data that keeps alternating between two formats (as a bulk load of a file whose
// sections differ, copied over and over: loghub's Hadoop in the scale comparison): A,
// then bursts of B and A in turn. Each burst of B drifts, and a retraining on it
// gains on that burst, so each activation used to reset the back-off and every burst
// was trained again (a full candidate search each time): 6 retrainings in these 24
// alternations (~1.9 MB). Retrainings are spaced at doubling intervals whether
// activated or not: at most 4.
TEST_F(DriftTest, AlternatingFormatsRetrainAtDoublingIntervals) {
  Feed("alt", TemplateLines(2000, 60));
  for (int burst = 0; burst < 24; ++burst) {
    Feed("alt", JsonAccessLines(200, 61 + burst));   // ~40 KB of B.
    Feed("alt", TemplateLines(250, 90 + burst));     // ~40 KB of A.
  }
  const v1::PoolInfo info = Info("alt");
  EXPECT_GE(info.drift_retrains(), 1u);
  EXPECT_LE(info.drift_retrains(), 4u);
}

// Data no dictionary does better on (ADR 0052): a pool grown on C, then C with a
// random request id on every line, which its dictionary stores worse: drift, and a
// retraining on a slice of it finds nothing better (the grown dictionary learned more
// of C's templates than a slice holds; no dictionary learns the ids). More of it is
// the same data: it starts no further retraining and no reactivation check (before,
// each doubling of the back-off retrained it again, without gain each time). Then B,
// a change of format, is still caught: retrained again, and a dictionary trained on
// the drifted data ends up active.
TEST_F(DriftTest, DataNoDictionaryDoesBetterOnStartsNothingMoreUntilItChanges) {
  Feed("f", TemplateLines(2000, 80));
  ASSERT_EQ(Active("f").source(), "auto");
  std::vector<std::string> noisy = TemplateLines(6000, 81);  // ~1 MB.
  std::mt19937 rng(82);
  for (std::string& line : noisy) {
    absl::StrAppendFormat(&line, " request=%08x%08x", rng(), rng());
  }
  const dictionary::AutoTrainerStats grown = engine_->AutoTrainingStats();
  Feed("f", noisy);
  const v1::PoolInfo info = Info("f");
  const dictionary::AutoTrainerStats after = engine_->AutoTrainingStats();
  // Before ADR 0052: 4 retrainings, none activated, and 6 reactivation checks.
  EXPECT_EQ(info.drift_retrains(), 1u);
  EXPECT_EQ(after.not_activated - grown.not_activated, 1u);
  EXPECT_EQ(after.activated, grown.activated);
  EXPECT_EQ(info.drift_reactivations(), 0u);
  EXPECT_GE(info.drift_degraded_percent(), 10);  // Still shown degraded.
  EXPECT_EQ(Active("f").source(), "auto");
  Feed("f", JsonAccessLines(2500, 83));
  EXPECT_EQ(Info("f").drift_retrains(), 2u);
  EXPECT_EQ(Active("f").source(), "drift");
}

// Automatic upkeep, opt-in: after the drift retraining is activated with a gain of
// at least upkeep_min_gain_percent, the pool's older records are re-encoded with it
// and the dictionaries nothing references any more (those of A) are retired. A pool
// with the default (manual) and one whose threshold is not reached keep theirs.
TEST_F(DriftTest, UpkeepReencodesOldRecordsAndRetiresUnusedDictionaries) {
  v1::PoolOptions upkeep, manual, high;
  upkeep.set_auto_upkeep(true);
  upkeep.set_upkeep_min_gain_percent(5);
  high.set_auto_upkeep(true);
  high.set_upkeep_min_gain_percent(1000);
  CreatePool("up", upkeep);
  CreatePool("man", manual);
  CreatePool("high", high);
  for (const char* pool : {"up", "man", "high"}) {
    Feed(pool, codec::SyntheticLogLines(1500, 40));
    ASSERT_EQ(Dictionaries(pool).size(), 4u) << pool;
    Feed(pool, JsonAccessLines(1200, 41));
    ASSERT_EQ(Info(pool).drift_retrains(), 1u) << pool;
  }
  EXPECT_GE(engine_->UpkeepRuns(), 1u);
  // "up": nothing trained on A is left, and its first record names a drift dictionary.
  for (const v1::DictionaryInfo& d : Dictionaries("up")) {
    EXPECT_EQ(d.source(), "drift") << d.id();
  }
  auto frame = engine_->GetFrame("up/1");
  ASSERT_TRUE(frame.ok()) << frame.status();
  bool named_drift = false;
  for (const v1::DictionaryInfo& d : Dictionaries("up")) {
    named_drift = named_drift || d.id() == frame->dictionary_id();
  }
  EXPECT_TRUE(named_drift);
  auto record = engine_->Get("up/1");
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->payload(), codec::SyntheticLogLines(1, 40)[0]);
  // The others keep A's four dictionaries, still referenced.
  for (const char* pool : {"man", "high"}) {
    size_t auto_trained = 0;
    for (const v1::DictionaryInfo& d : Dictionaries(pool)) auto_trained += d.source() == "auto";
    EXPECT_EQ(auto_trained, 4u) << pool;
  }
}

// Drift back: C (TemplateLines) until grown, a burst of B (long enough for a drift
// retraining on it), then C again. When C returns, the pool's earlier C dictionaries
// are measured on the recent records and the best is activated again (it beats the B
// one), so soon after the return (past the first window of it) C is stored within 5%
// of what C's dictionary gave before the burst, without waiting for a growth on the
// mixed data. (Before the fix: the B dictionary, then its growth on B + C, stay
// active there, and the same records store worse.)
TEST_F(DriftTest, DriftBackReactivatesTheEarlierDictionary) {
  Feed("back", TemplateLines(2000, 50));
  ASSERT_EQ(Active("back").source(), "auto");
  const double c_ratio = StoredRatioOf("back", TemplateLines(200, 53));
  ASSERT_GT(c_ratio, 2);
  Feed("back", JsonAccessLines(400, 51));  // ~80 KB: drift, retrained on B.
  ASSERT_EQ(Info("back").drift_retrains(), 1u);
  ASSERT_EQ(Active("back").source(), "drift");
  Feed("back", TemplateLines(200, 52));  // C again, ~30 KB: reactivated within it.
  const double returned = StoredRatioOf("back", TemplateLines(200, 54));
  EXPECT_GE(returned, 0.95 * c_ratio) << "C before the burst: " << c_ratio;
  const v1::PoolInfo info = Info("back");
  EXPECT_GE(info.drift_reactivations(), 1u);
  EXPECT_EQ(Active("back").source(), "auto");  // One of those trained on C.
  EXPECT_EQ(info.drift_retrains(), 1u);  // Reactivated, not retrained on C again.
}

// The return from a burst in a bulk load (large batches, as loghub's Hadoop in the
// scale comparison, whose sections a dictionary trained on the whole file stores at
// different ratios): C until grown, a burst of B retrained at full size at once, then
// C again. The return reactivates a C dictionary and ends the drift: no retraining
// on the return (before ADR 0036 one was pending and trained on its first slice, and
// won on that slice), and the C dictionary is judged from then on against the ratio it
// was reactivated with, not its evaluation on the whole of its training data.
TEST_F(DriftTest, ReturnFromABurstEndsTheDrift) {
  Feed("ret", TemplateLines(2000, 70));
  ASSERT_EQ(Active("ret").source(), "auto");
  Feed("ret", JsonAccessLines(2000, 71), 1000);  // ~400 KB of B in two appends.
  ASSERT_EQ(Info("ret").drift_retrains(), 1u);
  ASSERT_EQ(Active("ret").source(), "drift");
  Feed("ret", TemplateLines(3000, 72), 1000);  // ~450 KB of C in three appends.
  const v1::PoolInfo info = Info("ret");
  EXPECT_EQ(info.drift_retrains(), 1u);
  EXPECT_GE(info.drift_reactivations(), 1u);
  const v1::DictionaryInfo active = Active("ret");
  EXPECT_EQ(active.source(), "auto");
  EXPECT_GT(info.drift_activation_ratio(), 0);
  EXPECT_NE(info.drift_activation_ratio(), active.evaluation().ratio());
  EXPECT_LT(info.drift_degraded_percent(), 10);
}

// A restart: the window is in memory only, so it starts empty (`pools` says the
// window is not full and shows no degradation) while the ratio it compares with, the
// dictionary's evaluation, is still known (before the restart, the first window's
// ratio may have lowered it by up to 10%); appends refill it and drift is detected
// and retrained as before the restart.
TEST_F(DriftTest, DriftDetectionWorksAfterARestart) {
  Feed("rs", codec::SyntheticLogLines(2500, 60));
  v1::PoolInfo info = Info("rs");
  ASSERT_TRUE(info.drift_window_full());
  const double evaluated = Active("rs").evaluation().ratio();
  ASSERT_GT(evaluated, 1.5);
  EXPECT_LE(info.drift_activation_ratio(), evaluated);
  EXPECT_GE(info.drift_activation_ratio(), 0.9 * evaluated - 1e-9);
  const double activation = evaluated;
  engine_.reset();
  auto reopened = LogEngine::Open(options_);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  engine_ = std::move(*reopened);
  info = Info("rs");
  EXPECT_FALSE(info.drift_window_full());
  EXPECT_EQ(info.drift_recent_ratio(), 0);
  EXPECT_EQ(info.drift_degraded_percent(), 0);
  EXPECT_DOUBLE_EQ(info.drift_activation_ratio(), activation);
  EXPECT_FALSE(Active("rs").recent_window_full());
  Feed("rs", codec::SyntheticLogLines(60, 61));  // ~6 KB: not half the window yet.
  info = Info("rs");
  EXPECT_GT(info.drift_recent_ratio(), 0);
  EXPECT_FALSE(info.drift_window_full());
  Feed("rs", JsonAccessLines(1200, 62));
  info = Info("rs");
  EXPECT_EQ(info.drift_retrains(), 1u);  // Detected against the evaluation's ratio.
  EXPECT_EQ(Active("rs").source(), "drift");
  EXPECT_TRUE(info.drift_window_full());
}

// An imported dictionary has no evaluation: drift compares with the ratio of its first
// full window, which is kept with the dictionary, so after a restart it is the same.
TEST_F(DriftTest, ImportedDictionaryKeepsItsFirstWindowRatioAcrossARestart) {
  v1::PoolOptions options;
  options.set_drift_threshold_percent(10);
  CreatePool("imp", options);
  const std::string content =
      codec::TrainDictionaryForTest(codec::SyntheticLogLines(3000, 70), 16384, 40000);
  v1::ImportDictionaryRequest request;
  request.set_pool("imp");
  request.set_content(content);
  request.set_activate(true);
  auto imported = engine_->ImportDictionary(request);
  ASSERT_TRUE(imported.ok()) << imported.status();
  Feed("imp", codec::SyntheticLogLines(400, 71));  // ~40 KB: a full window.
  v1::PoolInfo info = Info("imp");
  ASSERT_EQ(info.active_dictionary_id(), imported->id()) << "a growth replaced it";
  ASSERT_TRUE(info.drift_window_full());
  const double first_window = info.drift_activation_ratio();
  ASSERT_GT(first_window, 1.5);
  engine_.reset();
  auto reopened = LogEngine::Open(options_);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  engine_ = std::move(*reopened);
  info = Info("imp");
  EXPECT_FALSE(info.drift_window_full());
  EXPECT_DOUBLE_EQ(info.drift_activation_ratio(), first_window);
}

// Block mode: appends are encoded with the pool's dictionary as single values before
// blocks are sealed with the same dictionary, so the same signal and retraining apply.
TEST_F(DriftTest, BlockModePoolRetrainsOnDrift) {
  v1::PoolOptions options;
  options.set_storage_mode(v1::STORAGE_MODE_BLOCK);
  options.set_block_bytes(2048);
  CreatePool("blk", options);
  Feed("blk", codec::SyntheticLogLines(2500, 36));
  EXPECT_EQ(Info("blk").drift_retrains(), 0u);
  Feed("blk", JsonAccessLines(2000, 37));
  const v1::PoolInfo info = Info("blk");
  EXPECT_EQ(info.drift_retrains(), 1u);
  EXPECT_EQ(Active("blk").source(), "drift");
  EXPECT_GT(Active("blk").records(), 0u);  // Sealed blocks and the tail name it.
  // The newest blocks use it: a record appended now reads back.
  auto ids = engine_->Append({{"blk", JsonAccessLines(1, 38)[0]}});
  ASSERT_TRUE(ids.ok());
  auto record = engine_->Get(ids->front());
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->payload(), JsonAccessLines(1, 38)[0]);
}

}  // namespace
}  // namespace dictlog::engine
