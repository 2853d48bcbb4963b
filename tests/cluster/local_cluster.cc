#include "tests/cluster/local_cluster.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "tests/e2e/server_process.h"

namespace dictlog::testing {
namespace {

std::string Script() { return RunfilePath("deploy/local-cluster/cluster.sh"); }

std::string JarDir() { return RunfilePath("deploy/local-cluster/kafka/lib"); }

}  // namespace

absl::StatusOr<std::string> RunCommand(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return absl::InternalError("popen: " + command);
  std::string out;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
  const int status = pclose(pipe);
  if (status != 0) {
    return absl::InternalError(absl::StrCat(command, ": exit status ", WEXITSTATUS(status),
                                            "; output: ", out));
  }
  return out;
}

absl::StatusOr<std::unique_ptr<LocalCluster>> LocalCluster::Up(
    const std::string& dir, int brokers, const std::vector<std::string>& extra) {
  std::error_code ec;
  if (!std::filesystem::exists(JarDir(), ec)) {
    return absl::FailedPreconditionError("no Kafka jars: run `make kafka` (make test does)");
  }
  std::unique_ptr<LocalCluster> cluster(new LocalCluster(dir));
  // C1 only: the brokers start in about half the CPU time (as cluster_test).
  const std::string command = absl::StrCat(
      "KAFKA_LIB='", JarDir(), "' KAFKA_JVM_OPTS='-Xmx384m -Xms64m -XX:+UseSerialGC ",
      "-XX:TieredStopAtLevel=1' '", Script(), "' up --dir='", dir, "' --brokers=", brokers,
      " --timeout=240 ", absl::StrJoin(extra, " "));
  absl::StatusOr<std::string> out = RunCommand(command);
  if (!out.ok()) return out.status();  // the destructor downs what started
  std::vector<std::string> kafka;
  for (absl::string_view line : absl::StrSplit(*out, '\n', absl::SkipEmpty())) {
    std::vector<std::string> parts = absl::StrSplit(line, ' ');
    if (parts.size() != 2) continue;
    cluster->addresses_.emplace_back(parts[0], parts[1]);
    if (absl::StartsWith(parts[0], "kafka-")) kafka.push_back(parts[1]);
  }
  cluster->bootstrap_ = absl::StrJoin(kafka, ",");
  if (kafka.size() != static_cast<size_t>(brokers)) {
    return absl::InternalError("cluster.sh up printed: " + *out);
  }
  return cluster;
}

LocalCluster::~LocalCluster() {
  absl::StatusOr<std::string> out =
      RunCommand(absl::StrCat("'", Script(), "' down --dir='", dir_, "' --timeout=30"));
  if (!out.ok()) std::fprintf(stderr, "LocalCluster: %s\n", out.status().ToString().c_str());
}

bool LocalCluster::WaitStopped(const std::string& name) const {
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (absl::Now() < deadline) {
    absl::StatusOr<std::string> status =
        RunCommand(absl::StrCat("'", Script(), "' status --dir='", dir_, "'"));
    for (absl::string_view line : absl::StrSplit(status.ok() ? *status : "", '\n')) {
      if (absl::StartsWith(line, name + " ") && absl::EndsWith(line, " stopped")) return true;
    }
    absl::SleepFor(absl::Milliseconds(100));  // polls a condition
  }
  return false;
}

std::string LocalCluster::AddressOf(const std::string& name) const {
  for (const auto& [node, address] : addresses_) {
    if (node == name) return address;
  }
  return "";
}

absl::Status LocalCluster::Kill(const std::string& name, const std::string& signal) {
  return RunCommand(absl::StrCat("'", Script(), "' kill --dir='", dir_, "' --node=", name,
                                 " --signal=", signal))
      .status();
}

absl::Status LocalCluster::Start(const std::string& name) {
  return RunCommand(absl::StrCat("KAFKA_LIB='", JarDir(), "' '", Script(), "' start --dir='",
                                 dir_, "' --node=", name, " --timeout=240"))
      .status();
}

int FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  close(fd);
  return port;
}

absl::StatusOr<std::string> StartAddedNode(LocalCluster& cluster, const std::string& name,
                                           const std::string& flags) {
  const std::string dir = absl::StrCat(cluster.dir(), "/", name);
  std::filesystem::create_directories(dir);
  if (!std::filesystem::exists(dir + "/address")) {
    std::ofstream(dir + "/address") << "127.0.0.1:" << FreeLoopbackPort() << "\n";
    std::ofstream(dir + "/bootstrap") << cluster.bootstrap() << "\n";
  }
  std::string address;
  std::ifstream(dir + "/address") >> address;
  const char* before = std::getenv("DICTLOGD_FLAGS");
  const std::string kept = before != nullptr ? before : "";
  setenv("DICTLOGD_FLAGS", flags.c_str(), 1);
  absl::Status started = cluster.Start(name);
  setenv("DICTLOGD_FLAGS", kept.c_str(), 1);
  if (!started.ok()) return started;
  return address;
}

}  // namespace dictlog::testing
