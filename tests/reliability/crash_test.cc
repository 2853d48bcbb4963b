// crash_test: kills the real dictlogd with SIGKILL at random moments while writers
// append, restarts it on the same data directory and checks that nothing acknowledged
// was lost or altered, that no batch was half stored, and that every stored record
// still decodes; some kills land just after a dictionary was trained and activated and
// a re-compression started (docs/reliability.md).
//
// The seed (printed; --seed) fixes the workload and the kill schedule; thread timing
// still varies between runs. Exit status 0 if no violation was found, 1 otherwise, 2 if
// the test could not run.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "client/client.h"
#include "common/help_flags.h"
#include "common/status_macros.h"
#include "tests/e2e/server_process.h"
#include "tests/reliability/crash_checker.h"
#include "tests/reliability/crash_model.h"
#include "tests/reliability/crash_workload.h"

ABSL_FLAG(int, cycles, 10, "kill/restart cycles (the full setting is 50)");
ABSL_FLAG(uint64_t, seed, 0, "seed of the workload and kill schedule; 0 picks one (printed)");
ABSL_FLAG(std::string, work_dir, "",
          "directory for the server's data, wiped first; default $TEST_TMPDIR/crash_test "
          "(or /tmp/dictlog_crash_test outside bazel test)");
ABSL_FLAG(int, writers, 4, "concurrent writer threads, each with its own client");
ABSL_FLAG(int, min_kill_ms, 0, "a cycle's load runs at least this long before the kill");
ABSL_FLAG(int, max_kill_ms, 700, "... and at most this long");
ABSL_FLAG(int, lifecycle_every, 2,
          "every Nth cycle trains and activates a dictionary and starts re-compression "
          "of one pool just before the kill (0: never)");
ABSL_FLAG(int, lifecycle_kill_ms, 400,
          "in those cycles the kill lands 0..this long after the lifecycle step starts "
          "(half of them: during training) or after it was answered (the others: during "
          "re-compression)");
ABSL_FLAG(bool, sync_writes, false, "run dictlogd with --sync_writes");
ABSL_FLAG(std::string, dictlogd, "", "path of dictlogd; default: from the runfiles");
ABSL_FLAG(std::string, loghub_dir, "", "loghub samples; default: from the runfiles");
ABSL_FLAG(int, max_seconds, 3600,
          "no cycle starts after this many seconds; the run then fails (2)");

namespace dictlog::crash {
namespace {

// Loghub files written, one category each, and the pools they land in: four pools of
// their own, and Linux + Android routed together into "mixed" (category indexes). Linux
// lines go under a new category every cycle ("Linux-c<cycle>"), so the kill also lands
// near the first append of a category.
const std::vector<std::string> kCategories = {"HDFS",      "Apache", "OpenSSH",
                                              "Zookeeper", "Linux",  "Android"};
const std::vector<std::string> kPools = {"HDFS", "Apache", "OpenSSH", "Zookeeper", "mixed"};
constexpr size_t kLinesPerCategory = 2000;

struct Paths {
  std::string dictlogd;
  std::string loghub;
  std::string data_dir;
};

// What happens in one cycle, drawn from the seeded RNG before it starts.
struct CyclePlan {
  absl::Duration kill_after;
  bool lifecycle = false;
  std::string lifecycle_pool;
  // Wait for the step's answers before counting lifecycle_kill_after.
  bool lifecycle_wait = false;
  absl::Duration lifecycle_kill_after;
  std::vector<uint64_t> writer_seeds;
};

// Outcome of one cycle's load, up to the kill.
struct CycleLoad {
  uint64_t calls = 0;
  uint64_t acked_records = 0;
  uint64_t append_errors = 0;
  std::string first_error;
  LifecycleResult lifecycle;
};

struct Totals {
  int cycles = 0;
  uint64_t calls = 0;
  uint64_t append_errors = 0;
  uint64_t lifecycle_steps = 0;
  uint64_t dictionaries_deleted = 0;
  uint64_t dictionaries_trained = 0;
  uint64_t recompressions_started = 0;
  uint64_t shutdown_failures = 0;
  // dictlogd did not come back after a kill (the run stops there).
  uint64_t restart_failures = 0;
  CheckReport check;

  uint64_t violations() const {
    return check.violations() + append_errors + shutdown_failures + restart_failures;
  }
};

// Bazel sets TEST_SRCDIR for tests; a binary run by hand finds its runfiles beside it.
void UseOwnRunfiles(const char* argv0) {
  if (std::getenv("TEST_SRCDIR") != nullptr) return;
  const std::string runfiles = absl::StrCat(argv0, ".runfiles");
  if (std::filesystem::is_directory(runfiles)) setenv("TEST_SRCDIR", runfiles.c_str(), 1);
}

Paths ResolvePaths() {
  Paths paths;
  paths.dictlogd = absl::GetFlag(FLAGS_dictlogd);
  if (paths.dictlogd.empty()) paths.dictlogd = testing::RunfilePath("server/daemon/dictlogd");
  paths.loghub = absl::GetFlag(FLAGS_loghub_dir);
  if (paths.loghub.empty()) paths.loghub = testing::RunfilePath("../loghub");
  std::string work = absl::GetFlag(FLAGS_work_dir);
  if (work.empty()) {
    const char* tmp = std::getenv("TEST_TMPDIR");
    work = tmp != nullptr ? absl::StrCat(tmp, "/crash_test") : "/tmp/dictlog_crash_test";
  }
  std::filesystem::remove_all(work);
  std::filesystem::create_directories(work);
  paths.data_dir = work + "/data";
  return paths;
}

// Small dictionaries trained early: a pool trains its first one at 20 KiB of data, so
// training and activation happen within the first cycles. Every candidate is activated
// (gain threshold -1) so each lifecycle step switches the pool to a new version.
std::vector<std::string> ServerFlags() {
  std::vector<std::string> flags = {
      "--auto_train_min_multiple=5",       "--sample_budget_multiple=25",
      "--activation_min_gain=-1",          "--recompress_records_per_second=20000",
      "--route=Linux*=mixed,Android=mixed",
  };
  if (absl::GetFlag(FLAGS_sync_writes)) flags.push_back("--sync_writes");
  return flags;
}

client::ClientOptions ClientFor(const std::string& address) {
  client::ClientOptions options;
  options.server = address;
  options.timeout = absl::Seconds(20);
  return options;
}

// Pools with 4 KiB dictionaries in both dictionary forms and several levels; HDFS and
// mixed in block mode (1 and 4 KiB blocks), so kills hit open tails and seals too.
absl::Status CreatePools(const client::Client& client) {
  for (const std::string& name : kPools) {
    v1::PoolOptions options;
    options.set_dictionary_bytes(4096);
    if (name == "Apache") options.set_dictionary_mode(v1::DICTIONARY_MODE_COMPACT);
    if (name == "OpenSSH") options.set_compression_level(9);
    if (name == "Zookeeper") options.set_compression_level(-5);
    if (name == "HDFS" || name == "mixed") {
      options.set_storage_mode(v1::STORAGE_MODE_BLOCK);
      options.set_block_bytes(name == "HDFS" ? 1024 : 4096);
    }
    RETURN_IF_ERROR(client.CreatePool(name, options).status());
  }
  return absl::OkStatus();
}

CyclePlan PlanCycle(int cycle, std::mt19937_64& rng) {
  CyclePlan plan;
  plan.kill_after = absl::Milliseconds(std::uniform_int_distribution<int>(
      absl::GetFlag(FLAGS_min_kill_ms), absl::GetFlag(FLAGS_max_kill_ms))(rng));
  const int every = absl::GetFlag(FLAGS_lifecycle_every);
  plan.lifecycle = every > 0 && cycle % every == every - 1;
  plan.lifecycle_pool = kPools[std::uniform_int_distribution<size_t>(0, kPools.size() - 1)(rng)];
  plan.lifecycle_wait = std::bernoulli_distribution(0.5)(rng);
  plan.lifecycle_kill_after = absl::Milliseconds(
      std::uniform_int_distribution<int>(0, absl::GetFlag(FLAGS_lifecycle_kill_ms))(rng));
  for (int w = 0; w < absl::GetFlag(FLAGS_writers); ++w) plan.writer_seeds.push_back(rng());
  return plan;
}

// The category each corpus file is appended under in `cycle`.
std::vector<std::string> CategoriesOfCycle(int cycle) {
  std::vector<std::string> categories = kCategories;
  for (std::string& category : categories) {
    if (category == "Linux") category = absl::StrCat("Linux-c", cycle);
  }
  return categories;
}

// Runs the writers (and the lifecycle step) against the server at `address` and kills
// the server as planned. Returns once every thread has finished.
CycleLoad RunLoad(testing::ServerProcess& server, const std::string& address,
                  const Corpus& corpus, CrashModel& model, int cycle, const CyclePlan& plan) {
  std::atomic<bool> killed{false};
  std::vector<std::unique_ptr<Writer>> writers;
  std::vector<WriterResult> results(plan.writer_seeds.size());
  std::vector<std::thread> threads;
  for (size_t w = 0; w < plan.writer_seeds.size(); ++w) {
    WriterOptions options;
    options.cycle = static_cast<uint32_t>(cycle);
    options.writer = static_cast<uint32_t>(w);
    options.seed = plan.writer_seeds[w];
    options.categories = CategoriesOfCycle(cycle);
    writers.push_back(
        std::make_unique<Writer>(ClientFor(address), &corpus, &model, &killed, options));
  }
  for (size_t w = 0; w < writers.size(); ++w) {
    threads.emplace_back([&results, writer = writers[w].get(), w] {
      results[w] = writer->Run();
    });
  }
  CycleLoad load;
  absl::Notification answered;
  absl::SleepFor(plan.kill_after);
  if (plan.lifecycle) {
    threads.emplace_back([&] {
      load.lifecycle = RunLifecycle(ClientFor(address), plan.lifecycle_pool, &killed);
      answered.Notify();
    });
    if (plan.lifecycle_wait) answered.WaitForNotificationWithTimeout(absl::Seconds(60));
    absl::SleepFor(plan.lifecycle_kill_after);
  }
  killed.store(true);
  server.Kill();
  for (auto& writer : writers) writer->Stop();  // Bounds a writer whose calls still pass.
  for (std::thread& thread : threads) thread.join();
  for (const WriterResult& r : results) {
    load.calls += r.calls;
    load.acked_records += r.acked_records;
    load.append_errors += r.unexpected_errors;
    if (load.first_error.empty()) load.first_error = r.first_error;
  }
  return load;
}

std::string DescribeLifecycle(const CyclePlan& plan, const LifecycleResult& result) {
  if (!plan.lifecycle) return "";
  std::string out =
      absl::StrCat(" [lifecycle ", plan.lifecycle_pool, ", kill ",
                   absl::ToInt64Milliseconds(plan.lifecycle_kill_after), " ms after ",
                   plan.lifecycle_wait ? "the answers" : "the start", ": ");
  if (!result.gc_answered) return out + "killed during gc]";
  absl::StrAppend(&out, "gc deleted ", result.gc_deleted, ", ");
  if (result.too_little_data) return out + "too little data to train]";
  if (result.dictionary_id == 0) return out + "killed while training]";
  absl::StrAppend(&out, "trained ", result.dictionary_id,
                  result.activated ? " (activated)" : " (not activated)");
  return out + (result.recompress_started ? ", re-compression started]" : ", killed]");
}

// Adds the load to the totals; returns the Admin effects the next check must find.
AdminAcks RecordLoad(const CyclePlan& plan, const CycleLoad& load, Totals* totals) {
  totals->calls += load.calls;
  totals->append_errors += load.append_errors;
  AdminAcks admin;
  if (!plan.lifecycle) return admin;
  const LifecycleResult& l = load.lifecycle;
  ++totals->lifecycle_steps;
  totals->dictionaries_deleted += l.gc_deleted;
  if (!l.unexpected_error.empty()) {
    ++totals->check.admin_violations;
    totals->check.examples.push_back("lifecycle step failed: " + l.unexpected_error);
    std::printf("    lifecycle step failed (pool %s): %s\n", plan.lifecycle_pool.c_str(),
                l.unexpected_error.c_str());
  }
  if (l.dictionary_id != 0) {
    ++totals->dictionaries_trained;
    admin.dictionaries.emplace_back(l.pool, l.dictionary_id);
  }
  if (l.recompress_started) {
    ++totals->recompressions_started;
    admin.recompressions.push_back(l.pool);
  }
  return admin;
}

void PrintCheck(const CheckReport& r, absl::Duration took) {
  std::printf(
      "  after restart: in flight at the kill %llu batches (%llu found whole, %llu not "
      "stored); %llu acknowledged records read back (%.2f s), %llu scanned (%.2f s); "
      "violations %llu (%.2f s with the restart)\n",
      static_cast<unsigned long long>(r.recovered_batches + r.dropped_batches + r.partial_batches),
      static_cast<unsigned long long>(r.recovered_batches),
      static_cast<unsigned long long>(r.dropped_batches),
      static_cast<unsigned long long>(r.acked_checked), r.read_back_seconds,
      static_cast<unsigned long long>(r.scanned), r.scan_seconds,
      static_cast<unsigned long long>(r.violations()), absl::ToDoubleSeconds(took));
  for (const std::string& example : r.examples) std::printf("    %s\n", example.c_str());
}

// Restarts the server on the same data and checks it; returns its address.
absl::StatusOr<std::string> RestartAndCheck(testing::ServerProcess& server,
                                            CrashModel& model, const AdminAcks& admin,
                                            Totals* totals) {
  const absl::Time start = absl::Now();
  ASSIGN_OR_RETURN(std::string address, server.Start());
  const client::Client client(ClientFor(address));
  Checker checker(&client, &model);
  const CheckReport report = checker.Run(admin);
  PrintCheck(report, absl::Now() - start);
  totals->check.Add(report);
  return address;
}

void PrintSummary(const Totals& t, uint64_t seed, const CrashModel& model,
                  absl::Duration took) {
  const CheckReport& c = t.check;
  std::printf(
      "crash_test: %s seed=%llu cycles=%d acknowledged_records=%llu "
      "acknowledged_checks=%llu lost=%llu altered=%llu partial_batches=%llu "
      "decode_errors=%llu unknown=%llu duplicates=%llu counter_mismatches=%llu "
      "admin_violations=%llu append_errors=%llu restart_failures=%llu "
      "unclean_shutdowns=%llu calls=%llu "
      "in_flight_found_whole=%llu in_flight_not_stored=%llu lifecycle_steps=%llu "
      "dictionaries_trained=%llu recompressions_started=%llu dictionaries_deleted=%llu "
      "seconds=%.1f\n",
      t.violations() == 0 ? "PASS" : "FAIL", static_cast<unsigned long long>(seed),
      t.cycles, static_cast<unsigned long long>(model.acked_records()),
      static_cast<unsigned long long>(c.acked_checked),
      static_cast<unsigned long long>(c.lost), static_cast<unsigned long long>(c.altered),
      static_cast<unsigned long long>(c.partial_batches),
      static_cast<unsigned long long>(c.decode_errors),
      static_cast<unsigned long long>(c.unknown),
      static_cast<unsigned long long>(c.duplicates),
      static_cast<unsigned long long>(c.counter_mismatches),
      static_cast<unsigned long long>(c.admin_violations),
      static_cast<unsigned long long>(t.append_errors),
      static_cast<unsigned long long>(t.restart_failures),
      static_cast<unsigned long long>(t.shutdown_failures),
      static_cast<unsigned long long>(t.calls),
      static_cast<unsigned long long>(c.recovered_batches),
      static_cast<unsigned long long>(c.dropped_batches),
      static_cast<unsigned long long>(t.lifecycle_steps),
      static_cast<unsigned long long>(t.dictionaries_trained),
      static_cast<unsigned long long>(t.recompressions_started),
      static_cast<unsigned long long>(t.dictionaries_deleted), absl::ToDoubleSeconds(took));
}

// The whole run; returns the totals, or an error if the test itself could not run.
absl::StatusOr<Totals> RunCycles(const Paths& paths, const Corpus& corpus, uint64_t seed) {
  std::mt19937_64 rng(seed);
  CrashModel model;
  Totals totals;
  testing::ServerProcess server(paths.dictlogd, paths.data_dir, ServerFlags());
  ASSIGN_OR_RETURN(std::string address, server.Start());
  RETURN_IF_ERROR(CreatePools(client::Client(ClientFor(address))));
  const absl::Time start = absl::Now();
  const absl::Duration limit = absl::Seconds(absl::GetFlag(FLAGS_max_seconds));
  for (int cycle = 0; cycle < absl::GetFlag(FLAGS_cycles); ++cycle) {
    if (absl::Now() - start > limit) return absl::DeadlineExceededError("--max_seconds passed");
    const CyclePlan plan = PlanCycle(cycle, rng);
    const CycleLoad load = RunLoad(server, address, corpus, model, cycle, plan);
    std::printf("cycle %d/%d: killed after %lld ms%s; %llu calls, +%llu records "
                "acknowledged%s%s\n",
                cycle + 1, absl::GetFlag(FLAGS_cycles),
                static_cast<long long>(absl::ToInt64Milliseconds(plan.kill_after)),
                DescribeLifecycle(plan, load.lifecycle).c_str(),
                static_cast<unsigned long long>(load.calls),
                static_cast<unsigned long long>(load.acked_records),
                load.first_error.empty() ? "" : "; unexpected append error: ",
                load.first_error.c_str());
    const AdminAcks admin = RecordLoad(plan, load, &totals);
    ++totals.cycles;
    absl::StatusOr<std::string> restarted = RestartAndCheck(server, model, admin, &totals);
    if (!restarted.ok()) {
      std::printf("  dictlogd did not restart after the kill: %s\n",
                  restarted.status().ToString().c_str());
      ++totals.restart_failures;
      break;
    }
    address = *restarted;
    std::fflush(stdout);
  }
  if (totals.restart_failures == 0) {
    absl::StatusOr<int> exit_code = server.Stop();
    if (!exit_code.ok() || *exit_code != 0) ++totals.shutdown_failures;
  }
  PrintSummary(totals, seed, model, absl::Now() - start);
  return totals;
}

}  // namespace
}  // namespace dictlog::crash

int main(int argc, char** argv) {
  dictlog::SetHelp("tests/reliability/crash_test.cc",
                   "crash test: SIGKILLs dictlogd while it appends, restarts it and checks "
                   "every acknowledged record.\n\nUsage: crash_test [--cycles=50] [--seed=N] "
                   "[--work_dir=DIR]");
  absl::ParseCommandLine(argc, argv);
  dictlog::crash::UseOwnRunfiles(argv[0]);
  uint64_t seed = absl::GetFlag(FLAGS_seed);
  if (seed == 0) seed = std::random_device()() | 1;
  std::printf("crash_test: seed=%llu (rerun with --seed=%llu)\n",
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
  std::fflush(stdout);
  const dictlog::crash::Paths paths = dictlog::crash::ResolvePaths();
  absl::StatusOr<dictlog::crash::Corpus> corpus =
      dictlog::crash::Corpus::Load(paths.loghub, dictlog::crash::kCategories,
                                   dictlog::crash::kLinesPerCategory);
  if (!corpus.ok()) {
    std::fprintf(stderr, "crash_test: %s\n", corpus.status().ToString().c_str());
    return 2;
  }
  absl::StatusOr<dictlog::crash::Totals> totals =
      dictlog::crash::RunCycles(paths, *corpus, seed);
  if (!totals.ok()) {
    std::fprintf(stderr, "crash_test: could not run: %s (seed %llu)\n",
                 totals.status().ToString().c_str(), static_cast<unsigned long long>(seed));
    return 2;
  }
  return totals->violations() == 0 ? 0 : 1;
}
