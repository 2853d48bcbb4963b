#include "server/auth/token_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace dictlog::auth {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kReaderToken[] = "reader-token-0123456789";

TEST(Sha256Test, KnownVector) {
  const Digest digest = Sha256("abc");
  EXPECT_EQ(digest[0], 0xba);
  EXPECT_EQ(digest[1], 0x78);
  EXPECT_EQ(digest[31], 0xad);
}

TEST(ParseTokenFileTest, RolesPatternsCommentsAndHashes) {
  const std::string text = std::string("# tokens\n\n") + kReaderToken +
                           " reader\n"
                           "  writer-token-0123456789\twriter web*,api \n"
                           // sha256 of "abc"
                           "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad admin\n";
  absl::StatusOr<std::vector<TokenEntry>> entries = ParseTokenFile(text);
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), 3u);
  EXPECT_EQ((*entries)[0].digest, Sha256(kReaderToken));
  EXPECT_EQ((*entries)[0].grant.role, Role::kReader);
  EXPECT_TRUE((*entries)[0].grant.categories.empty());
  EXPECT_EQ((*entries)[0].grant.line, 3);
  EXPECT_EQ((*entries)[1].grant.role, Role::kWriter);
  EXPECT_THAT((*entries)[1].grant.categories, ElementsAre("web*", "api"));
  EXPECT_EQ((*entries)[2].digest, Sha256("abc"));
  EXPECT_EQ((*entries)[2].grant.role, Role::kAdmin);
}

TEST(ParseTokenFileTest, RejectsBadLinesNamingTheLineButNeverTheToken) {
  const struct {
    std::string text;
    std::string message;
  } cases[] = {
      {"short reader", "at least 16"},
      {"reader-token-0123456789", "expected TOKEN ROLE"},
      {"reader-token-0123456789 reader a b", "expected TOKEN ROLE"},
      {"reader-token-0123456789 owner", "unknown role (reader, writer or admin)"},
      {"reader-token-0123456789 reader we*b", "bad category pattern"},
      {"reader-token-0123456789 reader web,,api", "bad category pattern"},
      {"reader-token-0123456789 admin web*", "admin token cannot be limited"},
      {"sha256:abc reader", "64 lowercase hex"},
      {"sha256:BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD reader",
       "64 lowercase hex"},
      {"reader-token-0123456789 reader\nreader-token-0123456789 writer",
       "line 2: the same token as line 1"},
      {"# nothing\n", "no tokens"},
  };
  for (const auto& c : cases) {
    absl::StatusOr<std::vector<TokenEntry>> entries = ParseTokenFile(c.text);
    ASSERT_FALSE(entries.ok()) << c.text;
    EXPECT_EQ(entries.status().code(), absl::StatusCode::kInvalidArgument) << c.text;
    EXPECT_THAT(entries.status().message(), HasSubstr(c.message)) << c.text;
    EXPECT_THAT(entries.status().message(), ::testing::Not(HasSubstr("token-0123")));
  }
}

// A line whose fields are out of order (a token where the role or the patterns go, a
// space inside a token) must not print the secret in the error either.
TEST(ParseTokenFileTest, ErrorsNeverEchoAnyFieldOfTheFile) {
  const std::string secret = "s3cret-0123456789-abcdef";
  for (const std::string& text : {
           "reader-token-0123456789 " + secret,
           "reader " + secret,
           "reader-token-0123456789 reader " + secret + "*x",
           "reader-token-0123456789 reader ," + secret,
           "sha256:" + secret + " reader",
           secret + "\x01 reader",
       }) {
    absl::StatusOr<std::vector<TokenEntry>> entries = ParseTokenFile(text);
    ASSERT_FALSE(entries.ok()) << text;
    EXPECT_THAT(entries.status().message(), HasSubstr("line 1")) << text;
    EXPECT_THAT(entries.status().message(), ::testing::Not(HasSubstr("s3cret")))
        << entries.status();
    EXPECT_THAT(entries.status().message(), ::testing::Not(HasSubstr("reader-token")))
        << entries.status();
  }
}

TEST(ParseTokenFileTest, MissingFileIsNotFound) {
  EXPECT_EQ(LoadTokenFile("/nonexistent/tokens").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(GrantTest, CategoryPatterns) {
  Grant grant{Role::kReader, {"web*", "api"}, 1};
  EXPECT_TRUE(grant.AllowsCategory("web"));
  EXPECT_TRUE(grant.AllowsCategory("web.frontend"));
  EXPECT_TRUE(grant.AllowsCategory("api"));
  EXPECT_FALSE(grant.AllowsCategory("api2"));
  EXPECT_FALSE(grant.AllowsCategory("we"));
  EXPECT_FALSE(grant.AllowsCategory("HDFS"));
  EXPECT_TRUE(Grant{}.AllowsCategory("anything"));
  EXPECT_TRUE((Grant{Role::kReader, {"*"}, 1}.AllowsCategory("anything")));
}

TEST(TokenFileTest, EachTokenHasItsOwnStablePrincipal) {
  auto entries = ParseTokenFile(
      "first-token-0123456789 writer\nsecond-token-0123456789 writer\n");
  ASSERT_TRUE(entries.ok()) << entries.status();
  const std::string& first = (*entries)[0].grant.principal;
  EXPECT_EQ(first.size(), kPrincipalBytes);
  EXPECT_NE(first, (*entries)[1].grant.principal);
  // The same token in another file (another line) is the same principal.
  auto again = ParseTokenFile("# moved\n\nfirst-token-0123456789 writer\n");
  EXPECT_EQ((*again)[0].grant.principal, first);
  // Not a prefix of the digest the file may hold.
  EXPECT_NE(first, std::string(reinterpret_cast<const char*>((*entries)[0].digest.data()),
                               kPrincipalBytes));
}

}  // namespace
}  // namespace dictlog::auth
