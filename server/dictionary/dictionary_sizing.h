// Dictionary sizing and trainer choice: which dictionary sizes a pool's sample can
// support, and training at each of them with a few trainer settings to keep the
// candidate that does best on the held-out records. A pool that holds less than a few
// times its configured `dictionary_bytes` still gets a smaller dictionary (e.g. 2 KiB
// from 16 KiB of records) instead of none; a large sample tries the configured size and
// two smaller ones, since a smaller dictionary sometimes compresses repetitive records
// better (docs/dictionaries.md, "Sizing").
// Stateless; safe to call from several threads.
#ifndef DICTLOG_SERVER_DICTIONARY_DICTIONARY_SIZING_H_
#define DICTLOG_SERVER_DICTIONARY_DICTIONARY_SIZING_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "training/trainer.h"

namespace dictlog::dictionary {

// No dictionary smaller than this is tried.
inline constexpr size_t kMinSizedDictionaryBytes = 1024;
// A size is tried only if the sample holds at least this many times it (the trainer
// refuses training records below 4x; a tenth of the sample is held out).
inline constexpr size_t kSampleBytesPerDictionaryByte = 5;
// At most this many sizes are tried.
inline constexpr size_t kMaxSizeCandidates = 3;
// Plain COVER (slower than fastCover) is tried only on samples up to this size.
inline constexpr size_t kMaxCoverSampleBytes = 256 << 10;

// The sizes to try for a sample of `sample_bytes` and a configured size of
// `configured_bytes`, largest first: the largest of configured, configured/2,
// configured/4, ... that the sample supports, then up to two halvings of it, none below
// kMinSizedDictionaryBytes (or the configured size, if that is smaller). Empty if the
// sample supports no size.
std::vector<size_t> CandidateSizes(size_t sample_bytes, size_t configured_bytes);

// One training to try: a size and a trainer setting.
struct Candidate {
  size_t bytes = 0;
  trainer::TrainOptions::Algorithm algorithm = trainer::TrainOptions::Algorithm::kFastCover;
  unsigned d = 8;
};

// How many candidates a training tries. kFull: the search below. kQuick: only the
// largest supported size with fastCover d=8 (one training, a sixth to a ninth of
// kFull's time): automatic training's first dictionary of a pool that already holds
// full size, whose full search follows at the pool's next doubling (auto_trainer.h).
// kLargest: every trainer setting at the largest supported size only (2 or 3
// trainings): automatic growth of a pool whose last dictionary won at its configured
// size, so that a larger sample has no smaller size left to prefer (ADR 0029).
enum class CandidateSearch { kFull, kQuick, kLargest };

// Every CandidateSizes size with fastCover d=8 (the trainer's default) and d=6, and,
// on samples up to kMaxCoverSampleBytes, COVER d=8: at most 9 trainings, in that order.
// kQuick: the first of them only; kLargest: those of the first size only.
std::vector<Candidate> Candidates(size_t sample_bytes, size_t configured_bytes,
                                  CandidateSearch search = CandidateSearch::kFull);

// "4096/fastcover-d8".
std::string CandidateName(const Candidate& candidate);

struct SizedTrainResult {
  trainer::TrainResult best;           // The candidate with the best held-out ratio.
  std::vector<Candidate> tried;        // Every candidate trained, in order.
  std::vector<double> ratios;          // Held-out ratio of each (0: training failed).
  size_t best_index = 0;               // Index of `best` in `tried`.
  double train_seconds = 0;            // Wall time of all the trainings.
};

// Trains every Candidates(bytes of `records`, options.dictionary_bytes, search) with
// trainer::TrainAndEvaluate (the same held-out records for all, so the ratios compare)
// and returns the one with the best held-out ratio; the earlier candidate wins ties.
// With no supported size, or when every candidate fails, the error of training at the
// configured size (FAILED_PRECONDITION saying how much data is needed).
absl::StatusOr<SizedTrainResult> TrainBestSize(const std::vector<std::string>& records,
                                               const trainer::TrainOptions& options,
                                               absl::string_view baseline,
                                               CandidateSearch search = CandidateSearch::kFull);

}  // namespace dictlog::dictionary

#endif  // DICTLOG_SERVER_DICTIONARY_DICTIONARY_SIZING_H_
