// The two commands of dictlog-bench, against one dictlog server.
//
// RunLoad appends a directory of log files and saves the ids; RunRead drives a
// closed-loop read load (options.concurrency threads, one synchronous call at a time
// each, sharing options.connections connections) until the duration or max_ops is reached.
// Both send traffic only to options.server. Each call blocks its caller; run one at a
// time per process (they print progress to `progress`).
#ifndef DICTLOG_BENCHMARKS_LOAD_RUNNER_H_
#define DICTLOG_BENCHMARKS_LOAD_RUNNER_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "benchmarks/load/options.h"
#include "benchmarks/load/report.h"

namespace dictlog::bench {

// Appends every *.log file of options.dir (sorted by name), options.copies times, and
// writes the acknowledged ids to options.ids_out. Returns the number of records.
absl::StatusOr<int64_t> RunLoad(const LoadOptions& options, std::ostream& progress);

// Reads record ids, one a line (blank lines skipped). NOT_FOUND / INVALID_ARGUMENT if
// the file is missing or holds none.
absl::StatusOr<std::vector<std::string>> ReadIdsFile(const std::string& path);

// Runs the read load; prints a progress line about once a second to `progress`.
// Failed calls are counted in the report, not returned. Ends at the duration, at
// max_ops, or soon (within 20 ms, then the calls in flight) after RequestStop().
absl::StatusOr<RunReport> RunRead(const ReadOptions& options, std::ostream& progress);

// Asks a running (or the next) RunRead to end as at its duration: its report and call
// log are written. Async-signal-safe (main.cc calls it on SIGTERM and SIGINT).
void RequestStop();

}  // namespace dictlog::bench

#endif  // DICTLOG_BENCHMARKS_LOAD_RUNNER_H_
