// RenderClusterMetrics: cluster mode's materializer as Prometheus families
// (docs/cluster.md, docs/operations.md): messages applied and skipped, dictionary
// messages, and per partition of dictlog.records the last applied offset and the lag
// behind the partition's end; routing (ADR 0022): the assignment's epoch, whether this
// node's flags agree with it, per held partition whether it serves, reads and appends
// forwarded (by method), reads answered NotServedHere and appends written here for want
// of a live replica (ADR 0025); rebuilds: bytes applied to partitions being built and
// how long the throttle paused them; partitions no longer held whose data was dropped
// (ADR 0030), their records and bytes, and those waiting to be. The daemon fills ClusterMetrics from its ClusterNode at
// scrape time (server/metrics does not depend on server/cluster).
//
// Thread safety: a pure function of its arguments.
#ifndef DICTLOG_SERVER_METRICS_CLUSTER_METRICS_H_
#define DICTLOG_SERVER_METRICS_CLUSTER_METRICS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "server/metrics/text_writer.h"

namespace dictlog::metrics {

struct ClusterMetrics {
  uint64_t applied_messages = 0;
  uint64_t skipped_messages = 0;
  uint64_t dictionary_messages = 0;
  struct Partition {
    int32_t partition = 0;
    int64_t applied_offset = -1;  // -1: nothing applied.
    int64_t high_watermark = -1;  // The partition's next offset; -1: not known yet.
    int serving = -1;  // 1 or 0 for a partition this node holds; -1: not held here.
  };
  std::vector<Partition> partitions;
  uint64_t assignment_epoch = 0;
  bool assignment_mismatch = false;  // This node's flags differ from the log's assignment.
  std::map<std::string, uint64_t> forwarded;  // Calls forwarded to a peer, by method.
  uint64_t not_served_here = 0;
  uint64_t appended_without_holder = 0;  // Appends written here: no live replica served.
  uint64_t rebuild_bytes = 0;          // Applied to partitions being built.
  double rebuild_paused_seconds = 0;  // Building paused by the rebuild throttle.
  uint64_t partitions_dropped = 0;     // Partitions no longer held, data deleted here.
  uint64_t dropped_records = 0;        // Their records.
  uint64_t dropped_bytes = 0;          // Their stored bytes.
  uint64_t partitions_pending_drop = 0;  // No longer held, data still here.
};

void RenderClusterMetrics(const ClusterMetrics& metrics, TextWriter* out);

}  // namespace dictlog::metrics

#endif  // DICTLOG_SERVER_METRICS_CLUSTER_METRICS_H_
