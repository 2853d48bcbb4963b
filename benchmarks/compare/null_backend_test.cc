#include "benchmarks/compare/null_backend.h"

#include "gtest/gtest.h"

namespace dictlog::compare {
namespace {

TEST(NullBackendTest, ReadsAnswerRecordsOfTheAppendedSize) {
  NullBackend backend;
  const AppendInput records[] = {{"a", "xyz"}, {"b", ""}, {"a", std::string(300, 'q')}};
  absl::StatusOr<std::vector<std::string>> ids = backend.Append(records);
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(*ids, (std::vector<std::string>{"a/1", "b/1", "a/2"}));
  absl::StatusOr<v1::Record> record = backend.Get("a/2");
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->id(), "a/2");
  EXPECT_EQ(record->category(), "a");
  EXPECT_EQ(record->payload().size(), 300u);
  ASSERT_TRUE(backend.Get("b/1").ok());
  EXPECT_EQ(backend.Get("b/1")->payload(), "");
}

TEST(NullBackendTest, MissingAndMalformedIds) {
  NullBackend backend;
  const AppendInput record{"a", "x"};
  ASSERT_TRUE(backend.Append({&record, 1}).ok());
  EXPECT_EQ(backend.Get("a/2").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(backend.Get("zz/1").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(backend.Get("a").status().code(), absl::StatusCode::kInvalidArgument);
  std::vector<absl::StatusOr<v1::Record>> results = backend.MultiGet({"a/1", "a/9", "bad"});
  ASSERT_EQ(results.size(), 3u);
  EXPECT_TRUE(results[0].ok());
  EXPECT_EQ(results[1].status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(results[2].status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(NullBackendTest, BadCategoryStoresNothing) {
  NullBackend backend;
  const AppendInput records[] = {{"a", "x"}, {"", "y"}};
  EXPECT_EQ(backend.Append(records).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(backend.Get("a/1").status().code(), absl::StatusCode::kNotFound);
  absl::StatusOr<std::string> stats = backend.MeasureJson();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(*stats, "{\"backend\":\"null\",\"records\":0,\"raw_bytes\":0,\"stored_bytes\":0}");
}

}  // namespace
}  // namespace dictlog::compare
