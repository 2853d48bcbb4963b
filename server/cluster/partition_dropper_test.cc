// PartitionDropper: a partition no longer held here is dropped only after the grace
// period and once enough other live replicas serve it caught up; held again: kept.
#include "server/cluster/partition_dropper.h"

#include <memory>
#include <vector>

#include "gtest/gtest.h"

namespace dictlog::cluster {
namespace {

NodePartition Progress(int32_t partition, int64_t next, bool serving) {
  NodePartition p;
  p.set_partition(partition);
  p.set_applied_offset(next);
  p.set_end_offset(next);
  p.set_serving(serving);
  return p;
}

// Node "a" of a, b, c with 2 replicas over 3 partitions: 1 is on b and c, and "a" has
// applied it up to offset 9 (it held it under an earlier assignment).
class PartitionDropperTest : public ::testing::Test {
 protected:
  PartitionDropperTest() {
    DirectoryOptions options;
    options.node_name = "a";
    options.address = "a:1";
    options.partitions = 3;
    options.nodes = {"a", "b", "c"};
    options.replicas = 2;
    options.now = [this] { return now_; };
    directory_ = std::make_unique<ShardDirectory>(options);
    DropperOptions dropper;
    dropper.grace = absl::Minutes(10);
    dropper.now = [this] { return now_; };
    dropper_ = std::make_unique<PartitionDropper>(dropper, directory_.get(),
                                                  [this](int32_t partition) {
                                                    dropped_.push_back(partition);
                                                    return result_;
                                                  });
  }

  // `node` announces partition 1 at `next` (the next offset it applies) now.
  void Announce(const std::string& node, int64_t next, bool serving = true) {
    NodeAnnouncement announcement;
    announcement.set_name(node);
    announcement.set_address(node + ":1");
    announcement.set_unix_ms(absl::ToUnixMillis(now_));
    *announcement.add_partitions() = Progress(1, next, serving);
    directory_->ObserveAnnouncement(announcement);
  }

  void Pass(absl::Duration d) { now_ += d; }

  absl::Time now_ = absl::FromUnixSeconds(1'700'000'000);
  std::unique_ptr<ShardDirectory> directory_;
  std::unique_ptr<PartitionDropper> dropper_;
  std::vector<int32_t> dropped_;
  absl::StatusOr<DroppedPartition> result_ = DroppedPartition{2, 100, 5000};
};

TEST_F(PartitionDropperTest, DropsOnlyAfterTheGracePeriod) {
  dropper_->SetUnheld({{1, 9}});
  EXPECT_EQ(dropper_->Stats().pending, 1u);
  Pass(absl::Minutes(10) - absl::Seconds(1));
  Announce("b", 10);
  Announce("c", 10);
  dropper_->Check();
  EXPECT_TRUE(dropped_.empty());
  Pass(absl::Seconds(1));
  dropper_->Check();
  EXPECT_EQ(dropped_, (std::vector<int32_t>{1}));
  const DropperStats stats = dropper_->Stats();
  EXPECT_EQ(stats.partitions_dropped, 1u);
  EXPECT_EQ(stats.records_dropped, 100u);
  EXPECT_EQ(stats.bytes_dropped, 5000u);
  EXPECT_EQ(stats.pending, 0u);
  dropper_->Check();  // Once only.
  EXPECT_EQ(dropped_.size(), 1u);
}

TEST_F(PartitionDropperTest, WaitsForEveryLiveReplicaToCatchUp) {
  dropper_->SetUnheld({{1, 9}});
  Pass(absl::Hours(1));
  Announce("b", 10);
  Announce("c", 9);  // Has not applied offset 9 yet.
  dropper_->Check();
  Announce("c", 10, /*serving=*/false);  // Building.
  dropper_->Check();
  EXPECT_TRUE(dropped_.empty());
  Announce("c", 10);
  dropper_->Check();
  EXPECT_EQ(dropped_, (std::vector<int32_t>{1}));
}

TEST_F(PartitionDropperTest, WithOneOtherLiveNodeThatOneSuffices) {
  dropper_->SetUnheld({{1, 9}});
  Pass(absl::Hours(1));
  dropper_->Check();  // Nobody else is live: never dropped.
  EXPECT_TRUE(dropped_.empty());
  Announce("b", 10, /*serving=*/false);
  dropper_->Check();
  EXPECT_TRUE(dropped_.empty());
  Announce("b", 10);  // c never announced: b is every other live node.
  dropper_->Check();
  EXPECT_EQ(dropped_, (std::vector<int32_t>{1}));
}

TEST_F(PartitionDropperTest, APartitionHeldAgainIsKept) {
  dropper_->SetUnheld({{1, 9}});
  Pass(absl::Minutes(5));
  dropper_->SetUnheld({});  // Assigned back here.
  Pass(absl::Hours(1));
  Announce("b", 10);
  Announce("c", 10);
  dropper_->Check();
  EXPECT_TRUE(dropped_.empty());
  EXPECT_EQ(dropper_->Stats().pending, 0u);
  dropper_->SetUnheld({{1, 12}});  // Unheld again: the grace starts over.
  Pass(absl::Minutes(9));
  Announce("b", 13);
  Announce("c", 13);
  dropper_->Check();
  EXPECT_TRUE(dropped_.empty());
}

TEST_F(PartitionDropperTest, AFailedDropIsRetriedAndAnAbortedOneForgotten) {
  dropper_->SetUnheld({{1, 9}});
  Pass(absl::Hours(1));
  Announce("b", 10);
  Announce("c", 10);
  result_ = absl::UnavailableError("disk");
  dropper_->Check();
  EXPECT_EQ(dropper_->Stats().pending, 1u);
  result_ = absl::AbortedError("partition 1 is held again");
  dropper_->Check();
  EXPECT_EQ(dropper_->Stats().pending, 0u);
  dropper_->Check();
  EXPECT_EQ(dropped_.size(), 2u);
  EXPECT_EQ(dropper_->Stats().partitions_dropped, 0u);
}

}  // namespace
}  // namespace dictlog::cluster
