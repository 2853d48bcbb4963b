// `dictlog health`: the server's grpc.health.v1 status, for probes (deploy/k8s runs it
// as an exec probe with the same TLS flags as clients, since Kubernetes' own gRPC
// probes speak plaintext only). Prints SERVING and succeeds, or fails (exit 1) when
// the server is NOT_SERVING or cannot be reached. `health SERVICE` checks that health
// service instead (dictlog.replicas: a cluster node's held partitions all serve).
#include <ostream>

#include "absl/status/status.h"
#include "client/cli/commands.h"
#include "common/status_macros.h"

namespace dictlog::cli {

absl::Status RunHealth(const client::Client& client, const std::vector<std::string>& args,
                       const CommandOptions& options, CommandIo io) {
  (void)options;
  if (args.size() > 2) return UsageError("usage: health [SERVICE]");
  const std::string service = args.size() == 2 ? args[1] : "";
  ASSIGN_OR_RETURN(const bool serving, client.CheckHealth(service));
  if (!serving) {
    return absl::UnavailableError(service.empty() ? "the server is NOT_SERVING"
                                                  : service + " is NOT_SERVING");
  }
  io.out << "SERVING\n";
  return absl::OkStatus();
}

}  // namespace dictlog::cli
