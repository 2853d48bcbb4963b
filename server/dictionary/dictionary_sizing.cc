#include "server/dictionary/dictionary_sizing.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace dictlog::dictionary {

using Algorithm = trainer::TrainOptions::Algorithm;

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

std::vector<Candidate> Candidates(size_t sample_bytes, size_t configured_bytes,
                                  CandidateSearch search) {
  std::vector<Candidate> out;
  for (size_t bytes : CandidateSizes(sample_bytes, configured_bytes)) {
    out.push_back({bytes, Algorithm::kFastCover, 8});
    if (search == CandidateSearch::kQuick) break;
    out.push_back({bytes, Algorithm::kFastCover, 6});
    if (sample_bytes <= kMaxCoverSampleBytes) out.push_back({bytes, Algorithm::kCover, 8});
    if (search == CandidateSearch::kLargest) break;
  }
  return out;
}

std::string CandidateName(const Candidate& c) {
  return absl::StrCat(c.bytes, c.algorithm == Algorithm::kCover ? "/cover-d" : "/fastcover-d",
                      c.d);
}

absl::StatusOr<SizedTrainResult> TrainBestSize(const std::vector<std::string>& records,
                                               const trainer::TrainOptions& options,
                                               absl::string_view baseline,
                                               CandidateSearch search) {
  size_t bytes = 0;
  for (const std::string& r : records) bytes += r.size();
  SizedTrainResult out;
  out.tried = Candidates(bytes, options.dictionary_bytes, search);
  bool have_best = false;
  for (size_t i = 0; i < out.tried.size(); ++i) {
    trainer::TrainOptions sized = options;
    sized.dictionary_bytes = out.tried[i].bytes;
    sized.algorithm = out.tried[i].algorithm;
    sized.d = out.tried[i].d;
    absl::StatusOr<trainer::TrainResult> result =
        trainer::TrainAndEvaluate(records, sized, baseline);
    if (!result.ok() && !absl::IsFailedPrecondition(result.status())) {
      return result.status();  // A bad id or baseline: no other candidate does better.
    }
    out.ratios.push_back(result.ok() ? result->evaluation.candidate_ratio : 0);
    if (!result.ok()) continue;
    out.train_seconds += result->train_seconds;
    if (!have_best ||
        result->evaluation.candidate_ratio > out.best.evaluation.candidate_ratio) {
      out.best = *std::move(result);
      out.best_index = i;
      have_best = true;
    }
  }
  if (!have_best) {  // Today's answer: what the configured size needs.
    absl::StatusOr<trainer::TrainResult> result =
        trainer::TrainAndEvaluate(records, options, baseline);
    if (!result.ok()) return result.status();
    out.tried = {{options.dictionary_bytes, options.algorithm, options.d}};
    out.ratios = {result->evaluation.candidate_ratio};
    out.best_index = 0;
    out.best = *std::move(result);
    out.train_seconds += out.best.train_seconds;
  }
  out.best.train_seconds = out.train_seconds;
  return out;
}

}  // namespace dictlog::dictionary
