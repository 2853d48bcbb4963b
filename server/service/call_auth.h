// CallAuth: where the gRPC services meet the Authorizer. Reads the call's
// `authorization` metadata, authenticates it and checks the role the RPC needs; the
// services then check categories with auth::RequireCategory once they know them
// (AppendBatch per record before anything is written, Get and MultiGet on the records
// read, Scan on the requested category; read_scope.h says what limited tokens are
// answered). The grant's principal scopes append request ids. Without an Authorizer
// every call gets auth::UnrestrictedGrant() (no --tokens_file: no authentication).
//
// Thread safety: immutable; any thread may call it concurrently. The Authorizer is
// borrowed and must outlive it.
#ifndef DICTLOG_SERVER_SERVICE_CALL_AUTH_H_
#define DICTLOG_SERVER_SERVICE_CALL_AUTH_H_

#include <grpcpp/server_context.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/auth/authorizer.h"

namespace dictlog::service {

class CallAuth {
 public:
  // `authorizer` may be nullptr: no authentication.
  explicit CallAuth(const auth::Authorizer* authorizer) : authorizer_(authorizer) {}

  // The caller's grant if it authenticates and holds `role`: UNAUTHENTICATED or
  // PERMISSION_DENIED (naming `method`) otherwise.
  absl::StatusOr<const auth::Grant*> Check(const grpc::ServerContext& context,
                                           auth::Role role,
                                           absl::string_view method) const;

 private:
  const auth::Authorizer* const authorizer_;
};

}  // namespace dictlog::service

#endif  // DICTLOG_SERVER_SERVICE_CALL_AUTH_H_
