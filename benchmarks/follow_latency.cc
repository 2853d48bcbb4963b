// follow_latency: append-to-delivery latency of Follow (`dictlog tail -f`) against a
// running dictlogd. One process appends records one at a time at --rate and follows
// the same category on another connection; each payload carries the steady-clock
// time taken just before its Append call, and the follower subtracts it from the time
// the record reaches it. Prints p50/p90/p99/max of delivery and of the Append call
// itself, and writes one CSV row per record (--csv).
//
//   bazel run -c opt //benchmarks:follow_latency -- --server=127.0.0.1:7070
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "client/client.h"
#include "common/command_line.h"
#include "grpcpp/grpcpp.h"

ABSL_FLAG(std::string, server, "127.0.0.1:7070", "host:port of the dictlogd to measure");
ABSL_FLAG(std::string, category, "",
          "category appended and followed (default: follow-bench-<pid>, a new pool)");
ABSL_FLAG(int, records, 2000, "records appended (and measured)");
ABSL_FLAG(double, rate, 200, "appends per second (one record per Append call)");
ABSL_FLAG(int, payload_bytes, 200, "payload size (a time stamp, padded)");
ABSL_FLAG(std::string, csv, "", "write seq,append_us,delivery_us per record here");

namespace {

constexpr char kUsage[] =
    "follow_latency: append-to-delivery latency of Follow against a running dictlogd.";

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t i = std::min(values.size() - 1, static_cast<size_t>(p * values.size()));
  return values[i];
}

void PrintRow(const char* what, const std::vector<double>& us) {
  std::printf("%-22s %10.0f %10.0f %10.0f %10.0f\n", what, Percentile(us, 0.50),
              Percentile(us, 0.90), Percentile(us, 0.99), Percentile(us, 1.0));
}

}  // namespace

int main(int argc, char** argv) {
  dictlog::ParseCommandLine(argc, argv,
                            {"benchmarks/follow_latency.cc", kUsage, {{"gRPC", grpc::Version()}}});
  const int n = absl::GetFlag(FLAGS_records);
  std::string category = absl::GetFlag(FLAGS_category);
  if (category.empty()) category = absl::StrCat("follow-bench-", getpid());
  dictlog::client::ClientOptions options;
  options.server = absl::GetFlag(FLAGS_server);
  dictlog::client::ClientOptions follower_options = options;
  follower_options.own_connection = true;  // Appends and deliveries on two connections.
  const dictlog::client::Client appender(options);
  const dictlog::client::Client follower(follower_options);

  // The first record creates the pool (a category of its own by default).
  if (absl::StatusOr<std::string> first = appender.Append(category, "start"); !first.ok()) {
    std::fprintf(stderr, "follow_latency: %s\n", first.status().ToString().c_str());
    return 1;
  }
  std::vector<double> delivery_us(n, -1), append_us(n, -1);
  absl::Mutex mu;
  int received = 0;
  bool started = false;
  dictlog::client::FollowCancel cancel;
  dictlog::v1::FollowRequest request;
  request.set_category(category);
  request.set_from_start(true);  // A new pool: "start" first.
  std::thread follow([&] {
    absl::Status status = follower.Follow(
        request,
        [&](const dictlog::v1::Record& record) {
          const int64_t now = NowNs();
          if (record.payload() == "start") {
            absl::MutexLock lock(&mu);
            started = true;
            return absl::OkStatus();
          }
          std::vector<std::string> parts = absl::StrSplit(record.payload(), ' ');
          int seq = 0;
          int64_t sent = 0;
          if (parts.size() < 2 || !absl::SimpleAtoi(parts[0], &seq) ||
              !absl::SimpleAtoi(parts[1], &sent) || seq < 0 || seq >= n) {
            return absl::OkStatus();  // "start" and foreign records.
          }
          absl::MutexLock lock(&mu);
          delivery_us[seq] = (now - sent) / 1000.0;
          ++received;
          return absl::OkStatus();
        },
        &cancel);
    if (!status.ok()) std::fprintf(stderr, "follow_latency: %s\n", status.ToString().c_str());
  });
  {  // Measure only once the stream has caught up (it has seen "start").
    absl::MutexLock lock(&mu);
    auto live = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return started; };
    if (!mu.AwaitWithTimeout(absl::Condition(&live), absl::Seconds(30))) {
      std::fprintf(stderr, "follow_latency: the stream sent nothing in 30 s\n");
      cancel.Cancel();
      follow.join();
      return 1;
    }
  }
  const absl::Duration interval = absl::Seconds(1) / absl::GetFlag(FLAGS_rate);
  const std::string padding(std::max(0, absl::GetFlag(FLAGS_payload_bytes) - 32), 'x');
  for (int seq = 0; seq < n; ++seq) {
    const absl::Time next = absl::Now() + interval;
    const int64_t sent = NowNs();
    absl::StatusOr<std::string> id =
        appender.Append(category, absl::StrCat(seq, " ", sent, " ", padding));
    append_us[seq] = (NowNs() - sent) / 1000.0;
    if (!id.ok()) {
      std::fprintf(stderr, "follow_latency: %s\n", id.status().ToString().c_str());
      cancel.Cancel();
      follow.join();
      return 1;
    }
    absl::SleepFor(next - absl::Now());
  }
  {
    absl::MutexLock lock(&mu);
    auto all = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return received >= n; };
    mu.AwaitWithTimeout(absl::Condition(&all), absl::Seconds(30));
  }
  cancel.Cancel();
  follow.join();
  std::vector<double> delivered;
  for (double us : delivery_us) {
    if (us >= 0) delivered.push_back(us);
  }
  std::printf("follow_latency: %d records at %.0f/s to %s, %zu delivered\n", n,
              absl::GetFlag(FLAGS_rate), options.server.c_str(), delivered.size());
  std::printf("%-22s %10s %10s %10s %10s\n", "microseconds", "p50", "p90", "p99", "max");
  PrintRow("append to delivery", delivered);
  PrintRow("append call", append_us);
  if (const std::string path = absl::GetFlag(FLAGS_csv); !path.empty()) {
    std::ofstream csv(path);
    csv << "seq,append_us,delivery_us\n";
    for (int seq = 0; seq < n; ++seq) {
      csv << seq << ',' << append_us[seq] << ',' << delivery_us[seq] << '\n';
    }
  }
  return delivered.size() == static_cast<size_t>(n) ? 0 : 1;
}
