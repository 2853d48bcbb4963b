#include "benchmarks/load/runner.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "benchmarks/load/call_log.h"
#include "benchmarks/load/sampler.h"
#include "client/batch_limits.h"
#include "client/client.h"
#include "common/status_macros.h"
#include "training/files.h"

namespace dictlog::bench {
namespace {

namespace fs = std::filesystem;

// The *.log files of --dir, sorted by name; NOT_FOUND if there is none.
absl::StatusOr<std::vector<std::string>> LogFiles(const std::string& dir) {
  absl::StatusOr<std::vector<std::string>> files = trainer::ListLogFiles(dir);
  if (!files.ok()) {
    return absl::Status(files.status().code(),
                        absl::StrCat("--dir ", dir, ": ", files.status().message()));
  }
  if (files->empty()) return absl::NotFoundError(absl::StrCat("--dir ", dir, ": no *.log files"));
  return files;
}

// Appends `lines` (as copy `copy`) in batches; writes the ids to `ids`.
absl::Status AppendFile(const client::Client& client, const LoadOptions& options,
                        const std::string& category, const std::vector<std::string>& lines,
                        int copy, std::ostream& ids) {
  const std::string prefix = copy == 0 ? "" : absl::StrCat("c", copy, " ");
  std::vector<size_t> sizes;
  for (const std::string& line : lines) sizes.push_back(prefix.size() + line.size());
  const client::BatchLimits limits(static_cast<size_t>(options.batch_records),
                                   static_cast<size_t>(options.batch_bytes));
  for (const auto& [begin, end] : client::SplitIntoBatches(sizes, limits)) {
    std::vector<v1::RecordToAppend> batch;
    for (size_t i = begin; i < end; ++i) {
      v1::RecordToAppend& record = batch.emplace_back();
      record.set_category(category);
      record.set_payload(prefix + lines[i]);
    }
    ASSIGN_OR_RETURN(std::vector<std::string> acked, client.AppendBatch(batch));
    for (const std::string& id : acked) ids << id << '\n';
  }
  if (!ids) return absl::DataLossError(absl::StrCat("cannot write ", options.ids_out));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<int64_t> RunLoad(const LoadOptions& options, std::ostream& progress) {
  RETURN_IF_ERROR(ValidateLoadOptions(options));
  ASSIGN_OR_RETURN(const std::vector<std::string> files, LogFiles(options.dir));
  std::ofstream ids(options.ids_out, std::ios::trunc);
  if (!ids) return absl::PermissionDeniedError(absl::StrCat("cannot create ", options.ids_out));
  client::ClientOptions client_options;
  client_options.server = options.server;
  client_options.timeout = options.timeout;
  client_options.security = options.security;
  const client::Client client(client_options);
  const absl::Time start = absl::Now();
  int64_t records = 0, bytes = 0;
  for (int copy = 0; copy < options.copies; ++copy) {
    for (const std::string& file : files) {
      ASSIGN_OR_RETURN(const std::vector<std::string> lines, trainer::ReadLines(file));
      const std::string category = fs::path(file).stem().string();
      RETURN_IF_ERROR(AppendFile(client, options, category, lines, copy, ids));
      records += static_cast<int64_t>(lines.size());
      for (const std::string& line : lines) bytes += static_cast<int64_t>(line.size());
      const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
      progress << absl::StrFormat("copy %d/%d %-12s %6d records; total %d records, "
                                  "%.1f MB, %.0f records/s\n",
                                  copy + 1, options.copies, category, lines.size(),
                                  records, bytes / 1e6, seconds > 0 ? records / seconds : 0);
    }
  }
  ids.close();
  if (!ids) return absl::DataLossError(absl::StrCat("cannot write ", options.ids_out));
  return records;
}

absl::StatusOr<std::vector<std::string>> ReadIdsFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("--ids ", path, ": cannot read"));
  std::vector<std::string> ids;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) ids.push_back(std::move(line));
  }
  if (ids.empty()) return absl::InvalidArgumentError(absl::StrCat("--ids ", path, ": no ids"));
  return ids;
}

namespace {

// Set by RequestStop (a signal handler): lock-free, so async-signal-safe.
std::atomic<bool> stop_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free);

// Shared by the workers and the reporting thread; counters only grow.
struct Shared {
  std::atomic<bool> stop{false};
  // Calls started (claims against max_ops), completed (reads and appends), appends,
  // records read, their bytes, errors.
  std::atomic<int64_t> started{0}, ops{0}, appends{0}, records{0}, raw_bytes{0}, errors{0};
};

// One worker's own results, merged after it is joined.
struct WorkerResult {
  std::vector<int64_t> read_latencies_us;
  std::vector<int64_t> append_latencies_us;
  std::map<absl::StatusCode, int64_t> errors;
  std::map<absl::StatusCode, std::string> first_error;
};

// The call loop of one thread. Thread-compatible: one thread runs it; it borrows the
// client, options, ids and sampler, which must outlive it.
class Worker {
 public:
  Worker(const client::Client& client, const ReadOptions& options,
         const std::vector<std::string>& ids, const IdSampler& sampler, int index,
         CallLog& log, Shared& shared, WorkerResult& result)
      : client_(client), options_(options), ids_(ids), sampler_(sampler),
        rng_(options.seed + static_cast<uint64_t>(index)), log_(log), shared_(shared),
        result_(result) {
    if (options.op == ReadOp::kMultiGet) keys_.resize(options.batch);
  }

  void Run() {
    const int total = options_.mix.read + options_.mix.append;
    while (!shared_.stop.load(std::memory_order_relaxed)) {
      if (options_.max_ops > 0 &&
          shared_.started.fetch_add(1, std::memory_order_relaxed) >= options_.max_ops) {
        break;
      }
      const bool append = options_.mix.append > 0 &&
                          std::uniform_int_distribution<int>(0, total - 1)(rng_) <
                              options_.mix.append;
      const absl::Time start = absl::Now();
      const absl::Status status = append ? Append() : Read();
      const int64_t micros = absl::ToInt64Microseconds(absl::Now() - start);
      (append ? result_.append_latencies_us : result_.read_latencies_us).push_back(micros);
      if (!status.ok()) CountError(status, append ? "append" : ReadOpName(options_.op), id_);
      if (append) shared_.appends.fetch_add(1, std::memory_order_relaxed);
      shared_.ops.fetch_add(1, std::memory_order_relaxed);
    }
  }

 private:
  // Counts a failed call (or id) and logs it with the time and `id` (empty: none).
  void CountError(const absl::Status& status, absl::string_view op, absl::string_view id) {
    log_.Failed(absl::Now(), op, status.code(), id);
    if (++result_.errors[status.code()] == 1) {
      result_.first_error[status.code()] = std::string(status.message());
    }
    shared_.errors.fetch_add(1, std::memory_order_relaxed);
  }

  void CountRecord(const v1::Record& record) {
    shared_.records.fetch_add(1, std::memory_order_relaxed);
    shared_.raw_bytes.fetch_add(static_cast<int64_t>(record.payload().size()),
                                std::memory_order_relaxed);
    if (options_.mix.append > 0) last_payload_ = record.payload();
  }

  // Get of one id or MultiGet of options.batch ids; a failed id in a MultiGet is
  // counted here, a failed call is returned. Client::MultiGet asks again for ids past
  // the server's response budget (RESOURCE_EXHAUSTED per id), within this one op.
  absl::Status Read() {
    id_.clear();
    if (options_.op == ReadOp::kGet) {
      id_ = ids_[sampler_.Sample(rng_)];
      absl::StatusOr<v1::Record> record = client_.Get(id_);
      if (record.ok()) CountRecord(*record);
      return record.status();
    }
    for (std::string& key : keys_) key = ids_[sampler_.Sample(rng_)];
    client::ReadOptions read;
    read.decode_locally = options_.decode_locally;
    auto results = client_.MultiGet(keys_, read);
    if (!results.ok()) return results.status();
    for (size_t i = 0; i < results->size(); ++i) {
      if ((*results)[i].ok()) {
        CountRecord(*(*results)[i]);
      } else {
        CountError((*results)[i].status(), "multiget", keys_[i]);
      }
    }
    return absl::OkStatus();
  }

  // Appends the payload this thread read last (realistic log data) to
  // options.append_category; logs the acknowledged id.
  absl::Status Append() {
    id_.clear();
    const std::string& payload = last_payload_.empty() ? kFallbackPayload : last_payload_;
    absl::StatusOr<std::string> id = client_.Append(options_.append_category, payload);
    if (id.ok()) log_.Acknowledged(*id, payload);
    return id.status();
  }

  static inline const std::string kFallbackPayload = "dictlog-bench append";
  const client::Client& client_;
  const ReadOptions& options_;
  const std::vector<std::string>& ids_;
  const IdSampler& sampler_;
  std::mt19937_64 rng_;
  std::vector<std::string> keys_;
  std::string last_payload_;
  std::string id_;  // The id the last Get read (for the call log).
  CallLog& log_;
  Shared& shared_;
  WorkerResult& result_;
};

// Prints progress about once a second until the duration passes or every worker is
// done (max_ops reached); then tells the workers to stop.
void Supervise(const ReadOptions& options, absl::Time start, Shared& shared,
               const std::atomic<int>& running, std::ostream& progress) {
  const absl::Time end = start + options.duration;
  absl::Time next_report = start + absl::Seconds(1);
  while (running.load() > 0 && absl::Now() < end && !stop_requested.load()) {
    absl::SleepFor(absl::Milliseconds(20));
    if (absl::Now() >= next_report) {
      progress << FormatProgress(absl::ToDoubleSeconds(absl::Now() - start),
                                 shared.ops.load(), shared.records.load(),
                                 shared.errors.load())
               << std::endl;
      next_report += absl::Seconds(1);
    }
  }
  shared.stop.store(true);
}

}  // namespace

void RequestStop() { stop_requested.store(true); }

absl::StatusOr<RunReport> RunRead(const ReadOptions& options, std::ostream& progress) {
  RETURN_IF_ERROR(ValidateReadOptions(options));
  ASSIGN_OR_RETURN(const std::vector<std::string> ids, ReadIdsFile(options.ids_file));
  ASSIGN_OR_RETURN(const IdSampler sampler, IdSampler::Create(options.dist, ids.size()));
  client::ClientOptions client_options;
  client_options.server = options.server;
  client_options.timeout = options.timeout;
  client_options.security = options.security;
  client_options.own_connection = true;
  std::vector<client::Client> clients;
  for (int i = 0; i < std::min(options.connections, options.concurrency); ++i) {
    clients.emplace_back(client_options);
  }
  // Connect first: a connection attempt that fails at startup would otherwise fail
  // every call made during gRPC's reconnect backoff, thousands in a closed loop.
  for (const client::Client& client : clients) {
    RETURN_IF_ERROR(client.WaitForConnected(options.timeout));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<CallLog> log,
                   CallLog::Open(options.acked_out, options.errors_out));
  Shared shared;
  std::vector<WorkerResult> results(options.concurrency);
  std::atomic<int> running{options.concurrency};
  const absl::Time start = absl::Now();
  std::vector<std::thread> threads;
  for (int i = 0; i < options.concurrency; ++i) {
    threads.emplace_back([&, i] {
      Worker(clients[i % clients.size()], options, ids, sampler, i, *log, shared, results[i])
          .Run();
      running.fetch_sub(1);
    });
  }
  Supervise(options, start, shared, running, progress);
  for (std::thread& thread : threads) thread.join();
  RETURN_IF_ERROR(log->Close());
  RunReport report;
  report.options = options;
  report.ids = ids.size();
  report.totals.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  report.totals.ops = shared.ops.load();
  report.totals.appends = shared.appends.load();
  report.totals.records = shared.records.load();
  report.totals.raw_bytes = shared.raw_bytes.load();
  std::vector<int64_t> reads, appends;
  for (WorkerResult& result : results) {
    reads.insert(reads.end(), result.read_latencies_us.begin(),
                 result.read_latencies_us.end());
    appends.insert(appends.end(), result.append_latencies_us.begin(),
                   result.append_latencies_us.end());
    for (const auto& [code, count] : result.errors) report.totals.errors[code] += count;
    for (const auto& [code, message] : result.first_error) {
      report.totals.first_error.emplace(code, message);  // Keeps the first worker's.
    }
  }
  report.latency = Summarize(reads);
  report.append_latency = Summarize(appends);
  for (const client::Client& client : clients) {
    const client::ShardRouter::Stats routing = client.RoutingStats();
    report.routing.map_fetches += routing.fetches;
    report.routing.refreshes_after_failure += routing.refreshes_after_failure;
    report.routing.retargets += routing.retargets;
    report.routing.epoch_changes += routing.epoch_changes;
  }
  return report;
}

}  // namespace dictlog::bench
