// `dictlog shards`: the cluster's shard map as the server the CLI points at answers it
// (nodes, liveness, per partition its replicas with applied offset, lag and whether
// they serve). A single node, or a server that predates GetShardMap (UNIMPLEMENTED),
// prints "single node".
#include <ostream>

#include "absl/status/status.h"
#include "client/cli/commands.h"
#include "client/cli/shard_map_output.h"

namespace dictlog::cli {

absl::Status RunShards(const client::Client& client, const std::vector<std::string>& args,
                       const CommandOptions& options, CommandIo io) {
  if (args.size() != 1) return UsageError("usage: shards [--format=json]");
  absl::StatusOr<v1::ShardMap> map = client.GetShardMap();
  if (absl::IsUnimplemented(map.status())) {
    map = v1::ShardMap();  // A server that predates cluster routing: a single node.
  }
  if (!map.ok()) return map.status();
  if (options.format == OutputFormat::kJson) {
    io.out << ShardMapJson(*map) << '\n';
  } else {
    io.out << ShardMapText(*map, client.server());
  }
  return absl::OkStatus();
}

}  // namespace dictlog::cli
