#include "server/metrics/text_writer.h"

#include "gtest/gtest.h"

namespace dictlog::metrics {
namespace {

TEST(TextWriterTest, FamilyThenSamplesWithLabels) {
  TextWriter out;
  out.Family("dictlog_pool_records", "gauge", "Records stored.");
  out.Sample("dictlog_pool_records", {{"pool", "web"}}, 12);
  out.Sample("dictlog_pool_records", {{"pool", "a"}, {"x", "y"}}, 0.5);
  out.Sample("dictlog_up", {}, 1);
  EXPECT_EQ(out.text(),
            "# HELP dictlog_pool_records Records stored.\n"
            "# TYPE dictlog_pool_records gauge\n"
            "dictlog_pool_records{pool=\"web\"} 12\n"
            "dictlog_pool_records{pool=\"a\",x=\"y\"} 0.5\n"
            "dictlog_up 1\n");
}

TEST(TextWriterTest, EscapesLabelValuesAndHelp) {
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  TextWriter out;
  out.Family("m", "gauge", "two\nlines \\ here");
  EXPECT_EQ(out.text(), "# HELP m two\\nlines \\\\ here\n# TYPE m gauge\n");
}

TEST(TextWriterTest, FormatsValues) {
  EXPECT_EQ(FormatValue(0), "0");
  EXPECT_EQ(FormatValue(268435456), "268435456");
  EXPECT_EQ(FormatValue(-3), "-3");
  EXPECT_EQ(FormatValue(0.00025), "0.00025");
  EXPECT_EQ(FormatValue(2.5), "2.5");
  EXPECT_EQ(FormatValue(1.0 / 3), "0.3333333333333333");  // Shortest exact.
  EXPECT_EQ(FormatValue(1.0 / 0.0), "+Inf");
  EXPECT_EQ(FormatValue(-1.0 / 0.0), "-Inf");
  EXPECT_EQ(FormatValue(0.0 / 0.0), "NaN");
}

}  // namespace
}  // namespace dictlog::metrics
