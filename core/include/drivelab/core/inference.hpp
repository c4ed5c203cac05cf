#pragma once
/// \file inference.hpp
/// Statistical inference over repeated measurements (issue 32; docs/confidence.md): confidence
/// intervals of a mean (Student t) and of a median (seeded percentile bootstrap), the comparison of
/// two sets of runs as a ratio (Welch's t on log values, so the interval is of the ratio), the
/// Mann-Whitney U test as a cross-check, Holm's step-down correction across a test's metrics, the
/// smallest difference a comparison could have detected, batch means over one run's intervals, and
/// the verdict of a benchmark's pair ratios against a bound.
///
/// Distributions and their quantiles come from Boost.Math (students_t, normal); nothing here
/// hand-writes a quantile function. The Mann-Whitney exact null distribution and Holm's procedure
/// are ours, tested against published tables (tests/unit/core/inference_test.cpp).
///
/// All functions are pure and deterministic (the bootstrap takes its seed); they throw
/// std::invalid_argument on input they cannot use (named in the message): non-finite values, a
/// ratio of values that are not all > 0, too few values for the figure asked, a level or power
/// outside (0, 1).
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "drivelab/core/names.hpp"

namespace drivelab::inference {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// A two-sided confidence interval [low, high] at `level` (0.95 = 95%). NaN bounds: not computable
/// (too few values).
struct Interval {
  double low = kNaN;
  double high = kNaN;
  double level = 0.95;
  bool valid() const noexcept { return low == low && high == high; }
  bool contains(double x) const noexcept { return valid() && low <= x && x <= high; }
};

/// From this N on, a percentile bootstrap of the median reaches its nominal 95% level well enough
/// to be reported (below it the median's interval is the [min, max] of too few values).
inline constexpr std::size_t kMinBootstrapN = 10;
/// Resamples drawn by the bootstrap of the median.
inline constexpr std::size_t kBootstrapResamples = 10000;

/// N repetitions of one metric. stddev is the sample standard deviation (n - 1); cv = stddev /
/// |mean| (NaN when the mean is 0); mean_ci is Student's t with n - 1 degrees of freedom (invalid
/// when n < 2); median_ci is a percentile bootstrap (kBootstrapResamples resamples, xoshiro256**
/// seeded with `seed`) only when n >= kMinBootstrapN.
struct Summary {
  std::size_t n = 0;
  double mean = kNaN;
  double median = kNaN;
  double stddev = kNaN;
  double cv = kNaN;
  double min = kNaN;
  double max = kNaN;
  Interval mean_ci{};
  std::optional<Interval> median_ci{};
};
/// Throws std::invalid_argument on an empty span or a non-finite value.
Summary summarize(std::span<const double> values, double level = 0.95, std::uint64_t seed = 1);

/// summarize() for a quantity that cannot be negative (IOPS, TPS, latency, seconds): the mean's
/// t interval is cut at 0 when no value is below it — at N = 2 (t = 12.7) two close figures
/// otherwise give an interval reaching below zero. Cutting a confidence interval at the edge of the
/// parameter's range keeps its coverage (the true mean is never in the part cut off).
Summary summarize_nonnegative(std::span<const double> values, double level = 0.95, std::uint64_t seed = 1);

/// A candidate's runs against a baseline's, as the ratio candidate / baseline of their geometric
/// means: Welch's t on the natural logs (Welch 1947; Welch–Satterthwaite degrees of freedom), so
/// ratio_ci is exp() of the interval of the difference of the log means. Log-normal run-to-run
/// noise is what storage measurements show (FAST '17, "On the Performance Variation in Modern
/// Storage Stacks", Cao et al.), and a ratio is what a buyer reads ("candidate 7% slower").
struct RatioEstimate {
  std::size_t n_baseline = 0;
  std::size_t n_candidate = 0;
  double ratio = kNaN;  ///< candidate / baseline, geometric means
  Interval ratio_ci{};
  double df = kNaN;       ///< Welch–Satterthwaite degrees of freedom
  double p_value = kNaN;  ///< two-sided, H0: ratio == 1
  /// Two-sided Mann-Whitney U p-value (exact below 50 values a side without ties, else the normal
  /// approximation with tie and continuity corrections); only when both sides have n >= 5.
  std::optional<double> mann_whitney_p{};
  /// The smallest relative change (0.03 = 3%) that a two-sided Welch test at 1 - level with these
  /// n and the pooled log standard deviation s detects with probability `power`, either way:
  /// exp(lambda * s * sqrt(1/n_b + 1/n_c)) - 1, where lambda is the noncentrality at which the
  /// noncentral t (Boost.Math non_central_t; Welch's df for equal variances) exceeds the critical
  /// t with probability `power` (root-found from the approximation t_{1-a/2} + t_{power}). A
  /// decrease of 1 - exp(-lambda ...) is detected too (slightly smaller). 0 when s is 0.
  double detectable_change = kNaN;
};
/// Throws std::invalid_argument when a side has fewer than 2 values, or a value is not finite and
/// > 0. Two sides with zero variance give a zero-width interval (and p 0 or 1).
RatioEstimate compare_ratio(std::span<const double> baseline, std::span<const double> candidate, double level = 0.95,
                            double power = 0.80);

/// Two-sided Mann-Whitney U test (Mann & Whitney 1947) of `a` against `b`. Exact null distribution
/// when both sides have fewer than 50 values and there are no ties; otherwise the normal
/// approximation with the tie correction and a continuity correction of 0.5 (as R's wilcox.test).
/// Throws std::invalid_argument on an empty side or a non-finite value.
double mann_whitney_p(std::span<const double> a, std::span<const double> b);

/// Holm's step-down adjusted p-values (Holm 1979), in the order given: sorted ascending, the i-th
/// smallest (0-based) is multiplied by (m - i), made non-decreasing, capped at 1. Throws
/// std::invalid_argument on a p-value outside [0, 1].
std::vector<double> holm_adjust(std::span<const double> p_values);

/// Which way a metric is better (the metric catalogue's direction).
enum class Better { higher, lower };

/// The verdict of one comparison. Words: "better", "worse", "no difference detected".
enum class Verdict { better, worse, no_difference };
inline constexpr EnumNames<Verdict, 3> kVerdictNames{
    {{"better", Verdict::better}, {"worse", Verdict::worse}, {"no difference detected", Verdict::no_difference}}};
inline std::string_view to_string(Verdict v) noexcept { return name_of(kVerdictNames, v); }

/// better/worse when `adjusted_p` < 1 - e.ratio_ci.level (Holm-adjusted across the test's
/// metrics) and the ratio lies on that side of 1 for a metric that is better `better`; otherwise
/// no_difference. Throws std::invalid_argument on an adjusted_p outside [0, 1].
Verdict verdict(const RatioEstimate& e, Better better, double adjusted_p);

/// One run's within-run confidence interval of its mean rate by batch means (Law & Kelton,
/// "Simulation Modeling and Analysis", batch means; Schmeiser 1982): the run's per-interval rates
/// (equal-length intervals) are grouped into batches, the batch size doubled until the lag-1
/// autocorrelation of the batch means is below kMaxLag1 (or fewer than kMinBatches batches would
/// remain), and a Student t interval is taken over the batch means, its standard error widened by
/// sqrt((1 + r) / (1 - r)) for their residual lag-1 autocorrelation r > 0 (the variance of the mean
/// of an AR(1) series; at most 22% once r < kMaxLag1). The first n mod batch_size intervals (the
/// earliest) are left out. This is within-run noise only: it says nothing of how another run, or
/// another day, would come out.
inline constexpr double kMaxLag1 = 0.2;
inline constexpr std::size_t kMinBatches = 10;
struct BatchMeans {
  double mean = kNaN;
  Interval ci{};
  std::size_t batches = 0;
  std::size_t batch_size = 0;  ///< intervals per batch
  double lag1 = kNaN;          ///< lag-1 autocorrelation of the batch means used
  bool independent = false;    ///< lag1 < kMaxLag1 was reached
  /// Relative half-width of ci (0.02 = ±2%).
  double relative_half_width = kNaN;
  /// Measured seconds that would give ±target_relative_half_width at this level, from the observed
  /// spread (half-width scales with 1/sqrt(duration): rates.size() x interval_s x (relative
  /// half-width / target)^2); NaN when already within it (or the mean is 0).
  double needed_s = kNaN;
};
/// `rates`: per-interval rates, in order; `interval_s`: their length. Throws std::invalid_argument
/// on fewer than 4 rates, a non-finite value, or an interval_s or target not finite and > 0.
BatchMeans batch_means(std::span<const double> rates, double interval_s, double level = 0.95,
                       double target_relative_half_width = 0.02);

/// A benchmark's verdict on its pair ratios (ours / peer, one ratio per alternated pair): the
/// interval of their geometric mean (Student t on the logs), judged against `bound`.
///  - Rule::at_least: PASS when ci.low >= bound, FAIL when ci.high < bound;
///  - Rule::at_most:  PASS when ci.high <= bound, FAIL when ci.low > bound;
///  - Rule::not_below: PASS when ci.high >= bound (the interval contains the bound or lies above:
///    "no worse than detected"), FAIL when ci.high < bound;
/// otherwise UNRESOLVED, with the pairs that would resolve it at the observed spread: the smallest
/// n (up to kMaxPairsNeeded) whose half-width t_{n-1} s / sqrt(n), with the observed mean and
/// standard deviation s of the log ratios, is below the mean's distance from log(bound). not_below
/// is never UNRESOLVED (with 2 or more ratios).
enum class Rule { at_least, at_most, not_below };
inline constexpr EnumNames<Rule, 3> kRuleNames{
    {{"at_least", Rule::at_least}, {"at_most", Rule::at_most}, {"not_below", Rule::not_below}}};
inline std::string_view to_string(Rule r) noexcept { return name_of(kRuleNames, r); }
/// The most pairs judge_pairs proposes; beyond it pairs_needed is nullopt.
inline constexpr std::size_t kMaxPairsNeeded = 1000;
enum class BoundVerdict { pass, fail, unresolved };
inline constexpr EnumNames<BoundVerdict, 3> kBoundVerdictNames{
    {{"PASS", BoundVerdict::pass}, {"FAIL", BoundVerdict::fail}, {"UNRESOLVED", BoundVerdict::unresolved}}};
inline std::string_view to_string(BoundVerdict v) noexcept { return name_of(kBoundVerdictNames, v); }
struct PairVerdict {
  std::size_t n = 0;
  double ratio = kNaN;  ///< geometric mean of the pair ratios
  Interval ci{};
  BoundVerdict verdict = BoundVerdict::unresolved;
  /// UNRESOLVED only: pairs at which it would resolve; nullopt when the mean lies exactly on the
  /// bound or more than kMaxPairsNeeded would be needed.
  std::optional<std::size_t> pairs_needed{};
};
/// Throws std::invalid_argument on fewer than 2 ratios, a ratio not finite and > 0, or a bound not
/// finite and > 0.
PairVerdict judge_pairs(std::span<const double> ratios, double bound, Rule rule, double level = 0.95);

}  // namespace drivelab::inference
