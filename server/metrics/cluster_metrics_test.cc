// RenderClusterMetrics: the families and their samples.
#include "server/metrics/cluster_metrics.h"

#include "gtest/gtest.h"

namespace dictlog::metrics {
namespace {

bool Has(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

TEST(ClusterMetricsTest, CountersOffsetsAndLagPerPartition) {
  ClusterMetrics metrics;
  metrics.applied_messages = 12;
  metrics.skipped_messages = 1;
  metrics.dictionary_messages = 3;
  metrics.partitions = {{0, 41, 50}, {1, -1, 7}, {2, -1, -1}};
  TextWriter out;
  RenderClusterMetrics(metrics, &out);
  const std::string& text = out.text();
  EXPECT_TRUE(Has(text, "dictlog_cluster_applied_messages_total 12")) << text;
  EXPECT_TRUE(Has(text, "dictlog_cluster_skipped_messages_total 1"));
  EXPECT_TRUE(Has(text, "dictlog_cluster_dictionary_messages_total 3"));
  EXPECT_TRUE(Has(text, "dictlog_cluster_applied_offset{partition=\"0\"} 41"));
  EXPECT_TRUE(Has(text, "dictlog_cluster_applied_offset{partition=\"2\"} -1"));
  EXPECT_TRUE(Has(text, "dictlog_cluster_lag_messages{partition=\"0\"} 8"));  // 42..49
  EXPECT_TRUE(Has(text, "dictlog_cluster_lag_messages{partition=\"1\"} 7"));  // 0..6
  EXPECT_EQ(text.find("dictlog_cluster_lag_messages{partition=\"2\"}"), std::string::npos);
}

TEST(ClusterMetricsTest, RoutingFamilies) {
  ClusterMetrics metrics;
  metrics.partitions = {{0, 4, 5, 1}, {1, -1, 9, 0}, {2, -1, -1, -1}};
  metrics.assignment_epoch = 3;
  metrics.assignment_mismatch = true;
  metrics.forwarded = {{"Append", 4}, {"Get", 2}, {"MultiGet", 5}};
  metrics.not_served_here = 7;
  metrics.appended_without_holder = 6;
  TextWriter out;
  RenderClusterMetrics(metrics, &out);
  const std::string& text = out.text();
  EXPECT_TRUE(Has(text, "dictlog_cluster_partition_serving{partition=\"0\"} 1")) << text;
  EXPECT_TRUE(Has(text, "dictlog_cluster_partition_serving{partition=\"1\"} 0"));
  EXPECT_EQ(text.find("dictlog_cluster_partition_serving{partition=\"2\"}"), std::string::npos);
  EXPECT_TRUE(Has(text, "dictlog_cluster_assignment_epoch 3"));
  EXPECT_TRUE(Has(text, "dictlog_cluster_assignment_mismatch 1"));
  EXPECT_TRUE(Has(text, "dictlog_cluster_forwarded_total{method=\"Get\"} 2"));
  EXPECT_TRUE(Has(text, "dictlog_cluster_forwarded_total{method=\"MultiGet\"} 5"));
  EXPECT_TRUE(Has(text, "dictlog_cluster_not_served_here_total 7"));
  EXPECT_TRUE(Has(text, "dictlog_cluster_forwarded_total{method=\"Append\"} 4"));
  EXPECT_TRUE(Has(text, "dictlog_cluster_appends_without_holder_total 6"));
}

TEST(ClusterMetricsTest, RebuildFamilies) {
  ClusterMetrics metrics;
  metrics.rebuild_bytes = 4096;
  metrics.rebuild_paused_seconds = 1.5;
  TextWriter out;
  RenderClusterMetrics(metrics, &out);
  EXPECT_TRUE(Has(out.text(), "dictlog_cluster_rebuild_bytes_total 4096")) << out.text();
  EXPECT_TRUE(Has(out.text(), "dictlog_cluster_rebuild_paused_seconds_total 1.5"));
}

TEST(ClusterMetricsTest, DropFamilies) {
  ClusterMetrics metrics;
  metrics.partitions_dropped = 2;
  metrics.dropped_records = 300;
  metrics.dropped_bytes = 9000;
  metrics.partitions_pending_drop = 1;
  TextWriter out;
  RenderClusterMetrics(metrics, &out);
  EXPECT_TRUE(Has(out.text(), "dictlog_cluster_partitions_dropped_total 2")) << out.text();
  EXPECT_TRUE(Has(out.text(), "dictlog_cluster_dropped_records_total 300"));
  EXPECT_TRUE(Has(out.text(), "dictlog_cluster_dropped_bytes_total 9000"));
  EXPECT_TRUE(Has(out.text(), "dictlog_cluster_partitions_pending_drop 1"));
}

}  // namespace
}  // namespace dictlog::metrics
