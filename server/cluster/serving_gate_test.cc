#include "server/cluster/serving_gate.h"

#include "gtest/gtest.h"

namespace dictlog::cluster {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1700000000);

ServingGate Gate() {
  ServingGateOptions options;
  options.max_lag_messages = 100;
  options.grace = absl::Seconds(5);
  return ServingGate(options);
}

TEST(ServingGateTest, ServesWhileTheLagStaysWithinTheBound) {
  ServingGate gate = Gate();
  for (int s = 0; s < 60; ++s) {
    EXPECT_EQ(gate.Update(100, kStart + absl::Seconds(s)), GateChange::kNone);
  }
  EXPECT_TRUE(gate.serving());
}

TEST(ServingGateTest, StopsOnlyAfterTheLagStaysAboveTheBoundForTheGrace) {
  ServingGate gate = Gate();
  EXPECT_EQ(gate.Update(101, kStart), GateChange::kNone);
  EXPECT_EQ(gate.Update(5000, kStart + absl::Milliseconds(4999)), GateChange::kNone);
  EXPECT_TRUE(gate.serving());
  EXPECT_EQ(gate.Update(5000, kStart + absl::Seconds(5)), GateChange::kStopped);
  EXPECT_FALSE(gate.serving());
  EXPECT_EQ(gate.Update(5000, kStart + absl::Seconds(6)), GateChange::kNone);
}

TEST(ServingGateTest, ALagThatDipsBelowTheBoundRestartsTheGrace) {
  ServingGate gate = Gate();
  gate.Update(500, kStart);
  gate.Update(50, kStart + absl::Seconds(4));
  EXPECT_EQ(gate.Update(500, kStart + absl::Seconds(5)), GateChange::kNone);
  EXPECT_EQ(gate.Update(500, kStart + absl::Seconds(9)), GateChange::kNone);
  EXPECT_EQ(gate.Update(500, kStart + absl::Seconds(10)), GateChange::kStopped);
}

TEST(ServingGateTest, ServesAgainOnlyOnceWithinHalfTheBound) {
  ServingGate gate = Gate();
  gate.Update(500, kStart);
  ASSERT_EQ(gate.Update(500, kStart + absl::Seconds(5)), GateChange::kStopped);
  EXPECT_EQ(gate.Update(100, kStart + absl::Seconds(6)), GateChange::kNone);
  EXPECT_EQ(gate.Update(51, kStart + absl::Seconds(7)), GateChange::kNone);
  EXPECT_FALSE(gate.serving());
  EXPECT_EQ(gate.Update(50, kStart + absl::Seconds(8)), GateChange::kResumed);
  EXPECT_TRUE(gate.serving());
  // Above the bound again: a new grace before it stops.
  EXPECT_EQ(gate.Update(500, kStart + absl::Seconds(9)), GateChange::kNone);
  EXPECT_TRUE(gate.serving());
}

TEST(ServingGateTest, AnUnknownLagChangesNothing) {
  ServingGate gate = Gate();
  gate.Update(500, kStart);
  EXPECT_EQ(gate.Update(-1, kStart + absl::Seconds(30)), GateChange::kNone);
  EXPECT_TRUE(gate.serving());
}

TEST(ServingGateTest, ABoundOfZeroNeverStops) {
  ServingGate gate(ServingGateOptions{0, absl::ZeroDuration()});
  EXPECT_EQ(gate.Update(1 << 30, kStart), GateChange::kNone);
  EXPECT_EQ(gate.Update(1 << 30, kStart + absl::Hours(1)), GateChange::kNone);
  EXPECT_TRUE(gate.serving());
}

}  // namespace
}  // namespace dictlog::cluster
