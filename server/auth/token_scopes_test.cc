#include "server/auth/token_scopes.h"

#include "gtest/gtest.h"

namespace dictlog::auth {
namespace {

TokenScopes Scopes() {
  auto entries = ParseTokenFile(
      "admin-token-0123456789 admin\n"            // line 1: unlimited, in no key
      "web-writer-0123456789 writer web*\n"       // line 2
      "web-reader-0123456789 reader web*,api\n"   // line 3
      "weba-reader-0123456789 reader web.a*\n");  // line 4
  EXPECT_TRUE(entries.ok()) << entries.status();
  return TokenScopes(*entries);
}

TEST(TokenScopesTest, KeyOfListsTheLimitedTokensAllowingACategory) {
  const TokenScopes scopes = Scopes();
  EXPECT_EQ(scopes.KeyOf("web.a.1"), "2,3,4");
  EXPECT_EQ(scopes.KeyOf("web.b"), "2,3");
  EXPECT_EQ(scopes.KeyOf("api"), "3");
  EXPECT_EQ(scopes.KeyOf("HDFS"), "");
}

TEST(TokenScopesTest, KeyOfPrefixIsNulloptWhenATokenSplitsThePrefix) {
  const TokenScopes scopes = Scopes();
  EXPECT_EQ(scopes.KeyOfPrefix("web.a"), "2,3,4");
  EXPECT_EQ(scopes.KeyOfPrefix("web.b"), "2,3");
  EXPECT_EQ(scopes.KeyOfPrefix("HDFS"), "");
  EXPECT_EQ(scopes.KeyOfPrefix("web"), std::nullopt);  // web.a* is part of it.
  EXPECT_EQ(scopes.KeyOfPrefix("ap"), std::nullopt);   // "api" is one of its categories.
  EXPECT_EQ(scopes.KeyOfPrefix("w"), std::nullopt);
}

TEST(TokenScopesTest, DescribeNamesLinesNeverTokens) {
  EXPECT_EQ(TokenScopes::Describe("2,3"), "the tokens of lines 2,3");
  EXPECT_EQ(TokenScopes::Describe(""), "only unlimited tokens");
}

}  // namespace
}  // namespace dictlog::auth
