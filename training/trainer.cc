#include "training/trainer.h"

#define ZDICT_STATIC_LINKING_ONLY
#include <zdict.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/base/attributes.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/status_macros.h"
#include "training/compact.h"
#include "codec/dictionary.h"
#include "codec/record_codec.h"

namespace dictlog::trainer {
namespace {

// Below a few times the dictionary size there is too little to learn from (zstd
// warns below 10x and recommends ~100x; the loghub half-files are 8-12x and train
// useful dictionaries, so 4x is the hard floor).
constexpr size_t kMinSampleBytesPerDictByte = 4;

absl::Status CheckInput(const std::vector<std::string>& samples,
                        const TrainOptions& options, size_t total_bytes) {
  if (options.dictionary_id < codec::kMinDictionaryId ||
      options.dictionary_id > codec::kMaxDictionaryId) {
    return absl::InvalidArgumentError(
        absl::StrCat("dictionary id ", options.dictionary_id, " is outside [",
                     codec::kMinDictionaryId, ", ", codec::kMaxDictionaryId, "]"));
  }
  if (options.d != 6 && options.d != 8) {  // fastCover takes no other.
    return absl::InvalidArgumentError(absl::StrCat("d must be 6 or 8, not ", options.d));
  }
  if (options.dictionary_bytes < 256) {
    return absl::InvalidArgumentError("dictionary_bytes must be at least 256");
  }
  if (samples.size() < kMinSamples) {
    return absl::FailedPreconditionError(absl::StrCat(
        "training needs at least ", kMinSamples, " records; have ", samples.size()));
  }
  const size_t needed = options.dictionary_bytes * kMinSampleBytesPerDictByte;
  if (total_bytes < needed) {
    return absl::FailedPreconditionError(absl::StrCat(
        "training a ", options.dictionary_bytes, "-byte dictionary needs at least ",
        needed, " bytes of records; have ", total_bytes, " bytes in ", samples.size(),
        " records"));
  }
  return absl::OkStatus();
}

// TrainAndEvaluate holds out every kHoldOutEvery-th record for evaluation.
constexpr size_t kHoldOutEvery = 10;

struct Split {
  std::vector<std::string> train;
  std::vector<std::string> held_out;
};

// Every kHoldOutEvery-th record to held_out (at least one: the last), the rest to train.
Split SplitRecords(const std::vector<std::string>& records) {
  Split split;
  split.held_out.reserve(records.size() / kHoldOutEvery + 1);
  split.train.reserve(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    const bool hold_out = i % kHoldOutEvery == kHoldOutEvery - 1;
    (hold_out ? split.held_out : split.train).push_back(records[i]);
  }
  if (split.held_out.empty() && !split.train.empty()) {
    split.held_out.push_back(std::move(split.train.back()));
    split.train.pop_back();
  }
  return split;
}

// `status` with `context` appended to its message.
absl::Status Annotate(const absl::Status& status, absl::string_view context) {
  return absl::Status(status.code(), absl::StrCat(status.message(), " ", context));
}

// Removes (keeping order) the records whose stored form with `dictionary` is not
// smaller than the record; returns how many it removed.
absl::StatusOr<size_t> RemoveNonShrinking(const std::string& dictionary, int level,
                                          const Progress& progress,
                                          std::vector<std::string>* records) {
  ASSIGN_OR_RETURN(auto encoder, codec::EncoderDictionary::Create(dictionary, level));
  codec::EncodeOptions options;
  options.dictionary = encoder.get();
  const size_t report_every = std::max<size_t>(1, records->size() / 100);
  std::string stored;
  size_t kept = 0;
  for (size_t i = 0; i < records->size(); ++i) {
    stored.clear();
    RETURN_IF_ERROR(codec::EncodeRecord((*records)[i], options, &stored));
    if (stored.size() < (*records)[i].size()) {
      if (kept != i) (*records)[kept] = std::move((*records)[i]);
      ++kept;
    }
    if (i % report_every == 0) {
      progress("filter", static_cast<double>(i) / records->size());
    }
  }
  const size_t removed = records->size() - kept;
  records->resize(kept);
  progress("filter", 1);
  return removed;
}

// The two training passes over `train` (consumed); fills everything but the evaluation.
absl::StatusOr<TrainResult> TrainTwoPasses(std::vector<std::string> train,
                                           const TrainOptions& options,
                                           const Progress& progress) {
  TrainResult result;
  progress("train", 0);
  ASSIGN_OR_RETURN(result.dictionary, TrainDictionary(train, options));
  progress("train", 1);
  const size_t candidates = train.size();
  ASSIGN_OR_RETURN(result.samples_excluded,
                   RemoveNonShrinking(result.dictionary, options.compression_level,
                                      progress, &train));
  result.samples_used = train.size();
  if (result.samples_excluded == 0) return result;
  progress("retrain", 0);
  absl::StatusOr<std::string> second = TrainDictionary(train, options);
  if (!second.ok()) {
    return Annotate(second.status(),
                    absl::StrCat("(left after excluding ", result.samples_excluded,
                                 " of ", candidates, " training records that do not "
                                 "shrink with a first dictionary)"));
  }
  progress("retrain", 1);
  result.dictionary = *std::move(second);
  return result;
}

// zstd's COVER trainer (cover.c, zstd 1.5.4 as Debian ships it) sorts through qsort()
// with its context in a process-wide global (g_coverCtx): two COVER trainings at once
// read each other's samples and crash the process (seen: dictlogd's two automatic
// training threads next to a TrainDictionary call). They run one at a time; fastCover
// keeps its state in its own context and runs unlocked.
ABSL_CONST_INIT absl::Mutex cover_mu(absl::kConstInit);

// zstd's trainer of `options.algorithm` into `dictionary` (its size the target); the
// ZDICT result (a size or an error code).
size_t Train(const TrainOptions& options, const std::string& joined,
             const std::vector<size_t>& sizes, std::string* dictionary) {
  ZDICT_params_t z = {};
  z.dictID = options.dictionary_id;
  z.compressionLevel = options.compression_level;
  const unsigned count = static_cast<unsigned>(sizes.size());
  if (options.algorithm == TrainOptions::Algorithm::kCover) {
    ZDICT_cover_params_t params = {};
    params.d = options.d;
    params.steps = 4;
    params.nbThreads = 1;
    params.zParams = z;
    absl::MutexLock lock(&cover_mu);
    return ZDICT_optimizeTrainFromBuffer_cover(dictionary->data(), dictionary->size(),
                                               joined.data(), sizes.data(), count, &params);
  }
  // One fastCover pass over every sample with a fixed segment size: zstd's optimizer
  // (ZDICT_optimizeTrainFromBuffer_fastCover) tries k over 4 steps, training on the
  // first 75% of the samples and testing on the rest, and returns a dictionary that
  // never saw the newest quarter, at several times the cost (benchmarks/train_cost;
  // ADR 0037).
  ZDICT_fastCover_params_t params = {};
  params.k = FastCoverSegmentBytes(dictionary->size());
  params.d = options.d;
  params.zParams = z;
  return ZDICT_trainFromBuffer_fastCover(dictionary->data(), dictionary->size(),
                                         joined.data(), sizes.data(), count, params);
}

}  // namespace

unsigned FastCoverSegmentBytes(size_t dictionary_bytes) {
  return static_cast<unsigned>(std::min<size_t>(kFastCoverSegmentBytes, dictionary_bytes / 2));
}

absl::StatusOr<std::string> TrainDictionary(const std::vector<std::string>& samples,
                                            const TrainOptions& options) {
  std::string joined;
  std::vector<size_t> sizes;
  sizes.reserve(samples.size());
  for (const std::string& sample : samples) {
    joined += sample;
    sizes.push_back(sample.size());
  }
  if (absl::Status status = CheckInput(samples, options, joined.size()); !status.ok()) {
    return status;
  }
  std::string dictionary(options.dictionary_bytes, '\0');
  const size_t size = Train(options, joined, sizes, &dictionary);
  if (ZDICT_isError(size)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "zstd could not train a dictionary from ", samples.size(), " records (",
        joined.size(), " bytes): ", ZDICT_getErrorName(size)));
  }
  dictionary.resize(size);
  if (options.compact) return MakeCompact(dictionary, {});
  return dictionary;
}

absl::StatusOr<TrainResult> TrainAndEvaluate(const std::vector<std::string>& records,
                                             const TrainOptions& options,
                                             absl::string_view baseline,
                                             const Progress& progress) {
  const Progress report = progress ? progress : [](absl::string_view, double) {};
  if (!baseline.empty()) {  // Fail before training, not after.
    if (absl::StatusOr<uint32_t> id = codec::DictionaryIdOf(baseline); !id.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("baseline dictionary: ", id.status().message()));
    }
  }
  report("split", 0);
  Split split = SplitRecords(records);
  report("split", 1);
  const size_t held_out = split.held_out.size();
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<TrainResult> result =
      TrainTwoPasses(std::move(split.train), options, report);
  if (absl::IsFailedPrecondition(result.status())) {
    return Annotate(result.status(),
                    absl::StrCat("(", held_out, " of the ", records.size(),
                                 " records, every ", kHoldOutEvery,
                                 "th, are held out for evaluation; the rest train)"));
  }
  RETURN_IF_ERROR(result.status());
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  result->train_seconds = elapsed.count();
  report("evaluate", 0);
  ASSIGN_OR_RETURN(result->evaluation, Evaluate(split.held_out, result->dictionary,
                                                baseline, options.compression_level));
  report("evaluate", 1);
  return result;
}

}  // namespace dictlog::trainer
