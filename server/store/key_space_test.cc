#include "server/store/key_space.h"

#include <random>

#include "gtest/gtest.h"

namespace dictlog::store {
namespace {

std::string Bytes(std::initializer_list<int> bytes) {
  std::string s;
  for (int b : bytes) s.push_back(static_cast<char>(b));
  return s;
}

TEST(KeySpaceTest, NextOfWidth) {
  EXPECT_EQ(NextOfWidth("ab", 4), Bytes({'a', 'b', 0, 0}));
  EXPECT_EQ(NextOfWidth(Bytes({1, 0xff}), 2), Bytes({2, 0}));
  EXPECT_EQ(NextOfWidth(Bytes({0xff, 0xff}), 2), std::nullopt);
  EXPECT_EQ(NextOfWidth("", 1), Bytes({0}));
}

TEST(KeySpaceTest, AddPowerOfTwoCarries) {
  EXPECT_EQ(AddPowerOfTwo(Bytes({0, 0xff}), 0), Bytes({1, 0}));
  EXPECT_EQ(AddPowerOfTwo(Bytes({0, 0}), 9), Bytes({2, 0}));
  EXPECT_EQ(AddPowerOfTwo(Bytes({0x80, 0}), 15), std::nullopt);
  EXPECT_EQ(AddPowerOfTwo(Bytes({0, 0}), 16), std::nullopt);
}

TEST(KeySpaceTest, MidpointOfBigEndianNumbers) {
  EXPECT_EQ(Midpoint(Bytes({0, 2}), Bytes({0, 4})), Bytes({0, 3}));
  EXPECT_EQ(Midpoint(Bytes({0xff, 0xff}), Bytes({0xff, 0xfd})), Bytes({0xff, 0xfe}));
  EXPECT_EQ(Midpoint(Bytes({0, 0xff}), Bytes({1, 0x01})), Bytes({1, 0}));
}

// The search finds exactly the boundary of a failing range, for boundaries anywhere,
// including ones that are not of the search's width.
TEST(KeySpaceTest, FirstPassingFindsTheBoundary) {
  std::mt19937 random(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::string after(1 + random() % 12, '\0');
    for (char& c : after) c = static_cast<char>(random());
    std::string boundary = after;  // Keys >= boundary pass.
    boundary.back() = static_cast<char>(static_cast<unsigned char>(boundary.back()) | 1);
    boundary += std::string(random() % 4, static_cast<char>(random()));
    if (boundary <= after) boundary = after + "x";
    uint64_t probes = 0;
    auto found = FirstPassing(
        after, false, 16, [&](const std::string& t) -> absl::StatusOr<bool> { return t >= boundary; },
        &probes);
    ASSERT_TRUE(found.ok());
    ASSERT_TRUE(found->has_value());
    const std::string& t = **found;
    EXPECT_GE(t, boundary);
    // No string of the width between `after` and t passes: the one before t fails.
    std::string before = t;
    for (size_t i = before.size(); i-- > 0;) {  // before = t - 1.
      if (before[i] != '\0') {
        before[i] = static_cast<char>(static_cast<unsigned char>(before[i]) - 1);
        break;
      }
      before[i] = '\xff';
    }
    if (t != *NextOfWidth(after, 16)) {
      EXPECT_LT(before, boundary);
    }
    EXPECT_LT(probes, 2u * 8 * 16 + 2);
  }
}

TEST(KeySpaceTest, FirstPassingFromTheStartAndNowhere) {
  uint64_t probes = 0;
  auto at_start = FirstPassing("", true, 4, [](const std::string&) -> absl::StatusOr<bool> {
    return true;
  }, &probes);
  ASSERT_TRUE(at_start.ok());
  EXPECT_EQ(**at_start, std::string(4, '\0'));
  auto nowhere = FirstPassing("a", false, 4, [](const std::string&) -> absl::StatusOr<bool> {
    return false;
  }, &probes);
  ASSERT_TRUE(nowhere.ok());
  EXPECT_FALSE(nowhere->has_value());
  auto failed = FirstPassing("a", false, 4, [](const std::string&) -> absl::StatusOr<bool> {
    return absl::UnavailableError("disk");
  }, &probes);
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace dictlog::store
