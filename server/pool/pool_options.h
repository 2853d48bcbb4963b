// Pool options: validation, defaults and updates of dictlog.v1.PoolOptions.
// A resolved PoolOptions has every field set. Stateless and thread-safe.
#ifndef DICTLOG_SERVER_POOL_POOL_OPTIONS_H_
#define DICTLOG_SERVER_POOL_POOL_OPTIONS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/dictlog.pb.h"

namespace dictlog::pool {

inline constexpr int kDefaultCompressionLevel = 3;
inline constexpr int kDefaultCompactCompressionLevel = 9;
inline constexpr uint32_t kDefaultDictionaryBytes = 16 << 10;
inline constexpr uint32_t kMinDictionaryBytes = 1 << 10;
inline constexpr uint32_t kMaxDictionaryBytes = 1 << 20;
inline constexpr uint32_t kDefaultBlockBytes = 4 << 10;
inline constexpr uint32_t kMinBlockBytes = 1 << 10;
inline constexpr uint32_t kMaxBlockBytes = 64 << 10;
inline constexpr uint32_t kDefaultDriftThresholdPercent = 10;
inline constexpr uint32_t kDefaultUpkeepMinGainPercent = 10;
inline constexpr uint32_t kMaxUpkeepMinGainPercent = 1000;

// The built-in defaults: level 3 (9 with a compact dictionary), 16 KiB dictionaries,
// record mode (4 KiB blocks when switched to block mode), dictionary mode auto, drift
// threshold 10%, manual upkeep (its gain threshold 10%).
v1::PoolOptions BuiltinPoolOptions();

// drift_threshold_percent and upkeep_min_gain_percent, their defaults if the options
// predate the fields.
uint32_t DriftThresholdPercent(const v1::PoolOptions& options);
uint32_t UpkeepMinGainPercent(const v1::PoolOptions& options);

// The zstd level of a pool's frames: compact_compression_level with a compact
// dictionary (its default if the options predate the field), else compression_level.
int FrameCompressionLevel(const v1::PoolOptions& options, bool compact_dictionary);

// INVALID_ARGUMENT for an out-of-range field. Unset fields are fine.
absl::Status ValidatePoolOptions(const v1::PoolOptions& options);

// `base` (resolved) with the fields set in `update` (validated) replacing its own.
// For an existing pool, `base` is its options and a different storage_mode is
// FAILED_PRECONDITION (CheckUpdatable).
absl::StatusOr<v1::PoolOptions> ApplyPoolOptions(const v1::PoolOptions& base,
                                                 const v1::PoolOptions& update);

// FAILED_PRECONDITION if `update` changes what an existing pool cannot change (its
// storage_mode).
absl::Status CheckUpdatable(const v1::PoolOptions& current, const v1::PoolOptions& update);

}  // namespace dictlog::pool

#endif  // DICTLOG_SERVER_POOL_POOL_OPTIONS_H_
