// Issue 16 item 4: a read that took a stored value before a re-compression rewrote it,
// and looks the value's dictionary up after `dict gc` retired that dictionary, still
// returns the record (it reads the value again). The interleaving is forced by the
// engine's lookup hook: the re-compression and the gc run inside the read, between
// "value read" and "dictionary looked up". Get, MultiGet, Scan, Verify and GetFrame,
// in record and block mode; a dictionary that is really missing is still DATA_LOSS.
#include <algorithm>

#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "codec/test_dictionary.h"
#include "server/engine/log_engine.h"
#include "server/store/store.h"

namespace dictlog::engine {
namespace {

using ::absl::StatusCode;

class ReadDuringGcTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    options_.store.path = FreshTestDir();
    options_.auto_train = false;
    options_.default_pool_options.set_dictionary_bytes(4096);
    options_.recompressor.max_records_per_second = 1e9;  // No throttling pauses.
    if (block_mode()) {
      options_.default_pool_options.set_storage_mode(v1::STORAGE_MODE_BLOCK);
      options_.default_pool_options.set_block_bytes(2048);
    }
    Reopen();
    // Records named by dictionary `old_`, then `new_` active: a re-compression moves
    // every record to `new_` and gc may retire `old_`.
    AppendLines(codec::SyntheticLogLines(400, 1));
    old_ = Train();
    lines_ = codec::SyntheticLogLines(300, 2);
    ids_ = AppendLines(lines_);
    new_ = Train();
  }

  bool block_mode() const { return GetParam(); }

  void Reopen() {
    engine_.reset();
    auto engine = LogEngine::Open(options_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
  }

  std::vector<std::string> AppendLines(const std::vector<std::string>& lines) {
    std::vector<std::string> ids;
    for (size_t start = 0; start < lines.size(); start += 100) {
      std::vector<AppendInput> batch;
      for (size_t i = start; i < std::min(lines.size(), start + 100); ++i) {
        batch.push_back({"app", lines[i]});
      }
      auto appended = engine_->Append(batch);
      EXPECT_TRUE(appended.ok()) << appended.status();
      if (appended.ok()) ids.insert(ids.end(), appended->begin(), appended->end());
    }
    return ids;
  }

  // Trains and activates a dictionary for "app"; its id.
  uint32_t Train() {
    v1::TrainDictionaryRequest train;
    train.set_pool("app");
    auto trained = engine_->TrainDictionary(train);
    EXPECT_TRUE(trained.ok()) << trained.status();
    if (!trained.ok()) return 0;
    v1::ActivateDictionaryRequest activate;
    activate.set_pool("app");
    activate.set_id(trained->dictionary().id());
    EXPECT_TRUE(engine_->ActivateDictionary(activate).ok());
    return trained->dictionary().id();
  }

  // The first lookup of `old_` re-compresses the pool and gcs `old_` away, then lets
  // the read go on.
  void RetireOldDictionaryInsideTheNextRead() {
    engine_->SetLookupHookForTest([this](absl::Span<const uint32_t> ids) {
      if (retired_ || std::find(ids.begin(), ids.end(), old_) == ids.end()) return;
      retired_ = true;
      v1::RecompressRequest recompress;
      recompress.set_pool("app");
      ASSERT_TRUE(engine_->Recompress(recompress).ok());
      ASSERT_TRUE(engine_->WaitForRecompressForTest("app", absl::Seconds(120)));
      auto gc = engine_->GcDictionaries({});
      ASSERT_TRUE(gc.ok()) << gc.status();
      ASSERT_EQ(gc->deleted_size(), 1);
      EXPECT_EQ(gc->deleted(0).id(), old_);
    });
  }

  // Checks the race really ran: the hook fired and the frames moved off `old_`.
  void ExpectRetiredDuringTheRead() {
    EXPECT_TRUE(retired_);
    engine_->SetLookupHookForTest(nullptr);
    auto list = engine_->ListDictionaries({});
    ASSERT_TRUE(list.ok());
    for (const v1::DictionaryInfo& info : list->dictionaries()) {
      EXPECT_NE(info.id(), old_);
    }
  }

  EngineOptions options_;
  std::unique_ptr<LogEngine> engine_;
  uint32_t old_ = 0, new_ = 0;
  std::vector<std::string> lines_, ids_;
  bool retired_ = false;
};

TEST_P(ReadDuringGcTest, Get) {
  ASSERT_NE(old_, new_);
  RetireOldDictionaryInsideTheNextRead();
  auto record = engine_->Get(ids_[0]);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->payload(), lines_[0]);
  ExpectRetiredDuringTheRead();
}

TEST_P(ReadDuringGcTest, MultiGet) {
  RetireOldDictionaryInsideTheNextRead();
  auto results = engine_->MultiGet(ids_);
  ASSERT_TRUE(results.ok()) << results.status();
  for (size_t i = 0; i < ids_.size(); ++i) {
    ASSERT_TRUE((*results)[i].ok()) << ids_[i] << ": " << (*results)[i].status();
    EXPECT_EQ((*results)[i]->payload(), lines_[i]);
  }
  ExpectRetiredDuringTheRead();
}

TEST_P(ReadDuringGcTest, Scan) {
  RetireOldDictionaryInsideTheNextRead();
  ScanSpec spec;
  spec.pool = "app";
  spec.from_id = ids_[0];
  std::vector<std::string> payloads;
  absl::Status status = engine_->Scan(spec, [&](std::vector<v1::Record> chunk) {
    for (const v1::Record& r : chunk) payloads.push_back(r.payload());
    return absl::OkStatus();
  });
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(payloads, lines_);
  ExpectRetiredDuringTheRead();
}

TEST_P(ReadDuringGcTest, Verify) {
  RetireOldDictionaryInsideTheNextRead();
  auto verified = engine_->Verify({}, [] { return false; });
  ASSERT_TRUE(verified.ok()) << verified.status();
  EXPECT_EQ(verified->records_checked(), 700u);
  EXPECT_EQ(verified->corrupt_records(), 0u)
      << (verified->corrupt().empty() ? "" : verified->corrupt(0).error());
  ExpectRetiredDuringTheRead();
}

TEST_P(ReadDuringGcTest, GetFrame) {
  RetireOldDictionaryInsideTheNextRead();
  auto frame = engine_->GetFrame(ids_[0]);
  ASSERT_TRUE(frame.ok()) << frame.status();
  if (block_mode()) {
    ExpectRetiredDuringTheRead();  // A block entry is decoded to export it alone.
  } else {
    EXPECT_FALSE(retired_);  // A single frame is exported as stored, without a lookup.
  }
}

// A store whose records name a dictionary that is gone (a corrupt store) still reads
// as DATA_LOSS, also while gcs retire other dictionaries during the read.
TEST_P(ReadDuringGcTest, ReallyMissingDictionaryIsStillDataLoss) {
  engine_.reset();
  {
    auto store = store::Store::Open(options_.store);
    ASSERT_TRUE(store.ok()) << store.status();
    storage::DictionaryRecord old;
    old.set_id(old_);
    old.set_pool("app");
    old.set_pool_id(1);
    ASSERT_TRUE((*store)->RetireDictionary(old).ok());
  }
  Reopen();
  // Each lookup first imports an unreferenced dictionary and gcs it: the retirement
  // generation moves during every attempt, and the record is read again each time.
  int gcs = 0;
  v1::ImportDictionaryRequest import;
  import.set_pool("app");
  import.set_content(
      codec::TrainDictionaryForTest(codec::SyntheticLogLines(2000, 5), 4096, 99999));
  engine_->SetLookupHookForTest([&](absl::Span<const uint32_t> ids) {
    if (std::find(ids.begin(), ids.end(), old_) == ids.end()) return;
    ASSERT_TRUE(engine_->ImportDictionary(import).ok());
    auto gc = engine_->GcDictionaries({});
    ASSERT_TRUE(gc.ok());
    gcs += gc->deleted_size();
  });
  auto record = engine_->Get(ids_[0]);
  EXPECT_EQ(record.status().code(), StatusCode::kDataLoss) << record.status();
  EXPECT_GT(gcs, 1);  // Read again at least once, and still DATA_LOSS.
  engine_->SetLookupHookForTest(nullptr);
  auto results = engine_->MultiGet({ids_[0], ids_[1]});
  ASSERT_TRUE(results.ok());
  EXPECT_EQ((*results)[0].status().code(), StatusCode::kDataLoss);
  auto verified = engine_->Verify({}, [] { return false; });
  ASSERT_TRUE(verified.ok());
  EXPECT_GE(verified->corrupt_records(), 300u);
}

INSTANTIATE_TEST_SUITE_P(RecordAndBlockMode, ReadDuringGcTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "block" : "record";
                         });

}  // namespace
}  // namespace dictlog::engine
