#include "server/transport/transport.h"

#include <arpa/inet.h>
#include <grpcpp/security/server_credentials.h>
#include <netinet/in.h>

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

// The host of HOST:PORT or [V6]:PORT; false if `listen` has neither form (an IPv6
// address without brackets, text after ']' other than :PORT, no port).
bool SplitHost(absl::string_view listen, absl::string_view* host) {
  if (absl::ConsumePrefix(&listen, "[")) {
    const size_t close = listen.find(']');
    if (close == absl::string_view::npos || listen.substr(close + 1, 1) != ":") {
      return false;
    }
    *host = listen.substr(0, close);
    return true;
  }
  const size_t colon = listen.rfind(':');
  if (colon == absl::string_view::npos) return false;
  *host = listen.substr(0, colon);
  return host->find(':') == absl::string_view::npos;
}

// 127.0.0.0/8 in strict dotted-quad form, ::1, or ::ffff:127.x.y.z. Names other than
// "localhost" are never resolved: what they point to is up to their owner.
bool IsLoopbackHost(const std::string& host) {
  if (absl::EqualsIgnoreCase(host, "localhost")) return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    return IN6_IS_ADDR_LOOPBACK(&v6) ||
           (IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127);
  }
  return false;
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
  absl::string_view host;
  return SplitHost(listen, &host) && IsLoopbackHost(std::string(host));
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

absl::Status LoadPeerCa(const std::string& path, ServerTls* tls) {
  if (path.empty()) return absl::OkStatus();
  if (!tls->enabled()) {
    return absl::InvalidArgumentError(
        "--peer_tls_ca needs TLS (--tls_cert, --tls_key): peers are reached as this node "
        "is served");
  }
  ASSIGN_OR_RETURN(tls->peer_ca_pem, ReadPem(path));
  return absl::OkStatus();
}

std::shared_ptr<grpc::ChannelCredentials> MakePeerCredentials(const ServerTls& tls) {
  if (!tls.enabled()) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = tls.peer_ca_pem;
  if (!tls.client_ca_pem.empty()) {
    options.pem_private_key = tls.private_key_pem;
    options.pem_cert_chain = tls.cert_chain_pem;
  }
  return grpc::SslCredentials(options);
}

}  // namespace dictlog::service
