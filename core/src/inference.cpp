#include "drivelab/core/inference.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <utility>
#include <vector>

#include <boost/math/distributions/non_central_t.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <boost/math/tools/roots.hpp>
#include <fmt/format.h>

#include "drivelab/core/rng.hpp"

namespace drivelab::inference {
namespace {

namespace bm = boost::math;

[[noreturn]] void bad(const std::string& message) { throw std::invalid_argument(message); }

void check_level(const char* fn, double level) {
  if (!(level > 0 && level < 1)) bad(fmt::format("{}: level {} is not between 0 and 1 (0.95 = 95%)", fn, level));
}

void check_finite(const char* fn, const char* what, std::span<const double> values) {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i]))
      bad(fmt::format("{}: {} value {} is {}, not a finite number", fn, what, i, values[i]));
}

/// Natural logs of values that must all be finite and > 0 (a ratio of geometric means).
std::vector<double> logs_of(const char* fn, const char* what, std::span<const double> values) {
  std::vector<double> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i]) || !(values[i] > 0))
      bad(fmt::format("{}: {} value {} is {}; a ratio needs finite values > 0", fn, what, i, values[i]));
    out[i] = std::log(values[i]);
  }
  return out;
}

/// Mean and sample variance (n - 1; NaN for one value), two passes.
struct Moments {
  double mean = kNaN;
  double var = kNaN;
};
Moments moments(std::span<const double> x) {
  Moments m;
  const double n = static_cast<double>(x.size());
  m.mean = std::accumulate(x.begin(), x.end(), 0.0) / n;
  if (x.size() < 2) return m;
  double ss = 0;
  for (double v : x) ss += (v - m.mean) * (v - m.mean);
  m.var = ss / (n - 1);
  return m;
}

/// The two-sided critical value t_{1 - (1 - level) / 2, df} (Boost.Math students_t).
double t_critical(double df, double level) { return bm::quantile(bm::students_t(df), 1 - (1 - level) / 2); }

double median_of_sorted(std::span<const double> s) {
  const std::size_t n = s.size();
  return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/// Median of `x` (reordered in place).
double median_in_place(std::vector<double>& x) {
  const std::size_t n = x.size();
  const auto mid = x.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(x.begin(), mid, x.end());
  if (n % 2 == 1) return *mid;
  return (*std::max_element(x.begin(), mid) + *mid) / 2;
}

/// Percentile bootstrap of the median (Efron & Tibshirani, "An Introduction to the Bootstrap",
/// 1993, ch. 13): kBootstrapResamples resamples of n drawn with replacement, the interval between
/// the order statistics at (1 - level) / 2 and (1 + level) / 2 of their medians.
Interval bootstrap_median(std::span<const double> sorted, double level, std::uint64_t seed) {
  Rng rng(seed);
  const std::size_t n = sorted.size();
  std::vector<double> resample(n);
  std::vector<double> medians(kBootstrapResamples);
  for (auto& m : medians) {
    for (auto& v : resample) v = sorted[static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(n) - 1))];
    m = median_in_place(resample);
  }
  std::sort(medians.begin(), medians.end());
  const double b = static_cast<double>(kBootstrapResamples);
  const double alpha = 1 - level;
  // The order statistics floor(B alpha / 2) and ceil(B (1 - alpha / 2)) - 1 (0-based): 250 and
  // 9749 at 95%; the 1e-9 keeps binary rounding (1 - 0.95 = 0.05000000000000004) from moving them.
  const auto lo = static_cast<std::size_t>(std::floor(alpha / 2 * b + 1e-9));
  auto hi = static_cast<std::size_t>(std::ceil((1 - alpha / 2) * b - 1e-9));
  hi = std::clamp<std::size_t>(hi, 1, kBootstrapResamples) - 1;
  return {medians[std::min(lo, hi)], medians[hi], level};
}

/// The noncentrality lambda at which a two-sided t test with `df` degrees of freedom at 1 - level
/// rejects with probability `power`: P(T' > t_c) + P(T' < -t_c) = power, T' ~ noncentral t(df,
/// lambda), t_c = t_{1 - (1 - level) / 2, df} (Boost.Math non_central_t). Solved by TOMS 748 from
/// the usual approximation lambda ~ t_c + t_{power, df}.
double noncentrality_for_power(double df, double level, double power) {
  const double alpha = 1 - level;
  if (power <= alpha) return 0;  // the test's size alone reaches it
  const double tc = t_critical(df, level);
  auto excess = [&](double lambda) {
    const bm::non_central_t d(df, lambda);
    return bm::cdf(bm::complement(d, tc)) + bm::cdf(d, -tc) - power;
  };
  double hi = tc + bm::quantile(bm::students_t(df), power);
  double f_hi = excess(hi);
  double lo = 0;
  double f_lo = alpha - power;
  while (f_hi < 0) {  // the approximation fell short: widen upwards
    lo = hi;
    f_lo = f_hi;
    hi *= 2;
    f_hi = excess(hi);
  }
  if (f_hi == 0) return hi;
  std::uintmax_t iterations = 100;
  const auto r = bm::tools::toms748_solve(excess, lo, hi, f_lo, f_hi, bm::tools::eps_tolerance<double>(40), iterations);
  return (r.first + r.second) / 2;
}

/// Welch–Satterthwaite degrees of freedom of a difference of means with variances va, vb.
double welch_df(double va, std::size_t na, double vb, std::size_t nb) {
  const double a = va / static_cast<double>(na);
  const double b = vb / static_cast<double>(nb);
  return (a + b) * (a + b) / (a * a / static_cast<double>(na - 1) + b * b / static_cast<double>(nb - 1));
}

/// Lag-1 autocorrelation of x (the standard estimator: lag-1 autocovariance over the variance,
/// both with the divisor n); 0 when x does not vary.
double lag1_autocorrelation(std::span<const double> x) {
  const Moments m = moments(x);
  double num = 0, den = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    den += (x[i] - m.mean) * (x[i] - m.mean);
    if (i + 1 < x.size()) num += (x[i] - m.mean) * (x[i + 1] - m.mean);
  }
  return den > 0 ? num / den : 0.0;
}

}  // namespace

Summary summarize(std::span<const double> values, double level, std::uint64_t seed) {
  if (values.empty()) bad("summarize: no values");
  check_finite("summarize", "the", values);
  check_level("summarize", level);
  Summary s;
  s.n = values.size();
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  const Moments m = moments(values);
  s.mean = m.mean;
  s.median = median_of_sorted(sorted);
  s.min = sorted.front();
  s.max = sorted.back();
  s.mean_ci.level = level;
  if (s.n >= 2) {
    s.stddev = std::sqrt(m.var);
    s.cv = s.mean != 0 ? s.stddev / std::abs(s.mean) : kNaN;
    const double half =
        t_critical(static_cast<double>(s.n - 1), level) * s.stddev / std::sqrt(static_cast<double>(s.n));
    s.mean_ci = {s.mean - half, s.mean + half, level};
  }
  if (s.n >= kMinBootstrapN) s.median_ci = bootstrap_median(sorted, level, seed);
  return s;
}

Summary summarize_nonnegative(std::span<const double> values, double level, std::uint64_t seed) {
  Summary s = summarize(values, level, seed);
  if (s.min >= 0 && s.mean_ci.valid()) s.mean_ci.low = std::max(s.mean_ci.low, 0.0);
  return s;
}

RatioEstimate compare_ratio(std::span<const double> baseline, std::span<const double> candidate, double level,
                            double power) {
  if (baseline.size() < 2 || candidate.size() < 2)
    bad(fmt::format("compare_ratio: {} baseline and {} candidate values; each side needs at least 2", baseline.size(),
                    candidate.size()));
  check_level("compare_ratio", level);
  if (!(power > 0 && power < 1)) bad(fmt::format("compare_ratio: power {} is not between 0 and 1 (0.8 = 80%)", power));
  const std::vector<double> la = logs_of("compare_ratio", "baseline", baseline);
  const std::vector<double> lb = logs_of("compare_ratio", "candidate", candidate);
  const std::size_t na = la.size(), nb = lb.size();
  const Moments a = moments(la), b = moments(lb);
  RatioEstimate e;
  e.n_baseline = na;
  e.n_candidate = nb;
  const double diff = b.mean - a.mean;
  e.ratio = std::exp(diff);
  e.ratio_ci.level = level;
  const double se = std::sqrt(a.var / static_cast<double>(na) + b.var / static_cast<double>(nb));
  if (se == 0) {
    // No spread on either side: the difference is known exactly (Welch's df is 0/0; the pooled
    // test's na + nb - 2 is stated instead).
    e.df = static_cast<double>(na + nb - 2);
    e.ratio_ci = {e.ratio, e.ratio, level};
    e.p_value = diff == 0 ? 1.0 : 0.0;
  } else {
    e.df = welch_df(a.var, na, b.var, nb);
    const double half = t_critical(e.df, level) * se;
    e.ratio_ci = {std::exp(diff - half), std::exp(diff + half), level};
    e.p_value = 2 * bm::cdf(bm::complement(bm::students_t(e.df), std::abs(diff) / se));
  }
  if (na >= 5 && nb >= 5) e.mann_whitney_p = mann_whitney_p(baseline, candidate);
  // Detectable change: the pooled log variance on both sides, Welch's df for it, and the
  // noncentrality that gives `power`.
  const double pooled = ((static_cast<double>(na) - 1) * a.var + (static_cast<double>(nb) - 1) * b.var) /
                        static_cast<double>(na + nb - 2);
  const double se_pooled = std::sqrt(pooled * (1 / static_cast<double>(na) + 1 / static_cast<double>(nb)));
  e.detectable_change =
      se_pooled == 0 ? 0.0
                     : std::expm1(se_pooled * noncentrality_for_power(welch_df(pooled, na, pooled, nb), level, power));
  return e;
}

double mann_whitney_p(std::span<const double> a, std::span<const double> b) {
  if (a.empty() || b.empty())
    bad(fmt::format("mann_whitney_p: {} and {} values; each side needs at least 1", a.size(), b.size()));
  check_finite("mann_whitney_p", "first side's", a);
  check_finite("mann_whitney_p", "second side's", b);
  const std::size_t m = a.size(), n = b.size(), total = m + n;
  // Mid-ranks of the pooled values; U of `a` = (sum of a's ranks) - m (m + 1) / 2.
  std::vector<std::pair<double, bool>> pooled;  // value, from a
  pooled.reserve(total);
  for (double v : a) pooled.emplace_back(v, true);
  for (double v : b) pooled.emplace_back(v, false);
  std::sort(pooled.begin(), pooled.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  double rank_sum_a = 0, tie_term = 0;
  bool ties = false;
  for (std::size_t i = 0; i < total;) {
    std::size_t j = i;
    while (j < total && pooled[j].first == pooled[i].first) ++j;
    const double count = static_cast<double>(j - i);
    const double mid_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (std::size_t k = i; k < j; ++k)
      if (pooled[k].second) rank_sum_a += mid_rank;
    if (j - i > 1) {
      ties = true;
      tie_term += count * count * count - count;
    }
    i = j;
  }
  const double dm = static_cast<double>(m), dn = static_cast<double>(n), dt = static_cast<double>(total);
  const double u = rank_sum_a - dm * (dm + 1) / 2;
  if (m < 50 && n < 50 && !ties) {
    // Exact null distribution of U: every arrangement of the m + n ranks equally likely.
    // P_{i,j}(u) = i / (i + j) P_{i-1,j}(u - j) + j / (i + j) P_{i,j-1}(u) (the largest value
    // comes from the first side, with i values, or the second), P_{i,0} = P_{0,j} = [u == 0];
    // probabilities rather than counts, so every step is a sum of positive terms.
    const std::size_t umax = m * n;
    std::vector<std::vector<double>> prev(n + 1, std::vector<double>(umax + 1, 0.0)), cur = prev;
    for (auto& row : prev) row[0] = 1;  // i = 0
    for (std::size_t i = 1; i <= m; ++i) {
      cur[0].assign(umax + 1, 0.0);
      cur[0][0] = 1;  // j = 0
      for (std::size_t j = 1; j <= n; ++j) {
        const double wi = static_cast<double>(i) / static_cast<double>(i + j);
        const double wj = 1 - wi;
        auto& out = cur[j];
        for (std::size_t k = 0; k <= i * j; ++k) {
          const double from_a = k >= j ? prev[j][k - j] : 0.0;
          const double from_b = k <= i * (j - 1) ? cur[j - 1][k] : 0.0;
          out[k] = wi * from_a + wj * from_b;
        }
        std::fill(out.begin() + static_cast<std::ptrdiff_t>(i * j + 1), out.end(), 0.0);
      }
      std::swap(prev, cur);
    }
    const auto& dist = prev[n];
    const auto ui = static_cast<std::size_t>(std::llround(u));
    double lower = 0, upper = 0;
    for (std::size_t k = 0; k <= umax; ++k) {
      if (k <= ui) lower += dist[k];
      if (k >= ui) upper += dist[k];
    }
    return std::min(1.0, 2 * std::min(lower, upper));
  }
  // Normal approximation with the tie correction of the variance and a continuity correction of
  // 0.5 towards the mean (as R's wilcox.test with correct = TRUE).
  const double sigma = std::sqrt(dm * dn / 12 * ((dt + 1) - tie_term / (dt * (dt - 1))));
  if (sigma == 0) return 1.0;  // every value the same
  double z = u - dm * dn / 2;
  z = (z - (z > 0 ? 0.5 : z < 0 ? -0.5 : 0.0)) / sigma;
  const bm::normal nd;
  return std::min(1.0, 2 * std::min(bm::cdf(nd, z), bm::cdf(bm::complement(nd, z))));
}

std::vector<double> holm_adjust(std::span<const double> p_values) {
  for (std::size_t i = 0; i < p_values.size(); ++i)
    if (!(p_values[i] >= 0 && p_values[i] <= 1))
      bad(fmt::format("holm_adjust: p-value {} is {}, not in [0, 1]", i, p_values[i]));
  const std::size_t m = p_values.size();
  std::vector<std::size_t> order(m);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return p_values[x] < p_values[y]; });
  std::vector<double> adjusted(m);
  double running = 0;
  for (std::size_t i = 0; i < m; ++i) {
    running = std::max(running, std::min(1.0, static_cast<double>(m - i) * p_values[order[i]]));
    adjusted[order[i]] = running;
  }
  return adjusted;
}

Verdict verdict(const RatioEstimate& e, Better better, double adjusted_p) {
  if (!(adjusted_p >= 0 && adjusted_p <= 1))
    bad(fmt::format("verdict: adjusted p-value {} is not in [0, 1]", adjusted_p));
  // 1 - 0.95 is 0.05000000000000004 in binary: rounded to 12 decimals, so that p = 0.05 is not
  // below alpha = 0.05.
  const double alpha = std::round((1 - e.ratio_ci.level) * 1e12) / 1e12;
  if (!(adjusted_p < alpha) || !(e.ratio != 1) || !std::isfinite(e.ratio)) return Verdict::no_difference;
  const bool higher = e.ratio > 1;
  return higher == (better == Better::higher) ? Verdict::better : Verdict::worse;
}

BatchMeans batch_means(std::span<const double> rates, double interval_s, double level,
                       double target_relative_half_width) {
  if (rates.size() < 4) bad(fmt::format("batch_means: {} interval rates; at least 4 are needed", rates.size()));
  check_finite("batch_means", "interval rate", rates);
  check_level("batch_means", level);
  if (!(interval_s > 0) || !std::isfinite(interval_s))
    bad(fmt::format("batch_means: interval length {} s is not a finite number > 0", interval_s));
  if (!(target_relative_half_width > 0) || !std::isfinite(target_relative_half_width))
    bad(fmt::format("batch_means: target relative half-width {} is not a finite number > 0",
                    target_relative_half_width));
  const std::size_t n = rates.size();
  BatchMeans r;
  std::vector<double> means;
  for (std::size_t size = 1;; size *= 2) {
    // The first n mod size intervals (the run's earliest, nearest the warm-up) are left out.
    const std::size_t k = n / size, skip = n - k * size;
    means.assign(k, 0.0);
    for (std::size_t i = 0; i < k; ++i) {
      const auto first = rates.begin() + static_cast<std::ptrdiff_t>(skip + i * size);
      means[i] = std::accumulate(first, first + static_cast<std::ptrdiff_t>(size), 0.0) / static_cast<double>(size);
    }
    r.batch_size = size;
    r.batches = k;
    r.lag1 = lag1_autocorrelation(means);
    r.independent = r.lag1 < kMaxLag1;
    if (r.independent || n / (2 * size) < kMinBatches) break;
  }
  const Moments m = moments(means);
  r.mean = m.mean;
  const double k = static_cast<double>(r.batches);
  // The batch means' residual lag-1 correlation r1 > 0 widens the standard error by
  // sqrt((1 + r1) / (1 - r1)), the variance of the mean of an AR(1) series (Box, Jenkins &
  // Reinsel, "Time Series Analysis", sec. 2.1; the "effective sample size" k (1 - r1) / (1 + r1)):
  // below kMaxLag1 at most 22%, and it keeps the interval honest where the batches could not be
  // made independent.
  const double r1 = std::clamp(r.lag1, 0.0, 0.99);
  const double se = std::sqrt(m.var / k) * std::sqrt((1 + r1) / (1 - r1));
  const double half = t_critical(k - 1, level) * se;
  r.ci = {r.mean - half, r.mean + half, level};
  r.relative_half_width = r.mean != 0 ? half / std::abs(r.mean) : kNaN;
  const double measured_s = static_cast<double>(n) * interval_s;
  if (std::isfinite(r.relative_half_width) && r.relative_half_width > target_relative_half_width) {
    const double scale = r.relative_half_width / target_relative_half_width;
    r.needed_s = measured_s * scale * scale;
  }
  return r;
}

PairVerdict judge_pairs(std::span<const double> ratios, double bound, Rule rule, double level) {
  if (ratios.size() < 2) bad(fmt::format("judge_pairs: {} pair ratio(s); an interval needs at least 2", ratios.size()));
  check_level("judge_pairs", level);
  if (!(bound > 0) || !std::isfinite(bound))
    bad(fmt::format("judge_pairs: bound {} is not a finite number > 0", bound));
  const std::vector<double> logs = logs_of("judge_pairs", "pair ratio", ratios);
  const Moments m = moments(logs);
  const double sd = std::sqrt(m.var);
  auto half_width = [&](std::size_t n) {
    return sd == 0 ? 0.0 : t_critical(static_cast<double>(n - 1), level) * sd / std::sqrt(static_cast<double>(n));
  };
  PairVerdict v;
  v.n = logs.size();
  v.ratio = std::exp(m.mean);
  const double half = half_width(v.n);
  v.ci = {std::exp(m.mean - half), std::exp(m.mean + half), level};
  const Interval& ci = v.ci;
  switch (rule) {
    case Rule::at_least:
      v.verdict = ci.low >= bound   ? BoundVerdict::pass
                  : ci.high < bound ? BoundVerdict::fail
                                    : BoundVerdict::unresolved;
      break;
    case Rule::at_most:
      v.verdict = ci.high <= bound ? BoundVerdict::pass
                  : ci.low > bound ? BoundVerdict::fail
                                   : BoundVerdict::unresolved;
      break;
    case Rule::not_below: v.verdict = ci.high >= bound ? BoundVerdict::pass : BoundVerdict::fail; break;
  }
  if (v.verdict != BoundVerdict::unresolved) return v;
  // The interval straddles the bound: the smallest n whose half-width, at the observed mean and
  // spread, would fall short of the mean's distance from the bound (the interval on one side).
  const double distance = std::abs(m.mean - std::log(bound));
  if (distance == 0) return v;
  for (std::size_t n = v.n + 1; n <= kMaxPairsNeeded; ++n)
    if (half_width(n) < distance) {
      v.pairs_needed = n;
      break;
    }
  return v;
}

}  // namespace drivelab::inference
