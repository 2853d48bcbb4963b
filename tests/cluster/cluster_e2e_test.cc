// Cluster mode end to end (docs/cluster.md): 3 Kafka brokers and 3 real dictlogd nodes
// started by deploy/local-cluster/cluster.sh (once for the binary). Every loghub
// record appended through one node reads back byte-identical from the others (Get,
// MultiGet, Scan); a node killed with SIGKILL while it materializes resumes from its
// stored offsets: its counters equal the records, nothing missing, nothing twice.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/client.h"
#include "gtest/gtest.h"
#include "tests/cluster/local_cluster.h"
#include "tests/e2e/server_process.h"
#include "tools/kafka_check/kafka_client.h"
#include "training/files.h"

namespace dictlog {
namespace {

testing::LocalCluster* cluster = nullptr;

class ClusterEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    setenv("DICTLOGD", testing::RunfilePath("server/daemon/dictlogd").c_str(), 1);
    // One partition: every pool on it, so the broker leading it is the one to kill.
    setenv("DICTLOGD_FLAGS", "--kafka_partitions=1", 1);
    const char* tmp = std::getenv("TEST_TMPDIR");
    auto up = testing::LocalCluster::Up(absl::StrCat(tmp ? tmp : "/tmp", "/cluster"), 3,
                                        {"--nodes=3"});
    ASSERT_TRUE(up.ok()) << up.status();
    owned_ = *std::move(up);
    cluster = owned_.get();
  }
  void TearDown() override {
    cluster = nullptr;
    owned_.reset();
  }

 private:
  std::unique_ptr<testing::LocalCluster> owned_;
};

const ::testing::Environment* const kCluster =
    ::testing::AddGlobalTestEnvironment(new ClusterEnvironment);

std::unique_ptr<client::Client> ClientOf(const std::string& node, int append_attempts = 3) {
  client::ClientOptions options;
  options.append_attempts = append_attempts;
  options.server = cluster->AddressOf(node);
  options.own_connection = true;  // a restarted node gets a fresh connection
  return std::make_unique<client::Client>(options);
}

// Polls Get(id) on `node` until it is applied there (UNAVAILABLE before); its result.
absl::StatusOr<v1::Record> GetWhenApplied(const client::Client& node, const std::string& id) {
  const absl::Time deadline = absl::Now() + absl::Seconds(120);
  absl::StatusOr<v1::Record> record = node.Get(id);
  while ((absl::IsUnavailable(record.status()) || absl::IsDeadlineExceeded(record.status())) &&
         absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(50));  // polls a condition; no timing assumed
    record = node.Get(id);
  }
  return record;
}

struct Category {
  std::string name;
  std::vector<std::string> lines, ids;
};

void CheckNode(const client::Client& node, const Category& category) {
  SCOPED_TRACE(category.name);
  absl::StatusOr<v1::Record> last = GetWhenApplied(node, category.ids.back());
  ASSERT_TRUE(last.ok()) << last.status();
  for (size_t start = 0; start < category.ids.size(); start += 500) {
    const size_t end = std::min(category.ids.size(), start + 500);
    std::vector<std::string> ids(category.ids.begin() + start, category.ids.begin() + end);
    auto results = node.MultiGet(ids);
    ASSERT_TRUE(results.ok()) << results.status();
    for (size_t j = 0; j < ids.size(); ++j) {
      ASSERT_TRUE((*results)[j].ok()) << ids[j] << ": " << (*results)[j].status();
      ASSERT_EQ((*results)[j]->payload(), category.lines[start + j]) << ids[j];
      ASSERT_EQ((*results)[j]->category(), category.name);
    }
  }
  absl::StatusOr<v1::Record> one = node.Get(category.ids[category.ids.size() / 2]);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->payload(), category.lines[category.ids.size() / 2]);
  v1::ScanRequest scan;
  scan.set_category(category.name);
  size_t n = 0;
  absl::Status status = node.Scan(scan, [&](const v1::Record& record) {
    if (n >= category.lines.size() || record.payload() != category.lines[n] ||
        record.id() != category.ids[n]) {
      return absl::InternalError(absl::StrCat("scan mismatch at ", n));
    }
    ++n;
    return absl::OkStatus();
  });
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(n, category.lines.size());
  absl::StatusOr<v1::PoolInfo> pool = node.GetPool(category.name);
  ASSERT_TRUE(pool.ok()) << pool.status();
  EXPECT_EQ(pool->stats().records(), category.lines.size());  // nothing applied twice
}

// Appends `lines` as `category` through `node` in batches of `batch`.
std::vector<std::string> AppendAll(const client::Client& node, const std::string& category,
                                   const std::vector<std::string>& lines, size_t batch) {
  std::vector<std::string> ids;
  for (size_t start = 0; start < lines.size(); start += batch) {
    std::vector<v1::RecordToAppend> records;
    for (size_t i = start; i < std::min(lines.size(), start + batch); ++i) {
      records.emplace_back();
      records.back().set_category(category);
      records.back().set_payload(lines[i]);
    }
    auto appended = node.AppendBatch(records);
    EXPECT_TRUE(appended.ok()) << appended.status();
    if (!appended.ok()) return ids;
    ids.insert(ids.end(), appended->begin(), appended->end());
  }
  return ids;
}

TEST(ClusterE2eTest, LoghubAppendedThroughOneNodeReadsBackFromTheOthers) {
  ASSERT_TRUE(cluster != nullptr);
  absl::StatusOr<std::vector<trainer::LogFile>> logs =
      trainer::ReadLogFiles(testing::RunfilePath("../loghub"));
  ASSERT_TRUE(logs.ok()) << logs.status();
  ASSERT_EQ(logs->size(), 10u);
  std::unique_ptr<client::Client> writer = ClientOf("dictlogd-1");
  std::vector<Category> categories;
  for (trainer::LogFile& log : *logs) {
    Category& category = categories.emplace_back();
    category.name = log.name;
    category.lines = std::move(log.lines);
    category.ids = AppendAll(*writer, category.name, category.lines, 500);
    ASSERT_EQ(category.ids.size(), category.lines.size());
  }
  for (const char* node : {"dictlogd-2", "dictlogd-3", "dictlogd-1"}) {
    SCOPED_TRACE(node);
    std::unique_ptr<client::Client> reader = ClientOf(node);
    for (const Category& category : categories) CheckNode(*reader, category);
  }
}

TEST(ClusterE2eTest, KilledWhileMaterializingResumesExactly) {
  ASSERT_TRUE(cluster != nullptr);
  std::unique_ptr<client::Client> writer = ClientOf("dictlogd-1");
  Category category{"crash", {}, {}};
  for (int i = 0; i < 6000; ++i) category.lines.push_back(absl::StrCat("record ", i, " of the crash test"));
  // Node 3 frozen while the first half is appended in small batches (a backlog of
  // 150 messages), then woken and killed with SIGKILL as soon as it has applied some.
  ASSERT_TRUE(cluster->Kill("dictlogd-3", "STOP").ok());
  std::vector<std::string> first(category.lines.begin(), category.lines.begin() + 3000);
  category.ids = AppendAll(*writer, category.name, first, 20);
  ASSERT_EQ(category.ids.size(), 3000u);
  ASSERT_TRUE(cluster->Kill("dictlogd-3", "CONT").ok());
  std::unique_ptr<client::Client> node3 = ClientOf("dictlogd-3");
  absl::StatusOr<v1::Record> some = GetWhenApplied(*node3, category.ids[0]);
  ASSERT_TRUE(some.ok()) << some.status();
  absl::StatusOr<v1::PoolInfo> before = node3->GetPool(category.name);
  ASSERT_TRUE(cluster->Kill("dictlogd-3", "KILL").ok());
  std::printf("dictlogd-3 had applied at least %llu of 3000 records when killed\n",
              before.ok() ? static_cast<unsigned long long>(before->stats().records()) : 0ull);
  std::vector<std::string> rest(category.lines.begin() + 3000, category.lines.end());
  std::vector<std::string> more = AppendAll(*writer, category.name, rest, 20);
  ASSERT_EQ(more.size(), 3000u);
  category.ids.insert(category.ids.end(), more.begin(), more.end());
  absl::Status started = cluster->Start("dictlogd-3");
  ASSERT_TRUE(started.ok()) << started;
  CheckNode(*ClientOf("dictlogd-3"), category);
  CheckNode(*ClientOf("dictlogd-2"), category);
}

// Two of three brokers frozen: no partition has 2 in-sync copies. Appends fail within
// the delivery timeout (10 s) and are not acknowledged; reads keep working; appends
// work again once the brokers are back.
TEST(ClusterE2eTest, WithoutAQuorumAppendsFailAndReadsKeepWorking) {
  ASSERT_TRUE(cluster != nullptr);
  std::unique_ptr<client::Client> writer = ClientOf("dictlogd-1", /*append_attempts=*/1);
  absl::StatusOr<std::string> before = writer->Append("quorum", "before");
  ASSERT_TRUE(before.ok()) << before.status();
  std::unique_ptr<client::Client> reader = ClientOf("dictlogd-2");
  ASSERT_TRUE(GetWhenApplied(*reader, *before).ok());

  ASSERT_TRUE(cluster->Kill("kafka-2", "STOP").ok());
  ASSERT_TRUE(cluster->Kill("kafka-3", "STOP").ok());
  const absl::Time start = absl::Now();
  absl::StatusOr<std::string> during = writer->Append("quorum", "during");
  const absl::Duration took = absl::Now() - start;
  absl::StatusOr<v1::Record> read = reader->Get(*before);
  EXPECT_TRUE(cluster->Kill("kafka-2", "CONT").ok());
  EXPECT_TRUE(cluster->Kill("kafka-3", "CONT").ok());
  ASSERT_FALSE(during.ok()) << "acknowledged without 2 in-sync brokers: " << *during;
  EXPECT_TRUE(absl::IsUnavailable(during.status()) ||
              absl::IsDeadlineExceeded(during.status()))
      << during.status();
  EXPECT_LT(took, absl::Seconds(25));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->payload(), "before");

  const absl::Time deadline = absl::Now() + absl::Seconds(120);
  absl::StatusOr<std::string> after = writer->Append("quorum", "after");
  while (!after.ok() && absl::Now() < deadline) after = writer->Append("quorum", "after");
  ASSERT_TRUE(after.ok()) << after.status();
  absl::StatusOr<v1::Record> record = GetWhenApplied(*reader, *after);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->payload(), "after");
}

// Last (it leaves one broker down): the partition's leader killed with SIGKILL while a
// node appends. Every acknowledged record reads back from the other nodes, once.
TEST(ClusterE2eTest, LeaderKilledWhileAppendingLosesNothing) {
  ASSERT_TRUE(cluster != nullptr);
  absl::StatusOr<kafka_check::PartitionState> state =
      kafka_check::DescribePartition(cluster->bootstrap(), "dictlog.records", 0, 30000);
  ASSERT_TRUE(state.ok()) << state.status();
  ASSERT_GE(state->leader, 1);
  std::unique_ptr<client::Client> writer = ClientOf("dictlogd-1");
  Category category{"leader", {}, {}};
  for (int batch = 0; batch < 60; ++batch) {
    if (batch == 20) {
      ASSERT_TRUE(cluster->Kill(absl::StrCat("kafka-", state->leader), "KILL").ok());
    }
    std::vector<std::string> lines;
    for (int i = 0; i < 10; ++i) lines.push_back(absl::StrCat("leader ", batch, " ", i));
    std::vector<std::string> ids = AppendAll(*writer, category.name, lines, 10);
    ASSERT_EQ(ids.size(), lines.size()) << "batch " << batch;
    category.lines.insert(category.lines.end(), lines.begin(), lines.end());
    category.ids.insert(category.ids.end(), ids.begin(), ids.end());
  }
  CheckNode(*ClientOf("dictlogd-2"), category);
  CheckNode(*ClientOf("dictlogd-3"), category);
}

}  // namespace
}  // namespace dictlog
