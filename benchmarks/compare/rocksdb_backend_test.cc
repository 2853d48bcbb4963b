#include "benchmarks/compare/rocksdb_backend.h"

#include <filesystem>

#include "absl/strings/numbers.h"
#include "common/test_dir.h"
#include "gtest/gtest.h"
#include "training/files.h"

namespace dictlog::compare {
namespace {

std::unique_ptr<RocksDbBackend> OpenFresh(uint32_t max_dict_bytes, const std::string& suffix,
                                          bool uncompressed = false) {
  RocksDbBackendOptions options;
  options.path = FreshTestDir(suffix);
  options.max_dict_bytes = max_dict_bytes;
  options.uncompressed = uncompressed;
  absl::StatusOr<std::unique_ptr<RocksDbBackend>> backend = RocksDbBackend::Open(options);
  EXPECT_TRUE(backend.ok()) << backend.status();
  return backend.ok() ? *std::move(backend) : nullptr;
}

// The lines of a loghub sample (runfiles of @loghub).
std::vector<std::string> LoghubLines(const std::string& name) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  absl::StatusOr<std::vector<std::string>> lines =
      trainer::ReadLines(std::string(srcdir == nullptr ? "." : srcdir) + "/loghub/" + name);
  return lines.ok() ? *std::move(lines) : std::vector<std::string>();
}

// The integer value of "key":N in a flat JSON object, -1 if absent.
int64_t JsonInt(const std::string& json, const std::string& key) {
  const size_t at = json.find("\"" + key + "\":");
  if (at == std::string::npos) return -1;
  const size_t start = at + key.size() + 3;
  int64_t value = -1;
  return absl::SimpleAtoi(json.substr(start, json.find_first_of(",}", start) - start), &value)
             ? value
             : -1;
}

TEST(RocksDbBackendTest, AppendGetMultiGet) {
  std::unique_ptr<RocksDbBackend> backend = OpenFresh(16 * 1024, "");
  ASSERT_NE(backend, nullptr);
  const AppendInput records[] = {{"HDFS", "one"}, {"Spark", "two"}, {"HDFS", "three"}};
  absl::StatusOr<std::vector<std::string>> ids = backend->Append(records);
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(*ids, (std::vector<std::string>{"HDFS/1", "Spark/1", "HDFS/2"}));
  absl::StatusOr<v1::Record> record = backend->Get("HDFS/2");
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->payload(), "three");
  EXPECT_EQ(record->category(), "HDFS");
  EXPECT_EQ(record->id(), "HDFS/2");
  EXPECT_EQ(backend->Get("HDFS/3").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(backend->Get("HDFS/x").status().code(), absl::StatusCode::kInvalidArgument);
  auto results = backend->MultiGet({"Spark/1", "nope", "HDFS/1", "Spark/2"});
  ASSERT_EQ(results.size(), 4u);
  ASSERT_TRUE(results[0].ok());
  EXPECT_EQ(results[0]->payload(), "two");
  EXPECT_EQ(results[1].status().code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(results[2].ok());
  EXPECT_EQ(results[2]->payload(), "one");
  EXPECT_EQ(results[3].status().code(), absl::StatusCode::kNotFound);
}

TEST(RocksDbBackendTest, BadCategoryWritesNothing) {
  std::unique_ptr<RocksDbBackend> backend = OpenFresh(16 * 1024, "");
  ASSERT_NE(backend, nullptr);
  const AppendInput records[] = {{"ok", "x"}, {"not ok", "y"}};
  EXPECT_EQ(backend->Append(records).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(backend->Get("ok/1").status().code(), absl::StatusCode::kNotFound);
  absl::StatusOr<std::string> stats = backend->MeasureJson();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(JsonInt(*stats, "records"), 0) << *stats;
}

TEST(RocksDbBackendTest, ExistingDatabaseIsRefused) {
  RocksDbBackendOptions options;
  options.path = FreshTestDir();
  ASSERT_TRUE(RocksDbBackend::Open(options).ok());
  EXPECT_EQ(RocksDbBackend::Open(options).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

// Loads HDFS.log, measures, and returns the report; records still read back.
std::string LoadAndMeasure(RocksDbBackend& backend, const std::vector<std::string>& lines) {
  std::vector<AppendInput> records;
  for (const std::string& line : lines) records.push_back({"HDFS", line});
  absl::StatusOr<std::vector<std::string>> ids = backend.Append(records);
  EXPECT_TRUE(ids.ok()) << ids.status();
  absl::StatusOr<std::string> stats = backend.MeasureJson();
  EXPECT_TRUE(stats.ok()) << stats.status();
  absl::StatusOr<v1::Record> last = backend.Get(ids->back());
  EXPECT_TRUE(last.ok() && last->payload() == lines.back());
  return stats.ok() ? *stats : "";
}

// The dictionary options reach the SST files and shrink them.
TEST(RocksDbBackendTest, DictionaryOptionsTakeEffect) {
  const std::vector<std::string> lines = LoghubLines("HDFS.log");
  ASSERT_GE(lines.size(), 1000u);
  std::unique_ptr<RocksDbBackend> with = OpenFresh(16 * 1024, "-dict");
  std::unique_ptr<RocksDbBackend> without = OpenFresh(0, "-plain");
  ASSERT_TRUE(with != nullptr && without != nullptr);
  const std::string dict = LoadAndMeasure(*with, lines);
  const std::string plain = LoadAndMeasure(*without, lines);
  EXPECT_NE(dict.find("\"compression\":\"ZSTD\""), std::string::npos) << dict;
  EXPECT_NE(dict.find("max_dict_bytes=16384"), std::string::npos) << dict;
  EXPECT_NE(dict.find("zstd_max_train_bytes=1600000"), std::string::npos) << dict;
  EXPECT_NE(plain.find("max_dict_bytes=0"), std::string::npos) << plain;
  EXPECT_EQ(JsonInt(dict, "records"), static_cast<int64_t>(lines.size()));
  EXPECT_EQ(JsonInt(dict, "entries"), static_cast<int64_t>(lines.size()));
  // 4 KiB blocks: about raw bytes / 4 KiB of them.
  const int64_t raw = JsonInt(dict, "raw_value_bytes") + JsonInt(dict, "raw_key_bytes");
  EXPECT_NEAR(JsonInt(dict, "data_blocks"), raw / 4096, raw / 4096 / 5 + 2) << dict;
  EXPECT_LT(JsonInt(dict, "data_bytes"), JsonInt(plain, "data_bytes")) << dict << plain;
  EXPECT_GT(JsonInt(dict, "stored_bytes"), 0);
}

// rocksdb_plain: blocks stored as they are; its data bytes are the raw bytes and more
// (keys, block trailers), far above the compressed form's.
TEST(RocksDbBackendTest, UncompressedStoresBlocksAsTheyAre) {
  const std::vector<std::string> lines = LoghubLines("HDFS.log");
  ASSERT_GE(lines.size(), 1000u);
  std::unique_ptr<RocksDbBackend> plain = OpenFresh(16 * 1024, "-none", /*uncompressed=*/true);
  std::unique_ptr<RocksDbBackend> zstd = OpenFresh(0, "-zstd");
  ASSERT_TRUE(plain != nullptr && zstd != nullptr);
  const std::string none = LoadAndMeasure(*plain, lines);
  const std::string compressed = LoadAndMeasure(*zstd, lines);
  EXPECT_NE(none.find("\"compression\":\"NoCompression\""), std::string::npos) << none;
  EXPECT_GE(JsonInt(none, "data_bytes"), JsonInt(none, "raw_value_bytes")) << none;
  EXPECT_GT(JsonInt(none, "data_bytes"), 2 * JsonInt(compressed, "data_bytes"))
      << none << compressed;
  EXPECT_EQ(JsonInt(none, "records"), static_cast<int64_t>(lines.size()));
}

}  // namespace
}  // namespace dictlog::compare
