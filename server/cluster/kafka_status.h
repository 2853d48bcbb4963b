// KafkaStatus: the one place where librdkafka's error codes become absl::Status in
// dictlogd (server/cluster). The code is the most specific canonical one: a broker that
// cannot be reached, a partition without a leader or without enough in-sync replicas
// is UNAVAILABLE (retry later); a delivery or request that timed out is
// DEADLINE_EXCEEDED (its outcome is unknown); a message over the broker's limit is
// RESOURCE_EXHAUSTED. Stateless, thread-safe.
#ifndef DICTLOG_SERVER_CLUSTER_KAFKA_STATUS_H_
#define DICTLOG_SERVER_CLUSTER_KAFKA_STATUS_H_

#include <librdkafka/rdkafka.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace dictlog::cluster {

// OK for RD_KAFKA_RESP_ERR_NO_ERROR; otherwise "<what>: <name>: <text>" with its code.
absl::Status KafkaStatus(rd_kafka_resp_err_t err, absl::string_view what);

}  // namespace dictlog::cluster

#endif  // DICTLOG_SERVER_CLUSTER_KAFKA_STATUS_H_
