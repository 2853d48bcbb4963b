#include "codec/varint.h"

#include <string>

#include "gtest/gtest.h"

namespace dictlog::codec {
namespace {

TEST(VarintTest, RoundTripsBoundaryValues) {
  for (uint64_t value : {uint64_t{0}, uint64_t{1}, uint64_t{127}, uint64_t{128},
                         uint64_t{16383}, uint64_t{16384}, uint64_t{UINT32_MAX},
                         UINT64_MAX}) {
    std::string bytes;
    PutVarint64(value, &bytes);
    absl::string_view in = bytes;
    uint64_t read = 0;
    ASSERT_TRUE(GetVarint64(&in, &read)) << value;
    EXPECT_EQ(read, value);
    EXPECT_TRUE(in.empty());
  }
}

TEST(VarintTest, TruncatedAndTooWideAreRefused) {
  absl::string_view truncated("\x80\x80", 2);
  uint64_t value = 0;
  EXPECT_FALSE(GetVarint64(&truncated, &value));
  absl::string_view too_wide("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10);
  EXPECT_FALSE(GetVarint64(&too_wide, &value));
  std::string above_32_bits;
  PutVarint64(uint64_t{UINT32_MAX} + 1, &above_32_bits);
  absl::string_view in = above_32_bits;
  uint32_t narrow = 0;
  EXPECT_FALSE(GetVarint32(&in, &narrow));
}

// Found by tests/fuzz (block_content): 0x98 0x00 read as 24, so a block content with
// an overlong count parsed to the same entries as the canonical one.
TEST(VarintTest, OverlongEncodingsAreRefused) {
  uint64_t value = 0;
  for (absl::string_view overlong :
       {absl::string_view("\x98\x00", 2), absl::string_view("\x80\x00", 2),
        absl::string_view("\x81\x80\x00", 3)}) {
    EXPECT_FALSE(GetVarint64(&overlong, &value)) << overlong.size();
  }
  absl::string_view zero("\x00", 1);
  EXPECT_TRUE(GetVarint64(&zero, &value));
  EXPECT_EQ(value, 0u);
}

}  // namespace
}  // namespace dictlog::codec
