// Options of dictlog-bench's two commands (`load`, `read`) and their validation.
//
// main.cc reads the flags into these structs; Validate*() turns bad values into
// INVALID_ARGUMENT with a message naming the flag. Plain values: no shared state, safe
// from any thread.
#ifndef DICTLOG_BENCHMARKS_LOAD_OPTIONS_H_
#define DICTLOG_BENCHMARKS_LOAD_OPTIONS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "benchmarks/load/sampler.h"
#include "client/client.h"

namespace dictlog::bench {

// What one read call is.
enum class ReadOp { kGet, kMultiGet };

// The share of calls of each kind, as relative weights (read:95,append:5 means 5% of
// calls are appends).
struct Mix {
  int read = 100;
  int append = 0;
};

// "get" or "multiget".
absl::StatusOr<ReadOp> ParseReadOp(absl::string_view text);
// "uniform" or "zipf:S" with 0 < S <= 10, e.g. "zipf:0.99".
absl::StatusOr<Distribution> ParseDistribution(absl::string_view text);
// "read:R,append:A" (either part may be left out; weights 0..1000000, sum > 0).
absl::StatusOr<Mix> ParseMix(absl::string_view text);
std::string ReadOpName(ReadOp op);
std::string MixName(const Mix& mix);
std::string DistributionName(const Distribution& dist);

// `dictlog-bench load`.
struct LoadOptions {
  // host:port of the server. Required.
  std::string server;
  // Directory whose *.log files are appended, one category per file name. Required.
  std::string dir;
  // Times each file is appended; copy c > 0 prefixes each payload with "c<c> " so
  // that payloads differ. Default 1.
  int copies = 1;
  // Where the acknowledged ids go, one a line. Default ./dictlog-bench.ids.
  std::string ids_out = "dictlog-bench.ids";
  // Records and payload bytes per AppendBatch call: at most batch_records, and at
  // most batch_bytes unless one record alone is larger (client::BatchLimits, as the
  // dictlog CLI). Defaults 1000 and 4 MiB.
  int batch_records = 1000;
  int64_t batch_bytes = 4 << 20;
  // Deadline of each call. Default 60 s.
  absl::Duration timeout = absl::Seconds(60);
  // TLS and bearer token. Default plaintext, no token.
  client::ClientSecurity security;
};

// `dictlog-bench read`.
struct ReadOptions {
  // host:port of the server. Required.
  std::string server;
  // File of record ids, one a line (what `load` writes). Required.
  std::string ids_file;
  // Stop after this long ... Default 30 s.
  absl::Duration duration = absl::Seconds(30);
  // ... or after this many calls, whichever comes first (0: no limit).
  int64_t max_ops = 0;
  // Calls in flight: one thread with a synchronous call loop each. 1..1024; default 64.
  int concurrency = 64;
  // TCP connections the threads share round-robin (thread i uses i % connections),
  // 1..1024; at most `concurrency` are opened. Default 4.
  int connections = 4;
  ReadOp op = ReadOp::kGet;
  // Ids per MultiGet call, 1..10000. Default 64. Get always reads one.
  int batch = 64;
  // MultiGet: decode in the load generator (ReadOptions::decode_locally, over
  // MultiGetFrames). Default false: the server decodes.
  bool decode_locally = false;
  Distribution dist;
  // Reads vs single-record Appends. Default read only.
  Mix mix;
  // Category of the appended records (each a payload the thread read last). Default
  // "dictlog-bench".
  std::string append_category = "dictlog-bench";
  // Where the JSON report goes (empty: none).
  std::string json_out;
  // Where each acknowledged append's id and payload hash, and each failed call with its
  // time and code, go (benchmarks/load/call_log.h; empty: none).
  std::string acked_out;
  std::string errors_out;
  // Deadline of each call. Default 10 s.
  absl::Duration timeout = absl::Seconds(10);
  // TLS and bearer token. Default plaintext, no token.
  client::ClientSecurity security;
  // Seed of the id samplers (thread i uses seed + i). Default 1.
  uint64_t seed = 1;
};

// OK, or INVALID_ARGUMENT naming the first bad flag.
absl::Status ValidateLoadOptions(const LoadOptions& options);
absl::Status ValidateReadOptions(const ReadOptions& options);

}  // namespace dictlog::bench

#endif  // DICTLOG_BENCHMARKS_LOAD_OPTIONS_H_
