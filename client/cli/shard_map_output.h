// The output of `dictlog shards`: a cluster's shard map (LogStore.GetShardMap) as text
// tables or one JSON object. Stateless and thread-safe.
#ifndef DICTLOG_CLIENT_CLI_SHARD_MAP_OUTPUT_H_
#define DICTLOG_CLIENT_CLI_SHARD_MAP_OUTPUT_H_

#include <string>

#include "proto/dictlog.pb.h"

namespace dictlog::cli {

// A header line ("epoch E, P partitions, answered by NODE"), then the nodes (NODE
// ADDRESS LIVE ANNOUNCED) and one row per replica (PARTITION NODE APPLIED END LAG
// SERVING). A map with partitions 0: "single node: every call goes to SERVER".
std::string ShardMapText(const v1::ShardMap& map, const std::string& server);

// {"partitions":..,"epoch":..,"answered_by":..,"nodes":[{"name":..,"address":..,
//  "live":..,"announced_unix_ms":..}],"assignments":[{"partition":..,"replicas":
//  [{"node":..,"applied_offset":..,"end_offset":..,"lag":..,"serving":..}]}]}
std::string ShardMapJson(const v1::ShardMap& map);

}  // namespace dictlog::cli

#endif  // DICTLOG_CLIENT_CLI_SHARD_MAP_OUTPUT_H_
