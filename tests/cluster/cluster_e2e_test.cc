// Cluster mode end to end (docs/cluster.md): 3 Kafka brokers and 3 real dictlogd nodes
// started by deploy/local-cluster/cluster.sh (once for the binary). Every loghub
// record appended through one node reads back byte-identical from the others (Get,
// MultiGet, Scan); a node killed with SIGKILL while it materializes resumes from its
// stored offsets: its counters equal the records, nothing missing, nothing twice.
// Dictionaries in the log (ADR 0020): a pool's dictionary retrained and activated
// again and again under load through all nodes leaves no "unknown dictionary" and the
// same frames on every node; a wiped node rebuilds its peer's frames from the log.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <vector>
#include <algorithm>
#include <atomic>
#include <thread>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "client/client.h"
#include "common/status_macros.h"
#include "gtest/gtest.h"
#include "tests/cluster/cluster_test_environment.h"
#include "tests/e2e/server_process.h"
#include "tools/kafka_check/kafka_client.h"
#include "training/files.h"

namespace dictlog {
namespace {

// One partition: every pool on it, so the broker leading it is the one to kill; every
// node holds it (--cluster_replicas=0): each node's own store is compared.
testing::ClusterTestEnvironment* const env = testing::ClusterTestEnvironment::Add(
    {.name = "cluster", .nodes = 3,
     .dictlogd_flags = "--kafka_partitions=1 --cluster_replicas=0"});
testing::LocalCluster* const& cluster = env->cluster();

std::unique_ptr<client::Client> ClientOf(const std::string& node, int append_attempts = 3) {
  return env->ClientOf(node, /*routing=*/true, append_attempts);
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

// The seq of record id `id` (POOL/SEQ).
uint64_t IdSeq(const std::string& id) {
  return std::strtoull(id.substr(id.rfind('/') + 1).c_str(), nullptr, 10);
}

// Every record id of pool `pool` on `node`, in order (Scan).
absl::StatusOr<std::vector<std::string>> IdsOf(const client::Client& node,
                                               const std::string& pool) {
  std::vector<std::string> ids;
  v1::ScanRequest scan;
  scan.set_pool(pool);
  RETURN_IF_ERROR(node.Scan(scan, [&](const v1::Record& record) {
    ids.push_back(record.id());
    return absl::OkStatus();
  }));
  return ids;
}

absl::StatusOr<std::string> LastId(const client::Client& node, const std::string& pool) {
  ASSIGN_OR_RETURN(std::vector<std::string> ids, IdsOf(node, pool));
  if (ids.empty()) return absl::NotFoundError(absl::StrCat("pool ", pool, " is empty"));
  return ids.back();
}

// A digest over every (id, dictionary id, stored frame) of `pools` on `node`
// (MultiGetFrames: the stored frames as they are; a record stored raw gives its payload).
absl::StatusOr<std::string> FrameDigest(const client::Client& node,
                                        const std::vector<std::string>& pools) {
  uint64_t hash = 14695981039346656037ull;
  auto mix = [&hash](absl::string_view bytes) {
    for (unsigned char c : bytes) hash = (hash ^ c) * 1099511628211ull;
    hash = (hash ^ 0xff) * 1099511628211ull;  // a separator
  };
  uint64_t records = 0;
  std::set<uint32_t> dictionaries;  // Those the frames name.
  for (const std::string& pool : pools) {
    ASSIGN_OR_RETURN(std::vector<std::string> ids, IdsOf(node, pool));
    for (size_t start = 0; start < ids.size(); start += 500) {
      std::vector<std::string> chunk(ids.begin() + start,
                                     ids.begin() + std::min(ids.size(), start + 500));
      ASSIGN_OR_RETURN(auto frames, node.MultiGetFrames(chunk));
      for (size_t i = 0; i < chunk.size(); ++i) {
        RETURN_IF_ERROR(frames[i].status());
        mix(chunk[i]);
        mix(absl::StrCat(frames[i]->dictionary_id()));
        mix(frames[i]->frame());
        mix(frames[i]->payload());
        ++records;
        if (frames[i]->dictionary_id() != 0) dictionaries.insert(frames[i]->dictionary_id());
      }
    }
  }
  return absl::StrCat(records, " records, frames naming ", dictionaries.size(),
                      " dictionaries, digest ", hash);
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

// The console output of node `name` (cluster.sh keeps it in DIR/NAME/console.log).
std::string ConsoleOf(const std::string& name) {
  absl::StatusOr<std::string> text =
      testing::RunCommand(absl::StrCat("cat '", cluster->dir(), "/", name, "/console.log'"));
  return text.ok() ? *text : "";
}

// Dictionary churn (ADR 0020): while two threads append through nodes 1 and 2, a pool's
// dictionary is retrained and activated again and again through all three nodes, and
// older ones activated back. No node ever meets a frame naming a dictionary it lacks
// ("unknown dictionary"), none skips a message, every record reads back byte-identical
// from every node, and every node stores the same frames under the same ids.
TEST(ClusterE2eTest, DictionaryChurnUnderLoadLeavesEveryNodeIdentical) {
  ASSERT_TRUE(cluster != nullptr);
  absl::StatusOr<std::vector<trainer::LogFile>> logs =
      trainer::ReadLogFiles(testing::RunfilePath("../loghub"));
  ASSERT_TRUE(logs.ok()) << logs.status();
  const std::vector<std::string>& source = (*logs)[0].lines;  // one loghub file
  const std::vector<std::string> nodes = {"dictlogd-1", "dictlogd-2", "dictlogd-3"};
  Category category{"churn", {}, {}};
  category.lines.assign(source.begin(), source.begin() + source.size() / 2);
  category.ids = AppendAll(*ClientOf("dictlogd-1"), category.name, category.lines, 100);
  ASSERT_EQ(category.ids.size(), category.lines.size());

  // Load: the rest of the file, again and again, in batches of 10 through nodes 1 and
  // 2 at once, until the churn below is over.
  const std::vector<std::string> rest(source.begin() + source.size() / 2, source.end());
  std::vector<Category> loads(2);
  std::vector<std::thread> appenders;
  std::atomic<bool> churned{false};
  for (size_t t = 0; t < loads.size(); ++t) {
    loads[t].name = category.name;
    appenders.emplace_back([&, t] {
      std::unique_ptr<client::Client> node = ClientOf(nodes[t]);
      for (size_t start = 10 * t; !churned.load(); start = (start + 20) % (rest.size() - 10)) {
        std::vector<std::string> lines(rest.begin() + start, rest.begin() + start + 10);
        std::vector<std::string> ids = AppendAll(*node, loads[t].name, lines, lines.size());
        if (ids.size() != lines.size()) return;  // AppendAll reported the failure
        loads[t].lines.insert(loads[t].lines.end(), lines.begin(), lines.end());
        loads[t].ids.insert(loads[t].ids.end(), ids.begin(), ids.end());
      }
    });
  }
  absl::Cleanup stop_load = [&] {  // Also when an assertion below returns early.
    churned = true;
    for (std::thread& t : appenders) {
      if (t.joinable()) t.join();
    }
  };
  std::vector<uint32_t> trained;
  int activations = 0;
  for (int round = 0; round < 10; ++round) {
    std::unique_ptr<client::Client> admin = ClientOf(nodes[round % 3]);
    v1::TrainDictionaryRequest train;
    train.set_pool(category.name);
    train.set_dictionary_bytes(4096);
    absl::StatusOr<v1::TrainDictionaryResponse> done = admin->TrainDictionary(train);
    ASSERT_TRUE(done.ok()) << done.status();
    trained.push_back(done->dictionary().id());
    // Through another node: the new one, or every other round an older one back.
    // That node answers NOT_FOUND until it applied the dictionary, and ABORTED while
    // it has not applied the latest activation (its base is stale) or when automatic
    // training's activation came first in the log: both are retried.
    v1::ActivateDictionaryRequest activate;
    activate.set_pool(category.name);
    activate.set_id(round % 2 == 1 ? trained[round - 1] : trained.back());
    std::unique_ptr<client::Client> other = ClientOf(nodes[(round + 1) % 3]);
    absl::StatusOr<v1::DictionaryInfo> info = other->ActivateDictionary(activate);
    for (const absl::Time deadline = absl::Now() + absl::Seconds(60);
         (absl::IsNotFound(info.status()) || absl::IsAborted(info.status())) &&
         absl::Now() < deadline;) {
      absl::SleepFor(absl::Milliseconds(50));  // polls a condition
      info = other->ActivateDictionary(activate);
    }
    ASSERT_TRUE(info.ok()) << info.status();
    ++activations;
  }
  std::move(stop_load).Invoke();
  std::vector<Category> all = {category, loads[0], loads[1]};
  for (const Category& part : all) ASSERT_EQ(part.ids.size(), part.lines.size());
  std::vector<std::string> digests;
  for (const std::string& node : nodes) {
    SCOPED_TRACE(node);
    std::unique_ptr<client::Client> reader = ClientOf(node);
    for (const Category& part : all) {
      ASSERT_TRUE(GetWhenApplied(*reader, part.ids.back()).ok());
    }
    Category merged{category.name, {}, {}};  // In id order, as Scan returns them.
    std::vector<std::pair<std::string, std::string>> by_id;
    for (const Category& part : all) {
      for (size_t i = 0; i < part.ids.size(); ++i) by_id.push_back({part.ids[i], part.lines[i]});
    }
    std::sort(by_id.begin(), by_id.end(), [](const auto& a, const auto& b) {
      return IdSeq(a.first) < IdSeq(b.first);
    });
    for (auto& [id, line] : by_id) {
      merged.ids.push_back(id);
      merged.lines.push_back(line);
    }
    CheckNode(*reader, merged);
    absl::StatusOr<std::string> digest = FrameDigest(*reader, {category.name});
    ASSERT_TRUE(digest.ok()) << digest.status();
    digests.push_back(*digest);
    const std::string console = ConsoleOf(node);
    EXPECT_EQ(console.find("unknown dictionary"), std::string::npos) << console;
    EXPECT_EQ(console.find("skipping"), std::string::npos) << console;
  }
  std::printf("churn: %zu dictionaries trained, %d activations; every node: %s\n",
              trained.size(), activations, digests[0].c_str());
  EXPECT_EQ(digests[0], digests[1]);
  EXPECT_EQ(digests[0], digests[2]);
  // The load's frames name several of the churned dictionaries.
  EXPECT_EQ(digests[0].find("frames naming 0 "), std::string::npos);
  EXPECT_EQ(digests[0].find("frames naming 1 "), std::string::npos);
}

// A node stopped, its data directory deleted, started again: it rebuilds every pool
// from the log, dictionaries included, and stores exactly its peer's frames.
TEST(ClusterE2eTest, WipedNodeRebuildsTheSameFramesFromTheLog) {
  ASSERT_TRUE(cluster != nullptr);
  std::unique_ptr<client::Client> peer = ClientOf("dictlogd-2");
  absl::StatusOr<std::vector<v1::PoolInfo>> pools = peer->ListPools();
  ASSERT_TRUE(pools.ok()) << pools.status();
  std::vector<std::string> names;
  for (const v1::PoolInfo& pool : *pools) names.push_back(pool.name());
  ASSERT_FALSE(names.empty());
  absl::Status started = env->Restart("dictlogd-3", "", /*wipe=*/true);
  ASSERT_TRUE(started.ok()) << started;
  std::unique_ptr<client::Client> wiped = ClientOf("dictlogd-3");
  for (const v1::PoolInfo& pool : *pools) {  // Wait until it applied each pool's last id.
    absl::StatusOr<std::string> last = LastId(*peer, pool.name());
    ASSERT_TRUE(last.ok()) << last.status();
    ASSERT_TRUE(GetWhenApplied(*wiped, *last).ok()) << *last;
  }
  absl::StatusOr<std::string> theirs = FrameDigest(*peer, names);
  absl::StatusOr<std::string> ours = FrameDigest(*wiped, names);
  ASSERT_TRUE(theirs.ok() && ours.ok()) << theirs.status() << ours.status();
  EXPECT_EQ(*ours, *theirs);
  std::printf("wiped dictlogd-3 rebuilt: %s\n", ours->c_str());
  absl::StatusOr<v1::ListDictionariesResponse> peer_dicts = peer->ListDictionaries({});
  absl::StatusOr<v1::ListDictionariesResponse> wiped_dicts = wiped->ListDictionaries({});
  ASSERT_TRUE(peer_dicts.ok() && wiped_dicts.ok());
  ASSERT_EQ(wiped_dicts->dictionaries_size(), peer_dicts->dictionaries_size());
  for (int i = 0; i < peer_dicts->dictionaries_size(); ++i) {
    EXPECT_EQ(wiped_dicts->dictionaries(i).id(), peer_dicts->dictionaries(i).id());
    EXPECT_EQ(wiped_dicts->dictionaries(i).active(), peer_dicts->dictionaries(i).active());
  }
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
