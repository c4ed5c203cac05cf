// core/inference.hpp against published worked examples and tables (cited at each test) and, where
// a method's promise is a rate (an interval's coverage, a test's power), against seeded
// simulations with known truth. No timing anywhere.
#include "drivelab/core/inference.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "drivelab/core/rng.hpp"

namespace drivelab::inference {
namespace {

/// A standard normal draw (Box-Muller; written here so the simulations repeat on any standard
/// library).
double normal(Rng& rng) {
  const double u1 = 1.0 - rng.uniform01();  // (0, 1]
  const double u2 = rng.uniform01();
  return std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
}

/// Log-normal run-to-run noise with coefficient of variation `cv` around `median`.
std::vector<double> lognormal_runs(Rng& rng, std::size_t n, double median, double cv) {
  const double sigma = std::sqrt(std::log1p(cv * cv));
  std::vector<double> v(n);
  for (auto& x : v) x = median * std::exp(sigma * normal(rng));
  return v;
}

std::vector<double> exp_of(const std::vector<double>& x) {
  std::vector<double> out;
  for (double v : x) out.push_back(std::exp(v));
  return out;
}

/// Runs `f`, expects std::invalid_argument whose message contains `words`.
template <class F>
void expect_invalid(F&& f, const std::string& words) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one naming '" << words << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

// ---- (a) coverage of the Welch interval of the ratio ------------------------------------------

// Issue 32's "done when": on 1,000 seeded comparisons per cell with known truth (true ratio 0.9 in
// half of them, 1.0 in the other half) and log-normal run-to-run noise at CV 2%, 5% and 10%, the
// 95% Welch interval of the ratio contains the true ratio 93-97% of the time for N = 3, 5 and 10
// per side. (Welch's interval is slightly conservative for equal variances and small N: ~96.6%
// expected at N = 3, ~95.8% at N = 5, ~95.3% at N = 10; the 1,000-trial binomial error is ±0.7%.)
TEST(InferenceCoverage, WelchRatioIntervalContainsTheTrueRatio93To97Percent) {
  const double cvs[] = {0.02, 0.05, 0.10};
  const std::size_t ns[] = {3, 5, 10};
  constexpr int kTrials = 1000;
  std::uint64_t cell = 0;
  for (double cv : cvs) {
    for (std::size_t n : ns) {
      Rng rng(0x32C0FE00 + cell++);
      int contained = 0;
      for (int t = 0; t < kTrials; ++t) {
        const double truth = t % 2 == 0 ? 0.9 : 1.0;
        const auto base = lognormal_runs(rng, n, 1000.0, cv);
        const auto cand = lognormal_runs(rng, n, 1000.0 * truth, cv);
        const RatioEstimate e = compare_ratio(base, cand);
        ASSERT_TRUE(e.ratio_ci.valid());
        contained += e.ratio_ci.contains(truth);
      }
      const double pct = 100.0 * contained / kTrials;
      std::printf("coverage CV %4.1f%% N %2zu: %5.1f%%\n", cv * 100, n, pct);
      RecordProperty("coverage_cv" + std::to_string(static_cast<int>(cv * 100)) + "_n" + std::to_string(n),
                     std::to_string(pct));
      EXPECT_GE(pct, 93.0) << "CV " << cv << " N " << n;
      EXPECT_LE(pct, 97.0) << "CV " << cv << " N " << n;
    }
  }
}

// ---- (b) Student t and Welch against R's worked examples ---------------------------------------

// R's `sleep` data set (Cushny & Peebles 1905, as analysed by Student 1908), extra hours of sleep
// of the same 10 patients under drug 1 and drug 2.
const std::vector<double> kSleep1 = {0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0};
const std::vector<double> kSleep2 = {1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4};

// R: t.test(extra ~ group, data = sleep, paired = TRUE) is the one-sample t on the differences:
// mean -1.58, t = -4.0621, df = 9, 95% CI [-2.4598858, -0.7001142] (R's ?t.test example).
TEST(InferenceSummary, StudentIntervalMatchesRsPairedSleepExample) {
  std::vector<double> d;
  for (std::size_t i = 0; i < kSleep1.size(); ++i) d.push_back(kSleep1[i] - kSleep2[i]);
  const Summary s = summarize(d);
  EXPECT_EQ(s.n, 10u);
  EXPECT_NEAR(s.mean, -1.58, 1e-12);
  EXPECT_NEAR(s.mean_ci.low, -2.4598858, 1e-7);
  EXPECT_NEAR(s.mean_ci.high, -0.7001142, 1e-7);
  EXPECT_NEAR(s.mean / (s.stddev / std::sqrt(10.0)), -4.0621, 1e-4);
  EXPECT_DOUBLE_EQ(s.mean_ci.level, 0.95);
  EXPECT_NEAR(s.median, -1.3, 1e-12);
  EXPECT_DOUBLE_EQ(s.min, -4.6);
  EXPECT_DOUBLE_EQ(s.max, 0.0);
  EXPECT_NEAR(s.cv, s.stddev / 1.58, 1e-12);
}

// R: t.test(extra ~ group, data = sleep) (Welch): t = -1.8608, df = 17.776, p-value = 0.07939,
// 95% CI of mean(group 1) - mean(group 2) [-3.3654832, 0.2054832]. compare_ratio works on logs,
// so exp() of the data puts R's difference of means on its log scale.
TEST(InferenceRatio, WelchMatchesRsSleepExampleOnTheLogScale) {
  const RatioEstimate e = compare_ratio(exp_of(kSleep2), exp_of(kSleep1));
  EXPECT_NEAR(std::log(e.ratio), 0.75 - 2.33, 1e-12);
  EXPECT_NEAR(e.df, 17.776, 5e-4);
  EXPECT_NEAR(e.p_value, 0.07939, 5e-6);
  EXPECT_NEAR(std::log(e.ratio_ci.low), -3.3654832, 1e-7);
  EXPECT_NEAR(std::log(e.ratio_ci.high), 0.2054832, 1e-7);
  // n >= 5 a side: the Mann-Whitney cross-check; the data tie, so the normal approximation. R:
  // wilcox.test(extra ~ group, data = sleep) prints W = 25.5, p-value = 0.06933.
  ASSERT_TRUE(e.mann_whitney_p.has_value());
  EXPECT_NEAR(*e.mann_whitney_p, 0.06933, 5e-6);
}

TEST(InferenceSummary, SmallAndConstantSamples) {
  const std::vector<double> one = {5.0};
  const Summary s1 = summarize(one);
  EXPECT_EQ(s1.n, 1u);
  EXPECT_DOUBLE_EQ(s1.mean, 5.0);
  EXPECT_DOUBLE_EQ(s1.median, 5.0);
  EXPECT_TRUE(std::isnan(s1.stddev));
  EXPECT_FALSE(s1.mean_ci.valid());
  EXPECT_FALSE(s1.median_ci.has_value());
  const std::vector<double> same = {3.0, 3.0, 3.0};
  const Summary s3 = summarize(same);
  EXPECT_DOUBLE_EQ(s3.stddev, 0.0);
  EXPECT_DOUBLE_EQ(s3.cv, 0.0);
  EXPECT_DOUBLE_EQ(s3.mean_ci.low, 3.0);
  EXPECT_DOUBLE_EQ(s3.mean_ci.high, 3.0);
  const std::vector<double> zero_mean = {-1.0, 1.0};
  EXPECT_TRUE(std::isnan(summarize(zero_mean).cv));
}

TEST(InferenceSummary, NonnegativeFiguresIntervalStopsAtZero) {
  // Two IOPS figures: t(0.975, 1) = 12.706, half width 12.706 * 70.71 / sqrt(2) = 635.3 around 150.
  const std::vector<double> two = {100.0, 200.0};
  const Summary plain = summarize(two);
  EXPECT_NEAR(plain.mean_ci.low, 150.0 - 635.3, 0.1);
  const Summary cut = summarize_nonnegative(two);
  EXPECT_DOUBLE_EQ(cut.mean_ci.low, 0.0);
  EXPECT_DOUBLE_EQ(cut.mean_ci.high, plain.mean_ci.high);
  // A value below zero: the quantity can be negative, nothing is cut.
  const std::vector<double> signed_values = {-1.0, 3.0};
  EXPECT_DOUBLE_EQ(summarize_nonnegative(signed_values).mean_ci.low, summarize(signed_values).mean_ci.low);
}

TEST(InferenceRatio, ZeroSpreadAndKnownRatio) {
  const std::vector<double> a = {100, 100, 100};
  const std::vector<double> b = {90, 90, 90};
  const RatioEstimate e = compare_ratio(a, b);
  EXPECT_NEAR(e.ratio, 0.9, 1e-12);
  EXPECT_NEAR(e.ratio_ci.low, 0.9, 1e-12);
  EXPECT_NEAR(e.ratio_ci.high, 0.9, 1e-12);
  EXPECT_DOUBLE_EQ(e.p_value, 0.0);
  EXPECT_DOUBLE_EQ(e.detectable_change, 0.0);
  EXPECT_FALSE(e.mann_whitney_p.has_value());  // n < 5
  EXPECT_DOUBLE_EQ(compare_ratio(a, a).p_value, 1.0);
}

// The smallest detectable change means what it says: with that true change and the same noise, a
// two-sided Welch test at 5% finds it in ~80% of 2,000 seeded comparisons.
TEST(InferenceRatio, DetectableChangeIsDetectedAtTheStatedPower) {
  constexpr std::size_t kN = 5;
  const double nd = static_cast<double>(kN);
  const double sigma = std::sqrt(std::log1p(0.05 * 0.05));
  // Samples whose log standard deviation is exactly sigma on both sides.
  const std::vector<double> z = {-1.2, -0.4, 0.1, 0.5, 1.0};
  double zm = 0, zss = 0;
  for (double v : z) zm += v / nd;
  for (double v : z) zss += (v - zm) * (v - zm);
  std::vector<double> side;
  for (double v : z) side.push_back(std::exp(sigma * (v - zm) / std::sqrt(zss / (nd - 1))));
  const RatioEstimate ref = compare_ratio(side, side);
  const double change = ref.detectable_change;
  ASSERT_GT(change, 0.0);
  // The approximation it starts from, t_{0.975} + t_{0.80} on Welch's df 2 (n - 1) = 8, is close.
  EXPECT_NEAR(std::log1p(change) / (sigma * std::sqrt(2.0 / nd)), 2.306 + 0.889, 0.25);
  Rng rng(0xDE7EC7);
  int detected = 0;
  constexpr int kTrials = 2000;
  for (int t = 0; t < kTrials; ++t) {
    const auto a = lognormal_runs(rng, kN, 1000.0, 0.05);
    const auto b = lognormal_runs(rng, kN, 1000.0 * (1 + change), 0.05);
    const RatioEstimate e = compare_ratio(a, b);
    detected += e.p_value < 0.05 && e.ratio > 1;
  }
  const double power = static_cast<double>(detected) / kTrials;
  std::printf("detectable change at N 5, CV 5%%: %.2f%%; detected in %.1f%% of %d\n", change * 100, power * 100,
              kTrials);
  EXPECT_GE(power, 0.77);
  EXPECT_LE(power, 0.83);
  // More runs detect less.
  std::vector<double> more;
  for (int i = 0; i < 4; ++i) more.insert(more.end(), side.begin(), side.end());
  EXPECT_LT(compare_ratio(more, more).detectable_change, change);
}

// ---- (c) Mann-Whitney U ---------------------------------------------------------------------

/// Two samples without ties whose U (pairs with a value of `a` above one of `b`) is `u`.
std::pair<std::vector<double>, std::vector<double>> samples_with_u(std::size_t m, std::size_t n, std::size_t u) {
  std::vector<double> a, b;
  for (std::size_t j = 0; j < n; ++j) b.push_back(static_cast<double>(j));
  std::size_t left = u;
  for (std::size_t i = 0; i < m; ++i) {
    const std::size_t above = std::min(n, left);  // b values below this a value
    left -= above;
    a.push_back(static_cast<double>(above) - 0.5 + 0.001 * static_cast<double>(i));
  }
  return {a, b};
}

// Critical values of U at two-sided alpha = 0.05 (the largest U with p <= 0.05), n1 = 5..13 and
// n2 = 5..20, as tabulated in the standard tables (Milton 1964, "An extended table of critical
// values for the Mann-Whitney (Wilcoxon) two-sample statistic", JASA 59:925; reproduced e.g. at
// real-statistics.com/statistics-tables/mann-whitney-table/ and in most textbooks' appendices).
TEST(InferenceMannWhitney, ExactCriticalValuesMatchThePublishedTable) {
  const int table[9][16] = {
      {2, 3, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 17, 18, 19, 20},
      {3, 5, 6, 8, 10, 11, 13, 14, 16, 17, 19, 21, 22, 24, 25, 27},
      {5, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34},
      {6, 8, 10, 13, 15, 17, 19, 22, 24, 26, 29, 31, 34, 36, 38, 41},
      {7, 10, 12, 15, 17, 20, 23, 26, 28, 31, 34, 37, 39, 42, 45, 48},
      {8, 11, 14, 17, 20, 23, 26, 29, 33, 36, 39, 42, 45, 48, 52, 55},
      {9, 13, 16, 19, 23, 26, 30, 33, 37, 40, 44, 47, 51, 55, 58, 62},
      {11, 14, 18, 22, 26, 29, 33, 37, 41, 45, 49, 53, 57, 61, 65, 69},
      {12, 16, 20, 24, 28, 33, 37, 41, 45, 50, 54, 59, 63, 67, 72, 76},
  };
  for (std::size_t r = 0; r < 9; ++r)
    for (std::size_t c = 0; c < 16; ++c) {
      const std::size_t n1 = 5 + r, n2 = 5 + c, crit = static_cast<std::size_t>(table[r][c]);
      const auto [a, b] = samples_with_u(n1, n2, crit);
      const auto [a1, b1] = samples_with_u(n1, n2, crit + 1);
      EXPECT_LE(mann_whitney_p(a, b), 0.05) << n1 << " x " << n2 << " U " << crit;
      EXPECT_GT(mann_whitney_p(a1, b1), 0.05) << n1 << " x " << n2 << " U " << crit + 1;
    }
  // n1 = n2 = 5: P(U <= 2) = 4 / 252 and P(U <= 3) = 7 / 252 of the C(10, 5) = 252 arrangements.
  const auto [a2, b2] = samples_with_u(5, 5, 2);
  EXPECT_NEAR(mann_whitney_p(a2, b2), 8.0 / 252, 1e-12);
  const auto [a3, b3] = samples_with_u(5, 5, 3);
  EXPECT_NEAR(mann_whitney_p(a3, b3), 14.0 / 252, 1e-12);
  // Symmetric: U = 25 - 2 from the other side is as extreme.
  EXPECT_NEAR(mann_whitney_p(b2, a2), 8.0 / 252, 1e-12);
  const auto [a4, b4] = samples_with_u(5, 5, 0);
  EXPECT_NEAR(mann_whitney_p(a4, b4), 2.0 / 252, 1e-12);
  const auto [a5, b5] = samples_with_u(4, 4, 8);  // the centre: p capped at 1
  EXPECT_DOUBLE_EQ(mann_whitney_p(a5, b5), 1.0);
}

// R's ?wilcox.test example (Hollander & Wolfe 1973, p. 69): x = permeability constants at 12-26
// weeks, y = at term; R prints W = 35, p-value = 0.1272 for alternative "greater" (exact): the
// two-sided exact p is twice that, 0.2544.
TEST(InferenceMannWhitney, ExactMatchesRsHollanderWolfeExample) {
  const std::vector<double> x = {0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46};
  const std::vector<double> y = {1.15, 0.88, 0.90, 0.74, 1.21};
  EXPECT_NEAR(mann_whitney_p(x, y), 2 * 0.1272061, 1e-6);
}

// The normal approximation with ties, against R's wilcox.test(x, y) (continuity correction, tie
// correction) on the example at endmemo.com/r/wilcoxon.php: W = 51.5, p-value = 0.5966; and with
// y2, W = 0, p-value = 0.001364.
TEST(InferenceMannWhitney, NormalApproximationWithTiesMatchesR) {
  const std::vector<double> x = {1, 5, 9, 24, 56, 21, 3, 7, 21, 4};
  const std::vector<double> y = {12, 15, 5, 9, 9, 14, 56, 22, 3, 7, 32, 5};
  const std::vector<double> y2 = {1233, 4356, 987, 39999, 1111, 200000};
  EXPECT_NEAR(mann_whitney_p(x, y), 0.5966, 5e-5);
  EXPECT_NEAR(mann_whitney_p(x, y2), 0.001364, 5e-7);
  // 50 or more a side (no ties): the normal approximation, close to the exact value's size.
  std::vector<double> big_a, big_b;
  for (int i = 0; i < 60; ++i) {
    big_a.push_back(i * 2.0 + 1);
    big_b.push_back(i * 2.0 + (i < 10 ? 0.5 : 1.5));
  }
  const double p = mann_whitney_p(big_a, big_b);
  EXPECT_GT(p, 0.0);
  EXPECT_LT(p, 1.0);
  const std::vector<double> all_same = {2, 2, 2, 2, 2};
  EXPECT_DOUBLE_EQ(mann_whitney_p(all_same, all_same), 1.0);
}

// ---- (d) Holm ---------------------------------------------------------------------------------

// The worked example of the Holm–Bonferroni method (Wikipedia, "Holm–Bonferroni method",
// Example; after Holm 1979): four hypotheses with p = 0.01, 0.04, 0.03, 0.005 at alpha = 0.05:
// H4 (0.005 < 0.05/4) and H1 (0.01 < 0.05/3) are rejected, H3 (0.03 > 0.05/2) and H2 are not.
// Adjusted p-values: 0.005 x 4 = 0.02, 0.01 x 3 = 0.03, 0.03 x 2 = 0.06, max(0.04 x 1, 0.06).
TEST(InferenceHolm, MatchesTheWorkedExample) {
  const std::vector<double> p = {0.01, 0.04, 0.03, 0.005};
  const std::vector<double> adj = holm_adjust(p);
  ASSERT_EQ(adj.size(), 4u);
  EXPECT_NEAR(adj[0], 0.03, 1e-15);
  EXPECT_NEAR(adj[1], 0.06, 1e-15);
  EXPECT_NEAR(adj[2], 0.06, 1e-15);
  EXPECT_NEAR(adj[3], 0.02, 1e-15);
  const bool rejected[] = {true, false, false, true};
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(adj[i] < 0.05, rejected[i]) << "H" << i + 1;
}

TEST(InferenceHolm, CapsAtOneKeepsOrderAndTies) {
  EXPECT_TRUE(holm_adjust(std::vector<double>{}).empty());
  const std::vector<double> one = {0.2};
  EXPECT_DOUBLE_EQ(holm_adjust(one)[0], 0.2);
  const std::vector<double> p = {0.6, 0.5, 0.5};
  const auto adj = holm_adjust(p);
  EXPECT_DOUBLE_EQ(adj[1], 1.0);  // 0.5 x 3 capped
  EXPECT_DOUBLE_EQ(adj[2], 1.0);
  EXPECT_DOUBLE_EQ(adj[0], 1.0);
}

TEST(InferenceVerdict, DirectionAndSignificance) {
  RatioEstimate e;
  e.ratio = 0.9;
  e.ratio_ci = {0.85, 0.95, 0.95};
  EXPECT_EQ(verdict(e, Better::higher, 0.01), Verdict::worse);
  EXPECT_EQ(verdict(e, Better::lower, 0.01), Verdict::better);
  EXPECT_EQ(verdict(e, Better::higher, 0.05), Verdict::no_difference);  // not < 1 - level
  e.ratio = 1.1;
  EXPECT_EQ(verdict(e, Better::higher, 0.049), Verdict::better);
  EXPECT_EQ(verdict(e, Better::lower, 0.049), Verdict::worse);
  EXPECT_EQ(to_string(Verdict::no_difference), "no difference detected");
}

// ---- (e) bootstrap of the median --------------------------------------------------------------

TEST(InferenceSummary, BootstrapMedianIntervalIsSeededAndOnlyFromTenValues) {
  Rng rng(99);
  const auto ten = lognormal_runs(rng, 10, 500.0, 0.1);
  const Summary a = summarize(ten, 0.95, 7);
  const Summary b = summarize(ten, 0.95, 7);
  ASSERT_TRUE(a.median_ci.has_value());
  EXPECT_EQ(a.median_ci->low, b.median_ci->low);
  EXPECT_EQ(a.median_ci->high, b.median_ci->high);
  EXPECT_LE(a.median_ci->low, a.median);
  EXPECT_GE(a.median_ci->high, a.median);
  EXPECT_GE(a.median_ci->low, a.min);
  EXPECT_LE(a.median_ci->high, a.max);
  EXPECT_LT(a.median_ci->low, a.median_ci->high);
  const std::vector<double> nine(ten.begin(), ten.begin() + 9);
  EXPECT_FALSE(summarize(nine, 0.95, 7).median_ci.has_value());
  // Another seed draws other resamples; over 1,000 seeds the interval moves.
  bool moved = false;
  for (std::uint64_t s = 8; s < 1008 && !moved; ++s) {
    const Summary c = summarize(ten, 0.95, s);
    moved = c.median_ci->low != a.median_ci->low || c.median_ci->high != a.median_ci->high;
  }
  EXPECT_TRUE(moved);
}

// ---- (f) batch means --------------------------------------------------------------------------

/// An AR(1) series x_t = mu + phi (x_{t-1} - mu) + e_t, e_t ~ N(0, sd^2), started stationary.
std::vector<double> ar1(Rng& rng, std::size_t n, double mu, double phi, double sd) {
  std::vector<double> x(n);
  double prev = mu + sd / std::sqrt(1 - phi * phi) * normal(rng);
  for (auto& v : x) {
    prev = mu + phi * (prev - mu) + sd * normal(rng);
    v = prev;
  }
  return x;
}

TEST(InferenceBatchMeans, WidensBatchesUntilIndependentAndCoversTheTrueMean) {
  for (double phi : {0.5, 0.8}) {
    Rng rng(phi == 0.5 ? 0xBA7C5 : 0xBA7C8);
    constexpr int kSeries = 1000;
    int covered = 0, independent = 0;
    for (int s = 0; s < kSeries; ++s) {
      const auto rates = ar1(rng, 600, 1000.0, phi, 50.0);
      const BatchMeans b = batch_means(rates, 1.0);
      covered += b.ci.contains(1000.0);
      independent += b.independent;
      if (b.independent) {
        // The lag-1 autocorrelation of the batches used, recomputed here, is below kMaxLag1.
        const std::size_t skip = rates.size() - b.batches * b.batch_size;
        std::vector<double> means(b.batches, 0.0);
        for (std::size_t i = 0; i < b.batches; ++i) {
          for (std::size_t j = 0; j < b.batch_size; ++j) means[i] += rates[skip + i * b.batch_size + j];
          means[i] /= static_cast<double>(b.batch_size);
        }
        double m = 0, num = 0, den = 0;
        for (double v : means) m += v / static_cast<double>(means.size());
        for (std::size_t i = 0; i < means.size(); ++i) {
          den += (means[i] - m) * (means[i] - m);
          if (i + 1 < means.size()) num += (means[i] - m) * (means[i + 1] - m);
        }
        EXPECT_NEAR(num / den, b.lag1, 1e-9);
        EXPECT_LT(b.lag1, kMaxLag1);
        EXPECT_GE(b.batches, kMinBatches);
        EXPECT_GT(b.batch_size, 1u);  // phi >= 0.5: single intervals are correlated
      }
    }
    const double pct = 100.0 * covered / kSeries;
    std::printf("batch means AR(1) phi %.1f, 600 intervals: coverage %.1f%%, independent batches in %d of %d\n", phi,
                pct, independent, kSeries);
    EXPECT_GE(pct, 92.5) << "phi " << phi;
    EXPECT_LE(pct, 97.5) << "phi " << phi;
    EXPECT_GE(independent, kSeries * 9 / 10) << "phi " << phi;
  }
}

TEST(InferenceBatchMeans, NeededDurationForTheTargetHalfWidth) {
  Rng rng(0x5EC);
  const auto noisy = ar1(rng, 60, 100.0, 0.0, 10.0);  // white noise, 60 one-second intervals
  const BatchMeans b = batch_means(noisy, 1.0);
  ASSERT_GT(b.relative_half_width, 0.02);
  EXPECT_NEAR(b.relative_half_width, (b.ci.high - b.ci.low) / 2 / std::abs(b.mean), 1e-12);
  const double scale = b.relative_half_width / 0.02;
  EXPECT_NEAR(b.needed_s, 60.0 * scale * scale, 1e-9);
  EXPECT_GT(b.needed_s, 60.0);
  // Intervals twice as long: twice the seconds for the same spread.
  EXPECT_NEAR(batch_means(noisy, 2.0).needed_s, 2 * b.needed_s, 1e-9);
  // Runs as long as they ask for reach about the target: over 200 seeded noisy runs (60 s, CV 20%,
  // about ±5%), the median relative half-width of their follow-up runs of needed_s seconds.
  std::vector<double> followed;
  for (int i = 0; i < 200; ++i) {
    const BatchMeans first = batch_means(ar1(rng, 60, 100.0, 0.0, 20.0), 1.0);
    ASSERT_GT(first.needed_s, 60.0);
    const auto longer = ar1(rng, static_cast<std::size_t>(std::ceil(first.needed_s)), 100.0, 0.0, 20.0);
    followed.push_back(batch_means(longer, 1.0).relative_half_width);
  }
  std::nth_element(followed.begin(), followed.begin() + 100, followed.end());
  EXPECT_NEAR(followed[100], 0.02, 0.002);
  // Quiet: already within ±2%.
  const auto quiet = ar1(rng, 60, 100.0, 0.0, 1.0);
  const BatchMeans q = batch_means(quiet, 1.0);
  EXPECT_LT(q.relative_half_width, 0.02);
  EXPECT_TRUE(std::isnan(q.needed_s));
  // Constant: independent, zero width.
  const std::vector<double> flat(20, 5.0);
  const BatchMeans f = batch_means(flat, 1.0);
  EXPECT_TRUE(f.independent);
  EXPECT_DOUBLE_EQ(f.ci.low, 5.0);
  EXPECT_DOUBLE_EQ(f.ci.high, 5.0);
  EXPECT_TRUE(std::isnan(f.needed_s));
  // Too few intervals to widen (fewer than 2 x kMinBatches): batches of one, independence as found.
  const std::vector<double> trend = {1, 2, 3, 4, 5, 6, 7, 8};
  const BatchMeans t = batch_means(trend, 1.0);
  EXPECT_EQ(t.batch_size, 1u);
  EXPECT_EQ(t.batches, 8u);
  EXPECT_FALSE(t.independent);
  EXPECT_TRUE(t.ci.contains(4.5));
}

// ---- (g) pair verdicts ------------------------------------------------------------------------

/// n ratios whose logs have exactly the given mean and standard deviation.
std::vector<double> ratios_with(std::size_t n, double log_mean, double log_sd) {
  std::vector<double> z(n);
  for (std::size_t i = 0; i < n; ++i) z[i] = static_cast<double>(i) - static_cast<double>(n - 1) / 2;
  double ss = 0;
  for (double v : z) ss += v * v;
  const double sd = std::sqrt(ss / static_cast<double>(n - 1));
  std::vector<double> out;
  for (double v : z) out.push_back(std::exp(log_mean + log_sd * v / sd));
  return out;
}

TEST(InferencePairs, VerdictPerRule) {
  using enum BoundVerdict;
  const std::vector<double> high = {1.25, 1.27, 1.26, 1.24};
  const std::vector<double> low = {1.05, 1.06, 1.04};
  const std::vector<double> around = {1.10, 1.20, 1.16, 1.22};
  EXPECT_EQ(judge_pairs(high, 1.15, Rule::at_least).verdict, pass);
  EXPECT_EQ(judge_pairs(low, 1.15, Rule::at_least).verdict, fail);
  EXPECT_EQ(judge_pairs(around, 1.15, Rule::at_least).verdict, unresolved);
  EXPECT_EQ(judge_pairs(low, 1.10, Rule::at_most).verdict, pass);
  EXPECT_EQ(judge_pairs(high, 1.10, Rule::at_most).verdict, fail);
  EXPECT_EQ(judge_pairs(around, 1.15, Rule::at_most).verdict, unresolved);
  // not_below: the interval contains the bound or lies above it.
  const std::vector<double> tie = {0.98, 1.01, 0.99};
  const std::vector<double> slower = {0.90, 0.91, 0.92};
  EXPECT_EQ(judge_pairs(tie, 1.0, Rule::not_below).verdict, pass);
  EXPECT_EQ(judge_pairs(high, 1.0, Rule::not_below).verdict, pass);
  EXPECT_EQ(judge_pairs(slower, 1.0, Rule::not_below).verdict, fail);
  EXPECT_FALSE(judge_pairs(tie, 1.0, Rule::not_below).pairs_needed.has_value());
  // The interval: Student t on the logs, n - 1 df, around the geometric mean.
  const PairVerdict v = judge_pairs(high, 1.15, Rule::at_least);
  EXPECT_EQ(v.n, 4u);
  EXPECT_NEAR(v.ratio, std::pow(1.25 * 1.27 * 1.26 * 1.24, 0.25), 1e-12);
  EXPECT_LT(v.ci.low, v.ratio);
  EXPECT_GT(v.ci.high, v.ratio);
  EXPECT_FALSE(v.pairs_needed.has_value());
  // No spread: the point decides.
  const std::vector<double> same = {1.2, 1.2};
  EXPECT_EQ(judge_pairs(same, 1.15, Rule::at_least).verdict, pass);
  EXPECT_EQ(judge_pairs(same, 1.25, Rule::at_least).verdict, fail);
  const std::vector<double> ones = {1.0, 1.0};  // exp(log(1)) is exactly 1: bounds are inclusive
  EXPECT_EQ(judge_pairs(ones, 1.0, Rule::at_most).verdict, pass);
  EXPECT_EQ(judge_pairs(ones, 1.0, Rule::at_least).verdict, pass);
  EXPECT_EQ(to_string(BoundVerdict::unresolved), "UNRESOLVED");
  EXPECT_EQ(to_string(Rule::not_below), "not_below");
}

// pairs_needed is the smallest n at which the same mean and spread would resolve the verdict:
// n such ratios resolve it (the side the mean is on), n - 1 do not.
TEST(InferencePairs, PairsNeededResolvesWhenSimulatedWithThatMany) {
  struct Case {
    double log_mean, log_sd, bound;
    Rule rule;
    BoundVerdict expected;
  };
  const Case cases[] = {{std::log(1.17), 0.045, 1.15, Rule::at_least, BoundVerdict::pass},
                        {std::log(1.13), 0.06, 1.15, Rule::at_least, BoundVerdict::fail},
                        {std::log(0.97), 0.05, 1.00, Rule::at_most, BoundVerdict::pass},
                        {std::log(1.12), 0.08, 1.10, Rule::at_most, BoundVerdict::fail}};
  for (const Case& c : cases) {
    const PairVerdict v = judge_pairs(ratios_with(3, c.log_mean, c.log_sd), c.bound, c.rule);
    ASSERT_EQ(v.verdict, BoundVerdict::unresolved) << c.bound;
    ASSERT_TRUE(v.pairs_needed.has_value());
    const std::size_t n = *v.pairs_needed;
    EXPECT_GT(n, 3u);
    EXPECT_EQ(judge_pairs(ratios_with(n, c.log_mean, c.log_sd), c.bound, c.rule).verdict, c.expected) << n;
    if (n > 4) {
      EXPECT_EQ(judge_pairs(ratios_with(n - 1, c.log_mean, c.log_sd), c.bound, c.rule).verdict,
                BoundVerdict::unresolved)
          << n - 1;
    }
  }
  // The mean exactly on the bound: no number of pairs resolves it.
  const std::vector<double> on = {0.9, 1 / 0.9};
  const PairVerdict o = judge_pairs(on, 1.0, Rule::at_least);
  EXPECT_EQ(o.verdict, BoundVerdict::unresolved);
  EXPECT_FALSE(o.pairs_needed.has_value());
  // More than kMaxPairsNeeded: nullopt too.
  const PairVerdict far = judge_pairs(ratios_with(3, std::log(1.001), 0.2), 1.0, Rule::at_least);
  EXPECT_EQ(far.verdict, BoundVerdict::unresolved);
  EXPECT_FALSE(far.pairs_needed.has_value());
}

// ---- (h) invalid input ------------------------------------------------------------------------

TEST(InferenceInput, InvalidInputThrowsNamingTheProblem) {
  const std::vector<double> ok = {1.0, 2.0, 3.0};
  const std::vector<double> nan = {1.0, std::nan(""), 3.0};
  const std::vector<double> zero = {1.0, 0.0, 3.0};
  const std::vector<double> neg = {1.0, -2.0};
  const std::vector<double> one = {1.0};
  const std::vector<double> empty;
  expect_invalid([&] { summarize(empty); }, "no values");
  expect_invalid([&] { summarize(nan); }, "value 1 is nan");
  expect_invalid([&] { summarize(ok, 1.5); }, "level 1.5");
  expect_invalid([&] { compare_ratio(one, ok); }, "1 baseline and 3 candidate values");
  expect_invalid([&] { compare_ratio(ok, zero); }, "candidate value 1 is 0");
  expect_invalid([&] { compare_ratio(neg, ok); }, "baseline value 1 is -2");
  expect_invalid([&] { compare_ratio(ok, nan); }, "finite values > 0");
  expect_invalid([&] { compare_ratio(ok, ok, 0.95, 1.0); }, "power 1");
  expect_invalid([&] { mann_whitney_p(empty, ok); }, "each side needs at least 1");
  expect_invalid([&] { mann_whitney_p(ok, nan); }, "second side's value 1");
  const std::vector<double> bad_p = {0.1, 1.2};
  expect_invalid([&] { holm_adjust(bad_p); }, "p-value 1 is 1.2");
  expect_invalid([&] { verdict(RatioEstimate{}, Better::higher, std::nan("")); }, "adjusted p-value");
  expect_invalid([&] { batch_means(ok, 1.0); }, "3 interval rates; at least 4");
  const std::vector<double> four = {1, 2, 3, 4};
  expect_invalid([&] { batch_means(four, 0.0); }, "interval length 0 s");
  expect_invalid([&] { batch_means(four, 1.0, 0.95, -1); }, "target relative half-width");
  const std::vector<double> four_nan = {1, 2, std::nan(""), 4};
  expect_invalid([&] { batch_means(four_nan, 1.0); }, "interval rate value 2");
  expect_invalid([&] { judge_pairs(one, 1.0, Rule::at_least); }, "1 pair ratio(s)");
  expect_invalid([&] { judge_pairs(zero, 1.0, Rule::at_least); }, "pair ratio value 1 is 0");
  expect_invalid([&] { judge_pairs(ok, 0.0, Rule::at_least); }, "bound 0");
  expect_invalid([&] { judge_pairs(ok, 1.0, Rule::at_least, 0.0); }, "level 0");
}

}  // namespace
}  // namespace drivelab::inference
