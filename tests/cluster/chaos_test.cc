// The failover chaos test of issue 23 (docs/cluster.md "Failover"): 3 Kafka brokers and
// 3 real dictlogd nodes (--cluster_replicas=2, 4 partitions, announcements every 500 ms)
// started by deploy/local-cluster/cluster.sh; loghub appended through dictlogd-1 with
// `dictlog-bench load`; then `dictlog-bench read` (a separate process: reads routed by
// the shard map, 20% single-record appends, bounded by --max_ops and --duration) runs
// against dictlogd-1 while the schedule, seeded (DICTLOG_CHAOS_SEED, printed), does:
// SIGKILL one of dictlogd-2/3 at a random moment and start it again 10 s later; SIGSTOP
// the other, SIGCONT it later; add dictlogd-4 (started with a 4-node --cluster_nodes: it
// writes epoch + 1, the others follow); remove it (a 3-node node restarted writes the
// 3-node list again, epoch + 1; then dictlogd-4 is stopped). After each event it waits
// for dictlogd-1's map to settle (chaos_figures.h) and records how long that took.
// Checked: every acknowledged record (loghub and the appends) reads back byte-identical;
// no NOT_FOUND during the run; errors only UNAVAILABLE and only in the window around an
// event; the map is not settled for more than 10 s after any event, and each settle
// (event -> settled map) <= 10 s except the add's: dictlogd-4 builds its partitions from
// offset 0 before it writes the new assignment (ADR 0031), which takes as long as the
// log is, while every partition keeps its 2 serving replicas (checked). The figures go to stdout and, as chaos.csv and
// chaos.json, to the test's undeclared outputs.
//
// DICTLOG_CHAOS_FULL=1: the full schedule (SIGSTOP for 20 s, 20 s of steady load between
// events, a longer and larger load) for benchmarks/RESULTS.md; default: the short one
// `make test` runs (SIGSTOP for 10 s, 4 s between events).
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "client/client.h"
#include "common/pool_partition.h"
#include "gtest/gtest.h"
#include "proto/dictlog.grpc.pb.h"
#include "tests/cluster/chaos_figures.h"
#include "tests/cluster/cluster_test_environment.h"
#include "tests/cluster/local_cluster.h"
#include "tests/e2e/server_process.h"
#include "training/files.h"

namespace dictlog {
namespace {

constexpr int kPartitions = 4;
constexpr char kFlags[] = "--kafka_partitions=4 --cluster_announce_interval_ms=500";
const absl::Duration kSettleLimit = absl::Seconds(10);
constexpr char kAdd[] = "add dictlogd-4";
// An error belongs to an event's window from 1 s before it to 5 s after it settled.
const absl::Duration kBefore = absl::Seconds(1), kAfter = absl::Seconds(5);

struct Schedule {
  absl::Duration first_kill_min, first_kill_max;  // after the load starts
  absl::Duration killed_for = absl::Seconds(10);
  absl::Duration stopped_for;
  absl::Duration gap;  // steady load between events
  int concurrency;
  int64_t max_ops;
};

Schedule ScheduleOf(bool full) {
  if (full) {
    return {absl::Seconds(5), absl::Seconds(25), absl::Seconds(10), absl::Seconds(20),
            absl::Seconds(20), 8, 5'000'000};
  }
  return {absl::Seconds(2), absl::Seconds(6), absl::Seconds(10), absl::Seconds(10),
          absl::Seconds(4), 4, 1'000'000};
}

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

std::string OutputDir() {
  std::string dir = Env("TEST_UNDECLARED_OUTPUTS_DIR");
  if (dir.empty()) dir = Env("TEST_TMPDIR");
  return dir.empty() ? "/tmp" : dir;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

// A child process (dictlog-bench), its output in a file; stopped by its pid.
class Child {
 public:
  Child(const std::vector<std::string>& args, const std::string& output) {
    std::fflush(stdout);  // else the child's freopen writes our buffered lines again
    pid_ = fork();
    if (pid_ != 0) return;
    FILE* out = std::freopen(output.c_str(), "w", stdout);
    if (out == nullptr || dup2(fileno(stdout), STDERR_FILENO) < 0) _exit(127);
    std::vector<char*> argv;
    for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  ~Child() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      Wait();
    }
  }
  // The exit status once it exited (-1 if it did not exit normally).
  int Wait() {
    int status = 0;
    if (pid_ <= 0 || waitpid(pid_, &status, 0) != pid_) return -1;
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  // SIGTERM (dictlog-bench then writes its report), then waits.
  int Stop() {
    if (pid_ > 0) kill(pid_, SIGTERM);
    return Wait();
  }

 private:
  pid_t pid_ = -1;
};

testing::ClusterTestEnvironment* const env = testing::ClusterTestEnvironment::Add(
    {.name = "chaos", .nodes = 3, .replicas = 2, .dictlogd_flags = kFlags});
testing::LocalCluster* const& cluster = env->cluster();

// The fewest replicas serving one partition of `map`.
int FewestServing(const v1::ShardMap& map) {
  int fewest = std::numeric_limits<int>::max();
  for (const v1::PartitionReplicas& p : map.assignments()) {
    int serving = 0;
    for (const v1::ReplicaState& replica : p.replicas()) serving += replica.serving();
    fewest = std::min(fewest, serving);
  }
  return fewest;
}

// Polls dictlogd-1's map until it settled for `running` (at most 60 s); when it did, or
// InfinitePast. `epoch` gets the last map's epoch, `fewest` the fewest replicas any
// partition had serving in any map polled, `unsettled_from` when a map polled was first
// not settled for `running` at whatever epoch. Each change of the map is printed with
// the seconds since `since` (where the time of an event goes).
absl::Time WaitSettled(const std::set<std::string>& running, uint64_t min_epoch,
                       uint64_t* epoch = nullptr, absl::Time since = absl::Now(),
                       int* fewest = nullptr, absl::Time* unsettled_from = nullptr) {
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  std::string last;
  while (absl::Now() < deadline) {
    absl::StatusOr<v1::ShardMap> map = env->MapFrom("dictlogd-1", absl::Seconds(2));
    if (map.ok() && epoch != nullptr) *epoch = map->epoch();
    if (map.ok() && fewest != nullptr) *fewest = std::min(*fewest, FewestServing(*map));
    if (map.ok() && unsettled_from != nullptr && *unsettled_from == absl::InfinitePast() &&
        !chaos::Settled(*map, running)) {
      *unsettled_from = absl::Now();
    }
    if (map.ok() && chaos::Describe(*map) != last) {
      last = chaos::Describe(*map);
      std::printf("chaos:   +%5.1f s %s\n", absl::ToDoubleSeconds(absl::Now() - since),
                  last.c_str());
    }
    if (map.ok() && chaos::Settled(*map, running, min_epoch)) return absl::Now();
    absl::SleepFor(absl::Milliseconds(100));  // polls a condition
  }
  return absl::InfinitePast();
}

// The schedule's own waits (how long a node stays killed or stopped; steady load).
void SleepUntil(absl::Time when) { absl::SleepFor(when - absl::Now()); }

// dictlogd-4 on a free loopback port with the cluster's brokers, started with the
// 4-node list (the later flag wins).
absl::Status StartFourthNode() {
  return testing::StartAddedNode(
             *cluster, "dictlogd-4",
             absl::StrCat(kFlags, " --cluster_nodes=dictlogd-1,dictlogd-2,dictlogd-3,dictlogd-4"))
      .status();
}

// The loghub lines in the order `dictlog-bench load` appends them (files by name).
std::vector<std::string> LoghubLines(const std::string& dir) {
  std::vector<std::string> all;
  absl::StatusOr<std::vector<std::string>> files = trainer::ListLogFiles(dir);
  EXPECT_TRUE(files.ok()) << files.status();
  for (const std::string& file : files.ok() ? *files : std::vector<std::string>{}) {
    absl::StatusOr<std::vector<std::string>> lines = trainer::ReadLines(file);
    EXPECT_TRUE(lines.ok()) << lines.status();
    if (lines.ok()) all.insert(all.end(), lines->begin(), lines->end());
  }
  return all;
}

// An expected record: its id, and its payload's FNV-1a 64 and size.
struct Expected {
  std::string id;
  uint64_t hash = 0;
  size_t size = 0;
};

std::vector<Expected> ExpectedRecords(const std::string& ids_file,
                                      const std::vector<std::string>& lines,
                                      const std::string& acked_file) {
  std::vector<Expected> expected;
  std::vector<std::string> ids = absl::StrSplit(ReadFile(ids_file), '\n', absl::SkipEmpty());
  EXPECT_EQ(ids.size(), lines.size());
  for (size_t i = 0; i < ids.size() && i < lines.size(); ++i) {
    expected.push_back({ids[i], PoolHash(lines[i]), lines[i].size()});
  }
  for (absl::string_view line : absl::StrSplit(ReadFile(acked_file), '\n', absl::SkipEmpty())) {
    std::vector<std::string> f = absl::StrSplit(line, '\t');
    Expected e;
    if (f.size() != 3 || !absl::SimpleHexAtoi(f[1], &e.hash) || !absl::SimpleAtoi(f[2], &e.size)) {
      continue;  // a line cut short by the end of the run
    }
    e.id = f[0];
    expected.push_back(std::move(e));
  }
  return expected;
}

// Reads every expected record through dictlogd-1 (MultiGet of 500, routed; UNAVAILABLE
// asked again for up to 60 s) and counts the lost and the altered.
chaos::Readback ReadBack(const std::vector<Expected>& expected) {
  const std::unique_ptr<client::Client> reader = env->ClientOf("dictlogd-1");
  chaos::Readback readback;
  readback.acknowledged = static_cast<int64_t>(expected.size());
  for (size_t start = 0; start < expected.size(); start += 500) {
    std::vector<std::string> ids;
    for (size_t i = start; i < std::min(expected.size(), start + 500); ++i) {
      ids.push_back(expected[i].id);
    }
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    auto results = reader->MultiGet(ids);
    auto again = [&] {
      if (!results.ok()) return true;
      for (const auto& r : *results) {
        if (absl::IsUnavailable(r.status())) return true;
      }
      return false;
    };
    while (again() && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(100));  // polls a condition
      results = reader->MultiGet(ids);
    }
    for (size_t j = 0; j < ids.size(); ++j) {
      const Expected& e = expected[start + j];
      if (!results.ok() || !(*results)[j].ok()) {
        ++readback.lost;
        ADD_FAILURE() << e.id << ": " << (results.ok() ? (*results)[j].status() : results.status());
        continue;
      }
      ++readback.checked;
      const std::string& payload = (*results)[j]->payload();
      if (payload.size() != e.size || PoolHash(payload) != e.hash) {
        ++readback.altered;
        ADD_FAILURE() << e.id << " altered";
      }
    }
  }
  return readback;
}

TEST(ChaosTest, KillStopAddRemoveUnderLoad) {
  ASSERT_TRUE(cluster != nullptr);
  const bool full = Env("DICTLOG_CHAOS_FULL") == "1";
  const Schedule schedule = ScheduleOf(full);
  uint64_t seed = absl::ToUnixMicros(absl::Now());
  if (!Env("DICTLOG_CHAOS_SEED").empty()) {
    ASSERT_TRUE(absl::SimpleAtoi(Env("DICTLOG_CHAOS_SEED"), &seed));
  }
  std::printf("chaos: %s schedule, seed %llu (DICTLOG_CHAOS_SEED=%llu repeats it)\n",
              full ? "full" : "short", static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  const std::string killed = rng() % 2 == 0 ? "dictlogd-2" : "dictlogd-3";
  const std::string stopped = killed == "dictlogd-2" ? "dictlogd-3" : "dictlogd-2";
  const absl::Duration first_kill =
      schedule.first_kill_min +
      absl::Milliseconds(rng() % absl::ToInt64Milliseconds(schedule.first_kill_max -
                                                           schedule.first_kill_min));
  std::set<std::string> running = {"dictlogd-1", "dictlogd-2", "dictlogd-3"};
  ASSERT_NE(WaitSettled(running, 1), absl::InfinitePast());

  const std::string out = OutputDir(), bench = testing::RunfilePath("benchmarks/dictlog-bench");
  const std::string seed_node = cluster->AddressOf("dictlogd-1");
  const std::string loghub = testing::RunfilePath("../loghub");
  {
    Child load({bench, "load", "--server=" + seed_node, "--dir=" + loghub,
                "--ids_out=" + out + "/loghub.ids"},
               out + "/bench_load.txt");
    ASSERT_EQ(load.Wait(), 0) << ReadFile(out + "/bench_load.txt");
  }
  Child read({bench, "read", "--server=" + seed_node, "--ids=" + out + "/loghub.ids",
              "--mix=read:80,append:20", "--append_category=chaos",
              absl::StrCat("--concurrency=", schedule.concurrency), "--connections=2",
              absl::StrCat("--max_ops=", schedule.max_ops), "--duration=900s", "--timeout=5s",
              absl::StrCat("--seed=", seed), "--acked_out=" + out + "/acked.tsv",
              "--errors_out=" + out + "/errors.csv", "--json=" + out + "/bench.json"},
             out + "/bench_read.txt");
  const absl::Time start = absl::Now();
  std::vector<chaos::Event> events;
  auto event = [&](const std::string& name, absl::Time at, uint64_t min_epoch = 1,
                   int* fewest = nullptr) {
    absl::Time unsettled_from = absl::InfinitePast();
    const absl::Time settled = WaitSettled(running, min_epoch, nullptr, at, fewest,
                                           &unsettled_from);
    events.push_back({name, at, settled, unsettled_from});
    std::printf("chaos: %-28s at %6.1f s, settled after %.1f s\n", name.c_str(),
                absl::ToDoubleSeconds(at - start), events.back().settle_seconds());
    std::fflush(stdout);
    return events.back().at;
  };

  SleepUntil(start + first_kill);
  absl::Time at = absl::Now();
  ASSERT_TRUE(cluster->Kill(killed, "KILL").ok());
  running.erase(killed);
  event("SIGKILL " + killed, at);
  SleepUntil(at + schedule.killed_for);
  at = absl::Now();
  ASSERT_TRUE(cluster->Start(killed).ok());
  running.insert(killed);
  event("restart " + killed, at);

  SleepUntil(absl::Now() + schedule.gap);
  at = absl::Now();
  ASSERT_TRUE(cluster->Kill(stopped, "STOP").ok());
  running.erase(stopped);
  event("SIGSTOP " + stopped, at);
  SleepUntil(at + schedule.stopped_for);
  at = absl::Now();
  ASSERT_TRUE(cluster->Kill(stopped, "CONT").ok());
  running.insert(stopped);
  event("SIGCONT " + stopped, at);

  SleepUntil(absl::Now() + schedule.gap);
  uint64_t epoch = 0;
  ASSERT_NE(WaitSettled(running, 1, &epoch), absl::InfinitePast());
  at = absl::Now();
  absl::Status added = StartFourthNode();
  ASSERT_TRUE(added.ok()) << added;
  std::printf("chaos:   +%5.1f s dictlogd-4 serves (cluster.sh start returned)\n",
              absl::ToDoubleSeconds(absl::Now() - at));
  running.insert("dictlogd-4");
  // ADR 0031: dictlogd-4 builds its partitions before it writes the new assignment, so
  // every partition keeps 2 serving replicas throughout (before, 1 while it built).
  int fewest_while_adding = std::numeric_limits<int>::max();
  event(kAdd, at, epoch + 1, &fewest_while_adding);
  EXPECT_EQ(fewest_while_adding, 2) << "a partition lost a serving replica; seed " << seed;

  SleepUntil(absl::Now() + schedule.gap);
  at = absl::Now();  // ADR 0022: a node started with the 3-node list writes it again.
  ASSERT_TRUE(cluster->Kill(killed, "TERM").ok());
  ASSERT_TRUE(cluster->Start(killed).ok());
  running.erase("dictlogd-4");  // in no assignment now: not in the map
  event("remove dictlogd-4 (" + killed + " restarted)", at, epoch + 2);
  at = absl::Now();
  ASSERT_TRUE(cluster->Kill("dictlogd-4", "TERM").ok());
  event("SIGTERM dictlogd-4", at, epoch + 2);
  SleepUntil(absl::Now() + schedule.gap);
  ASSERT_EQ(read.Stop(), 0) << ReadFile(out + "/bench_read.txt");

  absl::StatusOr<std::vector<chaos::FailedCall>> calls =
      chaos::ParseFailedCalls(ReadFile(out + "/errors.csv"));
  ASSERT_TRUE(calls.ok()) << calls.status();
  const chaos::ErrorWindows windows = chaos::Attribute(events, *calls, kBefore, kAfter);
  const chaos::Readback readback = ReadBack(
      ExpectedRecords(out + "/loghub.ids", LoghubLines(loghub), out + "/acked.tsv"));
  std::error_code ec;  // The nodes' consoles go with the figures; none is no failure.
  const std::string table = chaos::FormatTable(events, windows, readback, start);
  std::printf("%s", table.c_str());
  for (const chaos::FailedCall& call : *calls) {  // Which call failed other than retry-me.
    if (call.code == "UNAVAILABLE") continue;
    std::printf("chaos: failed call at %6.1f s: %s %s %s\n",
                absl::ToDoubleSeconds(call.when - start), call.op.c_str(), call.code.c_str(),
                call.id.c_str());
  }
  for (const char* node : {"dictlogd-1", "dictlogd-2", "dictlogd-3", "dictlogd-4"}) {
    std::filesystem::copy_file(absl::StrCat(cluster->dir(), "/", node, "/console.log"),
                               absl::StrCat(out, "/", node, ".console.log"),
                               std::filesystem::copy_options::overwrite_existing, ec);
  }
  std::ofstream(out + "/chaos.csv") << chaos::FormatCsv(events, windows, start);
  std::ofstream(out + "/chaos.json") << chaos::FormatJson(events, windows, readback, start, seed)
                                     << "\n";

  EXPECT_EQ(readback.lost, 0);
  EXPECT_EQ(readback.altered, 0);
  EXPECT_GT(readback.acknowledged, 20000);  // loghub plus the appends of the run
  EXPECT_EQ(windows.not_found, 0);
  EXPECT_TRUE(windows.steady.empty()) << "errors away from every event; seed " << seed;
  for (size_t i = 0; i < events.size(); ++i) {
    SCOPED_TRACE(events[i].name);
    EXPECT_GE(events[i].settle_seconds(), 0) << "never settled";
    EXPECT_LE(events[i].unsettled_seconds(), absl::ToDoubleSeconds(kSettleLimit));
    // The node added builds its partitions from offset 0 before the map names it (ADR
    // 0031): from its start to its serving in the map grows with the log, no constant
    // bounds it; the map stays settled meanwhile (unsettled_s, checked above).
    if (events[i].name == kAdd) continue;
    EXPECT_LE(events[i].settle_seconds(), absl::ToDoubleSeconds(kSettleLimit));
    for (const auto& [code, n] : windows.by_event[i]) {
      EXPECT_EQ(code, "UNAVAILABLE") << n << " calls; seed " << seed;
    }
  }
}

}  // namespace
}  // namespace dictlog
