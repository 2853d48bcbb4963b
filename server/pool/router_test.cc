#include "server/pool/router.h"

#include "gtest/gtest.h"

namespace dictlog::pool {
namespace {

TEST(RouterTest, UnmatchedCategoryIsItsOwnPool) {
  absl::StatusOr<Router> router = Router::Create({});
  ASSERT_TRUE(router.ok());
  EXPECT_EQ(router->Route("HDFS"), "HDFS");
}

TEST(RouterTest, ExactBeatsPrefixAndLongestPrefixWins) {
  absl::StatusOr<Router> router = Router::Create({
      {"", "app-", "apps"},
      {"", "app-web-", "web"},
      {"app-web-admin", "", "admin"},
  });
  ASSERT_TRUE(router.ok()) << router.status();
  EXPECT_EQ(router->Route("app-batch"), "apps");
  EXPECT_EQ(router->Route("app-web-1"), "web");
  EXPECT_EQ(router->Route("app-web-admin"), "admin");
  EXPECT_EQ(router->Route("ap"), "ap");
}

TEST(RouterTest, RejectsBadRules) {
  const std::vector<std::vector<RouteRule>> bad = {
      {{"a", "b", "p"}},                     // both set
      {{"", "", "p"}},                       // neither set
      {{"a", "", ""}},                       // no pool
      {{"a", "", "bad pool"}},               // bad pool name
      {{"a", "", "p"}, {"a", "", "q"}},      // duplicate category
      {{"", "x-", "p"}, {"", "x-", "q"}},    // duplicate prefix
  };
  for (const auto& rules : bad) {
    EXPECT_EQ(Router::Create(rules).status().code(), absl::StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace dictlog::pool
