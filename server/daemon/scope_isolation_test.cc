#include "server/daemon/scope_isolation.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace dictlog::service {
namespace {

auth::TokenScopes Scopes() {
  auto entries = auth::ParseTokenFile(
      "web-writer-0123456789 writer web*\n"    // line 1
      "db-writer-0123456789 writer db*\n");    // line 2
  EXPECT_TRUE(entries.ok()) << entries.status();
  return auth::TokenScopes(*entries);
}

TEST(ScopeIsolationTest, RulesKeepingScopesApartPass) {
  EXPECT_TRUE(CheckRoutesIsolated(Scopes(), {}).ok());
  // Prefix "web" into pool "web": the pool's own name is in the same scope.
  EXPECT_TRUE(CheckRoutesIsolated(Scopes(), {{"", "web", "web"}, {"web-x", "", "web"},
                                             {"", "db.", "db"}})
                  .ok());
}

TEST(ScopeIsolationTest, RulesMixingScopesInAPoolAreRefused) {
  absl::Status status =
      CheckRoutesIsolated(Scopes(), {{"", "web", "shared"}, {"", "db", "shared"}});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(status.message(), "pool 'shared'")) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "lines 1")) << status;
  EXPECT_FALSE(absl::StrContains(status.message(), "0123456789")) << status;
}

TEST(ScopeIsolationTest, APoolWhoseOwnNameIsAnotherScopeIsRefused) {
  // "frontend" routes to itself (no rule matches it) and no limited token may use it.
  absl::Status status = CheckRoutesIsolated(Scopes(), {{"", "web", "frontend"}});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(status.message(), "own name")) << status;
  // Routed away, the name is not the pool's: accepted.
  EXPECT_TRUE(
      CheckRoutesIsolated(Scopes(), {{"", "web", "frontend"}, {"frontend", "", "other"}})
          .ok());
}

TEST(ScopeIsolationTest, APrefixSplitByATokensPatternIsRefused) {
  absl::Status status = CheckRoutesIsolated(Scopes(), {{"", "", "all"}});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);  // Empty prefix: invalid.
  status = CheckRoutesIsolated(Scopes(), {{"", "d", "d"}});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(status.message(), "prefix 'd'")) << status;
}

TEST(ScopeIsolationTest, ScopeOfCategoryGivesTheTokensKeys) {
  engine::ScopeOf scope_of =
      ScopeOfCategory(std::make_shared<const auth::TokenScopes>(Scopes()));
  EXPECT_EQ(scope_of("web.a"), "1");
  EXPECT_EQ(scope_of("db"), "2");
  EXPECT_EQ(scope_of("HDFS"), "");
}

}  // namespace
}  // namespace dictlog::service
