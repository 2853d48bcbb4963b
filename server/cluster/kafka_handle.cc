#include "server/cluster/kafka_handle.h"

#include <cstdio>

#include "absl/strings/str_cat.h"

namespace dictlog::cluster {
namespace {

void LogClientError(rd_kafka_t*, int err, const char* reason, void*) {
  std::fprintf(stderr, "dictlogd: kafka: %s: %s\n",
               rd_kafka_err2name(static_cast<rd_kafka_resp_err_t>(err)), reason);
}

}  // namespace

absl::StatusOr<KafkaHandle> NewKafkaHandle(rd_kafka_type_t type, const std::string& bootstrap,
                                           const KafkaSettings& settings,
                                           rd_kafka_conf_t* conf) {
  if (conf == nullptr) conf = rd_kafka_conf_new();
  if (bootstrap.empty()) {
    rd_kafka_conf_destroy(conf);
    return absl::InvalidArgumentError("empty Kafka bootstrap list");
  }
  KafkaSettings all = {{"bootstrap.servers", bootstrap}, {"client.id", "dictlogd"}};
  all.insert(all.end(), settings.begin(), settings.end());
  char errstr[512];
  for (const auto& [key, value] : all) {
    if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), errstr, sizeof(errstr)) !=
        RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return absl::InvalidArgumentError(absl::StrCat("kafka ", key, "=", value, ": ", errstr));
    }
  }
  rd_kafka_conf_set_error_cb(conf, LogClientError);
  rd_kafka_t* rk = rd_kafka_new(type, conf, errstr, sizeof(errstr));
  if (rk == nullptr) {  // conf is still ours
    rd_kafka_conf_destroy(conf);
    return absl::InvalidArgumentError(absl::StrCat("rd_kafka_new: ", errstr));
  }
  return KafkaHandle(rk);
}

}  // namespace dictlog::cluster
