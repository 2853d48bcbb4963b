// LogEngine::MultiGetFrames and ScanFrames over a real RocksDB: the frames decode (zstd
// with the dictionary GetDictionary returns) to exactly what MultiGet and Scan return,
// per-id errors and the response budget answer the same ids, scans come in the same
// chunks, block entries and records stored raw come back decoded, and a FramePolicy
// that refuses a pool gets payloads only. MultiGetFramesPacked holds exactly
// MultiGetFrames' results in every case.
#include <zstd.h>

#include <random>

#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "codec/dictionary_check.h"
#include "codec/test_dictionary.h"
#include "server/engine/engine_test_util.h"
#include "server/engine/log_engine.h"

namespace dictlog::engine {
namespace {

using ::absl::StatusCode;

class MultiGetFramesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.store.path = FreshTestDir();
    options_.auto_train = false;
    options_.default_pool_options.set_dictionary_bytes(4096);
    v1::PoolOptions block;
    block.set_storage_mode(v1::STORAGE_MODE_BLOCK);
    block.set_block_bytes(1024);
    options_.pools = {{"blocks", block}};
    options_.routes = {{"", "app-", "apps"}};
    Open();
  }

  void Open() {
    auto engine = LogEngine::Open(options_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
  }

  std::vector<std::string> AppendLines(const std::string& category,
                                       const std::vector<std::string>& lines) {
    std::vector<std::string> ids;
    for (size_t start = 0; start < lines.size(); start += 100) {
      std::vector<AppendInput> batch;
      for (size_t i = start; i < std::min(lines.size(), start + 100); ++i) {
        batch.push_back({category, lines[i]});
      }
      auto appended = engine_->Append(batch);
      EXPECT_TRUE(appended.ok()) << appended.status();
      if (appended.ok()) ids.insert(ids.end(), appended->begin(), appended->end());
    }
    return ids;
  }

  // A frame result decoded with zstd and the dictionary GetDictionary returns.
  absl::StatusOr<std::string> Decode(const v1::RecordFrame& frame) {
    if (frame.content_case() == v1::RecordFrame::kPayload) return frame.payload();
    std::string content;
    if (frame.dictionary_id() != 0) {
      v1::GetDictionaryRequest request;
      request.set_id(frame.dictionary_id());
      auto dictionary = engine_->GetDictionary(request);
      if (!dictionary.ok()) return dictionary.status();
      content = dictionary->content();
      // The frame carries the check of the content GetDictionary returns.
      EXPECT_EQ(frame.dictionary_check(), codec::DictionaryCheck(content)) << frame.id();
      EXPECT_EQ(dictionary->dictionary().content_check(), codec::DictionaryCheck(content));
    } else {
      EXPECT_EQ(frame.dictionary_check(), 0u) << frame.id();
    }
    const unsigned long long size =
        ZSTD_getFrameContentSize(frame.frame().data(), frame.frame().size());
    if (ZSTD_isError(size) || size > (64u << 20)) return absl::DataLossError("bad size");
    std::string out(size, '\0');
    ZSTD_DCtx* dctx = ZSTD_createDCtx();
    const size_t n =
        ZSTD_decompress_usingDict(dctx, out.data(), out.size(), frame.frame().data(),
                                  frame.frame().size(), content.data(), content.size());
    ZSTD_freeDCtx(dctx);
    if (ZSTD_isError(n) || n != size) return absl::DataLossError(ZSTD_getErrorName(n));
    return out;
  }

  // MultiGetFrames of `ids` decoded here equals MultiGet of them, result by result.
  void ExpectSameAsMultiGet(const std::vector<std::string>& ids,
                            const FramePolicy& policy = nullptr) {
    auto records = engine_->MultiGet(ids);
    auto frames = engine_->MultiGetFrames(ids, policy);
    ASSERT_TRUE(records.ok() && frames.ok());
    ASSERT_EQ(frames->size(), ids.size());
    for (size_t i = 0; i < ids.size(); ++i) {
      const auto& record = (*records)[i];
      const auto& frame = (*frames)[i];
      ASSERT_EQ(frame.status(), record.status()) << ids[i];
      if (!record.ok()) continue;
      EXPECT_EQ(frame->id(), record->id());
      EXPECT_EQ(frame->category(), record->category());
      absl::StatusOr<std::string> payload = Decode(*frame);
      ASSERT_TRUE(payload.ok()) << ids[i] << ": " << payload.status();
      EXPECT_EQ(*payload, record->payload()) << ids[i];
    }
    ExpectPackedSameAsFrames(ids, policy);
  }

  // MultiGetFramesPacked of `ids` holds exactly MultiGetFrames' results: errors at
  // their indexes, and in request order each record's category, dictionary and frame
  // (without its magic number) or payload.
  void ExpectPackedSameAsFrames(const std::vector<std::string>& ids,
                                const FramePolicy& policy) {
    auto frames = engine_->MultiGetFrames(ids, policy);
    v1::PackedFrames packed;
    ASSERT_TRUE(frames.ok());
    ASSERT_TRUE(engine_->MultiGetFramesPacked(ids, policy, nullptr, &packed).ok());
    int error = 0, record = 0;
    size_t offset = 0;
    for (size_t i = 0; i < ids.size(); ++i) {
      const absl::StatusOr<v1::RecordFrame>& frame = (*frames)[i];
      if (!frame.ok()) {
        ASSERT_LT(error, packed.errors_size()) << ids[i];
        const v1::PackedError& e = packed.errors(error++);
        EXPECT_EQ(e.index(), i);
        EXPECT_EQ(absl::Status(static_cast<StatusCode>(e.error().code()), e.error().message()),
                  frame.status());
        continue;
      }
      ASSERT_LT(record, packed.sizes_size()) << ids[i];
      ASSERT_LT(packed.source_indexes(record), static_cast<uint32_t>(packed.sources_size()));
      const v1::PackedSource& source = packed.sources(packed.source_indexes(record));
      const std::string bytes = packed.data().substr(offset, packed.sizes(record++));
      offset += bytes.size();
      EXPECT_EQ(source.category(), frame->category()) << ids[i];
      EXPECT_EQ(source.payload(), frame->content_case() == v1::RecordFrame::kPayload);
      if (source.payload()) {
        EXPECT_EQ(bytes, frame->payload()) << ids[i];
      } else {
        EXPECT_EQ(source.dictionary_id(), frame->dictionary_id()) << ids[i];
        EXPECT_EQ(source.dictionary_check(), frame->dictionary_check()) << ids[i];
        EXPECT_EQ(std::string("\x28\xb5\x2f\xfd", 4) + bytes, frame->frame()) << ids[i];
      }
    }
    EXPECT_EQ(error, packed.errors_size());
    EXPECT_EQ(record, packed.sizes_size());
    EXPECT_EQ(offset, packed.data().size());
  }

  // One result of ScanFrames decoded here equals the record Scan returned.
  void ExpectSameRecord(const v1::RecordFrame& frame, const v1::Record& record) {
    EXPECT_EQ(frame.id(), record.id());
    EXPECT_EQ(frame.category(), record.category());
    absl::StatusOr<std::string> payload = Decode(frame);
    ASSERT_TRUE(payload.ok()) << frame.id() << ": " << payload.status();
    EXPECT_EQ(*payload, record.payload()) << frame.id();
  }

  // ScanFrames of `spec` decoded here equals Scan of it, chunk by chunk; returns how
  // many of its results are frames.
  size_t ExpectScanFramesSameAsScan(const ScanSpec& spec,
                                    const FramePolicy& policy = nullptr) {
    std::vector<std::vector<v1::Record>> chunks;
    const absl::Status scanned = engine_->Scan(spec, [&](std::vector<v1::Record> chunk) {
      chunks.push_back(std::move(chunk));
      return absl::OkStatus();
    });
    std::vector<std::vector<v1::RecordFrame>> frame_chunks;
    const absl::Status framed =
        engine_->ScanFrames(spec, policy, [&](std::vector<v1::RecordFrame> chunk) {
          frame_chunks.push_back(std::move(chunk));
          return absl::OkStatus();
        });
    EXPECT_EQ(framed, scanned);
    EXPECT_EQ(frame_chunks.size(), chunks.size());
    size_t frames = 0;
    for (size_t c = 0; c < chunks.size() && c < frame_chunks.size(); ++c) {
      EXPECT_EQ(frame_chunks[c].size(), chunks[c].size()) << "chunk " << c;
      for (size_t k = 0; k < chunks[c].size() && k < frame_chunks[c].size(); ++k) {
        ExpectSameRecord(frame_chunks[c][k], chunks[c][k]);
        frames += frame_chunks[c][k].content_case() == v1::RecordFrame::kFrame;
      }
    }
    return frames;
  }

  void TrainAndActivate(const std::string& pool) {
    const absl::Status activated = engine::TrainAndActivate(*engine_, pool);
    ASSERT_TRUE(activated.ok()) << activated;
  }

  EngineOptions options_;
  std::unique_ptr<LogEngine> engine_;
};

TEST_F(MultiGetFramesTest, FramesDecodeToMultiGetsRecordsAcrossDictionaries) {
  const std::vector<std::string> lines = codec::SyntheticLogLines(3000, 7);
  std::vector<std::string> ids = AppendLines("logs", lines);  // No dictionary yet.
  TrainAndActivate("logs");
  const std::vector<std::string> later = AppendLines("logs", codec::SyntheticLogLines(500, 8));
  ids.insert(ids.end(), later.begin(), later.end());
  ids.push_back("bad");
  ids.push_back("logs/999999");
  ids.push_back("nopool/1");
  ids.push_back(ids[3]);  // Asked twice.
  ExpectSameAsMultiGet(ids);
  auto frames = engine_->MultiGetFrames({later[0], ids[0]});
  ASSERT_TRUE(frames.ok());
  ASSERT_TRUE((*frames)[0].ok());
  EXPECT_EQ((*frames)[0]->content_case(), v1::RecordFrame::kFrame);
  EXPECT_NE((*frames)[0]->dictionary_id(), 0u);  // Compressed with the new dictionary.
  EXPECT_NE((*frames)[0]->dictionary_check(), 0u);
  // GetFrame names the same dictionary and check.
  auto single = engine_->GetFrame(later[0]);
  ASSERT_TRUE(single.ok()) << single.status();
  EXPECT_EQ(single->dictionary_id(), (*frames)[0]->dictionary_id());
  EXPECT_EQ(single->dictionary_check(), (*frames)[0]->dictionary_check());
  // After a restart the checks come from the dictionaries loaded from the store.
  engine_.reset();
  Open();
  ExpectSameAsMultiGet(ids);
  auto reopened = engine_->MultiGetFrames({later[0]});
  ASSERT_TRUE(reopened.ok() && (*reopened)[0].ok());
  EXPECT_EQ((*reopened)[0]->dictionary_check(), single->dictionary_check());
}

TEST_F(MultiGetFramesTest, BlockEntriesAndRawRecordsComeBackDecoded) {
  const std::vector<std::string> lines = codec::SyntheticLogLines(400, 9);
  std::vector<std::string> ids = AppendLines("blocks", lines);
  ids.push_back(AppendLines("logs", {"tiny"})[0]);  // Stored raw: does not shrink.
  auto frames = engine_->MultiGetFrames(ids);
  ASSERT_TRUE(frames.ok());
  // Sealed blocks' entries come decoded; the open tail's records are single frames.
  size_t payloads = 0;
  for (const auto& frame : *frames) {
    ASSERT_TRUE(frame.ok()) << frame.status();
    payloads += frame->content_case() == v1::RecordFrame::kPayload;
  }
  EXPECT_GT(payloads, ids.size() / 2);
  EXPECT_EQ(frames->back()->content_case(), v1::RecordFrame::kPayload);  // Raw.
  ExpectSameAsMultiGet(ids);
}

TEST_F(MultiGetFramesTest, RefusedPoolsGetPayloadsAndThePolicySeesTheirCategories) {
  std::vector<std::string> ids = AppendLines("logs", codec::SyntheticLogLines(3000, 3));
  TrainAndActivate("logs");
  ids.push_back(AppendLines("logs", codec::SyntheticLogLines(1, 4))[0]);
  std::vector<std::string> seen;
  const FramePolicy refuse = [&](const std::vector<std::string>& categories) {
    seen = categories;
    return false;
  };
  auto frames = engine_->MultiGetFrames(ids, refuse);
  ASSERT_TRUE(frames.ok());
  for (const auto& frame : *frames) {
    ASSERT_TRUE(frame.ok());
    EXPECT_EQ(frame->content_case(), v1::RecordFrame::kPayload);
  }
  EXPECT_EQ(seen, std::vector<std::string>{"logs"});
  ExpectSameAsMultiGet(ids, refuse);
}

TEST_F(MultiGetFramesTest, ResponseBudgetAnswersTheSameIdsAsMultiGet) {
  options_.max_response_bytes = 5000;
  engine_.reset();
  Open();
  std::vector<std::string> ids = AppendLines("logs", codec::SyntheticLogLines(3000, 5));
  TrainAndActivate("logs");
  const std::vector<std::string> framed = AppendLines("logs", codec::SyntheticLogLines(200, 6));
  std::vector<std::string> mixed = {ids[0], framed[0], ids[1]};
  mixed.insert(mixed.end(), framed.begin() + 1, framed.end());
  mixed.push_back(AppendLines("blocks", codec::SyntheticLogLines(1, 1))[0]);
  auto frames = engine_->MultiGetFrames(mixed);
  ASSERT_TRUE(frames.ok());
  size_t answered = 0;
  while (answered < frames->size() && (*frames)[answered].ok()) ++answered;
  EXPECT_GT(answered, 10u);
  EXPECT_LT(answered, mixed.size());
  for (size_t i = answered; i < frames->size(); ++i) {
    EXPECT_EQ((*frames)[i].status().code(), StatusCode::kResourceExhausted) << i;
  }
  ExpectSameAsMultiGet(mixed);
}

TEST_F(MultiGetFramesTest, TooManyIdsFailTheCall) {
  std::vector<std::string> ids(options_.max_multiget_ids + 1, "logs/1");
  EXPECT_EQ(engine_->MultiGetFrames(ids).status().code(), StatusCode::kInvalidArgument);
  v1::PackedFrames packed;
  EXPECT_EQ(engine_->MultiGetFramesPacked(ids, nullptr, nullptr, &packed).code(),
            StatusCode::kInvalidArgument);
}

TEST_F(MultiGetFramesTest, ScanFramesDecodeToScansRecordsInTheSameChunks) {
  // Two categories in one pool, records before and after its first dictionary: more
  // than one chunk (LogEngine::kScanChunkRecords) of each.
  std::vector<std::string> lines = codec::SyntheticLogLines(1500, 11);
  AppendLines("app-a", lines);
  AppendLines("app-b", codec::SyntheticLogLines(1500, 12));
  TrainAndActivate("apps");
  const std::vector<std::string> later = AppendLines("app-a", codec::SyntheticLogLines(700, 13));
  AppendLines("app-b", codec::SyntheticLogLines(300, 14));
  ScanSpec pool;
  pool.pool = "apps";
  EXPECT_GE(ExpectScanFramesSameAsScan(pool), 1000u);
  ScanSpec category;
  category.category = "app-a";
  EXPECT_GE(ExpectScanFramesSameAsScan(category), 700u);
  category.from_id = later[10];
  category.limit = 300;
  EXPECT_EQ(ExpectScanFramesSameAsScan(category), 300u);
  ScanSpec blocks;  // Sealed blocks' entries come decoded.
  blocks.pool = "blocks";
  AppendLines("blocks", codec::SyntheticLogLines(600, 15));
  EXPECT_LT(ExpectScanFramesSameAsScan(blocks), 300u);
}

TEST_F(MultiGetFramesTest, ScanFramesOfARefusedPoolArePayloadsAndErrorsAreScans) {
  AppendLines("app-a", codec::SyntheticLogLines(3000, 16));
  TrainAndActivate("apps");
  AppendLines("app-a", codec::SyntheticLogLines(100, 17));
  std::vector<std::string> seen;
  const FramePolicy refuse = [&](const std::vector<std::string>& categories) {
    seen = categories;
    return false;
  };
  ScanSpec spec;
  spec.category = "app-a";
  EXPECT_EQ(ExpectScanFramesSameAsScan(spec, refuse), 0u);
  EXPECT_EQ(seen, (std::vector<std::string>{"app-a", "apps"}));
  ScanSpec bad;  // Neither category nor pool.
  EXPECT_EQ(ExpectScanFramesSameAsScan(bad), 0u);
  bad.pool = "apps";
  bad.from_id = "logs/1";  // Another pool's id.
  EXPECT_EQ(ExpectScanFramesSameAsScan(bad), 0u);
  bad.pool = "nopool";
  bad.from_id = "";
  EXPECT_EQ(ExpectScanFramesSameAsScan(bad), 0u);
  // A sink's error ends the scan with it.
  spec.category = "app-a";
  EXPECT_EQ(engine_->ScanFrames(spec, nullptr,
                                [](std::vector<v1::RecordFrame>) {
                                  return absl::AbortedError("stop");
                                }),
            absl::AbortedError("stop"));
}

}  // namespace
}  // namespace dictlog::engine
