// FollowHub alone, over an in-memory Pool: appends landing out of order are released
// in seq order, failed appends leave gaps, a follower gets only what comes after its
// start (and of its category), a full buffer marks it fell behind, Close ends it;
// cluster mode's applied ranges (the log's seqs, with gaps) wake followers the same way.
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

// A builder of the records with `seqs` (the log's seqs of one message: gaps allowed).
FollowHub::RecordBuilder SeqRecords(std::vector<uint64_t> seqs) {
  return [=] {
    std::vector<v1::Record> records(seqs.size());
    for (size_t k = 0; k < seqs.size(); ++k) {
      records[k].set_id(absl::StrCat("web/", seqs[k]));
      records[k].set_category("web");
    }
    return records;
  };
}

TEST(FollowHubTest, AppliedRangesWithGapsWakeFollowersOnceInOrder) {
  FollowHub hub(FollowOptions{});
  auto pool = MakePool(3);
  auto early = hub.Subscribe(*pool, std::nullopt);
  ASSERT_TRUE(early.ok());
  EXPECT_EQ((*early)->start(), 3u);
  // Message at offset 1 holds this pool's records 65537 and 65539 (65538: another pool).
  const uint64_t first = hub.ReserveApplied(*pool, 65539);
  ASSERT_EQ(first, 4u);
  auto late = hub.Subscribe(*pool, std::nullopt);  // Subscribed while it is written.
  ASSERT_TRUE(late.ok());
  EXPECT_EQ((*late)->start(), 65539u);
  EXPECT_FALSE((*late)->WaitCommitted(65539, absl::ZeroDuration()));
  hub.Land(*pool, first, 65539 - first + 1, SeqRecords({65537, 65539}));
  EXPECT_TRUE((*late)->WaitCommitted(65539, absl::ZeroDuration()));
  EXPECT_EQ(Ids((*early)->Take(absl::ZeroDuration())),
            (std::vector<std::string>{"web/65537", "web/65539"}));
  EXPECT_TRUE(Ids((*late)->Take(absl::ZeroDuration())).empty());  // Its catch-up reads them.
  const uint64_t next = hub.ReserveApplied(*pool, 131073);
  hub.Land(*pool, next, 131073 - next + 1, SeqRecords({131073}));
  EXPECT_EQ(Ids((*late)->Take(absl::ZeroDuration())), (std::vector<std::string>{"web/131073"}));
  EXPECT_EQ(hub.ReserveApplied(*pool, 131073), 0u);  // Applied already: nothing to land.
}

TEST(FollowHubTest, AppliedRangeWhoseWriteFailedIsReusedByItsRetryOrGivenUp) {
  FollowHub hub(FollowOptions{});
  auto pool = MakePool(0);
  auto follower = hub.Subscribe(*pool, std::nullopt);
  ASSERT_TRUE(follower.ok());
  const uint64_t failed = hub.ReserveApplied(*pool, 2);  // The write fails: not landed.
  EXPECT_EQ(hub.ReserveApplied(*pool, 2), failed);       // The materializer's retry.
  hub.Land(*pool, failed, 2, SeqRecords({1, 2}));
  EXPECT_EQ(Ids((*follower)->Take(absl::ZeroDuration())),
            (std::vector<std::string>{"web/1", "web/2"}));
  const uint64_t skipped = hub.ReserveApplied(*pool, 65537);  // Refused for good later.
  const uint64_t next = hub.ReserveApplied(*pool, 131073);
  EXPECT_GT(next, skipped);
  hub.Land(*pool, next, 131073 - next + 1, SeqRecords({131073}));
  EXPECT_TRUE((*follower)->WaitCommitted(131073, absl::ZeroDuration()));
  EXPECT_EQ(Ids((*follower)->Take(absl::ZeroDuration())), (std::vector<std::string>{"web/131073"}));
}

TEST(FollowHubTest, SlotsOfProxiedStreamsCountTowardTheLimitAndCloseStopsThem) {
  FollowOptions options;
  options.max_followers = 1;
  FollowHub hub(options);
  auto pool = MakePool(0);
  int closed = 0;
  auto slot = hub.HoldSlot([&closed] { ++closed; });
  ASSERT_TRUE(slot.ok()) << slot.status();
  EXPECT_EQ(hub.Stats().connected, 1u);
  EXPECT_EQ(hub.Subscribe(*pool, std::nullopt).status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(hub.HoldSlot(nullptr).status().code(), absl::StatusCode::kResourceExhausted);
  slot->reset();
  EXPECT_EQ(hub.Stats().connected, 0u);
  auto again = hub.HoldSlot([&closed] { ++closed; });
  ASSERT_TRUE(again.ok());
  hub.Close();
  EXPECT_EQ(closed, 1);  // Only the slot still held.
  EXPECT_EQ(hub.HoldSlot(nullptr).status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace dictlog::engine
