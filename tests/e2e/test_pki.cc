#include "tests/e2e/test_pki.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace dictlog::testing {
namespace {

constexpr char kKeyOptions[] =
    "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1";

absl::Status Run(const std::string& command) {
  const std::string quiet = absl::StrCat(command, " >/dev/null 2>&1");
  if (std::system(quiet.c_str()) != 0) {
    return absl::InternalError(absl::StrCat("failed: ", command));
  }
  return absl::OkStatus();
}

// A self-signed CA certificate `name`.pem with key `name`.key.
absl::Status MakeCa(const std::string& dir, const std::string& name) {
  return Run(absl::StrCat("openssl req -x509 ", kKeyOptions, " -keyout ", dir, "/", name,
                          ".key -out ", dir, "/", name, ".pem -subj /CN=dictlog-", name));
}

// `name`.pem / `name`.key signed by CA `ca`, with extensions `ext` (may be empty).
absl::Status MakeLeaf(const std::string& dir, const std::string& ca,
                      const std::string& name, const std::string& ext, int serial) {
  const std::string base = absl::StrCat(dir, "/", name);
  if (absl::Status s = Run(absl::StrCat("openssl req ", kKeyOptions, " -keyout ", base,
                                        ".key -out ", base, ".csr -subj /CN=dictlog-", name));
      !s.ok()) {
    return s;
  }
  std::string extfile;
  if (!ext.empty()) {
    extfile = base + ".ext";
    std::ofstream(extfile) << ext << "\n";
  }
  return Run(absl::StrCat("openssl x509 -req -days 1 -in ", base, ".csr -CA ", dir, "/",
                          ca, ".pem -CAkey ", dir, "/", ca, ".key -set_serial ", serial,
                          " -out ", base, ".pem",
                          extfile.empty() ? "" : " -extfile " + extfile));
}

}  // namespace

absl::StatusOr<TestPki> MakeTestPki(const std::string& dir) {
  std::filesystem::create_directories(dir);
  for (absl::Status s : {
           MakeCa(dir, "ca"),
           MakeLeaf(dir, "ca", "server",
                    "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                    "extendedKeyUsage=serverAuth",
                    1),
           MakeLeaf(dir, "ca", "client", "extendedKeyUsage=clientAuth", 2),
           MakeCa(dir, "foreign_ca"),
           MakeLeaf(dir, "foreign_ca", "foreign_client", "extendedKeyUsage=clientAuth", 3),
       }) {
    if (!s.ok()) return s;
  }
  TestPki pki;
  pki.ca_cert = dir + "/ca.pem";
  pki.server_cert = dir + "/server.pem";
  pki.server_key = dir + "/server.key";
  pki.client_cert = dir + "/client.pem";
  pki.client_key = dir + "/client.key";
  pki.foreign_ca_cert = dir + "/foreign_ca.pem";
  pki.foreign_client_cert = dir + "/foreign_client.pem";
  pki.foreign_client_key = dir + "/foreign_client.key";
  return pki;
}

std::string ReadFileForTest(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace dictlog::testing
