// LoadClientSecurity: ClientSecurity from the files named by the client flags
// (--tls_ca, --tls_cert, --tls_key, --token_file), shared by the dictlog CLI and
// dictlog-bench.
//
// Thread safety: a free function; reads files.
#ifndef DICTLOG_CLIENT_SECURITY_FILES_H_
#define DICTLOG_CLIENT_SECURITY_FILES_H_

#include <string>

#include "absl/status/statusor.h"
#include "client/client.h"

namespace dictlog::client {

struct SecurityFiles {
  // PEM CA certificate(s) the server's certificate must chain to. Empty: none.
  std::string tls_ca;
  // PEM client certificate and key, for mutual TLS. Both or neither.
  std::string tls_cert;
  std::string tls_key;
  // A file holding the bearer token (surrounding whitespace ignored). Empty: none.
  std::string token_file;
};

// TLS is on when any of tls_ca, tls_cert, tls_key is given. INVALID_ARGUMENT if only
// one of cert and key is given or the token file is empty; NOT_FOUND if a file cannot
// be read.
absl::StatusOr<ClientSecurity> LoadClientSecurity(const SecurityFiles& files);

}  // namespace dictlog::client

#endif  // DICTLOG_CLIENT_SECURITY_FILES_H_
