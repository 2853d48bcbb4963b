#include "server/auth/authorizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace dictlog::auth {
namespace {

using ::testing::HasSubstr;

Authorizer MakeAuthorizer() {
  absl::StatusOr<std::vector<TokenEntry>> entries = ParseTokenFile(
      "reader-token-0123456789 reader\n"
      "writer-token-0123456789 writer web*\n"
      "admin-token-01234567890 admin\n");
  EXPECT_TRUE(entries.ok()) << entries.status();
  return Authorizer(*std::move(entries));
}

TEST(AuthorizerTest, KnownTokensGetTheirGrant) {
  const Authorizer authorizer = MakeAuthorizer();
  absl::StatusOr<const Grant*> reader = authorizer.Authenticate("Bearer reader-token-0123456789");
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->role, Role::kReader);
  absl::StatusOr<const Grant*> writer = authorizer.Authenticate("bearer  writer-token-0123456789 ");
  ASSERT_TRUE(writer.ok()) << writer.status();
  EXPECT_EQ((*writer)->role, Role::kWriter);
  EXPECT_EQ((*writer)->line, 2);
}

TEST(AuthorizerTest, MissingMalformedOrUnknownTokenIsUnauthenticated) {
  const Authorizer authorizer = MakeAuthorizer();
  for (const std::optional<absl::string_view> header :
       {std::optional<absl::string_view>(), std::optional<absl::string_view>(""),
        std::optional<absl::string_view>("reader-token-0123456789"),
        std::optional<absl::string_view>("Basic reader-token-0123456789"),
        std::optional<absl::string_view>("Bearer "),
        std::optional<absl::string_view>("Bearer reader-token-012345678"),
        std::optional<absl::string_view>("Bearer reader-token-01234567890")}) {
    absl::StatusOr<const Grant*> grant = authorizer.Authenticate(header);
    ASSERT_FALSE(grant.ok()) << header.value_or("(none)");
    EXPECT_EQ(grant.status().code(), absl::StatusCode::kUnauthenticated);
    EXPECT_THAT(grant.status().message(), ::testing::Not(HasSubstr("token-01")));
  }
}

TEST(AuthorizerTest, RolesAreOrdered) {
  const Grant reader{Role::kReader, {}, 1};
  const Grant writer{Role::kWriter, {}, 2};
  EXPECT_TRUE(RequireRole(reader, Role::kReader, "Get").ok());
  const absl::Status denied = RequireRole(reader, Role::kWriter, "Append");
  EXPECT_EQ(denied.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(denied.message(), HasSubstr("Append needs the writer role"));
  EXPECT_THAT(denied.message(), HasSubstr("line 1"));
  EXPECT_TRUE(RequireRole(writer, Role::kReader, "Get").ok());
  EXPECT_EQ(RequireRole(writer, Role::kAdmin, "CreatePool").code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(RequireRole(UnrestrictedGrant(), Role::kAdmin, "CreatePool").ok());
}

TEST(AuthorizerTest, CategoriesAreChecked) {
  const Grant web{Role::kWriter, {"web*"}, 3};
  EXPECT_TRUE(RequireCategory(web, "web.api").ok());
  const absl::Status denied = RequireCategory(web, "HDFS");
  EXPECT_EQ(denied.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(denied.message(), HasSubstr("\"HDFS\""));
  EXPECT_TRUE(RequireCategory(UnrestrictedGrant(), "HDFS").ok());
}

}  // namespace
}  // namespace dictlog::auth
