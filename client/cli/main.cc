// dictlog: the command-line client of a dictlog server.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/flags/flag.h"
#include "common/command_line.h"
#include "common/home_path.h"
#include "grpcpp/grpcpp.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "absl/strings/numbers.h"
#include "client/cli/commands.h"
#include "client/cli/units.h"
#include "client/client.h"
#include "client/security_files.h"

ABSL_FLAG(std::string, server, "127.0.0.1:7070", "host:port of the dictlog server");
ABSL_FLAG(std::string, tls_ca, "",
          "PEM CA certificate the server's must chain to: connect with TLS");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM client certificate, for servers requiring mutual TLS (with --tls_key)");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert");
ABSL_FLAG(std::string, tls_server_name, "",
          "name the server's certificate must carry, if not the host of --server "
          "(e.g. `health` run against 127.0.0.1 inside a pod)");
ABSL_FLAG(std::string, token_file, "",
          "file holding a bearer token sent with every call");
ABSL_FLAG(std::string, format, "text", "output: text or json (one object per line)");
ABSL_FLAG(std::string, category, "", "append: category of the records; scan, tail: only "
          "this category's records (routed like an append)");
ABSL_FLAG(std::string, pool, "",
          "scan, tail: every record of this pool; dict, recompress: the pool");
ABSL_FLAG(std::string, from, "", "scan: start at this record id (inclusive)");
ABSL_FLAG(bool, follow, false,
          "tail: follow (required; -f for short): print records as they are appended");
ABSL_FLAG(std::string, after_id, "",
          "tail -f: start after this record id (exclusive: the last one you saw); "
          "empty: from now");
ABSL_FLAG(bool, from_start, false, "tail -f: start with the pool's first record");
ABSL_FLAG(uint64_t, limit, 0, "scan: at most this many records (0: all)");
ABSL_FLAG(std::string, since, "",
          "scan: only records appended at or after this time: RFC 3339 "
          "(2026-11-24T10:00:00Z) or an age meaning that long ago (15m, 2h, 7d); empty: "
          "no bound");
ABSL_FLAG(std::string, until, "",
          "scan: only records appended before this time (same forms as --since); "
          "empty: no bound");
ABSL_FLAG(bool, keep_cr, false,
          "append: keep each line's bytes exactly as they are; by default one '\\r' "
          "at the end of a line (CRLF files) is not part of the record");
ABSL_FLAG(int64_t, batch_records, 1000, "append: records per AppendBatch call");
ABSL_FLAG(int64_t, batch_bytes, 4 << 20, "append: payload bytes per AppendBatch call");
ABSL_FLAG(int, level, 0, "pool create/update: zstd compression level (0: unchanged)");
ABSL_FLAG(int, compact_level, 0,
          "pool create/update: zstd level of frames made with a compact dictionary "
          "(0: unchanged; the server's default is 9)");
ABSL_FLAG(uint32_t, dictionary_bytes, 0,
          "pool create/update: dictionary size in bytes (0: unchanged)");
ABSL_FLAG(std::string, dictionary_mode, "",
          "pool create/update: full, compact or auto (empty: unchanged); takes effect "
          "with the pool's next dictionary");
ABSL_FLAG(std::string, storage_mode, "",
          "pool create: record (one frame per record) or block (records packed into "
          "blocks of --block_bytes); fixed once the pool exists");
ABSL_FLAG(uint32_t, block_bytes, 0,
          "pool create/update: block size of a block-mode pool, 1024..65536 (0: "
          "unchanged; default 4096)");
ABSL_FLAG(std::string, max_age, "",
          "pool create/update: retention, delete records older than this (7d, 12h, 90m; "
          "0: keep forever; empty: unchanged)");
ABSL_FLAG(std::string, max_bytes, "",
          "pool create/update: retention, delete the oldest records while the pool "
          "stores more than this (10GiB, 500MB; 0: no limit; empty: unchanged)");
ABSL_FLAG(std::string, drift_threshold, "",
          "pool create/update: retrain automatically when recent appends compress this "
          "many percent worse than the active dictionary was evaluated (0..100; 0: off; "
          "empty: unchanged; the server's default is 10)");
ABSL_FLAG(std::string, auto_upkeep, "",
          "pool create/update: true: after a retraining for drift is activated, "
          "re-compress older records and gc unreferenced dictionaries automatically "
          "(false: manual, the default; empty: unchanged)");
ABSL_FLAG(std::string, upkeep_min_gain, "",
          "pool create/update: automatic upkeep only when the new dictionary's gain is "
          "at least this many percent (0..1000; empty: unchanged; default 10)");
ABSL_FLAG(int, timeout_seconds, 60, "deadline of each unary call");
ABSL_FLAG(uint32_t, size, 0, "dict train: dictionary size in bytes (0: the pool's option)");
ABSL_FLAG(bool, activate, false,
          "dict train: activate if the gain reaches the server's threshold; "
          "dict import: activate");
ABSL_FLAG(uint32_t, id, 0, "dict activate, dict export: dictionary id");
ABSL_FLAG(std::string, out, "", "dict export, get --frame: output file; backup: new directory on the server");
ABSL_FLAG(bool, frame, false,
          "get: write the stored record as a standard zstd frame (decodable with "
          "`zstd -d -D <exported dictionary>`)");
ABSL_FLAG(bool, decode_locally, false,
          "get, scan: the server sends stored frames (MultiGetFrames, Scan with frames) "
          "and dictlog decodes them "
          "with dictionaries fetched once (needs a token that may read the pools' "
          "dictionaries); same output");
ABSL_FLAG(bool, dry_run, false, "dict gc: list what would be deleted");
ABSL_FLAG(bool, detach, false, "recompress: start the job and return at once");
ABSL_FLAG(bool, status, false,
          "recompress: print the pool's current or last job without starting one");

namespace {

constexpr char kUsage[] = R"(command-line client of a dictlog server.

Usage: dictlog [--server=HOST:PORT] [--tls_ca=PEM [--tls_cert=PEM --tls_key=PEM]]
               [--tls_server_name=NAME] [--token_file=FILE] COMMAND [ARGS] [FLAGS]

Commands:
  append --category=C [FILE|-] [--keep_cr]
                                 append each line of FILE (or stdin) as one record
                                 (without its '\n', nor the '\r' of a CRLF line
                                 unless --keep_cr); prints each record's id as
                                 soon as it is stored
  get ID...                      print the payloads of records (--format=json for
                                 id, category, append time and payload)
                                 (--decode_locally: decode frames here)
  scan --category=C|--pool=P [--from=ID] [--limit=N] [--since=T] [--until=T]
                                 print records in append order (appended in
                                 [since, until): RFC 3339 times or ages ago, 15m)
                                 (--decode_locally: decode frames here)
  tail -f --category=C|--pool=P [--after_id=ID | --from_start]
                                 print records as they are appended (after ID, or
                                 from now), until Ctrl-C or SIGTERM (exit 0); a
                                 stream that fell behind resumes by itself
  pools [--format=json]          per pool: records, raw and stored bytes, ratio,
                                 active dictionary, oldest retained id and time
  pool create|update|show NAME [--level=N] [--dictionary_bytes=N]
                                 [--dictionary_mode=full|compact|auto] [--compact_level=N]
                                 [--storage_mode=record|block] [--block_bytes=N]
                                 [--max_age=7d] [--max_bytes=10GiB] (retention)
                                 [--drift_threshold=10] [--auto_upkeep=true|false]
                                 [--upkeep_min_gain=10] (drift, upkeep)
  pool delete NAME               delete the pool with its records and dictionaries
                                 (asks nothing); prints what went
  get --frame ID [--out=FILE]    the stored record as a standard zstd frame
  dict train --pool=P [--size=N] [--activate]
                                 train a candidate, print its evaluation
  dict list [--pool=P]           id, pool, size, created, active, records, ratio
  dict activate --pool=P --id=N  use dictionary N for new records (rollback too)
  dict export --id=N --out=FILE  standard zstd dictionary (zstd -D FILE)
  dict import --pool=P FILE [--activate]
                                 add a dictionary trained offline (dict_trainer)
  dict gc [--dry_run]            delete dictionaries no record references
  recompress --pool=P [--detach] re-encode old records with the active
                                 dictionary, with live progress (a job killed
                                 by a crash resumes when the server restarts);
                                 records an earlier dictionary stores far
                                 smaller (1.5x) are kept as stored and counted;
                                 records that cannot be read are left as
                                 stored and listed; exit 1 if any
  recompress --pool=P --status   the pool's current or last job
  verify [--pool=P]              decode every stored record (of P, or all) and
                                 list those that do not decode; exit 1 if any.
                                 Also lists the id ranges a salvage lost
                                 (known: they do not change the exit status)
  backup --out=DIR               consistent copy of the whole store into DIR, a new
                                 directory (absolute path) on the server's machine,
                                 inside the server's --backup_root;
                                 restore: dictlogd --data_dir=DIR
  flush                          write the server's memtables to table files and
                                 print the store's table file bytes (to measure it
                                 on disk; the write-ahead log keeps data safe anyway)
  health [SERVICE]               print SERVING if the server's grpc.health.v1 check
                                 says so, else exit 1 (a probe; needs no token);
                                 SERVICE dictlog.replicas: a cluster node's held
                                 partitions all serve (built, not lagging)
  shards [--format=json]         cluster mode: the nodes (live, last announced) and
                                 per partition its replicas (applied offset, lag,
                                 serving); reads are routed by it (docs/cluster.md)

Path flags may start with ~/ (the home directory), except backup's --out (a path on
the server). --version prints the versions of dictlog and gRPC.
Exit status: 0 success (--help, --version too), 1 an operation failed, 2 usage error
(unknown flags and malformed flag values included).
Examples:
  dictlog append --category=HDFS ../shared/data/loghub/HDFS.log
  dictlog get HDFS/1 HDFS/2
  dictlog scan --category=HDFS --limit=10 --format=json
  dictlog tail -f --category=HDFS)";

// Blocks SIGINT and SIGTERM in this thread (and the threads it starts) and returns a
// thread that waits for either and cancels `cancel`.
std::thread WaitForStopSignals(dictlog::client::FollowCancel* cancel) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return std::thread([signals, cancel] {
    int signal = 0;
    sigwait(&signals, &signal);
    cancel->Cancel();
  });
}

}  // namespace

int main(int argc, char** argv) {
  // `tail -f`, as people type it: -f is short for --follow.
  static char kFollow[] = "--follow";
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--") break;
    if (std::string(argv[i]) == "-f") argv[i] = kFollow;
  }
  std::vector<char*> positional = dictlog::ParseCommandLine(
      argc, argv, {"client/cli/main.cc", kUsage, {{"gRPC", grpc::Version()}}});
  std::vector<std::string> args(positional.begin() + 1, positional.end());
  dictlog::ExpandHomeInFlags({&FLAGS_tls_ca, &FLAGS_tls_cert, &FLAGS_tls_key,
                              &FLAGS_token_file});
  // backup's --out names a directory on the server's machine: not ours to expand.
  if (args.empty() || args[0] != "backup") dictlog::ExpandHomeInFlags({&FLAGS_out});

  dictlog::cli::CommandOptions options;
  const std::string format = absl::GetFlag(FLAGS_format);
  if (format != "text" && format != "json") {
    std::cerr << "dictlog: --format must be text or json\n";
    return 2;
  }
  options.format =
      format == "json" ? dictlog::cli::OutputFormat::kJson : dictlog::cli::OutputFormat::kText;
  options.category = absl::GetFlag(FLAGS_category);
  options.pool = absl::GetFlag(FLAGS_pool);
  options.from = absl::GetFlag(FLAGS_from);
  options.limit = absl::GetFlag(FLAGS_limit);
  const absl::Time now = absl::Now();  // "15m" ago: both bounds from the same now.
  for (const auto& [name, flag, out] :
       {std::tuple<const char*, std::string, std::optional<int64_t>*>{
            "since", absl::GetFlag(FLAGS_since), &options.since_ms},
        std::tuple<const char*, std::string, std::optional<int64_t>*>{
            "until", absl::GetFlag(FLAGS_until), &options.until_ms}}) {
    if (flag.empty()) continue;
    absl::StatusOr<int64_t> ms = dictlog::cli::ParseTimePoint(flag, now);
    if (!ms.ok()) {
      std::cerr << "dictlog: --" << name << ": " << ms.status().message() << "\n";
      return 2;
    }
    *out = *ms;
  }
  if (absl::GetFlag(FLAGS_batch_records) <= 0 || absl::GetFlag(FLAGS_batch_bytes) <= 0) {
    std::cerr << "dictlog: --batch_records and --batch_bytes must be positive\n";
    return 2;
  }
  options.batch_records = static_cast<size_t>(absl::GetFlag(FLAGS_batch_records));
  options.batch_bytes = static_cast<size_t>(absl::GetFlag(FLAGS_batch_bytes));
  if (absl::GetFlag(FLAGS_level) != 0) options.compression_level = absl::GetFlag(FLAGS_level);
  if (absl::GetFlag(FLAGS_compact_level) != 0) {
    options.compact_compression_level = absl::GetFlag(FLAGS_compact_level);
  }
  if (absl::GetFlag(FLAGS_dictionary_bytes) != 0) {
    options.dictionary_bytes = absl::GetFlag(FLAGS_dictionary_bytes);
  }
  if (const std::string mode = absl::GetFlag(FLAGS_dictionary_mode); !mode.empty()) {
    dictlog::v1::DictionaryMode parsed;
    if (!dictlog::v1::DictionaryMode_Parse("DICTIONARY_MODE_" + absl::AsciiStrToUpper(mode), &parsed) ||
        parsed == dictlog::v1::DICTIONARY_MODE_UNSPECIFIED) {
      std::cerr << "dictlog: --dictionary_mode must be full, compact or auto\n";
      return 2;
    }
    options.dictionary_mode = parsed;
  }
  if (const std::string mode = absl::GetFlag(FLAGS_storage_mode); !mode.empty()) {
    dictlog::v1::StorageMode parsed;
    if (!dictlog::v1::StorageMode_Parse("STORAGE_MODE_" + absl::AsciiStrToUpper(mode),
                                        &parsed) ||
        parsed == dictlog::v1::STORAGE_MODE_UNSPECIFIED) {
      std::cerr << "dictlog: --storage_mode must be record or block\n";
      return 2;
    }
    options.storage_mode = parsed;
  }
  if (absl::GetFlag(FLAGS_block_bytes) != 0) {
    options.block_bytes = absl::GetFlag(FLAGS_block_bytes);
  }
  if (const std::string age = absl::GetFlag(FLAGS_max_age); !age.empty()) {
    absl::StatusOr<uint64_t> seconds = dictlog::cli::ParseAgeSeconds(age);
    if (!seconds.ok()) {
      std::cerr << "dictlog: --max_age: " << seconds.status().message() << "\n";
      return 2;
    }
    options.max_age_seconds = *seconds;
  }
  if (const std::string size = absl::GetFlag(FLAGS_max_bytes); !size.empty()) {
    absl::StatusOr<uint64_t> bytes = dictlog::cli::ParseBytes(size);
    if (!bytes.ok()) {
      std::cerr << "dictlog: --max_bytes: " << bytes.status().message() << "\n";
      return 2;
    }
    options.max_bytes = *bytes;
  }
  for (const auto& [flag, value, target] :
       {std::tuple{"drift_threshold", absl::GetFlag(FLAGS_drift_threshold),
                   &options.drift_threshold_percent},
        std::tuple{"upkeep_min_gain", absl::GetFlag(FLAGS_upkeep_min_gain),
                   &options.upkeep_min_gain_percent}}) {
    if (value.empty()) continue;
    uint32_t percent = 0;
    if (!absl::SimpleAtoi(value, &percent)) {
      std::cerr << "dictlog: --" << flag << " must be a whole number of percent\n";
      return 2;
    }
    *target = percent;
  }
  if (const std::string upkeep = absl::GetFlag(FLAGS_auto_upkeep); !upkeep.empty()) {
    if (upkeep != "true" && upkeep != "false") {
      std::cerr << "dictlog: --auto_upkeep must be true or false\n";
      return 2;
    }
    options.auto_upkeep = upkeep == "true";
  }
  options.size = absl::GetFlag(FLAGS_size);
  options.activate = absl::GetFlag(FLAGS_activate);
  options.id = absl::GetFlag(FLAGS_id);
  options.out = absl::GetFlag(FLAGS_out);
  options.frame = absl::GetFlag(FLAGS_frame);
  options.decode_locally = absl::GetFlag(FLAGS_decode_locally);
  options.dry_run = absl::GetFlag(FLAGS_dry_run);
  options.detach = absl::GetFlag(FLAGS_detach);
  options.status = absl::GetFlag(FLAGS_status);
  options.keep_cr = absl::GetFlag(FLAGS_keep_cr);
  options.progress = isatty(STDERR_FILENO) != 0;
  options.follow = absl::GetFlag(FLAGS_follow);
  options.after_id = absl::GetFlag(FLAGS_after_id);
  options.from_start = absl::GetFlag(FLAGS_from_start);
  dictlog::client::FollowCancel follow_cancel;
  std::thread signal_waiter;
  if (!args.empty() && args[0] == "tail") {
    // Before gRPC starts threads, so that they all block them too: only the waiter
    // takes SIGINT and SIGTERM, and ends the stream.
    signal_waiter = WaitForStopSignals(&follow_cancel);
    options.follow_cancel = &follow_cancel;
  }

  dictlog::client::ClientOptions client_options;
  client_options.server = absl::GetFlag(FLAGS_server);
  client_options.timeout = absl::Seconds(absl::GetFlag(FLAGS_timeout_seconds));
  absl::StatusOr<dictlog::client::ClientSecurity> security =
      dictlog::client::LoadClientSecurity({absl::GetFlag(FLAGS_tls_ca),
                                           absl::GetFlag(FLAGS_tls_cert),
                                           absl::GetFlag(FLAGS_tls_key),
                                           absl::GetFlag(FLAGS_token_file)});
  if (!security.ok()) {
    std::cerr << "dictlog: " << security.status().message() << "\n";
    return 2;
  }
  client_options.security = *std::move(security);
  client_options.security.tls_server_name = absl::GetFlag(FLAGS_tls_server_name);
  const dictlog::client::Client client(client_options);

  std::ios::sync_with_stdio(false);
  const absl::Status status = dictlog::cli::RunCommand(
      client, args, options, {std::cin, std::cout, std::cerr});
  std::cout.flush();
  if (signal_waiter.joinable()) {
    follow_cancel.Cancel();
    kill(getpid(), SIGTERM);  // Blocked: wakes the waiter, which then returns.
    signal_waiter.join();
  }
  if (status.ok()) return 0;
  if (dictlog::cli::IsUsageError(status)) {
    std::cerr << "dictlog: " << status.message() << "\n";
    return 2;
  }
  if (dictlog::cli::IsReported(status)) return 1;
  std::cerr << "dictlog: " << status << '\n';
  return 1;
}
