// RunningStats (Welford; Chan et al. merge) against a two-pass computation over all values.
#include "drivelab/core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "drivelab/core/rng.hpp"

namespace drivelab {
namespace {

struct TwoPass {
  double mean = 0;
  double stddev = 0;  // population
};

TwoPass two_pass(const std::vector<double>& xs) {
  long double sum = 0;
  for (double x : xs) sum += x;
  const long double mean = sum / static_cast<long double>(xs.size());
  long double m2 = 0;
  for (double x : xs) m2 += (x - mean) * (x - mean);
  return {static_cast<double>(mean), static_cast<double>(std::sqrt(m2 / static_cast<long double>(xs.size())))};
}

std::vector<double> sample_values(std::uint64_t seed, int n, double offset, double spread) {
  Rng rng(seed);
  std::vector<double> xs(static_cast<std::size_t>(n));
  for (auto& x : xs) x = offset + spread * (rng.uniform01() - 0.5);
  return xs;
}

void expect_matches(const RunningStats& s, const std::vector<double>& xs, double rel_tol) {
  const TwoPass ref = two_pass(xs);
  ASSERT_EQ(s.count(), xs.size());
  EXPECT_NEAR(s.mean(), ref.mean, std::abs(ref.mean) * rel_tol + 1e-300);
  EXPECT_NEAR(s.stddev(), ref.stddev, ref.stddev * rel_tol);
  EXPECT_EQ(s.min(), *std::min_element(xs.begin(), xs.end()));
  EXPECT_EQ(s.max(), *std::max_element(xs.begin(), xs.end()));
}

TEST(RunningStats, EmptyIsZero) {
  const RunningStats s;
  EXPECT_EQ(s.count(), 0u);
  EXPECT_EQ(s.mean(), 0.0);
  EXPECT_EQ(s.stddev(), 0.0);
  EXPECT_EQ(s.min(), 0.0);
  EXPECT_EQ(s.max(), 0.0);
}

TEST(RunningStats, SingleValue) {
  RunningStats s;
  s.add(-3.5);
  EXPECT_EQ(s.mean(), -3.5);
  EXPECT_EQ(s.stddev(), 0.0);
  EXPECT_EQ(s.min(), -3.5);
  EXPECT_EQ(s.max(), -3.5);
}

TEST(RunningStats, MatchesTwoPass) {
  // Per-interval IOPS-like values, tiny values, and very few values.
  for (const auto& xs :
       {sample_values(1, 10'000, 50'000, 20'000), sample_values(3, 3, -10, 4), sample_values(4, 100'000, 0, 1e-3)}) {
    RunningStats s;
    for (double x : xs) s.add(x);
    expect_matches(s, xs, 1e-12);
  }
}

// A large offset with a small spread (1e9 +- 0.5): the naive E[x^2] - E[x]^2 formula has an
// absolute error near 1e18 * 1e-16 = 100 here, far more than the variance (0.08). Welford's error
// grows with mean/stddev * epsilon (3e9 * 1e-16), so 1e-6 relative is its honest tolerance.
TEST(RunningStats, LargeOffsetSmallSpread) {
  const std::vector<double> xs = sample_values(2, 10'000, 1e9, 1.0);
  RunningStats s;
  for (double x : xs) s.add(x);
  expect_matches(s, xs, 1e-6);
}

TEST(RunningStats, MergeEqualsCombined) {
  const std::vector<double> xs = sample_values(5, 9'000, 1'000, 300);
  RunningStats parts[3];
  RunningStats all;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    // Uneven split, one part much smaller, as with threads that ran different times.
    parts[i % 10 == 0 ? 0 : (i % 2 == 0 ? 1 : 2)].add(xs[i]);
    all.add(xs[i]);
  }
  RunningStats merged;
  for (const auto& p : parts) merged.merge(p);
  expect_matches(merged, xs, 1e-12);
  EXPECT_NEAR(merged.mean(), all.mean(), std::abs(all.mean()) * 1e-12);
  EXPECT_NEAR(merged.stddev(), all.stddev(), all.stddev() * 1e-12);
}

TEST(RunningStats, MergeWithEmpty) {
  RunningStats s;
  for (double x : {1.0, 2.0, 4.0}) s.add(x);
  RunningStats empty;
  RunningStats a = s;
  a.merge(empty);
  EXPECT_EQ(a.count(), 3u);
  EXPECT_EQ(a.mean(), s.mean());
  EXPECT_EQ(a.stddev(), s.stddev());
  empty.merge(s);
  EXPECT_EQ(empty.count(), 3u);
  EXPECT_EQ(empty.mean(), s.mean());
  EXPECT_EQ(empty.min(), 1.0);
  EXPECT_EQ(empty.max(), 4.0);
}

}  // namespace
}  // namespace drivelab
