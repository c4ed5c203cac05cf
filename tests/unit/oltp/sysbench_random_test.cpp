// The key distributions of sysbench 1.0.20 (sb_rand.c) as SbRandom reproduces them.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>

#include "drivelab/oltp/sysbench/sysbench_random.hpp"

namespace drivelab::oltp::sysbench {
namespace {

SbRandom make(RandType type, std::uint64_t seed = 7) {
  RandOptions o;
  o.type = type;
  return SbRandom(o, Rng(seed));
}

TEST(SysbenchRandom, SpecialPutsAboutThreeQuartersOfThePicksInTheMiddlePercent) {
  // sysbench's defaults: --rand-spec-pct=1 --rand-spec-res=75. The "hot" 1% is the middle of the
  // range; 75% of the picks go there (plus ~1% from the bell around the middle).
  SbRandom rnd = make(RandType::special);
  constexpr std::uint32_t kSize = 1'000'000;
  constexpr int kDraws = 200'000;
  int hot = 0, outside_range = 0;
  for (int i = 0; i < kDraws; ++i) {
    const std::uint32_t v = rnd.special(1, kSize);
    if (v < 1 || v > kSize) ++outside_range;
    if (v >= kSize / 2 - kSize / 200 && v <= kSize / 2 + kSize / 200) ++hot;
  }
  EXPECT_EQ(outside_range, 0);
  const double fraction = static_cast<double>(hot) / kDraws;
  EXPECT_GT(fraction, 0.70);
  EXPECT_LT(fraction, 0.82);
}

TEST(SysbenchRandom, SpecialHotBandIsWhereSysbenchPutsIt) {
  // The hot branch reuses its selecting draw (u >= 0.25): keys land in
  // [middle - 0.25%, middle + 0.5%) of the range, never in [middle - 0.5%, middle - 0.25%)
  // except from the bell (which spreads ~0.3% of all picks over that quarter-percent).
  SbRandom rnd = make(RandType::special, 11);
  constexpr std::uint32_t kSize = 1'000'000;
  constexpr int kDraws = 200'000;
  int band = 0, below = 0;
  for (int i = 0; i < kDraws; ++i) {
    const std::uint32_t v = rnd.special(1, kSize);
    if (v >= 497'500 && v <= 505'001) ++band;  // 1 + [497,499.5, 505,000.5)
    if (v >= 495'001 && v < 497'500) ++below;
  }
  EXPECT_GT(static_cast<double>(band) / kDraws, 0.755);
  EXPECT_LT(static_cast<double>(below) / kDraws, 0.01);
}

TEST(SysbenchRandom, UniformCoversTheRangeEvenly) {
  SbRandom rnd = make(RandType::uniform);
  std::array<int, 10> counts{};
  for (int i = 0; i < 100'000; ++i) {
    const std::uint32_t v = rnd.uniform(1, 10);
    ASSERT_GE(v, 1u);
    ASSERT_LE(v, 10u);
    ++counts[v - 1];
  }
  for (int c : counts) EXPECT_NEAR(c, 10'000, 600);
}

TEST(SysbenchRandom, GaussianIsABellAroundTheMiddle) {
  // Mean of 12 uniforms: mean (a + b) / 2, standard deviation (b - a + 1) / 12.
  SbRandom rnd = make(RandType::gaussian);
  double sum = 0, sum_sq = 0;
  constexpr int kDraws = 100'000;
  for (int i = 0; i < kDraws; ++i) {
    const double v = rnd.gaussian(0, 119'999);
    sum += v;
    sum_sq += v * v;
  }
  const double mean = sum / kDraws;
  const double sd = std::sqrt(sum_sq / kDraws - mean * mean);
  EXPECT_NEAR(mean, 60'000, 300);
  EXPECT_NEAR(sd, 10'000, 300);
}

TEST(SysbenchRandom, ParetoPutsEightyPercentInTheFirstFifth) {
  // h = 0.2: P(key < a + 20% of the range) = 0.2 ^ (1 / (ln 0.2 / ln 0.8)) = 0.8.
  SbRandom rnd = make(RandType::pareto);
  int low = 0;
  constexpr int kDraws = 100'000;
  for (int i = 0; i < kDraws; ++i)
    if (rnd.pareto(1, 100'000) <= 20'000) ++low;
  EXPECT_NEAR(static_cast<double>(low) / kDraws, 0.80, 0.01);
}

TEST(SysbenchRandom, PickUsesTheConfiguredDistribution) {
  SbRandom a = make(RandType::pareto, 3);
  SbRandom b = make(RandType::pareto, 3);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.pick(1, 1000), b.pareto(1, 1000));
  SbRandom c = make(RandType::special, 3);
  SbRandom d = make(RandType::special, 3);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(c.pick(1, 1000), d.special(1, 1000));
}

TEST(SysbenchRandom, StringsFollowTheTemplates) {
  SbRandom rnd = make(RandType::special);
  std::string c, pad;
  std::array<int, 10> digits{};
  for (int i = 0; i < 2000; ++i) {
    rnd.fill(c, kCTemplate);
    rnd.fill(pad, kPadTemplate);
    ASSERT_EQ(c.size(), 119u);
    ASSERT_EQ(pad.size(), 59u);
    for (std::size_t j = 0; j < c.size(); ++j) {
      if (j % 12 == 11) {
        ASSERT_EQ(c[j], '-') << c;
      } else {
        ASSERT_TRUE(c[j] >= '0' && c[j] <= '9') << c;
        ++digits[static_cast<std::size_t>(c[j] - '0')];
      }
    }
  }
  // 2000 x 110 digits: each digit ~22,000 times.
  for (int n : digits) EXPECT_NEAR(n, 22'000, 800);
  std::string letters;
  rnd.fill(letters, "@@@@-##");
  EXPECT_TRUE(letters[0] >= 'a' && letters[0] <= 'z');
  EXPECT_EQ(letters[4], '-');
}

TEST(SysbenchRandom, SameSeedSameNumbers) {
  SbRandom a = make(RandType::special, 99);
  SbRandom b = make(RandType::special, 99);
  std::string sa, sb;
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(a.pick(1, 10'000), b.pick(1, 10'000));
    a.fill(sa, kPadTemplate);
    b.fill(sb, kPadTemplate);
    EXPECT_EQ(sa, sb);
  }
}

}  // namespace
}  // namespace drivelab::oltp::sysbench
