#include "benchmarks/load/report.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace dictlog::bench {
namespace {

TEST(PercentileTest, NearestRankOfOneToThousand) {
  std::vector<int64_t> sample;
  for (int64_t i = 1000; i >= 1; --i) sample.push_back(i);  // Unsorted on purpose.
  const LatencySummary summary = Summarize(sample);
  EXPECT_EQ(summary.count, 1000);
  EXPECT_EQ(summary.p50_us, 500);
  EXPECT_EQ(summary.p90_us, 900);
  EXPECT_EQ(summary.p99_us, 990);
  EXPECT_EQ(summary.p999_us, 999);
  EXPECT_EQ(summary.max_us, 1000);
  EXPECT_DOUBLE_EQ(summary.mean_us, 500.5);
}

TEST(PercentileTest, SmallAndEmptySamples) {
  EXPECT_EQ(Percentile({}, 50), 0);
  EXPECT_EQ(Percentile({7}, 0.1), 7);
  EXPECT_EQ(Percentile({7}, 100), 7);
  // Two values: the median is the lower one, p51 the upper.
  EXPECT_EQ(Percentile({10, 20}, 50), 10);
  EXPECT_EQ(Percentile({10, 20}, 51), 20);
  std::vector<int64_t> empty;
  EXPECT_EQ(Summarize(empty).count, 0);
}

TEST(PercentileTest, OneSlowOutlierOnlyShowsAtTheTop) {
  std::vector<int64_t> sample(999, 100);
  sample.push_back(50'000);
  const LatencySummary summary = Summarize(sample);
  EXPECT_EQ(summary.p99_us, 100);
  EXPECT_EQ(summary.p999_us, 100);
  EXPECT_EQ(summary.max_us, 50'000);
}

RunReport SampleReport() {
  RunReport report;
  report.options.server = "127.0.0.1:7070";
  report.options.op = ReadOp::kMultiGet;
  report.options.batch = 64;
  report.options.concurrency = 8;
  report.ids = 100;
  report.totals.seconds = 2;
  report.totals.ops = 1000;
  report.totals.records = 64000;
  report.totals.raw_bytes = 8'000'000;
  report.totals.errors[absl::StatusCode::kNotFound] = 3;
  report.totals.errors[absl::StatusCode::kDeadlineExceeded] = 1;
  std::vector<int64_t> latencies = {100, 200, 300, 400};
  report.latency = Summarize(latencies);
  return report;
}

TEST(ReportTest, JsonCarriesRatesPercentilesAndErrorCodes) {
  const std::string json = FormatJson(SampleReport());
  EXPECT_NE(json.find("\"op\":\"multiget\",\"batch\":64,\"concurrency\":8,"
                      "\"connections\":4"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"ops\":1000,\"ops_per_s\":500.0"), std::string::npos) << json;
  EXPECT_NE(json.find("\"records_per_s\":32000.0"), std::string::npos) << json;
  EXPECT_NE(json.find("\"raw_mb_per_s\":4.000"), std::string::npos) << json;
  EXPECT_NE(json.find("\"p50\":200,\"p90\":400"), std::string::npos) << json;
  EXPECT_NE(json.find("\"errors\":4,\"errors_by_code\":{\"DEADLINE_EXCEEDED\":1,"
                      "\"NOT_FOUND\":3}"),
            std::string::npos)
      << json;
}

TEST(ReportTest, FirstErrorMessagesAreKeptPerCode) {
  RunReport report = SampleReport();
  report.totals.first_error[absl::StatusCode::kNotFound] = "no record \"HDFS/9\"";
  const std::string json = FormatJson(report);
  EXPECT_NE(json.find("\"first_error\":{\"NOT_FOUND\":\"no record \\\"HDFS/9\\\"\"}"),
            std::string::npos)
      << json;
  EXPECT_NE(FormatText(report).find("  first NOT_FOUND: no record \"HDFS/9\"\n"),
            std::string::npos)
      << FormatText(report);
}

TEST(ReportTest, AppendsAreReportedApart) {
  RunReport report = SampleReport();
  report.options.mix = Mix{95, 5};
  report.totals.appends = 50;
  std::vector<int64_t> appends = {1000, 3000};
  report.append_latency = Summarize(appends);
  const std::string json = FormatJson(report);
  EXPECT_NE(json.find("\"mix\":\"read:95,append:5\",\"appends\":50,\"appends_per_s\":25.0,"
                      "\"append_latency_us\":{\"count\":2,\"p50\":1000,\"p90\":3000"),
            std::string::npos)
      << json;
  EXPECT_NE(FormatText(report).find("appends     50  (25/s; mix read:95,append:5)"),
            std::string::npos)
      << FormatText(report);
  EXPECT_EQ(FormatText(SampleReport()).find("appends"), std::string::npos);
}

TEST(ReportTest, RoutingFiguresAreReportedWhenTheClientRouted) {
  RunReport report = SampleReport();
  EXPECT_EQ(FormatText(report).find("routing"), std::string::npos);  // One node.
  EXPECT_NE(FormatJson(report).find("\"routing\":{\"map_fetches\":0,"), std::string::npos);
  report.routing.map_fetches = 5;
  report.routing.refreshes_after_failure = 3;
  report.routing.epoch_changes = 2;
  report.routing.retargets = 4;
  EXPECT_NE(FormatText(report).find("routing     5 map fetches (3 after a refused or failed "
                                    "read, 2 new epochs), 4 reads retargeted"),
            std::string::npos)
      << FormatText(report);
  EXPECT_NE(FormatJson(report).find("\"routing\":{\"map_fetches\":5,"
                                    "\"refreshes_after_failure\":3,\"epoch_changes\":2,"
                                    "\"retargets\":4}}"),
            std::string::npos)
      << FormatJson(report);
}

TEST(ReportTest, TextNamesEveryFigure) {
  const std::string text = FormatText(SampleReport());
  for (const char* want : {"1000  (500 ops/s)", "64000  (32000 records/s)", "4.0 MB/s",
                           "p50 200  p90 400  p99 400  p99.9 400", "NOT_FOUND 3"}) {
    EXPECT_NE(text.find(want), std::string::npos) << want << " in\n" << text;
  }
  EXPECT_NE(FormatProgress(2, 1000, 64000, 4).find("500 ops/s"), std::string::npos);
}

}  // namespace
}  // namespace dictlog::bench
