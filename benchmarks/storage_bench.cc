// storage_bench: dictlog's storage configurations side by side, in process, through the
// real LogEngine over a real RocksDB: record mode and block mode (2, 4, 16, 64 KiB),
// with and without pool dictionaries, on the loghub samples. For each: the stored
// ratio (raw payload bytes / stored value bytes, from the pools' counters) and random
// read speed (unary Get and MultiGet of --batch ids, uniform over every record), the
// configurations measured in interleaved rounds, medians reported.
//
//   bazel build -c opt //benchmarks:storage_bench
//   bazel-out/k8-opt/bin/benchmarks/results/storage_bench --dir=$PWD/../shared/data/loghub
//       --csv=benchmarks/results/storage_bench.csv
//
// Dictionaries: each pool's is trained (TrainDictionary, activated) once the data is in,
// then every record is re-compressed with it, so all stored data uses it.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "server/engine/log_engine.h"
#include "training/files.h"

ABSL_FLAG(std::string, dir, "../shared/data/loghub", "directory of *.log files");
ABSL_FLAG(std::string, work_dir, "", "where the stores go (default: a temp directory)");
ABSL_FLAG(std::vector<std::string>, configs,
          std::vector<std::string>({"record+dict", "block2k+dict", "block4k+dict",
                                    "record", "block4k", "block16k", "block64k"}),
          "configurations: record or blockNk, with +dict for pool dictionaries");
ABSL_FLAG(int, batch, 64, "ids per MultiGet");
ABSL_FLAG(int, ops, 20000, "records read per measurement (Get and MultiGet each)");
ABSL_FLAG(int, rounds, 3, "interleaved measurement rounds; medians reported");
ABSL_FLAG(int, dictionary_bytes, 16384, "dictionary size of the +dict configurations");
ABSL_FLAG(std::string, csv, "", "write the rows as CSV here");

namespace dictlog::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Config {
  std::string name;
  bool block = false;
  uint32_t block_bytes = 0;
  bool dictionary = false;
};

absl::StatusOr<Config> ParseConfig(const std::string& name) {
  Config config{name};
  std::string base = name;
  if (absl::EndsWith(base, "+dict")) {
    config.dictionary = true;
    base.resize(base.size() - 5);
  }
  if (base == "record") return config;
  int kib = 0;
  if (absl::StartsWith(base, "block") && absl::EndsWith(base, "k") &&
      absl::SimpleAtoi(base.substr(5, base.size() - 6), &kib) && kib >= 1 && kib <= 64) {
    config.block = true;
    config.block_bytes = static_cast<uint32_t>(kib) << 10;
    return config;
  }
  return absl::InvalidArgumentError("unknown configuration " + name);
}

struct Category {
  std::string name;
  std::vector<std::string> lines;
};

void Check(const absl::Status& status, const std::string& what) {
  if (status.ok()) return;
  std::cerr << "storage_bench: " << what << ": " << status << "\n";
  std::exit(1);
}

// The *.log files of `dir` sorted by name, without their empty lines; exits on error.
std::vector<Category> LoadLoghub(const std::string& dir) {
  trainer::LineOptions line_options;
  line_options.skip_empty = true;
  absl::StatusOr<std::vector<trainer::LogFile>> logs = trainer::ReadLogFiles(dir, line_options);
  Check(logs.status(), "reading " + dir);
  std::vector<Category> categories;
  for (trainer::LogFile& log : *logs) {
    categories.push_back({std::move(log.name), std::move(log.lines)});
  }
  return categories;
}

// One configuration: its engine, loaded, and the ids of its records.
struct Store {
  Config config;
  std::unique_ptr<engine::LogEngine> engine;
  std::vector<std::string> ids;
  uint64_t raw = 0, stored = 0;
};

Store Load(const Config& config, const std::vector<Category>& data, const std::string& root) {
  engine::EngineOptions options;
  options.store.path = root + "/" + config.name;
  std::filesystem::remove_all(options.store.path);
  options.auto_train = false;
  options.recompressor.max_records_per_second = 1e9;
  options.default_pool_options.set_dictionary_bytes(absl::GetFlag(FLAGS_dictionary_bytes));
  if (config.block) {
    options.default_pool_options.set_storage_mode(v1::STORAGE_MODE_BLOCK);
    options.default_pool_options.set_block_bytes(config.block_bytes);
  }
  auto engine = engine::LogEngine::Open(options);
  Check(engine.status(), "opening " + config.name);
  Store store{config, *std::move(engine)};
  for (const Category& category : data) {
    for (size_t start = 0; start < category.lines.size(); start += 500) {
      std::vector<engine::AppendInput> batch;
      for (size_t i = start; i < std::min(category.lines.size(), start + 500); ++i) {
        batch.push_back({category.name, category.lines[i]});
      }
      auto ids = store.engine->Append(batch);
      Check(ids.status(), "append");
      store.ids.insert(store.ids.end(), ids->begin(), ids->end());
    }
    if (!config.dictionary) continue;
    v1::TrainDictionaryRequest train;
    train.set_pool(category.name);
    auto trained = store.engine->TrainDictionary(train);
    Check(trained.status(), "training " + category.name);
    v1::ActivateDictionaryRequest activate;
    activate.set_pool(category.name);
    activate.set_id(trained->dictionary().id());
    Check(store.engine->ActivateDictionary(activate).status(), "activating");
    v1::RecompressRequest recompress;
    recompress.set_pool(category.name);
    Check(store.engine->Recompress(recompress).status(), "re-compressing");
    if (!store.engine->WaitForRecompressForTest(category.name, absl::Minutes(10))) {
      Check(absl::DeadlineExceededError("re-compression"), category.name);
    }
  }
  for (const v1::PoolInfo& pool : store.engine->ListPools()) {
    store.raw += pool.stats().raw_bytes();
    store.stored += pool.stats().stored_bytes();
  }
  return store;
}

volatile size_t read_bytes_sink = 0;

// Records per second of `ops` random reads, one Get each or MultiGets of `batch`.
double MeasureReads(const Store& store, int ops, int batch, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, store.ids.size() - 1);
  std::vector<std::string> ids(static_cast<size_t>(ops));
  for (std::string& id : ids) id = store.ids[pick(rng)];
  const auto start = Clock::now();
  size_t bytes = 0;
  if (batch <= 1) {
    for (const std::string& id : ids) {
      auto record = store.engine->Get(id);
      Check(record.status(), "get " + id);
      bytes += record->payload().size();
    }
  } else {
    for (size_t i = 0; i < ids.size(); i += batch) {
      const size_t n = std::min(ids.size() - i, static_cast<size_t>(batch));
      auto records = store.engine->MultiGet(absl::MakeConstSpan(ids).subspan(i, n));
      Check(records.status(), "multiget");
      for (auto& record : *records) {
        Check(record.status(), "multiget record");
        bytes += record->payload().size();
      }
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  read_bytes_sink += bytes;  // The reads have an observable result.
  return ops / seconds;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int Run() {
  const std::vector<Category> data = LoadLoghub(absl::GetFlag(FLAGS_dir));
  if (data.empty()) {
    std::cerr << "storage_bench: no *.log files in " << absl::GetFlag(FLAGS_dir) << "\n";
    return 1;
  }
  std::string root = absl::GetFlag(FLAGS_work_dir);
  if (root.empty()) {
    root = (std::filesystem::temp_directory_path() / "storage_bench").string();
  }
  std::vector<Store> stores;
  for (const std::string& name : absl::GetFlag(FLAGS_configs)) {
    absl::StatusOr<Config> config = ParseConfig(name);
    Check(config.status(), "--configs");
    const auto start = Clock::now();
    stores.push_back(Load(*config, data, root));
    std::cerr << absl::StrFormat(
        "loaded %-14s %zu records, ratio %.3f (%.1f s)\n", name, stores.back().ids.size(),
        static_cast<double>(stores.back().raw) / stores.back().stored,
        std::chrono::duration<double>(Clock::now() - start).count());
  }
  const int ops = absl::GetFlag(FLAGS_ops), batch = absl::GetFlag(FLAGS_batch);
  std::vector<std::vector<double>> gets(stores.size()), multigets(stores.size());
  for (int round = 0; round < absl::GetFlag(FLAGS_rounds); ++round) {
    for (size_t s = 0; s < stores.size(); ++s) {
      gets[s].push_back(MeasureReads(stores[s], ops, 1, 17 + round));
      multigets[s].push_back(MeasureReads(stores[s], ops, batch, 91 + round));
    }
    std::cerr << "round " << round + 1 << " done\n";
  }
  std::string csv = "config,storage,block_bytes,dictionary,records,raw_bytes,stored_bytes,"
                    "ratio,get_records_per_s,multiget_records_per_s\n";
  std::cout << absl::StrFormat("| config | ratio | Get records/s | MultiGet(%d) records/s |\n",
                               batch)
            << "|---|---|---|---|\n";
  for (size_t s = 0; s < stores.size(); ++s) {
    const Store& st = stores[s];
    const double ratio = static_cast<double>(st.raw) / st.stored;
    const double get = Median(gets[s]), multiget = Median(multigets[s]);
    std::cout << absl::StrFormat("| %s | %.3f | %.0f | %.0f |\n", st.config.name, ratio, get,
                                 multiget);
    csv += absl::StrFormat("%s,%s,%d,%d,%zu,%d,%d,%.4f,%.0f,%.0f\n", st.config.name,
                           st.config.block ? "block" : "record", st.config.block_bytes,
                           st.config.dictionary ? 1 : 0, st.ids.size(), st.raw, st.stored,
                           ratio, get, multiget);
  }
  if (const std::string path = absl::GetFlag(FLAGS_csv); !path.empty()) {
    std::ofstream(path) << csv;
    std::cerr << "wrote " << path << "\n";
  }
  return 0;
}

}  // namespace
}  // namespace dictlog::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return dictlog::bench::Run();
}
