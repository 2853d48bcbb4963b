// Dictionary training: turns sample records into a standard zstd dictionary that
// carries our own dictionary id, using zstd's fastCover trainer with a fixed segment
// size over every sample (or, on request, plain COVER with its search over k). TrainAndEvaluate adds what a pool needs before it
// activates a dictionary: a held-out set, a second pass without the records that do
// not compress, and an evaluation against the dictionary in use.
// Safe to call from several threads: fastCover trainings run in parallel, COVER ones
// (TrainOptions::Algorithm::kCover) one at a time in the process (zstd 1.5.4's COVER
// keeps its sort context in a global).
#ifndef DICTLOG_TRAINING_TRAINER_H_
#define DICTLOG_TRAINING_TRAINER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "training/evaluate.h"

namespace dictlog::trainer {

// zstd's trainers refuse fewer samples than this.
inline constexpr size_t kMinSamples = 5;

struct TrainOptions {
  // Target dictionary size in bytes (the result may be smaller). Default 16 KiB.
  size_t dictionary_bytes = 16 << 10;
  // Id stamped in the dictionary and in every frame compressed with it; must lie in
  // [codec::kMinDictionaryId, codec::kMaxDictionaryId].
  uint32_t dictionary_id = 0;
  // Level the dictionary's entropy tables are tuned for. Default 3.
  int compression_level = 3;
  // Rewrite the trained dictionary in compact form (compact.h): cheap to decode cold,
  // literals stored raw. Default false (full).
  bool compact = false;
  // zstd's trainer: fastCover (default: one pass, segment size FastCoverSegmentBytes),
  // or plain COVER (slower; sometimes better on small samples; searches k over 4
  // steps, each on every sample).
  enum class Algorithm { kFastCover, kCover };
  Algorithm algorithm = Algorithm::kFastCover;
  // Both trainers' d (the length of the segments' dmers). Default 8.
  unsigned d = 8;
};

// fastCover's segment size (k) for a dictionary of `dictionary_bytes`: 1024 bytes, or
// half the dictionary if that is smaller. Out of sample on loghub (first halves train,
// second halves measured), k from 512 to 2000 were within about 1% of each other at 4
// and 16 KiB, smaller k worse, and k = half of a 1 KiB dictionary best
// (benchmarks/RESULTS.md "Training cost"; ADR 0037).
inline constexpr size_t kFastCoverSegmentBytes = 1024;
unsigned FastCoverSegmentBytes(size_t dictionary_bytes);

// FAILED_PRECONDITION (saying how many records are needed) if there are too few
// samples or too few bytes to train on; INVALID_ARGUMENT for a bad id or size.
absl::StatusOr<std::string> TrainDictionary(const std::vector<std::string>& samples,
                                            const TrainOptions& options);

struct TrainResult {
  std::string dictionary;       // zstd dictionary bytes with options.dictionary_id
  size_t samples_used = 0;      // records the final dictionary was trained on
  size_t samples_excluded = 0;  // records left out because they did not shrink
  Evaluation evaluation;        // on the held-out records, against `baseline`
  double train_seconds = 0;     // wall time of both training passes and the filter
};

// Progress callback: called with a short stage name ("split", "train", "filter",
// "retrain", "evaluate") and the fraction of that stage done, in [0, 1]; every stage
// that runs is reported at least at 0 and at 1 ("retrain" runs only when records were
// excluded). Called on the thread that called TrainAndEvaluate. May be empty.
using Progress = std::function<void(absl::string_view stage, double fraction)>;

// Holds out every 10th record (at least 1) for evaluation and trains on the rest, in
// two passes: trains a first dictionary on all training records, drops the records
// whose stored form (codec::EncodeRecord with that dictionary) is not smaller than
// the record itself (they would teach the dictionary noise), and if any were dropped,
// trains again on the rest. Then evaluates the dictionary on the held-out records
// against `baseline` (standard zstd dictionary bytes; empty: no dictionary) at
// options.compression_level.
// FAILED_PRECONDITION (the message says how many records/bytes are needed) when there
// is too little data, including too little left after dropping; INVALID_ARGUMENT for
// a bad id or size or a baseline that is not a dictionary.
absl::StatusOr<TrainResult> TrainAndEvaluate(const std::vector<std::string>& records,
                                             const TrainOptions& options,
                                             absl::string_view baseline,
                                             const Progress& progress = {});

}  // namespace dictlog::trainer

#endif  // DICTLOG_TRAINING_TRAINER_H_
