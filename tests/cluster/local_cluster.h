// LocalCluster (tests only): Kafka brokers (and, later, dictlogd nodes) started on
// 127.0.0.1 by deploy/local-cluster/cluster.sh in a temporary directory, and stopped by
// `cluster.sh down` (by pid) when destroyed. Starting 3 broker JVMs takes 10-60 s on
// this machine: start one LocalCluster per test binary (a gtest Environment).
//
// Not thread-safe: one test thread drives it.
#ifndef DICTLOG_TESTS_CLUSTER_LOCAL_CLUSTER_H_
#define DICTLOG_TESTS_CLUSTER_LOCAL_CLUSTER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace dictlog::testing {

class LocalCluster {
 public:
  // `cluster.sh up --dir=dir --brokers=brokers [extra]`; the script and the jars come
  // from the runfiles. FAILED_PRECONDITION without the jars (`make kafka`).
  static absl::StatusOr<std::unique_ptr<LocalCluster>> Up(
      const std::string& dir, int brokers, const std::vector<std::string>& extra = {});
  ~LocalCluster();  // cluster.sh down

  LocalCluster(const LocalCluster&) = delete;
  LocalCluster& operator=(const LocalCluster&) = delete;

  // HOST:PORT,... of every broker.
  const std::string& bootstrap() const { return bootstrap_; }
  // The address up printed for NAME (kafka-N, dictlogd-N); empty if none.
  std::string AddressOf(const std::string& name) const;
  // cluster.sh kill --node=NAME --signal=SIGNAL (KILL, TERM, STOP, CONT).
  absl::Status Kill(const std::string& name, const std::string& signal);
  // cluster.sh start --node=NAME; waits until it serves.
  absl::Status Start(const std::string& name);
  // Waits (up to 60 s) until cluster.sh status says NAME stopped.
  bool WaitStopped(const std::string& name) const;

  const std::string& dir() const { return dir_; }

 private:
  explicit LocalCluster(std::string dir) : dir_(std::move(dir)) {}

  const std::string dir_;
  std::vector<std::pair<std::string, std::string>> addresses_;  // name, HOST:PORT
  std::string bootstrap_;
};

// Runs `command` with /bin/sh; its stdout, or INTERNAL naming the exit status.
absl::StatusOr<std::string> RunCommand(const std::string& command);

// A loopback port free now (bound to port 0, then closed), as cluster.sh picks its own.
int FreeLoopbackPort();

// Starts dictlogd node `name`, which `up` did not make, on a free loopback port with
// the cluster's brokers and DICTLOGD_FLAGS `flags` (e.g. a longer --cluster_nodes: a
// later flag wins over cluster.sh's); waits until it serves (`cluster.sh start`);
// `cluster.sh down` stops it too. Its HOST:PORT.
absl::StatusOr<std::string> StartAddedNode(LocalCluster& cluster, const std::string& name,
                                           const std::string& flags);

}  // namespace dictlog::testing

#endif  // DICTLOG_TESTS_CLUSTER_LOCAL_CLUSTER_H_
