#include "server/cluster/producer.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "server/cluster/kafka_status.h"

namespace dictlog::cluster {
namespace {

// One message's delivery report, filled on the poll thread.
struct Delivery {
  absl::Notification done;
  rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
  int64_t offset = -1;
};

void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* message, void*) {
  auto* delivery = static_cast<Delivery*>(message->_private);
  delivery->err = message->err;
  delivery->offset = message->offset;
  delivery->done.Notify();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Producer>> Producer::Open(const ProducerOptions& options) {
  if (options.delivery_timeout < absl::Milliseconds(1)) {
    return absl::InvalidArgumentError("kafka delivery timeout must be at least 1 ms");
  }
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set_dr_msg_cb(conf, OnDelivery);
  auto handle = NewKafkaHandle(
      RD_KAFKA_PRODUCER, options.bootstrap,
      {{"client.id", options.client_id},
       {"enable.idempotence", "true"},
       {"acks", "all"},
       {"linger.ms", "1"},
       {"compression.type", options.compression},
       {"message.timeout.ms",
        std::to_string(absl::ToInt64Milliseconds(options.delivery_timeout))}},
      conf);
  if (!handle.ok()) return handle.status();
  return std::unique_ptr<Producer>(new Producer(*std::move(handle), options.delivery_timeout));
}

Producer::Producer(KafkaHandle handle, absl::Duration delivery_timeout)
    : delivery_timeout_(delivery_timeout),
      handle_(std::move(handle)),
      poller_([this] { PollLoop(); }) {}

Producer::~Producer() {
  rd_kafka_flush(handle_.get(), static_cast<int>(absl::ToInt64Milliseconds(delivery_timeout_)));
  stop_.store(true);
  poller_.join();
}

void Producer::PollLoop() {
  while (!stop_.load()) rd_kafka_poll(handle_.get(), 50);
  rd_kafka_poll(handle_.get(), 0);  // reports of the final flush
}

absl::StatusOr<int64_t> Producer::Produce(const std::string& topic, int32_t partition,
                                          absl::string_view key, absl::string_view value) {
  Delivery delivery;
  rd_kafka_resp_err_t err = rd_kafka_producev(
      handle_.get(), RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
      RD_KAFKA_V_KEY(key.data(), key.size()),
      RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
      RD_KAFKA_V_OPAQUE(&delivery), RD_KAFKA_V_END);
  const std::string what = absl::StrCat("produce to ", topic, "/", partition);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return KafkaStatus(err, what);
  // librdkafka reports every accepted message exactly once, at the latest when
  // message.timeout.ms has passed, so this wait is bounded.
  delivery.done.WaitForNotification();
  if (delivery.err != RD_KAFKA_RESP_ERR_NO_ERROR) return KafkaStatus(delivery.err, what);
  return delivery.offset;
}

}  // namespace dictlog::cluster
