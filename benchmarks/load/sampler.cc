#include "benchmarks/load/sampler.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace dictlog::bench {

absl::StatusOr<IdSampler> IdSampler::Create(const Distribution& dist, size_t n) {
  constexpr size_t kMaxIds = 100'000'000;
  if (n == 0 || n > kMaxIds) {
    return absl::InvalidArgumentError(
        absl::StrCat("need 1..", kMaxIds, " ids to sample from, got ", n));
  }
  if (dist.kind == Distribution::Kind::kUniform) return IdSampler(n, {});
  std::vector<double> cdf(n);
  double sum = 0;
  for (size_t k = 0; k < n; ++k) {
    sum += 1.0 / std::pow(static_cast<double>(k + 1), dist.zipf_s);
    cdf[k] = sum;
  }
  for (double& c : cdf) c /= sum;
  cdf.back() = 1.0;
  return IdSampler(n, std::move(cdf));
}

size_t IdSampler::Sample(std::mt19937_64& rng) const {
  if (cdf_.empty()) return std::uniform_int_distribution<size_t>(0, n_ - 1)(rng);
  const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
  // The first k with cdf[k] > u; u < 1 == cdf.back(), so k < n.
  const auto it = std::upper_bound(cdf_.begin(), cdf_.end(), u);
  return std::min(static_cast<size_t>(it - cdf_.begin()), n_ - 1);
}

}  // namespace dictlog::bench
