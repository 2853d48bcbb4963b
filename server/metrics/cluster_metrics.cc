#include "server/metrics/cluster_metrics.h"

#include <algorithm>
#include <string>

namespace dictlog::metrics {

namespace {

// Partitions no longer held (ADR 0030).
void RenderDropMetrics(const ClusterMetrics& metrics, TextWriter* out) {
  out->Family("dictlog_cluster_partitions_dropped_total", "counter",
              "Partitions no longer held whose records this node deleted.");
  out->Sample("dictlog_cluster_partitions_dropped_total", {},
              static_cast<double>(metrics.partitions_dropped));
  out->Family("dictlog_cluster_dropped_records_total", "counter",
              "Records deleted with partitions no longer held.");
  out->Sample("dictlog_cluster_dropped_records_total", {},
              static_cast<double>(metrics.dropped_records));
  out->Family("dictlog_cluster_dropped_bytes_total", "counter",
              "Stored bytes of the records deleted with partitions no longer held.");
  out->Sample("dictlog_cluster_dropped_bytes_total", {},
              static_cast<double>(metrics.dropped_bytes));
  out->Family("dictlog_cluster_partitions_pending_drop", "gauge",
              "Partitions no longer held whose records are still here "
              "(--cluster_drop_unheld_after_ms, replicas catching up).");
  out->Sample("dictlog_cluster_partitions_pending_drop", {},
              static_cast<double>(metrics.partitions_pending_drop));
}

}  // namespace

void RenderClusterMetrics(const ClusterMetrics& metrics, TextWriter* out) {
  out->Family("dictlog_cluster_applied_messages_total", "counter",
              "Messages of dictlog.records this node applied since start-up.");
  out->Sample("dictlog_cluster_applied_messages_total", {}, metrics.applied_messages);
  out->Family("dictlog_cluster_skipped_messages_total", "counter",
              "Messages this node could never apply and skipped (its log says why).");
  out->Sample("dictlog_cluster_skipped_messages_total", {}, metrics.skipped_messages);
  out->Family("dictlog_cluster_dictionary_messages_total", "counter",
              "Dictionary and activation messages this node applied since start-up.");
  out->Sample("dictlog_cluster_dictionary_messages_total", {}, metrics.dictionary_messages);
  out->Family("dictlog_cluster_applied_offset", "gauge",
              "The last offset of each partition applied here (-1: none).");
  for (const ClusterMetrics::Partition& p : metrics.partitions) {
    out->Sample("dictlog_cluster_applied_offset", {{"partition", std::to_string(p.partition)}},
                static_cast<double>(p.applied_offset));
  }
  out->Family("dictlog_cluster_lag_messages", "gauge",
              "Messages of each partition not applied here yet, as of the consumer's last "
              "fetch (absent until it knows the partition's end).");
  for (const ClusterMetrics::Partition& p : metrics.partitions) {
    if (p.high_watermark < 0) continue;
    out->Sample("dictlog_cluster_lag_messages", {{"partition", std::to_string(p.partition)}},
                static_cast<double>(std::max<int64_t>(0, p.high_watermark - 1 - p.applied_offset)));
  }
  out->Family("dictlog_cluster_partition_serving", "gauge",
              "1 for a partition this node holds and serves (caught up), 0 while it builds it "
              "or while it lags (--cluster_max_serving_lag_messages).");
  for (const ClusterMetrics::Partition& p : metrics.partitions) {
    if (p.serving < 0) continue;
    out->Sample("dictlog_cluster_partition_serving",
                {{"partition", std::to_string(p.partition)}}, p.serving);
  }
  out->Family("dictlog_cluster_assignment_epoch", "gauge",
              "The epoch of the assignment of partitions to nodes this node follows.");
  out->Sample("dictlog_cluster_assignment_epoch", {},
              static_cast<double>(metrics.assignment_epoch));
  out->Family("dictlog_cluster_assignment_mismatch", "gauge",
              "1 if this node's --cluster_nodes/--cluster_replicas differ from the log's "
              "assignment (it follows the log's).");
  out->Sample("dictlog_cluster_assignment_mismatch", {}, metrics.assignment_mismatch ? 1 : 0);
  out->Family("dictlog_cluster_forwarded_total", "counter",
              "Calls (reads, appends) of partitions not served here, forwarded to a "
              "replica, by method.");
  for (const auto& [method, count] : metrics.forwarded) {
    out->Sample("dictlog_cluster_forwarded_total", {{"method", method}},
                static_cast<double>(count));
  }
  out->Family("dictlog_cluster_not_served_here_total", "counter",
              "dictlog-route: direct reads answered FAILED_PRECONDITION (NotServedHere).");
  out->Sample("dictlog_cluster_not_served_here_total", {},
              static_cast<double>(metrics.not_served_here));
  out->Family("dictlog_cluster_appends_without_holder_total", "counter",
              "Appends of partitions not served here written here because no live "
              "replica served them (stored without a dictionary this node lacks).");
  out->Sample("dictlog_cluster_appends_without_holder_total", {},
              static_cast<double>(metrics.appended_without_holder));
  out->Family("dictlog_cluster_rebuild_bytes_total", "counter",
              "Bytes of log messages applied to partitions this node was building.");
  out->Sample("dictlog_cluster_rebuild_bytes_total", {},
              static_cast<double>(metrics.rebuild_bytes));
  out->Family("dictlog_cluster_rebuild_paused_seconds_total", "counter",
              "Time building partitions was paused by --cluster_rebuild_bytes_per_second.");
  out->Sample("dictlog_cluster_rebuild_paused_seconds_total", {},
              metrics.rebuild_paused_seconds);
  RenderDropMetrics(metrics, out);
}

}  // namespace dictlog::metrics
