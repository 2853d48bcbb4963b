#include "server/service/transport.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/test_dir.h"

namespace dictlog::service {
namespace {

using ::testing::HasSubstr;

TEST(TransportTest, LoopbackAddresses) {
  for (const char* listen : {"127.0.0.1:7070", "127.1.2.3:0", "[::1]:7070",
                             "localhost:7070", "LOCALHOST:1", "unix:/tmp/dictlog.sock"}) {
    EXPECT_TRUE(IsLoopbackListen(listen)) << listen;
  }
  for (const char* listen : {"0.0.0.0:7070", "[::]:7070", ":7070", "10.0.0.1:7070",
                             "db.example.com:7070", "128.0.0.1:7070", "[::2]:1"}) {
    EXPECT_FALSE(IsLoopbackListen(listen)) << listen;
  }
}

TEST(TransportTest, PlaintextOffLoopbackNeedsInsecure) {
  EXPECT_TRUE(CheckTransport("127.0.0.1:7070", false, false).ok());
  const absl::Status refused = CheckTransport("0.0.0.0:7070", false, false);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(), HasSubstr("--insecure"));
  EXPECT_THAT(refused.message(), HasSubstr("--tls_cert"));
  EXPECT_TRUE(CheckTransport("0.0.0.0:7070", false, true).ok());
  EXPECT_TRUE(CheckTransport("0.0.0.0:7070", true, false).ok());
  EXPECT_EQ(CheckTransport("0.0.0.0:7070", true, true).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TransportTest, LoadServerTlsReadsFilesAndChecksCombinations) {
  const std::string dir = FreshTestDir();
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/cert.pem") << "CERT";
  std::ofstream(dir + "/key.pem") << "KEY";
  std::ofstream(dir + "/ca.pem") << "CA";
  absl::StatusOr<ServerTls> tls =
      LoadServerTls(dir + "/cert.pem", dir + "/key.pem", dir + "/ca.pem");
  ASSERT_TRUE(tls.ok()) << tls.status();
  EXPECT_TRUE(tls->enabled());
  EXPECT_EQ(tls->cert_chain_pem, "CERT");
  EXPECT_EQ(tls->private_key_pem, "KEY");
  EXPECT_EQ(tls->client_ca_pem, "CA");
  absl::StatusOr<ServerTls> none = LoadServerTls("", "", "");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->enabled());
  EXPECT_EQ(LoadServerTls(dir + "/cert.pem", "", "").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(LoadServerTls("", "", dir + "/ca.pem").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(LoadServerTls(dir + "/cert.pem", dir + "/missing.pem", "").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace dictlog::service
