#include "server/pool/pool_options.h"

#include <zstd.h>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace dictlog::pool {

v1::PoolOptions BuiltinPoolOptions() {
  v1::PoolOptions options;
  options.set_compression_level(kDefaultCompressionLevel);
  options.set_dictionary_bytes(kDefaultDictionaryBytes);
  options.set_storage_mode(v1::STORAGE_MODE_RECORD);
  options.set_dictionary_mode(v1::DICTIONARY_MODE_AUTO);
  options.set_block_bytes(kDefaultBlockBytes);
  options.set_compact_compression_level(kDefaultCompactCompressionLevel);
  options.set_max_age_seconds(0);
  options.set_max_bytes(0);
  options.set_drift_threshold_percent(kDefaultDriftThresholdPercent);
  options.set_auto_upkeep(false);
  options.set_upkeep_min_gain_percent(kDefaultUpkeepMinGainPercent);
  return options;
}

uint32_t DriftThresholdPercent(const v1::PoolOptions& options) {
  return options.has_drift_threshold_percent() ? options.drift_threshold_percent()
                                               : kDefaultDriftThresholdPercent;
}

uint32_t UpkeepMinGainPercent(const v1::PoolOptions& options) {
  return options.has_upkeep_min_gain_percent() ? options.upkeep_min_gain_percent()
                                               : kDefaultUpkeepMinGainPercent;
}

int FrameCompressionLevel(const v1::PoolOptions& options, bool compact_dictionary) {
  if (!compact_dictionary) return options.compression_level();
  return options.has_compact_compression_level() ? options.compact_compression_level()
                                                 : kDefaultCompactCompressionLevel;
}

namespace {

absl::Status ValidateLevel(const char* field, int level) {
  if (level == 0 || level < ZSTD_minCLevel() || level > ZSTD_maxCLevel()) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, " ", level, " is not a zstd level: use 1..", ZSTD_maxCLevel(),
        " or a negative fast level down to ", ZSTD_minCLevel()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidatePoolOptions(const v1::PoolOptions& options) {
  if (options.has_compression_level()) {
    RETURN_IF_ERROR(ValidateLevel("compression_level", options.compression_level()));
  }
  if (options.has_compact_compression_level()) {
    RETURN_IF_ERROR(
        ValidateLevel("compact_compression_level", options.compact_compression_level()));
  }
  if (options.has_dictionary_bytes()) {
    const uint32_t bytes = options.dictionary_bytes();
    if (bytes < kMinDictionaryBytes || bytes > kMaxDictionaryBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dictionary_bytes ", bytes, " is outside ", kMinDictionaryBytes, "..",
          kMaxDictionaryBytes));
    }
  }
  if (options.has_storage_mode()) {
    switch (options.storage_mode()) {
      case v1::STORAGE_MODE_UNSPECIFIED:
      case v1::STORAGE_MODE_RECORD:
      case v1::STORAGE_MODE_BLOCK:
        break;
      default:
        return absl::InvalidArgumentError(
            absl::StrCat("unknown storage_mode ", options.storage_mode()));
    }
  }
  if (options.has_block_bytes() && (options.block_bytes() < kMinBlockBytes ||
                                    options.block_bytes() > kMaxBlockBytes)) {
    return absl::InvalidArgumentError(absl::StrCat("block_bytes ", options.block_bytes(),
                                                   " is outside ", kMinBlockBytes, "..",
                                                   kMaxBlockBytes));
  }
  if (options.has_drift_threshold_percent() && options.drift_threshold_percent() > 100) {
    return absl::InvalidArgumentError(absl::StrCat(
        "drift_threshold_percent ", options.drift_threshold_percent(),
        " is outside 0..100 (0: off)"));
  }
  if (options.has_upkeep_min_gain_percent() &&
      options.upkeep_min_gain_percent() > kMaxUpkeepMinGainPercent) {
    return absl::InvalidArgumentError(absl::StrCat("upkeep_min_gain_percent ",
                                                   options.upkeep_min_gain_percent(),
                                                   " is outside 0..", kMaxUpkeepMinGainPercent));
  }
  if (options.has_dictionary_mode() && !v1::DictionaryMode_IsValid(options.dictionary_mode())) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown dictionary_mode ", options.dictionary_mode()));
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::PoolOptions> ApplyPoolOptions(const v1::PoolOptions& base,
                                                 const v1::PoolOptions& update) {
  RETURN_IF_ERROR(ValidatePoolOptions(update));
  v1::PoolOptions result = base;
  if (update.has_compression_level()) {
    result.set_compression_level(update.compression_level());
  }
  if (update.has_dictionary_bytes()) result.set_dictionary_bytes(update.dictionary_bytes());
  if (update.has_storage_mode() &&
      update.storage_mode() != v1::STORAGE_MODE_UNSPECIFIED) {
    result.set_storage_mode(update.storage_mode());
  }
  if (update.has_dictionary_mode() &&
      update.dictionary_mode() != v1::DICTIONARY_MODE_UNSPECIFIED) {
    result.set_dictionary_mode(update.dictionary_mode());
  }
  if (update.has_block_bytes()) result.set_block_bytes(update.block_bytes());
  if (update.has_compact_compression_level()) {
    result.set_compact_compression_level(update.compact_compression_level());
  }
  if (update.has_max_age_seconds()) result.set_max_age_seconds(update.max_age_seconds());
  if (update.has_max_bytes()) result.set_max_bytes(update.max_bytes());
  if (update.has_drift_threshold_percent()) {
    result.set_drift_threshold_percent(update.drift_threshold_percent());
  }
  if (update.has_auto_upkeep()) result.set_auto_upkeep(update.auto_upkeep());
  if (update.has_upkeep_min_gain_percent()) {
    result.set_upkeep_min_gain_percent(update.upkeep_min_gain_percent());
  }
  return result;
}

absl::Status CheckUpdatable(const v1::PoolOptions& current, const v1::PoolOptions& update) {
  if (update.has_storage_mode() && update.storage_mode() != v1::STORAGE_MODE_UNSPECIFIED &&
      update.storage_mode() != current.storage_mode()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "storage_mode is fixed when a pool is created (this one is ",
        v1::StorageMode_Name(current.storage_mode()), ")"));
  }
  return absl::OkStatus();
}

}  // namespace dictlog::pool
