// Server configuration: reads the --config file (protobuf text format or JSON) and
// --route flags into the engine's options. Stateless and thread-safe.
#ifndef DICTLOG_SERVER_DAEMON_SERVER_CONFIG_H_
#define DICTLOG_SERVER_DAEMON_SERVER_CONFIG_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/engine/log_engine.h"
#include "server/daemon/config.pb.h"

namespace dictlog::service {

// Parses `text` as JSON if `path` ends in .json, else as protobuf text format.
// INVALID_ARGUMENT with the file name and the parser's message on error.
absl::StatusOr<config::ServerConfig> ParseServerConfig(const std::string& path,
                                                       const std::string& text);
// Reads and parses the file at `path`. NOT_FOUND if it cannot be read.
absl::StatusOr<config::ServerConfig> LoadServerConfig(const std::string& path);

// Parses a --route flag value: "CATEGORY=POOL" (exact) or "PREFIX*=POOL" (prefix).
absl::StatusOr<pool::RouteRule> ParseRouteFlag(const std::string& value);

// Adds `config`'s routes, pools and default options to `options`.
absl::Status ApplyServerConfig(const config::ServerConfig& config,
                               engine::EngineOptions* options);

}  // namespace dictlog::service

#endif  // DICTLOG_SERVER_DAEMON_SERVER_CONFIG_H_
