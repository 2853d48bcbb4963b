#include "server/store/keys.h"

#include "gtest/gtest.h"
#include "server/store/pool_counters.h"

namespace dictlog::store {
namespace {

TEST(KeysTest, RecordKeysSortByPoolThenSeq) {
  EXPECT_LT(RecordKey(1, 0xffffffffffULL), RecordKey(2, 1));
  EXPECT_LT(RecordKey(7, 255), RecordKey(7, 256));
  EXPECT_EQ(RecordKey(1, 2).size(), kRecordKeyBytes);
}

TEST(KeysTest, RecordKeyRoundTrips) {
  uint32_t pool = 0;
  uint64_t seq = 0;
  ASSERT_TRUE(ParseRecordKey(RecordKey(0xdeadbeef, 0x0102030405060708ULL), &pool, &seq));
  EXPECT_EQ(pool, 0xdeadbeefu);
  EXPECT_EQ(seq, 0x0102030405060708ULL);
  EXPECT_FALSE(ParseRecordKey("short", &pool, &seq));
}

TEST(KeysTest, CategoryKeysShareTheirPoolPrefix) {
  const std::string key = CategoryKey(5, "nginx");
  EXPECT_EQ(key.substr(0, 5), CategoryKeyPrefix(5));
  EXPECT_EQ(key.substr(5), "nginx");
  EXPECT_NE(CategoryKeyPrefix(5), CategoryKeyPrefix(6));
}

TEST(KeysTest, RequestKeysAreTheBareIdWithoutPrincipalAndPrefixedWithOne) {
  EXPECT_EQ(RequestKey("", "req-1"), "req-1");  // The form stores before scoping hold.
  EXPECT_EQ(RequestKey("ab", "req-1"), std::string("\x01\x02" "ab" "req-1"));
  // A principal's length is part of the key: no two (principal, id) pairs collide.
  EXPECT_NE(RequestKey("ab", "c"), RequestKey("a", "bc"));
}

TEST(PoolCountersTest, EncodingRoundTrips) {
  PoolCounters in{3, 1u << 20, 0x1234567890ULL};
  PoolCounters out;
  ASSERT_TRUE(DecodePoolCounters(EncodePoolCounters(in), &out));
  EXPECT_EQ(in, out);
  EXPECT_FALSE(DecodePoolCounters("too short", &out));
}

}  // namespace
}  // namespace dictlog::store
