#include "client/cli/units.h"

#include "gtest/gtest.h"

namespace dictlog::cli {
namespace {

TEST(UnitsTest, AgesInWholeSeconds) {
  EXPECT_EQ(*ParseAgeSeconds("7d"), 7u * 86400);
  EXPECT_EQ(*ParseAgeSeconds("2w"), 14u * 86400);
  EXPECT_EQ(*ParseAgeSeconds("12h"), 12u * 3600);
  EXPECT_EQ(*ParseAgeSeconds("90m"), 90u * 60);
  EXPECT_EQ(*ParseAgeSeconds("1h30m"), 5400u);
  EXPECT_EQ(*ParseAgeSeconds("45s"), 45u);
  EXPECT_EQ(*ParseAgeSeconds("0"), 0u);
  for (const char* bad : {"", "7", "d", "-1d", "+1d", "1.5s", "500ms", "-5m", "inf", "7 d",
                          "99999999999999999999d"}) {
    EXPECT_EQ(ParseAgeSeconds(bad).status().code(), absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

TEST(UnitsTest, BytesWithBinaryAndDecimalUnits) {
  EXPECT_EQ(*ParseBytes("4096"), 4096u);
  EXPECT_EQ(*ParseBytes("10GiB"), uint64_t{10} << 30);
  EXPECT_EQ(*ParseBytes("512MiB"), uint64_t{512} << 20);
  EXPECT_EQ(*ParseBytes("3KiB"), 3072u);
  EXPECT_EQ(*ParseBytes("2GB"), 2000000000u);
  EXPECT_EQ(*ParseBytes("7B"), 7u);
  EXPECT_EQ(*ParseBytes("0"), 0u);
  for (const char* bad : {"", "GiB", "-1", "+5", "1.5GiB", "10 GiB", "10gib", "10XB",
                          "20000000TiB"}) {
    EXPECT_EQ(ParseBytes(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(UnitsTest, TimePointsAreRfc3339OrAgesAgo) {
  const absl::Time now = absl::FromUnixMillis(1764000000000);  // 2025-11-24T16:00:00Z
  EXPECT_EQ(*ParseTimePoint("2026-11-24T10:00:00Z", now), 1795514400000);
  EXPECT_EQ(*ParseTimePoint("2026-11-24T11:00:00.250+01:00", now), 1795514400250);
  EXPECT_EQ(*ParseTimePoint("15m", now), 1764000000000 - 15 * 60 * 1000);
  EXPECT_EQ(*ParseTimePoint("2h", now), 1764000000000 - 2 * 3600 * 1000);
  EXPECT_EQ(*ParseTimePoint("7d", now), 1764000000000 - 7 * 86400 * 1000);
  EXPECT_EQ(*ParseTimePoint("0", now), 1764000000000);
  for (const char* bad : {"", "yesterday", "2026-11-24", "2026-11-24T10:00:00",
                          "2026-11-24 10:00:00Z", "-15m", "15", "99999999999d"}) {
    EXPECT_EQ(ParseTimePoint(bad, now).status().code(), absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

}  // namespace
}  // namespace dictlog::cli
