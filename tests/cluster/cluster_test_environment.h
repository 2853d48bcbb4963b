// ClusterTestEnvironment (tests only): the one setup of every test binary in
// tests/cluster. A gtest Environment that starts a LocalCluster (Kafka brokers and
// real dictlogd nodes, each node with the environment's DICTLOGD_FLAGS) in
// TEST_TMPDIR/<name> before the first test and stops it (by pid) after the last, and
// what the tests ask of the nodes: a client or stub of one node, its shard map, waiting
// until the map says every partition serves, restarting a node with more flags.
//
// Not thread-safe: one test thread drives it (the clients it makes are thread-safe).
#ifndef DICTLOG_TESTS_CLUSTER_CLUSTER_TEST_ENVIRONMENT_H_
#define DICTLOG_TESTS_CLUSTER_CLUSTER_TEST_ENVIRONMENT_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/client.h"
#include "gtest/gtest.h"
#include "proto/dictlog.grpc.pb.h"
#include "tests/cluster/local_cluster.h"

namespace dictlog::testing {

struct ClusterTestOptions {
  std::string name;     // The cluster's directory under TEST_TMPDIR (or /tmp).
  int brokers = 3;      // Kafka brokers.
  int nodes = 0;        // dictlogd nodes (cluster.sh --nodes); 0: brokers only.
  int replicas = 0;     // cluster.sh --replicas (--cluster_replicas); 0: not passed.
  std::string dictlogd_flags;  // DICTLOGD_FLAGS of every node.
};

class ClusterTestEnvironment : public ::testing::Environment {
 public:
  // Registers a new one with gtest, which owns it; call at namespace scope.
  static ClusterTestEnvironment* Add(ClusterTestOptions options);

  void SetUp() override;     // cluster.sh up; a failure fails every test.
  void TearDown() override;  // cluster.sh down

  // The cluster from SetUp to TearDown, else null; the reference stays valid.
  LocalCluster* const& cluster() const { return cluster_; }

  // `cluster.sh start` of `node` with `extra_flags` after the environment's (the later
  // flag wins); waits until it serves.
  absl::Status StartWith(const std::string& node, const std::string& extra_flags) const;
  // SIGTERM to `node`, waits until it stopped, deletes its data if `wipe`, then
  // StartWith(node, extra_flags).
  absl::Status Restart(const std::string& node, const std::string& extra_flags,
                       bool wipe = false) const;
  // Where cluster.sh keeps `node`'s store.
  std::string DataDir(const std::string& node) const;

  // A client of `node` with its own connection; `routing` false: every call goes to
  // `node`, which serves or forwards it.
  std::unique_ptr<client::Client> ClientOf(const std::string& node, bool routing = true,
                                           int append_attempts = 3) const;
  std::unique_ptr<v1::LogStore::Stub> StubOf(const std::string& node) const;
  // GetShardMap of `node`, waiting at most `deadline`.
  absl::StatusOr<v1::ShardMap> MapFrom(const std::string& node,
                                       absl::Duration deadline = absl::Seconds(5)) const;
  // Polls `node`'s map every 100 ms until `done(map)`, at most `timeout`; the last map.
  absl::StatusOr<v1::ShardMap> WaitForMap(
      const std::string& node, absl::Duration timeout,
      const std::function<bool(const v1::ShardMap&)>& done) const;

 private:
  explicit ClusterTestEnvironment(ClusterTestOptions options) : options_(std::move(options)) {}

  const ClusterTestOptions options_;
  std::unique_ptr<LocalCluster> owned_;
  LocalCluster* cluster_ = nullptr;
};

// `map` lists `partitions` partitions, each with `replicas` serving replicas, and every
// node it names is live.
bool AllServing(const v1::ShardMap& map, int partitions, int replicas);

}  // namespace dictlog::testing

#endif  // DICTLOG_TESTS_CLUSTER_CLUSTER_TEST_ENVIRONMENT_H_
