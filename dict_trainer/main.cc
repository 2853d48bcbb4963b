// dict_trainer: the offline dictionary trainer. Reads log records (one per line) from
// files and directories, trains a zstd dictionary with a dictlog dictionary id on 90%
// of them (TrainAndEvaluate), writes it atomically, and prints how it compresses the
// held-out 10% against no dictionary or a baseline dictionary.
#include <unistd.h>
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <chrono>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "common/command_line.h"
#include "common/home_path.h"
#include "common/status_macros.h"
#include "common/atomic_file.h"
#include "training/files.h"
#include "dict_trainer/progress_line.h"
#include "training/report.h"
#include "training/trainer.h"
#include "codec/dictionary.h"

ABSL_FLAG(std::string, out, "", "required: file to write the dictionary to (via FILE.tmp "
          "and a rename)");
ABSL_FLAG(uint64_t, size, 16384, "target dictionary size in bytes (at least 256)");
ABSL_FLAG(uint32_t, id, 0, "dictionary id in [32768, 2^31-1]; 0: a random id in "
          "32768..65535 (ids below 65536 take 2 bytes in each frame header, larger 4)");
ABSL_FLAG(bool, compact, false, "write a compact dictionary (low-precision sequence "
          "tables; frames keep literals raw): several times faster to decode when cold, "
          "about 15% lower ratio (docs/adr/0005)");
ABSL_FLAG(int, level, 3, "zstd compression level the dictionary is tuned and evaluated "
          "at (1..22, or negative fast levels)");
ABSL_FLAG(std::string, baseline, "", "dictionary file to compare with (e.g. the pool's "
          "active one); empty: compare with no dictionary");

namespace dictlog::trainer {
namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

constexpr char kUsage[] = R"(trains a zstd dictionary for a dictlog pool.

Usage: dict_trainer --out=FILE [--size=16384] [--id=N] [--level=3] [--baseline=DICTFILE]
                    INPUT...

Each INPUT is a file with one record per line (the '\n' is not part of the record), or
a directory: every regular file in it, sorted by name, each line a record.

Every 10th record is held out for evaluation; the dictionary is trained on the rest in
two passes (the records that a first dictionary does not shrink are excluded from the
second). The dictionary is a standard zstd dictionary carrying the id --id (default:
a random id in 32768..65535, which frames store in 2 bytes; the id used is printed). It is written to
FILE.tmp and renamed to FILE. Progress goes to stderr; stdout gets the dictionary line
and a table comparing the stored size (dictlog's record format) of the held-out
records with no dictionary (or with --baseline) and with the new dictionary, the
candidate's compression and decompression speed (MB = 1e6 bytes of payload), and the
gain: candidate ratio / baseline ratio - 1.

--out and --baseline may start with ~/ (the home directory). --version prints the
versions of dictlog and zstd.

Exit status: 0 success (--help, --version too); 1 training or writing failed (e.g.
too little data: the message says how much is needed); 2 usage error (no --out, no
INPUT, an unreadable input or baseline, an unknown flag or a bad flag value).

Example:
  dict_trainer --out=hdfs.dict ../shared/data/loghub/HDFS.log)";

int UsageError(absl::string_view message) {
  std::cerr << "dict_trainer: " << message << "\n(see dict_trainer --help)\n";
  return kExitUsage;
}

int Failure(const absl::Status& status) {
  std::cerr << "dict_trainer: " << status << "\n";
  return kExitFailure;
}

// The training options from --size, --id and --level; INVALID_ARGUMENT if one is bad.
absl::StatusOr<TrainOptions> OptionsFromFlags() {
  TrainOptions options;
  options.dictionary_bytes = absl::GetFlag(FLAGS_size);
  if (options.dictionary_bytes < 256 || options.dictionary_bytes > (1u << 30)) {
    return absl::InvalidArgumentError("--size must lie in [256, 2^30]");
  }
  options.dictionary_id = absl::GetFlag(FLAGS_id);
  if (options.dictionary_id == 0) {
    absl::BitGen random;
    options.dictionary_id =
        codec::kMinDictionaryId + absl::Uniform<uint32_t>(random, 0u, 32768u);
  } else if (options.dictionary_id < codec::kMinDictionaryId ||
             options.dictionary_id > codec::kMaxDictionaryId) {
    return absl::InvalidArgumentError(absl::StrCat("--id must lie in [",
                                                   codec::kMinDictionaryId, ", ",
                                                   codec::kMaxDictionaryId, "]"));
  }
  options.compression_level = absl::GetFlag(FLAGS_level);
  options.compact = absl::GetFlag(FLAGS_compact);
  if (options.compression_level == 0 || options.compression_level < ZSTD_minCLevel() ||
      options.compression_level > ZSTD_maxCLevel()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--level must be 1..", ZSTD_maxCLevel(), " or a negative level down to ",
        ZSTD_minCLevel()));
  }
  return options;
}

// The --baseline dictionary's bytes (empty without --baseline); an error if it cannot
// be read or is not a dictionary.
absl::StatusOr<std::string> ReadBaseline() {
  const std::string path = absl::GetFlag(FLAGS_baseline);
  if (path.empty()) return std::string();
  ASSIGN_OR_RETURN(std::string baseline, ReadFile(path));
  if (absl::StatusOr<uint32_t> id = codec::DictionaryIdOf(baseline); !id.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--baseline=", path, ": ", id.status().message()));
  }
  return baseline;
}

// Every record of every input, showing files read, records and bytes on `progress`.
absl::StatusOr<std::vector<std::string>> ReadRecords(
    const std::vector<std::string>& inputs, ProgressLine* progress) {
  ASSIGN_OR_RETURN(const std::vector<std::string> files, ExpandInputs(inputs));
  std::vector<std::string> records;
  uint64_t bytes = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    ASSIGN_OR_RETURN(const std::string content, ReadFile(files[i]));
    const size_t before = records.size();
    AppendLines(content, &records);
    for (size_t r = before; r < records.size(); ++r) bytes += records[r].size();
    progress->Show("read", absl::StrFormat("dict_trainer: read %u/%u files, %u records, "
                                           "%u bytes", i + 1, files.size(),
                                           records.size(), bytes));
  }
  progress->Finish();
  return records;
}

// A TrainAndEvaluate progress callback showing stage, percentage and elapsed time.
Progress StageProgress(ProgressLine* progress) {
  const auto start = std::chrono::steady_clock::now();
  return [progress, start](absl::string_view stage, double fraction) {
    const std::chrono::duration<double> elapsed =
        std::chrono::steady_clock::now() - start;
    progress->Show(stage, absl::StrFormat("dict_trainer: %-8s %3.0f%%  (%.2f s)", stage,
                                          fraction * 100, elapsed.count()));
  };
}

int Main(int argc, char** argv) {
  const std::vector<char*> args =
      ParseCommandLine(argc, argv, {"dict_trainer/main.cc", kUsage,
                                    {{"zstd", ZSTD_versionString()}}});
  ExpandHomeInFlags({&FLAGS_out, &FLAGS_baseline});
  const std::vector<std::string> inputs(args.begin() + 1, args.end());
  const std::string out = absl::GetFlag(FLAGS_out);
  if (out.empty()) return UsageError("--out=FILE is required");
  if (inputs.empty()) {
    return UsageError("at least one INPUT file or directory is required");
  }
  const absl::StatusOr<TrainOptions> options = OptionsFromFlags();
  if (!options.ok()) return UsageError(options.status().message());
  const absl::StatusOr<std::string> baseline = ReadBaseline();
  if (!baseline.ok()) return UsageError(baseline.status().message());

  ProgressLine progress(std::cerr, ::isatty(STDERR_FILENO) == 1);
  const absl::StatusOr<std::vector<std::string>> records = ReadRecords(inputs, &progress);
  if (!records.ok()) return UsageError(records.status().message());
  std::cerr << "dict_trainer: dictionary id " << options->dictionary_id << "\n";
  const absl::StatusOr<TrainResult> result =
      TrainAndEvaluate(*records, *options, *baseline, StageProgress(&progress));
  progress.Finish();
  if (!result.ok()) return Failure(result.status());
  if (absl::Status status = WriteFileAtomically(out, result->dictionary); !status.ok()) {
    return Failure(status);
  }
  std::cout << FormatReport(*result, {out, options->dictionary_id,
                                      absl::GetFlag(FLAGS_baseline)});
  return 0;
}

}  // namespace
}  // namespace dictlog::trainer

int main(int argc, char** argv) { return dictlog::trainer::Main(argc, argv); }
