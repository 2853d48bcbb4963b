#include "server/daemon/server_config.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>

#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/pool/pool_options.h"

namespace dictlog::service {
namespace {

class ErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (first_.empty()) first_ = absl::StrCat(line + 1, ":", column + 1, ": ", message);
  }
  const std::string& first() const { return first_; }

 private:
  std::string first_;
};

}  // namespace

absl::StatusOr<config::ServerConfig> ParseServerConfig(const std::string& path,
                                                       const std::string& text) {
  config::ServerConfig config;
  if (absl::EndsWith(path, ".json")) {
    auto status = google::protobuf::util::JsonStringToMessage(text, &config);
    if (!status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("config ", path, ": ", status.ToString()));
    }
    return config;
  }
  google::protobuf::TextFormat::Parser parser;
  ErrorCollector errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(text, &config)) {
    return absl::InvalidArgumentError(absl::StrCat("config ", path, ":", errors.first()));
  }
  return config;
}

absl::StatusOr<config::ServerConfig> LoadServerConfig(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read config file ", path));
  std::stringstream text;
  text << in.rdbuf();
  return ParseServerConfig(path, text.str());
}

absl::StatusOr<pool::RouteRule> ParseRouteFlag(const std::string& value) {
  const size_t eq = value.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == value.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--route \"", value, "\": expected CATEGORY=POOL or PREFIX*=POOL"));
  }
  pool::RouteRule rule;
  std::string match = value.substr(0, eq);
  rule.pool = value.substr(eq + 1);
  if (absl::EndsWith(match, "*")) {
    rule.prefix = match.substr(0, match.size() - 1);
  } else {
    rule.category = std::move(match);
  }
  return rule;
}

absl::Status ApplyServerConfig(const config::ServerConfig& config,
                               engine::EngineOptions* options) {
  for (const config::RouteRule& route : config.routes()) {
    options->routes.push_back({route.category(), route.prefix(), route.pool()});
  }
  ASSIGN_OR_RETURN(options->default_pool_options,
                   pool::ApplyPoolOptions(options->default_pool_options,
                                          config.default_pool_options()));
  for (const config::PoolConfig& pool : config.pools()) {
    RETURN_IF_ERROR(pool::ValidatePoolOptions(pool.options()));
    options->pools.emplace_back(pool.name(), pool.options());
  }
  return absl::OkStatus();
}

}  // namespace dictlog::service
