// Consumer: reads assigned partitions of one topic from given offsets (cluster mode's
// materializer, docs/cluster.md). No consumer group membership and no committed
// offsets: the caller stores where it is (in its own RocksDB, atomically with what it
// applied) and passes those offsets to Open after a restart.
//
// Thread safety: one thread at a time (the materializer's); HighWatermark from any.
#ifndef DICTLOG_SERVER_CLUSTER_CONSUMER_H_
#define DICTLOG_SERVER_CLUSTER_CONSUMER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/cluster/kafka_handle.h"

namespace dictlog::cluster {

// The next offset of a partition that has none stored: its first message.
inline constexpr int64_t kFromBeginning = RD_KAFKA_OFFSET_BEGINNING;

struct PartitionStart {
  int32_t partition = 0;
  int64_t offset = kFromBeginning;  // The next message to read.
};

struct LogMessage {
  int32_t partition = 0;
  int64_t offset = 0;
  std::string key;
  std::string value;
};

class Consumer {
 public:
  // Reads `topic`'s partitions of `starts`, each from its offset.
  static absl::StatusOr<std::unique_ptr<Consumer>> Open(const std::string& bootstrap,
                                                        const std::string& topic,
                                                        const std::vector<PartitionStart>& starts);
  ~Consumer();

  Consumer(const Consumer&) = delete;
  Consumer& operator=(const Consumer&) = delete;

  // Waits up to `timeout` for a first message, then returns it and those already
  // fetched, at most `max_messages`, in offset order within each partition. Empty when
  // nothing arrived. Errors of the consumer itself (the topic vanished, an offset out
  // of range) are returned; a broker that is down is retried inside.
  absl::StatusOr<std::vector<LogMessage>> Poll(absl::Duration timeout, size_t max_messages);
  // The offset the next message of `partition` will get, as the consumer last heard
  // from its leader (no request is made); -1 if not known yet. May be called from any
  // thread, also while another polls.
  int64_t HighWatermark(int32_t partition) const;
  // The offset the next message of `partition` will get, asked of its leader now
  // (waits up to `timeout`); the brokers' error otherwise. Any thread.
  absl::StatusOr<int64_t> QueryEnd(int32_t partition, absl::Duration timeout) const;
  // Stops (pause) or resumes fetching `partitions`. Messages already returned by Poll
  // stay returned; fetching resumes after the last of them (librdkafka's app position).
  absl::Status Pause(const std::vector<int32_t>& partitions, bool pause);

 private:
  Consumer(KafkaHandle handle, std::string topic)
      : handle_(std::move(handle)), topic_(std::move(topic)) {}

  KafkaHandle handle_;
  const std::string topic_;
  absl::Status pending_;  // An error met after messages that were returned first.
};

}  // namespace dictlog::cluster

#endif  // DICTLOG_SERVER_CLUSTER_CONSUMER_H_
