// A block-mode store whose indexed blocks have the first indexed_block_content version
// (the fixture testdata/indexed_v1_store, see testdata/make_indexed_v1_store.cc: blocks
// sealed by appends, re-encoded with a dictionary, sealed with it, and an open tail)
// stays readable: every record through Get, MultiGet and Scan, Verify finds nothing
// corrupt, and records appended after opening it read beside the old ones.

#include "codec/test_dictionary.h"
#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "server/engine/log_engine.h"

namespace dictlog::engine {
namespace {

std::vector<std::string> IndexedV1FixtureLines() { return codec::SyntheticLogLines(606, 27); }

const char* Category(size_t i) { return i % 2 == 0 ? "blk-a" : "blk-b"; }

class IndexedV1StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.store.path = FixtureCopy("server/engine/testdata/indexed_v1_store");
    options_.auto_train = false;
    options_.routes = {{"", "blk-", "blks"}};
    auto engine = LogEngine::Open(options_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
  }

  // Records 1..lines.size() of "blks" hold `lines`: through MultiGet (64 ids a call, and
  // one id a call) and Get.
  void ExpectRecords(const std::vector<std::string>& lines) {
    std::vector<std::string> ids;
    for (size_t i = 0; i < lines.size(); ++i) ids.push_back("blks/" + std::to_string(i + 1));
    for (size_t start = 0; start < ids.size(); start += 64) {
      const size_t n = std::min<size_t>(64, ids.size() - start);
      auto results = engine_->MultiGet(absl::MakeConstSpan(ids).subspan(start, n));
      ASSERT_TRUE(results.ok()) << results.status();
      for (size_t k = 0; k < n; ++k) {
        const size_t i = start + k;
        ASSERT_TRUE((*results)[k].ok()) << ids[i] << ": " << (*results)[k].status();
        ASSERT_EQ((*results)[k]->payload(), lines[i]) << ids[i];
        ASSERT_EQ((*results)[k]->category(), Category(i)) << ids[i];
      }
    }
    for (size_t i = 0; i < ids.size(); ++i) {
      auto one = engine_->Get(ids[i]);
      ASSERT_TRUE(one.ok()) << ids[i] << ": " << one.status();
      ASSERT_EQ(one->payload(), lines[i]) << ids[i];
      ASSERT_EQ(one->category(), Category(i)) << ids[i];
      auto alone = engine_->MultiGet({&ids[i], 1});
      ASSERT_TRUE(alone.ok() && (*alone)[0].ok()) << ids[i];
      ASSERT_EQ((*alone)[0]->payload(), lines[i]) << ids[i];
    }
  }

  // Scan of the whole pool and Verify.
  void ExpectScanAndVerify(const std::vector<std::string>& lines) {
    std::vector<v1::Record> scanned;
    ScanSpec spec;
    spec.pool = "blks";
    ASSERT_TRUE(engine_->Scan(spec, [&](std::vector<v1::Record> chunk) {
      for (auto& r : chunk) scanned.push_back(std::move(r));
      return absl::OkStatus();
    }).ok());
    ASSERT_EQ(scanned.size(), lines.size());
    for (size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(scanned[i].payload(), lines[i]);
    auto verify = engine_->Verify(v1::VerifyRequest(), [] { return false; });
    ASSERT_TRUE(verify.ok()) << verify.status();
    EXPECT_EQ(verify->records_checked(), lines.size());
    EXPECT_EQ(verify->corrupt_records(), 0u);
    EXPECT_TRUE(verify->pool_errors().empty());
  }

  EngineOptions options_;
  std::unique_ptr<LogEngine> engine_;
};

TEST_F(IndexedV1StoreTest, ReadsEveryRecord) {
  const std::vector<std::string> lines = IndexedV1FixtureLines();
  ExpectRecords(lines);
  ExpectScanAndVerify(lines);
  auto pool = engine_->GetPool("blks");
  ASSERT_TRUE(pool.ok());
  EXPECT_EQ(pool->stats().records(), lines.size());
  EXPECT_NE(pool->active_dictionary_id(), 0u);
  EXPECT_EQ(engine_->Get("blks/607").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(IndexedV1StoreTest, ReadsOldAndNewRecordsSideBySide) {
  std::vector<std::string> lines = IndexedV1FixtureLines();
  const std::vector<std::string> more = codec::SyntheticLogLines(300, 28);
  for (size_t start = 0; start < more.size(); start += 50) {
    std::vector<AppendInput> batch;
    for (size_t k = start; k < start + 50; ++k) {
      batch.push_back({Category(lines.size() + k - start), more[k]});
    }
    for (size_t k = start; k < start + 50; ++k) lines.push_back(more[k]);
    ASSERT_TRUE(engine_->Append(batch).ok());
  }
  ExpectRecords(lines);
  ExpectScanAndVerify(lines);
}

}  // namespace
}  // namespace dictlog::engine
