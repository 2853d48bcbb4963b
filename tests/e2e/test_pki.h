// TestPki (tests only): certificates made with the openssl command line in a test's
// directory: a CA, a server certificate it signs for 127.0.0.1 and localhost, a
// client certificate it signs, and a foreign CA with a client certificate of its own
// (which the server must refuse under mutual TLS). EC P-256 keys, valid for a day.
//
// Not thread-safe: call from the test thread. Needs `openssl` on PATH (Debian package
// openssl).
#ifndef DICTLOG_TESTS_E2E_TEST_PKI_H_
#define DICTLOG_TESTS_E2E_TEST_PKI_H_

#include <string>

#include "absl/status/statusor.h"

namespace dictlog::testing {

// Paths of PEM files.
struct TestPki {
  std::string ca_cert;
  std::string server_cert;
  std::string server_key;
  std::string client_cert;
  std::string client_key;
  std::string foreign_ca_cert;
  std::string foreign_client_cert;
  std::string foreign_client_key;
};

// Creates the files under `dir` (created if missing). INTERNAL if openssl fails.
absl::StatusOr<TestPki> MakeTestPki(const std::string& dir);

// The contents of a file ("" if it cannot be read).
std::string ReadFileForTest(const std::string& path);

}  // namespace dictlog::testing

#endif  // DICTLOG_TESTS_E2E_TEST_PKI_H_
