// End to end: SIGTERM to the real dictlogd while calls are in flight. Health reports
// NOT_SERVING first (calls still served during --shutdown_notice_seconds), then new
// calls are refused, the call in flight finishes whole, the exit status is 0, and
// every acknowledged append is there after a restart. No step depends on how fast the
// machine is: the Scan in flight is held by its reader until the test lets it go, and
// every wait is a poll with a generous deadline.
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "client/client.h"
#include "gtest/gtest.h"
#include "server/service/health.grpc.pb.h"
#include "tests/e2e/server_process.h"

namespace dictlog {
namespace {

using HealthResponse = grpc::health::v1::HealthCheckResponse;

constexpr int kScanRecords = 20000;
// The shutdown notice: long enough for the checks made during it on a loaded machine.
constexpr absl::Duration kNotice = absl::Seconds(4);

// The health status, or UNKNOWN if the call failed.
HealthResponse::ServingStatus Health(const std::string& address) {
  auto stub = grpc::health::v1::Health::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(2)));
  HealthResponse response;
  if (!stub->Check(&context, {}, &response).ok()) return HealthResponse::UNKNOWN;
  return response.status();
}

// Appends single records until stopped, remembering every acknowledged one.
class Writer {
 public:
  explicit Writer(const client::Client& client) : client_(client) {}
  void Run(const std::atomic<bool>& stop) {
    for (int i = 0; !stop.load(); ++i) {
      const std::string payload = absl::StrCat("writer record ", i);
      absl::StatusOr<std::string> id = client_.Append("w", payload);
      if (id.ok()) {
        absl::MutexLock lock(&mu_);
        acknowledged_[*id] = payload;
      }
      absl::SleepFor(absl::Milliseconds(2));
    }
  }
  std::map<std::string, std::string> acknowledged() {
    absl::MutexLock lock(&mu_);
    return acknowledged_;
  }
  // Waits until `n` appends are acknowledged or `timeout` passes; true if they are.
  bool WaitForAcknowledged(size_t n, absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto enough = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return acknowledged_.size() >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&enough), timeout);
  }

 private:
  const client::Client client_;
  absl::Mutex mu_;
  std::map<std::string, std::string> acknowledged_ ABSL_GUARDED_BY(mu_);
};

TEST(ShutdownE2eTest, SigtermDrainsInFlightCallsAndLosesNothing) {
  const std::string data_dir = std::string(std::getenv("TEST_TMPDIR")) + "/data";
  std::filesystem::remove_all(data_dir);
  testing::ServerProcess server(
      testing::RunfilePath("server/daemon/dictlogd"), data_dir,
      {"--auto_train=false",
       absl::StrCat("--shutdown_notice_seconds=", absl::ToDoubleSeconds(kNotice)),
       "--shutdown_grace_seconds=30", "--max_batch_records=20000"});
  absl::StatusOr<std::string> address = server.Start();
  ASSERT_TRUE(address.ok()) << address.status();
  client::ClientOptions options;
  options.server = *address;
  options.append_attempts = 1;  // An append the server refused stays refused.
  options.timeout = absl::Seconds(5);
  client::Client client(options);
  std::vector<v1::RecordToAppend> batch(kScanRecords);
  for (int i = 0; i < kScanRecords; ++i) {
    batch[i].set_category("s");
    batch[i].set_payload(absl::StrCat("scanned record ", i));
  }
  absl::StatusOr<std::vector<std::string>> loaded = client.AppendBatch(batch);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(Health(*address), HealthResponse::SERVING);

  // In flight across the whole shutdown: a Scan whose reader stops after 500 records
  // until the test lets it go on (its own client: no call deadline to run into).
  std::atomic<size_t> scanned{0};
  absl::Notification scan_started, let_scan_go_on;
  absl::Status scan_status;
  std::atomic<bool> scan_done{false};
  client::ClientOptions scan_options = options;
  scan_options.timeout = absl::Minutes(10);
  const client::Client scan_client(scan_options);
  std::thread scan([&] {
    v1::ScanRequest request;
    request.set_pool("s");
    scan_status = scan_client.Scan(request, [&](const v1::Record&) {
      if (++scanned == 500) {
        scan_started.Notify();
        let_scan_go_on.WaitForNotification();
      }
      return absl::OkStatus();
    });
    scan_done = true;
  });
  std::atomic<bool> stop_writer{false};
  Writer writer(client);
  std::thread writing([&] { writer.Run(stop_writer); });
  ASSERT_TRUE(scan_started.WaitForNotificationWithTimeout(absl::Minutes(2)));
  ASSERT_TRUE(writer.WaitForAcknowledged(11, absl::Minutes(2)));

  ASSERT_TRUE(server.Terminate().ok());
  const absl::Time terminated = absl::Now();
  // Health turns NOT_SERVING while calls are still served.
  HealthResponse::ServingStatus health = HealthResponse::SERVING;
  while (health == HealthResponse::SERVING && absl::Now() < terminated + kNotice - absl::Seconds(1)) {
    health = Health(*address);
  }
  EXPECT_EQ(health, HealthResponse::NOT_SERVING);
  EXPECT_TRUE(client.Get("s/1").ok()) << "calls are served during the notice";
  // After the notice new calls are refused (UNAVAILABLE), while the Scan still runs. A
  // call arriving in the very instant shutdown starts may instead be CANCELLED (gRPC
  // cancels calls it accepted but had not started); it was not served either.
  absl::Status refused;
  while (absl::Now() < terminated + kNotice + absl::Seconds(60)) {
    refused = client.Get("s/1").status();
    if (absl::IsUnavailable(refused)) break;
    EXPECT_TRUE(refused.ok() || absl::IsCancelled(refused)) << refused;
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_EQ(refused.code(), absl::StatusCode::kUnavailable) << refused;
  EXPECT_GE(absl::Now() - terminated, kNotice - absl::Milliseconds(100));
  EXPECT_FALSE(scan_done.load()) << "the scan is held by its reader";
  let_scan_go_on.Notify();
  stop_writer = true;
  writing.join();
  scan.join();
  EXPECT_TRUE(scan_status.ok()) << scan_status;
  EXPECT_EQ(scanned.load(), static_cast<size_t>(kScanRecords));
  absl::StatusOr<int> exit_code = server.WaitForExit();
  ASSERT_TRUE(exit_code.ok()) << exit_code.status();
  EXPECT_EQ(*exit_code, 0);

  // Nothing acknowledged was lost.
  const std::map<std::string, std::string> acknowledged = writer.acknowledged();
  EXPECT_GT(acknowledged.size(), 10u);
  ASSERT_TRUE(server.Start().ok());
  client::ClientOptions restarted_options = options;
  restarted_options.server = server.address();
  client::Client restarted(restarted_options);
  for (const auto& [id, payload] : acknowledged) {
    absl::StatusOr<v1::Record> record = restarted.Get(id);
    ASSERT_TRUE(record.ok()) << id << ": " << record.status();
    EXPECT_EQ(record->payload(), payload);
  }
  EXPECT_EQ(restarted.GetPool("s")->stats().records(), static_cast<uint64_t>(kScanRecords));
  EXPECT_EQ(*server.Stop(), 0);
}

}  // namespace
}  // namespace dictlog
