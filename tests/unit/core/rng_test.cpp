// Rng: results must repeat for a seed (the result record's `seed` reruns a test), streams from
// split() must be independent, and uniform() must be unbiased and inclusive (TPC-C 2.1.5).
#include "drivelab/core/rng.hpp"

#include <bit>
#include <concepts>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include <gtest/gtest.h>

namespace drivelab {
namespace {

static_assert(std::uniform_random_bit_generator<Rng>);

// Reference generators written from Vigna's public-domain C code (prng.di.unimi.it), so a change
// of algorithm, which would silently change every seeded run, fails here.
std::uint64_t ref_splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
  z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
  return z ^ (z >> 31);
}

struct RefXoshiro256StarStar {
  std::uint64_t s[4];
  explicit RefXoshiro256StarStar(std::uint64_t seed) {
    for (auto& w : s) w = ref_splitmix64(seed);
  }
  std::uint64_t next() {
    const std::uint64_t result = std::rotl(s[1] * 5, 7) * 9;
    const std::uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = std::rotl(s[3], 45);
    return result;
  }
};

std::vector<std::uint64_t> draw(Rng rng, int n) {
  std::vector<std::uint64_t> out(static_cast<std::size_t>(n));
  for (auto& v : out) v = rng();
  return out;
}

// Pearson's chi-square statistic of observed counts against equal expected counts.
double chi_square(const std::vector<int>& counts, int total) {
  const double expected = static_cast<double>(total) / static_cast<double>(counts.size());
  double chi2 = 0;
  for (int c : counts) chi2 += (c - expected) * (c - expected) / expected;
  return chi2;
}

TEST(Rng, ReferenceSplitmix64KnownAnswer) {
  std::uint64_t x = 0;
  EXPECT_EQ(ref_splitmix64(x), 0xe220a8397b1dcdafull);  // the published first output for seed 0
}

TEST(Rng, MatchesReferenceXoshiro256StarStar) {
  for (std::uint64_t seed : {0ull, 1ull, 42ull, 0xdeadbeefcafef00dull}) {
    Rng rng(seed);
    RefXoshiro256StarStar ref(seed);
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(rng(), ref.next()) << "seed " << seed << " i " << i;
  }
}

TEST(Rng, SameSeedSameSequenceDifferentSeedDifferent) {
  EXPECT_EQ(draw(Rng(7), 1000), draw(Rng(7), 1000));
  EXPECT_NE(draw(Rng(7), 1000), draw(Rng(8), 1000));
  EXPECT_EQ(Rng(7).seed(), 7u);
  // Default-constructed generators agree with each other too.
  EXPECT_EQ(draw(Rng(), 10), draw(Rng(), 10));
}

TEST(Rng, SplitStreamsAreReproducibleAndDistinct) {
  const Rng parent(2024);
  EXPECT_EQ(draw(parent.split(1), 100), draw(parent.split(1), 100));
  EXPECT_EQ(draw(Rng(2024).split(1), 100), draw(parent.split(1), 100));
  EXPECT_NE(draw(parent.split(1), 100), draw(parent.split(2), 100));
  EXPECT_NE(draw(parent.split(0), 100), draw(parent, 100));
  EXPECT_NE(draw(parent.split(1), 100), draw(Rng(2025).split(1), 100));

  // Derived from the seed, not the current state: consuming numbers does not change the streams.
  Rng used(2024);
  for (int i = 0; i < 10; ++i) used();
  EXPECT_EQ(draw(used.split(5), 100), draw(parent.split(5), 100));

  // 10,000 terminals: no two streams start alike.
  std::set<std::uint64_t> first;
  for (std::uint64_t id = 0; id < 10'000; ++id) first.insert(parent.split(id)());
  EXPECT_EQ(first.size(), 10'000u);
}

TEST(Rng, NeighbouringSplitStreamsLookUncorrelated) {
  const Rng parent(1);
  for (std::uint64_t id : {0ull, 1ull, 1000ull}) {
    Rng a = parent.split(id);
    Rng b = parent.split(id + 1);
    // Independent 64-bit words differ in 32 bits on average; sd of the mean over n words is
    // 4/sqrt(n) = 0.04 for n = 10,000.
    constexpr int kN = 10'000;
    long total = 0;
    for (int i = 0; i < kN; ++i) total += std::popcount(a() ^ b());
    EXPECT_NEAR(static_cast<double>(total) / kN, 32.0, 0.3) << "stream " << id;
  }
}

TEST(Rng, UniformIsInclusiveAndInRange) {
  Rng rng(3);
  std::vector<int> seen(6, 0);
  for (int i = 0; i < 6'000; ++i) {
    const std::int64_t v = rng.uniform(1, 6);
    ASSERT_GE(v, 1);
    ASSERT_LE(v, 6);
    ++seen[static_cast<std::size_t>(v - 1)];
  }
  for (int c : seen) EXPECT_GT(c, 0);  // both ends included

  for (int i = 0; i < 1'000; ++i) {
    const std::int64_t v = rng.uniform(-5, 5);
    ASSERT_GE(v, -5);
    ASSERT_LE(v, 5);
  }
  EXPECT_EQ(rng.uniform(42, 42), 42);
  EXPECT_EQ(rng.uniform(-7, -7), -7);
}

TEST(Rng, UniformHandlesExtremeRanges) {
  constexpr auto kMin = std::numeric_limits<std::int64_t>::min();
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  Rng rng(4);
  bool negative = false;
  bool positive = false;
  for (int i = 0; i < 1'000; ++i) {
    const std::int64_t v = rng.uniform(kMin, kMax);  // the full range (hi - lo overflows int64)
    negative |= v < 0;
    positive |= v > 0;
    const std::int64_t w = rng.uniform(kMin, 0);
    ASSERT_LE(w, 0);
    const std::int64_t x = rng.uniform(-1, kMax);
    ASSERT_GE(x, -1);
    const std::int64_t y = rng.uniform(kMax - 1, kMax);
    ASSERT_GE(y, kMax - 1);
  }
  EXPECT_TRUE(negative);
  EXPECT_TRUE(positive);
}

// Generous bounds: the 1e-6 upper tail of chi-square is 42.0 for 9 degrees of freedom, 48.7 for
// 19 and 27.6 for 2, so a correct generator fails these about once in a million runs.
TEST(Rng, UniformIsUniformChiSquare) {
  Rng rng(5);
  constexpr int kN = 100'000;
  std::vector<int> counts(10, 0);
  for (int i = 0; i < kN; ++i) ++counts[static_cast<std::size_t>(rng.uniform(0, 9))];
  EXPECT_LT(chi_square(counts, kN), 42.0);
}

// A range of 3 * 2^61 is where "x % range" is visibly biased (the lowest two thirds twice as
// likely); Lemire's method with rejection must be flat.
TEST(Rng, UniformIsUnbiasedForLargeNonPowerOfTwoRange) {
  Rng rng(6);
  constexpr int kN = 30'000;
  constexpr std::int64_t kThird = std::int64_t{1} << 61;
  std::vector<int> counts(3, 0);
  for (int i = 0; i < kN; ++i) ++counts[static_cast<std::size_t>(rng.uniform(0, 3 * kThird - 1) / kThird)];
  EXPECT_LT(chi_square(counts, kN), 27.6);
}

TEST(Rng, Uniform01InHalfOpenUnitIntervalAndFlat) {
  Rng rng(7);
  constexpr int kN = 100'000;
  std::vector<int> counts(20, 0);
  double sum = 0;
  for (int i = 0; i < kN; ++i) {
    const double u = rng.uniform01();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    ++counts[static_cast<std::size_t>(u * 20)];
  }
  EXPECT_NEAR(sum / kN, 0.5, 0.005);  // sd of the mean is 0.29 / sqrt(n) = 0.0009
  EXPECT_LT(chi_square(counts, kN), 48.7);
}

TEST(Rng, ChanceExtremesAndRate) {
  Rng rng(8);
  int hits = 0;
  for (int i = 0; i < 10'000; ++i) {
    EXPECT_FALSE(rng.chance(0.0));
    EXPECT_TRUE(rng.chance(1.0));
    hits += rng.chance(0.01) ? 1 : 0;  // TPC-C's 1% rollback
  }
  EXPECT_NEAR(hits, 100, 50);  // sd 10
}

TEST(Rng, WorksWithStandardDistributions) {
  Rng rng(9);
  std::uniform_int_distribution<int> die(1, 6);
  std::exponential_distribution<double> think(1.0);
  for (int i = 0; i < 1'000; ++i) {
    const int d = die(rng);
    EXPECT_GE(d, 1);
    EXPECT_LE(d, 6);
    EXPECT_GE(think(rng), 0.0);
  }
}

}  // namespace
}  // namespace drivelab
