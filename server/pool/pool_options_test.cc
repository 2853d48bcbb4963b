#include "server/pool/pool_options.h"

#include "gtest/gtest.h"

namespace dictlog::pool {
namespace {

TEST(PoolOptionsTest, BuiltinDefaultsAreResolved) {
  v1::PoolOptions options = BuiltinPoolOptions();
  EXPECT_EQ(options.compression_level(), 3);
  EXPECT_EQ(options.dictionary_bytes(), 16384u);
  EXPECT_EQ(options.storage_mode(), v1::STORAGE_MODE_RECORD);
  EXPECT_EQ(options.dictionary_mode(), v1::DICTIONARY_MODE_AUTO);
}

TEST(PoolOptionsTest, CompactFramesHaveTheirOwnLevel) {
  v1::PoolOptions options = BuiltinPoolOptions();
  EXPECT_EQ(FrameCompressionLevel(options, /*compact_dictionary=*/false), 3);
  EXPECT_EQ(FrameCompressionLevel(options, /*compact_dictionary=*/true), 9);
  v1::PoolOptions update;
  update.set_compact_compression_level(12);
  absl::StatusOr<v1::PoolOptions> result = ApplyPoolOptions(options, update);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(FrameCompressionLevel(*result, true), 12);
  EXPECT_EQ(FrameCompressionLevel(*result, false), 3);
  // Options stored before the field existed take its default.
  options.clear_compact_compression_level();
  EXPECT_EQ(FrameCompressionLevel(options, true), kDefaultCompactCompressionLevel);
  update.set_compact_compression_level(0);
  absl::Status status = ApplyPoolOptions(options, update).status();
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_NE(status.message().find("compact_compression_level"), std::string::npos);
}

TEST(PoolOptionsTest, DictionaryModeIsUpdatedAndValidated) {
  v1::PoolOptions update;
  update.set_dictionary_mode(v1::DICTIONARY_MODE_COMPACT);
  absl::StatusOr<v1::PoolOptions> result = ApplyPoolOptions(BuiltinPoolOptions(), update);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->dictionary_mode(), v1::DICTIONARY_MODE_COMPACT);
  EXPECT_EQ(result->compression_level(), 3);
  update.set_dictionary_mode(v1::DICTIONARY_MODE_UNSPECIFIED);  // Means "unchanged".
  EXPECT_EQ(ApplyPoolOptions(*result, update)->dictionary_mode(), v1::DICTIONARY_MODE_COMPACT);
  update.set_dictionary_mode(static_cast<v1::DictionaryMode>(42));
  absl::Status status = ApplyPoolOptions(BuiltinPoolOptions(), update).status();
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
}

TEST(PoolOptionsTest, ApplyChangesOnlySetFields) {
  v1::PoolOptions update;
  update.set_compression_level(-5);  // A fast level.
  absl::StatusOr<v1::PoolOptions> result = ApplyPoolOptions(BuiltinPoolOptions(), update);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->compression_level(), -5);
  EXPECT_EQ(result->dictionary_bytes(), 16384u);
}

TEST(PoolOptionsTest, RejectsOutOfRangeValues) {
  v1::PoolOptions level0, level99, tiny_dict, huge_dict;
  level0.set_compression_level(0);
  level99.set_compression_level(99);
  tiny_dict.set_dictionary_bytes(100);
  huge_dict.set_dictionary_bytes(2 << 20);
  for (const auto& options : {level0, level99, tiny_dict, huge_dict}) {
    EXPECT_EQ(ValidatePoolOptions(options).code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST(PoolOptionsTest, DriftAndUpkeepOptions) {
  const v1::PoolOptions builtin = BuiltinPoolOptions();
  EXPECT_EQ(DriftThresholdPercent(builtin), 10u);
  EXPECT_FALSE(builtin.auto_upkeep());
  EXPECT_EQ(UpkeepMinGainPercent(builtin), 10u);
  v1::PoolOptions update;
  update.set_drift_threshold_percent(0);  // Off.
  update.set_auto_upkeep(true);
  update.set_upkeep_min_gain_percent(25);
  absl::StatusOr<v1::PoolOptions> result = ApplyPoolOptions(builtin, update);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(DriftThresholdPercent(*result), 0u);
  EXPECT_TRUE(result->auto_upkeep());
  EXPECT_EQ(UpkeepMinGainPercent(*result), 25u);
  EXPECT_EQ(result->compression_level(), 3);
  // Options stored before the fields existed take their defaults.
  v1::PoolOptions old = builtin;
  old.clear_drift_threshold_percent();
  old.clear_upkeep_min_gain_percent();
  EXPECT_EQ(DriftThresholdPercent(old), 10u);
  EXPECT_EQ(UpkeepMinGainPercent(old), 10u);
  v1::PoolOptions bad_drift, bad_gain;
  bad_drift.set_drift_threshold_percent(101);
  bad_gain.set_upkeep_min_gain_percent(1001);
  for (const auto& options : {bad_drift, bad_gain}) {
    EXPECT_EQ(ValidatePoolOptions(options).code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST(PoolOptionsTest, BlockModeWithBlockSize) {
  v1::PoolOptions block;
  block.set_storage_mode(v1::STORAGE_MODE_BLOCK);
  block.set_block_bytes(2048);
  absl::StatusOr<v1::PoolOptions> resolved = ApplyPoolOptions(BuiltinPoolOptions(), block);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->storage_mode(), v1::STORAGE_MODE_BLOCK);
  EXPECT_EQ(resolved->block_bytes(), 2048u);
  EXPECT_EQ(BuiltinPoolOptions().block_bytes(), kDefaultBlockBytes);
}

TEST(PoolOptionsTest, BlockSizeOutOfRangeIsRejected) {
  for (uint32_t bytes : {0u, kMinBlockBytes - 1, kMaxBlockBytes + 1}) {
    v1::PoolOptions options;
    options.set_block_bytes(bytes);
    EXPECT_EQ(ValidatePoolOptions(options).code(), absl::StatusCode::kInvalidArgument)
        << bytes;
  }
}

TEST(PoolOptionsTest, StorageModeIsFixedOnceCreated) {
  const v1::PoolOptions current = BuiltinPoolOptions();
  v1::PoolOptions same;
  same.set_storage_mode(v1::STORAGE_MODE_RECORD);
  EXPECT_TRUE(CheckUpdatable(current, same).ok());
  EXPECT_TRUE(CheckUpdatable(current, v1::PoolOptions()).ok());
  v1::PoolOptions block;
  block.set_storage_mode(v1::STORAGE_MODE_BLOCK);
  EXPECT_EQ(CheckUpdatable(current, block).code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace dictlog::pool
