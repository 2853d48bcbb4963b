// server/cluster's producer, consumer and topic setup against 3 real Kafka brokers
// (deploy/local-cluster/cluster.sh, started once for the binary).
#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "server/cluster/consumer.h"
#include "server/cluster/producer.h"
#include "server/cluster/topics.h"
#include "tests/cluster/cluster_test_environment.h"

namespace dictlog::cluster {
namespace {

testing::ClusterTestEnvironment* const env =
    testing::ClusterTestEnvironment::Add({.name = "kafka", .brokers = 3});
testing::LocalCluster* const& brokers = env->cluster();

#define ASSERT_OK(expr)                      \
  do {                                       \
    const absl::Status status_ = (expr);     \
    ASSERT_TRUE(status_.ok()) << status_;    \
  } while (false)

constexpr absl::Duration kAdminTimeout = absl::Seconds(60);

// Every message of `topic`/`partition` from `offset` until `count` arrived.
std::vector<LogMessage> ReadMessages(const std::string& topic, int32_t partition,
                                     int64_t offset, size_t count) {
  auto consumer = Consumer::Open(brokers->bootstrap(), topic, {{partition, offset}});
  EXPECT_TRUE(consumer.ok()) << consumer.status();
  if (!consumer.ok()) return {};
  std::vector<LogMessage> all;
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (all.size() < count && absl::Now() < deadline) {
    auto batch = (*consumer)->Poll(absl::Milliseconds(200), 1000);
    EXPECT_TRUE(batch.ok()) << batch.status();
    if (!batch.ok()) break;
    all.insert(all.end(), batch->begin(), batch->end());
  }
  return all;
}

TEST(KafkaLogTest, EnsureTopicCreatesThenVerifies) {
  ASSERT_TRUE(brokers != nullptr);
  TopicSpec spec = RecordsTopic(4, 3);
  spec.name = "ensure.records";
  ASSERT_OK(EnsureTopic(brokers->bootstrap(), spec, kAdminTimeout));
  EXPECT_TRUE(EnsureTopic(brokers->bootstrap(), spec, kAdminTimeout).ok());  // exists: ok

  TopicSpec other = spec;
  other.partitions = 8;
  absl::Status mismatch = EnsureTopic(brokers->bootstrap(), other, kAdminTimeout);
  EXPECT_EQ(mismatch.code(), absl::StatusCode::kFailedPrecondition) << mismatch;
  other = spec;
  other.compacted = true;
  mismatch = EnsureTopic(brokers->bootstrap(), other, kAdminTimeout);
  EXPECT_EQ(mismatch.code(), absl::StatusCode::kFailedPrecondition) << mismatch;

  TopicSpec meta = MetaTopic(3);
  meta.name = "ensure.meta";
  EXPECT_TRUE(EnsureTopic(brokers->bootstrap(), meta, kAdminTimeout).ok());
  meta.compacted = false;  // the existing one is compacted
  EXPECT_EQ(EnsureTopic(brokers->bootstrap(), meta, kAdminTimeout).code(),
            absl::StatusCode::kFailedPrecondition);
}

// Nodes rebuild from offset 0: the records topic is created to keep everything, and
// one with a finite retention is refused, naming the setting.
TEST(KafkaLogTest, RecordsTopicIsKeptForeverAndAFiniteRetentionIsRefused) {
  ASSERT_TRUE(brokers != nullptr);
  TopicSpec finite = RecordsTopic(1, 3);
  finite.name = "finite.records";
  finite.retention_ms = 3'600'000;
  ASSERT_OK(EnsureTopic(brokers->bootstrap(), finite, kAdminTimeout));
  TopicSpec records = RecordsTopic(1, 3);
  records.name = finite.name;
  absl::Status refused = EnsureTopic(brokers->bootstrap(), records, kAdminTimeout);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;
  EXPECT_NE(refused.message().find("retention.ms=3600000"), absl::string_view::npos) << refused;

  finite.name = "finite.bytes.records";
  finite.retention_ms = -1;
  finite.retention_bytes = 1 << 30;
  ASSERT_OK(EnsureTopic(brokers->bootstrap(), finite, kAdminTimeout));
  records.name = finite.name;
  refused = EnsureTopic(brokers->bootstrap(), records, kAdminTimeout);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;
  EXPECT_NE(refused.message().find("retention.bytes=1073741824"), absl::string_view::npos)
      << refused;

  records.name = "forever.records";  // Created here: -1 and -1, so it verifies.
  ASSERT_OK(EnsureTopic(brokers->bootstrap(), records, kAdminTimeout));
  EXPECT_TRUE(EnsureTopic(brokers->bootstrap(), records, kAdminTimeout).ok());
}

TEST(KafkaLogTest, ConcurrentProducesGetDistinctOffsetsAndReadBack) {
  ASSERT_TRUE(brokers != nullptr);
  TopicSpec spec = RecordsTopic(3, 3);
  spec.name = "produce.records";
  ASSERT_OK(EnsureTopic(brokers->bootstrap(), spec, kAdminTimeout));
  ProducerOptions options;
  options.bootstrap = brokers->bootstrap();
  options.delivery_timeout = absl::Seconds(60);
  auto producer = Producer::Open(options);
  ASSERT_TRUE(producer.ok()) << producer.status();

  constexpr int kThreads = 4, kEach = 50;
  std::vector<std::map<int64_t, std::string>> sent(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        std::string value = absl::StrCat("t", t, "-", i, std::string(i * 7, 'x'));
        absl::StatusOr<int64_t> offset =
            (*producer)->Produce(spec.name, 2, absl::StrCat("k", t), value);
        ASSERT_TRUE(offset.ok()) << offset.status();
        sent[t][*offset] = value;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::map<int64_t, std::string> all;
  for (const auto& part : sent) all.insert(part.begin(), part.end());
  ASSERT_EQ(all.size(), kThreads * kEach);  // no offset given twice

  std::vector<LogMessage> read = ReadMessages(spec.name, 2, kFromBeginning, all.size());
  ASSERT_EQ(read.size(), all.size());
  for (const LogMessage& message : read) {
    EXPECT_EQ(message.partition, 2);
    EXPECT_EQ(all[message.offset], message.value) << message.offset;
  }
  // From a stored offset: exactly the messages after it, nothing before.
  const int64_t from = std::next(all.begin(), 120)->first;
  std::vector<LogMessage> rest = ReadMessages(spec.name, 2, from, all.size() - 120);
  ASSERT_EQ(rest.size(), all.size() - 120);
  EXPECT_EQ(rest.front().offset, from);
  EXPECT_EQ(rest.back().offset, all.rbegin()->first);
}

TEST(KafkaLogTest, UnknownPartitionIsNotFound) {
  ASSERT_TRUE(brokers != nullptr);
  TopicSpec spec = RecordsTopic(1, 3);
  spec.name = "one.partition";
  ASSERT_OK(EnsureTopic(brokers->bootstrap(), spec, kAdminTimeout));
  ProducerOptions options;
  options.bootstrap = brokers->bootstrap();
  options.delivery_timeout = absl::Seconds(20);
  auto producer = Producer::Open(options);
  ASSERT_TRUE(producer.ok());
  absl::StatusOr<int64_t> offset = (*producer)->Produce(spec.name, 5, "", "x");
  EXPECT_EQ(offset.status().code(), absl::StatusCode::kNotFound) << offset.status();
}

// Last: two of three brokers frozen (SIGSTOP), so no partition has 2 in-sync copies.
TEST(KafkaLogTest, WithoutEnoughReplicasProduceFailsWithinTheTimeout) {
  ASSERT_TRUE(brokers != nullptr);
  TopicSpec spec = RecordsTopic(1, 3);
  spec.name = "isr.records";
  ASSERT_OK(EnsureTopic(brokers->bootstrap(), spec, kAdminTimeout));
  ProducerOptions options;
  options.bootstrap = brokers->bootstrap();
  options.delivery_timeout = absl::Seconds(5);
  auto producer = Producer::Open(options);
  ASSERT_TRUE(producer.ok());
  ASSERT_TRUE((*producer)->Produce(spec.name, 0, "", "before").ok());

  ASSERT_TRUE(brokers->Kill("kafka-2", "STOP").ok());
  ASSERT_TRUE(brokers->Kill("kafka-3", "STOP").ok());
  const absl::Time start = absl::Now();
  absl::StatusOr<int64_t> offset = (*producer)->Produce(spec.name, 0, "", "not acknowledged");
  const absl::Duration took = absl::Now() - start;
  EXPECT_TRUE(brokers->Kill("kafka-2", "CONT").ok());
  EXPECT_TRUE(brokers->Kill("kafka-3", "CONT").ok());
  ASSERT_FALSE(offset.ok());
  EXPECT_TRUE(absl::IsUnavailable(offset.status()) ||
              absl::IsDeadlineExceeded(offset.status()))
      << offset.status();
  EXPECT_LT(took, absl::Seconds(8)) << "delivery_timeout bounds the wait";
}

}  // namespace
}  // namespace dictlog::cluster
