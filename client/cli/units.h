// Parsing of the CLI's human-friendly quantities: ages ("7d", "12h", "90m", "30s",
// "1h30m", "0"), byte sizes ("10GiB", "512MiB", "4096", "2GB") and points in time
// ("2026-11-24T10:00:00Z", or an age meaning that long ago). Stateless and
// thread-safe.
#ifndef DICTLOG_CLIENT_CLI_UNITS_H_
#define DICTLOG_CLIENT_CLI_UNITS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace dictlog::cli {

// Whole seconds of `text`: a number with the unit w, d, h, m or s, or any
// absl::ParseDuration form ("1h30m"); "0" is 0. INVALID_ARGUMENT for anything else,
// a negative age, or one that is not whole seconds.
absl::StatusOr<uint64_t> ParseAgeSeconds(absl::string_view text);

// Bytes of `text`: an integer, optionally followed by B, KiB, MiB, GiB, TiB (powers of
// 1024) or KB, MB, GB, TB (powers of 1000). INVALID_ARGUMENT otherwise or on overflow.
absl::StatusOr<uint64_t> ParseBytes(absl::string_view text);

// Ms since the Unix epoch of `text`: an RFC 3339 time ("2026-11-24T10:00:00Z",
// "2026-11-24T11:00:00.5+01:00"), or an age as ParseAgeSeconds takes it ("15m", "2h",
// "7d") meaning that long before `now`. INVALID_ARGUMENT for anything else.
absl::StatusOr<int64_t> ParseTimePoint(absl::string_view text, absl::Time now);

}  // namespace dictlog::cli

#endif  // DICTLOG_CLIENT_CLI_UNITS_H_
