#include "server/service/transport.h"

#include <grpcpp/security/server_credentials.h>

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace dictlog::service {
namespace {

absl::StatusOr<std::string> ReadPem(const std::string& path) {
  if (path.empty()) return std::string();
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  if (!in || text.str().empty()) {
    return absl::NotFoundError(absl::StrCat("cannot read ", path));
  }
  return text.str();
}

// The host part of HOST:PORT or [V6]:PORT.
absl::string_view HostOf(absl::string_view listen) {
  if (absl::ConsumePrefix(&listen, "[")) return listen.substr(0, listen.find(']'));
  const size_t colon = listen.rfind(':');
  return colon == absl::string_view::npos ? listen : listen.substr(0, colon);
}

}  // namespace

absl::StatusOr<ServerTls> LoadServerTls(const std::string& cert_path,
                                        const std::string& key_path,
                                        const std::string& client_ca_path) {
  if (cert_path.empty() != key_path.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key go together");
  }
  if (cert_path.empty() && !client_ca_path.empty()) {
    return absl::InvalidArgumentError("--tls_client_ca needs --tls_cert and --tls_key");
  }
  ServerTls tls;
  ASSIGN_OR_RETURN(tls.cert_chain_pem, ReadPem(cert_path));
  ASSIGN_OR_RETURN(tls.private_key_pem, ReadPem(key_path));
  ASSIGN_OR_RETURN(tls.client_ca_pem, ReadPem(client_ca_path));
  return tls;
}

bool IsLoopbackListen(absl::string_view listen) {
  if (absl::StartsWith(listen, "unix:") || absl::StartsWith(listen, "unix-abstract:")) {
    return true;
  }
  const absl::string_view host = HostOf(listen);
  return absl::StartsWith(host, "127.") || host == "::1" ||
         absl::EqualsIgnoreCase(host, "localhost");
}

absl::Status CheckTransport(absl::string_view listen, bool tls, bool insecure) {
  if (tls && insecure) {
    return absl::InvalidArgumentError(
        "--insecure and --tls_cert exclude each other (--insecure=false to serve TLS)");
  }
  if (tls || insecure || IsLoopbackListen(listen)) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "refusing to serve plaintext on the non-loopback address ", listen,
      ": give --tls_cert and --tls_key (TLS), or --insecure to accept plaintext"));
}

std::shared_ptr<grpc::ServerCredentials> MakeServerCredentials(const ServerTls& tls) {
  if (!tls.enabled()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions options(
      tls.client_ca_pem.empty()
          ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
          : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = tls.client_ca_pem;
  options.pem_key_cert_pairs.push_back({tls.private_key_pem, tls.cert_chain_pem});
  return grpc::SslServerCredentials(options);
}

}  // namespace dictlog::service
