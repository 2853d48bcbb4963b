#include "training/report.h"

#include <string>

#include "gtest/gtest.h"

namespace dictlog::trainer {
namespace {

TrainResult ExampleResult() {
  TrainResult result;
  result.dictionary = std::string(16384, 'd');
  result.samples_used = 9000;
  result.samples_excluded = 12;
  result.train_seconds = 0.213;
  Evaluation& evaluation = result.evaluation;
  evaluation.records = 1000;
  evaluation.raw_bytes = 128934;
  evaluation.baseline_bytes = 115180;
  evaluation.candidate_bytes = 53020;
  evaluation.baseline_ratio = 128934.0 / 115180;
  evaluation.candidate_ratio = 128934.0 / 53020;
  evaluation.gain = evaluation.candidate_ratio / evaluation.baseline_ratio - 1;
  evaluation.compress_mb_per_s = 120.54;
  evaluation.decompress_mb_per_s = 850.21;
  return result;
}

TEST(FormatReportTest, AlignedTableAgainstNoDictionary) {
  EXPECT_EQ(FormatReport(ExampleResult(), {"out.dict", 40123, ""}),
            "dictionary  out.dict  id 40123  16384 bytes  trained on 9000 records "
            "(12 excluded) in 0.21 s\n"
            "                     records  raw_bytes  stored_bytes  ratio   "
            "compress_MB/s  decompress_MB/s\n"
            "no dictionary           1000     128934        115180  1.119\n"
            "candidate               1000     128934         53020  2.432"
            "           120.5            850.2\n"
            "gain: +117.2%\n");
}

TEST(FormatReportTest, BaselineRowNamesTheFileAndWidensTheLabels) {
  TrainResult result = ExampleResult();
  result.evaluation.gain = -0.0123;
  const std::string report =
      FormatReport(result, {"new.dict", 40124, "/var/lib/dictlog/old-pool.dict"});
  EXPECT_NE(report.find("\nbaseline /var/lib/dictlog/old-pool.dict     1000     128934"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("\n" + std::string(41, ' ') + "records  raw_bytes"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("\ngain: -1.2%\n"), std::string::npos) << report;
}

}  // namespace
}  // namespace dictlog::trainer
