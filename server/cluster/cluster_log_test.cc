#include "server/cluster/cluster_log.h"

#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "absl/strings/str_cat.h"
#include "server/cluster/cluster.pb.h"
#include "server/cluster/dictionary_ids.h"
#include "server/cluster/partitioning.h"
#include "server/cluster/topics.h"

namespace dictlog::cluster {
namespace {

// A fake Kafka: per topic/partition, the messages in offset order.
struct FakeKafka {
  struct Message {
    std::string key, value;
  };
  std::map<std::pair<std::string, int32_t>, std::vector<Message>> log;
  absl::Status fail;  // Not OK: every produce fails with it.

  ClusterLog::ProduceFn Fn() {
    return [this](const std::string& topic, int32_t partition, absl::string_view key,
                  absl::string_view value) -> absl::StatusOr<int64_t> {
      if (!fail.ok()) return fail;
      auto& messages = log[{topic, partition}];
      messages.push_back({std::string(key), std::string(value)});
      return static_cast<int64_t>(messages.size() - 1);
    };
  }
};

engine::LogAppend AppendOf(const std::vector<engine::AppendInput>& records,
                           std::vector<std::string> pools) {
  engine::LogAppend append;
  append.records = records;
  append.pools = std::move(pools);
  append.request_id = "req-1";
  append.append_unix_ms = 1234;
  return append;
}

TEST(ClusterLogTest, OneMessagePerCallAndSeqsFromItsOffset) {
  FakeKafka kafka;
  ClusterLog log({.partitions = 4}, kafka.Fn());
  const std::vector<engine::AppendInput> records = {{"web", "a"}, {"web", "bb"}, {"web", "c"}};
  absl::StatusOr<std::vector<uint64_t>> first = log.Append(AppendOf(records, {"web", "web", "web"}));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(*first, (std::vector<uint64_t>{1, 2, 3}));  // offset 0
  absl::StatusOr<std::vector<uint64_t>> second = log.Append(AppendOf({records[0]}, {"web"}));
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, (std::vector<uint64_t>{SeqOf(1, 0)}));  // offset 1: 65537

  const int32_t partition = PartitionOf("web", 4);
  const auto& messages = kafka.log[{kRecordsTopic, partition}];
  ASSERT_EQ(messages.size(), 2u);
  ClusterBatch batch;
  ASSERT_TRUE(batch.ParseFromString(messages[0].value));
  ASSERT_EQ(batch.records_size(), 3);
  EXPECT_EQ(batch.records(1).payload(), "bb");
  EXPECT_EQ(batch.records(1).pool(), "web");
  EXPECT_EQ(batch.request_id(), "req-1");
  EXPECT_EQ(batch.append_unix_ms(), 1234);
  // The pool is in dictlog.meta once, before its first message.
  const auto& meta = kafka.log[{kMetaTopic, 0}];
  ASSERT_EQ(meta.size(), 1u);
  ClusterPool pool;
  ASSERT_TRUE(pool.ParseFromString(meta[0].value));
  EXPECT_EQ(meta[0].key, "pool/web");
  EXPECT_EQ(pool.partition(), partition);
}

// A token's principal is binary (auth::PrincipalOf): the message must still parse on
// the nodes that apply it, with the principal as it was.
TEST(ClusterLogTest, BinaryPrincipalTravelsAsItIs) {
  FakeKafka kafka;
  ClusterLog log({.partitions = 1}, kafka.Fn());
  const std::vector<engine::AppendInput> records = {{"web", "a"}};
  engine::LogAppend append = AppendOf(records, {"web"});
  const std::string principal("\xff\x00\x80\xfe binary", 11);
  append.principal = principal;
  ASSERT_TRUE(log.Append(append).ok());
  ClusterBatch batch;
  ASSERT_TRUE(batch.ParseFromString(kafka.log[{kRecordsTopic, 0}][0].value));
  EXPECT_EQ(batch.principal(), principal);
}

TEST(ClusterLogTest, BatchAcrossPartitionsIsRefusedBeforeProducing) {
  FakeKafka kafka;
  ClusterLog log({.partitions = 64}, kafka.Fn());
  std::string other = "b";
  while (PartitionOf(other, 64) == PartitionOf("a", 64)) other += "b";
  const std::vector<engine::AppendInput> records = {{"a", "x"}, {other, "y"}};
  absl::StatusOr<std::vector<uint64_t>> seqs = log.Append(AppendOf(records, {"a", other}));
  EXPECT_EQ(seqs.status().code(), absl::StatusCode::kFailedPrecondition) << seqs.status();
  EXPECT_TRUE(kafka.log.empty());
}

TEST(ClusterLogTest, ProducerErrorIsReturnedAndNothingAcknowledged) {
  FakeKafka kafka;
  kafka.fail = absl::UnavailableError("NOT_ENOUGH_REPLICAS");
  ClusterLog log({.partitions = 2}, kafka.Fn());
  const std::vector<engine::AppendInput> records = {{"web", "a"}};
  EXPECT_EQ(log.Append(AppendOf(records, {"web"})).status().code(),
            absl::StatusCode::kUnavailable);
}

TEST(ClusterLogTest, ReadsWaitForTheMaterializerThenUnavailable) {
  ClusterLog log({.partitions = 2, .apply_wait = absl::Milliseconds(1)}, FakeKafka().Fn());
  const int32_t partition = PartitionOf("web", 2);
  EXPECT_EQ(log.CheckApplied("web", SeqOf(0, 0)).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(log.AwaitApplied("web", SeqOf(0, 0)).code(), absl::StatusCode::kUnavailable);
  log.MarkApplied(partition, 0);
  EXPECT_TRUE(log.CheckApplied("web", SeqOf(0, 5)).ok());
  EXPECT_EQ(log.CheckApplied("web", SeqOf(1, 0)).code(), absl::StatusCode::kUnavailable);
  log.MarkApplied(partition, 3);
  log.MarkApplied(partition, 2);  // never backwards
  EXPECT_EQ(log.Applied(partition), 3);
}

TEST(ClusterLogTest, AwaitAppliedReturnsOnceApplied) {
  ClusterLog log({.partitions = 1, .apply_wait = absl::Hours(1)}, FakeKafka().Fn());
  absl::Notification waiting;
  absl::Status status = absl::UnknownError("unset");
  std::thread reader([&] {
    waiting.Notify();
    status = log.AwaitApplied("web", SeqOf(7, 0));
  });
  waiting.WaitForNotification();
  log.MarkApplied(0, 7);
  reader.join();  // would take an hour if MarkApplied did not wake it
  EXPECT_TRUE(status.ok()) << status;
}

TEST(ClusterLogTest, WriterEncodedRecordsTravelAsFramesWithoutTheirPayloads) {
  FakeKafka kafka;
  ClusterLog log({.partitions = 1}, kafka.Fn());
  const std::vector<engine::AppendInput> records = {{"web", "abcabcabc"}, {"web", "xy"}};
  engine::LogAppend append = AppendOf(records, {"web", "web"});
  append.encoded.resize(2);
  append.encoded[0] = {true, "FRAME", 40000, 9};
  append.encoded[1] = {false, "", 0, 2};  // did not shrink: the payload travels
  append.request_fingerprint = 0x1234;
  ASSERT_TRUE(log.Append(append).ok());
  ClusterBatch batch;
  ASSERT_TRUE(batch.ParseFromString(kafka.log[{kRecordsTopic, 0}][0].value));
  EXPECT_TRUE(batch.writer_encoded());
  EXPECT_EQ(batch.request_fingerprint(), 0x1234u);
  EXPECT_EQ(batch.records(0).frame(), "FRAME");
  EXPECT_TRUE(batch.records(0).payload().empty());
  EXPECT_EQ(batch.records(0).dictionary_id(), 40000u);
  EXPECT_EQ(batch.records(0).raw_size(), 9u);
  EXPECT_EQ(batch.records(1).payload(), "xy");
  EXPECT_TRUE(batch.records(1).frame().empty());
}

// A zstd dictionary header and a body.
std::string Dictionary(const std::string& body) {
  return std::string("\x37\xA4\x30\xEC\x01\x00\x00\x00", 8) + body;
}

TEST(ClusterLogTest, DictionaryGoesToThePoolsPartitionWithItsContentIdAndAnswersWhatWasApplied) {
  FakeKafka kafka;
  ClusterLog* log_ptr = nullptr;
  ClusterLog::ProduceFn produce = kafka.Fn();
  // The materializer applies the message before the producer even returns.
  ClusterLog log({.partitions = 4}, [&](const std::string& topic, int32_t partition,
                                        absl::string_view key, absl::string_view value) {
    absl::StatusOr<int64_t> offset = produce(topic, partition, key, value);
    if (offset.ok() && topic == kRecordsTopic) {
      log_ptr->NoteDictionary(partition, *offset, {40004, true});
      log_ptr->MarkApplied(partition, *offset);
    }
    return offset;
  });
  log_ptr = &log;
  engine::LogDictionary dictionary;
  dictionary.pool = "web";
  dictionary.content = Dictionary("body");
  dictionary.activate = true;
  dictionary.base_id = 40001;
  dictionary.source = "train";
  absl::StatusOr<engine::AppliedDictionary> applied = log.AppendDictionary(dictionary);
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_EQ(applied->id, 40004u);
  EXPECT_TRUE(applied->activated);

  const int32_t partition = PartitionOf("web", 4);
  const uint32_t proposed = ContentDictionaryId(dictionary.content, partition, 4);
  ClusterBatch batch;
  ASSERT_TRUE(batch.ParseFromString(kafka.log[{kRecordsTopic, partition}].at(0).value));
  EXPECT_EQ(batch.records_size(), 0);
  EXPECT_EQ(batch.dictionary().id(), proposed);
  EXPECT_EQ(batch.dictionary().content(), *StampDictionaryId(dictionary.content, proposed));
  EXPECT_TRUE(batch.dictionary().activate());
  EXPECT_EQ(batch.dictionary().base_id(), 40001u);
  EXPECT_EQ(batch.dictionary().source(), "train");
  const auto& meta = kafka.log[{kMetaTopic, 0}];
  ASSERT_EQ(meta.size(), 2u);  // the pool, then the dictionary
  EXPECT_EQ(meta[1].key, absl::StrCat("dict/web/", proposed));
}

TEST(ClusterLogTest, DictionaryThisNodeSkippedOrHasNotAppliedIsAnError) {
  FakeKafka kafka;
  ClusterLog log({.partitions = 1, .dictionary_wait = absl::Milliseconds(1)}, kafka.Fn());
  engine::LogDictionary dictionary;
  dictionary.pool = "web";
  dictionary.content = Dictionary("x");
  EXPECT_EQ(log.AppendDictionary(dictionary).status().code(),
            absl::StatusCode::kDeadlineExceeded);
  log.MarkApplied(0, 5);  // applied past it, but never noted: skipped here
  EXPECT_EQ(log.AppendDictionary(dictionary).status().code(),
            absl::StatusCode::kFailedPrecondition);
  log.StopWaiting();  // shutting down: no more waiting for the materializer
  ClusterLog stopping({.partitions = 1, .dictionary_wait = absl::Hours(1)}, kafka.Fn());
  stopping.StopWaiting();
  EXPECT_EQ(stopping.AppendDictionary(dictionary).status().code(),
            absl::StatusCode::kUnavailable);  // at once, not after an hour
  dictionary.content = "not a dictionary";
  EXPECT_EQ(log.AppendDictionary(dictionary).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ClusterLogTest, ExactlyOneNodeOfTheListTrainsEachPool) {
  const std::vector<std::string> nodes = {"n1", "n2", "n3"};
  for (const char* pool : {"web", "HDFS", "Apache", "a", "b", "c", "d"}) {
    int trainers = 0;
    for (const std::string& name : nodes) {
      ClusterLog log({.partitions = 8, .node_name = name, .nodes = nodes}, FakeKafka().Fn());
      trainers += log.TrainsHere(pool) ? 1 : 0;
    }
    EXPECT_EQ(trainers, 1) << pool;
  }
  ClusterLog alone({.partitions = 8, .node_name = "n1"}, FakeKafka().Fn());
  EXPECT_TRUE(alone.TrainsHere("web"));  // no list: every node trains
}

}  // namespace
}  // namespace dictlog::cluster
