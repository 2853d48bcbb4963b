// A store written before request ids were scoped per principal (the fixture
// testdata/v1_requests_store, see testdata/make_v1_requests_store.cc) still opens and
// reads, and its request ids keep working for the anonymous principal (no tokens
// file), the only one that could have written them that way on a server without
// tokens. A token's principal does not see them: its retry of an append made before
// the upgrade stores a second copy, as a retry after the request window would.

#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "server/engine/log_engine.h"

namespace dictlog::engine {
namespace {

class V1RequestsStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    EngineOptions options;
    options.store.path = FixtureCopy("server/engine/testdata/v1_requests_store");
    // The fixture's entries are as old as the fixture.
    options.store.request_window = absl::Hours(24 * 365 * 50);
    options.auto_train = false;
    auto engine = LogEngine::Open(options);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
  }

  uint64_t Records(const std::string& pool) { return engine_->GetPool(pool)->stats().records(); }

  std::unique_ptr<LogEngine> engine_;
};

TEST_F(V1RequestsStoreTest, OpensAndReadsItsRecords) {
  EXPECT_EQ(engine_->Get("a/1")->payload(), "one");
  EXPECT_EQ(engine_->Get("b/1")->payload(), "two");
  EXPECT_EQ(engine_->Get("a/2")->payload(), "three");
}

TEST_F(V1RequestsStoreTest, OldRequestIdsAnswerTheAnonymousPrincipal) {
  const std::vector<AppendInput> first = {{"a", "one"}, {"b", "two"}};
  auto retry = engine_->Append(first, "old-req-1");
  ASSERT_TRUE(retry.ok()) << retry.status();
  EXPECT_EQ(*retry, (std::vector<std::string>{"a/1", "b/1"}));
  const std::vector<AppendInput> other = {{"a", "other"}};
  EXPECT_EQ(engine_->Append(other, "old-req-2").status().code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(Records("a"), 2u);
}

TEST_F(V1RequestsStoreTest, OldRequestIdsAreInvisibleToTokenPrincipals) {
  const std::vector<AppendInput> first = {{"a", "one"}, {"b", "two"}};
  auto scoped = engine_->Append(first, "old-req-1", "some-principal");
  ASSERT_TRUE(scoped.ok()) << scoped.status();
  EXPECT_EQ(*scoped, (std::vector<std::string>{"a/3", "b/2"}));
  EXPECT_EQ(Records("a"), 3u);
}

}  // namespace
}  // namespace dictlog::engine
