#include "server/dictionary/dictionary_sizing.h"

#include <algorithm>
#include <utility>

namespace dictlog::dictionary {

std::vector<size_t> CandidateSizes(size_t sample_bytes, size_t configured_bytes) {
  const size_t floor = std::min(kMinSizedDictionaryBytes, configured_bytes);
  size_t largest = configured_bytes;
  while (largest >= floor && largest * kSampleBytesPerDictionaryByte > sample_bytes) {
    largest /= 2;
  }
  std::vector<size_t> sizes;
  for (size_t s = largest; s >= floor && s > 0 && sizes.size() < kMaxSizeCandidates;
       s /= 2) {
    sizes.push_back(s);
  }
  return sizes;
}

absl::StatusOr<SizedTrainResult> TrainBestSize(const std::vector<std::string>& records,
                                               const trainer::TrainOptions& options,
                                               absl::string_view baseline) {
  size_t bytes = 0;
  for (const std::string& r : records) bytes += r.size();
  SizedTrainResult out;
  out.sizes_tried = CandidateSizes(bytes, options.dictionary_bytes);
  bool have_best = false;
  for (size_t size : out.sizes_tried) {
    trainer::TrainOptions sized = options;
    sized.dictionary_bytes = size;
    absl::StatusOr<trainer::TrainResult> result =
        trainer::TrainAndEvaluate(records, sized, baseline);
    if (!result.ok() && !absl::IsFailedPrecondition(result.status())) {
      return result.status();  // A bad id or baseline: no other size does better.
    }
    out.ratios.push_back(result.ok() ? result->evaluation.candidate_ratio : 0);
    if (!result.ok()) continue;
    out.train_seconds += result->train_seconds;
    if (!have_best ||
        result->evaluation.candidate_ratio > out.best.evaluation.candidate_ratio) {
      out.best = *std::move(result);
      have_best = true;
    }
  }
  if (!have_best) {  // Today's answer: what the configured size needs.
    absl::StatusOr<trainer::TrainResult> result =
        trainer::TrainAndEvaluate(records, options, baseline);
    if (!result.ok()) return result.status();
    out.best = *std::move(result);
    out.train_seconds += out.best.train_seconds;
  }
  out.best.train_seconds = out.train_seconds;
  return out;
}

}  // namespace dictlog::dictionary
