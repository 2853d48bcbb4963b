#include "client/cli/units.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"

namespace dictlog::cli {
namespace {

// `count` x `unit` into `out`; false on overflow.
bool Multiply(uint64_t count, uint64_t unit, uint64_t* out) {
  if (unit != 0 && count > UINT64_MAX / unit) return false;
  *out = count * unit;
  return true;
}

// A whole decimal number, digits only (SimpleAtoi also takes signs and spaces).
bool ParseDigits(absl::string_view text, uint64_t* out) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return absl::SimpleAtoi(text, out);
}

absl::Status BadAge(absl::string_view text) {
  return absl::InvalidArgumentError(absl::StrCat(
      "age '", text, "' is not a number of whole seconds with a unit, e.g. 7d, 12h, 90m"));
}

}  // namespace

absl::StatusOr<uint64_t> ParseAgeSeconds(absl::string_view text) {
  for (const auto& [suffix, seconds] :
       {std::pair<char, uint64_t>{'w', 604800}, std::pair<char, uint64_t>{'d', 86400}}) {
    absl::string_view number = text;
    uint64_t count = 0, out = 0;
    if (absl::ConsumeSuffix(&number, std::string(1, suffix)) &&
        ParseDigits(number, &count)) {
      if (!Multiply(count, seconds, &out)) return BadAge(text);
      return out;
    }
  }
  absl::Duration duration;
  if (!absl::ParseDuration(text, &duration) || duration < absl::ZeroDuration() ||
      duration == absl::InfiniteDuration() ||
      absl::Trunc(duration, absl::Seconds(1)) != duration) {
    return BadAge(text);
  }
  return static_cast<uint64_t>(absl::ToInt64Seconds(duration));
}

absl::StatusOr<int64_t> ParseTimePoint(absl::string_view text, absl::Time now) {
  absl::Time time;
  std::string error;
  if (absl::ParseTime(absl::RFC3339_full, text, &time, &error)) {
    return absl::ToUnixMillis(time);
  }
  // An age: "15m" ago. "0" is now; an RFC 3339 time missing its zone is neither.
  absl::StatusOr<uint64_t> seconds = ParseAgeSeconds(text);
  if (!seconds.ok() || *seconds > static_cast<uint64_t>(INT32_MAX) * 1000) {
    return absl::InvalidArgumentError(absl::StrCat(
        "time '", text, "' is neither an RFC 3339 time (2026-11-24T10:00:00Z) nor an "
        "age meaning that long ago (15m, 2h, 7d)"));
  }
  return absl::ToUnixMillis(now - absl::Seconds(static_cast<int64_t>(*seconds)));
}

absl::StatusOr<uint64_t> ParseBytes(absl::string_view text) {
  static constexpr std::pair<const char*, uint64_t> kUnits[] = {
      {"KiB", uint64_t{1} << 10}, {"MiB", uint64_t{1} << 20}, {"GiB", uint64_t{1} << 30},
      {"TiB", uint64_t{1} << 40}, {"KB", 1000},               {"MB", 1000000},
      {"GB", 1000000000},         {"TB", 1000000000000},      {"B", 1}};
  absl::string_view number = text;
  uint64_t unit = 1;
  for (const auto& [suffix, bytes] : kUnits) {
    if (absl::ConsumeSuffix(&number, suffix)) {
      unit = bytes;
      break;
    }
  }
  uint64_t count = 0, out = 0;
  if (!ParseDigits(number, &count) || !Multiply(count, unit, &out)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "size '", text, "' is not a whole number of bytes, KiB, MiB, GiB, TiB, KB, MB, "
        "GB or TB"));
  }
  return out;
}

}  // namespace dictlog::cli
