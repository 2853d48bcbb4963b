// End to end: health reflects reality. The real dictlogd binds its port and reports
// NOT_SERVING while its store opens (held until the test creates the file named by
// --open_gate_file_for_test, however slow the machine); LogStore and Admin calls get
// UNAVAILABLE then; once the store is open, SERVING and calls succeed; SIGTERM drains
// and exits 0. The metrics endpoint says the same.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <grpcpp/grpcpp.h>

#include "absl/time/clock.h"
#include "client/client.h"
#include "gtest/gtest.h"
#include "server/service/health.grpc.pb.h"
#include "tests/e2e/server_process.h"

namespace dictlog {
namespace {

// dictlogd (tests/e2e/server_process.h) with its stdout in a file, so the test learns
// the ports from its log before it serves.
class RawServer {
 public:
  explicit RawServer(const std::string& work)
      : log_(work + "/dictlogd.log"),
        gate_(work + "/open-the-store"),
        process_(testing::RunfilePath("server/daemon/dictlogd"), work + "/data",
                 {"--open_gate_file_for_test=" + gate_, "--metrics_listen=127.0.0.1:0"}) {
    started_ = process_.Spawn(log_).ok();
  }

  // Lets it open its store.
  void OpenStore() { std::ofstream(gate_).put('1'); }
  // The first number after `marker` in the log, waiting up to 60 s; 0 if none.
  int PortAfter(const std::string& marker) {
    const std::regex pattern(marker + " ([0-9]+)");
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (absl::Now() < deadline) {
      std::stringstream text;
      text << std::ifstream(log_).rdbuf();
      std::smatch match;
      const std::string s = text.str();
      if (std::regex_search(s, match, pattern)) return std::stoi(match[1]);
      absl::SleepFor(absl::Milliseconds(10));
    }
    return 0;
  }
  // SIGTERM; the exit status, -1 if it did not exit normally.
  int Stop() {
    absl::StatusOr<int> status = process_.Stop();
    return status.ok() ? *status : -1;
  }
  bool started() const { return started_; }

 private:
  const std::string log_;
  const std::string gate_;
  testing::ServerProcess process_;  // Killed by its destructor if still running.
  bool started_ = false;
};

grpc::health::v1::HealthCheckResponse::ServingStatus Health(
    grpc::health::v1::Health::Stub* stub) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  grpc::health::v1::HealthCheckResponse response;
  grpc::Status status = stub->Check(&context, {}, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return response.status();
}

// The HTTP response to GET /metrics (bash /dev/tcp: no HTTP client needed).
std::string Scrape(int port) {
  const std::string command = "exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(port) +
                              "; printf 'GET /metrics HTTP/1.0\\r\\n\\r\\n' >&3; cat <&3";
  std::string out;
  FILE* pipe = popen(("bash -c \"" + command + "\"").c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
  pclose(pipe);
  return out;
}

TEST(HealthE2eTest, NotServingWhileOpeningThenServing) {
  const std::string work = std::string(std::getenv("TEST_TMPDIR")) + "/health";
  std::filesystem::remove_all(work);
  std::filesystem::create_directories(work);
  RawServer server(work);
  ASSERT_TRUE(server.started());
  const int port = server.PortAfter("listening on port");
  ASSERT_GT(port, 0);
  const int metrics_port = server.PortAfter("metrics on port");
  ASSERT_GT(metrics_port, 0);
  const std::string address = "127.0.0.1:" + std::to_string(port);
  auto health = grpc::health::v1::Health::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  client::ClientOptions options;
  options.server = address;
  options.append_attempts = 1;  // One refused call, counted once below.
  const client::Client client(options);

  // The store stays closed until OpenStore().
  EXPECT_EQ(Health(health.get()), grpc::health::v1::HealthCheckResponse::NOT_SERVING);
  EXPECT_EQ(client.Append("HDFS", "too early").status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(client.ListPools().status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(Scrape(metrics_port).find("\ndictlog_store_open 0\n"), std::string::npos);
  EXPECT_EQ(Health(health.get()), grpc::health::v1::HealthCheckResponse::NOT_SERVING);

  server.OpenStore();
  const absl::Time deadline = absl::Now() + absl::Seconds(120);
  while (Health(health.get()) != grpc::health::v1::HealthCheckResponse::SERVING &&
         absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(50));
  }
  ASSERT_EQ(Health(health.get()), grpc::health::v1::HealthCheckResponse::SERVING);
  absl::StatusOr<std::string> id = client.Append("HDFS", "on time");
  ASSERT_TRUE(id.ok()) << id.status();
  absl::StatusOr<v1::Record> record = client.Get(*id);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->payload(), "on time");  // Nothing from the refused append.
  EXPECT_EQ(*id, "HDFS/1");
  const std::string metrics = Scrape(metrics_port);
  EXPECT_NE(metrics.find("\ndictlog_store_open 1\n"), std::string::npos);
  EXPECT_NE(metrics.find("dictlog_rpcs_total{service=\"dictlog.v1.LogStore\","
                         "method=\"Append\",code=\"UNAVAILABLE\"} 1\n"),
            std::string::npos)
      << metrics;
  EXPECT_EQ(server.Stop(), 0);
}

}  // namespace
}  // namespace dictlog
