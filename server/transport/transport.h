// Transport security of dictlogd's gRPC port: TLS / mTLS credentials from PEM files,
// and the rule for plaintext: allowed on loopback addresses (127.0.0.0/8, ::1,
// localhost, unix: sockets) and, anywhere else, only when asked for with --insecure.
//
// Thread safety: plain values and free functions.
#ifndef DICTLOG_SERVER_TRANSPORT_TRANSPORT_H_
#define DICTLOG_SERVER_TRANSPORT_TRANSPORT_H_

#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace dictlog::service {

// PEM contents. An empty cert_chain means plaintext.
struct ServerTls {
  std::string cert_chain_pem;
  std::string private_key_pem;
  // Non-empty: mutual TLS; clients must present a certificate signed by this CA.
  std::string client_ca_pem;
  // Cluster mode: the CA peer nodes' certificates are verified against when this node
  // forwards reads to them; empty: the system's roots.
  std::string peer_ca_pem;

  bool enabled() const { return !cert_chain_pem.empty(); }
};

// Reads the PEM files (an empty path is not read). INVALID_ARGUMENT if only one of
// cert and key is given, or a client CA without them; NOT_FOUND if a file cannot be
// read.
absl::StatusOr<ServerTls> LoadServerTls(const std::string& cert_path,
                                        const std::string& key_path,
                                        const std::string& client_ca_path);

// Reads `path` (PEM CA certificates) into tls->peer_ca_pem; an empty path reads
// nothing. NOT_FOUND if it cannot be read; INVALID_ARGUMENT without TLS.
absl::Status LoadPeerCa(const std::string& path, ServerTls* tls);

// Whether `listen` (HOST:PORT, [V6]:PORT or unix:PATH) is a loopback address: the host
// parsed as 127.0.0.0/8 (dotted quad), ::1, ::ffff:127.x.y.z or "localhost"; any
// other name (127.evil.example) or form is not.
bool IsLoopbackListen(absl::string_view listen);

// FAILED_PRECONDITION if `listen` would serve plaintext off loopback without
// `insecure`; INVALID_ARGUMENT if both TLS and `insecure` are asked for.
absl::Status CheckTransport(absl::string_view listen, bool tls, bool insecure);

// TLS (or mTLS) credentials for `tls`, or insecure ones if it is not enabled.
std::shared_ptr<grpc::ServerCredentials> MakeServerCredentials(const ServerTls& tls);

// Credentials for calls from this node to its peers (cluster mode forwards reads):
// insecure for a plaintext server; for TLS, peer_ca_pem (else the system's roots) and,
// for mutual TLS, this node's own certificate and key as the client's. A peer's
// certificate must name the host of its advertised address.
std::shared_ptr<grpc::ChannelCredentials> MakePeerCredentials(const ServerTls& tls);

}  // namespace dictlog::service

#endif  // DICTLOG_SERVER_TRANSPORT_TRANSPORT_H_
