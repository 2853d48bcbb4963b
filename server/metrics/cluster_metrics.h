// RenderClusterMetrics: cluster mode's materializer as Prometheus families
// (docs/cluster.md, docs/operations.md): messages applied and skipped, dictionary
// messages, and per partition of dictlog.records the last applied offset and the lag
// behind the partition's end. The daemon fills ClusterMetrics from its ClusterNode at
// scrape time (server/metrics does not depend on server/cluster).
//
// Thread safety: a pure function of its arguments.
#ifndef DICTLOG_SERVER_METRICS_CLUSTER_METRICS_H_
#define DICTLOG_SERVER_METRICS_CLUSTER_METRICS_H_

#include <cstdint>
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
  };
  std::vector<Partition> partitions;
};

void RenderClusterMetrics(const ClusterMetrics& metrics, TextWriter* out);

}  // namespace dictlog::metrics

#endif  // DICTLOG_SERVER_METRICS_CLUSTER_METRICS_H_
