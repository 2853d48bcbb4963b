// RpcMetrics: what the gRPC server has done since it started: calls by service,
// method and status code with a latency histogram, the records and payload bytes
// appended and read, and the ids a MultiGet answered with an error of their own. Filled by the server's interceptor; rendered on each scrape.
//
// Thread safety: all methods may be called concurrently.
#ifndef DICTLOG_SERVER_METRICS_RPC_METRICS_H_
#define DICTLOG_SERVER_METRICS_RPC_METRICS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <tuple>

#include "absl/base/thread_annotations.h"
#include "absl/container/btree_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "server/metrics/text_writer.h"

namespace dictlog::metrics {

class RpcMetrics {
 public:
  // Upper bounds of the latency buckets, in seconds (100 us .. 10 s).
  static constexpr std::array<double, 16> kBucketSeconds = {
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
      0.05,   0.1,     0.25,   0.5,   1,     2.5,   5,    10};

  // One finished call. `full_method` is gRPC's "/package.Service/Method"; `code` the
  // canonical code's name, e.g. "OK" or "NOT_FOUND".
  void RecordCall(absl::string_view full_method, absl::string_view code, double seconds)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Records acknowledged by Append/AppendBatch and their payload bytes.
  void AddAppended(uint64_t records, uint64_t bytes);
  // Records returned by Get/MultiGet/Scan/GetFrame/MultiGetFrames and their payload bytes.
  void AddRead(uint64_t records, uint64_t bytes);
  // `count` ids of one MultiGet/MultiGetFrames call answered with an error of their
  // own (the call itself OK), all with the canonical code `code` (> 0).
  void AddReadErrors(absl::string_view full_method, int code, uint64_t count)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Appends the families dictlog_rpcs_total, dictlog_rpc_duration_seconds,
  // dictlog_{appended,read}_{records,bytes}_total, dictlog_read_errors_total.
  void Render(TextWriter* out) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Series {
    std::array<uint64_t, kBucketSeconds.size()> buckets{};  // Not cumulative.
    uint64_t count = 0;
    double sum = 0;
  };
  // (service, method, code).
  using Key = std::tuple<std::string, std::string, std::string>;

  mutable absl::Mutex mu_;
  absl::btree_map<Key, Series> series_ ABSL_GUARDED_BY(mu_);
  // (service, method, code) -> ids answered with that error.
  absl::btree_map<Key, uint64_t> read_errors_ ABSL_GUARDED_BY(mu_);
  std::atomic<uint64_t> appended_records_{0};
  std::atomic<uint64_t> appended_bytes_{0};
  std::atomic<uint64_t> read_records_{0};
  std::atomic<uint64_t> read_bytes_{0};
};

// gRPC's code name ("OK", "INVALID_ARGUMENT", ...) for a numeric code.
absl::string_view GrpcCodeName(int code);

}  // namespace dictlog::metrics

#endif  // DICTLOG_SERVER_METRICS_RPC_METRICS_H_
