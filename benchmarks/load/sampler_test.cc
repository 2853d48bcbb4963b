#include "benchmarks/load/sampler.h"

#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace dictlog::bench {
namespace {

std::vector<int> Histogram(const IdSampler& sampler, int samples) {
  std::mt19937_64 rng(42);
  std::vector<int> counts(sampler.size());
  for (int i = 0; i < samples; ++i) {
    const size_t index = sampler.Sample(rng);
    EXPECT_LT(index, sampler.size());
    ++counts[index];
  }
  return counts;
}

TEST(IdSamplerTest, ZipfFrequenciesFollowRank) {
  Distribution dist{Distribution::Kind::kZipf, 0.99};
  const absl::StatusOr<IdSampler> sampler = IdSampler::Create(dist, 1000);
  ASSERT_TRUE(sampler.ok()) << sampler.status();
  const int kSamples = 400'000;
  const std::vector<int> counts = Histogram(*sampler, kSamples);
  // The head is ordered: rank 1 > rank 2 > rank 4 > rank 8 > rank 16.
  for (int rank = 1; rank < 16; rank *= 2) {
    EXPECT_GT(counts[rank - 1], counts[2 * rank - 1]) << "rank " << rank;
  }
  // Roughly proportional to 1 / rank^s: count(1) / count(k) ~ k^0.99, within 15%.
  for (const int rank : {2, 5, 10}) {
    const double expected = std::pow(rank, 0.99);
    const double observed = static_cast<double>(counts[0]) / counts[rank - 1];
    EXPECT_NEAR(observed, expected, 0.15 * expected) << "rank " << rank;
  }
  // The most popular id's share: 1 / H(1000, 0.99) ~ 0.134.
  double harmonic = 0;
  for (int k = 1; k <= 1000; ++k) harmonic += 1 / std::pow(k, 0.99);
  EXPECT_NEAR(counts[0] / static_cast<double>(kSamples), 1 / harmonic, 0.01);
}

TEST(IdSamplerTest, UniformIsFlat) {
  const absl::StatusOr<IdSampler> sampler = IdSampler::Create(Distribution{}, 10);
  ASSERT_TRUE(sampler.ok());
  for (const int count : Histogram(*sampler, 100'000)) EXPECT_NEAR(count, 10'000, 600);
}

TEST(IdSamplerTest, OneIdAndNone) {
  Distribution zipf{Distribution::Kind::kZipf, 1.2};
  const absl::StatusOr<IdSampler> one = IdSampler::Create(zipf, 1);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(Histogram(*one, 100)[0], 100);
  EXPECT_EQ(IdSampler::Create(zipf, 0).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dictlog::bench
