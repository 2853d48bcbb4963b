// KafkaHandle: an owned librdkafka client handle (rd_kafka_t, C API of Debian's
// librdkafka 2.0.2) made from a bootstrap list and configuration pairs. Destroying it
// destroys the handle (the caller stops its own threads first). librdkafka's client
// errors are logged to stderr with a `dictlogd: kafka:` prefix.
//
// Thread safety: librdkafka handles may be used from any thread.
#ifndef DICTLOG_SERVER_CLUSTER_KAFKA_HANDLE_H_
#define DICTLOG_SERVER_CLUSTER_KAFKA_HANDLE_H_

#include <librdkafka/rdkafka.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace dictlog::cluster {

struct KafkaHandleDeleter {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};
using KafkaHandle = std::unique_ptr<rd_kafka_t, KafkaHandleDeleter>;

using KafkaSettings = std::vector<std::pair<std::string, std::string>>;

// A client of `type` for `bootstrap` (HOST:PORT,...) with `settings`. `conf` (may be
// null) carries callbacks set by the caller; it is consumed in every case.
// INVALID_ARGUMENT for an empty bootstrap list or a setting librdkafka refuses.
absl::StatusOr<KafkaHandle> NewKafkaHandle(rd_kafka_type_t type, const std::string& bootstrap,
                                           const KafkaSettings& settings,
                                           rd_kafka_conf_t* conf = nullptr);

}  // namespace dictlog::cluster

#endif  // DICTLOG_SERVER_CLUSTER_KAFKA_HANDLE_H_
