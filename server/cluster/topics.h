// Topics: creates or verifies the Kafka topics of cluster mode (docs/cluster.md) when
// dictlogd starts: `dictlog.records` (the records; replication factor 3,
// min.insync.replicas 2, no unclean leader election, kept forever: retention.ms and
// retention.bytes -1, since a new or wiped node rebuilds from offset 0) and
// `dictlog.meta` (pools and their partitions; compacted). A topic that exists with
// another partition count, replication factor, a weaker setting or a finite retention
// is FAILED_PRECONDITION: dictlogd does not silently run with less durability than
// configured.
//
// Thread safety: stateless; each call makes and destroys its own client handle.
#ifndef DICTLOG_SERVER_CLUSTER_TOPICS_H_
#define DICTLOG_SERVER_CLUSTER_TOPICS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace dictlog::cluster {

inline constexpr char kRecordsTopic[] = "dictlog.records";
inline constexpr char kMetaTopic[] = "dictlog.meta";

struct TopicSpec {
  std::string name;
  int partitions = 1;
  int replication_factor = 3;
  int min_insync_replicas = 2;
  // cleanup.policy=compact (the latest message per key is kept) instead of delete.
  bool compacted = false;
  // retention.ms and retention.bytes of a topic that is not compacted (-1: kept
  // forever), set at creation and required of an existing topic. Default -1.
  int64_t retention_ms = -1;
  int64_t retention_bytes = -1;
};

// Creates the topic, or checks the existing one against `spec` (partitions,
// replication factor, min.insync.replicas at least spec's, unclean election off,
// compaction, the retention unless compacted). UNAVAILABLE / DEADLINE_EXCEEDED when the brokers do not answer within
// `timeout`.
absl::Status EnsureTopic(const std::string& bootstrap, const TopicSpec& spec,
                         absl::Duration timeout);

// The records and meta topics for `partitions` record partitions and `replication`
// copies (min.insync.replicas: 2, or 1 with a single copy).
TopicSpec RecordsTopic(int partitions, int replication);
TopicSpec MetaTopic(int replication);

}  // namespace dictlog::cluster

#endif  // DICTLOG_SERVER_CLUSTER_TOPICS_H_
