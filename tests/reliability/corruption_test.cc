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
//          and reported, not failed: the figure the ADR's decision rests on;
//   wal    bytes anywhere in the write-ahead logs of a second store with more records
//          in its logs (BuildWalGolden). Recovery drops a log from its first damaged
//          record on: see CheckWalRecovery;
//   manifest  bytes anywhere in the MANIFEST;
//   cut    one file of the second store (a table, a log or the MANIFEST) cut to a
//          random shorter length;
//   delete one file of the second store (a table, a log, the MANIFEST or CURRENT)
//          deleted.
// Violations: a wrong payload (all but record), a stored record read as NOT_FOUND, a
// Scan silently skipping records, an id handed out again, an open refused with a code
// other than DATA_LOSS or that a second attempt gets past, a crash; after damage to a
// log also a refused open (but DATA_LOSS naming a log the MANIFEST lists as synced,
// deleted or cut short: ADR 0046), a loss that is not a suffix (but for a deleted log),
// and a flip's loss not reported.
//
// Exit status 0 if nothing was violated, 1 otherwise, 2 if the test could not run.
#include <rocksdb/db.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/file_damage.h"
#include "common/status_macros.h"
#include "server/daemon/salvage.h"
#include "server/engine/log_engine.h"
#include "tests/e2e/server_process.h"
#include "tests/reliability/crash_workload.h"

ABSL_FLAG(int, trials, 12, "flip trials (the full run: 100)");
ABSL_FLAG(uint64_t, seed, 0, "store content and flips; 0: random");
ABSL_FLAG(int, max_flips, 8, "bytes flipped per trial: 1..max_flips");
ABSL_FLAG(int, records_per_pool, 600, "records appended to each pool");
ABSL_FLAG(std::string, targets, "sst,block,record,wal,manifest,cut,delete",
          "what trials damage, in turn");
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

// Appends `count` records to each pool, 10 a call, into `records` (and their ids, in
// the order appended, into `order` if given).
absl::Status AppendSome(engine::LogEngine& engine, const crash::Corpus& corpus, int count,
                        std::mt19937_64& rng, Records* records,
                        std::vector<std::string>* order = nullptr) {
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
      for (size_t j = 0; j < ids.size(); ++j) {
        (*records)[ids[j]] = batch[j];
        if (order != nullptr) order->push_back(ids[j]);
      }
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

// The `wal` trials' store: a copy of the golden store, then about `records_per_pool` / 2
// more records a pool, left in the write-ahead log (a clean close flushes nothing), with
// a pool deleted halfway. A kWalTrialBytes log limit makes RocksDB roll the log and
// flush while the records arrive, as a long-running store does. Returns the ids
// appended, in order.
constexpr uint64_t kWalTrialBytes = 64 << 10;
constexpr char kLatePool[] = "Late";

absl::StatusOr<std::vector<std::string>> BuildWalGolden(const std::string& golden,
                                                        const std::string& dir,
                                                        const crash::Corpus& corpus,
                                                        std::mt19937_64& rng,
                                                        Records* records) {
  fs::copy(golden, dir, fs::copy_options::recursive);
  engine::EngineOptions options = Options(dir);
  options.store.max_wal_bytes = kWalTrialBytes;
  std::vector<std::string> order;
  ASSIGN_OR_RETURN(auto engine, engine::LogEngine::Open(options));
  const int quarter = absl::GetFlag(FLAGS_records_per_pool) / 40 * 10;
  RETURN_IF_ERROR(AppendSome(*engine, corpus, quarter, rng, records, &order));
  // Deleting a pool compacts its key range family by family, which flushes them: the
  // store then has more than one log, as it does after any compaction or memtable flush.
  const std::vector<engine::AppendInput> scratch = {{"Scratch", "a record of a deleted pool"}};
  RETURN_IF_ERROR(engine->Append(scratch).status());
  RETURN_IF_ERROR(engine->DeletePool("Scratch").status());
  RETURN_IF_ERROR(AppendSome(*engine, corpus, quarter, rng, records, &order));
  // A pool created last: its catalog entry and first seq lease are in the log, so
  // damage before them takes the pool, and creating it again must not give its ids
  // again (ADR 0044).
  std::vector<engine::AppendInput> late;
  for (int i = 0; i < 3; ++i) late.push_back({kLatePool, "a record of a pool created late"});
  ASSIGN_OR_RETURN(std::vector<std::string> ids, engine->Append(late));
  for (const std::string& id : ids) {
    (*records)[id] = Expected{kLatePool, std::string(late.front().payload)};
    order.push_back(id);
  }
  return order;
}

struct Tally {
  uint64_t reads = 0, right = 0, wrong = 0, scan_skipped = 0;
  std::map<std::string, uint64_t> errors;  // By status code.
  std::string first_wrong;
  std::map<std::string, std::string> first_error;  // By code: the first one's text.
  void Error(const absl::Status& s, absl::string_view what = "") {
    const std::string code = absl::StatusCodeToString(s.code());
    if (++errors[code] == 1) first_error[code] = absl::StrCat(what, ": ", s.message());
  }
};

// `how`: the read (Get, MultiGet, Scan), named in the tally's first error.
void CheckRecord(absl::string_view how, const std::string& id,
                 const absl::StatusOr<v1::Record>& got, const Records& want, Tally* t) {
  ++t->reads;
  if (!got.ok()) return t->Error(got.status(), absl::StrCat(how, " ", id));
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
    CheckRecord("Get", id, engine.Get(id), records, t);
  }
  for (size_t start = 0; start < ids.size(); start += 1000) {
    std::vector<std::string> chunk(ids.begin() + start,
                                   ids.begin() + std::min(ids.size(), start + 1000));
    auto results = engine.MultiGet(chunk);
    if (!results.ok()) {
      t->Error(results.status(), "MultiGet");
      continue;
    }
    for (size_t i = 0; i < chunk.size(); ++i) {
      CheckRecord("MultiGet", chunk[i], (*results)[i], records, t);
    }
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
          CheckRecord("Scan", r.id(), r, records, t);
        }
      }
      return absl::OkStatus();
    });
    if (!s.ok()) {
      t->Error(s, absl::StrCat("Scan ", spec.name));
      continue;
    }
    uint64_t expected = 0;
    const std::string prefix = absl::StrCat(spec.name, "/");
    for (const auto& [id, e] : records) expected += absl::StartsWith(id, prefix) ? 1 : 0;
    if (seen != expected) ++t->scan_skipped;  // A Scan that ended OK must see them all.
  }
  auto verify = engine.Verify(v1::VerifyRequest(), [] { return false; });
  if (!verify.ok()) t->Error(verify.status(), "Verify");
}

void FlipBytes(std::string* bytes, int n, std::mt19937_64& rng) {
  for (int i = 0; i < n && !bytes->empty(); ++i) {
    const size_t at = rng() % bytes->size();
    (*bytes)[at] = static_cast<char>((*bytes)[at] ^ (1 + rng() % 255));
  }
}

// RocksDB's files of one kind in `dir`: ".sst" (tables), ".log" (write-ahead logs) or
// "MANIFEST" (MANIFEST-*), with their sizes.
std::vector<std::pair<std::string, uint64_t>> FilesOf(const std::string& dir,
                                                      const std::string& kind) {
  std::vector<std::pair<std::string, uint64_t>> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const bool match = kind == "MANIFEST"
                           ? absl::StartsWith(entry.path().filename().string(), "MANIFEST-")
                           : entry.path().extension() == kind;
    if (match) files.emplace_back(entry.path().string(), entry.file_size());
  }
  return files;
}

// Flips bytes at random positions across all files of `kind` (FilesOf) in `dir` (a
// position uniform over their bytes). Returns the files touched.
absl::StatusOr<std::string> FlipFiles(const std::string& dir, const std::string& kind, int n,
                                      std::mt19937_64& rng) {
  const std::vector<std::pair<std::string, uint64_t>> files = FilesOf(dir, kind);
  uint64_t total = 0;
  for (const auto& [path, size] : files) total += size;
  if (total == 0) return absl::FailedPreconditionError("no " + kind + " files");
  std::vector<std::string> touched;
  for (int i = 0; i < n; ++i) {
    uint64_t at = rng() % total;
    for (const auto& [path, size] : files) {
      if (at >= size) {
        at -= size;
        continue;
      }
      FlipByte(path, at, static_cast<uint8_t>(1 + rng() % 255));
      touched.push_back(absl::StrCat(fs::path(path).filename().string(), "@", at));
      break;
    }
  }
  return absl::StrJoin(touched, ",");
}

// What a trial damaged: where (printed), and whether it was a write-ahead log (the
// store must still open) or a log deleted outright (a hole is then counted, not failed).
struct Damage {
  std::string where;
  bool log = false;
  bool log_deleted = false;
  std::string file;  // `cut` and `delete`: the file's name.
};

// The tables, logs and MANIFEST in `dir`, with their sizes.
std::vector<std::pair<std::string, uint64_t>> StoreFiles(const std::string& dir) {
  std::vector<std::pair<std::string, uint64_t>> files;
  for (const char* kind : {".sst", ".log", "MANIFEST"}) {
    for (auto& file : FilesOf(dir, kind)) files.push_back(std::move(file));
  }
  return files;
}

bool IsLog(const std::string& path) { return fs::path(path).extension() == ".log"; }

// Cuts one non-empty file, picked at random among the tables, logs and MANIFEST, to a
// random shorter length (a torn write, a copy that stopped).
absl::StatusOr<Damage> CutFile(const std::string& dir, std::mt19937_64& rng) {
  std::vector<std::pair<std::string, uint64_t>> files = StoreFiles(dir);
  files.erase(std::remove_if(files.begin(), files.end(),
                             [](const auto& file) { return file.second == 0; }),
              files.end());
  if (files.empty()) return absl::FailedPreconditionError("no files to cut");
  const auto& [path, size] = files[rng() % files.size()];
  const uint64_t length = rng() % size;
  fs::resize_file(path, length);
  const std::string name = fs::path(path).filename().string();
  return Damage{absl::StrCat(name, " cut to ", length, " of ", size, " bytes"), IsLog(path),
                false, name};
}

// Deletes one file, picked at random among the tables, logs, MANIFEST and CURRENT (an
// operator's mistake, a file system that lost it).
Damage DeleteFile(const std::string& dir, std::mt19937_64& rng) {
  std::vector<std::pair<std::string, uint64_t>> files = StoreFiles(dir);
  files.emplace_back(dir + "/CURRENT", 0);
  const std::string& path = files[rng() % files.size()].first;
  fs::remove(path);
  const std::string name = fs::path(path).filename().string();
  return Damage{name + " deleted", IsLog(path), IsLog(path), name};
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

// The targets whose trials start from the store with records in its logs.
bool OnLoggedStore(const std::string& target) {
  return target == "wal" || target == "cut" || target == "delete";
}

struct TargetStats {
  uint64_t trials = 0, open_errors = 0;
  // Opens refused after damage to a write-ahead log only: a damaged log loses what was
  // logged from the damage on, and the store still opens (ADR 0042)...
  uint64_t refused_after_log_damage = 0;
  // ... but for a closed log the MANIFEST lists as synced (ADR 0046), deleted or cut
  // below its synced size: refused as DATA_LOSS naming it. Counted, not failed.
  uint64_t refused_naming_listed_log = 0;
  // Opens refused with a code other than DATA_LOSS (the most specific for damage).
  uint64_t refused_not_data_loss = 0;
  // Refused opens that a second attempt got past: the refused one changed the store
  // (RocksDB once created a new, empty store where CURRENT was missing).
  uint64_t opened_after_refusal = 0;
  Tally tally;
  uint64_t reissued = 0;  // Appends after the open given an id acknowledged before.
  // Opened stores whose writes RocksDB had stopped by the end of the trial (a
  // compaction met the damage: LogEngine::WritesStopped). Counted, not failed: the
  // stop is RocksDB's, and the damage makes it (docs/operations.md, "Writes stopped").
  uint64_t writes_stopped = 0;
  // `wal` and `cut` trials only.
  uint64_t lost = 0;           // Logged records the recovery dropped (Get: NOT_FOUND).
  uint64_t silent_losses = 0;  // `wal` trials that lost records and reported no drop.
  uint64_t holes = 0;          // Trials that kept a logged record after a lost one.
  // The same after a deleted log: counted, not failed. Recovery replays the logs that
  // are there, so a deleted older log with a newer one kept leaves a hole
  // (docs/reliability.md, "Not covered yet").
  uint64_t holes_after_deleted_log = 0;

  // `sst` trials only: the damaged store salvaged into a new one (ADR 0045). Salvages
  // RocksDB refused (a damaged index or properties block: the read-only open fails as
  // the normal one does) are counted, not failed. The salvaged store must open, read
  // every record right or DATA_LOSS (salvage_tally: never NOT_FOUND, never a wrong
  // payload, no scan that ends OK short) and give no id again (salvage_reissued). A
  // salvaged pool whose records all read right or DATA_LOSS in a salvage's lost range
  // must count exactly those that read right (the salvage's recount): checked in
  // salvaged_pools_counted pools, salvage_counters_wrong of them failed.
  uint64_t salvaged = 0, salvage_refused = 0, salvaged_open_errors = 0;
  uint64_t salvage_reissued = 0, salvaged_pools_counted = 0, salvage_counters_wrong = 0;
  Tally salvage_tally;

  uint64_t Violations(const std::string& target) const {
    const uint64_t refusals =
        refused_after_log_damage + refused_not_data_loss + opened_after_refusal;
    const auto salvaged_absent = salvage_tally.errors.find("NOT_FOUND");
    const uint64_t salvage = salvaged_open_errors + salvage_reissued + salvage_counters_wrong +
                             salvage_tally.wrong +
                             salvage_tally.scan_skipped +
                             (salvaged_absent == salvage_tally.errors.end()
                                  ? 0 : salvaged_absent->second);
    // Wrong payloads and the errors they make are counted, not failed: ADR 0007.
    if (target == "record") return reissued + refusals;
    // A stored record read as absent: the client is told it never existed.
    const auto absent = tally.errors.find("NOT_FOUND");
    const uint64_t not_found = absent == tally.errors.end() ? 0 : absent->second;
    return tally.wrong + tally.scan_skipped + silent_losses + holes + reissued + refusals +
           not_found + salvage;
  }
};

std::string Summary(const std::string& target, const TargetStats& s) {
  std::vector<std::string> errors;
  for (const auto& [code, n] : s.tally.errors) errors.push_back(absl::StrCat(code, "=", n));
  std::string summary = absl::StrCat(
      target, ": trials=", s.trials, " open_errors=", s.open_errors,
      " refused_not_data_loss=", s.refused_not_data_loss,
      " opened_after_refusal=", s.opened_after_refusal, " reads=", s.tally.reads,
      " right=", s.tally.right, " wrong_payloads=", s.tally.wrong,
      " scans_skipping_records=", s.tally.scan_skipped, " reissued=", s.reissued,
      " writes_stopped=", s.writes_stopped, " errors{",
      absl::StrJoin(errors, ","), "}");
  if (target == "sst") {
    std::vector<std::string> salvage_errors;
    for (const auto& [code, n] : s.salvage_tally.errors) {
      salvage_errors.push_back(absl::StrCat(code, "=", n));
    }
    absl::StrAppend(&summary, " salvaged=", s.salvaged, " salvage_refused=",
                    s.salvage_refused, " salvaged_open_errors=", s.salvaged_open_errors,
                    " salvaged_reads=", s.salvage_tally.reads, " salvaged_right=",
                    s.salvage_tally.right, " salvaged_wrong=", s.salvage_tally.wrong,
                    " salvaged_scans_short=", s.salvage_tally.scan_skipped,
                    " salvaged_reissued=", s.salvage_reissued,
                    " salvaged_pools_counted=", s.salvaged_pools_counted,
                    " salvage_counters_wrong=", s.salvage_counters_wrong, " salvaged_errors{",
                    absl::StrJoin(salvage_errors, ","), "}");
  }
  if (OnLoggedStore(target)) {
    absl::StrAppend(&summary, " refused_after_log_damage=", s.refused_after_log_damage,
                    " refused_naming_listed_log=", s.refused_naming_listed_log,
                    " lost=", s.lost, " silent_losses=", s.silent_losses,
                    " holes=", s.holes, " holes_after_deleted_log=", s.holes_after_deleted_log);
  }
  return summary;
}

// A store the trials start from, and what it holds.
struct Golden {
  std::string dir;
  Records records;
  std::vector<std::string> logged;  // The `wal` store's: ids in its log, in append order.
};

// An append to each pool of a trial's opened store must not be given an id acknowledged
// before (ADRs 0041, 0044), whatever the damage: a pool whose newest records cannot be
// read goes on from its seq lease.
void CheckNextIds(engine::LogEngine& engine, const Records& acknowledged, TargetStats* stats) {
  std::vector<const char*> pools = {kLatePool};  // Created again if the damage took it.
  for (const PoolSpec& spec : kPools) pools.push_back(spec.name);
  for (const char* pool : pools) {
    const std::vector<engine::AppendInput> input = {{pool, "appended after the damage"}};
    absl::StatusOr<std::vector<std::string>> ids = engine.Append(input);
    if (!ids.ok()) {
      stats->tally.Error(ids.status(), absl::StrCat("Append ", pool));
    } else if (acknowledged.count(ids->front()) != 0) {
      ++stats->reissued;
    }
  }
}

// A `wal`, `cut` or `delete` trial's store, opened. The replay stops at the first
// damaged record, so what it kept of the logged records must be a prefix of them
// (unless `log_deleted`); a loss must have been reported if `report_losses` (a log cut
// between two records reads as a shorter log); and the kept records must read back
// right.
void CheckWalRecovery(engine::LogEngine& engine, const Golden& golden, bool report_losses,
                      bool log_deleted, TargetStats* stats) {
  std::set<std::string> lost;
  bool hole = false;
  for (const std::string& id : golden.logged) {
    if (absl::IsNotFound(engine.Get(id).status())) {
      lost.insert(id);
    } else if (!lost.empty()) {
      hole = true;
    }
  }
  Records kept = golden.records;
  for (const std::string& id : lost) kept.erase(id);
  ReadEverything(engine, kept, &stats->tally);
  stats->lost += lost.size();
  (log_deleted ? stats->holes_after_deleted_log : stats->holes) += hole ? 1 : 0;
  if (report_losses && !lost.empty() && engine.WalDroppedAtOpen().reports == 0) {
    ++stats->silent_losses;
  }
}

// Damages the copy in `dir` as `target` says.
absl::StatusOr<Damage> Damaged(const std::string& dir, const std::string& target, int flips,
                               std::mt19937_64& rng) {
  if (target == "cut") return CutFile(dir, rng);
  if (target == "delete") return DeleteFile(dir, rng);
  absl::StatusOr<std::string> where =
      target == "sst"        ? FlipFiles(dir, ".sst", flips, rng)
      : target == "wal"      ? FlipFiles(dir, ".log", flips, rng)
      : target == "manifest" ? FlipFiles(dir, "MANIFEST", flips, rng)
                             : FlipValue(dir, target == "block" ? "blocks" : "records", flips, rng);
  RETURN_IF_ERROR(where.status());
  return Damage{*std::move(where), target == "wal"};
}

// Each pool of a salvaged store whose records all read right or DATA_LOSS in a lost
// range: its counters must count exactly the records that read right (TargetStats).
// Other pools (a record unreadable for another reason, e.g. its dictionary was lost
// with the damage, still counts as stored) are not checked.
void CheckSalvagedCounters(const engine::LogEngine& engine, const Records& records,
                           TargetStats* stats) {
  std::map<std::string, std::vector<std::string>> by_pool;
  for (const auto& [id, e] : records) by_pool[id.substr(0, id.rfind('/'))].push_back(id);
  for (const auto& [pool, ids] : by_pool) {
    auto info = engine.GetPool(pool);
    if (!info.ok()) continue;
    uint64_t right = 0, raw = 0;
    bool checkable = true;
    for (size_t start = 0; checkable && start < ids.size(); start += 1000) {
      std::vector<std::string> chunk(ids.begin() + start,
                                     ids.begin() + std::min(ids.size(), start + 1000));
      auto results = engine.MultiGet(chunk);
      if (!results.ok()) {
        checkable = false;
        break;
      }
      for (size_t i = 0; i < chunk.size(); ++i) {
        const absl::StatusOr<v1::Record>& got = (*results)[i];
        if (got.ok() && got->payload() == records.at(chunk[i]).payload) {
          ++right;
          raw += got->payload().size();
        } else if (got.ok() || !absl::IsDataLoss(got.status()) ||
                   !absl::StrContains(got.status().message(), "salvaged")) {
          checkable = false;
          break;
        }
      }
    }
    if (!checkable) continue;
    ++stats->salvaged_pools_counted;
    if (info->stats().records() == right && info->stats().raw_bytes() == raw) continue;
    ++stats->salvage_counters_wrong;
    std::printf("  salvaged pool %s counts %llu records (%llu raw bytes); %llu read back "
                "(%llu raw bytes)\n", pool.c_str(),
                static_cast<unsigned long long>(info->stats().records()),
                static_cast<unsigned long long>(info->stats().raw_bytes()),
                static_cast<unsigned long long>(right), static_cast<unsigned long long>(raw));
  }
}

// An `sst` trial's damaged store (`before_open`: as damaged, before the trial's engine
// wrote to it) salvaged into a new one, opened and read through (TargetStats).
void CheckSalvage(const std::string& before_open, const Golden& golden, TargetStats* stats) {
  const std::string to = before_open + "-salvaged";
  fs::remove_all(to);
  store::Store::Options options = Options(before_open).store;
  options.path = to;
  std::FILE* quiet = std::fopen("/dev/null", "w");
  const absl::Status salvaged =
      service::SalvageStore(before_open, options, UINT64_MAX, quiet, quiet);
  std::fclose(quiet);
  if (!salvaged.ok()) {
    ++stats->salvage_refused;
    stats->salvage_tally.Error(salvaged, "salvage");
    return;
  }
  ++stats->salvaged;
  auto engine = engine::LogEngine::Open(Options(to));
  if (!engine.ok()) {
    ++stats->salvaged_open_errors;
    stats->salvage_tally.Error(engine.status(), "open salvaged");
    std::printf("  salvaged store refused to open: %s\n", engine.status().ToString().c_str());
    return;
  }
  const uint64_t short_before = stats->salvage_tally.scan_skipped;
  const auto absent = [&]() -> uint64_t {
    const auto it = stats->salvage_tally.errors.find("NOT_FOUND");
    return it == stats->salvage_tally.errors.end() ? 0 : it->second;
  };
  const uint64_t absent_before = absent();
  ReadEverything(**engine, golden.records, &stats->salvage_tally);
  if (stats->salvage_tally.scan_skipped != short_before || absent() != absent_before) {
    std::printf("  salvaged store: %llu scans short, %llu NOT_FOUND\n",
                static_cast<unsigned long long>(stats->salvage_tally.scan_skipped - short_before),
                static_cast<unsigned long long>(absent() - absent_before));
  }
  CheckSalvagedCounters(**engine, golden.records, stats);
  TargetStats appended;
  CheckNextIds(**engine, golden.records, &appended);
  stats->salvage_reissued += appended.reissued;
  engine->reset();
  fs::remove_all(to);
}

// One trial: a fresh copy of the golden store, damaged, reopened and read through.
absl::Status Trial(const Golden& golden, const std::string& dir, const std::string& target,
                   int flips, std::mt19937_64& rng, TargetStats* stats) {
  fs::remove_all(dir);
  fs::copy(golden.dir, dir, fs::copy_options::recursive);
  ASSIGN_OR_RETURN(const Damage damage, Damaged(dir, target, flips, rng));
  ++stats->trials;
  const std::string before_open = dir + "-before-open";  // For the salvage.
  if (target == "sst") {
    fs::remove_all(before_open);
    fs::copy(dir, before_open, fs::copy_options::recursive);
  }
  const TargetStats before = *stats;
  const bool logged = OnLoggedStore(target);
  auto engine = engine::LogEngine::Open(Options(dir));
  if (!engine.ok()) {
    ++stats->open_errors;
    const bool names_listed_log =
        damage.log && absl::IsDataLoss(engine.status()) &&
        absl::StrContains(engine.status().message(),
                          absl::StrCat(damage.file, ", which the MANIFEST lists as synced"));
    stats->refused_naming_listed_log += names_listed_log ? 1 : 0;
    stats->refused_after_log_damage += damage.log && !names_listed_log ? 1 : 0;
    stats->refused_not_data_loss += absl::IsDataLoss(engine.status()) ? 0 : 1;
    stats->tally.Error(engine.status(), "open");
    // A refused open must leave the store as it found it: refused again.
    stats->opened_after_refusal += engine::LogEngine::Open(Options(dir)).ok() ? 1 : 0;
  } else {
    if (logged) {
      CheckWalRecovery(**engine, golden, /*report_losses=*/target == "wal",
                       damage.log_deleted, stats);
    } else {
      ReadEverything(**engine, golden.records, &stats->tally);
    }
    CheckNextIds(**engine, golden.records, stats);
    stats->writes_stopped += (*engine)->WritesStopped().ok() ? 0 : 1;
  }
  if (target == "sst") {
    if (engine.ok()) engine->reset();  // Closed before the salvage reads the store.
    CheckSalvage(before_open, golden, stats);
    fs::remove_all(before_open);
  }
  const Tally& now = stats->tally;
  std::vector<std::string> codes;  // This trial's errors by code.
  for (const auto& [code, n] : now.errors) {
    const auto was = before.tally.errors.find(code);
    const uint64_t added = n - (was == before.tally.errors.end() ? 0 : was->second);
    if (added != 0) codes.push_back(absl::StrCat(code, "=", added));
  }
  const std::string errors = absl::StrJoin(codes, ",");
  std::string wal;
  if (logged && engine.ok()) {
    wal = absl::StrCat(" lost=", stats->lost - before.lost,
                       " drops_reported=", (*engine)->WalDroppedAtOpen().reports,
                       " violations=", stats->Violations(target) - before.Violations(target));
  }
  std::printf("trial %s flips=%d at %s: reads=%llu wrong=%llu errors{%s}%s%s\n",
              target.c_str(), flips, damage.where.c_str(),
              static_cast<unsigned long long>(now.reads - before.tally.reads),
              static_cast<unsigned long long>(now.wrong - before.tally.wrong), errors.c_str(),
              wal.c_str(),
              engine.ok() ? "" : (" open failed: " + engine.status().ToString()).c_str());
  return absl::OkStatus();
}

// The trials' stores: `golden` (everything in SST files) and, if `wal`, its copy with
// more records in the log. Each reads back whole before any trial: the baseline every
// trial departs from.
absl::StatusOr<std::pair<Golden, Golden>> BuildGoldens(const std::string& work,
                                                       const crash::Corpus& corpus, bool wal,
                                                       std::mt19937_64& rng) {
  std::pair<Golden, Golden> goldens;
  auto& [golden, wal_golden] = goldens;
  golden.dir = work + "/golden";
  ASSIGN_OR_RETURN(golden.records, BuildGolden(golden.dir, corpus, rng));
  {
    TargetStats clean;
    ASSIGN_OR_RETURN(auto engine, engine::LogEngine::Open(Options(golden.dir)));
    ReadEverything(*engine, golden.records, &clean.tally);
    if (clean.tally.right != clean.tally.reads) {
      return absl::InternalError("the clean store does not read back");
    }
  }
  if (!wal) return goldens;
  wal_golden.dir = work + "/wal_golden";
  wal_golden.records = golden.records;
  ASSIGN_OR_RETURN(wal_golden.logged, BuildWalGolden(golden.dir, wal_golden.dir, corpus, rng,
                                                     &wal_golden.records));
  {  // On a copy: opening replays the log into SST files.
    const std::string copy = work + "/wal_clean";
    fs::copy(wal_golden.dir, copy, fs::copy_options::recursive);
    TargetStats clean;
    ASSIGN_OR_RETURN(auto engine, engine::LogEngine::Open(Options(copy)));
    CheckWalRecovery(*engine, wal_golden, /*report_losses=*/true, /*log_deleted=*/false, &clean);
    CheckNextIds(*engine, wal_golden.records, &clean);
    if (clean.tally.right != clean.tally.reads || clean.lost != 0 ||
        clean.Violations("wal") != 0 || engine->WalDroppedAtOpen().reports != 0) {
      return absl::InternalError("the clean store with records in its log does not read back");
    }
    engine.reset();
    fs::remove_all(copy);
  }
  return goldens;
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
  const std::vector<std::string> targets =
      absl::StrSplit(absl::GetFlag(FLAGS_targets), ',', absl::SkipEmpty());
  const bool wal = absl::c_any_of(targets, OnLoggedStore);
  absl::StatusOr<std::pair<Golden, Golden>> goldens =
      corpus.ok() ? BuildGoldens(work, *corpus, wal, rng) : corpus.status();
  if (!goldens.ok()) {
    std::fprintf(stderr, "corruption_test: %s\n", goldens.status().ToString().c_str());
    return 2;
  }
  const auto& [golden, wal_golden] = *goldens;
  std::map<std::string, TargetStats> stats;
  const absl::Time start = absl::Now();
  for (int t = 0; t < absl::GetFlag(FLAGS_trials); ++t) {
    const std::string& target = targets[t % targets.size()];
    const int flips = 1 + static_cast<int>(rng() % absl::GetFlag(FLAGS_max_flips));
    const Golden& from = OnLoggedStore(target) ? wal_golden : golden;
    absl::Status s = Trial(from, work + "/trial", target, flips, rng, &stats[target]);
    if (!s.ok()) {
      std::fprintf(stderr, "corruption_test: trial %d: %s\n", t, s.ToString().c_str());
      return 2;
    }
  }
  uint64_t violations = 0;
  for (const auto& [target, s] : stats) {
    std::printf("%s\n", Summary(target, s).c_str());
    violations += s.Violations(target);
    for (const auto& [code, text] : s.tally.first_error) {
      std::printf("  first %s (%s): %.300s\n", code.c_str(), target.c_str(), text.c_str());
    }
    if (!s.tally.first_wrong.empty()) {
      std::printf("  first wrong payload (%s): %.200s\n", target.c_str(),
                  s.tally.first_wrong.c_str());
    }
    for (const auto& [code, text] : s.salvage_tally.first_error) {
      std::printf("  first %s (%s, salvaged): %.400s\n", code.c_str(), target.c_str(),
                  text.c_str());
    }
    if (!s.salvage_tally.first_wrong.empty()) {
      std::printf("  first wrong payload (%s, salvaged): %.200s\n", target.c_str(),
                  s.salvage_tally.first_wrong.c_str());
    }
  }
  std::printf("corruption_test: %s seed=%llu records=%zu trials=%d violations=%llu "
              "seconds=%.1f\n",
              violations == 0 ? "PASS" : "FAIL", static_cast<unsigned long long>(seed),
              (wal ? wal_golden : golden).records.size(), absl::GetFlag(FLAGS_trials),
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
