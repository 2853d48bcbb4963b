#include "benchmarks/load/options.h"

#include <string>

#include "gtest/gtest.h"

namespace dictlog::bench {
namespace {

// The error's message, or "" if `status` is OK.
std::string ErrorOf(const absl::Status& status) {
  EXPECT_TRUE(status.ok() || status.code() == absl::StatusCode::kInvalidArgument) << status;
  return std::string(status.message());
}

ReadOptions GoodRead() {
  ReadOptions options;
  options.server = "127.0.0.1:7070";
  options.ids_file = "ids.txt";
  return options;
}

TEST(OptionsTest, ParsesOpsAndDistributions) {
  EXPECT_EQ(*ParseReadOp("get"), ReadOp::kGet);
  EXPECT_EQ(*ParseReadOp("multiget"), ReadOp::kMultiGet);
  EXPECT_EQ(ParseDistribution("uniform")->kind, Distribution::Kind::kUniform);
  const absl::StatusOr<Distribution> zipf = ParseDistribution("zipf:0.99");
  ASSERT_TRUE(zipf.ok());
  EXPECT_EQ(zipf->kind, Distribution::Kind::kZipf);
  EXPECT_DOUBLE_EQ(zipf->zipf_s, 0.99);
  EXPECT_EQ(DistributionName(*zipf), "zipf:0.99");
}

TEST(OptionsTest, BadOpsAndDistributionsNameTheFlag) {
  EXPECT_EQ(ErrorOf(ParseReadOp("scan").status()),
            "--op must be get or multiget, got \"scan\"");
  for (const char* bad : {"zipf", "zipf:", "zipf:0", "zipf:-1", "zipf:abc", "pareto", ""}) {
    const std::string error = ErrorOf(ParseDistribution(bad).status());
    EXPECT_EQ(error.rfind("--dist must be uniform or zipf:S", 0), 0u) << bad << ": " << error;
  }
}

TEST(OptionsTest, ParsesMixes) {
  const absl::StatusOr<Mix> mix = ParseMix("read:95,append:5");
  ASSERT_TRUE(mix.ok()) << mix.status();
  EXPECT_EQ(mix->read, 95);
  EXPECT_EQ(mix->append, 5);
  EXPECT_EQ(MixName(*mix), "read:95,append:5");
  EXPECT_EQ(ParseMix("append:1")->read, 0);
  for (const char* bad : {"", "read", "read:x", "read:-1", "scan:5", "read:0,append:0",
                          "read:95;append:5"}) {
    const std::string error = ErrorOf(ParseMix(bad).status());
    EXPECT_EQ(error.rfind("--mix must be like read:95,append:5", 0), 0u) << bad << ": " << error;
  }
}

TEST(OptionsTest, ValidReadOptionsPass) {
  EXPECT_TRUE(ValidateReadOptions(GoodRead()).ok());
  ReadOptions options = GoodRead();
  options.server = "db.example.com:443";  // Any server, not only loopback.
  EXPECT_TRUE(ValidateReadOptions(options).ok());
}

TEST(OptionsTest, BadReadOptionsAreRejectedClearly) {
  struct Case {
    void (*mutate)(ReadOptions&);
    const char* error_prefix;
  };
  const Case cases[] = {
      {[](ReadOptions& o) { o.server = ""; }, "--server is required"},
      {[](ReadOptions& o) { o.server = "localhost"; }, "--server must be HOST:PORT"},
      {[](ReadOptions& o) { o.server = "h:0"; }, "--server must be HOST:PORT"},
      {[](ReadOptions& o) { o.server = "h:99999"; }, "--server must be HOST:PORT"},
      {[](ReadOptions& o) { o.ids_file = ""; }, "--ids is required"},
      {[](ReadOptions& o) { o.duration = absl::ZeroDuration(); }, "--duration must be"},
      {[](ReadOptions& o) { o.max_ops = -1; }, "--max_ops must be >= 0"},
      {[](ReadOptions& o) { o.concurrency = 0; }, "--concurrency must be 1..1024, got 0"},
      {[](ReadOptions& o) { o.batch = 0; }, "--batch must be 1..10000, got 0"},
      {[](ReadOptions& o) { o.connections = 0; }, "--connections must be 1..1024, got 0"},
  };
  for (const Case& c : cases) {
    ReadOptions options = GoodRead();
    c.mutate(options);
    const std::string error = ErrorOf(ValidateReadOptions(options));
    EXPECT_EQ(error.rfind(c.error_prefix, 0), 0u) << error;
  }
}

TEST(OptionsTest, BadLoadOptionsAreRejectedClearly) {
  LoadOptions options;
  options.server = "127.0.0.1:7070";
  options.dir = "/data";
  EXPECT_TRUE(ValidateLoadOptions(options).ok());
  options.copies = 0;
  EXPECT_EQ(ErrorOf(ValidateLoadOptions(options)), "--copies must be 1..1000, got 0");
  options.copies = 1;
  options.dir = "";
  EXPECT_EQ(ErrorOf(ValidateLoadOptions(options)).rfind("--dir is required", 0), 0u);
}

}  // namespace
}  // namespace dictlog::bench
