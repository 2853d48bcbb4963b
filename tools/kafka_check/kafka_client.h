// kafka_check's librdkafka calls (Debian's librdkafka 2.0.2, C API): create a topic,
// find a partition's leader, produce numbered messages with the settings cluster mode
// uses (idempotent producer, acks=all) and read a partition back. librdkafka's errors
// become absl::Status here and nowhere else (ToStatus). One thread; each call makes
// and destroys its own client handle.
#ifndef DICTLOG_TOOLS_KAFKA_CHECK_KAFKA_CLIENT_H_
#define DICTLOG_TOOLS_KAFKA_CHECK_KAFKA_CLIENT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace dictlog::kafka_check {

struct TopicSpec {
  std::string name;
  int partitions = 1;
  int replication_factor = 3;
  // Topic config min.insync.replicas.
  int min_insync_replicas = 2;
};

// Creates the topic (unclean.leader.election.enable=false); ALREADY_EXISTS if it does.
absl::Status CreateTopic(const std::string& bootstrap, const TopicSpec& spec,
                         int timeout_ms);

struct PartitionState {
  int32_t leader = -1;  // broker id; -1 while there is none
  int replicas = 0;
  int in_sync = 0;
};

// Metadata of topic/partition as the cluster reports it now.
absl::StatusOr<PartitionState> DescribePartition(const std::string& bootstrap,
                                                 const std::string& topic, int partition,
                                                 int timeout_ms);

struct ProduceOptions {
  std::string topic;
  int64_t count = 1000;            // messages "msg-00000000" .. count-1
  int64_t first = 0;               // number of the first message
  int64_t pause_after = -1;        // >= 0: after this many acks, call on_pause once
  int message_timeout_ms = 60000;  // librdkafka message.timeout.ms (retries inside it)
};

struct ProduceResult {
  std::vector<std::string> acknowledged;  // in acknowledgement order
  int64_t failed = 0;
  std::string first_error;  // of the first failed message
};

// Produces the messages to partition 0 with enable.idempotence=true and acks=all, at
// most 16 in flight, and collects the delivery reports. on_pause (may be empty) runs
// once after pause_after acknowledgements and blocks producing while it runs.
absl::StatusOr<ProduceResult> Produce(const std::string& bootstrap,
                                      const ProduceOptions& options,
                                      const std::function<void()>& on_pause);

// Every message of topic partition 0 from the start up to its high watermark at the
// time of the call, in offset order.
absl::StatusOr<std::vector<std::string>> ConsumeAll(const std::string& bootstrap,
                                                    const std::string& topic,
                                                    int timeout_ms);

}  // namespace dictlog::kafka_check

#endif  // DICTLOG_TOOLS_KAFKA_CHECK_KAFKA_CLIENT_H_
