// dict_bench: decoding speed with one hot dictionary vs thousands of cold ones, plain
// zstd vs dictlog's read path, on the loghub samples (issue 4; the seed experiment of
// zstd's contrib/largeNbDicts, extended). Everything runs in one process, so every
// ratio in the output is measured side by side.
//
//   bazel run -c opt //benchmarks:dict_bench -- --dir=$PWD/../shared/data/loghub --mode=quick --json=/tmp/dict_bench.json --csv=/tmp/dict_bench.csv
//
// Units: a record (one log line) or a block (consecutive lines of one file packed up to
// N bytes; reading one record decodes its block). Each unit is stored as dictlog stores
// it (codec::EncodeRecord). Dictionaries are trained on the first half of each file;
// units come from the second halves. "cold" cases use --dicts distinct in-memory copies
// of the dictionary (own tables, own id), each unit assigned one at random.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <iostream>
#include <numeric>
#include <optional>
#include <random>

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_format.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "training/compact.h"
#include "codec/dictionary_format.h"
#include "training/trainer.h"
#include "codec/batch_decoder.h"
#include "codec/record_codec.h"
#include "codec/zstd_contexts.h"
#include "server/dictionary/dictionary_cache.h"
#include "benchmarks/dict_bench_corpus.h"
#include "benchmarks/dict_bench_measure.h"

ABSL_FLAG(std::string, dir, "../shared/data/loghub", "directory of *.log files");
ABSL_FLAG(std::string, mode, "quick",
          "quick: records and 4 KB blocks, 16 KB dictionaries (about a minute); full: "
          "every unit and dictionary size of the issue (several minutes)");
ABSL_FLAG(std::vector<std::string>, dicts, {"10000"},
          "distinct dictionaries in the cold cases; a list (10,100,1000,10000) sweeps");
ABSL_FLAG(std::vector<std::string>, dict_modes,
          std::vector<std::string>({"full", "compact", "content"}),
          "dictionary forms to compare: full (zstd's trainer output), compact (sequence "
          "tables at accuracy log 5, raw literals; compact5..compact8 pick the log, a "
          "suffix h keeps Huffman literals), content (raw content, no tables and no id: "
          "plain zstd only)");
ABSL_FLAG(std::vector<std::string>, dict_bytes, {},
          "dictionary sizes to train (default: 16384 quick; 4096,8192,16384,112640 full)");
ABSL_FLAG(int, batch, 64, "records per MultiGet batch in dictlog's path");
ABSL_FLAG(int, level, 3, "zstd level (of every form but compact ones)");
ABSL_FLAG(int, compact_level, 9,
          "zstd level of frames made with compact dictionaries (a pool's "
          "compact_compression_level; dictlog's default 9)");
ABSL_FLAG(int, ops, 0, "decodes per measurement (0: 200k quick, 500k full)");
ABSL_FLAG(int, repeats, 0, "measurements per row, median reported (0: 3 quick, 5 full)");
ABSL_FLAG(std::string, csv, "", "write the rows as CSV here");
ABSL_FLAG(std::string, json, "", "write rows and targets as JSON here");

namespace dictlog::bench {
namespace {

// A dictionary form under comparison (--dict_modes).
struct DictMode {
  std::string name;
  int accuracy_log = 0;      // compact: the sequence tables' log; 0: as trained.
  bool raw_content = false;  // content: no entropy tables, no id.
  bool huffman_literals = false;  // compact tables but Huffman literals (suffix "h").
};

bool ParseDictMode(std::string name, DictMode* mode) {
  mode->name = name;
  if (absl::EndsWith(name, "h") && absl::StartsWith(name, "compact")) {
    mode->huffman_literals = true;
    name.pop_back();
  }
  if (name == "full") return true;
  if (name == "content") return mode->raw_content = true;
  if (name == "compact") return (mode->accuracy_log = 5);
  if (absl::StartsWith(name, "compact") && name.size() == 8 && name[7] >= '5' &&
      name[7] <= '8') {
    mode->accuracy_log = name[7] - '0';
    return true;
  }
  return false;
}

struct Settings {
  bool full;
  std::vector<int> dict_counts;
  std::vector<DictMode> modes;
  int batch, level, ops, repeats;
  int compact_level;
};

// Decoder copies of one dictionary form: formatted forms get their own ids (a
// DictionaryLookup, as dictlog's read path uses); raw content has no id, so plain zstd
// reaches its DDicts by index only.
class Copies {
 public:
  Copies(const std::string& dict, const DictMode& mode, int count) {
    if (mode.raw_content) {
      for (int i = 0; i < count; ++i) {
        raw_.push_back(ZSTD_createDDict_advanced(dict.data(), dict.size(), ZSTD_dlm_byCopy,
                                                 ZSTD_dct_rawContent, ZSTD_defaultCMem));
      }
      return;
    }
    std::vector<std::shared_ptr<const codec::DecoderDictionary>> copies;
    // dictlog's read path finds them in the server's cache, each pinned as its pool's
    // active dictionary is.
    cache_ = std::make_unique<dictionary::DictionaryCache>(
        [](uint32_t) { return absl::NotFoundError("not stored"); },
        dictionary::DictionaryCacheOptions{SIZE_MAX});
    for (int i = 0; i < count; ++i) {
      copies.push_back(*codec::DecoderDictionary::Create(WithId(dict, kBaseId + i)));
      cache_->Insert(copies.back());
      if (!cache_->Pin(kBaseId + i).ok()) std::abort();
    }
    lookup_ = std::make_unique<CopyLookup>(kBaseId, std::move(copies));
    per_record_.cache = cache_.get();
  }
  ~Copies() {
    for (ZSTD_DDict* d : raw_) ZSTD_freeDDict(d);
  }
  const ZSTD_DDict* at(size_t i) const { return lookup_ ? lookup_->at(i).ddict() : raw_[i]; }
  // dictlog's lookup: the server's dictionary cache.
  const codec::DictionaryLookup* lookup() const { return cache_.get(); }
  // The cache through Find only (FindMany's default: a lookup and reference per id).
  const codec::DictionaryLookup* per_record_lookup() const { return &per_record_; }
  size_t memory_bytes() const {
    if (lookup_) return lookup_->memory_bytes();
    size_t total = 0;
    for (const ZSTD_DDict* d : raw_) total += ZSTD_sizeof_DDict(d);
    return total;
  }

 private:
  std::unique_ptr<CopyLookup> lookup_;
  std::unique_ptr<dictionary::DictionaryCache> cache_;
  struct PerRecordLookup : codec::DictionaryLookup {
    const codec::DictionaryLookup* cache = nullptr;
    std::shared_ptr<const codec::DecoderDictionary> Find(uint32_t id) const override {
      return cache->Find(id);
    }
  } per_record_;
  std::vector<ZSTD_DDict*> raw_;
};

// Stored form of `payload` compressed with a raw-content dictionary, by the codec's
// rules (flags byte + magicless frame, or the payload raw if that is not smaller).
std::string EncodeWithRawContent(absl::string_view payload, const ZSTD_CDict* cdict) {
  ZSTD_CCtx* cctx = codec::ThreadCompressionContext();
  ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_format, ZSTD_f_zstd1_magicless);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1);
  ZSTD_CCtx_refCDict(cctx, cdict);
  std::string out(1 + ZSTD_compressBound(payload.size()), '\x01');
  const size_t n =
      ZSTD_compress2(cctx, out.data() + 1, out.size() - 1, payload.data(), payload.size());
  if (ZSTD_isError(n)) std::abort();
  out.resize(1 + n);
  if (out.size() < payload.size()) return out;
  const bool bare = payload.empty() || static_cast<uint8_t>(payload[0]) >= 0x08;
  return bare ? std::string(payload) : std::string(1, '\0') + std::string(payload);
}

class Bench {
 public:
  Bench(Corpus corpus, Settings s) : corpus_(std::move(corpus)), s_(s) {}

  // Ratio and no-dictionary speed of a unit size.
  void RunNone(const std::string& name, size_t block_bytes, bool speed) {
    auto units = std::make_shared<std::vector<Unit>>(
        Encode(MakeUnits(corpus_, block_bytes), nullptr));
    const double ratio = Ratio(*units);
    if (!speed) {
      rows_.push_back({name, 0, "-", "none", 0, "-", ratio, 0, 0});
      return;
    }
    std::vector<Case> cases;
    cases.push_back({{name, 0, "-", "none", 0, "uniform", ratio, 0, 0},
                     std::make_unique<AccessPattern>(*units, 1, false, 1),
                     [units](const std::vector<size_t>& picks) {
                       size_t bytes = 0;
                       for (size_t p : picks) bytes += PlainDecode((*units)[p], nullptr);
                       return bytes;
                     }});
    Finish(cases);
  }

  // Ratio of a unit size with a dictionary in each mode, and (if speed) every
  // dictionary case of every mode in one interleaved group per count of cold
  // dictionaries: one hot dictionary, plain zstd over the cold copies, and dictlog's
  // batch path (grouped, grouped + prefetch), uniform and Zipf.
  void RunDict(const std::string& name, size_t block_bytes, int dict_bytes, bool speed) {
    // As the server trains them: a compact dictionary at the level its frames use.
    const std::string trained = Dictionary(dict_bytes, s_.level);
    const std::string trained_compact = s_.compact_level == s_.level
                                            ? trained
                                            : Dictionary(dict_bytes, s_.compact_level);
    const std::vector<std::string> raws = MakeUnits(corpus_, block_bytes);
    struct Form {
      DictMode mode;
      std::string dict;
      std::vector<Unit> units;
      double ratio;
    };
    std::vector<Form> forms;
    for (const DictMode& mode : s_.modes) {
      Form form{mode, FormOf(mode.accuracy_log == 0 ? trained : trained_compact, mode),
                {}, 0};
      form.units = EncodeForm(raws, form.dict, mode);
      form.ratio = Ratio(form.units);
      forms.push_back(std::move(form));
    }
    if (!speed) {
      for (const Form& f : forms) {
        rows_.push_back({name, dict_bytes, f.mode.name, "hot", 1, "-", f.ratio, 0, 0});
      }
      return;
    }
    for (int dicts : s_.dict_counts) {
      std::vector<Case> cases;
      for (const Form& f : forms) {
        AddHotCase(name, dict_bytes, f.mode, f.ratio, f.dict, f.units, &cases);
        AddColdCases(name, dict_bytes, f.mode, f.ratio, f.dict, f.units, dicts, &cases);
      }
      Finish(cases);
    }
  }
  const std::vector<Row>& rows() const { return rows_; }

 private:
  static std::string FormOf(const std::string& trained, const DictMode& mode) {
    if (mode.raw_content) return std::string(codec::ParseDictionary(trained)->content);
    if (mode.accuracy_log == 0) return trained;
    absl::StatusOr<std::string> compact = trainer::MakeCompact(trained, {mode.accuracy_log});
    if (!compact.ok()) {
      std::cerr << "compact dictionary failed: " << compact.status() << "\n";
      std::abort();
    }
    return *compact;
  }

  std::vector<Unit> EncodeForm(const std::vector<std::string>& raws, const std::string& dict,
                               const DictMode& mode) const {
    if (!mode.raw_content) {
      const int level = mode.accuracy_log == 0 ? s_.level : s_.compact_level;
      return Encode(raws, codec::EncoderDictionary::Create(dict, level)->get(),
                    mode.accuracy_log == 0 ? std::nullopt
                                           : std::optional<bool>(mode.huffman_literals));
    }
    ZSTD_CDict* cdict = ZSTD_createCDict_advanced(
        dict.data(), dict.size(), ZSTD_dlm_byCopy, ZSTD_dct_rawContent,
        ZSTD_getCParams(s_.level, 0, dict.size()), ZSTD_defaultCMem);
    std::vector<Unit> units(raws.size());
    for (size_t i = 0; i < raws.size(); ++i) {
      units[i].raw = raws[i];
      units[i].stored = EncodeWithRawContent(raws[i], cdict);
    }
    ZSTD_freeCDict(cdict);
    return units;
  }

  std::vector<Unit> Encode(const std::vector<std::string>& raws,
                           const codec::EncoderDictionary* dict,
                           std::optional<bool> compress_literals = {}) const {
    std::vector<Unit> units(raws.size());
    for (size_t i = 0; i < raws.size(); ++i) {
      units[i].raw = raws[i];
      codec::EncodeOptions options;
      options.dictionary = dict;
      options.compression_level = s_.level;
      options.compress_literals = compress_literals;
      // Whole magicless frames: SetFrameDictId and PlainDecode read them in place.
      options.short_frame = false;
      if (!codec::EncodeRecord(raws[i], options, &units[i].stored).ok()) std::abort();
    }
    return units;
  }

  static double Ratio(const std::vector<Unit>& units) {
    double raw = 0, stored = 0;
    for (const Unit& u : units) {
      raw += u.raw.size();
      stored += u.stored.size();
    }
    return raw / stored;
  }

  std::string Dictionary(int dict_bytes, int level) {
    auto dict = trainer::TrainDictionary(
        corpus_.train, {static_cast<size_t>(dict_bytes), kBaseId, level});
    if (!dict.ok()) {
      std::cerr << "training failed: " << dict.status() << "\n";
      std::abort();
    }
    return *dict;
  }

  static void AddHotCase(const std::string& name, int dict_bytes, const DictMode& mode,
                         double ratio, const std::string& dict, const std::vector<Unit>& base,
                         std::vector<Case>* cases) {
    auto hot = std::make_shared<Copies>(dict, mode, 1);
    // Frames name the one copy's id (content-only forms carry none: left as they are).
    auto units = std::make_shared<std::vector<Unit>>(base);
    for (Unit& unit : *units) SetFrameDictId(&unit.stored, kBaseId);
    cases->push_back({{name, dict_bytes, mode.name, "hot", 1, "uniform", ratio, 0, 0},
                      std::make_unique<AccessPattern>(*units, 1, false, 2),
                      [units, hot](const std::vector<size_t>& picks) {
                        size_t bytes = 0;
                        for (size_t p : picks) bytes += PlainDecode((*units)[p], hot->at(0));
                        return bytes;
                      }});
    if (mode.raw_content) return;
    // The same one hot dictionary through dictlog's MultiGet decode.
    cases->push_back({{name, dict_bytes, mode.name, "dictlog_hot", 1, "uniform", ratio, 0, 0},
                      std::make_unique<AccessPattern>(*units, 1, false, 2),
                      [units, hot](const std::vector<size_t>& picks) {
                        return DictlogDecode(*units, picks, *hot->lookup(), {});
                      }});
  }

  void AddColdCases(const std::string& name, int dict_bytes, const DictMode& mode,
                    double ratio, const std::string& dict, const std::vector<Unit>& base,
                    int dicts, std::vector<Case>* cases) {
    auto copies = std::make_shared<Copies>(dict, mode, dicts);
    auto units = std::make_shared<std::vector<Unit>>(base);
    std::mt19937 rng(3);
    for (Unit& unit : *units) {
      unit.dict_index = rng() % dicts;
      if (!mode.raw_content) SetFrameDictId(&unit.stored, kBaseId + unit.dict_index);
    }
    std::cout << absl::StrFormat("  (%s: %d dictionary copies, %.1f MB of decoding state)\n",
                                 mode.name, dicts, copies->memory_bytes() / 1e6);
    for (const bool zipf : {false, true}) {
      const std::string dist = zipf ? "zipf:0.99" : "uniform";
      const uint32_t seed = zipf ? 5 : 4;
      cases->push_back({{name, dict_bytes, mode.name, "cold_plain", dicts, dist, ratio, 0, 0},
                        std::make_unique<AccessPattern>(*units, dicts, zipf, seed),
                        [units, copies](const std::vector<size_t>& picks) {
                          size_t bytes = 0;
                          for (size_t p : picks) {
                            const Unit& u = (*units)[p];
                            bytes += PlainDecode(u, copies->at(u.dict_index));
                          }
                          return bytes;
                        }});
      if (mode.raw_content) continue;  // No ids: dictlog's path cannot read these.
      // dictlog's MultiGet decode: in request order (the server's default), with the
      // next compact record's tables prefetched (the default), without the prefetch,
      // and grouped by dictionary.
      // "dictlog_refs": the same, but one cache lookup and reference per record, as
      // before FindMany.
      struct Path {
        const char* kase;
        codec::BatchDecodeOptions options;
        bool per_record_refs;
      };
      const Path paths[] = {{"dictlog", {}, false},
                            {"dictlog_refs", {}, true},
                            {"dictlog_noprefetch", {false, false}, false},
                            {"dictlog_group", {true, false}, false}};
      for (const Path& path : paths) {
        const codec::DictionaryLookup* lookup =
            path.per_record_refs ? copies->per_record_lookup() : copies->lookup();
        cases->push_back(
            {{name, dict_bytes, mode.name, path.kase, dicts, dist, ratio, 0, 0},
             std::make_unique<AccessPattern>(*units, dicts, zipf, seed),
             [units, copies, lookup, options = path.options](const std::vector<size_t>& picks) {
               return DictlogDecode(*units, picks, *lookup, options);
             }});
      }
    }
  }

  void Finish(std::vector<Case>& cases) {
    MeasureInterleaved(cases, s_.ops, s_.repeats, s_.batch);
    for (const Case& c : cases) {
      rows_.push_back(c.row);
      Print(c.row);
    }
  }

  static void Print(const Row& r) {
    std::cout << absl::StrFormat(
        "  %-9s %6d %-9s %-23s %6d %-10s ratio %5.2f %8.1f MB/s %10.0f rec/s\n", r.unit,
        r.dict_bytes, r.dict_mode, r.kase, r.dicts, r.dist, r.ratio, r.mb_per_s,
        r.records_per_s);
    std::cout.flush();
  }

  Corpus corpus_;
  Settings s_;
  std::vector<Row> rows_;
};

// The row of `dicts` cold dictionaries (0: any) in dictionary form `mode`, and in
// *hot the hot row of form `hot_mode` measured in the same interleaved group.
const Row* FindRow(const std::vector<Row>& rows, const std::string& unit, int dict_bytes,
                   const std::string& mode, const std::string& kase, const std::string& dist,
                   int dicts = 0, const Row** hot = nullptr,
                   const std::string& hot_mode = "full") {
  const Row* last_hot = nullptr;
  for (const Row& r : rows) {
    if (r.kase == "hot" && r.unit == unit && r.dict_bytes == dict_bytes &&
        r.dict_mode == hot_mode) {
      last_hot = &r;
    }
    if (r.unit == unit && r.dict_bytes == dict_bytes && r.dict_mode == mode &&
        r.kase == kase && r.dist == dist && (dicts == 0 || r.dicts == dicts)) {
      if (hot != nullptr) *hot = last_hot;
      return &r;
    }
  }
  return nullptr;
}

struct Target {
  std::string name;
  double value, threshold;
};

// dictlog's MultiGet path as the server runs it (see codec/batch_decoder.h).
constexpr char kServerCase[] = "dictlog";

std::vector<Target> Targets(const std::vector<Row>& rows, int n) {
  std::vector<Target> targets;
  auto add = [&](const std::string& name, const Row* a, const Row* b, bool by_ratio,
                 double threshold) {
    if (a == nullptr || b == nullptr) return;
    const double value = by_ratio ? a->ratio / b->ratio : a->records_per_s / b->records_per_s;
    targets.push_back({name, value, threshold});
  };
  const std::string over = absl::StrCat(" over ", n, " dicts");
  for (const std::string mode : {"full", "compact"}) {
    const Row* hot = nullptr;
    const Row* zipf =
        FindRow(rows, "record", 16384, mode, kServerCase, "zipf:0.99", n, &hot, "full");
    add(absl::StrCat("zipf MultiGet(64)", over, ", ", mode, " / one hot full dictionary, "
                     "records/s"),
        zipf, hot, false, 0.70);
    const Row* uniform = FindRow(rows, "record", 16384, mode, kServerCase, "uniform", n);
    const Row* plain = FindRow(rows, "record", 16384, "full", "cold_plain", "uniform", n);
    add(absl::StrCat("uniform MultiGet(64)", over, ", ", mode, " / plain zstd with full "
                     "dictionaries, records/s"),
        uniform, plain, false, mode == "full" ? 1.3 : 2.5);
  }
  add("stored ratio, compact / full dictionary (records)",
      FindRow(rows, "record", 16384, "compact", "hot", "uniform"),
      FindRow(rows, "record", 16384, "full", "hot", "uniform"), true, 0.95);
  add("single record (hot dictionary) / one record from a no-dict 16 KB block, records/s",
      FindRow(rows, "record", 16384, "full", "hot", "uniform"),
      FindRow(rows, "block16k", 0, "-", "none", "uniform"), false, 4.0);
  add("ratio: 2 KB blocks + 16 KB dict / no-dict 4 KB blocks",
      FindRow(rows, "block2k", 16384, "full", "hot", "-"),
      FindRow(rows, "block4k", 0, "-", "none", "-"), true, 1.0);
  return targets;
}

void WriteOutputs(const std::vector<Row>& rows, const std::vector<Target>& targets,
                  const Settings& s) {
  std::cout << "\n| unit | dict_bytes | dict_mode | case | dicts | dist | ratio | MB/s | "
               "records/s |\n|---|---:|---|---|---:|---|---:|---:|---:|\n";
  for (const Row& r : rows) {
    std::cout << absl::StrFormat("| %s | %d | %s | %s | %d | %s | %.3f | %.1f | %.0f |\n",
                                 r.unit, r.dict_bytes, r.dict_mode, r.kase, r.dicts, r.dist,
                                 r.ratio, r.mb_per_s, r.records_per_s);
  }
  std::cout << "\n| target | measured | needed | |\n|---|---:|---:|---|\n";
  for (const Target& t : targets) {
    std::cout << absl::StrFormat("| %s | %.2f | >= %.2f | %s |\n", t.name, t.value,
                                 t.threshold, t.value >= t.threshold ? "pass" : "FAIL");
  }
  if (const std::string path = absl::GetFlag(FLAGS_csv); !path.empty()) {
    std::ofstream out(path);
    out << "unit,dict_bytes,dict_mode,case,dicts,dist,ratio,mb_per_s,records_per_s\n";
    for (const Row& r : rows) {
      out << absl::StrFormat("%s,%d,%s,%s,%d,%s,%.4f,%.2f,%.0f\n", r.unit, r.dict_bytes,
                             r.dict_mode, r.kase, r.dicts, r.dist, r.ratio, r.mb_per_s,
                             r.records_per_s);
    }
  }
  if (const std::string path = absl::GetFlag(FLAGS_json); !path.empty()) {
    std::ofstream out(path);
    out << absl::StrFormat("{\"mode\":\"%s\",\"ops\":%d,\"repeats\":%d,\"rows\":[",
                           s.full ? "full" : "quick", s.ops, s.repeats);
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      out << absl::StrFormat(
          "%s{\"unit\":\"%s\",\"dict_bytes\":%d,\"dict_mode\":\"%s\",\"case\":\"%s\","
          "\"dicts\":%d,\"dist\":\"%s\",\"ratio\":%.4f,\"mb_per_s\":%.2f,"
          "\"records_per_s\":%.0f}",
          i ? "," : "", r.unit, r.dict_bytes, r.dict_mode, r.kase, r.dicts, r.dist, r.ratio,
          r.mb_per_s,
          r.records_per_s);
    }
    out << "],\"targets\":{";
    for (size_t i = 0; i < targets.size(); ++i) {
      out << absl::StrFormat("%s\"%s\":{\"value\":%.4f,\"threshold\":%.2f,\"pass\":%s}",
                             i ? "," : "", targets[i].name, targets[i].value,
                             targets[i].threshold,
                             targets[i].value >= targets[i].threshold ? "true" : "false");
    }
    out << "}}\n";
  }
}

int Run() {
  const bool full = absl::GetFlag(FLAGS_mode) == "full";
  if (!full && absl::GetFlag(FLAGS_mode) != "quick") {
    std::cerr << "--mode must be quick or full\n";
    return 2;
  }
  Settings s{full, {}, {}, absl::GetFlag(FLAGS_batch), absl::GetFlag(FLAGS_level),
             absl::GetFlag(FLAGS_ops), absl::GetFlag(FLAGS_repeats),
             absl::GetFlag(FLAGS_compact_level)};
  if (s.ops == 0) s.ops = full ? 500000 : 200000;
  if (s.repeats == 0) s.repeats = full ? 5 : 3;
  for (const std::string& d : absl::GetFlag(FLAGS_dicts)) {
    int n = 0;
    if (!absl::SimpleAtoi(d, &n) || n < 1 || n > 32768) {
      std::cerr << "--dicts: each count must lie in 1..32768\n";
      return 2;
    }
    s.dict_counts.push_back(n);
  }
  for (const std::string& name : absl::GetFlag(FLAGS_dict_modes)) {
    DictMode mode;
    if (!ParseDictMode(name, &mode)) {
      std::cerr << "--dict_modes: each must be full, compact, compact5..compact8 or "
                   "content\n";
      return 2;
    }
    s.modes.push_back(mode);
  }
  if (s.batch < 1) {
    std::cerr << "--batch must be positive\n";
    return 2;
  }
  Corpus corpus = Load(absl::GetFlag(FLAGS_dir));
  if (corpus.eval.empty()) {
    std::cerr << "no .log files in " << absl::GetFlag(FLAGS_dir) << "\n";
    return 1;
  }
  std::cout << absl::StrFormat("dict_bench %s: %d ops x %d repeats (interleaved, median), "
                               "batch %d, level %d, cold dictionaries: %s\n",
                               full ? "full" : "quick", s.ops, s.repeats, s.batch, s.level,
                               absl::StrJoin(s.dict_counts, ","));
  Bench bench(std::move(corpus), s);
  const std::vector<std::pair<std::string, size_t>> units =
      full ? std::vector<std::pair<std::string, size_t>>{{"record", 0}, {"block1k", 1024},
                                                         {"block4k", 4096},
                                                         {"block8k", 8192}}
           : std::vector<std::pair<std::string, size_t>>{{"record", 0}};
  std::vector<int> dict_sizes =
      full ? std::vector<int>{4096, 8192, 16384, 112640} : std::vector<int>{16384};
  if (!absl::GetFlag(FLAGS_dict_bytes).empty()) {
    dict_sizes.clear();
    for (const std::string& d : absl::GetFlag(FLAGS_dict_bytes)) {
      int n = 0;
      if (!absl::SimpleAtoi(d, &n) || n < 1024 || n > (1 << 20)) {
        std::cerr << "--dict_bytes: each size must lie in 1024..1048576\n";
        return 2;
      }
      dict_sizes.push_back(n);
    }
  }
  for (const auto& [name, bytes] : units) {
    bench.RunNone(name, bytes, true);
    for (int dict_bytes : dict_sizes) bench.RunDict(name, bytes, dict_bytes, true);
  }
  bench.RunNone("block16k", 16384, true);
  bench.RunNone("block4k", 4096, false);
  bench.RunDict("block2k", 2048, 16384, false);
  WriteOutputs(bench.rows(),
               Targets(bench.rows(), *std::max_element(s.dict_counts.begin(),
                                                       s.dict_counts.end())),
               s);
  return 0;
}

}  // namespace
}  // namespace dictlog::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return dictlog::bench::Run();
}
