// DictionaryCheck: the standard CRC-32 (the value Python's zlib.crc32 gives, which the
// Python client uses), never 0, and different for contents that differ.
#include "codec/dictionary_check.h"

#include <string>

#include "gtest/gtest.h"

namespace dictlog::codec {
namespace {

TEST(DictionaryCheckTest, IsTheStandardCrc32) {
  // The CRC-32 check value of the catalogue of parametrised CRCs, and
  // zlib.crc32(b"dictlog") from Python 3.
  EXPECT_EQ(DictionaryCheck("123456789"), 0xCBF43926u);
  EXPECT_EQ(DictionaryCheck("dictlog"), 2279563931u);
}

TEST(DictionaryCheckTest, IsNeverZero) {
  EXPECT_EQ(DictionaryCheck(""), 1u);  // crc32 of nothing is 0.
  // "abc" and four bytes chosen (by solving the CRC's linear equations) so that
  // zlib.crc32 of them is 0.
  const std::string zero_crc("abc\x5f\x4b\xfd\x58", 7);
  EXPECT_EQ(DictionaryCheck(zero_crc), 1u);
  EXPECT_NE(DictionaryCheck("abc"), 0u);
}

TEST(DictionaryCheckTest, DiffersWhenOneByteDiffers) {
  std::string content(4096, 'x');
  const uint32_t before = DictionaryCheck(content);
  content[2048] = 'y';
  EXPECT_NE(DictionaryCheck(content), before);
}

}  // namespace
}  // namespace dictlog::codec
