// lifecycle_bench: how fast data leaves dictlog (issue 21), in process, through the
// real LogEngine over a real RocksDB: the retention job's throughput (records deleted
// per second by passes of max_age retention until nothing more is due, compactions
// included) and the time of Admin.DeletePool for a pool of --records records
// (compaction included), with the table-file and memtable bytes before and after. The loghub lines are
// appended in calls of 1,000, each a simulated second apart (an injected clock), with
// a dictionary trained and activated after the first 100,000 records.
//
//   bazel build -c opt //benchmarks:lifecycle_bench
//   bazel-bin/benchmarks/lifecycle_bench --dir=$PWD/../shared/data/loghub
//       --records=1000000 --csv=benchmarks/results/lifecycle_bench.csv
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_format.h"
#include "server/engine/log_engine.h"
#include "training/files.h"

ABSL_FLAG(std::string, dir, "../shared/data/loghub", "directory of *.log files");
ABSL_FLAG(std::string, work_dir, "",
          "a new directory for the stores (default: a temp directory); removed after");
ABSL_FLAG(int64_t, records, 1000000, "records in each pool");
ABSL_FLAG(std::vector<std::string>, modes, std::vector<std::string>({"record", "block"}),
          "storage modes to measure: record, block (4 KiB blocks)");
ABSL_FLAG(int64_t, retention_records_per_pass, 10000,
          "most records a retention pass looks at per pool (dictlogd's "
          "--retention_records_per_pass)");
ABSL_FLAG(std::string, csv, "", "write the rows as CSV here");

namespace dictlog::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kPerCall = 1000;
constexpr int64_t kStartMs = 1764000000000;

void Check(const absl::Status& status, const std::string& what) {
  if (status.ok()) return;
  std::cerr << "lifecycle_bench: " << what << ": " << status << "\n";
  std::exit(1);
}

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// A RocksDB integer property summed over the column families.
uint64_t Property(const engine::LogEngine& engine, const char* name) {
  uint64_t total = 0;
  for (const auto& [family, bytes] : engine.StoreProperty(name)) total += bytes;
  return total;
}

// What the store holds: table files on disk plus memtables (not flushed yet).
uint64_t SstBytes(const engine::LogEngine& engine) {
  return Property(engine, "rocksdb.total-sst-files-size");
}
uint64_t MemtableBytes(const engine::LogEngine& engine) {
  return Property(engine, "rocksdb.cur-size-all-mem-tables");
}

struct Row {
  std::string mode;
  std::string what;
  uint64_t records = 0;
  double seconds = 0;
  uint64_t sst_before = 0;
  uint64_t sst_after = 0;
  uint64_t mem_before = 0;
  uint64_t mem_after = 0;
};

// An engine over `path` whose appends and retention read `now_ms`.
std::unique_ptr<engine::LogEngine> OpenEngine(const std::string& path, bool block,
                                              std::shared_ptr<std::atomic<int64_t>> now_ms) {
  engine::EngineOptions options;
  options.store.path = path;
  options.auto_train = false;
  options.retention.interval = absl::ZeroDuration();  // Passes run when asked.
  options.retention.max_records_per_pass =
      static_cast<size_t>(absl::GetFlag(FLAGS_retention_records_per_pass));
  options.store.clock_for_test = [now_ms] { return absl::FromUnixMillis(now_ms->load()); };
  if (block) {
    options.default_pool_options.set_storage_mode(v1::STORAGE_MODE_BLOCK);
    options.default_pool_options.set_block_bytes(4096);
  }
  absl::StatusOr<std::unique_ptr<engine::LogEngine>> engine =
      engine::LogEngine::Open(options);
  Check(engine.status(), "opening the engine");
  return *std::move(engine);
}

// Appends `records` lines to `pool`, a call a simulated second; trains and activates a
// dictionary after the first 100,000.
void Fill(engine::LogEngine& engine, const std::string& pool,
          const std::vector<std::string>& lines, int64_t records,
          std::atomic<int64_t>& now_ms) {
  std::vector<engine::AppendInput> batch;
  for (int64_t i = 0; i < records; ++i) {
    batch.push_back({pool, lines[i % lines.size()]});
    if (batch.size() < kPerCall && i + 1 < records) continue;
    Check(engine.Append(batch).status(), "appending");
    batch.clear();
    now_ms += 1000;
    if (i + 1 == 100000) {
      v1::TrainDictionaryRequest train;
      train.set_pool(pool);
      train.set_activate(true);
      Check(engine.TrainDictionary(train).status(), "training");
    }
  }
}

// Retention: every record but the newest tenth expires; passes until none is due.
Row MeasureRetention(engine::LogEngine& engine, const std::string& mode, int64_t records,
                     std::atomic<int64_t>& now_ms) {
  const int64_t span_s = records / kPerCall;  // The pool's appends span this many seconds.
  v1::PoolOptions limits;
  limits.set_max_age_seconds(static_cast<uint64_t>(span_s / 10 + 1));
  Check(engine.UpdatePool("aging", limits).status(), "setting max_age");
  now_ms = kStartMs + span_s * 1000;  // Just after the pool's last append.
  Row row{mode, "retention"};
  row.sst_before = SstBytes(engine);
  row.mem_before = MemtableBytes(engine);
  const Clock::time_point start = Clock::now();
  while (true) {
    absl::StatusOr<uint64_t> expired = engine.RunRetentionForTest();
    Check(expired.status(), "retention pass");
    if (*expired == 0) break;
    row.records += *expired;
  }
  row.seconds = Seconds(start);
  row.sst_after = SstBytes(engine);
  row.mem_after = MemtableBytes(engine);
  return row;
}

Row MeasureDelete(engine::LogEngine& engine, const std::string& mode) {
  Row row{mode, "pool delete"};
  row.sst_before = SstBytes(engine);
  row.mem_before = MemtableBytes(engine);
  const Clock::time_point start = Clock::now();
  absl::StatusOr<v1::DeletePoolResponse> deleted = engine.DeletePool("doomed");
  row.seconds = Seconds(start);
  Check(deleted.status(), "deleting the pool");
  row.records = deleted->records();
  row.sst_after = SstBytes(engine);
  row.mem_after = MemtableBytes(engine);
  return row;
}

int Main() {
  absl::StatusOr<std::vector<std::string>> lines =
      trainer::ReadLines(absl::GetFlag(FLAGS_dir) + "/HDFS.log");
  Check(lines.status(), "reading HDFS.log");
  std::string work = absl::GetFlag(FLAGS_work_dir);
  if (work.empty()) work = std::filesystem::temp_directory_path() / "lifecycle_bench";
  if (std::filesystem::exists(work)) {
    std::cerr << "lifecycle_bench: " << work << " exists; give a new --work_dir\n";
    return 2;
  }
  const int64_t records = absl::GetFlag(FLAGS_records);
  std::vector<Row> rows;
  for (const std::string& mode : absl::GetFlag(FLAGS_modes)) {
    auto now_ms = std::make_shared<std::atomic<int64_t>>(kStartMs);
    std::unique_ptr<engine::LogEngine> engine =
        OpenEngine(work + "/" + mode, mode == "block", now_ms);
    const Clock::time_point fill = Clock::now();
    Fill(*engine, "aging", *lines, records, *now_ms);
    Fill(*engine, "doomed", *lines, records, *now_ms);
    std::cerr << mode << ": loaded 2 x " << records << " records in " << Seconds(fill)
              << " s\n";
    rows.push_back(MeasureRetention(*engine, mode, records, *now_ms));
    rows.push_back(MeasureDelete(*engine, mode));
  }
  std::filesystem::remove_all(work);
  std::cout << absl::StrFormat("%-7s %-12s %10s %9s %12s %12s %12s %12s %12s\n", "mode",
                               "what", "records", "seconds", "records/s", "SST before",
                               "SST after", "mem before", "mem after");
  std::ofstream csv;
  if (!absl::GetFlag(FLAGS_csv).empty()) {
    csv.open(absl::GetFlag(FLAGS_csv));
    csv << "mode,what,records,seconds,records_per_second,sst_before,sst_after,"
           "memtables_before,memtables_after\n";
  }
  for (const Row& r : rows) {
    const double rate = r.seconds > 0 ? r.records / r.seconds : 0;
    std::cout << absl::StrFormat("%-7s %-12s %10d %9.3f %12.0f %12d %12d %12d %12d\n",
                                 r.mode, r.what, r.records, r.seconds, rate, r.sst_before,
                                 r.sst_after, r.mem_before, r.mem_after);
    if (csv.is_open()) {
      csv << absl::StrFormat("%s,%s,%d,%.3f,%.0f,%d,%d,%d,%d\n", r.mode, r.what, r.records,
                             r.seconds, rate, r.sst_before, r.sst_after, r.mem_before,
                             r.mem_after);
    }
  }
  return 0;
}

}  // namespace
}  // namespace dictlog::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return dictlog::bench::Main();
}
