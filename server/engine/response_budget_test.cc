// The bytes a read call returns through LogEngine over a real RocksDB: MultiGet's
// EngineOptions::max_response_bytes (exact boundary, duplicated ids, block mode, a
// single oversized record, chunks; the packed MultiGetFrames answers the same ids) and
// Scan's per-chunk bound (kScanChunkBytes).
#include <random>

#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "server/engine/log_engine.h"

namespace dictlog::engine {
namespace {

using ::absl::StatusCode;

// `n` bytes no compressor shrinks (stored raw, stored size about the payload size).
std::string Incompressible(size_t n, uint32_t seed) {
  std::mt19937 random(seed);
  std::string out(n, '\0');
  for (char& c : out) c = static_cast<char>(random());
  return out;
}

class ResponseBudgetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.store.path = FreshTestDir();
    options_.auto_train = false;
    options_.max_response_bytes = 9000;
    v1::PoolOptions block;
    block.set_storage_mode(v1::STORAGE_MODE_BLOCK);
    block.set_block_bytes(1024);
    options_.pools = {{"blocks", block}};
    auto engine = LogEngine::Open(options_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
  }

  std::string AppendOne(absl::string_view category, absl::string_view payload) {
    AppendInput input{category, payload};
    auto ids = engine_->Append({&input, 1});
    EXPECT_TRUE(ids.ok()) << ids.status();
    return ids.ok() ? (*ids)[0] : "";
  }

  std::vector<absl::StatusOr<v1::Record>> MultiGet(const std::vector<std::string>& ids) {
    auto results = engine_->MultiGet(ids);
    EXPECT_TRUE(results.ok()) << results.status();
    EXPECT_EQ(results->size(), ids.size());
    if (results.ok()) ExpectPackedAnswersTheSameIds(ids, *results);
    return results.ok() ? *std::move(results) : std::vector<absl::StatusOr<v1::Record>>();
  }

  // MultiGetFramesPacked answers a record exactly where MultiGet does and otherwise the
  // same error code.
  void ExpectPackedAnswersTheSameIds(const std::vector<std::string>& ids,
                                     const std::vector<absl::StatusOr<v1::Record>>& results) {
    v1::PackedFrames packed;
    ASSERT_TRUE(engine_->MultiGetFramesPacked(ids, nullptr, nullptr, &packed).ok());
    int error = 0;
    for (size_t i = 0; i < results.size(); ++i) {
      if (results[i].ok()) continue;
      ASSERT_LT(error, packed.errors_size()) << i;
      EXPECT_EQ(packed.errors(error).index(), i);
      EXPECT_EQ(packed.errors(error++).error().code(),
                static_cast<int>(results[i].status().code())) << i;
    }
    EXPECT_EQ(error, packed.errors_size());
    EXPECT_EQ(static_cast<size_t>(packed.sizes_size()), results.size() - error);
  }

  // How many results are records, checking the rest are RESOURCE_EXHAUSTED.
  static size_t AnsweredThenExhausted(
      const std::vector<absl::StatusOr<v1::Record>>& results) {
    size_t answered = 0;
    while (answered < results.size() && results[answered].ok()) ++answered;
    for (size_t i = answered; i < results.size(); ++i) {
      EXPECT_EQ(results[i].status().code(), StatusCode::kResourceExhausted) << i;
    }
    return answered;
  }

  EngineOptions options_;
  std::unique_ptr<LogEngine> engine_;
};

TEST_F(ResponseBudgetTest, RecordsFillTheBudgetExactlyAndTheNextIsAskedAgain) {
  std::vector<std::string> ids;
  for (uint32_t i = 0; i < 5; ++i) ids.push_back(AppendOne("r", Incompressible(3000, i)));
  const auto results = MultiGet(ids);  // 3 x 3000 = 9000 fit; the 4th does not.
  ASSERT_EQ(AnsweredThenExhausted(results), 3u);
  EXPECT_EQ(results[2]->payload(), Incompressible(3000, 2));
  EXPECT_NE(results[3].status().message().find("ask again"), absl::string_view::npos);
  // Asked again, the rest is answered.
  const auto rest = MultiGet({ids[3], ids[4]});
  ASSERT_EQ(AnsweredThenExhausted(rest), 2u);
  EXPECT_EQ(rest[1]->payload(), Incompressible(3000, 4));
}

TEST_F(ResponseBudgetTest, ManyDistinctRecordsStopTheReadsPastTheBudget) {
  // More records than one read batch (16): the reads stop at the budget, and every id
  // after the first refused one (errors too) is asked again.
  std::vector<std::string> ids;
  for (uint32_t i = 0; i < 40; ++i) ids.push_back(AppendOne("r", Incompressible(3000, i)));
  ids.push_back("bad");
  const auto results = MultiGet(ids);
  ASSERT_EQ(AnsweredThenExhausted(results), 3u);
  EXPECT_EQ(results[1]->payload(), Incompressible(3000, 1));
  const auto rest = MultiGet({ids.begin() + 37, ids.end()});
  ASSERT_EQ(AnsweredThenExhausted({rest.begin(), rest.begin() + 3}), 3u);
  EXPECT_EQ(rest[3].status().code(), StatusCode::kInvalidArgument);
}

TEST_F(ResponseBudgetTest, CompressedRecordsCountTheirDecodedSize) {
  const std::string id = AppendOne("z", std::string(3001, 'z'));  // Stored tiny.
  EXPECT_EQ(AnsweredThenExhausted(MultiGet({id, id, id, id})), 2u);
}

TEST_F(ResponseBudgetTest, DuplicatedIdsCountEveryTime) {
  const std::string id = AppendOne("r", Incompressible(1000, 7));
  std::vector<std::string> ids(12, id);
  const auto results = MultiGet(ids);
  ASSERT_EQ(AnsweredThenExhausted(results), 9u);
  EXPECT_EQ(results[8]->payload(), Incompressible(1000, 7));
}

TEST_F(ResponseBudgetTest, AFirstRecordOverTheBudgetIsAnsweredAlone) {
  const std::string big = AppendOne("r", Incompressible(20000, 1));
  const std::string small = AppendOne("r", "x");
  const auto results = MultiGet({big, small});
  ASSERT_EQ(AnsweredThenExhausted(results), 1u);
  EXPECT_EQ(results[0]->payload().size(), 20000u);
  EXPECT_EQ(AnsweredThenExhausted(MultiGet({small, big})), 1u);
}

TEST_F(ResponseBudgetTest, ErrorsBeforeTheBoundStayAndEveryIdAfterItIsAskedAgain) {
  const std::string id = AppendOne("r", Incompressible(5000, 3));
  const auto results = MultiGet({"r/99", "bad", id, id, "bad", "r/98"});
  EXPECT_EQ(results[0].status().code(), StatusCode::kNotFound);
  EXPECT_EQ(results[1].status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(results[2].ok());
  for (size_t i = 3; i < results.size(); ++i) {
    EXPECT_EQ(results[i].status().code(), StatusCode::kResourceExhausted) << i;
  }
}

TEST_F(ResponseBudgetTest, TheBoundHoldsAcrossReadChunks) {
  const std::string id = AppendOne("r", Incompressible(3, 5));
  std::vector<std::string> ids(LogEngine::kReadChunkIds * 4, id);
  EXPECT_EQ(AnsweredThenExhausted(MultiGet(ids)), 3000u);  // 3000 x 3 = 9000.
}

TEST_F(ResponseBudgetTest, BlockEntriesCountTheirLengthInTheBlock) {
  std::vector<AppendInput> batch;
  std::vector<std::string> payloads;
  for (uint32_t i = 0; i < 40; ++i) payloads.push_back(Incompressible(300, 100 + i));
  for (const std::string& payload : payloads) batch.push_back({"blocks", payload});
  auto ids = engine_->Append(batch);
  ASSERT_TRUE(ids.ok()) << ids.status();
  // Sealed into blocks of 1 KiB as they arrived: the first records are block entries.
  const auto results = MultiGet(*ids);  // 30 x 300 = 9000.
  ASSERT_EQ(AnsweredThenExhausted(results), 30u);
  for (size_t i = 0; i < 30; ++i) EXPECT_EQ(results[i]->payload(), payloads[i]) << i;
}

TEST_F(ResponseBudgetTest, ScanChunksStayUnderTheirByteBound) {
  std::vector<std::string> payloads;
  for (uint32_t i = 0; i < 12; ++i) {
    // Alternately incompressible (stored big) and compressible (stored small).
    payloads.push_back(i % 2 == 0 ? Incompressible(900 << 10, i)
                                  : std::string(900 << 10, static_cast<char>('a' + i)));
    AppendOne("big", payloads.back());
  }
  std::vector<v1::Record> all;
  size_t chunks = 0;
  absl::Status status = engine_->Scan({"", "big", "", 0}, [&](std::vector<v1::Record> chunk) {
    size_t bytes = 0;
    for (const v1::Record& record : chunk) bytes += record.payload().size();
    EXPECT_LE(bytes, LogEngine::kScanChunkBytes);
    ++chunks;
    for (v1::Record& record : chunk) all.push_back(std::move(record));
    return absl::OkStatus();
  });
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_EQ(all.size(), payloads.size());
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i].payload(), payloads[i]) << i;
  EXPECT_GE(chunks, 3u);
  // With a limit, a chunk cut by bytes does not lose the limit's count.
  std::vector<v1::Record> some;
  status = engine_->Scan({"big", "", "big/2", 7}, [&](std::vector<v1::Record> chunk) {
    for (v1::Record& record : chunk) some.push_back(std::move(record));
    return absl::OkStatus();
  });
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_EQ(some.size(), 7u);
  EXPECT_EQ(some.back().id(), "big/8");
}

TEST_F(ResponseBudgetTest, AZeroBudgetIsRefused) {
  EngineOptions options = options_;
  options.store.path = FreshTestDir();
  options.max_response_bytes = 0;
  EXPECT_EQ(LogEngine::Open(options).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dictlog::engine
