// Lag and rebuilds end to end (docs/cluster.md "Lag and readiness", "Throttled
// rebuilds"): 3 Kafka brokers and 2 real dictlogd nodes holding the one partition of
// dictlog.records (--cluster_replicas=2), started once for the binary by
// deploy/local-cluster/cluster.sh.
//
// - A wiped node rebuilds the partition no faster than --cluster_rebuild_bytes_per_second
//   allows (its health service dictlog.replicas is NOT_SERVING meanwhile), then serves
//   every record.
// - A node that applies slowly (--cluster_apply_delay_ms_for_test) falls more than
//   --cluster_max_serving_lag_messages behind: the other node's map shows it not
//   serving, its dictlog.replicas health is NOT_SERVING, reads through it still answer
//   every record (forwarded), and once caught up it serves again.
// - Last, both nodes serve TLS with bearer tokens and --peer_tls_ca, dictlogd-2 holding
//   no partition: reads through it are forwarded to dictlogd-1 over TLS with the
//   caller's token.
#include <grpcpp/grpcpp.h>

#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/client.h"
#include "gtest/gtest.h"
#include "proto/dictlog.grpc.pb.h"
#include "tests/cluster/cluster_test_environment.h"
#include "tests/e2e/server_process.h"
#include "tests/e2e/test_pki.h"

namespace dictlog {
namespace {

constexpr int64_t kRebuildBytesPerSecond = 30'000;
constexpr int kMaxLag = 20;

const std::string kBaseFlags = absl::StrCat(
    "--kafka_partitions=1 --cluster_announce_interval_ms=300",
    " --cluster_max_serving_lag_messages=", kMaxLag, " --cluster_serving_lag_grace_ms=300",
    " --cluster_rebuild_bytes_per_second=", kRebuildBytesPerSecond);

testing::ClusterTestEnvironment* const env = testing::ClusterTestEnvironment::Add(
    {.name = "rebuild", .nodes = 2, .replicas = 2, .dictlogd_flags = kBaseFlags});
testing::LocalCluster* const& cluster = env->cluster();

std::unique_ptr<client::Client> ClientOf(const std::string& node) {
  return env->ClientOf(node, /*routing=*/false);  // Through this node: it serves or forwards.
}

// Whether `map` says `node` serves partition 0 (false also when it says nothing).
bool Serves(const v1::ShardMap& map, const std::string& node) {
  for (const v1::PartitionReplicas& p : map.assignments()) {
    for (const v1::ReplicaState& replica : p.replicas()) {
      if (p.partition() == 0 && replica.node() == node) return replica.serving();
    }
  }
  return false;
}

// Polls `check` every 50 ms until it is true or `timeout` passes; whether it became true.
template <typename Check>
bool WaitFor(absl::Duration timeout, Check check) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!check()) {
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Milliseconds(50));  // polls a condition
  }
  return true;
}

bool ReplicasServing(const std::string& node) {
  absl::StatusOr<bool> serving = ClientOf(node)->CheckHealth("dictlog.replicas");
  return serving.ok() && *serving;
}

// `count` records of 1000 printable, hardly compressible bytes, one call each, through
// `node`; their ids and payloads.
std::vector<std::pair<std::string, std::string>> AppendRecords(const std::string& node,
                                                                int count, uint32_t seed) {
  std::mt19937 random(seed);
  std::unique_ptr<client::Client> writer = ClientOf(node);
  std::vector<std::pair<std::string, std::string>> appended;
  for (int i = 0; i < count; ++i) {
    std::string payload(1000, ' ');
    for (char& c : payload) c = static_cast<char>(' ' + random() % 94);
    absl::StatusOr<std::string> id = writer->Append("rebuild", payload);
    EXPECT_TRUE(id.ok()) << id.status();
    if (!id.ok()) break;
    appended.emplace_back(*id, payload);
  }
  return appended;
}

void ExpectAllRead(const std::string& node,
                   const std::vector<std::pair<std::string, std::string>>& records) {
  std::unique_ptr<client::Client> reader = ClientOf(node);
  int wrong = 0;
  for (const auto& [id, payload] : records) {
    absl::StatusOr<v1::Record> record = reader->Get(id);
    for (int attempt = 0; !record.ok() && absl::IsUnavailable(record.status()) && attempt < 50;
         ++attempt) {
      record = reader->Get(id);  // Not applied there yet: the barrier answers UNAVAILABLE.
    }
    if (!record.ok() || record->payload() != payload) {
      if (++wrong <= 3) ADD_FAILURE() << node << " " << id << ": " << record.status();
    }
  }
  EXPECT_EQ(wrong, 0) << node;
}

TEST(RebuildE2eTest, AWipedNodeRebuildsThrottledThenServes) {
  ASSERT_TRUE(cluster != nullptr);
  ASSERT_TRUE(WaitFor(absl::Seconds(30), [] {
    absl::StatusOr<v1::ShardMap> map = env->MapFrom("dictlogd-1");
    return map.ok() && Serves(*map, "dictlogd-1") && Serves(*map, "dictlogd-2");
  }));
  const auto records = AppendRecords("dictlogd-1", 300, 1);
  ASSERT_EQ(records.size(), 300u);
  ExpectAllRead("dictlogd-2", records);

  // 300 messages of about 1 KB: at 30 KB/s after a second's burst, the rebuild takes
  // more than 8 s; unthrottled it takes well under one.
  const absl::Time started = absl::Now();
  ASSERT_TRUE(env->Restart("dictlogd-2", "", /*wipe=*/true).ok());
  EXPECT_FALSE(ReplicasServing("dictlogd-2")) << "still building";
  ASSERT_TRUE(WaitFor(absl::Seconds(60), [] { return ReplicasServing("dictlogd-2"); }));
  const absl::Duration rebuild = absl::Now() - started;
  EXPECT_GE(rebuild, absl::Seconds(6)) << "the rebuild was not throttled";
  absl::StatusOr<v1::ShardMap> map = env->MapFrom("dictlogd-2");
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_TRUE(Serves(*map, "dictlogd-2"));
  ExpectAllRead("dictlogd-2", records);
}

TEST(RebuildE2eTest, ANodeFallingBehindStopsServingUntilCaughtUp) {
  ASSERT_TRUE(cluster != nullptr);
  // Applies at most 40 messages a second from now on.
  ASSERT_TRUE(env->Restart("dictlogd-2", "--cluster_apply_delay_ms_for_test=25", false).ok());
  ASSERT_TRUE(WaitFor(absl::Seconds(60), [] {
    absl::StatusOr<v1::ShardMap> map = env->MapFrom("dictlogd-1");
    return map.ok() && Serves(*map, "dictlogd-2") && ReplicasServing("dictlogd-2");
  }));
  const auto records = AppendRecords("dictlogd-1", 200, 2);
  ASSERT_EQ(records.size(), 200u);
  // More than 20 messages behind for 300 ms: it stops serving, and says so.
  EXPECT_TRUE(WaitFor(absl::Seconds(10), [] {
    absl::StatusOr<v1::ShardMap> map = env->MapFrom("dictlogd-1");
    return map.ok() && !Serves(*map, "dictlogd-2");
  })) << "dictlogd-2 kept serving while far behind";
  EXPECT_FALSE(ReplicasServing("dictlogd-2"));
  // Reads through it go to dictlogd-1 meanwhile: every record answers.
  ExpectAllRead("dictlogd-2", records);
  // 200 messages at 40 a second: caught up within seconds, then it serves again.
  EXPECT_TRUE(WaitFor(absl::Seconds(60), [] {
    absl::StatusOr<v1::ShardMap> map = env->MapFrom("dictlogd-1");
    return map.ok() && Serves(*map, "dictlogd-2") && ReplicasServing("dictlogd-2");
  }));
  ExpectAllRead("dictlogd-2", records);
  absl::StatusOr<std::string> log = testing::RunCommand(
      absl::StrCat("grep -c 'behind its end' '", cluster->dir(), "/dictlogd-2/console.log'"));
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_GE(std::atoi(log->c_str()), 2) << "a stop and a resume logged";
}


// Forwarding between TLS nodes with bearer tokens: dictlogd-2 holds no partition
// (--cluster_replicas=1: dictlogd-1 holds the one), so a read through it is forwarded
// to dictlogd-1 over TLS, verified against --peer_tls_ca, with the caller's token.
TEST(RebuildE2eTest, ReadsThroughANonHolderAreForwardedBetweenTlsNodesWithTokens) {
  ASSERT_TRUE(cluster != nullptr);
  const std::string dir = absl::StrCat(cluster->dir(), "/tls");
  absl::StatusOr<testing::TestPki> pki = testing::MakeTestPki(dir);
  ASSERT_TRUE(pki.ok()) << pki.status();
  const std::string token = "Ty4Gv8Kd2Lq7Wn1Xs5Pb9Mc3reader";
  const std::string admin = "k3V9q2m1ZxP0sLr7Tt6Yw8Uaadmin";
  ASSERT_TRUE(testing::RunCommand(absl::StrCat("printf '%s admin\\n%s reader\\n' '", admin,
                                               "' '", token, "' > '", dir, "/tokens'"))
                  .ok());
  const std::string flags = absl::StrCat(
      "--cluster_replicas=1 --tls_cert=", pki->server_cert, " --tls_key=", pki->server_key,
      " --tokens_file=", dir, "/tokens --peer_tls_ca=", pki->ca_cert);
  ASSERT_TRUE(env->Restart("dictlogd-1", flags, false).ok());
  ASSERT_TRUE(env->Restart("dictlogd-2", flags, false).ok());

  auto secure = [&](const std::string& node, const std::string& bearer) {
    client::ClientOptions options;
    options.server = cluster->AddressOf(node);
    options.own_connection = true;
    options.routing = false;
    options.security.tls = true;
    options.security.root_ca_pem = testing::ReadFileForTest(pki->ca_cert);
    options.security.token = bearer;
    return std::make_unique<client::Client>(options);
  };
  // The new assignment (epoch + 1) reached dictlogd-2: it holds nothing, dictlogd-1 serves.
  ASSERT_TRUE(WaitFor(absl::Seconds(60), [&] {
    absl::StatusOr<v1::ShardMap> map = secure("dictlogd-2", token)->GetShardMap();
    return map.ok() && Serves(*map, "dictlogd-1") && !Serves(*map, "dictlogd-2");
  }));
  std::unique_ptr<client::Client> writer = secure("dictlogd-1", admin);
  std::vector<std::pair<std::string, std::string>> records;
  for (int i = 0; i < 20; ++i) {
    const std::string payload = absl::StrCat("tls forwarded record ", i);
    absl::StatusOr<std::string> id = writer->Append("rebuild", payload);
    ASSERT_TRUE(id.ok()) << id.status();
    records.emplace_back(*id, payload);
  }
  std::unique_ptr<client::Client> reader = secure("dictlogd-2", token);
  for (const auto& [id, payload] : records) {
    absl::StatusOr<v1::Record> record = reader->Get(id);
    ASSERT_TRUE(record.ok()) << id << ": " << record.status();
    EXPECT_EQ(record->payload(), payload);
  }
  // Without a token the forwarding node refuses before forwarding anything.
  absl::StatusOr<v1::Record> refused = secure("dictlogd-2", "")->Get(records[0].first);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnauthenticated) << refused.status();
}

}  // namespace
}  // namespace dictlog
