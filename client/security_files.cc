#include "client/security_files.h"

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace dictlog::client {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  if (path.empty()) return std::string();
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

absl::StatusOr<ClientSecurity> LoadClientSecurity(const SecurityFiles& files) {
  if (files.tls_cert.empty() != files.tls_key.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key go together");
  }
  ClientSecurity security;
  security.tls = !files.tls_ca.empty() || !files.tls_cert.empty();
  ASSIGN_OR_RETURN(security.root_ca_pem, ReadFile(files.tls_ca));
  ASSIGN_OR_RETURN(security.cert_chain_pem, ReadFile(files.tls_cert));
  ASSIGN_OR_RETURN(security.private_key_pem, ReadFile(files.tls_key));
  ASSIGN_OR_RETURN(std::string token, ReadFile(files.token_file));
  security.token = std::string(absl::StripAsciiWhitespace(token));
  if (!files.token_file.empty() && security.token.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(files.token_file, " holds no token"));
  }
  return security;
}

}  // namespace dictlog::client
