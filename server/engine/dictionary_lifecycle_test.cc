// The dictionary lifecycle through LogEngine, over a real RocksDB and real zstd
// training: too little data, automatic first training, retraining and evaluation,
// rollback, import, re-compression, gc, and restarts in between.
#include <algorithm>
#include <filesystem>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/test_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "codec/dictionary_format.h"
#include "codec/record_codec.h"
#include "codec/test_dictionary.h"
#include "server/engine/log_engine.h"
#include "server/store/table_damage.h"

namespace dictlog::engine {
namespace {

using ::absl::StatusCode;

class DictionaryLifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.store.path = FreshTestDir();
    options_.auto_trainer.min_bytes_multiple = 8;  // 8 x 4 KiB = 32 KiB.
    options_.default_pool_options.set_dictionary_bytes(4096);
    // Most tests follow records written before training as they were stored;
    // RecordsStoredBeforeTheFirstDictionaryAreReencoded turns this back on.
    options_.recompress_first_dictionary = false;
    Reopen();
  }

  void Reopen() {
    engine_.reset();
    auto engine = LogEngine::Open(options_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
  }

  // Appends `lines` to category `c` in batches; returns the ids.
  std::vector<std::string> AppendLines(const std::string& c,
                                       const std::vector<std::string>& lines) {
    std::vector<std::string> ids;
    for (size_t start = 0; start < lines.size(); start += 100) {
      std::vector<AppendInput> batch;
      for (size_t i = start; i < std::min(lines.size(), start + 100); ++i) {
        batch.push_back({c, lines[i]});
      }
      auto appended = engine_->Append(batch);
      EXPECT_TRUE(appended.ok()) << appended.status();
      if (appended.ok()) ids.insert(ids.end(), appended->begin(), appended->end());
    }
    return ids;
  }

  void ExpectAllReadBack(const std::vector<std::string>& ids,
                         const std::vector<std::string>& lines) {
    auto results = engine_->MultiGet(ids);
    ASSERT_TRUE(results.ok());
    for (size_t i = 0; i < ids.size(); ++i) {
      ASSERT_TRUE((*results)[i].ok()) << ids[i] << ": " << (*results)[i].status();
      ASSERT_EQ((*results)[i]->payload(), lines[i]) << ids[i];
    }
  }

  // Re-compression jobs slowed to a few batches a second (one over 600 records runs
  // about 3 s), then pool "app" holding `lines` with a trained dictionary active; the
  // ids of `lines`.
  std::vector<std::string> SlowJobsOnATrainedPool(const std::vector<std::string>& lines) {
    options_.recompressor.batch_records = 100;
    options_.recompressor.max_records_per_second = 200;
    Reopen();
    std::vector<std::string> ids = AppendLines("app", lines);
    v1::TrainDictionaryRequest train;
    train.set_pool("app");
    train.set_activate(true);
    auto trained = engine_->TrainDictionary(train);
    EXPECT_TRUE(trained.ok() && trained->activated()) << trained.status();
    return ids;
  }

  // Starts a re-compression of `pool`, waits for it, and returns its status.
  v1::RecompressStatus RecompressAndWait(const std::string& pool) {
    v1::RecompressRequest request;
    request.set_pool(pool);
    EXPECT_TRUE(engine_->Recompress(request).ok());
    EXPECT_TRUE(engine_->WaitForRecompressForTest(pool, absl::Seconds(60)));
    auto status = engine_->GetRecompressStatus(request);
    EXPECT_TRUE(status.ok()) << status.status();
    return status.ok() ? *status : v1::RecompressStatus();
  }

  uint32_t FrameDictionary(const std::string& id) {
    auto frame = engine_->GetFrame(id);
    EXPECT_TRUE(frame.ok()) << frame.status();
    return frame.ok() ? frame->dictionary_id() : 0;
  }

  std::vector<v1::DictionaryInfo> Dictionaries() {
    auto list = engine_->ListDictionaries({});
    EXPECT_TRUE(list.ok()) << list.status();
    return {list->dictionaries().begin(), list->dictionaries().end()};
  }

  EngineOptions options_;
  std::unique_ptr<LogEngine> engine_;
};

TEST_F(DictionaryLifecycleTest, TooLittleDataIsFailedPrecondition) {
  AppendLines("small", codec::SyntheticLogLines(3, 1));
  v1::TrainDictionaryRequest request;
  request.set_pool("small");
  absl::Status status = engine_->TrainDictionary(request).status();
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("records"), std::string::npos) << status;
  request.set_pool("missing");
  EXPECT_EQ(engine_->TrainDictionary(request).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Dictionaries().empty());
}

// Issue 17: the first `pools` a user sees after a bulk append shows what the pool's
// first dictionary does: the records stored before it are re-encoded in the background.
// Later dictionaries do not start a job by themselves.
TEST_F(DictionaryLifecycleTest, RecordsStoredBeforeTheFirstDictionaryAreReencoded) {
  options_.recompress_first_dictionary = true;
  Reopen();
  std::vector<std::string> lines = codec::SyntheticLogLines(600, 9);
  std::vector<std::string> ids = AppendLines("app", lines);
  ASSERT_TRUE(engine_->WaitForAutoTrainingForTest(absl::Seconds(60)));
  ASSERT_TRUE(engine_->WaitForRecompressForTest("app", absl::Seconds(60)));
  const uint32_t first = engine_->GetPool("app")->active_dictionary_id();
  ASSERT_NE(first, 0u);
  v1::RecompressRequest request;
  request.set_pool("app");
  auto job = engine_->GetRecompressStatus(request);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->state(), v1::RecompressStatus::DONE) << job->error();
  EXPECT_EQ(job->target_dictionary_id(), first);
  EXPECT_GT(job->records_rewritten(), 0u);  // Written before the dictionary existed.
  EXPECT_LT(job->bytes_after(), job->bytes_before());
  EXPECT_EQ(FrameDictionary(ids.front()), first);
  std::vector<v1::DictionaryInfo> dicts = Dictionaries();
  ASSERT_EQ(dicts.size(), 1u);
  EXPECT_EQ(dicts[0].records(), 600u);  // Every record now references it.
  v1::PoolInfo pool = *engine_->GetPool("app");
  // The pool's ratio is the dictionary's (stored raw before it: 1.0x; now 2.8x).
  EXPECT_GT(pool.stats().raw_bytes(), 2 * pool.stats().stored_bytes());
  ExpectAllReadBack(ids, lines);

  // A later dictionary is governed by the dictionary policy: no job of its own.
  v1::TrainDictionaryRequest train;
  train.set_pool("app");
  train.set_activate(true);
  auto trained = engine_->TrainDictionary(train);
  ASSERT_TRUE(trained.ok()) << trained.status();
  v1::ActivateDictionaryRequest activate;
  activate.set_pool("app");
  activate.set_id(trained->dictionary().id());
  ASSERT_TRUE(engine_->ActivateDictionary(activate).ok());
  ASSERT_TRUE(engine_->WaitForAutoTrainingForTest(absl::Seconds(60)));
  auto after = engine_->GetRecompressStatus(request);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->target_dictionary_id(), first);
  EXPECT_EQ(FrameDictionary(ids.front()), first);
  Reopen();
  ExpectAllReadBack(ids, lines);
}

// A job re-encodes each batch's records through RecompressorOptions::parallel_for
// (the engine's: its encode helpers), here on two threads: every record is covered
// exactly once and reads back as appended.
TEST_F(DictionaryLifecycleTest, ReencodeRunsOnParallelFor) {
  absl::Mutex mu;
  std::vector<size_t> loops;  // Each call's n.
  options_.recompressor.batch_records = 64;
  options_.recompressor.parallel_for = [&](size_t n, absl::FunctionRef<void(size_t)> task) {
    {
      absl::MutexLock lock(&mu);
      loops.push_back(n);
    }
    std::thread other([&] {
      for (size_t i = 1; i < n; i += 2) task(i);
    });
    for (size_t i = 0; i < n; i += 2) task(i);
    other.join();
  };
  options_.recompress_first_dictionary = true;
  Reopen();
  std::vector<std::string> lines = codec::SyntheticLogLines(600, 19);
  std::vector<AppendInput> batch;  // One call: all of it before the first training.
  for (const std::string& line : lines) batch.push_back({"app", line});
  absl::StatusOr<std::vector<std::string>> ids = engine_->Append(batch);
  ASSERT_TRUE(ids.ok()) << ids.status();
  ASSERT_TRUE(engine_->WaitForAutoTrainingForTest(absl::Seconds(60)));
  ASSERT_TRUE(engine_->WaitForRecompressForTest("app", absl::Seconds(60)));
  v1::RecompressRequest request;
  request.set_pool("app");
  auto job = engine_->GetRecompressStatus(request);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->state(), v1::RecompressStatus::DONE) << job->error();
  EXPECT_EQ(job->records_done(), 600u);
  EXPECT_EQ(job->records_rewritten(), 600u);
  {
    absl::MutexLock lock(&mu);
    ASSERT_FALSE(loops.empty());
    EXPECT_EQ(loops.front(), 64u);  // A batch's records in one loop.
  }
  const uint32_t first = engine_->GetPool("app")->active_dictionary_id();
  EXPECT_EQ(FrameDictionary(ids->front()), first);
  EXPECT_EQ(FrameDictionary(ids->back()), first);
  ExpectAllReadBack(*ids, lines);
}

// A Recompress request while a job the server started runs joins that job: its
// callback (the request's compaction) runs when the job completes, after the job's own.
TEST_F(DictionaryLifecycleTest, StartJoinsTheRunningJobsCallback) {
  SlowJobsOnATrainedPool(codec::SyntheticLogLines(600, 29));
  dictionary::Recompressor& recompressor = engine_->RecompressorForTest();
  absl::Mutex mu;
  std::vector<std::string> done;
  auto record = [&](const std::string& what) {
    return [&, what](const std::string& pool) {
      absl::MutexLock lock(&mu);
      done.push_back(what + ":" + pool);
    };
  };
  auto first = recompressor.Start("app", record("first"));
  ASSERT_TRUE(first.ok()) << first.status();
  auto joined = recompressor.Start("app", record("joined"));
  ASSERT_TRUE(joined.ok()) << joined.status();
  EXPECT_EQ(joined->state(), v1::RecompressStatus::RUNNING);
  ASSERT_TRUE(recompressor.WaitForTest("app", absl::Seconds(60)));
  absl::MutexLock lock(&mu);
  EXPECT_EQ(done, (std::vector<std::string>{"first:app", "joined:app"}));
}

// StartOrFollow while a job runs (a growth dictionary activated during the first
// dictionary's re-encode): another job follows it, and in the end every record names
// the newest dictionary, the ones appended after the first job started and the ones it
// re-encoded before the activation included.
TEST_F(DictionaryLifecycleTest, StartOrFollowCoversEveryRecordWithTheNewestDictionary) {
  const std::vector<std::string> lines = codec::SyntheticLogLines(600, 39);
  const std::vector<std::string> ids = SlowJobsOnATrainedPool(lines);
  v1::TrainDictionaryRequest train;
  train.set_pool("app");
  const uint32_t first = engine_->GetPool("app")->active_dictionary_id();
  ASSERT_NE(first, 0u);
  dictionary::Recompressor& recompressor = engine_->RecompressorForTest();
  auto started = recompressor.StartOrFollow("app");
  ASSERT_TRUE(started.ok()) << started.status();
  const std::vector<std::string> later = codec::SyntheticLogLines(200, 40);
  const std::vector<std::string> later_ids = AppendLines("app", later);
  EXPECT_EQ(FrameDictionary(later_ids.front()), first);  // Compressed at append.
  train.set_activate(false);
  auto second = engine_->TrainDictionary(train);
  ASSERT_TRUE(second.ok()) << second.status();
  v1::ActivateDictionaryRequest activate;
  activate.set_pool("app");
  activate.set_id(second->dictionary().id());
  ASSERT_TRUE(engine_->ActivateDictionary(activate).ok());
  auto followed = recompressor.StartOrFollow("app");
  ASSERT_TRUE(followed.ok()) << followed.status();
  ASSERT_EQ(followed->state(), v1::RecompressStatus::RUNNING) << "the first job ended early";
  ASSERT_TRUE(recompressor.WaitForTest("app", absl::Seconds(60)));
  v1::RecompressRequest request;
  request.set_pool("app");
  auto job = engine_->GetRecompressStatus(request);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->state(), v1::RecompressStatus::DONE) << job->error();
  EXPECT_EQ(job->target_dictionary_id(), second->dictionary().id());
  EXPECT_EQ(FrameDictionary(ids.front()), second->dictionary().id());
  EXPECT_EQ(FrameDictionary(later_ids.back()), second->dictionary().id());
  for (const v1::DictionaryInfo& d : Dictionaries()) {
    EXPECT_EQ(d.records(), d.id() == second->dictionary().id() ? 800u : 0u) << d.id();
  }
  ExpectAllReadBack(ids, lines);
  ExpectAllReadBack(later_ids, later);
}

TEST_F(DictionaryLifecycleTest, FullLifecycleKeepsEveryRecordReadable) {
  // 1. Enough data: the first dictionary is trained and activated in the background.
  std::vector<std::string> lines = codec::SyntheticLogLines(600, 1);
  std::vector<std::string> ids = AppendLines("app", lines);
  ASSERT_TRUE(engine_->WaitForAutoTrainingForTest(absl::Seconds(60)));
  std::vector<v1::DictionaryInfo> dicts = Dictionaries();
  ASSERT_EQ(dicts.size(), 1u);
  const uint32_t first = dicts[0].id();
  EXPECT_GE(first, codec::kMinDictionaryId);
  EXPECT_TRUE(dicts[0].active());
  EXPECT_EQ(dicts[0].source(), "auto");
  EXPECT_GT(dicts[0].evaluation().gain(), 0.03);
  EXPECT_EQ(engine_->GetPool("app")->active_dictionary_id(), first);

  // 2. New records name the active dictionary in their frames.
  std::vector<std::string> more = codec::SyntheticLogLines(300, 2);
  std::vector<std::string> more_ids = AppendLines("app", more);
  EXPECT_EQ(FrameDictionary(more_ids.back()), first);
  EXPECT_EQ(FrameDictionary(ids.front()), 0u);  // Written before training.

  // 3. Retrain on request without activating; then activate it explicitly.
  v1::TrainDictionaryRequest train;
  train.set_pool("app");
  auto trained = engine_->TrainDictionary(train);
  ASSERT_TRUE(trained.ok()) << trained.status();
  EXPECT_FALSE(trained->activated());
  const uint32_t second = trained->dictionary().id();
  EXPECT_EQ(trained->dictionary().evaluation().baseline_dictionary_id(), first);
  v1::ActivateDictionaryRequest activate;
  activate.set_pool("app");
  activate.set_id(second);
  ASSERT_TRUE(engine_->ActivateDictionary(activate).ok());
  std::vector<std::string> third_lines = codec::SyntheticLogLines(50, 3);
  std::vector<std::string> third_ids = AppendLines("app", third_lines);
  EXPECT_EQ(FrameDictionary(third_ids.back()), second);

  // 4. Roll back to the first, restart: everything still decodes. Only the active
  //    dictionary is pinned in the cache; the others are built when a frame names them.
  activate.set_id(first);
  ASSERT_TRUE(engine_->ActivateDictionary(activate).ok());
  EXPECT_EQ(engine_->DictionaryCacheStats().pinned(), 1u);
  Reopen();
  v1::DictionaryCacheStats cache = engine_->DictionaryCacheStats();
  EXPECT_EQ(cache.pinned(), 1u);
  EXPECT_EQ(cache.entries(), 1u);
  EXPECT_EQ(engine_->GetPool("app")->active_dictionary_id(), first);
  ExpectAllReadBack(ids, lines);
  ExpectAllReadBack(more_ids, more);
  ExpectAllReadBack(third_ids, third_lines);
  cache = engine_->DictionaryCacheStats();
  // A MultiGet looks a dictionary up once per run of records naming it, in chunks of
  // 256 records: the 300 frames of more_ids name the pinned first dictionary (2 hits);
  // the 50 of third_ids name the second, built on its first use (1 miss, then 1 hit
  // when the chunk resolves again with it); pinning at start-up missed once.
  EXPECT_EQ(cache.entries(), 2u);
  EXPECT_EQ(cache.builds(), 2u);
  EXPECT_EQ(cache.hits(), 3u);
  EXPECT_EQ(cache.misses(), 2u);

  // 5. gc keeps what is referenced or active.
  auto dry = engine_->GcDictionaries({});
  ASSERT_TRUE(dry.ok());
  EXPECT_EQ(dry->deleted_size(), 0);

  // 6. Re-compress with the active (first) dictionary: the second loses its
  //    references, gc deletes it, and everything still reads back, also after restart.
  v1::RecompressRequest recompress;
  recompress.set_pool("app");
  ASSERT_TRUE(engine_->Recompress(recompress).ok());
  ASSERT_TRUE(engine_->WaitForRecompressForTest("app", absl::Seconds(60)));
  auto status = engine_->GetRecompressStatus(recompress);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->state(), v1::RecompressStatus::DONE) << status->error();
  EXPECT_EQ(status->records_done(), 950u);
  EXPECT_LT(status->bytes_after(), status->bytes_before());
  EXPECT_EQ(FrameDictionary(ids.front()), first);
  for (const v1::DictionaryInfo& info : Dictionaries()) {
    EXPECT_EQ(info.records(), info.id() == first ? 950u : 0u) << info.id();
  }
  auto gc = engine_->GcDictionaries({});
  ASSERT_TRUE(gc.ok());
  ASSERT_EQ(gc->deleted_size(), 1);
  EXPECT_EQ(gc->deleted(0).id(), second);
  Reopen();
  ExpectAllReadBack(ids, lines);
  ExpectAllReadBack(third_ids, third_lines);
  v1::PoolInfo pool = *engine_->GetPool("app");
  EXPECT_GT(pool.stats().raw_bytes(), 2 * pool.stats().stored_bytes());
  EXPECT_EQ(Dictionaries().size(), 1u);  // The retired one is not listed.

  // 7. Ids are never reused, even the retired highest one after a restart.
  auto next = engine_->TrainDictionary(train);
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_GT(next->dictionary().id(), second);
}

TEST_F(DictionaryLifecycleTest, ImportReplacesTheIdAndRejectsGarbage) {
  options_.auto_train = false;
  Reopen();
  std::vector<std::string> lines = codec::SyntheticLogLines(200, 4);
  std::vector<std::string> ids = AppendLines("imp", lines);
  const std::string offline =
      codec::TrainDictionaryForTest(codec::SyntheticLogLines(2000, 5), 4096, 99999);
  v1::ImportDictionaryRequest request;
  request.set_pool("imp");
  request.set_content(offline);
  request.set_activate(true);
  auto imported = engine_->ImportDictionary(request);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_NE(imported->id(), 99999u);
  EXPECT_TRUE(imported->active());
  // Issue 17: the answer says the id was reassigned, and why.
  EXPECT_EQ(imported->imported_id(), 99999u);
  EXPECT_FALSE(imported->import_existing());
  EXPECT_NE(imported->import_note().find(absl::StrCat("the file's dictionary id 99999 is "
                                                      "stored as ", imported->id(), ": ")),
            std::string::npos)
      << imported->import_note();
  EXPECT_NE(imported->import_note().find("assigns every dictionary id itself"),
            std::string::npos);
  v1::GetDictionaryRequest get;
  get.set_id(imported->id());
  auto exported = engine_->GetDictionary(get);
  ASSERT_TRUE(exported.ok());
  EXPECT_EQ(*codec::DictionaryIdOf(exported->content()), imported->id());
  std::vector<std::string> after = AppendLines("imp", {lines[0]});
  EXPECT_EQ(FrameDictionary(after[0]), imported->id());

  request.set_content("not a dictionary at all");
  EXPECT_EQ(engine_->ImportDictionary(request).status().code(),
            StatusCode::kInvalidArgument);
  std::string truncated = offline.substr(0, 40);
  request.set_content(truncated);
  EXPECT_EQ(engine_->ImportDictionary(request).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Dictionaries().size(), 1u);
}

// Issue 17: importing the same file twice (or a dictionary exported from the pool, with
// its id, or the same content under another id) returns the dictionary the pool has.
TEST_F(DictionaryLifecycleTest, ImportingIdenticalContentReturnsTheExistingDictionary) {
  options_.auto_train = false;
  Reopen();
  AppendLines("imp", codec::SyntheticLogLines(50, 4));
  AppendLines("other", codec::SyntheticLogLines(50, 4));
  const std::string offline =
      codec::TrainDictionaryForTest(codec::SyntheticLogLines(2000, 5), 4096, 36337);
  v1::ImportDictionaryRequest request;
  request.set_pool("imp");
  request.set_content(offline);
  auto first = engine_->ImportDictionary(request);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->active());

  request.set_activate(true);  // The same file again, now to activate it.
  auto again = engine_->ImportDictionary(request);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->id(), first->id());
  EXPECT_TRUE(again->active());
  EXPECT_TRUE(again->import_existing());
  EXPECT_EQ(again->imported_id(), 36337u);
  EXPECT_NE(again->import_note().find(absl::StrCat("identical (but for its id 36337) to "
                                                   "dictionary ", first->id(), " of pool imp")),
            std::string::npos)
      << again->import_note();
  EXPECT_EQ(engine_->GetPool("imp")->active_dictionary_id(), first->id());

  v1::GetDictionaryRequest get;  // Exported (with the server's id) and re-imported.
  get.set_id(first->id());
  auto exported = engine_->GetDictionary(get);
  ASSERT_TRUE(exported.ok());
  request.set_content(exported->content());
  request.set_activate(false);
  auto round_trip = engine_->ImportDictionary(request);
  ASSERT_TRUE(round_trip.ok());
  EXPECT_EQ(round_trip->id(), first->id());
  EXPECT_TRUE(round_trip->import_existing());
  EXPECT_EQ(Dictionaries().size(), 1u);

  // Another pool gets its own copy; different content is a new dictionary.
  request.set_pool("other");
  request.set_content(offline);
  auto other = engine_->ImportDictionary(request);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->id(), first->id());
  EXPECT_FALSE(other->import_existing());
  request.set_pool("imp");
  request.set_content(
      codec::TrainDictionaryForTest(codec::SyntheticLogLines(2000, 6), 4096, 36337));
  auto different = engine_->ImportDictionary(request);
  ASSERT_TRUE(different.ok());
  EXPECT_FALSE(different->import_existing());
  EXPECT_EQ(Dictionaries().size(), 3u);
  Reopen();  // Still found after a restart (the look-up reads the store).
  request.set_content(offline);
  auto after_restart = engine_->ImportDictionary(request);
  ASSERT_TRUE(after_restart.ok());
  EXPECT_EQ(after_restart->id(), first->id());
  EXPECT_EQ(Dictionaries().size(), 3u);
}

// An import larger than max_import_dictionary_bytes is refused before it is parsed
// (the message names the limit, not a format error); nothing is stored.
TEST_F(DictionaryLifecycleTest, ImportLargerThanTheCapIsRefusedBeforeParsing) {
  options_.auto_train = false;
  options_.max_import_dictionary_bytes = 1 << 20;
  Reopen();
  ASSERT_TRUE(engine_->CreatePool("big", {}).ok());
  v1::ImportDictionaryRequest request;
  request.set_pool("big");
  request.set_content(std::string((1 << 20) + 1, 'x'));
  absl::StatusOr<v1::DictionaryInfo> refused = engine_->ImportDictionary(request);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.status().message()),
              ::testing::HasSubstr("--max_import_dictionary_bytes"));
  EXPECT_TRUE(Dictionaries().empty());
  request.set_content(std::string(1 << 20, 'x'));  // At the cap: parsed, and garbage.
  refused = engine_->ImportDictionary(request);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.status().message()),
              ::testing::Not(::testing::HasSubstr("--max_import_dictionary_bytes")));
  // A raised cap lets the larger content through to the parser.
  options_.max_import_dictionary_bytes = 2 << 20;
  Reopen();
  request.set_content(std::string((1 << 20) + 1, 'x'));
  refused = engine_->ImportDictionary(request);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.status().message()),
              ::testing::Not(::testing::HasSubstr("--max_import_dictionary_bytes")));
  EXPECT_TRUE(Dictionaries().empty());
}

// Found by tests/fuzz (crashes/dictionary_import): zstd loads a dictionary whose
// Huffman tree covers only a few literals for decoding but not for compression; once
// imported and activated, every append to the pool failed.
TEST_F(DictionaryLifecycleTest, ImportRejectsADictionaryZstdCannotCompressWith) {
  options_.auto_train = false;
  Reopen();
  const std::vector<std::string> lines = codec::SyntheticLogLines(50, 8);
  AppendLines("imp", lines);
  const std::string trained =
      codec::TrainDictionaryForTest(codec::SyntheticLogLines(2000, 5), 4096, 99999);
  absl::StatusOr<codec::DictionaryParts> parts = codec::ParseDictionary(trained);
  ASSERT_TRUE(parts.ok()) << parts.status();
  // Direct weights (header 127 + 2): literals 0 and 1 of weight 1, 2 implied.
  const std::string three_literals = "\x81\x11";
  parts->huffman_tree = three_literals;
  absl::StatusOr<std::string> narrow = codec::SerializeDictionary(*parts);
  ASSERT_TRUE(narrow.ok()) << narrow.status();
  ASSERT_TRUE(codec::DecoderDictionary::Create(*narrow).ok());
  ASSERT_FALSE(codec::EncoderDictionary::Create(*narrow, 3).ok());

  v1::ImportDictionaryRequest request;
  request.set_pool("imp");
  request.set_content(*narrow);
  request.set_activate(true);
  EXPECT_EQ(engine_->ImportDictionary(request).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(Dictionaries().empty());
  std::vector<std::string> ids = AppendLines("imp", {lines[0]});
  ASSERT_EQ(ids.size(), 1u);
  ExpectAllReadBack(ids, {lines[0]});
}

TEST_F(DictionaryLifecycleTest, ActivationChecksOwnership) {
  options_.auto_train = false;
  Reopen();
  AppendLines("a", codec::SyntheticLogLines(400, 6));
  AppendLines("b", codec::SyntheticLogLines(10, 7));
  v1::TrainDictionaryRequest train;
  train.set_pool("a");
  auto trained = engine_->TrainDictionary(train);
  ASSERT_TRUE(trained.ok()) << trained.status();
  v1::ActivateDictionaryRequest activate;
  activate.set_pool("b");
  activate.set_id(trained->dictionary().id());
  EXPECT_EQ(engine_->ActivateDictionary(activate).status().code(),
            StatusCode::kInvalidArgument);
  activate.set_id(12345678);
  EXPECT_EQ(engine_->ActivateDictionary(activate).status().code(), StatusCode::kNotFound);
}

// Issue 8: switching a pool to compact takes effect with its next dictionary; the
// candidate is judged against the compact form of the full one; records written under
// either decode, before and after re-compression and a restart.
// ADR 0051: a re-compression never makes a record larger. Records of format X framed
// with a dictionary made for X keep their frames when the active dictionary is one
// made for format Y (which would store them larger); records stored raw and records
// of Y framed with the X dictionary are re-encoded; every record reads back.
TEST_F(DictionaryLifecycleTest, RecompressionKeepsRecordsAnEarlierDictionaryStoresSmaller) {
  options_.auto_train = false;
  Reopen();
  auto json_lines = [](int count, uint32_t seed) {
    std::vector<std::string> lines;
    for (int i = 0; i < count; ++i) {
      const uint32_t r = seed * 7919u + static_cast<uint32_t>(i) * 104729u;
      lines.push_back(absl::StrCat("{\"method\":\"", (r % 2) ? "GET" : "POST",
                                   "\",\"path\":\"/api/v2/orders/", r % 100000,
                                   "\",\"status\":", (r % 7) ? 200 : 404,
                                   ",\"latency_us\":", r % 90000, "}"));
    }
    return lines;
  };
  auto import = [&](const std::vector<std::string>& samples) {
    v1::ImportDictionaryRequest request;
    request.set_pool("mix");
    request.set_content(codec::TrainDictionaryForTest(samples, 4096, 77777));
    request.set_activate(true);
    auto imported = engine_->ImportDictionary(request);
    EXPECT_TRUE(imported.ok()) << imported.status();
    return imported.ok() ? imported->id() : 0u;
  };
  const std::vector<std::string> raw = json_lines(50, 40);  // Stored raw: no dictionary.
  std::vector<std::string> raw_ids = AppendLines("mix", raw);
  const uint32_t for_x = import(codec::SyntheticLogLines(2000, 41));
  const std::vector<std::string> x = codec::SyntheticLogLines(300, 42);
  const std::vector<std::string> x_ids = AppendLines("mix", x);
  const std::vector<std::string> y_with_x = json_lines(100, 43);
  const std::vector<std::string> y_with_x_ids = AppendLines("mix", y_with_x);
  const uint32_t for_y = import(json_lines(2000, 44));
  ASSERT_NE(for_x, 0u);
  ASSERT_NE(for_y, 0u);
  ASSERT_EQ(FrameDictionary(x_ids[0]), for_x);
  const uint64_t stored_before = engine_->GetPool("mix")->stats().stored_bytes();

  const v1::RecompressStatus status = RecompressAndWait("mix");
  EXPECT_EQ(status.state(), v1::RecompressStatus::DONE);
  EXPECT_EQ(status.target_dictionary_id(), for_y);
  EXPECT_GE(status.records_kept(), 250u);  // X lines: the Y dictionary stores them larger.
  EXPECT_EQ(status.records_rewritten(), 450u - status.records_kept());  // Raw, Y with X.
  EXPECT_LE(status.bytes_after(), status.bytes_before());
  EXPECT_LT(engine_->GetPool("mix")->stats().stored_bytes(), stored_before);
  size_t x_kept = 0;
  for (const std::string& id : x_ids) x_kept += FrameDictionary(id) == for_x;
  EXPECT_EQ(x_kept, status.records_kept());
  for (const std::string& id : y_with_x_ids) EXPECT_EQ(FrameDictionary(id), for_y) << id;
  for (const std::string& id : raw_ids) EXPECT_EQ(FrameDictionary(id), for_y) << id;
  ExpectAllReadBack(raw_ids, raw);
  ExpectAllReadBack(x_ids, x);
  ExpectAllReadBack(y_with_x_ids, y_with_x);
  // The dictionary the kept records name is referenced still: gc keeps it.
  v1::GcDictionariesRequest gc;
  ASSERT_TRUE(engine_->GcDictionaries(gc).ok());
  bool x_listed = false;
  for (const v1::DictionaryInfo& info : Dictionaries()) x_listed |= info.id() == for_x;
  EXPECT_TRUE(x_listed);
}

TEST_F(DictionaryLifecycleTest, SwitchingToCompactTakesEffectWithTheNextDictionary) {
  std::vector<std::string> lines = codec::SyntheticLogLines(600, 4);
  std::vector<std::string> ids = AppendLines("app", lines);
  ASSERT_TRUE(engine_->WaitForAutoTrainingForTest(absl::Seconds(60)));
  v1::PoolInfo pool = *engine_->GetPool("app");
  EXPECT_EQ(pool.options().dictionary_mode(), v1::DICTIONARY_MODE_AUTO);
  EXPECT_EQ(pool.active_dictionary_mode(), v1::DICTIONARY_MODE_FULL);  // 1 live: full.
  EXPECT_EQ(pool.next_dictionary_mode(), v1::DICTIONARY_MODE_FULL);
  EXPECT_NE(pool.dictionary_mode_reason().find("1 live dictionaries <= 64"),
            std::string::npos)
      << pool.dictionary_mode_reason();
  const uint32_t full_id = pool.active_dictionary_id();
  std::vector<std::string> more = codec::SyntheticLogLines(100, 5);
  std::vector<std::string> more_ids = AppendLines("app", more);

  v1::PoolOptions compact;
  compact.set_dictionary_mode(v1::DICTIONARY_MODE_COMPACT);
  auto updated = engine_->UpdatePool("app", compact);
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ(updated->active_dictionary_mode(), v1::DICTIONARY_MODE_FULL);  // Not yet.
  EXPECT_EQ(updated->next_dictionary_mode(), v1::DICTIONARY_MODE_COMPACT);

  v1::TrainDictionaryRequest train;
  train.set_pool("app");
  auto trained = engine_->TrainDictionary(train);
  ASSERT_TRUE(trained.ok()) << trained.status();
  EXPECT_EQ(trained->dictionary().mode(), v1::DICTIONARY_MODE_COMPACT);
  // Against the compact form of the active full dictionary the gain is small, not the
  // ~15% loss a comparison with the full one would show.
  EXPECT_GT(trained->dictionary().evaluation().gain(), -0.05);
  v1::ActivateDictionaryRequest activate;
  activate.set_pool("app");
  activate.set_id(trained->dictionary().id());
  ASSERT_TRUE(engine_->ActivateDictionary(activate).ok());
  EXPECT_EQ(engine_->GetPool("app")->active_dictionary_mode(), v1::DICTIONARY_MODE_COMPACT);
  std::vector<std::string> late = codec::SyntheticLogLines(100, 6);
  std::vector<std::string> late_ids = AppendLines("app", late);
  EXPECT_EQ(FrameDictionary(late_ids.back()), trained->dictionary().id());
  EXPECT_EQ(FrameDictionary(more_ids.back()), full_id);

  v1::RecompressRequest recompress;
  recompress.set_pool("app");
  ASSERT_TRUE(engine_->Recompress(recompress).ok());
  ASSERT_TRUE(engine_->WaitForRecompressForTest("app", absl::Seconds(60)));
  EXPECT_EQ(FrameDictionary(more_ids.back()), trained->dictionary().id());
  Reopen();
  EXPECT_EQ(engine_->GetPool("app")->active_dictionary_mode(), v1::DICTIONARY_MODE_COMPACT);
  for (const v1::DictionaryInfo& info : Dictionaries()) {
    EXPECT_EQ(info.mode(), info.id() == full_id ? v1::DICTIONARY_MODE_FULL
                                                : v1::DICTIONARY_MODE_COMPACT);
  }
  ExpectAllReadBack(ids, lines);
  ExpectAllReadBack(more_ids, more);
  ExpectAllReadBack(late_ids, late);
  EXPECT_GE(engine_->GetPool("app")->reads(), 800u);  // The reads above, counted.
}

TEST_F(DictionaryLifecycleTest, AutoTrainsCompactForAColdPoolAmongManyDictionaries) {
  options_.dictionaries.auto_full_dictionaries = 1;  // One live dictionary is "many".
  Reopen();
  std::vector<std::string> hot_ids = AppendLines("hot", codec::SyntheticLogLines(600, 7));
  ASSERT_TRUE(engine_->WaitForAutoTrainingForTest(absl::Seconds(60)));
  ASSERT_TRUE(engine_->MultiGet(hot_ids).ok());  // "hot" takes every read.
  AppendLines("cold", codec::SyntheticLogLines(600, 8));
  ASSERT_TRUE(engine_->WaitForAutoTrainingForTest(absl::Seconds(60)));
  EXPECT_EQ(engine_->GetPool("hot")->active_dictionary_mode(), v1::DICTIONARY_MODE_FULL);
  v1::PoolInfo cold = *engine_->GetPool("cold");
  EXPECT_EQ(cold.active_dictionary_mode(), v1::DICTIONARY_MODE_COMPACT)
      << cold.dictionary_mode_reason();
  EXPECT_NE(cold.dictionary_mode_reason().find("2 live dictionaries > 1"), std::string::npos)
      << cold.dictionary_mode_reason();
  EXPECT_EQ(engine_->GetPool("hot")->next_dictionary_mode(), v1::DICTIONARY_MODE_FULL);
}

// Issue 16 item 13: a gc between "the new dictionary is stored" and "it is reported or
// activated" left an empty entry (records_[id] inserted one: a dictionary 0 of no pool
// in every listing) or failed the activation with NOT_FOUND. Now the gc runs either
// before the dictionary is listed (and cannot see it) or after the call.
TEST_F(DictionaryLifecycleTest, TrainingOrImportRacingGcLeavesNoEmptyEntry) {
  options_.auto_train = false;
  Reopen();
  AppendLines("app", codec::SyntheticLogLines(400, 6));
  int gcs = 0;
  engine_->DictionaryManagerForTest().SetAfterStoreHookForTest([&](uint32_t) {
    auto gc = engine_->GcDictionaries({});
    ASSERT_TRUE(gc.ok()) << gc.status();
    ++gcs;
  });
  v1::ImportDictionaryRequest import;
  import.set_pool("app");
  import.set_content(
      codec::TrainDictionaryForTest(codec::SyntheticLogLines(2000, 5), 4096, 99999));
  auto imported = engine_->ImportDictionary(import);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_GE(imported->id(), codec::kMinDictionaryId);
  EXPECT_EQ(imported->pool(), "app");
  import.set_activate(true);
  // Other content: an identical import would return the first dictionary, storing none.
  import.set_content(
      codec::TrainDictionaryForTest(codec::SyntheticLogLines(2000, 9), 4096, 99998));
  auto activated = engine_->ImportDictionary(import);
  ASSERT_TRUE(activated.ok()) << activated.status();
  EXPECT_TRUE(activated->active());
  v1::TrainDictionaryRequest train;
  train.set_pool("app");
  auto trained = engine_->TrainDictionary(train);
  ASSERT_TRUE(trained.ok()) << trained.status();
  EXPECT_EQ(trained->dictionary().pool(), "app");
  EXPECT_GE(trained->dictionary().id(), codec::kMinDictionaryId);
  engine_->DictionaryManagerForTest().SetAfterStoreHookForTest(nullptr);
  EXPECT_EQ(gcs, 3);
  for (const v1::DictionaryInfo& info : Dictionaries()) {
    EXPECT_GE(info.id(), codec::kMinDictionaryId);
    EXPECT_EQ(info.pool(), "app") << info.id();
  }
  EXPECT_EQ(engine_->GetPool("app")->active_dictionary_id(), activated->id());
}

// Issue 16 item 13: a finished job's thread was joined only when the pool's next job
// started (or at shutdown); now it is joined as soon as the job ends.
TEST_F(DictionaryLifecycleTest, FinishedRecompressionThreadIsJoinedWithoutANextJob) {
  options_.auto_train = false;
  Reopen();
  AppendLines("app", codec::SyntheticLogLines(300, 6));
  AppendLines("web", codec::SyntheticLogLines(300, 7));
  v1::RecompressRequest recompress;
  for (const char* pool : {"app", "web"}) {
    recompress.set_pool(pool);
    ASSERT_TRUE(engine_->Recompress(recompress).ok());
  }
  ASSERT_TRUE(engine_->WaitForRecompressForTest("app", absl::Seconds(60)));
  ASSERT_TRUE(engine_->WaitForRecompressForTest("web", absl::Seconds(60)));
  EXPECT_TRUE(engine_->RecompressorForTest().WaitForThreadsJoinedForTest(absl::Seconds(60)));
  // A pool's next job starts as before.
  ASSERT_TRUE(engine_->Recompress(recompress).ok());
  ASSERT_TRUE(engine_->WaitForRecompressForTest("web", absl::Seconds(60)));
  EXPECT_EQ(engine_->GetRecompressStatus(recompress)->state(), v1::RecompressStatus::DONE);
  EXPECT_TRUE(engine_->RecompressorForTest().WaitForThreadsJoinedForTest(absl::Seconds(60)));
}

// A damaged table block holding an inactive dictionary (the store closed): the server
// opens without it (a store with a dictionary id lease), records that name it read as
// DATA_LOSS, the others read, and no id given before is given again.
TEST_F(DictionaryLifecycleTest, AnUnreadableInactiveDictionaryIsSkippedAndItsIdNotReused) {
  options_.auto_train = false;  // Only the dictionaries trained here.
  Reopen();
  const std::vector<std::string> lines = codec::SyntheticLogLines(3000, 7);
  AppendLines("app", std::vector<std::string>(lines.begin(), lines.begin() + 1000));
  v1::TrainDictionaryRequest train;
  train.set_pool("app");
  v1::ActivateDictionaryRequest activate;
  activate.set_pool("app");
  auto first = engine_->TrainDictionary(train);
  ASSERT_TRUE(first.ok()) << first.status();
  activate.set_id(first->dictionary().id());
  ASSERT_TRUE(engine_->ActivateDictionary(activate).ok());
  const std::vector<std::string> with_first =
      AppendLines("app", std::vector<std::string>(lines.begin() + 1000, lines.begin() + 2000));
  // The first dictionary's table: the oldest of the family, written by this flush.
  ASSERT_TRUE(engine_->Flush().ok());
  auto second = engine_->TrainDictionary(train);
  ASSERT_TRUE(second.ok()) << second.status();
  activate.set_id(second->dictionary().id());
  ASSERT_TRUE(engine_->ActivateDictionary(activate).ok());
  const std::vector<std::string> second_lines(lines.begin() + 2000, lines.end());
  const std::vector<std::string> with_second = AppendLines("app", second_lines);
  ASSERT_EQ(FrameDictionary(with_first[0]), first->dictionary().id());
  ASSERT_EQ(FrameDictionary(with_second[0]), second->dictionary().id());
  EXPECT_TRUE(engine_->DictionariesUnreadableAtOpen().ok());
  ASSERT_TRUE(engine_->Flush().ok());
  engine_.reset();
  ASSERT_TRUE(store::DamageTableData(options_.store.path, "dictionaries", 0.02).ok());

  for (int open = 0; open < 2; ++open) {
    Reopen();
    EXPECT_EQ(engine_->DictionariesUnreadableAtOpen().code(), StatusCode::kDataLoss);
    EXPECT_NE(engine_->DictionariesUnreadableAtOpen().message().find(
                  absl::StrCat(first->dictionary().id())),
              std::string::npos)
        << engine_->DictionariesUnreadableAtOpen();
    EXPECT_EQ(engine_->Get(with_first[0]).status().code(), StatusCode::kDataLoss);
    ExpectAllReadBack(with_second, second_lines);
    auto third = engine_->TrainDictionary(train);
    ASSERT_TRUE(third.ok()) << third.status();
    EXPECT_GT(third->dictionary().id(), second->dictionary().id());
    for (const v1::DictionaryInfo& listed : Dictionaries()) {
      EXPECT_NE(listed.id(), first->dictionary().id());
    }
  }
}

// The newest dictionary unreadable: its id is the largest given, and the next one goes
// on from the lease past it, not from the largest id that can be read.
TEST_F(DictionaryLifecycleTest, TheIdOfAnUnreadableNewestDictionaryIsNotGivenAgain) {
  options_.auto_train = false;  // Only the dictionaries trained here.
  Reopen();
  AppendLines("app", codec::SyntheticLogLines(1000, 7));
  v1::TrainDictionaryRequest train;
  train.set_pool("app");
  train.set_activate(true);
  auto active = engine_->TrainDictionary(train);
  ASSERT_TRUE(active.ok() && active->activated()) << active.status();
  ASSERT_TRUE(engine_->Flush().ok());
  train.set_activate(false);
  // Two more, stored and not active, in one table: a point read of a smaller key (the
  // active one) lands in that table's first block, which stays whole. (RocksDB may
  // search a few level-0 tables without checking their key ranges.)
  ASSERT_TRUE(engine_->TrainDictionary(train).ok());
  auto newest = engine_->TrainDictionary(train);
  ASSERT_TRUE(newest.ok()) << newest.status();
  ASSERT_GT(newest->dictionary().id(), active->dictionary().id());
  ASSERT_TRUE(engine_->Flush().ok());
  engine_.reset();
  ASSERT_TRUE(
      store::DamageDictionaryAtTableEnd(options_.store.path, newest->dictionary().id()).ok());
  Reopen();
  EXPECT_NE(engine_->DictionariesUnreadableAtOpen().message().find(
                absl::StrCat(newest->dictionary().id())),
            std::string::npos)
      << engine_->DictionariesUnreadableAtOpen();
  auto next = engine_->TrainDictionary(train);
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_GT(next->dictionary().id(), newest->dictionary().id());
}

// A store written before the id lease: its first open takes one (past every stored id);
// without one, damage to any dictionary stops the open (an unreadable id might be the
// largest given).
TEST_F(DictionaryLifecycleTest, AStoreFromBeforeTheIdLeaseTakesOneAndWithoutOneStopsOnDamage) {
  const auto write_old_store = [&] {
    engine_.reset();
    std::filesystem::remove_all(options_.store.path);
    auto store = store::Store::Open(options_.store);
    ASSERT_TRUE(store.ok()) << store.status();
    storage::DictionaryRecord dict;
    dict.set_id(codec::kMinDictionaryId + 5);
    dict.set_pool_id(1);
    dict.set_content(codec::TrainDictionaryForTest(codec::SyntheticLogLines(2000, 3), 4096,
                                                   dict.id()));
    ASSERT_TRUE((*store)->PutDictionary(dict).ok());
    ASSERT_TRUE((*store)->Flush().ok());
    EXPECT_EQ(*(*store)->DictionaryIdLease(), 0u);
  };
  write_old_store();
  Reopen();
  engine_.reset();
  {
    auto store = store::Store::Open(options_.store);
    ASSERT_TRUE(store.ok()) << store.status();
    EXPECT_EQ(*(*store)->DictionaryIdLease(),
              codec::kMinDictionaryId + 6 + dictionary::DictionaryManager::kIdLeaseStep);
  }
  write_old_store();
  ASSERT_TRUE(store::DamageTableData(options_.store.path, "dictionaries", 0.5).ok());
  absl::StatusOr<std::unique_ptr<LogEngine>> refused = LogEngine::Open(options_);
  EXPECT_EQ(refused.status().code(), StatusCode::kDataLoss) << refused.status();
}

// The same damage to a pool's active dictionary: the pool goes on without one. Its
// records that name it read as DATA_LOSS, new appends are stored and read back, and the
// automatic trainer, seeing a pool without a dictionary, trains and activates a new one.
TEST_F(DictionaryLifecycleTest, APoolWhoseActiveDictionaryIsUnreadableGoesOnWithoutOne) {
  options_.auto_train = false;  // Only the dictionary trained here, at first.
  Reopen();
  const std::vector<std::string> before = AppendLines("app", codec::SyntheticLogLines(1000, 7));
  v1::TrainDictionaryRequest train;
  train.set_pool("app");
  train.set_activate(true);
  auto trained = engine_->TrainDictionary(train);
  ASSERT_TRUE(trained.ok() && trained->activated()) << trained.status();
  const std::vector<std::string> with_it = AppendLines("app", codec::SyntheticLogLines(100, 8));
  ASSERT_EQ(FrameDictionary(with_it[0]), trained->dictionary().id());
  ASSERT_TRUE(engine_->Flush().ok());
  engine_.reset();
  ASSERT_TRUE(store::DamageTableData(options_.store.path, "dictionaries", 0.02).ok());

  options_.auto_train = true;
  Reopen();
  EXPECT_NE(engine_->DictionariesUnreadableAtOpen().message().find(absl::StrCat(
                "pool 'app' goes on without its active dictionary ", trained->dictionary().id())),
            std::string::npos)
      << engine_->DictionariesUnreadableAtOpen();
  EXPECT_EQ(engine_->Get(with_it[0]).status().code(), StatusCode::kDataLoss);
  EXPECT_NE(engine_->GetPool("app")->damaged_at_open().find(absl::StrCat(
                "DATA_LOSS: its active dictionary ", trained->dictionary().id(),
                " cannot be read")),
            std::string::npos)
      << engine_->GetPool("app")->damaged_at_open();
  const std::vector<std::string> lines = codec::SyntheticLogLines(2000, 9);
  const std::vector<std::string> after = AppendLines("app", lines);
  ExpectAllReadBack(after, lines);
  EXPECT_EQ(FrameDictionary(after[0]), 0u);  // No dictionary to compress with.
  // The automatic trainer's first dictionary for the pool replaces the lost one.
  ASSERT_TRUE(engine_->WaitForAutoTrainingForTest(absl::Seconds(60)));
  const uint32_t replaced = engine_->GetPool("app")->active_dictionary_id();
  EXPECT_GT(replaced, trained->dictionary().id());
  const std::vector<std::string> next = AppendLines("app", {lines[0]});
  EXPECT_EQ(FrameDictionary(next[0]), replaced);
}

// Re-compression past records that cannot be read (here two stored frames with a
// malformed header, between readable records): they stay as they are stored (still
// DATA_LOSS), counted and listed in the job's status, and every other record is
// re-encoded with the new dictionary. Before, the job FAILED at the first of them and
// re-encoded nothing after it.
TEST_F(DictionaryLifecycleTest, RecompressionLeavesUnreadableRecordsAndReencodesTheRest) {
  options_.auto_train = false;  // Only the dictionary trained here.
  options_.recompressor.batch_records = 64;  // The job runs many batches.
  Reopen();
  const std::vector<std::string> before_lines = codec::SyntheticLogLines(1000, 7);
  const std::vector<std::string> before = AppendLines("app", before_lines);
  engine_.reset();
  std::vector<std::string> damaged;
  {
    auto store = store::Store::Open(options_.store);
    ASSERT_TRUE(store.ok()) << store.status();
    auto pools = (*store)->LoadPools();
    ASSERT_TRUE(pools.ok() && pools->size() == 1) << pools.status();
    const store::StoredPool& app = pools->front();
    ASSERT_EQ(app.last_seq, before.size());
    const std::string bad = "\x01\xff";  // A zstd frame header cut short.
    ASSERT_TRUE((*store)->WriteRecords({{app.record.id(), app.last_seq + 1, 2, bad},
                                        {app.record.id(), app.last_seq + 2, 2, bad}})
                    .ok());
    damaged = {absl::StrCat("app/", app.last_seq + 1), absl::StrCat("app/", app.last_seq + 2)};
  }
  Reopen();
  ASSERT_EQ(engine_->Get(damaged[0]).status().code(), StatusCode::kDataLoss);
  const std::vector<std::string> after_lines = codec::SyntheticLogLines(1000, 9);
  const std::vector<std::string> after = AppendLines("app", after_lines);
  v1::TrainDictionaryRequest train;
  train.set_pool("app");
  train.set_activate(true);
  auto trained = engine_->TrainDictionary(train);
  ASSERT_TRUE(trained.ok() && trained->activated()) << trained.status();
  const uint32_t target = trained->dictionary().id();

  v1::RecompressRequest recompress;
  recompress.set_pool("app");
  ASSERT_TRUE(engine_->Recompress(recompress).ok());
  ASSERT_TRUE(engine_->WaitForRecompressForTest("app", absl::Seconds(60)));
  auto job = engine_->GetRecompressStatus(recompress);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->state(), v1::RecompressStatus::DONE) << job->error();
  EXPECT_EQ(job->unreadable(), 2u);
  std::vector<std::string> listed;
  for (uint64_t seq : job->unreadable_seqs()) listed.push_back(absl::StrCat("app/", seq));
  EXPECT_EQ(listed, damaged);
  EXPECT_EQ(job->records_done(), before.size() + damaged.size() + after.size());
  EXPECT_EQ(job->records_rewritten(), before.size() + after.size());
  EXPECT_EQ(FrameDictionary(before[0]), target);
  EXPECT_EQ(FrameDictionary(after.back()), target);
  ExpectAllReadBack(before, before_lines);
  ExpectAllReadBack(after, after_lines);
  for (const std::string& id : damaged) {
    EXPECT_EQ(engine_->Get(id).status().code(), StatusCode::kDataLoss) << id;
  }
  // The counts are stored with the job's progress: a restart keeps them.
  Reopen();
  auto stored = engine_->GetRecompressStatus(recompress);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(stored->unreadable(), 2u);
  EXPECT_EQ(stored->unreadable_seqs_size(), 2);
}

}  // namespace
}  // namespace dictlog::engine
