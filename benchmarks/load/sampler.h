// IdSampler: picks indexes 0..n-1 uniformly or by Zipf over rank (index 0 is rank 1,
// the most popular). The one sampler of the benchmarks (dictlog-bench, dict_bench).
//
// Zipf uses a precomputed cumulative distribution (n doubles) and a binary search per
// sample. Immutable after Create(): Sample() is const and safe from many threads at
// once, each passing its own random engine.
#ifndef DICTLOG_BENCHMARKS_LOAD_SAMPLER_H_
#define DICTLOG_BENCHMARKS_LOAD_SAMPLER_H_

#include <cstddef>
#include <random>
#include <vector>

#include "absl/status/statusor.h"

namespace dictlog::bench {

// How indexes are picked (dictlog-bench: ids from the ids file; dict_bench: pools).
struct Distribution {
  enum class Kind { kUniform, kZipf };
  Kind kind = Kind::kUniform;
  // Zipf exponent s (> 0): the id ranked k (from 1, by position in the ids file) is
  // picked with probability proportional to 1 / k^s. Unused for uniform.
  double zipf_s = 0;
};

class IdSampler {
 public:
  // INVALID_ARGUMENT if n is 0 or above 100 million (the Zipf table would be too big).
  static absl::StatusOr<IdSampler> Create(const Distribution& dist, size_t n);

  // An index in [0, n).
  size_t Sample(std::mt19937_64& rng) const;
  size_t size() const { return n_; }

 private:
  IdSampler(size_t n, std::vector<double> cdf) : n_(n), cdf_(std::move(cdf)) {}

  size_t n_;
  // Zipf: cdf_[k] = P(index <= k), cdf_.back() == 1. Empty for uniform.
  std::vector<double> cdf_;
};

}  // namespace dictlog::bench

#endif  // DICTLOG_BENCHMARKS_LOAD_SAMPLER_H_
