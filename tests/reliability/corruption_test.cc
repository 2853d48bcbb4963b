// corruption_test: flips random bytes in a real store holding loghub records and
// checks that every read (Get, MultiGet, Scan, Verify) returns the right payload or an
// error, never a wrong payload, and never crashes (docs/reliability.md "Corruption").
//
// The store (built once, then copied for each trial): six pools covering record and
// block mode, full, compact and no dictionaries, frames written before and after each
// pool's dictionary; closed and reopened once, so everything sits in SST files. Each
// trial copies it, flips 1..--max_flips random bytes (random positions, random XOR
// masks) in one target, reopens it with the real LogEngine and reads every record:
//   sst    bytes anywhere in the SST files on disk (caught by RocksDB's block checksums);
//   block  a stored block value, rewritten through RocksDB (caught by the block frame's
//          zstd checksum: docs/adr/0007-frame-checksums.md);
//   record a stored record value, rewritten through RocksDB. Nothing checks a single
//          record's bytes above RocksDB (ADR 0007), so its wrong payloads are counted
//          and reported, not failed: the figure the ADR's decision rests on.
// Violations: a wrong payload (sst, block), a Scan silently skipping records, a crash.
//
// Exit status 0 if nothing was violated, 1 otherwise, 2 if the test could not run.
#include <rocksdb/db.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "server/engine/log_engine.h"
#include "tests/e2e/server_process.h"
#include "tests/reliability/crash_workload.h"

ABSL_FLAG(int, trials, 12, "flip trials (the full run: 100)");
ABSL_FLAG(uint64_t, seed, 0, "store content and flips; 0: random");
ABSL_FLAG(int, max_flips, 8, "bytes flipped per trial: 1..max_flips");
ABSL_FLAG(int, records_per_pool, 600, "records appended to each pool");
ABSL_FLAG(std::string, targets, "sst,block,record", "what trials flip, in turn");
ABSL_FLAG(std::string, work_dir, "", "scratch directory, wiped first; default under TEST_TMPDIR");
ABSL_FLAG(std::string, loghub_dir, "", "loghub samples; default: from the runfiles");

namespace dictlog::corruption {
namespace {

namespace fs = std::filesystem;

struct Expected {
  std::string category;
  std::string payload;
};
using Records = std::map<std::string, Expected>;  // id -> what was appended.

struct PoolSpec {
  const char* name;
  bool block;
  v1::DictionaryMode mode;  // UNSPECIFIED: never trained.
};
const PoolSpec kPools[] = {
    {"HDFS", false, v1::DICTIONARY_MODE_FULL},
    {"Apache", false, v1::DICTIONARY_MODE_COMPACT},
    {"Zookeeper", true, v1::DICTIONARY_MODE_FULL},
    {"OpenSSH", true, v1::DICTIONARY_MODE_COMPACT},
    {"Linux", false, v1::DICTIONARY_MODE_UNSPECIFIED},
    {"Android", true, v1::DICTIONARY_MODE_UNSPECIFIED},
};

engine::EngineOptions Options(const std::string& dir) {
  engine::EngineOptions options;
  options.store.path = dir;
  options.auto_train = false;
  options.dictionaries.activation_min_gain = -1;
  for (const PoolSpec& spec : kPools) {
    v1::PoolOptions pool = pool::BuiltinPoolOptions();
    pool.set_dictionary_bytes(4096);
    if (spec.mode != v1::DICTIONARY_MODE_UNSPECIFIED) pool.set_dictionary_mode(spec.mode);
    if (spec.block) {
      pool.set_storage_mode(v1::STORAGE_MODE_BLOCK);
      pool.set_block_bytes(1024);
    }
    options.pools.emplace_back(spec.name, pool);
  }
  return options;
}

absl::Status AppendSome(engine::LogEngine& engine, const crash::Corpus& corpus, int count,
                        std::mt19937_64& rng, Records* records) {
  for (size_t c = 0; c < corpus.categories().size(); ++c) {
    const auto& lines = corpus.lines(c);
    for (int i = 0; i < count; i += 10) {
      std::vector<Expected> batch;
      for (int j = 0; j < 10; ++j) {
        batch.push_back({corpus.categories()[c], lines[rng() % lines.size()]});
      }
      std::vector<engine::AppendInput> inputs;
      for (const Expected& e : batch) inputs.push_back({e.category, e.payload});
      ASSIGN_OR_RETURN(std::vector<std::string> ids, engine.Append(inputs));
      for (size_t j = 0; j < ids.size(); ++j) (*records)[ids[j]] = batch[j];
    }
  }
  return absl::OkStatus();
}

// The store every trial starts from: frames without and with dictionaries, sealed
// blocks, all flushed to SST files.
absl::StatusOr<Records> BuildGolden(const std::string& dir, const crash::Corpus& corpus,
                                    std::mt19937_64& rng) {
  Records records;
  const int half = absl::GetFlag(FLAGS_records_per_pool) / 2;
  {
    ASSIGN_OR_RETURN(auto engine, engine::LogEngine::Open(Options(dir)));
    RETURN_IF_ERROR(AppendSome(*engine, corpus, half, rng, &records));
    for (const PoolSpec& spec : kPools) {
      if (spec.mode == v1::DICTIONARY_MODE_UNSPECIFIED) continue;
      v1::TrainDictionaryRequest train;
      train.set_pool(spec.name);
      train.set_activate(true);
      RETURN_IF_ERROR(engine->TrainDictionary(train).status());
    }
    RETURN_IF_ERROR(AppendSome(*engine, corpus, half, rng, &records));
  }
  // Reopening replays the write-ahead log into SST files.
  RETURN_IF_ERROR(engine::LogEngine::Open(Options(dir)).status());
  return records;
}

struct Tally {
  uint64_t reads = 0, right = 0, wrong = 0, scan_skipped = 0;
  std::map<std::string, uint64_t> errors;  // By status code.
  std::string first_wrong;
  void Error(const absl::Status& s) { ++errors[absl::StatusCodeToString(s.code())]; }
};

void CheckRecord(const std::string& id, const absl::StatusOr<v1::Record>& got,
                 const Records& want, Tally* t) {
  ++t->reads;
  if (!got.ok()) return t->Error(got.status());
  const Expected& e = want.at(id);
  if (got->id() == id && got->payload() == e.payload && got->category() == e.category) {
    ++t->right;
    return;
  }
  ++t->wrong;
  // Escaped: the payload of a corrupt frame is arbitrary bytes, and the test's output
  // ends up in Bazel's test.xml, which control bytes would make unparsable.
  if (t->first_wrong.empty()) {
    t->first_wrong = absl::StrCat(id, ": ", absl::CHexEscape(got->payload().substr(0, 200)));
  }
}

// Every read of every record, into `t`.
void ReadEverything(const engine::LogEngine& engine, const Records& records, Tally* t) {
  std::vector<std::string> ids;
  for (const auto& [id, e] : records) {
    ids.push_back(id);
    CheckRecord(id, engine.Get(id), records, t);
  }
  for (size_t start = 0; start < ids.size(); start += 1000) {
    std::vector<std::string> chunk(ids.begin() + start,
                                   ids.begin() + std::min(ids.size(), start + 1000));
    auto results = engine.MultiGet(chunk);
    if (!results.ok()) {
      t->Error(results.status());
      continue;
    }
    for (size_t i = 0; i < chunk.size(); ++i) CheckRecord(chunk[i], (*results)[i], records, t);
  }
  for (const PoolSpec& spec : kPools) {
    engine::ScanSpec scan;
    scan.pool = spec.name;
    uint64_t seen = 0;
    absl::Status s = engine.Scan(scan, [&](std::vector<v1::Record> chunk) {
      for (const v1::Record& r : chunk) {
        ++seen;
        if (records.count(r.id()) == 0) {
          ++t->wrong;
          if (t->first_wrong.empty()) t->first_wrong = "scan returned unknown id " + r.id();
        } else {
          CheckRecord(r.id(), r, records, t);
        }
      }
      return absl::OkStatus();
    });
    if (!s.ok()) {
      t->Error(s);
      continue;
    }
    uint64_t expected = 0;
    const std::string prefix = absl::StrCat(spec.name, "/");
    for (const auto& [id, e] : records) expected += absl::StartsWith(id, prefix) ? 1 : 0;
    if (seen != expected) ++t->scan_skipped;  // A Scan that ended OK must see them all.
  }
  auto verify = engine.Verify(v1::VerifyRequest(), [] { return false; });
  if (!verify.ok()) t->Error(verify.status());
}

void FlipBytes(std::string* bytes, int n, std::mt19937_64& rng) {
  for (int i = 0; i < n && !bytes->empty(); ++i) {
    const size_t at = rng() % bytes->size();
    (*bytes)[at] = static_cast<char>((*bytes)[at] ^ (1 + rng() % 255));
  }
}

// Flips bytes at random positions across all SST files (a position uniform over their
// bytes). Returns the files touched.
absl::StatusOr<std::string> FlipSst(const std::string& dir, int n, std::mt19937_64& rng) {
  std::vector<std::pair<std::string, uint64_t>> files;
  uint64_t total = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".sst") continue;
    files.emplace_back(entry.path().string(), entry.file_size());
    total += entry.file_size();
  }
  if (total == 0) return absl::FailedPreconditionError("no SST files");
  std::vector<std::string> touched;
  for (int i = 0; i < n; ++i) {
    uint64_t at = rng() % total;
    for (const auto& [path, size] : files) {
      if (at >= size) {
        at -= size;
        continue;
      }
      std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
      f.seekg(at);
      const char old = static_cast<char>(f.get());
      f.seekp(at);
      f.put(static_cast<char>(old ^ (1 + rng() % 255)));
      touched.push_back(absl::StrCat(fs::path(path).filename().string(), "@", at));
      break;
    }
  }
  return absl::StrJoin(touched, ",");
}

absl::Status FromRocks(const rocksdb::Status& s) {
  return s.ok() ? absl::OkStatus() : absl::InternalError(s.ToString());
}

// Rewrites one random value of column family `family` ("records" or "blocks") with
// bytes flipped, through RocksDB (so its checksums are valid). Returns the key's hex.
absl::StatusOr<std::string> FlipValue(const std::string& dir, const std::string& family,
                                      int n, std::mt19937_64& rng) {
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  std::vector<std::string> names;
  RETURN_IF_ERROR(FromRocks(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), dir, &names)));
  for (const std::string& name : names) families.emplace_back(name, rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  RETURN_IF_ERROR(FromRocks(rocksdb::DB::Open(rocksdb::DBOptions(), dir, families, &handles, &raw)));
  std::unique_ptr<rocksdb::DB> db(raw);
  rocksdb::ColumnFamilyHandle* cf = nullptr;
  for (size_t i = 0; i < names.size(); ++i) cf = names[i] == family ? handles[i] : cf;
  std::vector<std::pair<std::string, std::string>> kvs;
  {
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), cf));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      kvs.emplace_back(it->key().ToString(), it->value().ToString());
    }
  }
  absl::StatusOr<std::string> result =
      absl::FailedPreconditionError("no values in " + family);
  if (!kvs.empty()) {
    auto& [key, value] = kvs[rng() % kvs.size()];
    FlipBytes(&value, n, rng);
    absl::Status put = FromRocks(db->Put(rocksdb::WriteOptions(), cf, key, value));
    result = put.ok() ? absl::StatusOr<std::string>(absl::StrCat(
                            family, " key ", absl::BytesToHexString(key)))
                      : put;
  }
  for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
  return result;
}

struct TargetStats {
  uint64_t trials = 0, open_errors = 0;
  Tally tally;
};

std::string Summary(const std::string& target, const TargetStats& s) {
  std::vector<std::string> errors;
  for (const auto& [code, n] : s.tally.errors) errors.push_back(absl::StrCat(code, "=", n));
  return absl::StrCat(target, ": trials=", s.trials, " open_errors=", s.open_errors,
                      " reads=", s.tally.reads, " right=", s.tally.right,
                      " wrong_payloads=", s.tally.wrong,
                      " scans_skipping_records=", s.tally.scan_skipped, " errors{",
                      absl::StrJoin(errors, ","), "}");
}

// One trial: a fresh copy of the golden store, flipped, reopened and read through.
absl::Status Trial(const std::string& golden, const std::string& dir,
                   const std::string& target, int flips, const Records& records,
                   std::mt19937_64& rng, TargetStats* stats) {
  fs::remove_all(dir);
  fs::copy(golden, dir, fs::copy_options::recursive);
  absl::StatusOr<std::string> where =
      target == "sst" ? FlipSst(dir, flips, rng)
                      : FlipValue(dir, target == "block" ? "blocks" : "records", flips, rng);
  RETURN_IF_ERROR(where.status());
  ++stats->trials;
  Tally before = stats->tally;
  auto engine = engine::LogEngine::Open(Options(dir));
  if (!engine.ok()) {
    ++stats->open_errors;
    stats->tally.Error(engine.status());
  } else {
    ReadEverything(**engine, records, &stats->tally);
  }
  const Tally& now = stats->tally;
  const uint64_t errors = (now.reads - now.right - now.wrong) -
                          (before.reads - before.right - before.wrong);
  std::printf("trial %s flips=%d at %s: reads=%llu wrong=%llu errors=%llu%s\n",
              target.c_str(), flips, where->c_str(),
              static_cast<unsigned long long>(now.reads - before.reads),
              static_cast<unsigned long long>(now.wrong - before.wrong),
              static_cast<unsigned long long>(errors),
              engine.ok() ? "" : (" open failed: " + engine.status().ToString()).c_str());
  return absl::OkStatus();
}

int Run() {
  uint64_t seed = absl::GetFlag(FLAGS_seed);
  if (seed == 0) seed = std::random_device()();
  std::mt19937_64 rng(seed);
  std::string work = absl::GetFlag(FLAGS_work_dir);
  if (work.empty()) {
    const char* tmp = std::getenv("TEST_TMPDIR");
    work = std::string(tmp ? tmp : "/tmp") + "/corruption_test";
  }
  fs::remove_all(work);
  std::string loghub = absl::GetFlag(FLAGS_loghub_dir);
  if (loghub.empty()) loghub = testing::RunfilePath("../loghub");
  std::vector<std::string> categories;
  for (const PoolSpec& spec : kPools) categories.push_back(spec.name);
  auto corpus = crash::Corpus::Load(loghub, categories, 2000);
  const std::string golden = work + "/golden";
  absl::StatusOr<Records> records =
      corpus.ok() ? BuildGolden(golden, *corpus, rng) : corpus.status();
  if (!records.ok()) {
    std::fprintf(stderr, "corruption_test: %s\n", records.status().ToString().c_str());
    return 2;
  }
  {  // The unflipped store reads back whole: the baseline every trial departs from.
    TargetStats clean;
    auto engine = engine::LogEngine::Open(Options(golden));
    if (engine.ok()) ReadEverything(**engine, *records, &clean.tally);
    if (!engine.ok() || clean.tally.right != clean.tally.reads) {
      std::fprintf(stderr, "corruption_test: the clean store does not read back\n");
      return 2;
    }
  }
  const std::vector<std::string> targets =
      absl::StrSplit(absl::GetFlag(FLAGS_targets), ',', absl::SkipEmpty());
  std::map<std::string, TargetStats> stats;
  const absl::Time start = absl::Now();
  for (int t = 0; t < absl::GetFlag(FLAGS_trials); ++t) {
    const std::string& target = targets[t % targets.size()];
    const int flips = 1 + static_cast<int>(rng() % absl::GetFlag(FLAGS_max_flips));
    absl::Status s = Trial(golden, work + "/trial", target, flips, *records, rng, &stats[target]);
    if (!s.ok()) {
      std::fprintf(stderr, "corruption_test: trial %d: %s\n", t, s.ToString().c_str());
      return 2;
    }
  }
  uint64_t violations = 0;
  for (const auto& [target, s] : stats) {
    std::printf("%s\n", Summary(target, s).c_str());
    if (target != "record") violations += s.tally.wrong + s.tally.scan_skipped;
    if (!s.tally.first_wrong.empty()) {
      std::printf("  first wrong payload (%s): %.200s\n", target.c_str(),
                  s.tally.first_wrong.c_str());
    }
  }
  std::printf("corruption_test: %s seed=%llu records=%zu trials=%d violations=%llu "
              "seconds=%.1f\n",
              violations == 0 ? "PASS" : "FAIL", static_cast<unsigned long long>(seed),
              records->size(), absl::GetFlag(FLAGS_trials),
              static_cast<unsigned long long>(violations),
              absl::ToDoubleSeconds(absl::Now() - start));
  return violations == 0 ? 0 : 1;
}

}  // namespace
}  // namespace dictlog::corruption

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return dictlog::corruption::Run();
}
