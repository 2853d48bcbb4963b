#include "server/transport/transport.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/test_dir.h"

namespace dictlog::service {
namespace {

using ::testing::HasSubstr;

TEST(TransportTest, LoopbackAddresses) {
  for (const char* listen :
       {"127.0.0.1:7070", "127.1.2.3:0", "127.255.255.255:1", "[::1]:7070",
        "[0:0:0:0:0:0:0:1]:1", "[::ffff:127.0.0.1]:1", "localhost:7070", "LOCALHOST:1",
        "unix:/tmp/dictlog.sock", "unix-abstract:dictlog"}) {
    EXPECT_TRUE(IsLoopbackListen(listen)) << listen;
  }
  for (const char* listen : {"0.0.0.0:7070", "[::]:7070", ":7070", "10.0.0.1:7070",
                             "db.example.com:7070", "128.0.0.1:7070", "[::2]:1"}) {
    EXPECT_FALSE(IsLoopbackListen(listen)) << listen;
  }
}

// The host is parsed as an address, not matched as a string prefix: names that merely
// start like a loopback address resolve to whatever their owner wants.
TEST(TransportTest, LookalikeHostsAreNotLoopback) {
  for (const char* listen :
       {"127.evil.example:7070", "127.0.0.1.nip.io:7070", "127.0.0.1evil:7070",
        "127.1:7070", "127.0.0.256:1", "localhost.evil.example:7070", "localhostx:1",
        "[::1]x:7070", "[::1:7070", "::1:7070", "[::ffff:10.0.0.1]:1", "[fe80::1]:1",
        "", ":", "[]:1"}) {
    EXPECT_FALSE(IsLoopbackListen(listen)) << listen;
    EXPECT_EQ(CheckTransport(listen, false, false).code(),
              absl::StatusCode::kFailedPrecondition)
        << listen;
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

TEST(TransportTest, LoadPeerCaReadsTheFileOnlyWithTls) {
  const std::string dir = FreshTestDir();
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/peers.pem") << "PEER CA";
  ServerTls plaintext;
  EXPECT_TRUE(LoadPeerCa("", &plaintext).ok());
  EXPECT_EQ(LoadPeerCa(dir + "/peers.pem", &plaintext).code(),
            absl::StatusCode::kInvalidArgument);
  ServerTls tls;
  tls.cert_chain_pem = "CERT";
  tls.private_key_pem = "KEY";
  ASSERT_TRUE(LoadPeerCa(dir + "/peers.pem", &tls).ok());
  EXPECT_EQ(tls.peer_ca_pem, "PEER CA");
  EXPECT_EQ(LoadPeerCa(dir + "/missing.pem", &tls).code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace dictlog::service
