// FollowHub alone, over an in-memory Pool: appends landing out of order are released
// in seq order, failed appends leave gaps, a follower gets only what comes after its
// start (and of its category), a full buffer marks it fell behind, Close ends it.
#include "server/engine/follow_hub.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace dictlog::engine {
namespace {

std::unique_ptr<pool::Pool> MakePool(uint64_t last_seq) {
  store::StoredPool stored;
  stored.record.set_id(7);
  stored.record.set_name("web");
  stored.last_seq = last_seq;
  return std::make_unique<pool::Pool>(stored);
}

// A builder of the records [first, first + count) of category `category`.
FollowHub::RecordBuilder Records(uint64_t first, uint64_t count,
                                 const std::string& category = "web") {
  return [=] {
    std::vector<v1::Record> records(count);
    for (uint64_t k = 0; k < count; ++k) {
      records[k].set_id(absl::StrCat("web/", first + k));
      records[k].set_category(category);
      records[k].set_payload(std::string(10, 'x'));
    }
    return records;
  };
}

std::vector<std::string> Ids(const Follower::Batch& batch) {
  std::vector<std::string> ids;
  for (const auto& record : batch.records) ids.push_back(record->id());
  return ids;
}

TEST(FollowHubTest, OutOfOrderLandingsAreReleasedInSeqOrder) {
  FollowHub hub(FollowOptions{});
  auto pool = MakePool(5);
  auto follower = hub.Subscribe(*pool, std::nullopt);
  ASSERT_TRUE(follower.ok());
  EXPECT_EQ((*follower)->start(), 5u);
  const uint64_t a = hub.Reserve(*pool, 2);  // 6, 7
  const uint64_t b = hub.Reserve(*pool, 1);  // 8
  const uint64_t c = hub.Reserve(*pool, 3);  // 9..11
  ASSERT_EQ(a, 6u);
  hub.Land(*pool, c, 3, Records(c, 3));
  hub.Land(*pool, b, 1, nullptr);  // A failed write: its seq is a gap.
  EXPECT_TRUE(Ids((*follower)->Take(absl::ZeroDuration())).empty());
  EXPECT_FALSE((*follower)->WaitCommitted(6, absl::ZeroDuration()));
  hub.Land(*pool, a, 2, Records(a, 2));
  EXPECT_TRUE((*follower)->WaitCommitted(11, absl::ZeroDuration()));
  EXPECT_EQ(Ids((*follower)->Take(absl::ZeroDuration())),
            (std::vector<std::string>{"web/6", "web/7", "web/9", "web/10", "web/11"}));
}

TEST(FollowHubTest, FollowerStartsAfterTheLastReservedSeq) {
  FollowHub hub(FollowOptions{});
  auto pool = MakePool(0);
  const uint64_t in_flight = hub.Reserve(*pool, 2);  // 1, 2: not landed yet.
  auto follower = hub.Subscribe(*pool, std::nullopt);
  ASSERT_TRUE(follower.ok());
  EXPECT_EQ((*follower)->start(), 2u);
  const uint64_t next = hub.Reserve(*pool, 1);
  hub.Land(*pool, next, 1, Records(next, 1));
  EXPECT_FALSE((*follower)->WaitCommitted(2, absl::ZeroDuration()));
  hub.Land(*pool, in_flight, 2, Records(in_flight, 2));
  EXPECT_TRUE((*follower)->WaitCommitted(2, absl::ZeroDuration()));
  EXPECT_EQ(Ids((*follower)->Take(absl::ZeroDuration())),
            (std::vector<std::string>{"web/3"}));
}

TEST(FollowHubTest, CategoryFollowerGetsOnlyItsCategory) {
  FollowHub hub(FollowOptions{});
  auto pool = MakePool(0);
  auto follower = hub.Subscribe(*pool, "a");
  ASSERT_TRUE(follower.ok());
  const uint64_t first = hub.Reserve(*pool, 2);
  hub.Land(*pool, first, 2, Records(first, 2, "b"));
  const uint64_t second = hub.Reserve(*pool, 1);
  hub.Land(*pool, second, 1, Records(second, 1, "a"));
  EXPECT_EQ(Ids((*follower)->Take(absl::ZeroDuration())),
            (std::vector<std::string>{"web/3"}));
}

TEST(FollowHubTest, FullBufferMarksFellBehindAndKeepsWhatItHolds) {
  FollowOptions options;
  options.buffer_records = 3;
  FollowHub hub(options);
  auto pool = MakePool(0);
  auto follower = hub.Subscribe(*pool, std::nullopt);
  ASSERT_TRUE(follower.ok());
  const uint64_t first = hub.Reserve(*pool, 5);
  hub.Land(*pool, first, 5, Records(first, 5));
  Follower::Batch batch = (*follower)->Take(absl::ZeroDuration());
  EXPECT_EQ(batch.state, Follower::State::kFellBehind);
  EXPECT_EQ(Ids(batch), (std::vector<std::string>{"web/1", "web/2", "web/3"}));
  EXPECT_EQ(hub.Stats().fell_behind, 1u);
}

TEST(FollowHubTest, BufferBytesLimitAlwaysTakesOneRecord) {
  FollowOptions options;
  options.buffer_bytes = 5;  // Less than one record's 10 bytes.
  FollowHub hub(options);
  auto pool = MakePool(0);
  auto follower = hub.Subscribe(*pool, std::nullopt);
  ASSERT_TRUE(follower.ok());
  uint64_t seq = hub.Reserve(*pool, 1);
  hub.Land(*pool, seq, 1, Records(seq, 1));
  Follower::Batch batch = (*follower)->Take(absl::ZeroDuration());
  EXPECT_EQ(batch.state, Follower::State::kLive);
  EXPECT_EQ(batch.records.size(), 1u);
  seq = hub.Reserve(*pool, 2);
  hub.Land(*pool, seq, 2, Records(seq, 2));
  batch = (*follower)->Take(absl::ZeroDuration());
  EXPECT_EQ(batch.state, Follower::State::kFellBehind);
  EXPECT_EQ(batch.records.size(), 1u);
}

TEST(FollowHubTest, LimitAndCloseAndUnsubscribe) {
  FollowOptions options;
  options.max_followers = 1;
  FollowHub hub(options);
  auto pool = MakePool(0);
  {
    auto first = hub.Subscribe(*pool, std::nullopt);
    ASSERT_TRUE(first.ok());
    EXPECT_EQ(hub.Stats().connected, 1u);
    EXPECT_EQ(hub.Subscribe(*pool, std::nullopt).status().code(),
              absl::StatusCode::kResourceExhausted);
  }
  EXPECT_EQ(hub.Stats().connected, 0u);
  auto follower = hub.Subscribe(*pool, std::nullopt);
  ASSERT_TRUE(follower.ok());
  hub.Close();
  EXPECT_EQ((*follower)->Take(absl::Seconds(10)).state, Follower::State::kClosed);
  EXPECT_EQ(hub.Subscribe(*pool, std::nullopt).status().code(),
            absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace dictlog::engine
