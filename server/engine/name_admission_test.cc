// NameAdmission through LogEngine: --max_pools, --max_categories_per_pool and scope
// isolation refuse an append whole, leaving no record, pool or category behind.
#include "server/engine/name_admission.h"

#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "server/engine/log_engine.h"

namespace dictlog::engine {
namespace {

class NameAdmissionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.store.path = FreshTestDir();
    options_.auto_train = false;
  }

  void Open() {
    engine_.reset();
    auto engine = LogEngine::Open(options_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
  }

  std::vector<std::string> PoolNames() {
    std::vector<std::string> names;
    for (const v1::PoolInfo& info : engine_->ListPools()) names.push_back(info.name());
    return names;
  }

  std::vector<std::string> Categories(const std::string& pool) {
    absl::StatusOr<v1::PoolInfo> info = engine_->GetPool(pool);
    if (!info.ok()) return {};
    return {info->categories().begin(), info->categories().end()};
  }

  uint64_t TotalRecords() {
    uint64_t total = 0;
    for (const v1::PoolInfo& info : engine_->ListPools()) total += info.stats().records();
    return total;
  }

  absl::Status Append(std::vector<AppendInput> records) {
    return engine_->Append(records).status();
  }

  EngineOptions options_;
  std::unique_ptr<LogEngine> engine_;
};

TEST_F(NameAdmissionTest, MaxPoolsRefusesABatchNeedingOneMorePoolWhole) {
  options_.names.max_pools = 2;
  Open();
  ASSERT_TRUE(Append({{"a", "1"}}).ok());
  // Two new pools with room for one: neither is created, nothing is written.
  absl::Status status = Append({{"a", "2"}, {"b", "3"}, {"c", "4"}});
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "--max_pools")) << status;
  EXPECT_EQ(PoolNames(), std::vector<std::string>{"a"});
  EXPECT_EQ(TotalRecords(), 1u);
  ASSERT_TRUE(Append({{"a", "2"}, {"b", "3"}}).ok());
  EXPECT_EQ(Append({{"c", "4"}}).code(), absl::StatusCode::kResourceExhausted);
  // Existing pools keep taking records.
  EXPECT_TRUE(Append({{"a", "5"}, {"b", "6"}}).ok());
  EXPECT_EQ(TotalRecords(), 5u);
}

TEST_F(NameAdmissionTest, CreatePoolCountsAgainstMaxPools) {
  options_.names.max_pools = 1;
  Open();
  ASSERT_TRUE(Append({{"a", "1"}}).ok());
  EXPECT_EQ(engine_->CreatePool("b", {}).status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(engine_->CreatePool("a", {}).status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(PoolNames(), std::vector<std::string>{"a"});
}

TEST_F(NameAdmissionTest, MaxCategoriesPerPoolRefusesWholeBatchesLeavingNothing) {
  options_.names.max_categories_per_pool = 2;
  options_.routes = {{"", "web", "web"}};
  Open();
  ASSERT_TRUE(Append({{"web.a", "1"}, {"web", "own name: not counted"}}).ok());
  // A batch with a new pool, one category that fits and one over the limit.
  absl::Status status = Append({{"other", "x"}, {"web.b", "2"}, {"web.c", "3"}});
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "--max_categories_per_pool")) << status;
  EXPECT_FALSE(absl::StrContains(status.message(), "'web'")) << "names no pool: " << status;
  EXPECT_EQ(PoolNames(), std::vector<std::string>{"web"});
  EXPECT_EQ(Categories("web"), std::vector<std::string>{"web.a"});
  EXPECT_EQ(TotalRecords(), 2u);
  ASSERT_TRUE(Append({{"web.b", "2"}, {"web.b", "again"}, {"web.a", "3"}}).ok());
  EXPECT_EQ(Append({{"web.c", "3"}}).code(), absl::StatusCode::kResourceExhausted);
  // Reopened, the stored categories count.
  Open();
  EXPECT_EQ(Append({{"web.c", "3"}}).code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(Append({{"web.a", "4"}}).ok());
}

TEST_F(NameAdmissionTest, ConcurrentAppendsNeverExceedMaxPools) {
  options_.names.max_pools = 20;
  Open();
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([this, t] {
      for (int k = 0; k < 10; ++k) {
        const std::string category = absl::StrCat("t", t, "-", k);
        (void)engine_->Append({{{category, "x"}}});
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(PoolNames().size(), 20u);
  EXPECT_EQ(TotalRecords(), 20u);
}

// Scope keys as auth::TokenScopes would give them: "web*" is one tenant, the rest none.
std::string WebScope(absl::string_view category) {
  return absl::StartsWith(category, "web") ? "4" : "";
}

TEST_F(NameAdmissionTest, IsolationKeepsOtherScopesOutOfAPool) {
  options_.names.scope_of = WebScope;
  options_.routes = {{"", "web", "web"}, {"db", "", "web"}};
  Open();
  ASSERT_TRUE(Append({{"web.a", "1"}}).ok());
  absl::Status status = Append({{"web.b", "2"}, {"db", "3"}});
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "--isolate_scopes")) << status;
  EXPECT_FALSE(absl::StrContains(status.message(), "web.a")) << status;
  EXPECT_EQ(Categories("web"), std::vector<std::string>{"web.a"});
  EXPECT_EQ(TotalRecords(), 1u);
  EXPECT_TRUE(Append({{"web.b", "2"}}).ok());
}

TEST_F(NameAdmissionTest, IsolationComparesWithThePoolsOwnNameWhenItRoutesThere) {
  options_.names.scope_of = WebScope;
  options_.routes = {{"", "web", "frontend"}};  // "frontend" is its own pool too.
  Open();
  EXPECT_EQ(Append({{"web.1", "x"}}).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Append({{"frontend", "its own name, its own scope"}}).ok());
  options_.names.scope_of = [](absl::string_view category) {
    return absl::StartsWith(category, "web") || category == "frontend" ? "4" : "";
  };
  Open();
  EXPECT_TRUE(Append({{"web.1", "x"}, {"frontend", "y"}}).ok());
}

TEST_F(NameAdmissionTest, IsolationRefusesAppendsToAPoolThatAlreadyMixesScopes) {
  options_.routes = {{"", "web", "web"}, {"db", "", "web"}};
  Open();
  ASSERT_TRUE(Append({{"web.a", "1"}, {"db", "2"}}).ok());  // Before isolation.
  options_.names.scope_of = WebScope;
  Open();
  EXPECT_EQ(Append({{"web.a", "3"}}).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(TotalRecords(), 2u);
  EXPECT_EQ(engine_->Get("web/1")->payload(), "1");  // Reads are unaffected.
}

}  // namespace
}  // namespace dictlog::engine
