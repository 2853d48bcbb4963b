// Producer: dictlogd's writer into Kafka (cluster mode, docs/cluster.md). Idempotent
// (enable.idempotence=true, acks=all): librdkafka's retries never duplicate or reorder
// a message within a partition. Produce blocks until the message's delivery report:
// OK means the partition's in-sync replicas (at least min.insync.replicas) have it.
// A background thread serves the delivery reports.
//
// Errors (KafkaStatus): no reachable broker, no leader, NOT_ENOUGH_REPLICAS ->
// UNAVAILABLE once librdkafka gives up retrying; a message not acknowledged within
// delivery_timeout -> DEADLINE_EXCEEDED (it may still have been written); a message
// over the topic's max.message.bytes -> RESOURCE_EXHAUSTED.
//
// Thread safety: Produce may be called concurrently from any number of threads.
#ifndef DICTLOG_SERVER_CLUSTER_PRODUCER_H_
#define DICTLOG_SERVER_CLUSTER_PRODUCER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/cluster/kafka_handle.h"

namespace dictlog::cluster {

struct ProducerOptions {
  // HOST:PORT,... of some brokers. Required.
  std::string bootstrap;
  // librdkafka's message.timeout.ms: a message not acknowledged within this fails
  // (retries happen inside it). Default 10 s.
  absl::Duration delivery_timeout = absl::Seconds(10);
  // Kafka client.id (broker logs and metrics). Default "dictlogd".
  std::string client_id = "dictlogd";
  // Compression of the Kafka record batches (compression.type). Default "zstd".
  std::string compression = "zstd";
};

class Producer {
 public:
  // INVALID_ARGUMENT for bad options. Connects lazily (the first Produce waits).
  static absl::StatusOr<std::unique_ptr<Producer>> Open(const ProducerOptions& options);
  // Waits up to delivery_timeout for messages in flight, then stops.
  ~Producer();

  Producer(const Producer&) = delete;
  Producer& operator=(const Producer&) = delete;

  // Produces one message to topic/partition and waits for its delivery report;
  // returns the offset the partition gave it.
  absl::StatusOr<int64_t> Produce(const std::string& topic, int32_t partition,
                                  absl::string_view key, absl::string_view value);

 private:
  Producer(KafkaHandle handle, absl::Duration delivery_timeout);
  void PollLoop();

  const absl::Duration delivery_timeout_;
  KafkaHandle handle_;
  std::atomic<bool> stop_{false};
  std::thread poller_;  // Serves delivery reports; last: started after the rest.
};

}  // namespace dictlog::cluster

#endif  // DICTLOG_SERVER_CLUSTER_PRODUCER_H_
