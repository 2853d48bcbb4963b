#include "server/cluster/kafka_status.h"

#include "gtest/gtest.h"

namespace dictlog::cluster {
namespace {

TEST(KafkaStatusTest, NoErrorIsOk) {
  EXPECT_TRUE(KafkaStatus(RD_KAFKA_RESP_ERR_NO_ERROR, "produce").ok());
}

TEST(KafkaStatusTest, ReplicasAndBrokersMissingAreUnavailable) {
  for (rd_kafka_resp_err_t err :
       {RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS, RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND,
        RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN, RD_KAFKA_RESP_ERR__TRANSPORT,
        RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE, RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION}) {
    EXPECT_EQ(KafkaStatus(err, "x").code(), absl::StatusCode::kUnavailable)
        << rd_kafka_err2name(err);
  }
}

TEST(KafkaStatusTest, TimeoutsAreDeadlineExceeded) {
  for (rd_kafka_resp_err_t err : {RD_KAFKA_RESP_ERR__MSG_TIMED_OUT, RD_KAFKA_RESP_ERR__TIMED_OUT,
                                  RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT}) {
    EXPECT_EQ(KafkaStatus(err, "x").code(), absl::StatusCode::kDeadlineExceeded)
        << rd_kafka_err2name(err);
  }
}

TEST(KafkaStatusTest, SpecificCodes) {
  EXPECT_EQ(KafkaStatus(RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS, "x").code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(KafkaStatus(RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE, "x").code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(KafkaStatus(RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART, "x").code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(KafkaStatus(RD_KAFKA_RESP_ERR_INVALID_REPLICATION_FACTOR, "x").code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(KafkaStatusTest, MessageNamesWhatAndError) {
  absl::Status status = KafkaStatus(RD_KAFKA_RESP_ERR__MSG_TIMED_OUT, "produce dictlog.records/3");
  EXPECT_NE(status.message().find("produce dictlog.records/3: _MSG_TIMED_OUT"),
            absl::string_view::npos)
      << status;
}

}  // namespace
}  // namespace dictlog::cluster
