// read_cost_bench: what a random read costs inside dictlogd, without gRPC, on a store the
// compare harness kept (`compare --keep_data`): RocksDB's own point lookup of a record
// (Store::GetRecord, Store::MultiGetRecords) and the whole engine read (LogEngine::Get,
// LogEngine::MultiGet: lookup, decode, append time), with the block cache dictlogd had.
// On a block-mode store only the engine's rows are measured.
// Single-threaded; CPU time per call is the calling thread's (CLOCK_THREAD_CPUTIME_ID),
// so other processes on the machine do not inflate it. Next to the null handler's CPU
// per call (client and server, from a compare run), it gives the best Get ratio any
// handler doing that lookup could reach: null / (null + lookup).
//
//   bazel build -c opt //benchmarks:read_cost_bench
//   bazel-out/k8-opt/bin/benchmarks/read_cost_bench --data_dir=WORK/record_dict/db --ids=WORK/record_dict/ids --block_cache_mb=31
//
// It opens the database itself: the server that wrote it must be stopped. It writes
// nothing but what opening a store writes (its WAL and OPTIONS files); run it on a copy
// if the store must stay as it was.
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>

#include "absl/container/flat_hash_map.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_format.h"
#include "server/engine/log_engine.h"
#include "server/pool/names.h"
#include "server/store/store.h"

ABSL_FLAG(std::string, data_dir, "", "the kept store (dictlogd's --data_dir); required");
ABSL_FLAG(std::string, ids, "", "record ids, one a line (dictlog-bench load's --ids_out)");
ABSL_FLAG(int, block_cache_mb, 31, "block cache, as dictlogd's --block_cache_mb");
ABSL_FLAG(int, ops, 200000, "records read per measurement");
ABSL_FLAG(int, warmup, 200000, "random Gets before each measurement (fills the cache)");
ABSL_FLAG(int, batch, 64, "ids per MultiGet");
ABSL_FLAG(uint64_t, seed, 1, "random seed");

namespace dictlog {
namespace {

void Check(const absl::Status& status, const std::string& what) {
  if (status.ok()) return;
  std::cerr << "read_cost_bench: " << what << ": " << status << "\n";
  std::exit(1);
}

double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

double WallSeconds() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

std::vector<std::string> ReadIds(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> ids;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) ids.push_back(line);
  }
  if (ids.empty()) Check(absl::InvalidArgumentError("no ids"), "reading " + path);
  return ids;
}

// `n` ids picked uniformly from `ids`.
std::vector<std::string> Pick(const std::vector<std::string>& ids, int n, std::mt19937_64& rng) {
  std::uniform_int_distribution<size_t> pick(0, ids.size() - 1);
  std::vector<std::string> out(static_cast<size_t>(n));
  for (std::string& id : out) id = ids[pick(rng)];
  return out;
}

struct Cost {
  double cpu_us = 0;   // Per call.
  double wall_us = 0;  // Per call.
};

// Times `calls` calls of `call(i)`.
template <typename Call>
Cost Time(size_t calls, const Call& call) {
  const double cpu = ThreadCpuSeconds();
  const double wall = WallSeconds();
  for (size_t i = 0; i < calls; ++i) call(i);
  return {(ThreadCpuSeconds() - cpu) * 1e6 / calls, (WallSeconds() - wall) * 1e6 / calls};
}

void Print(const std::string& what, const Cost& cost, int records_per_call) {
  std::printf("| %s | %.2f | %.2f | %.2f |\n", what.c_str(), cost.cpu_us, cost.wall_us,
              cost.cpu_us / records_per_call);
}

// RocksDB's own lookups of the records family, through Store (dictlogd's options).
void MeasureStore(const std::vector<std::string>& all, std::mt19937_64& rng) {
  store::Store::Options options;
  options.path = absl::GetFlag(FLAGS_data_dir);
  options.block_cache_bytes = static_cast<size_t>(absl::GetFlag(FLAGS_block_cache_mb)) << 20;
  auto store = store::Store::Open(options);
  Check(store.status(), "opening the store");
  auto pools = (*store)->LoadPools();
  Check(pools.status(), "loading pools");
  absl::flat_hash_map<std::string, uint32_t> pool_ids;
  for (const store::StoredPool& pool : *pools) pool_ids[pool.record.name()] = pool.record.id();
  auto refs_of = [&](const std::vector<std::string>& ids) {
    std::vector<store::RecordRef> refs;
    for (const std::string& id : ids) {
      auto parsed = pool::ParseRecordId(id);
      Check(parsed.status(), "parsing " + id);
      refs.push_back({pool_ids.at(parsed->pool), parsed->seq});
    }
    return refs;
  };
  const std::vector<store::RecordRef> warm = refs_of(Pick(all, absl::GetFlag(FLAGS_warmup), rng));
  if (!warm.empty() && absl::IsNotFound((*store)->GetRecord(warm[0]).status())) {
    // A block-mode store: sealed records have no value of their own in the records
    // family (ADR 0016), so only the engine's rows mean anything.
    std::printf("| (records family lookups: none, a block-mode store) | | | |\n");
    return;
  }
  for (const store::RecordRef& ref : warm) Check((*store)->GetRecord(ref).status(), "get");
  const std::vector<store::RecordRef> refs = refs_of(Pick(all, absl::GetFlag(FLAGS_ops), rng));
  Print("Store::GetRecord (RocksDB Get)", Time(refs.size(), [&](size_t i) {
          Check((*store)->GetRecord(refs[i]).status(), "get");
        }),
        1);
  const size_t batch = static_cast<size_t>(absl::GetFlag(FLAGS_batch));
  Print(absl::StrFormat("Store::MultiGetRecords(%d) (RocksDB MultiGet)", batch),
        Time(refs.size() / batch, [&](size_t i) {
          for (const auto& value : (*store)->MultiGetRecords(
                   absl::MakeConstSpan(refs).subspan(i * batch, batch))) {
            Check(value.status(), "multiget");
          }
        }),
        static_cast<int>(batch));
}

// The engine's whole read (what the Get and MultiGet handlers call).
void MeasureEngine(const std::vector<std::string>& all, std::mt19937_64& rng) {
  engine::EngineOptions options;
  options.store.path = absl::GetFlag(FLAGS_data_dir);
  options.store.block_cache_bytes = static_cast<size_t>(absl::GetFlag(FLAGS_block_cache_mb))
                                    << 20;
  options.auto_train = false;
  auto engine = engine::LogEngine::Open(options);
  Check(engine.status(), "opening the engine");
  for (const std::string& id : Pick(all, absl::GetFlag(FLAGS_warmup), rng)) {
    Check((*engine)->Get(id).status(), "get " + id);
  }
  const std::vector<std::string> ids = Pick(all, absl::GetFlag(FLAGS_ops), rng);
  Print("LogEngine::Get", Time(ids.size(), [&](size_t i) {
          Check((*engine)->Get(ids[i]).status(), "get " + ids[i]);
        }),
        1);
  const size_t batch = static_cast<size_t>(absl::GetFlag(FLAGS_batch));
  Print(absl::StrFormat("LogEngine::MultiGet(%d)", batch),
        Time(ids.size() / batch, [&](size_t i) {
          auto results = (*engine)->MultiGet(absl::MakeConstSpan(ids).subspan(i * batch, batch));
          Check(results.status(), "multiget");
          for (const auto& result : *results) Check(result.status(), "multiget record");
        }),
        static_cast<int>(batch));
}

int Run() {
  if (absl::GetFlag(FLAGS_data_dir).empty() || absl::GetFlag(FLAGS_ids).empty()) {
    std::cerr << "read_cost_bench: --data_dir and --ids are required\n";
    return 2;
  }
  const std::vector<std::string> all = ReadIds(absl::GetFlag(FLAGS_ids));
  std::mt19937_64 rng(absl::GetFlag(FLAGS_seed));
  std::printf("%zu ids, block cache %d MiB, %d reads per row (after %d to warm the cache)\n\n",
              all.size(), absl::GetFlag(FLAGS_block_cache_mb), absl::GetFlag(FLAGS_ops),
              absl::GetFlag(FLAGS_warmup));
  std::printf("| call | CPU us per call | wall us per call | CPU us per record |\n");
  std::printf("|---|---:|---:|---:|\n");
  MeasureStore(all, rng);
  MeasureEngine(all, rng);
  return 0;
}

}  // namespace
}  // namespace dictlog

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return dictlog::Run();
}
