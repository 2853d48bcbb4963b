// A store whose record values were written before short frames (ADR 0049: the fixture
// testdata/frames_v1_store, see testdata/make_frames_v1_store.cc: every frame whole, with
// and without a dictionary, and raw values) stays readable: every record through Get,
// MultiGet, GetFrame and both forms of MultiGetFrames, also after today's code has
// written short frames beside them and re-compressed one pool into short frames.
#include <map>

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "absl/strings/str_cat.h"
#include "codec/record_codec.h"
#include "codec/test_dictionary.h"
#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "server/engine/log_engine.h"
#include "server/store/store.h"

namespace dictlog::engine {
namespace {

// One record the fixture holds: its id, category and payload.
struct Expected {
  std::string id;
  std::string category;
  std::string payload;
};

void Add(const std::string& pool, size_t first, const std::vector<std::string>& lines,
         const char* even, const char* odd, std::vector<Expected>* out) {
  for (size_t i = 0; i < lines.size(); ++i) {
    out->push_back({absl::StrCat(pool, "/", first + i), i % 2 == 0 ? even : odd, lines[i]});
  }
}

// As make_frames_v1_store wrote them.
std::vector<Expected> FixtureRecords() {
  std::vector<Expected> all;
  Add("recs", 1, codec::SyntheticLogLines(800, 31), "rec-a", "rec-b", &all);
  Add("recs", 801, codec::SyntheticLogLines(300, 32), "rec-a", "rec-a", &all);
  Add("plain", 1, codec::SyntheticLogLines(200, 33), "plain-x", "plain-x", &all);
  Add("raw", 1, {"q7#Zx!9", "\x01k9", "Zq"}, "raw-x", "raw-x", &all);
  return all;
}

// How many of the store's record values (pools 1-3: the fixture's) have each encoding.
// The store must not be open elsewhere.
std::map<codec::Encoding, size_t> StoredEncodings(const std::string& path) {
  std::map<codec::Encoding, size_t> counts;
  store::Store::Options options;
  options.path = path;
  auto store = store::Store::Open(options);
  EXPECT_TRUE(store.ok()) << store.status();
  if (!store.ok()) return counts;
  for (uint32_t pool_id = 1; pool_id <= 3; ++pool_id) {
    auto records = (*store)->ScanRecords(pool_id, 1, 100000);
    EXPECT_TRUE(records.ok()) << records.status();
    if (!records.ok()) continue;
    for (const store::ScannedRecord& record : *records) {
      absl::StatusOr<codec::RecordView> view = codec::ParseRecord(record.value);
      EXPECT_TRUE(view.ok()) << view.status();
      if (view.ok()) ++counts[view->encoding];
    }
  }
  return counts;
}

class FramesV1StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.store.path = FixtureCopy("server/engine/testdata/frames_v1_store");
    options_.auto_train = false;
    options_.routes = {{"", "rec-", "recs"}, {"", "plain-", "plain"}, {"", "raw-", "raw"}};
    Reopen();
  }

  void Reopen() {
    engine_.reset();
    auto engine = LogEngine::Open(options_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
  }

  // Decodes a magicless frame as a client would: stock zstd and the dictionary's
  // content from GetDictionary.
  std::string ClientDecode(absl::string_view frame, uint32_t dictionary_id) {
    ZSTD_DCtx* dctx = ZSTD_createDCtx();
    ZSTD_DCtx_setParameter(dctx, ZSTD_d_format, ZSTD_f_zstd1_magicless);
    if (dictionary_id != 0) {
      v1::GetDictionaryRequest request;
      request.set_id(dictionary_id);
      auto dictionary = engine_->GetDictionary(request);
      EXPECT_TRUE(dictionary.ok()) << dictionary.status();
      if (dictionary.ok()) {
        ZSTD_DCtx_loadDictionary(dctx, dictionary->content().data(),
                                 dictionary->content().size());
      }
    }
    std::string out(4096, '\0');
    const size_t n = ZSTD_decompressDCtx(dctx, out.data(), out.size(), frame.data(),
                                         frame.size());
    ZSTD_freeDCtx(dctx);
    EXPECT_FALSE(ZSTD_isError(n)) << ZSTD_getErrorName(n);
    out.resize(ZSTD_isError(n) ? 0 : n);
    return out;
  }

  void ExpectEveryRecord(const std::vector<Expected>& records) {
    std::vector<std::string> ids;
    for (const Expected& record : records) ids.push_back(record.id);
    for (size_t start = 0; start < ids.size(); start += 64) {
      const auto chunk = absl::MakeConstSpan(ids).subspan(start, 64);
      auto results = engine_->MultiGet(chunk);
      auto frames = engine_->MultiGetFrames(chunk);
      v1::PackedFrames packed;
      ASSERT_TRUE(engine_->MultiGetFramesPacked(chunk, nullptr, nullptr, &packed).ok());
      ASSERT_TRUE(results.ok()) << results.status();
      ASSERT_TRUE(frames.ok()) << frames.status();
      ASSERT_EQ(packed.sizes_size(), static_cast<int>(chunk.size()));
      size_t at = 0;
      for (size_t k = 0; k < chunk.size(); ++k) {
        const Expected& want = records[start + k];
        ASSERT_TRUE((*results)[k].ok()) << want.id << ": " << (*results)[k].status();
        EXPECT_EQ((*results)[k]->payload(), want.payload) << want.id;
        EXPECT_EQ((*results)[k]->category(), want.category) << want.id;
        ASSERT_TRUE((*frames)[k].ok()) << want.id << ": " << (*frames)[k].status();
        const v1::RecordFrame& frame = (*frames)[k].value();
        if (frame.has_payload()) {
          EXPECT_EQ(frame.payload(), want.payload) << want.id;
        } else {
          // A standard frame: its magic, then what a magicless decoder reads.
          ASSERT_EQ(frame.frame().substr(0, 4), "\x28\xb5\x2f\xfd") << want.id;
          EXPECT_EQ(ClientDecode(frame.frame().substr(4), frame.dictionary_id()),
                    want.payload)
              << want.id;
        }
        const absl::string_view bytes(packed.data().data() + at, packed.sizes(k));
        at += packed.sizes(k);
        const v1::PackedSource& source = packed.sources(packed.source_indexes(k));
        EXPECT_EQ(source.category(), want.category) << want.id;
        EXPECT_EQ(source.payload() ? std::string(bytes)
                                   : ClientDecode(bytes, source.dictionary_id()),
                  want.payload)
            << want.id;
      }
    }
    for (const Expected& record : records) {
      auto one = engine_->Get(record.id);
      ASSERT_TRUE(one.ok()) << record.id << ": " << one.status();
      EXPECT_EQ(one->payload(), record.payload) << record.id;
      auto frame = engine_->GetFrame(record.id);
      ASSERT_TRUE(frame.ok()) << record.id << ": " << frame.status();
      EXPECT_EQ(ClientDecode(frame->frame().substr(4), frame->dictionary_id()),
                record.payload)
          << record.id;
    }
  }

  EngineOptions options_;
  std::unique_ptr<LogEngine> engine_;
};

TEST_F(FramesV1StoreTest, TheFixtureHoldsWholeFramesOnly) {
  engine_.reset();
  std::map<codec::Encoding, size_t> counts = StoredEncodings(options_.store.path);
  EXPECT_EQ(counts[codec::Encoding::kShortFrame], 0u);
  EXPECT_GE(counts[codec::Encoding::kZstdFrame], 1100u);  // recs, and some of plain.
  EXPECT_GE(counts[codec::Encoding::kRaw], 3u);
  size_t total = 0;
  for (const auto& [encoding, n] : counts) total += n;
  EXPECT_EQ(total, FixtureRecords().size());
}

TEST_F(FramesV1StoreTest, ReadsEveryRecord) {
  ExpectEveryRecord(FixtureRecords());
  EXPECT_NE(engine_->GetPool("recs")->active_dictionary_id(), 0u);
}

TEST_F(FramesV1StoreTest, ReadsEveryRecordBesideShortFramesAndAfterRecompressingIntoThem) {
  std::vector<Expected> records = FixtureRecords();
  // New appends to a pool of whole frames are short frames.
  const std::vector<std::string> lines = codec::SyntheticLogLines(150, 34);
  std::vector<AppendInput> more;
  for (const std::string& line : lines) more.push_back({"rec-b", line});
  auto appended = engine_->Append(more);
  ASSERT_TRUE(appended.ok()) << appended.status();
  for (size_t i = 0; i < lines.size(); ++i) {
    records.push_back({(*appended)[i], "rec-b", lines[i]});
  }
  ExpectEveryRecord(records);
  engine_.reset();
  std::map<codec::Encoding, size_t> counts = StoredEncodings(options_.store.path);
  EXPECT_EQ(counts[codec::Encoding::kShortFrame], lines.size());
  const size_t whole = counts[codec::Encoding::kZstdFrame];
  Reopen();

  // A new dictionary for "recs", and its records re-encoded with it: short frames.
  const uint64_t stored_before = engine_->GetPool("recs")->stats().stored_bytes();
  v1::TrainDictionaryRequest train;
  train.set_pool("recs");
  train.set_dictionary_bytes(8192);
  auto trained = engine_->TrainDictionary(train);
  ASSERT_TRUE(trained.ok()) << trained.status();
  v1::ActivateDictionaryRequest activate;
  activate.set_pool("recs");
  activate.set_id(trained->dictionary().id());
  ASSERT_TRUE(engine_->ActivateDictionary(activate).ok());
  v1::RecompressRequest recompress;
  recompress.set_pool("recs");
  ASSERT_TRUE(engine_->Recompress(recompress).ok());
  ASSERT_TRUE(engine_->WaitForRecompressForTest("recs", absl::Seconds(60)));
  EXPECT_LT(engine_->GetPool("recs")->stats().stored_bytes(), stored_before);
  Reopen();
  ExpectEveryRecord(records);
  engine_.reset();
  counts = StoredEncodings(options_.store.path);
  EXPECT_EQ(counts[codec::Encoding::kShortFrame], 1100u + lines.size());
  EXPECT_EQ(counts[codec::Encoding::kZstdFrame], whole - 1100u);  // "plain" keeps its own.
}

// `dictlog recompress` with the dictionary the whole frames already name stores them
// again as short frames, without decoding them (a job that scans: here one record of
// the pool names no dictionary).
TEST_F(FramesV1StoreTest, RecompressWithTheSameDictionaryStoresWholeFramesShort) {
  std::vector<Expected> records = FixtureRecords();
  AppendInput incompressible{"rec-b", "q7#Zx!9"};
  auto appended = engine_->Append({&incompressible, 1});
  ASSERT_TRUE(appended.ok()) << appended.status();
  records.push_back({(*appended)[0], "rec-b", "q7#Zx!9"});
  const v1::PoolInfo before = *engine_->GetPool("recs");
  v1::RecompressRequest recompress;
  recompress.set_pool("recs");
  ASSERT_TRUE(engine_->Recompress(recompress).ok());
  ASSERT_TRUE(engine_->WaitForRecompressForTest("recs", absl::Seconds(60)));
  const v1::PoolInfo after = *engine_->GetPool("recs");
  EXPECT_EQ(after.active_dictionary_id(), before.active_dictionary_id());
  EXPECT_EQ(after.stats().records(), before.stats().records());
  EXPECT_EQ(after.stats().raw_bytes(), before.stats().raw_bytes());
  // Each of the 1,100 frames loses 4 or more bytes.
  EXPECT_LE(after.stats().stored_bytes() + 4 * 1100, before.stats().stored_bytes());
  v1::ListDictionariesRequest list;
  list.set_pool("recs");
  auto dictionaries = engine_->ListDictionaries(list);
  ASSERT_TRUE(dictionaries.ok()) << dictionaries.status();
  for (const v1::DictionaryInfo& d : dictionaries->dictionaries()) {
    if (d.id() != after.active_dictionary_id()) continue;
    EXPECT_EQ(d.records(), 1100u);  // Still counted under the dictionary they name.
  }
  Reopen();
  ExpectEveryRecord(records);
  engine_.reset();
  std::map<codec::Encoding, size_t> counts = StoredEncodings(options_.store.path);
  EXPECT_EQ(counts[codec::Encoding::kShortFrame], 1100u);
}

}  // namespace
}  // namespace dictlog::engine
