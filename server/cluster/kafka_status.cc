#include "server/cluster/kafka_status.h"

#include "absl/strings/str_cat.h"

namespace dictlog::cluster {
namespace {

absl::StatusCode CodeOf(rd_kafka_resp_err_t err) {
  switch (err) {
    case RD_KAFKA_RESP_ERR__TIMED_OUT:
    case RD_KAFKA_RESP_ERR__MSG_TIMED_OUT:
    case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
    case RD_KAFKA_RESP_ERR__TIMED_OUT_QUEUE:
      return absl::StatusCode::kDeadlineExceeded;
    case RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS:
      return absl::StatusCode::kAlreadyExists;
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
    case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
      return absl::StatusCode::kNotFound;
    case RD_KAFKA_RESP_ERR_INVALID_REPLICATION_FACTOR:
    case RD_KAFKA_RESP_ERR_INVALID_PARTITIONS:
    case RD_KAFKA_RESP_ERR_INVALID_CONFIG:
    case RD_KAFKA_RESP_ERR__INVALID_ARG:
      return absl::StatusCode::kInvalidArgument;
    case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE:
    case RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE:
    case RD_KAFKA_RESP_ERR__QUEUE_FULL:
      return absl::StatusCode::kResourceExhausted;
    case RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE:
      return absl::StatusCode::kOutOfRange;
    case RD_KAFKA_RESP_ERR_UNSUPPORTED_VERSION:
    case RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE:
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
      return absl::StatusCode::kFailedPrecondition;
    default:
      // Broker down (_TRANSPORT, _ALL_BROKERS_DOWN), no leader (LEADER_NOT_AVAILABLE,
      // NOT_LEADER_FOR_PARTITION), NOT_ENOUGH_REPLICAS(_AFTER_APPEND), a fenced or
      // fatal idempotent producer: the cluster may serve again later.
      return absl::StatusCode::kUnavailable;
  }
}

}  // namespace

absl::Status KafkaStatus(rd_kafka_resp_err_t err, absl::string_view what) {
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return absl::OkStatus();
  return absl::Status(CodeOf(err), absl::StrCat(what, ": ", rd_kafka_err2name(err), ": ",
                                                rd_kafka_err2str(err)));
}

}  // namespace dictlog::cluster
