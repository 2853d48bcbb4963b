// The statistics and report of `dictlog-bench read`: latency percentiles, throughput,
// errors by status code, as a text table, one JSON object, or a live progress line.
//
// Plain values and pure functions: no shared state, safe from any thread.
#ifndef DICTLOG_BENCHMARKS_LOAD_REPORT_H_
#define DICTLOG_BENCHMARKS_LOAD_REPORT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "benchmarks/load/options.h"

namespace dictlog::bench {

// The nearest-rank percentile q (0 < q <= 100) of `sorted` (ascending): the smallest
// value with at least q% of the sample at or below it. 0 for an empty sample.
int64_t Percentile(const std::vector<int64_t>& sorted, double q);

// Per-call latency, in microseconds.
struct LatencySummary {
  int64_t count = 0;
  double mean_us = 0;
  int64_t p50_us = 0, p90_us = 0, p99_us = 0, p999_us = 0, max_us = 0;
};

// Sorts `latencies_us` in place and summarises it.
LatencySummary Summarize(std::vector<int64_t>& latencies_us);

// Totals of a run (or of a run so far).
struct RunTotals {
  double seconds = 0;
  // Calls completed (ok or not), reads and appends; of which appends.
  int64_t ops = 0;
  int64_t appends = 0;
  // Records returned, and the sum of their payload sizes.
  int64_t records = 0;
  int64_t raw_bytes = 0;
  // Failed calls by their code, plus failed ids within a MultiGet by theirs.
  std::map<absl::StatusCode, int64_t> errors;
  // The first message seen for each code in `errors` (what the server said).
  std::map<absl::StatusCode, std::string> first_error;

  int64_t error_count() const;
};

// What the client library's shard routing did over the run (client::ShardRouter::Stats,
// summed over the connections' clients); all zero against a single node.
struct RoutingTotals {
  int64_t map_fetches = 0;
  int64_t refreshes_after_failure = 0;  // Map fetches a refused or failed read asked for.
  int64_t retargets = 0;                // Reads resent after NotServedHere or a failure.
  int64_t epoch_changes = 0;            // Maps fetched with a new assignment epoch.
};

struct RunReport {
  ReadOptions options;
  size_t ids = 0;
  RunTotals totals;
  // Per read call, and per append call (count 0 without --mix appends).
  LatencySummary latency;
  LatencySummary append_latency;
  RoutingTotals routing;
};

// "  12.0s      41234 ops/s      2639000 records/s  errors 0" (one line, no newline);
// rates are averages since the start.
std::string FormatProgress(double seconds, int64_t ops, int64_t records, int64_t errors);
// A human-readable multi-line report.
std::string FormatText(const RunReport& report);
// One JSON object (no trailing newline); keys are stable, see README.
std::string FormatJson(const RunReport& report);

}  // namespace dictlog::bench

#endif  // DICTLOG_BENCHMARKS_LOAD_REPORT_H_
