// IdSampler: picks indexes 0..n-1 uniformly or by Zipf over rank (index 0 is rank 1,
// the most popular).
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
#include "benchmarks/load/options.h"

namespace dictlog::bench {

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
