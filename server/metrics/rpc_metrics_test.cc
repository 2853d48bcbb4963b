#include "server/metrics/rpc_metrics.h"

#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace dictlog::metrics {
namespace {

std::string Rendered(const RpcMetrics& metrics) {
  TextWriter out;
  metrics.Render(&out);
  return out.text();
}

TEST(RpcMetricsTest, CountsCallsByServiceMethodAndCode) {
  RpcMetrics metrics;
  metrics.RecordCall("/dictlog.v1.LogStore/Get", "OK", 0.0002);
  metrics.RecordCall("/dictlog.v1.LogStore/Get", "OK", 0.003);
  metrics.RecordCall("/dictlog.v1.LogStore/Get", "NOT_FOUND", 0.0001);
  const std::string text = Rendered(metrics);
  const std::string prefix =
      "dictlog_rpcs_total{service=\"dictlog.v1.LogStore\",method=\"Get\",code=";
  EXPECT_TRUE(absl::StrContains(text, prefix + "\"OK\"} 2\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, prefix + "\"NOT_FOUND\"} 1\n")) << text;
}

TEST(RpcMetricsTest, ReadErrorsAddUpByMethodAndCode) {
  RpcMetrics metrics;
  EXPECT_TRUE(absl::StrContains(Rendered(metrics),
                                "# TYPE dictlog_read_errors_total counter\n"));
  metrics.AddReadErrors("/dictlog.v1.LogStore/MultiGet", 5, 3);   // NOT_FOUND
  metrics.AddReadErrors("/dictlog.v1.LogStore/MultiGet", 5, 2);
  metrics.AddReadErrors("/dictlog.v1.LogStore/MultiGet", 15, 1);  // DATA_LOSS
  const std::string text = Rendered(metrics);
  const std::string prefix =
      "dictlog_read_errors_total{service=\"dictlog.v1.LogStore\",method=\"MultiGet\",code=";
  EXPECT_TRUE(absl::StrContains(text, prefix + "\"NOT_FOUND\"} 5\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, prefix + "\"DATA_LOSS\"} 1\n")) << text;
}

TEST(RpcMetricsTest, HistogramBucketsAreCumulative) {
  RpcMetrics metrics;
  metrics.RecordCall("/s.S/M", "OK", 0.0002);  // <= 0.00025
  metrics.RecordCall("/s.S/M", "OK", 0.003);   // <= 0.005
  metrics.RecordCall("/s.S/M", "OK", 60);      // only +Inf
  const std::string text = Rendered(metrics);
  const std::string prefix =
      "dictlog_rpc_duration_seconds_bucket{service=\"s.S\",method=\"M\",code=\"OK\",le=\"";
  EXPECT_TRUE(absl::StrContains(text, prefix + "0.0001\"} 0\n"));
  EXPECT_TRUE(absl::StrContains(text, prefix + "0.00025\"} 1\n"));
  EXPECT_TRUE(absl::StrContains(text, prefix + "0.0025\"} 1\n"));
  EXPECT_TRUE(absl::StrContains(text, prefix + "0.005\"} 2\n"));
  EXPECT_TRUE(absl::StrContains(text, prefix + "10\"} 2\n"));
  EXPECT_TRUE(absl::StrContains(text, prefix + "+Inf\"} 3\n"));
  const std::string labels = "{service=\"s.S\",method=\"M\",code=\"OK\"} ";
  EXPECT_TRUE(absl::StrContains(text, "dictlog_rpc_duration_seconds_count" + labels + "3\n"));
  EXPECT_TRUE(
      absl::StrContains(text, "dictlog_rpc_duration_seconds_sum" + labels + "60.0032\n"));
}

TEST(RpcMetricsTest, RecordsAndBytesFromConcurrentThreads) {
  RpcMetrics metrics;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&metrics] {
      for (int i = 0; i < 1000; ++i) {
        metrics.AddAppended(2, 100);
        metrics.AddRead(1, 10);
        metrics.RecordCall("/s.S/M", "OK", 0.001);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const std::string text = Rendered(metrics);
  EXPECT_TRUE(absl::StrContains(text, "dictlog_appended_records_total 8000\n"));
  EXPECT_TRUE(absl::StrContains(text, "dictlog_appended_bytes_total 400000\n"));
  EXPECT_TRUE(absl::StrContains(text, "dictlog_read_records_total 4000\n"));
  EXPECT_TRUE(absl::StrContains(text, "dictlog_read_bytes_total 40000\n"));
  EXPECT_TRUE(absl::StrContains(
      text, "dictlog_rpcs_total{service=\"s.S\",method=\"M\",code=\"OK\"} 4000\n"));
}

TEST(RpcMetricsTest, CodeNames) {
  EXPECT_EQ(GrpcCodeName(0), "OK");
  EXPECT_EQ(GrpcCodeName(5), "NOT_FOUND");
  EXPECT_EQ(GrpcCodeName(14), "UNAVAILABLE");
  EXPECT_EQ(GrpcCodeName(16), "UNAUTHENTICATED");
  EXPECT_EQ(GrpcCodeName(99), "UNKNOWN");
}

}  // namespace
}  // namespace dictlog::metrics
