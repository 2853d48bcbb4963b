// `dictlog health`: the server's grpc.health.v1 status, for probes (deploy/k8s runs it
// as an exec probe with the same TLS flags as clients, since Kubernetes' own gRPC
// probes speak plaintext only). Prints SERVING and succeeds, or fails (exit 1) when
// the server is NOT_SERVING or cannot be reached.
#include <ostream>

#include "absl/status/status.h"
#include "client/cli/commands.h"
#include "common/status_macros.h"

namespace dictlog::cli {

absl::Status RunHealth(const client::Client& client, const std::vector<std::string>& args,
                       const CommandOptions& options, CommandIo io) {
  (void)options;
  if (args.size() != 1) return UsageError("usage: health (no arguments)");
  ASSIGN_OR_RETURN(const bool serving, client.CheckHealth());
  if (!serving) return absl::UnavailableError("the server is NOT_SERVING");
  io.out << "SERVING\n";
  return absl::OkStatus();
}

}  // namespace dictlog::cli
