#include "server/cluster/consumer.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/cluster/kafka_status.h"

namespace dictlog::cluster {
namespace {

bool Transient(rd_kafka_resp_err_t err) {
  return err == RD_KAFKA_RESP_ERR__PARTITION_EOF || err == RD_KAFKA_RESP_ERR__TRANSPORT ||
         err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN ||
         err == RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION ||
         err == RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Consumer>> Consumer::Open(
    const std::string& bootstrap, const std::string& topic,
    const std::vector<PartitionStart>& starts) {
  auto handle = NewKafkaHandle(RD_KAFKA_CONSUMER, bootstrap,
                               {{"group.id", "dictlogd-materializer"},
                                {"enable.auto.commit", "false"},
                                {"enable.auto.offset.store", "false"},
                                {"auto.offset.reset", "error"},
                                {"fetch.wait.max.ms", "50"}});
  if (!handle.ok()) return handle.status();
  rd_kafka_topic_partition_list_t* list =
      rd_kafka_topic_partition_list_new(static_cast<int>(starts.size()));
  for (const PartitionStart& start : starts) {
    rd_kafka_topic_partition_list_add(list, topic.c_str(), start.partition)->offset =
        start.offset;
  }
  rd_kafka_resp_err_t err = rd_kafka_assign(handle->get(), list);
  rd_kafka_topic_partition_list_destroy(list);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return KafkaStatus(err, "assign " + topic);
  return std::unique_ptr<Consumer>(new Consumer(*std::move(handle), topic));
}

int64_t Consumer::HighWatermark(int32_t partition) const {
  int64_t low = -1;
  int64_t high = -1;
  const rd_kafka_resp_err_t err =
      rd_kafka_get_watermark_offsets(handle_.get(), topic_.c_str(), partition, &low, &high);
  return err == RD_KAFKA_RESP_ERR_NO_ERROR && high >= 0 ? high : -1;
}

absl::Status Consumer::Pause(const std::vector<int32_t>& partitions, bool pause) {
  rd_kafka_topic_partition_list_t* list =
      rd_kafka_topic_partition_list_new(static_cast<int>(partitions.size()));
  for (int32_t partition : partitions) {
    rd_kafka_topic_partition_list_add(list, topic_.c_str(), partition);
  }
  const rd_kafka_resp_err_t err = pause ? rd_kafka_pause_partitions(handle_.get(), list)
                                        : rd_kafka_resume_partitions(handle_.get(), list);
  rd_kafka_topic_partition_list_destroy(list);
  return KafkaStatus(err, pause ? "pausing partitions" : "resuming partitions");
}

absl::StatusOr<int64_t> Consumer::QueryEnd(int32_t partition, absl::Duration timeout) const {
  const absl::Time deadline = absl::Now() + timeout;
  int64_t low = -1;
  int64_t high = -1;
  rd_kafka_resp_err_t err;
  // A topic another node has just created may be unknown to a broker for a moment
  // (tests/cluster:chaos_test saw UNKNOWN_TOPIC_OR_PART and _UNKNOWN_PARTITION when
  // three nodes started at once): asked again until the timeout.
  while (true) {
    err = rd_kafka_query_watermark_offsets(
        handle_.get(), topic_.c_str(), partition, &low, &high,
        static_cast<int>(std::max<int64_t>(
            1, absl::ToInt64Milliseconds(deadline - absl::Now()))));
    const bool transient = err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART ||
                           err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION ||
                           err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC ||
                           err == RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE ||
                           err == RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION;
    if (!transient || absl::Now() + absl::Milliseconds(100) >= deadline) break;
    absl::SleepFor(absl::Milliseconds(100));  // the brokers' metadata catching up
  }
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaStatus(err, absl::StrCat("the end of ", topic_, "/", partition));
  }
  return high;
}

Consumer::~Consumer() { rd_kafka_consumer_close(handle_.get()); }

absl::StatusOr<std::vector<LogMessage>> Consumer::Poll(absl::Duration timeout,
                                                       size_t max_messages) {
  std::vector<LogMessage> messages;
  if (!pending_.ok()) return std::exchange(pending_, absl::OkStatus());
  int wait_ms = static_cast<int>(absl::ToInt64Milliseconds(timeout));
  while (messages.size() < max_messages) {
    rd_kafka_message_t* message = rd_kafka_consumer_poll(handle_.get(), wait_ms);
    if (message == nullptr) break;
    wait_ms = 0;  // only the first message is waited for
    const rd_kafka_resp_err_t err = message->err;
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      LogMessage& out = messages.emplace_back();
      out.partition = message->partition;
      out.offset = message->offset;
      if (message->key != nullptr) out.key.assign(static_cast<const char*>(message->key), message->key_len);
      out.value.assign(static_cast<const char*>(message->payload), message->len);
    }
    absl::Status status = Transient(err) ? absl::OkStatus()
                                         : KafkaStatus(err, rd_kafka_message_errstr(message));
    rd_kafka_message_destroy(message);
    if (status.ok()) continue;
    if (messages.empty()) return status;
    pending_ = status;  // the messages before it are answered first
    break;
  }
  return messages;
}

}  // namespace dictlog::cluster
