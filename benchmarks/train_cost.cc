// train_cost: what one dictionary training costs and what it gives out of sample, for
// zstd's fastCover optimizer (the trainer before ADR 0037), dictlog's trainer (one
// fastCover pass at a fixed segment size), COVER and a sweep of segment sizes.
//
// Per loghub file, the first half is the pool's data (--copies > 1: that half that many
// times, each copy's lines prefixed "c<k> " as dictlog-bench load does, so the sample is
// the size a bulk-loaded pool trains on: 12 copies are about 1.6 MB, the sample budget
// of a 16 KiB dictionary); the second half is compressed one record at a time with each
// pipeline's dictionary (codec::EncodeRecord, level 3). Printed per pipeline: thread CPU
// seconds summed over the files, the geometric mean of the files' ratios and, for the
// pipelines that evaluate, of evaluated ratio / the ratio then measured on the second
// half (1: the evaluation told the truth).
//
//   bazel run -c opt //benchmarks:train_cost -- --dir=$PWD/../shared/data/loghub --copies=1,12 --csv=$PWD/benchmarks/results/train_cost/train_cost.csv
#include <time.h>

#define ZDICT_STATIC_LINKING_ONLY
#include <zdict.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "codec/record_codec.h"
#include "codec/dictionary.h"
#include "training/files.h"
#include "training/evaluate.h"
#include "training/trainer.h"

ABSL_FLAG(std::string, dir, "../shared/data/loghub", "directory of *.log files");
ABSL_FLAG(std::string, copies, "1,12",
          "comma-separated: copies of each file's first half in the training sample");
ABSL_FLAG(int, dict_bytes, 16384, "dictionary size");
ABSL_FLAG(bool, sweep, false, "also train at fixed segment sizes 64..2000 (d=8 and d=6)");
ABSL_FLAG(std::string, csv, "", "also write one row per file and pipeline to this CSV");

namespace dictlog {
namespace {

constexpr uint32_t kId = 40000;
constexpr int kLevel = 3;

double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

// Payload bytes / stored bytes of `records`, each compressed alone with `dictionary`;
// 0 if the dictionary does not load.
double Ratio(const std::vector<std::string>& records, const std::string& dictionary) {
  auto encoder = codec::EncoderDictionary::Create(dictionary, kLevel);
  if (!encoder.ok()) return 0;
  codec::EncodeOptions options;
  options.dictionary = encoder->get();
  uint64_t raw = 0, stored = 0;
  std::string out;
  for (const std::string& r : records) {
    out.clear();
    if (!codec::EncodeRecord(r, options, &out).ok()) return 0;
    raw += r.size();
    stored += out.size();
  }
  return stored == 0 ? 0 : static_cast<double>(raw) / stored;
}

std::string Joined(const std::vector<std::string>& samples, std::vector<size_t>* sizes) {
  std::string joined;
  for (const std::string& s : samples) {
    joined += s;
    sizes->push_back(s.size());
  }
  return joined;
}

// zstd's optimizer as the trainer called it before ADR 0037: k over 4 steps.
std::string Optimizer(const std::vector<std::string>& samples, unsigned d) {
  std::vector<size_t> sizes;
  const std::string joined = Joined(samples, &sizes);
  ZDICT_fastCover_params_t p = {};
  p.d = d;
  p.steps = 4;
  p.nbThreads = 1;
  p.zParams.compressionLevel = kLevel;
  p.zParams.dictID = kId;
  std::string dict(absl::GetFlag(FLAGS_dict_bytes), '\0');
  const size_t n = ZDICT_optimizeTrainFromBuffer_fastCover(
      dict.data(), dict.size(), joined.data(), sizes.data(), sizes.size(), &p);
  if (ZDICT_isError(n)) return "";
  dict.resize(n);
  return dict;
}

// One fastCover pass at segment size k.
std::string FixedK(const std::vector<std::string>& samples, unsigned k, unsigned d) {
  std::vector<size_t> sizes;
  const std::string joined = Joined(samples, &sizes);
  ZDICT_fastCover_params_t p = {};
  p.k = k;
  p.d = d;
  p.zParams.compressionLevel = kLevel;
  p.zParams.dictID = kId;
  std::string dict(absl::GetFlag(FLAGS_dict_bytes), '\0');
  const size_t n = ZDICT_trainFromBuffer_fastCover(dict.data(), dict.size(), joined.data(),
                                                   sizes.data(), sizes.size(), p);
  if (ZDICT_isError(n)) return "";
  dict.resize(n);
  return dict;
}

std::string TrainWith(const std::vector<std::string>& samples,
                      trainer::TrainOptions::Algorithm algorithm, unsigned d) {
  trainer::TrainOptions options;
  options.dictionary_id = kId;
  options.dictionary_bytes = absl::GetFlag(FLAGS_dict_bytes);
  options.algorithm = algorithm;
  options.d = d;
  absl::StatusOr<std::string> dict = trainer::TrainDictionary(samples, options);
  return dict.ok() ? *dict : "";
}

// A dictionary, and the ratio its training's evaluation promised (0: none).
struct Trained {
  std::string dictionary;
  double evaluated = 0;
};

// What automatic training runs per candidate: every 10th record held out, two passes,
// evaluation.
Trained TrainedAndEvaluated(const std::vector<std::string>& samples) {
  trainer::TrainOptions options;
  options.dictionary_id = kId;
  options.dictionary_bytes = absl::GetFlag(FLAGS_dict_bytes);
  absl::StatusOr<trainer::TrainResult> result = trainer::TrainAndEvaluate(samples, options, "");
  if (!result.ok()) return {};
  return {result->dictionary, result->evaluation.candidate_ratio};
}

// The evaluation ADR 0037 tried and did not take: the newest tenth held out, the older
// rest trained on.
Trained NewestTenthHeldOut(const std::vector<std::string>& samples) {
  const size_t held = std::max<size_t>(1, samples.size() / 10);
  const std::vector<std::string> train(samples.begin(), samples.end() - held);
  const std::vector<std::string> held_out(samples.end() - held, samples.end());
  const std::string dictionary = TrainWith(train, trainer::TrainOptions::Algorithm::kFastCover, 8);
  absl::StatusOr<trainer::Evaluation> evaluation = trainer::Evaluate(held_out, dictionary, "", kLevel);
  return {dictionary, evaluation.ok() ? evaluation->candidate_ratio : 0};
}

struct Pipeline {
  std::string name;
  std::function<Trained(const std::vector<std::string>&)> train;
};

std::vector<Pipeline> Pipelines() {
  using Algorithm = trainer::TrainOptions::Algorithm;
  std::vector<Pipeline> out = {
      {"zstd optimizer (k: 4 steps, 75/25 split) d8",
       [](const auto& s) { return Trained{Optimizer(s, 8)}; }},
      {"zstd optimizer (k: 4 steps, 75/25 split) d6",
       [](const auto& s) { return Trained{Optimizer(s, 6)}; }},
      {"TrainDictionary fastCover d8",
       [](const auto& s) { return Trained{TrainWith(s, Algorithm::kFastCover, 8)}; }},
      {"TrainDictionary fastCover d6",
       [](const auto& s) { return Trained{TrainWith(s, Algorithm::kFastCover, 6)}; }},
      {"TrainDictionary COVER d8",
       [](const auto& s) { return Trained{TrainWith(s, Algorithm::kCover, 8)}; }},
      {"TrainAndEvaluate fastCover d8 (every 10th held out)", &TrainedAndEvaluated},
      {"newest tenth held out, fastCover d8 on the rest", &NewestTenthHeldOut},
  };
  if (absl::GetFlag(FLAGS_sweep)) {
    for (unsigned k : {64u, 128u, 256u, 512u, 1024u, 2000u}) {
      for (unsigned d : {8u, 6u}) {
        out.push_back({absl::StrCat("fixed k=", k, " d", d),
                       [k, d](const auto& s) { return Trained{FixedK(s, k, d)}; }});
      }
    }
  }
  return out;
}

// The file's first half `copies` times (copy c > 0 prefixed "c<c> ").
std::vector<std::string> Sample(const std::vector<std::string>& first_half, int copies) {
  std::vector<std::string> sample;
  for (int c = 0; c < copies; ++c) {
    const std::string prefix = c == 0 ? "" : absl::StrCat("c", c, " ");
    for (const std::string& line : first_half) sample.push_back(prefix + line);
  }
  return sample;
}

int Run() {
  trainer::LineOptions line_options;
  auto files = trainer::ReadLogFiles(absl::GetFlag(FLAGS_dir), line_options);
  if (!files.ok() || files->empty()) {
    std::fprintf(stderr, "train_cost: no *.log files in --dir: %s\n",
                 files.ok() ? "none" : files.status().ToString().c_str());
    return 1;
  }
  std::vector<int> copies_list;
  for (absl::string_view part : absl::StrSplit(absl::GetFlag(FLAGS_copies), ',')) {
    int copies = 0;
    if (!absl::SimpleAtoi(part, &copies) || copies < 1) {
      std::fprintf(stderr, "train_cost: --copies: not a list of counts >= 1\n");
      return 2;
    }
    copies_list.push_back(copies);
  }
  std::ofstream csv;
  if (!absl::GetFlag(FLAGS_csv).empty()) {
    csv.open(absl::GetFlag(FLAGS_csv));
    csv << "copies,dict_bytes,file,pipeline,cpu_s,ratio,evaluated_ratio\n";
  }
  const std::vector<Pipeline> pipelines = Pipelines();
  for (int copies : copies_list) {
    std::vector<double> cpu(pipelines.size()), log_ratio(pipelines.size()),
        log_bias(pipelines.size());
    size_t sample_bytes = 0;
    for (const trainer::LogFile& file : *files) {
      std::vector<std::string> lines = file.lines;
      for (std::string& line : lines) {  // loghub's CRLF, as dictlog append strips it.
        if (!line.empty() && line.back() == '\r') line.pop_back();
      }
      const size_t half = lines.size() / 2;
      const std::vector<std::string> sample =
          Sample({lines.begin(), lines.begin() + half}, copies);
      for (const std::string& s : sample) sample_bytes += s.size();
      const std::vector<std::string> test(lines.begin() + half, lines.end());
      for (size_t p = 0; p < pipelines.size(); ++p) {
        const double start = CpuSeconds();
        const Trained trained = pipelines[p].train(sample);
        const double seconds = CpuSeconds() - start;
        const double ratio = trained.dictionary.empty() ? 0 : Ratio(test, trained.dictionary);
        cpu[p] += seconds;
        log_ratio[p] += std::log(std::max(ratio, 1e-9));
        if (trained.evaluated > 0 && ratio > 0) log_bias[p] += std::log(trained.evaluated / ratio);
        if (csv.is_open()) {
          csv << copies << "," << absl::GetFlag(FLAGS_dict_bytes) << "," << file.name << ",\""
              << pipelines[p].name << "\"," << seconds << "," << ratio << ","
              << trained.evaluated << "\n";
        }
      }
    }
    std::printf("copies=%d (%.0f KB sample per file), %d-byte dictionaries\n", copies,
                sample_bytes / 1e3 / files->size(), absl::GetFlag(FLAGS_dict_bytes));
    std::printf("  %-62s %8s %9s %15s\n", "pipeline", "cpu_s", "geo ratio",
                "evaluated/real");
    for (size_t p = 0; p < pipelines.size(); ++p) {
      std::printf("  %-62s %8.3f %9.4f", pipelines[p].name.c_str(), cpu[p],
                  std::exp(log_ratio[p] / files->size()));
      if (log_bias[p] != 0) std::printf(" %15.3f", std::exp(log_bias[p] / files->size()));
      std::printf("\n");
    }
  }
  return 0;
}

}  // namespace
}  // namespace dictlog

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return dictlog::Run();
}
