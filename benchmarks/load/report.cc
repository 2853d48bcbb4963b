#include "benchmarks/load/report.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace dictlog::bench {
namespace {

double PerSecond(double amount, double seconds) {
  return seconds > 0 ? amount / seconds : 0;
}

// JSON string escaping for the few strings we write (paths, names).
std::string JsonString(absl::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      absl::StrAppend(&out, "\\", std::string(1, c));
    } else if (static_cast<unsigned char>(c) < 0x20) {
      absl::StrAppendFormat(&out, "\\u%04x", c);
    } else {
      out.push_back(c);
    }
  }
  return out + "\"";
}

std::string ErrorsText(const RunTotals& totals) {
  if (totals.errors.empty()) return "none";
  std::vector<std::string> parts;
  for (const auto& [code, count] : totals.errors) {
    parts.push_back(absl::StrCat(absl::StatusCodeToString(code), " ", count));
  }
  return absl::StrJoin(parts, ", ");
}

}  // namespace

int64_t Percentile(const std::vector<int64_t>& sorted, double q) {
  if (sorted.empty()) return 0;
  // The epsilon keeps 99.9% of 1000 at rank 999 despite rounding (999.0000000001).
  const double rank = std::ceil(q / 100.0 * static_cast<double>(sorted.size()) - 1e-9);
  const size_t index = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return sorted[std::min(index, sorted.size() - 1)];
}

LatencySummary Summarize(std::vector<int64_t>& latencies_us) {
  std::sort(latencies_us.begin(), latencies_us.end());
  LatencySummary summary;
  summary.count = static_cast<int64_t>(latencies_us.size());
  if (latencies_us.empty()) return summary;
  double sum = 0;
  for (const int64_t value : latencies_us) sum += static_cast<double>(value);
  summary.mean_us = sum / static_cast<double>(latencies_us.size());
  summary.p50_us = Percentile(latencies_us, 50);
  summary.p90_us = Percentile(latencies_us, 90);
  summary.p99_us = Percentile(latencies_us, 99);
  summary.p999_us = Percentile(latencies_us, 99.9);
  summary.max_us = latencies_us.back();
  return summary;
}

int64_t RunTotals::error_count() const {
  int64_t total = 0;
  for (const auto& [code, count] : errors) total += count;
  return total;
}

std::string FormatProgress(double seconds, int64_t ops, int64_t records, int64_t errors) {
  return absl::StrFormat("%6.1fs %10.0f ops/s %12.0f records/s  errors %d", seconds,
                         PerSecond(ops, seconds), PerSecond(records, seconds), errors);
}

std::string FormatText(const RunReport& r) {
  const RunTotals& t = r.totals;
  const LatencySummary& l = r.latency;
  std::string out = absl::StrFormat(
      "op %s  batch %d  concurrency %d  connections %d  dist %s  ids %d  server %s\n",
      ReadOpName(r.options.op), r.options.op == ReadOp::kGet ? 1 : r.options.batch,
      r.options.concurrency, std::min(r.options.connections, r.options.concurrency),
      DistributionName(r.options.dist), r.ids, r.options.server);
  absl::StrAppendFormat(&out, "seconds     %.2f\nops         %d  (%.0f ops/s)\n", t.seconds,
                        t.ops, PerSecond(t.ops, t.seconds));
  absl::StrAppendFormat(&out, "records     %d  (%.0f records/s)\nraw         %.1f MB/s\n",
                        t.records, PerSecond(t.records, t.seconds),
                        PerSecond(t.raw_bytes, t.seconds) / 1e6);
  absl::StrAppendFormat(&out,
                        "latency us  p50 %d  p90 %d  p99 %d  p99.9 %d  max %d  mean %.0f\n",
                        l.p50_us, l.p90_us, l.p99_us, l.p999_us, l.max_us, l.mean_us);
  if (t.appends > 0) {
    const LatencySummary& a = r.append_latency;
    absl::StrAppendFormat(&out, "appends     %d  (%.0f/s; mix %s)\n", t.appends,
                          PerSecond(t.appends, t.seconds), MixName(r.options.mix));
    absl::StrAppendFormat(&out, "append us   p50 %d  p90 %d  p99 %d  p99.9 %d  max %d\n",
                          a.p50_us, a.p90_us, a.p99_us, a.p999_us, a.max_us);
  }
  const RoutingTotals& g = r.routing;
  if (g.map_fetches > 0) {
    absl::StrAppendFormat(&out,
                          "routing     %d map fetches (%d after a refused or failed read, "
                          "%d new epochs), %d reads retargeted\n",
                          g.map_fetches, g.refreshes_after_failure, g.epoch_changes,
                          g.retargets);
  }
  absl::StrAppendFormat(&out, "errors      %d  (%s)\n", t.error_count(), ErrorsText(t));
  for (const auto& [code, message] : t.first_error) {
    absl::StrAppendFormat(&out, "  first %s: %s\n", absl::StatusCodeToString(code), message);
  }
  return out;
}

std::string FormatJson(const RunReport& r) {
  const RunTotals& t = r.totals;
  const LatencySummary& l = r.latency;
  const LatencySummary& a = r.append_latency;
  std::vector<std::string> codes;
  for (const auto& [code, count] : t.errors) {
    codes.push_back(absl::StrCat(JsonString(absl::StatusCodeToString(code)), ":", count));
  }
  std::vector<std::string> firsts;
  for (const auto& [code, message] : t.first_error) {
    firsts.push_back(
        absl::StrCat(JsonString(absl::StatusCodeToString(code)), ":", JsonString(message)));
  }
  return absl::StrFormat(
      "{\"server\":%s,\"op\":\"%s\",\"batch\":%d,\"concurrency\":%d,\"connections\":%d,"
      "\"dist\":\"%s\","
      "\"ids\":%d,\"seconds\":%.3f,\"ops\":%d,\"ops_per_s\":%.1f,\"records\":%d,"
      "\"records_per_s\":%.1f,\"raw_bytes\":%d,\"raw_mb_per_s\":%.3f,"
      "\"latency_us\":{\"count\":%d,\"mean\":%.1f,\"p50\":%d,\"p90\":%d,\"p99\":%d,"
      "\"p999\":%d,\"max\":%d},\"mix\":\"%s\",\"appends\":%d,\"appends_per_s\":%.1f,"
      "\"append_latency_us\":{\"count\":%d,\"p50\":%d,\"p90\":%d,\"p99\":%d,\"p999\":%d,"
      "\"max\":%d},\"errors\":%d,\"errors_by_code\":{%s},\"first_error\":{%s},"
      "\"routing\":{\"map_fetches\":%d,\"refreshes_after_failure\":%d,"
      "\"epoch_changes\":%d,\"retargets\":%d}}",
      JsonString(r.options.server), ReadOpName(r.options.op),
      r.options.op == ReadOp::kGet ? 1 : r.options.batch, r.options.concurrency,
      std::min(r.options.connections, r.options.concurrency),
      DistributionName(r.options.dist), r.ids, t.seconds, t.ops,
      PerSecond(t.ops, t.seconds), t.records, PerSecond(t.records, t.seconds), t.raw_bytes,
      PerSecond(t.raw_bytes, t.seconds) / 1e6, l.count, l.mean_us, l.p50_us, l.p90_us,
      l.p99_us, l.p999_us, l.max_us, MixName(r.options.mix), t.appends,
      PerSecond(t.appends, t.seconds), a.count, a.p50_us, a.p90_us, a.p99_us, a.p999_us,
      a.max_us, t.error_count(), absl::StrJoin(codes, ","), absl::StrJoin(firsts, ","),
      r.routing.map_fetches, r.routing.refreshes_after_failure, r.routing.epoch_changes,
      r.routing.retargets);
}

}  // namespace dictlog::bench
