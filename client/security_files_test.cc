#include "client/security_files.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/test_dir.h"

namespace dictlog::client {
namespace {

class SecurityFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir();
    std::filesystem::create_directories(dir_);
  }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  std::string dir_;
};

TEST_F(SecurityFilesTest, NothingGivenIsPlaintextWithoutToken) {
  absl::StatusOr<ClientSecurity> security = LoadClientSecurity({});
  ASSERT_TRUE(security.ok()) << security.status();
  EXPECT_FALSE(security->tls);
  EXPECT_TRUE(security->token.empty());
}

TEST_F(SecurityFilesTest, ReadsPemFilesAndTrimsTheToken) {
  SecurityFiles files;
  files.tls_ca = Write("ca.pem", "CA");
  files.tls_cert = Write("cert.pem", "CERT");
  files.tls_key = Write("key.pem", "KEY");
  files.token_file = Write("token", "  secret-token-0123456789\n");
  absl::StatusOr<ClientSecurity> security = LoadClientSecurity(files);
  ASSERT_TRUE(security.ok()) << security.status();
  EXPECT_TRUE(security->tls);
  EXPECT_EQ(security->root_ca_pem, "CA");
  EXPECT_EQ(security->cert_chain_pem, "CERT");
  EXPECT_EQ(security->private_key_pem, "KEY");
  EXPECT_EQ(security->token, "secret-token-0123456789");
}

TEST_F(SecurityFilesTest, CaAloneTurnsTlsOn) {
  SecurityFiles files;
  files.tls_ca = Write("ca.pem", "CA");
  absl::StatusOr<ClientSecurity> security = LoadClientSecurity(files);
  ASSERT_TRUE(security.ok());
  EXPECT_TRUE(security->tls);
}

TEST_F(SecurityFilesTest, Errors) {
  SecurityFiles cert_only;
  cert_only.tls_cert = Write("cert.pem", "CERT");
  EXPECT_EQ(LoadClientSecurity(cert_only).status().code(),
            absl::StatusCode::kInvalidArgument);
  SecurityFiles empty_token;
  empty_token.token_file = Write("token", " \n");
  EXPECT_EQ(LoadClientSecurity(empty_token).status().code(),
            absl::StatusCode::kInvalidArgument);
  SecurityFiles missing;
  missing.token_file = dir_ + "/missing";
  EXPECT_EQ(LoadClientSecurity(missing).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace dictlog::client
