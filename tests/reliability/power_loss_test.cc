// power_loss_test: the promise of --sync_writes (an acknowledged append survives a power
// loss), checked on the real LogEngine over a FaultInjectionFs (server/store).
//
// Each cycle: writer threads append batches (1-20 records, categories mixed, two pools
// in block mode) to the engine opened with sync_writes and record every acknowledged
// id; after a random delay the file system "loses power" (PowerOff: nothing more
// reaches the disk), the engine is abandoned (destroyed; its writes fail), everything
// not synced is dropped (RestorePower), and the engine is reopened. Then every
// acknowledged record must read back byte-identical with its category (MultiGet), full
// Scans of every pool must hold only records the test sent, each once, and Verify must
// find no corrupt record. Dictionaries train and activate during the first cycles.
//
// Without sync_writes a power loss may take acknowledged records (`--allow_loss`
// counts them instead of failing), but never an id's meaning: an id acknowledged
// before a loss must not be handed out again for another record after it (a seq
// lease, Pool::CoverSeqs), checked on every acknowledgement.
//
// Exit status 0 if nothing was violated, 1 otherwise, 2 if the test could not run.
// `--sync_writes=false` alone must report losses: it shows the check can fail.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "server/engine/log_engine.h"
#include "server/store/fault_injection_fs.h"
#include "tests/e2e/server_process.h"
#include "tests/reliability/crash_workload.h"

ABSL_FLAG(int, cycles, 5, "power losses (each followed by a reopen and a full check)");
ABSL_FLAG(uint64_t, seed, 0, "workload and power-off schedule; 0: random");
ABSL_FLAG(int, writers, 3, "appending threads");
ABSL_FLAG(int, min_off_ms, 30, "earliest power loss after a cycle's appends start");
ABSL_FLAG(int, max_off_ms, 400, "latest power loss after a cycle's appends start");
ABSL_FLAG(bool, sync_writes, true, "open the engine with sync_writes (false: a mutant)");
ABSL_FLAG(bool, allow_loss, false,
          "count lost acknowledged records instead of failing (what a power loss may take "
          "without --sync_writes); ids handed out again still fail");
ABSL_FLAG(std::string, work_dir, "", "data directory, wiped first; default under TEST_TMPDIR");
ABSL_FLAG(std::string, loghub_dir, "", "loghub samples; default: from the runfiles");

namespace dictlog::powerloss {
namespace {

const std::vector<std::string> kCategories = {"HDFS", "Apache", "OpenSSH", "Zookeeper"};

struct Sent {
  std::string category;
  std::string payload;
};

// What the writers sent and what was acknowledged, shared by all threads.
class Model {
 public:
  void Sent(const std::string& payload) {
    absl::MutexLock lock(&mu_);
    sent_.insert(payload);
  }
  // False if `id` was acknowledged before (for another record: payloads are unique).
  bool Acked(const std::string& id, powerloss::Sent record) {
    absl::MutexLock lock(&mu_);
    return acked_.emplace(id, std::move(record)).second;
  }
  std::map<std::string, powerloss::Sent> acked() const {
    absl::MutexLock lock(&mu_);
    return acked_;
  }
  bool WasSent(const std::string& payload) const {
    absl::MutexLock lock(&mu_);
    return sent_.count(payload) > 0;
  }

 private:
  mutable absl::Mutex mu_;
  std::set<std::string> sent_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, powerloss::Sent> acked_ ABSL_GUARDED_BY(mu_);
};

struct Report {
  uint64_t appends = 0, acked = 0, checked = 0, scanned = 0;
  uint64_t bytes_dropped = 0, files_deleted = 0, failed_before_power_off = 0;
  uint64_t lost = 0, altered = 0, unknown = 0, duplicates = 0, decode_errors = 0;
  uint64_t reissued = 0, reopen_failures = 0;
  bool allow_loss = false;
  std::string first_violation;
  uint64_t violations() const {
    return (allow_loss ? 0 : lost) + altered + unknown + duplicates + decode_errors +
           reissued + reopen_failures + failed_before_power_off;
  }
  void Violation(uint64_t* counter, const std::string& what) {
    ++*counter;
    if (first_violation.empty()) first_violation = what;
  }
};

// Appends until the power goes off (or a call fails).
void Write(engine::LogEngine* engine, const crash::Corpus& corpus, int cycle, int writer,
           uint64_t seed, const std::atomic<bool>* off, Model* model, Report* report,
           absl::Mutex* report_mu) {
  std::mt19937_64 rng(seed);
  for (int batch = 0; batch < 100000; ++batch) {
    const int n = 1 + static_cast<int>(rng() % 20);
    std::vector<powerloss::Sent> records;
    for (int i = 0; i < n; ++i) {
      const size_t c = rng() % corpus.categories().size();
      const auto& lines = corpus.lines(c);
      records.push_back({corpus.categories()[c],
                         absl::StrCat("pl c=", cycle, " w=", writer, " b=", batch, " i=", i,
                                      " | ", lines[rng() % lines.size()])});
      model->Sent(records.back().payload);
    }
    std::vector<engine::AppendInput> inputs;
    for (const auto& r : records) inputs.push_back({r.category, r.payload});
    const bool was_off = off->load();
    absl::StatusOr<std::vector<std::string>> ids = engine->Append(inputs);
    absl::MutexLock lock(report_mu);
    ++report->appends;
    if (!ids.ok()) {
      if (!was_off && !off->load()) {
        report->Violation(&report->failed_before_power_off,
                          absl::StrCat("append failed with the power on: ", ids.status().ToString()));
      }
      return;
    }
    for (int i = 0; i < n; ++i) {
      if (!model->Acked((*ids)[i], records[i])) {
        report->Violation(&report->reissued, absl::StrCat("id handed out again: ", (*ids)[i]));
      }
    }
    report->acked += n;
  }
}

absl::StatusOr<std::unique_ptr<engine::LogEngine>> OpenEngine(
    const std::string& dir, std::shared_ptr<store::FaultInjectionFs> fs) {
  engine::EngineOptions options;
  options.store.path = dir;
  options.store.sync_writes = absl::GetFlag(FLAGS_sync_writes);
  options.store.file_system = std::move(fs);
  options.default_pool_options.set_dictionary_bytes(4096);
  options.auto_trainer.min_bytes_multiple = 5;
  options.dictionaries.activation_min_gain = -1;
  v1::PoolOptions block = pool::BuiltinPoolOptions();
  block.set_storage_mode(v1::STORAGE_MODE_BLOCK);
  block.set_block_bytes(1024);
  block.set_dictionary_bytes(4096);
  options.pools = {{"HDFS", block}, {"Zookeeper", block}};
  return engine::LogEngine::Open(std::move(options));
}

// Every acknowledged record reads back; every pool scans to records the test sent.
void Check(const engine::LogEngine& engine, const Model& model, Report* report) {
  const std::map<std::string, powerloss::Sent> acked = model.acked();
  std::vector<std::string> ids;
  for (const auto& [id, sent] : acked) ids.push_back(id);
  for (size_t start = 0; start < ids.size(); start += 1000) {
    std::vector<std::string> chunk(ids.begin() + start,
                                   ids.begin() + std::min(ids.size(), start + 1000));
    auto results = engine.MultiGet(chunk);
    if (!results.ok()) {
      report->Violation(&report->decode_errors, results.status().ToString());
      return;
    }
    for (size_t i = 0; i < chunk.size(); ++i) {
      ++report->checked;
      const powerloss::Sent& want = acked.at(chunk[i]);
      const auto& got = (*results)[i];
      if (absl::IsNotFound(got.status())) {
        if (report->allow_loss) {
          ++report->lost;
        } else {
          report->Violation(&report->lost, absl::StrCat("lost ", chunk[i]));
        }
      } else if (!got.ok()) {
        report->Violation(&report->decode_errors,
                          absl::StrCat(chunk[i], ": ", got.status().ToString()));
      } else if (got->payload() != want.payload || got->category() != want.category) {
        report->Violation(&report->altered, absl::StrCat("altered ", chunk[i]));
      }
    }
  }
  std::set<std::string> seen;
  for (const v1::PoolInfo& pool : engine.ListPools()) {
    engine::ScanSpec spec;
    spec.pool = pool.name();
    absl::Status s = engine.Scan(spec, [&](std::vector<v1::Record> records) {
      for (const v1::Record& r : records) {
        ++report->scanned;
        if (!model.WasSent(r.payload())) {
          report->Violation(&report->unknown, absl::StrCat("never sent: ", r.id()));
        } else if (!seen.insert(r.payload()).second) {
          report->Violation(&report->duplicates, absl::StrCat("stored twice: ", r.id()));
        }
      }
      return absl::OkStatus();
    });
    if (!s.ok()) report->Violation(&report->decode_errors, s.ToString());
  }
  auto verify = engine.Verify(v1::VerifyRequest(), [] { return false; });
  if (!verify.ok()) {
    report->Violation(&report->decode_errors, verify.status().ToString());
  } else if (verify->corrupt_records() > 0 || verify->pool_errors_size() > 0) {
    report->Violation(&report->decode_errors,
                      absl::StrCat("Verify: ", verify->ShortDebugString()));
  }
}

int Run() {
  uint64_t seed = absl::GetFlag(FLAGS_seed);
  if (seed == 0) seed = std::random_device()();
  std::string dir = absl::GetFlag(FLAGS_work_dir);
  if (dir.empty()) {
    const char* tmp = std::getenv("TEST_TMPDIR");
    dir = std::string(tmp ? tmp : "/tmp") + "/power_loss_test";
  }
  std::filesystem::remove_all(dir);
  std::string loghub = absl::GetFlag(FLAGS_loghub_dir);
  if (loghub.empty()) loghub = testing::RunfilePath("../loghub");
  auto corpus = crash::Corpus::Load(loghub, kCategories, 2000);
  if (!corpus.ok()) {
    std::fprintf(stderr, "power_loss_test: %s\n", corpus.status().ToString().c_str());
    return 2;
  }
  auto fs = std::make_shared<store::FaultInjectionFs>();
  auto engine = OpenEngine(dir, fs);
  if (!engine.ok()) {
    std::fprintf(stderr, "power_loss_test: %s\n", engine.status().ToString().c_str());
    return 2;
  }
  std::mt19937_64 rng(seed);
  Model model;
  Report report;
  report.allow_loss = absl::GetFlag(FLAGS_allow_loss);
  absl::Mutex report_mu;
  const int cycles = absl::GetFlag(FLAGS_cycles);
  const absl::Time start = absl::Now();
  for (int cycle = 0; cycle < cycles; ++cycle) {
    std::atomic<bool> off{false};
    std::vector<std::thread> threads;
    for (int w = 0; w < absl::GetFlag(FLAGS_writers); ++w) {
      threads.emplace_back(Write, engine->get(), std::cref(*corpus), cycle, w, rng(), &off,
                           &model, &report, &report_mu);
    }
    const int lo = absl::GetFlag(FLAGS_min_off_ms), hi = absl::GetFlag(FLAGS_max_off_ms);
    absl::SleepFor(absl::Milliseconds(lo + static_cast<int>(rng() % (hi - lo + 1))));
    off.store(true);
    fs->PowerOff();
    for (std::thread& t : threads) t.join();
    engine->reset();  // Abandoned with the power off: nothing it does reaches the disk.
    const store::FaultInjectionFs::DropStats dropped = fs->RestorePower();
    report.bytes_dropped += dropped.bytes_dropped;
    report.files_deleted += dropped.files_deleted;
    engine = OpenEngine(dir, fs);
    if (!engine.ok()) {
      report.Violation(&report.reopen_failures, engine.status().ToString());
      break;
    }
    const uint64_t before = report.violations(), lost_before = report.lost;
    Check(**engine, model, &report);
    std::printf("cycle %d: acked %llu, lost %llu, dropped %llu bytes / %llu files, "
                "violations %llu\n",
                cycle, static_cast<unsigned long long>(model.acked().size()),
                static_cast<unsigned long long>(report.lost - lost_before),
                static_cast<unsigned long long>(dropped.bytes_dropped),
                static_cast<unsigned long long>(dropped.files_deleted),
                static_cast<unsigned long long>(report.violations() - before));
    (*engine)->WaitForAutoTrainingForTest(absl::Seconds(30));
  }
  std::printf(
      "power_loss_test: %s seed=%llu cycles=%d sync_writes=%d appends=%llu "
      "acknowledged_records=%llu checked=%llu scanned=%llu bytes_dropped=%llu "
      "files_deleted=%llu lost=%llu altered=%llu unknown=%llu duplicates=%llu "
      "reissued=%llu decode_errors=%llu reopen_failures=%llu failed_before_power_off=%llu seconds=%.1f\n",
      report.violations() == 0 ? "PASS" : "FAIL", static_cast<unsigned long long>(seed),
      cycles, absl::GetFlag(FLAGS_sync_writes) ? 1 : 0,
      static_cast<unsigned long long>(report.appends),
      static_cast<unsigned long long>(model.acked().size()),
      static_cast<unsigned long long>(report.checked),
      static_cast<unsigned long long>(report.scanned),
      static_cast<unsigned long long>(report.bytes_dropped),
      static_cast<unsigned long long>(report.files_deleted),
      static_cast<unsigned long long>(report.lost),
      static_cast<unsigned long long>(report.altered),
      static_cast<unsigned long long>(report.unknown),
      static_cast<unsigned long long>(report.duplicates),
      static_cast<unsigned long long>(report.reissued),
      static_cast<unsigned long long>(report.decode_errors),
      static_cast<unsigned long long>(report.reopen_failures),
      static_cast<unsigned long long>(report.failed_before_power_off),
      absl::ToDoubleSeconds(absl::Now() - start));
  if (!report.first_violation.empty()) {
    std::printf("first violation: %s\n", report.first_violation.c_str());
  }
  return report.violations() == 0 ? 0 : 1;
}

}  // namespace
}  // namespace dictlog::powerloss

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return dictlog::powerloss::Run();
}
