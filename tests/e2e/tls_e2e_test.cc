// End to end: TLS and mutual TLS on the real dictlogd (127.0.0.1 port 0), with
// certificates made by openssl in the test (tests/e2e/test_pki.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "client/client.h"
#include "tests/e2e/server_process.h"
#include "tests/e2e/test_pki.h"

namespace dictlog {
namespace {

using testing::ReadFileForTest;

class TlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(std::string(std::getenv("TEST_TMPDIR")) + "/tls");
    std::filesystem::remove_all(*dir_);
    absl::StatusOr<testing::TestPki> pki = testing::MakeTestPki(*dir_ + "/pki");
    ASSERT_TRUE(pki.ok()) << pki.status();
    pki_ = new testing::TestPki(*pki);
    const std::string dictlogd = testing::RunfilePath("server/daemon/dictlogd");
    const std::vector<std::string> tls_flags = {"--tls_cert=" + pki_->server_cert,
                                                "--tls_key=" + pki_->server_key};
    tls_server_ = new testing::ServerProcess(dictlogd, *dir_ + "/tls_data", tls_flags);
    std::vector<std::string> mtls_flags = tls_flags;
    mtls_flags.push_back("--tls_client_ca=" + pki_->ca_cert);
    std::ofstream(*dir_ + "/tokens") << "writer-token-0123456789 writer\n";
    mtls_flags.push_back("--tokens_file=" + *dir_ + "/tokens");
    mtls_server_ = new testing::ServerProcess(dictlogd, *dir_ + "/mtls_data", mtls_flags);
    for (testing::ServerProcess* server : {tls_server_, mtls_server_}) {
      absl::StatusOr<std::string> address = server->Start();
      ASSERT_TRUE(address.ok()) << address.status();
    }
  }
  static void TearDownTestSuite() {
    delete tls_server_;
    delete mtls_server_;
    delete pki_;
    delete dir_;
  }

  static client::Client Connect(const testing::ServerProcess& server,
                                const client::ClientSecurity& security) {
    client::ClientOptions options;
    options.server = server.address();
    options.timeout = absl::Seconds(20);
    options.own_connection = true;  // A failed handshake must not be shared.
    options.security = security;
    return client::Client(options);
  }

  static client::ClientSecurity TrustingCa(const std::string& ca) {
    client::ClientSecurity security;
    security.tls = true;
    security.root_ca_pem = ReadFileForTest(ca);
    return security;
  }

  static client::ClientSecurity WithClientCert(const std::string& cert,
                                               const std::string& key) {
    client::ClientSecurity security = TrustingCa(pki_->ca_cert);
    security.cert_chain_pem = ReadFileForTest(cert);
    security.private_key_pem = ReadFileForTest(key);
    security.token = "writer-token-0123456789";
    return security;
  }

  static std::string* dir_;
  static testing::TestPki* pki_;
  static testing::ServerProcess* tls_server_;
  static testing::ServerProcess* mtls_server_;
};

std::string* TlsTest::dir_ = nullptr;
testing::TestPki* TlsTest::pki_ = nullptr;
testing::ServerProcess* TlsTest::tls_server_ = nullptr;
testing::ServerProcess* TlsTest::mtls_server_ = nullptr;

TEST_F(TlsTest, TlsClientWorks) {
  const client::Client client = Connect(*tls_server_, TrustingCa(pki_->ca_cert));
  absl::StatusOr<std::string> id = client.Append("HDFS", "over TLS");
  ASSERT_TRUE(id.ok()) << id.status();
  absl::StatusOr<v1::Record> record = client.Get(*id);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->payload(), "over TLS");
}

TEST_F(TlsTest, PlaintextClientAgainstTlsServerFails) {
  const absl::StatusOr<std::string> id =
      Connect(*tls_server_, client::ClientSecurity()).Append("HDFS", "plaintext");
  EXPECT_EQ(id.status().code(), absl::StatusCode::kUnavailable) << id.status();
}

TEST_F(TlsTest, ClientRefusesServerCertificateFromAnotherCa) {
  const absl::StatusOr<std::string> id =
      Connect(*tls_server_, TrustingCa(pki_->foreign_ca_cert)).Append("HDFS", "x");
  EXPECT_EQ(id.status().code(), absl::StatusCode::kUnavailable) << id.status();
}

TEST_F(TlsTest, MutualTlsClientWithCertificateAndTokenWorks) {
  const client::Client client =
      Connect(*mtls_server_, WithClientCert(pki_->client_cert, pki_->client_key));
  absl::StatusOr<std::string> id = client.Append("HDFS", "over mTLS");
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_TRUE(client.Get(*id).ok());
}

TEST_F(TlsTest, MutualTlsRefusesClientWithoutCertificate) {
  client::ClientSecurity security = TrustingCa(pki_->ca_cert);
  security.token = "writer-token-0123456789";
  const absl::StatusOr<std::string> id =
      Connect(*mtls_server_, security).Append("HDFS", "no cert");
  EXPECT_EQ(id.status().code(), absl::StatusCode::kUnavailable) << id.status();
}

TEST_F(TlsTest, MutualTlsRefusesClientCertificateFromForeignCa) {
  const absl::StatusOr<std::string> id =
      Connect(*mtls_server_,
              WithClientCert(pki_->foreign_client_cert, pki_->foreign_client_key))
          .Append("HDFS", "foreign");
  EXPECT_EQ(id.status().code(), absl::StatusCode::kUnavailable) << id.status();
}

TEST_F(TlsTest, MutualTlsStillNeedsTheToken) {
  client::ClientSecurity security = WithClientCert(pki_->client_cert, pki_->client_key);
  security.token.clear();
  const absl::StatusOr<std::string> id =
      Connect(*mtls_server_, security).Append("HDFS", "no token");
  EXPECT_EQ(id.status().code(), absl::StatusCode::kUnauthenticated) << id.status();
}

}  // namespace
}  // namespace dictlog
