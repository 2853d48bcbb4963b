// Pool options: validation, defaults and updates of dictlog.v1.PoolOptions.
// A resolved PoolOptions has every field set. Stateless and thread-safe.
#ifndef DICTLOG_SERVER_POOL_POOL_OPTIONS_H_
#define DICTLOG_SERVER_POOL_POOL_OPTIONS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/dictlog.pb.h"

namespace dictlog::pool {

inline constexpr int kDefaultCompressionLevel = 3;
inline constexpr uint32_t kDefaultDictionaryBytes = 16 << 10;
inline constexpr uint32_t kMinDictionaryBytes = 1 << 10;
inline constexpr uint32_t kMaxDictionaryBytes = 1 << 20;

// The built-in defaults: level 3, 16 KiB dictionaries, record mode, dictionary mode
// auto.
v1::PoolOptions BuiltinPoolOptions();

// INVALID_ARGUMENT for an out-of-range field, UNIMPLEMENTED for block mode (not built
// yet). Unset fields are fine.
absl::Status ValidatePoolOptions(const v1::PoolOptions& options);

// `base` (resolved) with the fields set in `update` (validated) replacing its own.
absl::StatusOr<v1::PoolOptions> ApplyPoolOptions(const v1::PoolOptions& base,
                                                 const v1::PoolOptions& update);

}  // namespace dictlog::pool

#endif  // DICTLOG_SERVER_POOL_POOL_OPTIONS_H_
