// dictlog-bench: load testing of a dictlog server. `load` appends log files and saves
// the ids; `read` runs a closed-loop Get or MultiGet load over those ids and reports
// throughput, latency percentiles and errors. Only --server receives traffic.
#include <csignal>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/time/time.h"
#include "benchmarks/load/options.h"
#include "benchmarks/load/report.h"
#include "benchmarks/load/runner.h"
#include "client/security_files.h"
#include "common/command_line.h"
#include "common/home_path.h"
#include "grpcpp/grpcpp.h"

ABSL_FLAG(std::string, server, "", "host:port of the dictlog server (required)");
ABSL_FLAG(std::string, dir, "", "load: directory whose *.log files are appended, one "
          "category per file name (e.g. ../shared/data/loghub)");
ABSL_FLAG(int, copies, 1, "load: append each file this many times; copy c > 0 prefixes "
          "each payload with \"c<c> \" so payloads differ");
ABSL_FLAG(std::string, ids_out, "dictlog-bench.ids",
          "load: file the acknowledged ids are written to, one a line");
ABSL_FLAG(int, batch_records, 1000, "load: records per AppendBatch call");
ABSL_FLAG(std::string, ids, "", "read: file of record ids, one a line (what load wrote)");
ABSL_FLAG(absl::Duration, duration, absl::Seconds(30),
          "read: run this long (e.g. 30s, 2m) unless --max_ops comes first");
ABSL_FLAG(int64_t, max_ops, 0, "read: stop after this many calls (0: no limit)");
ABSL_FLAG(int, concurrency, 64, "read: calls in flight (one thread each)");
ABSL_FLAG(int, connections, 4,
          "read: TCP connections to the server, shared round-robin by the threads "
          "(at most --concurrency are opened)");
ABSL_FLAG(std::string, op, "get", "read: get (one id a call) or multiget");
ABSL_FLAG(int, batch, 64, "read: ids per MultiGet call");
ABSL_FLAG(bool, decode_locally, false,
          "read --op=multiget: fetch stored frames (MultiGetFrames) and decode them in "
          "dictlog-bench with cached dictionaries instead of on the server");
ABSL_FLAG(std::string, dist, "uniform",
          "read: how ids are picked: uniform, or zipf:S over ids ranked by their position "
          "in --ids (e.g. zipf:0.99: the first ids are the hottest)");
ABSL_FLAG(std::string, mix, "read:100",
          "read: share of calls by kind, e.g. read:95,append:5 (appends: single records "
          "to --append_category, each a payload the thread read last)");
ABSL_FLAG(std::string, append_category, "dictlog-bench",
          "read: category of the records --mix appends");
ABSL_FLAG(std::string, json, "", "read: also write the report as JSON to this file");
ABSL_FLAG(std::string, acked_out, "",
          "read: write each acknowledged --mix append as `id<TAB>fnv1a64 hex<TAB>bytes`");
ABSL_FLAG(std::string, errors_out, "",
          "read: write each failed call (or MultiGet id) as `unix_ms,op,code,id`");
ABSL_FLAG(uint64_t, seed, 1, "read: random seed (thread i uses seed + i)");
ABSL_FLAG(std::string, tls_ca, "",
          "PEM CA certificate the server's must chain to: connect with TLS");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM client certificate, for servers requiring mutual TLS (with --tls_key)");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert");
ABSL_FLAG(std::string, token_file, "",
          "file holding a bearer token sent with every call");
ABSL_FLAG(absl::Duration, timeout, absl::Seconds(10), "deadline of each call");

namespace {

constexpr char kUsage[] = R"(load testing of a dictlog server.

Usage:
  dictlog-bench load --server=HOST:PORT --dir=DIR [--copies=N] [--ids_out=FILE]
      append every DIR/*.log file (category = file name) with AppendBatch; writes
      the acknowledged ids, one a line, to --ids_out (default ./dictlog-bench.ids)
  dictlog-bench read --server=HOST:PORT --ids=FILE [--duration=30s] [--max_ops=N]
                     [--concurrency=64] [--connections=4] [--op=get|multiget]
                     [--batch=64] [--dist=uniform|zipf:0.99]
                     [--mix=read:95,append:5] [--json=FILE]
                     [--acked_out=FILE] [--errors_out=FILE]
      closed-loop reads of those ids; a progress line on stderr every second; a
      report (ops/s, records/s, raw MB/s, latency p50/p90/p99/p99.9 per call, errors
      by status code) on stdout, and as JSON with --json; --mix adds Appends of
      single records (reported apart); --acked_out lists each acknowledged
      append (id, FNV-1a 64 of the payload, bytes), --errors_out each failed call
      (unix ms, op, code, id), for checkers such as tests/cluster:chaos_test

Only --server receives traffic. Path flags may start with ~/ (the home directory).
SIGTERM or SIGINT end a read run early, with its report.
Exit status: 0 success (read: even with failed calls, which the report counts;
--help and --version too), 1 the run failed, 2 usage error (unknown flags and
malformed flag values included).
Example:
  dictlog-bench load --server=127.0.0.1:7070 --dir=../shared/data/loghub
  dictlog-bench read --server=127.0.0.1:7070 --ids=dictlog-bench.ids \
      --op=multiget --dist=zipf:0.99 --duration=10s --json=/tmp/read.json)";

// Usage errors (INVALID_ARGUMENT) print their message and exit 2; others print the
// status and exit 1.
int Fail(const absl::Status& status) {
  if (status.code() == absl::StatusCode::kInvalidArgument) {
    std::cerr << "dictlog-bench: " << status.message() << "\n";
    return 2;
  }
  std::cerr << "dictlog-bench: " << status << "\n";
  return 1;
}

absl::StatusOr<dictlog::client::ClientSecurity> SecurityFlags() {
  return dictlog::client::LoadClientSecurity(
      {absl::GetFlag(FLAGS_tls_ca), absl::GetFlag(FLAGS_tls_cert),
       absl::GetFlag(FLAGS_tls_key), absl::GetFlag(FLAGS_token_file)});
}

int Load() {
  dictlog::bench::LoadOptions options;
  absl::StatusOr<dictlog::client::ClientSecurity> security = SecurityFlags();
  if (!security.ok()) return Fail(security.status());
  options.security = *std::move(security);
  options.server = absl::GetFlag(FLAGS_server);
  options.dir = absl::GetFlag(FLAGS_dir);
  options.copies = absl::GetFlag(FLAGS_copies);
  options.ids_out = absl::GetFlag(FLAGS_ids_out);
  options.batch_records = absl::GetFlag(FLAGS_batch_records);
  options.timeout = absl::GetFlag(FLAGS_timeout);
  if (absl::Status status = dictlog::bench::ValidateLoadOptions(options); !status.ok()) {
    return Fail(status);
  }
  absl::StatusOr<int64_t> records = dictlog::bench::RunLoad(options, std::cerr);
  if (!records.ok()) return Fail(records.status());
  std::cout << "appended " << *records << " records; ids in " << options.ids_out << "\n";
  return 0;
}

absl::StatusOr<dictlog::bench::ReadOptions> ReadFlags() {
  dictlog::bench::ReadOptions options;
  options.server = absl::GetFlag(FLAGS_server);
  options.ids_file = absl::GetFlag(FLAGS_ids);
  options.duration = absl::GetFlag(FLAGS_duration);
  options.max_ops = absl::GetFlag(FLAGS_max_ops);
  options.concurrency = absl::GetFlag(FLAGS_concurrency);
  options.connections = absl::GetFlag(FLAGS_connections);
  absl::StatusOr<dictlog::bench::ReadOp> op = dictlog::bench::ParseReadOp(absl::GetFlag(FLAGS_op));
  if (!op.ok()) return op.status();
  options.op = *op;
  options.batch = absl::GetFlag(FLAGS_batch);
  options.decode_locally = absl::GetFlag(FLAGS_decode_locally);
  absl::StatusOr<dictlog::bench::Distribution> dist =
      dictlog::bench::ParseDistribution(absl::GetFlag(FLAGS_dist));
  if (!dist.ok()) return dist.status();
  options.dist = *dist;
  absl::StatusOr<dictlog::bench::Mix> mix = dictlog::bench::ParseMix(absl::GetFlag(FLAGS_mix));
  if (!mix.ok()) return mix.status();
  options.mix = *mix;
  options.append_category = absl::GetFlag(FLAGS_append_category);
  options.json_out = absl::GetFlag(FLAGS_json);
  options.acked_out = absl::GetFlag(FLAGS_acked_out);
  options.errors_out = absl::GetFlag(FLAGS_errors_out);
  options.seed = absl::GetFlag(FLAGS_seed);
  options.timeout = absl::GetFlag(FLAGS_timeout);
  absl::StatusOr<dictlog::client::ClientSecurity> security = SecurityFlags();
  if (!security.ok()) return security.status();
  options.security = *std::move(security);
  if (absl::Status status = dictlog::bench::ValidateReadOptions(options); !status.ok()) {
    return status;
  }
  return options;
}

int Read() {
  absl::StatusOr<dictlog::bench::ReadOptions> options = ReadFlags();
  if (!options.ok()) return Fail(options.status());
  // SIGTERM or SIGINT end the run as its duration would: the report is still written.
  std::signal(SIGTERM, [](int) { dictlog::bench::RequestStop(); });
  std::signal(SIGINT, [](int) { dictlog::bench::RequestStop(); });
  absl::StatusOr<dictlog::bench::RunReport> report = dictlog::bench::RunRead(*options, std::cerr);
  if (!report.ok()) return Fail(report.status());
  std::cout << dictlog::bench::FormatText(*report);
  if (!options->json_out.empty()) {
    std::ofstream json(options->json_out, std::ios::trunc);
    json << dictlog::bench::FormatJson(*report) << "\n";
    json.close();
    if (!json) return Fail(absl::DataLossError("cannot write --json " + options->json_out));
    std::cout << "json report in " << options->json_out << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> positional = dictlog::ParseCommandLine(
      argc, argv, {"benchmarks/load/main.cc", kUsage, {{"gRPC", grpc::Version()}}});
  dictlog::ExpandHomeInFlags({&FLAGS_dir, &FLAGS_ids_out, &FLAGS_ids, &FLAGS_json,
                              &FLAGS_acked_out, &FLAGS_errors_out,
                              &FLAGS_tls_ca, &FLAGS_tls_cert, &FLAGS_tls_key,
                              &FLAGS_token_file});
  const std::string command = positional.size() == 2 ? positional[1] : "";
  if (command == "load") return Load();
  if (command == "read") return Read();
  std::cerr << "dictlog-bench: expected one command, load or read (see --help)\n";
  return 2;
}
