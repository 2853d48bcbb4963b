#include "server/engine/request_ids.h"

#include <atomic>
#include <thread>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace dictlog::engine {
namespace {

constexpr uint64_t kFixedFingerprint = 13827609333974923451ULL;

TEST(RequestFingerprintTest, StableAndSensitiveToBoundaries) {
  const std::vector<AppendInput> a = {{"ab", "c"}};
  const std::vector<AppendInput> b = {{"a", "bc"}};
  const std::vector<AppendInput> c = {{"ab", "c"}, {"ab", "c"}};
  EXPECT_EQ(RequestFingerprint(a), RequestFingerprint(a));
  EXPECT_NE(RequestFingerprint(a), RequestFingerprint(b));
  EXPECT_NE(RequestFingerprint(a), RequestFingerprint(c));
  // Stored on disk: a change would make retries across an upgrade fail.
  const std::vector<AppendInput> fixed = {{"HDFS", "081109 203615 148 INFO dfs"}};
  EXPECT_EQ(RequestFingerprint(fixed), kFixedFingerprint);
}

TEST(RequestFingerprintTest, EveryPayloadByteCounts) {
  std::string payload(100, 'x');
  const uint64_t base = RequestFingerprint({{"c", payload}});
  for (size_t i = 0; i < payload.size(); ++i) {
    std::string changed = payload;
    changed[i] = 'y';
    EXPECT_NE(RequestFingerprint({{"c", changed}}), base) << i;
  }
}

TEST(IdRunsTest, ConsecutiveSeqsOfOnePoolShareARun) {
  storage::AppendedRequest entry;
  AddToIdRuns(1, 10, &entry);
  AddToIdRuns(1, 11, &entry);
  AddToIdRuns(2, 5, &entry);
  AddToIdRuns(1, 12, &entry);
  AddToIdRuns(1, 14, &entry);
  ASSERT_EQ(entry.runs_size(), 4);
  EXPECT_EQ(entry.runs(0).count(), 2u);
  EXPECT_EQ(entry.runs(1).pool_id(), 2u);
  EXPECT_EQ(entry.runs(2).first_seq(), 12u);
  EXPECT_EQ(entry.runs(3).first_seq(), 14u);
}

TEST(InFlightRequestsTest, SameIdWaitsOtherIdsDoNot) {
  InFlightRequests in_flight;
  auto first = in_flight.Acquire("r1");
  auto other = in_flight.Acquire("r2");  // Would deadlock the test if it waited.
  std::atomic<bool> acquired{false};
  std::thread retry([&] {
    auto slot = in_flight.Acquire("r1");
    acquired = true;
  });
  // The retry blocks in Acquire (waits for "r1"), however slow the machine.
  ASSERT_TRUE(in_flight.WaitForWaitersForTest(1, absl::Seconds(60)));
  EXPECT_FALSE(acquired.load());
  first.reset();
  retry.join();
  EXPECT_TRUE(acquired.load());
}

}  // namespace
}  // namespace dictlog::engine
