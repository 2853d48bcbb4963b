#include "server/metrics/rpc_metrics.h"

#include <utility>

namespace dictlog::metrics {
namespace {

// "/dictlog.v1.LogStore/Append" -> ("dictlog.v1.LogStore", "Append").
std::pair<std::string, std::string> SplitMethod(absl::string_view full_method) {
  if (!full_method.empty() && full_method[0] == '/') full_method.remove_prefix(1);
  const size_t slash = full_method.find('/');
  if (slash == absl::string_view::npos) return {"", std::string(full_method)};
  return {std::string(full_method.substr(0, slash)),
          std::string(full_method.substr(slash + 1))};
}

}  // namespace

absl::string_view GrpcCodeName(int code) {
  static constexpr absl::string_view kNames[] = {
      "OK",           "CANCELLED",          "UNKNOWN",        "INVALID_ARGUMENT",
      "DEADLINE_EXCEEDED", "NOT_FOUND",     "ALREADY_EXISTS", "PERMISSION_DENIED",
      "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
      "UNIMPLEMENTED", "INTERNAL",          "UNAVAILABLE",    "DATA_LOSS",
      "UNAUTHENTICATED"};
  if (code < 0 || code >= static_cast<int>(std::size(kNames))) return "UNKNOWN";
  return kNames[code];
}

void RpcMetrics::RecordCall(absl::string_view full_method, absl::string_view code,
                            double seconds) {
  auto [service, method] = SplitMethod(full_method);
  size_t bucket = 0;
  while (bucket < kBucketSeconds.size() && seconds > kBucketSeconds[bucket]) ++bucket;
  absl::MutexLock lock(&mu_);
  Series& series = series_[Key(std::move(service), std::move(method), std::string(code))];
  if (bucket < kBucketSeconds.size()) ++series.buckets[bucket];
  ++series.count;
  series.sum += seconds;
}

void RpcMetrics::AddAppended(uint64_t records, uint64_t bytes) {
  appended_records_.fetch_add(records, std::memory_order_relaxed);
  appended_bytes_.fetch_add(bytes, std::memory_order_relaxed);
}

void RpcMetrics::AddRead(uint64_t records, uint64_t bytes) {
  read_records_.fetch_add(records, std::memory_order_relaxed);
  read_bytes_.fetch_add(bytes, std::memory_order_relaxed);
}

void RpcMetrics::AddReadErrors(absl::string_view full_method, int code, uint64_t count) {
  auto [service, method] = SplitMethod(full_method);
  absl::MutexLock lock(&mu_);
  read_errors_[Key(std::move(service), std::move(method), std::string(GrpcCodeName(code)))] +=
      count;
}

void RpcMetrics::Render(TextWriter* out) const {
  {
    absl::MutexLock lock(&mu_);
    out->Family("dictlog_rpcs_total", "counter",
                "gRPC calls finished, by service, method and status code.");
    for (const auto& [key, series] : series_) {
      const auto& [service, method, code] = key;
      out->Sample("dictlog_rpcs_total",
                  {{"service", service}, {"method", method}, {"code", code}},
                  static_cast<double>(series.count));
    }
    out->Family("dictlog_rpc_duration_seconds", "histogram",
                "gRPC call latency in the server (handler and interceptors), by "
                "service, method and status code.");
    for (const auto& [key, series] : series_) {
      const auto& [service, method, code] = key;
      Labels labels = {{"service", service}, {"method", method}, {"code", code}};
      uint64_t cumulative = 0;
      for (size_t i = 0; i < kBucketSeconds.size(); ++i) {
        cumulative += series.buckets[i];
        Labels with_le = labels;
        with_le.emplace_back("le", FormatValue(kBucketSeconds[i]));
        out->Sample("dictlog_rpc_duration_seconds_bucket", with_le,
                    static_cast<double>(cumulative));
      }
      Labels inf = labels;
      inf.emplace_back("le", "+Inf");
      out->Sample("dictlog_rpc_duration_seconds_bucket", inf,
                  static_cast<double>(series.count));
      out->Sample("dictlog_rpc_duration_seconds_sum", labels, series.sum);
      out->Sample("dictlog_rpc_duration_seconds_count", labels,
                  static_cast<double>(series.count));
    }
    out->Family("dictlog_read_errors_total", "counter",
                "Ids of MultiGet and MultiGetFrames calls answered with an error of their "
                "own (the call itself OK), by service, method and the id's status code.");
    for (const auto& [key, count] : read_errors_) {
      const auto& [service, method, code] = key;
      out->Sample("dictlog_read_errors_total",
                  {{"service", service}, {"method", method}, {"code", code}},
                  static_cast<double>(count));
    }
  }
  const std::pair<const char*, const std::atomic<uint64_t>*> totals[] = {
      {"dictlog_appended_records", &appended_records_},
      {"dictlog_appended_bytes", &appended_bytes_},
      {"dictlog_read_records", &read_records_},
      {"dictlog_read_bytes", &read_bytes_}};
  const char* const help[] = {
      "Records acknowledged by Append and AppendBatch.",
      "Payload bytes acknowledged by Append and AppendBatch.",
      "Records returned by Get, MultiGet, Scan, GetFrame and MultiGetFrames.",
      "Payload bytes returned by Get, MultiGet, Scan, GetFrame and MultiGetFrames."};
  for (size_t i = 0; i < std::size(totals); ++i) {
    const std::string name = std::string(totals[i].first) + "_total";
    out->Family(name, "counter", help[i]);
    out->Sample(name, {}, static_cast<double>(totals[i].second->load()));
  }
}

}  // namespace dictlog::metrics
