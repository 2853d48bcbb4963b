// compare_server: the baselines of benchmarks/compare behind dictlogd's gRPC front end
// (dictlog.v1.LogStore: Append, AppendBatch, Get, MultiGet; the rest UNIMPLEMENTED).
//   --backend=rocksdb_dict  raw records in RocksDB, zstd with per-SST dictionaries
//   --backend=null          nothing stored; reads answer records of the right size
// SIGUSR1: flush and compact (rocksdb_dict), then write the stored-size report (JSON)
// to --stats_out. SIGTERM/SIGINT: drain calls in flight and exit 0.
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "benchmarks/compare/compare_service.h"
#include "benchmarks/compare/null_backend.h"
#include "benchmarks/compare/rocksdb_backend.h"
#include "common/atomic_file.h"
#include "common/help_flags.h"
#include "common/status_macros.h"
#include "server/service/dictlog_server.h"

ABSL_FLAG(std::string, backend, "", "rocksdb_dict or null (required)");
ABSL_FLAG(std::string, listen, "127.0.0.1:0", "host:port to serve on (port 0: any)");
ABSL_FLAG(std::string, port_file, "", "write the bound port here once serving");
ABSL_FLAG(std::string, data_dir, "", "rocksdb_dict: a new directory for the database");
ABSL_FLAG(std::string, stats_out, "", "on SIGUSR1, write the stored-size JSON here");
ABSL_FLAG(int, block_bytes, 4096, "rocksdb_dict: BlockBasedTable block_size");
ABSL_FLAG(int, max_dict_bytes, 16 * 1024, "rocksdb_dict: zstd dictionary size (0: none)");
ABSL_FLAG(int, zstd_max_train_bytes, 1600 * 1000, "rocksdb_dict: dictionary training input");
ABSL_FLAG(int, block_cache_mb, 8, "rocksdb_dict: cache of uncompressed blocks, MiB");
ABSL_FLAG(bool, uncompressed, false,
          "rocksdb_dict: store blocks uncompressed (no zstd, no dictionary; the "
          "rocksdb_plain configuration: RocksDB's lookup cost alone)");
ABSL_FLAG(int, max_request_bytes, 64 << 20, "largest gRPC request message, in bytes");

namespace dictlog::compare {
namespace {

absl::StatusOr<std::unique_ptr<Backend>> MakeBackend() {
  const std::string name = absl::GetFlag(FLAGS_backend);
  if (name == "null") return std::unique_ptr<Backend>(new NullBackend());
  if (name != "rocksdb_dict") {
    return absl::InvalidArgumentError("--backend must be rocksdb_dict or null");
  }
  RocksDbBackendOptions options;
  options.path = absl::GetFlag(FLAGS_data_dir);
  if (options.path.empty()) return absl::InvalidArgumentError("--data_dir is required");
  if (absl::GetFlag(FLAGS_block_bytes) <= 0 || absl::GetFlag(FLAGS_max_dict_bytes) < 0 ||
      absl::GetFlag(FLAGS_zstd_max_train_bytes) < 0 || absl::GetFlag(FLAGS_block_cache_mb) < 0) {
    return absl::InvalidArgumentError("sizes must not be negative (block_bytes > 0)");
  }
  options.block_bytes = static_cast<size_t>(absl::GetFlag(FLAGS_block_bytes));
  options.max_dict_bytes = static_cast<uint32_t>(absl::GetFlag(FLAGS_max_dict_bytes));
  options.zstd_max_train_bytes =
      static_cast<uint32_t>(absl::GetFlag(FLAGS_zstd_max_train_bytes));
  options.block_cache_bytes = static_cast<size_t>(absl::GetFlag(FLAGS_block_cache_mb)) << 20;
  options.uncompressed = absl::GetFlag(FLAGS_uncompressed);
  ASSIGN_OR_RETURN(std::unique_ptr<RocksDbBackend> backend, RocksDbBackend::Open(options));
  return std::unique_ptr<Backend>(std::move(backend));
}

// Writes `text` and a newline to `path` through a temporary file, so readers never
// see half of it.
absl::Status WriteAtomically(const std::string& path, const std::string& text) {
  return WriteFileAtomically(path, absl::StrCat(text, "\n"));
}

// Serves until SIGTERM/SIGINT; measures on each SIGUSR1.
absl::Status Serve(const sigset_t& signals) {
  ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, MakeBackend());
  CompareLogStore service(backend.get(), ServiceLimits());
  // dictlogd's own front end (health, reflection, limits; no metrics interceptor, as
  // dictlogd without --metrics_listen), so only the storage differs.
  service::ServerOptions front_end;
  front_end.listen = absl::GetFlag(FLAGS_listen);
  front_end.max_request_bytes = absl::GetFlag(FLAGS_max_request_bytes);
  int port = 0;
  grpc::ServerBuilder builder;
  service::ConfigureFrontEnd(front_end, &builder, &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", absl::GetFlag(FLAGS_listen)));
  }
  if (!absl::GetFlag(FLAGS_port_file).empty()) {
    RETURN_IF_ERROR(WriteAtomically(absl::GetFlag(FLAGS_port_file), std::to_string(port)));
  }
  std::printf("compare_server: %s backend serving on port %d\n",
              absl::GetFlag(FLAGS_backend).c_str(), port);
  std::fflush(stdout);
  for (int signal = 0; signal != SIGTERM && signal != SIGINT;) {
    sigwait(&signals, &signal);
    if (signal != SIGUSR1) continue;
    absl::StatusOr<std::string> stats = backend->MeasureJson();
    absl::Status written = stats.ok() ? absl::OkStatus() : stats.status();
    if (written.ok() && !absl::GetFlag(FLAGS_stats_out).empty()) {
      written = WriteAtomically(absl::GetFlag(FLAGS_stats_out), *stats);
    }
    std::printf("compare_server: measured: %s\n",
                written.ok() ? stats->c_str() : written.ToString().c_str());
    std::fflush(stdout);
  }
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(10));
  server->Wait();
  return absl::OkStatus();
}

}  // namespace
}  // namespace dictlog::compare

int main(int argc, char** argv) {
  dictlog::SetHelp("benchmarks/compare/server_main.cc",
                   "compare_server: the comparison's baselines behind the dictlog.v1 "
                   "LogStore front end.\n\nUsage: compare_server --backend=rocksdb_dict "
                   "--data_dir=DIR | --backend=null [--listen=127.0.0.1:0] "
                   "[--port_file=F] [--stats_out=F]");
  absl::ParseCommandLine(argc, argv);
  // As dictlogd runs by default (--mutex_deadlock_detection=false), so that the
  // comparison measures the backends, not abseil's lock-order bookkeeping.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  const absl::Status status = dictlog::compare::Serve(signals);
  if (!status.ok()) {
    std::fprintf(stderr, "compare_server: %s\n", status.ToString().c_str());
    return status.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
  }
  return 0;
}
