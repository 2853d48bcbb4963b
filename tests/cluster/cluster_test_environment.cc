// ClusterTestEnvironment (cluster_test_environment.h).
#include "tests/cluster/cluster_test_environment.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/e2e/server_process.h"

namespace dictlog::testing {

ClusterTestEnvironment* ClusterTestEnvironment::Add(ClusterTestOptions options) {
  auto* environment = new ClusterTestEnvironment(std::move(options));
  ::testing::AddGlobalTestEnvironment(environment);
  return environment;
}

void ClusterTestEnvironment::SetUp() {
  setenv("DICTLOGD", RunfilePath("server/daemon/dictlogd").c_str(), 1);
  setenv("DICTLOGD_FLAGS", options_.dictlogd_flags.c_str(), 1);
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::vector<std::string> extra;
  if (options_.nodes > 0) extra.push_back(absl::StrCat("--nodes=", options_.nodes));
  if (options_.replicas > 0) extra.push_back(absl::StrCat("--replicas=", options_.replicas));
  auto up = LocalCluster::Up(absl::StrCat(tmp ? tmp : "/tmp", "/", options_.name),
                             options_.brokers, extra);
  ASSERT_TRUE(up.ok()) << up.status();
  owned_ = *std::move(up);
  cluster_ = owned_.get();
}

void ClusterTestEnvironment::TearDown() {
  cluster_ = nullptr;
  owned_.reset();
}

absl::Status ClusterTestEnvironment::StartWith(const std::string& node,
                                               const std::string& extra_flags) const {
  setenv("DICTLOGD_FLAGS", absl::StrCat(options_.dictlogd_flags, " ", extra_flags).c_str(), 1);
  absl::Status started = cluster_->Start(node);
  setenv("DICTLOGD_FLAGS", options_.dictlogd_flags.c_str(), 1);
  return started;
}

absl::Status ClusterTestEnvironment::Restart(const std::string& node,
                                             const std::string& extra_flags, bool wipe) const {
  if (absl::Status s = cluster_->Kill(node, "TERM"); !s.ok()) return s;
  if (!cluster_->WaitStopped(node)) return absl::DeadlineExceededError(node + " did not stop");
  if (wipe) {
    absl::StatusOr<std::string> removed = RunCommand("rm -rf '" + DataDir(node) + "'");
    if (!removed.ok()) return removed.status();
  }
  return StartWith(node, extra_flags);
}

std::string ClusterTestEnvironment::DataDir(const std::string& node) const {
  return absl::StrCat(cluster_->dir(), "/", node, "/data");
}

std::unique_ptr<client::Client> ClusterTestEnvironment::ClientOf(const std::string& node,
                                                                 bool routing,
                                                                 int append_attempts) const {
  client::ClientOptions options;
  options.server = cluster_->AddressOf(node);
  options.own_connection = true;  // A restarted node gets a fresh connection.
  options.routing = routing;
  options.append_attempts = append_attempts;
  return std::make_unique<client::Client>(options);
}

std::unique_ptr<v1::LogStore::Stub> ClusterTestEnvironment::StubOf(const std::string& node) const {
  return v1::LogStore::NewStub(
      grpc::CreateChannel(cluster_->AddressOf(node), grpc::InsecureChannelCredentials()));
}

absl::StatusOr<v1::ShardMap> ClusterTestEnvironment::MapFrom(const std::string& node,
                                                             absl::Duration deadline) const {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(deadline));
  v1::ShardMap map;
  const grpc::Status status = StubOf(node)->GetShardMap(&context, {}, &map);
  if (!status.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                        status.error_message());
  }
  return map;
}

absl::StatusOr<v1::ShardMap> ClusterTestEnvironment::WaitForMap(
    const std::string& node, absl::Duration timeout,
    const std::function<bool(const v1::ShardMap&)>& done) const {
  const absl::Time deadline = absl::Now() + timeout;
  absl::StatusOr<v1::ShardMap> map = MapFrom(node);
  while (!(map.ok() && done(*map)) && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(100));  // polls a condition
    map = MapFrom(node);
  }
  return map;
}

bool AllServing(const v1::ShardMap& map, int partitions, int replicas) {
  if (map.assignments_size() != partitions) return false;
  for (const v1::PartitionReplicas& p : map.assignments()) {
    int serving = 0;
    for (const v1::ReplicaState& replica : p.replicas()) serving += replica.serving();
    if (serving != replicas) return false;
  }
  for (const v1::ShardNode& node : map.nodes()) {
    if (!node.live()) return false;
  }
  return true;
}

}  // namespace dictlog::testing
