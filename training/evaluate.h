// Dictionary evaluation: measures what a candidate dictionary would save on a set of
// records, in the exact stored form the server writes (codec::EncodeRecord), against a
// baseline (the dictionary in use, or none), and how fast it compresses and
// decompresses. Stateless; safe to call from several threads (each uses its own zstd
// contexts).
#ifndef DICTLOG_TRAINING_EVALUATE_H_
#define DICTLOG_TRAINING_EVALUATE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace dictlog::trainer {

struct Evaluation {
  size_t records = 0;      // held-out records evaluated
  uint64_t raw_bytes = 0;  // their payload bytes
  // Stored bytes (codec::EncodeRecord) with the candidate.
  uint64_t candidate_bytes = 0;
  // Stored bytes with the baseline (or no dictionary).
  uint64_t baseline_bytes = 0;
  double candidate_ratio = 0;  // raw / candidate_bytes
  double baseline_ratio = 0;   // raw / baseline_bytes
  // candidate_ratio / baseline_ratio - 1 (0.03 = 3% better).
  double gain = 0;
  double compress_mb_per_s = 0;    // candidate, MB = 1e6 bytes of payload
  double decompress_mb_per_s = 0;  // candidate
};

// Compresses `records` one at a time with `candidate` and with `baseline` (standard
// zstd dictionary bytes; an empty string_view means no dictionary) at level `level`,
// via codec::EncodeRecord, and checks that each candidate-encoded record decodes back
// byte-identical (INTERNAL if not). The candidate's speeds are timed on those two
// passes (one pass each: a training evaluates every candidate, and a repeated timing
// loop cost automatic training more than the training itself; small sets give rough
// figures). A ratio of a set whose stored size is 0 (only empty records) is 1.
// INVALID_ARGUMENT if `records` is empty or a dictionary does not load.
absl::StatusOr<Evaluation> Evaluate(const std::vector<std::string>& records,
                                    absl::string_view candidate,
                                    absl::string_view baseline, int level);

}  // namespace dictlog::trainer

#endif  // DICTLOG_TRAINING_EVALUATE_H_
