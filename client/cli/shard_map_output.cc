#include "client/cli/shard_map_output.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "client/cli/output.h"

namespace dictlog::cli {
namespace {

int64_t LagOf(const v1::ReplicaState& replica) {
  return std::max<int64_t>(0, replica.end_offset() - replica.applied_offset());
}

std::string AnnouncedText(int64_t unix_ms) {
  if (unix_ms == 0) return "never";
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixMillis(unix_ms),
                          absl::UTCTimeZone());
}

}  // namespace

std::string ShardMapText(const v1::ShardMap& map, const std::string& server) {
  if (map.partitions() == 0) {
    return absl::StrCat("single node: every call goes to ", server, "\n");
  }
  std::string out = absl::StrCat("epoch ", map.epoch(), ", ", map.partitions(),
                                 " partitions, answered by ", map.answered_by(), "\n");
  absl::StrAppendFormat(&out, "%-16s %-24s %-5s %s\n", "NODE", "ADDRESS", "LIVE",
                        "ANNOUNCED");
  for (const v1::ShardNode& node : map.nodes()) {
    absl::StrAppendFormat(&out, "%-16s %-24s %-5s %s\n", node.name(),
                          node.address().empty() ? "-" : node.address(),
                          node.live() ? "yes" : "no", AnnouncedText(node.announced_unix_ms()));
  }
  absl::StrAppendFormat(&out, "%-9s %-16s %12s %12s %10s %s\n", "PARTITION", "NODE",
                        "APPLIED", "END", "LAG", "SERVING");
  for (const v1::PartitionReplicas& assignment : map.assignments()) {
    for (const v1::ReplicaState& replica : assignment.replicas()) {
      absl::StrAppendFormat(&out, "%-9d %-16s %12d %12d %10d %s\n", assignment.partition(),
                            replica.node(), replica.applied_offset(), replica.end_offset(),
                            LagOf(replica), replica.serving() ? "yes" : "no");
    }
  }
  return out;
}

std::string ShardMapJson(const v1::ShardMap& map) {
  std::vector<std::string> nodes;
  for (const v1::ShardNode& node : map.nodes()) {
    nodes.push_back(absl::StrCat("{\"name\":", JsonString(node.name()),
                                 ",\"address\":", JsonString(node.address()),
                                 ",\"live\":", node.live() ? "true" : "false",
                                 ",\"announced_unix_ms\":", node.announced_unix_ms(), "}"));
  }
  std::vector<std::string> assignments;
  for (const v1::PartitionReplicas& assignment : map.assignments()) {
    std::vector<std::string> replicas;
    for (const v1::ReplicaState& replica : assignment.replicas()) {
      replicas.push_back(absl::StrCat(
          "{\"node\":", JsonString(replica.node()),
          ",\"applied_offset\":", replica.applied_offset(),
          ",\"end_offset\":", replica.end_offset(), ",\"lag\":", LagOf(replica),
          ",\"serving\":", replica.serving() ? "true" : "false", "}"));
    }
    assignments.push_back(absl::StrCat("{\"partition\":", assignment.partition(),
                                       ",\"replicas\":[", absl::StrJoin(replicas, ","),
                                       "]}"));
  }
  return absl::StrCat("{\"partitions\":", map.partitions(), ",\"epoch\":", map.epoch(),
                      ",\"answered_by\":", JsonString(map.answered_by()), ",\"nodes\":[",
                      absl::StrJoin(nodes, ","), "],\"assignments\":[",
                      absl::StrJoin(assignments, ","), "]}");
}

}  // namespace dictlog::cli
