#include "drivelab/core/histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace drivelab {
namespace {

constexpr int kSub = LatencyHistogram::kSubBucketBits;
constexpr std::int64_t kSubCount = std::int64_t{1} << kSub;
constexpr std::int64_t kMaxValue = LatencyHistogram::max_trackable_ns();
// Bins: [0, 2 * kSubCount) exact (one per ns), then for each exponent e in [kSub + 1, kMaxExponent)
// kSubCount bins of width 2^(e - kSub).
constexpr std::size_t kBinCount = static_cast<std::size_t>(kSubCount) * (LatencyHistogram::kMaxExponent - kSub + 1);
// record_n multiplies the per-sample square (< 2^84) by n in 128 bits; above this n it could wrap
// (2^84 x 2^40 = 2^124). The running sum of squares holds 2^44 samples of the largest value.
constexpr std::uint64_t kMaxExactRepeat = std::uint64_t{1} << 40;

// Branch-free HdrHistogram-style index for v <= kMaxValue. OR-ing kSubCount in makes e >= kSub,
// so values below 2 * kSubCount get shift 0 and index v (exact bins) without a separate branch.
inline std::size_t bin_index(std::uint64_t v) noexcept {
  const int e = 63 - std::countl_zero(v | static_cast<std::uint64_t>(kSubCount));
  const int shift = e - kSub;
  return (static_cast<std::size_t>(shift) << kSub) + static_cast<std::size_t>(v >> shift);
}

inline void bin_bounds(std::size_t i, std::int64_t& lo, std::int64_t& hi) noexcept {
  if (i < static_cast<std::size_t>(kSubCount)) {
    lo = hi = static_cast<std::int64_t>(i);
    return;
  }
  const std::size_t group = i / static_cast<std::size_t>(kSubCount);  // >= 1
  const std::size_t sub = i % static_cast<std::size_t>(kSubCount);
  const int shift = static_cast<int>(group) - 1;
  lo = static_cast<std::int64_t>((static_cast<std::uint64_t>(kSubCount) + sub) << shift);
  hi = lo + (std::int64_t{1} << shift) - 1;
}

// A non-negative double (already an integer value in practice) as an exact 128-bit integer, or
// false when it does not fit.
template <typename U>
bool to_uint128(double x, U& out) noexcept {
  if (!(x >= 0.0) || !(x < 0x1.0p127)) return false;
  out = static_cast<U>(std::round(x));
  return true;
}

[[gnu::noinline, gnu::cold]] void allocate_bins(std::vector<std::uint64_t>& counts) noexcept {
  counts.assign(kBinCount, 0);
}

}  // namespace

LatencyHistogram::LatencyHistogram() : counts_(kBinCount, 0) { clear_summary(); }

LatencyHistogram::LatencyHistogram(LatencyHistogram&& o) noexcept
    : counts_(std::move(o.counts_)),
      count_(o.count_),
      saturated_(o.saturated_),
      saturated_above_(o.saturated_above_),
      min_(o.min_),
      max_(o.max_),
      sum_(o.sum_),
      sum_sq_(o.sum_sq_),
      extra_sum_sq_(o.extra_sum_sq_) {
  o.counts_.clear();
  o.clear_summary();
}

LatencyHistogram& LatencyHistogram::operator=(LatencyHistogram&& o) noexcept {
  if (this != &o) {
    counts_ = std::move(o.counts_);
    count_ = o.count_;
    saturated_ = o.saturated_;
    saturated_above_ = o.saturated_above_;
    min_ = o.min_;
    max_ = o.max_;
    sum_ = o.sum_;
    sum_sq_ = o.sum_sq_;
    extra_sum_sq_ = o.extra_sum_sq_;
    o.counts_.clear();
    o.clear_summary();
  }
  return *this;
}

void LatencyHistogram::clear_summary() noexcept {
  count_ = saturated_ = 0;
  saturated_above_ = kMaxValue + 1;
  min_ = std::numeric_limits<std::int64_t>::max();
  max_ = std::numeric_limits<std::int64_t>::min();
  sum_ = sum_sq_ = 0;
  extra_sum_sq_ = 0;
}

// A moved-from histogram has no bins; give them back before the first record into it. The
// allocation stays out of line so record() needs no stack frame.
void LatencyHistogram::ensure_bins() noexcept {
  if (counts_.empty()) [[unlikely]]
    allocate_bins(counts_);
}

// The hot path (one call per I/O or transaction): integer-only, no branches except the rare
// saturation check. See bench/bench_histogram.cpp for its cost.
void LatencyHistogram::record(std::int64_t ns) noexcept {
  ns = std::max<std::int64_t>(ns, 0);
  if (ns > kMaxValue || counts_.empty()) [[unlikely]] {
    record_slow(ns, 1);  // a tail call: the fast path needs no stack frame
    return;
  }
  const auto v = static_cast<std::uint64_t>(ns);
  ++counts_[bin_index(v)];
  ++count_;
  // Branches, not cmov: min/max rarely change, and an unconditional store would chain every
  // record through store-to-load forwarding.
  if (ns < min_) [[unlikely]]
    min_ = ns;
  if (ns > max_) [[unlikely]]
    max_ = ns;
  sum_ += v;
  sum_sq_ += static_cast<Uint128>(v) * v;
}

void LatencyHistogram::record_n(std::int64_t ns, std::uint64_t n) noexcept {
  if (n == 0) return;
  ns = std::max<std::int64_t>(ns, 0);
  if (ns > kMaxValue || n >= kMaxExactRepeat || counts_.empty()) {
    record_slow(ns, n);
    return;
  }
  const auto v = static_cast<std::uint64_t>(ns);
  counts_[bin_index(v)] += n;
  count_ += n;
  min_ = std::min(min_, ns);
  max_ = std::max(max_, ns);
  sum_ += static_cast<Uint128>(v) * n;
  sum_sq_ += static_cast<Uint128>(v) * v * n;  // < 2^84 * 2^40
}

// Saturated values (> 2^42 ns, 73.3 min), absurd repeat counts, or a moved-from histogram without bins.
// The sum stays exact (< 2^63 * 2^64); the square of a saturated value or of a huge repeat count
// goes to a double accumulator because it could overflow 128 bits.
void LatencyHistogram::record_slow(std::int64_t ns, std::uint64_t n) noexcept {
  const auto v = static_cast<std::uint64_t>(ns);
  if (ns <= kMaxValue && n < kMaxExactRepeat) {
    ensure_bins();
    record_n(ns, n);  // now on its fast path
    return;
  }
  if (ns > kMaxValue) {
    saturated_ += n;
  } else {
    ensure_bins();
    counts_[bin_index(v)] += n;
  }
  count_ += n;
  min_ = std::min(min_, ns);
  max_ = std::max(max_, ns);
  sum_ += static_cast<Uint128>(v) * n;
  const double d = static_cast<double>(v);
  extra_sum_sq_ += d * d * static_cast<double>(n);
}

void LatencyHistogram::merge(const LatencyHistogram& o) noexcept {
  if (o.count_ == 0) return;
  if (!o.counts_.empty()) {
    ensure_bins();
    for (std::size_t i = 0; i < kBinCount; ++i) counts_[i] += o.counts_[i];
  }
  count_ += o.count_;
  saturated_ += o.saturated_;
  if (o.saturated_ > 0) saturated_above_ = std::min(saturated_above_, o.saturated_above_);
  min_ = std::min(min_, o.min_);
  max_ = std::max(max_, o.max_);
  sum_ += o.sum_;
  sum_sq_ += o.sum_sq_;
  extra_sum_sq_ += o.extra_sum_sq_;
}

void LatencyHistogram::reset() noexcept {
  std::fill(counts_.begin(), counts_.end(), 0);
  clear_summary();
}

std::int64_t LatencyHistogram::min() const noexcept { return count_ ? min_ : 0; }
std::int64_t LatencyHistogram::max() const noexcept { return count_ ? max_ : 0; }
double LatencyHistogram::sum_ns() const noexcept { return static_cast<double>(sum_); }
double LatencyHistogram::sum_sq_ns() const noexcept { return static_cast<double>(sum_sq_) + extra_sum_sq_; }

double LatencyHistogram::mean() const noexcept {
  if (count_ == 0) return 0.0;
  return static_cast<double>(static_cast<long double>(sum_) / static_cast<long double>(count_));
}

double LatencyHistogram::stddev() const noexcept {
  if (count_ == 0) return 0.0;
  const auto n = static_cast<long double>(count_);
  long double var = 0;
  if (extra_sum_sq_ == 0) {
    // Exact: with sum = n*q + r, sum of (x - q)^2 = sum_sq - q*(sum + r), and the sum of squared
    // deviations from the true mean is that minus r^2/n. Only the final division rounds.
    const Uint128 q = sum_ / count_;
    const Uint128 r = sum_ % count_;
    const Uint128 cross = q * (sum_ + r);
    if (cross > sum_sq_) return 0.0;  // inconsistent sums (from_bins input): no meaningful spread
    const auto m2 = static_cast<long double>(sum_sq_ - cross);
    const auto rl = static_cast<long double>(r);
    var = (m2 - rl * rl / n) / n;
  } else {
    const long double m = static_cast<long double>(sum_) / n;
    var = (static_cast<long double>(sum_sq_) + static_cast<long double>(extra_sum_sq_)) / n - m * m;
  }
  return var > 0 ? static_cast<double>(std::sqrt(var)) : 0.0;
}

std::int64_t LatencyHistogram::percentile(double p) const noexcept {
  if (count_ == 0) return 0;
  if (!(p > 0.0)) p = 0.0;  // also NaN
  if (p > 100.0) p = 100.0;
  const double exact_rank = p / 100.0 * static_cast<double>(count_);
  const double rank_d = std::ceil(exact_rank - exact_rank * 1e-12);
  std::uint64_t rank = rank_d < 1.0 ? 1 : static_cast<std::uint64_t>(rank_d);
  if (rank >= count_) return max_;
  if (rank == 1) return min_;
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      std::int64_t lo, hi;
      bin_bounds(i, lo, hi);
      const std::int64_t mid = lo + (hi - lo) / 2;
      return std::clamp(mid, min_, max_);
    }
  }
  return max_;  // the rank is among the saturated samples
}

std::vector<LatencyHistogram::Bin> LatencyHistogram::bins() const {
  std::vector<Bin> out;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    if (counts_[i] == 0) continue;
    Bin b{};
    bin_bounds(i, b.lower_ns, b.upper_ns);
    b.count = counts_[i];
    out.push_back(b);
  }
  if (saturated_ > 0) out.push_back(Bin{saturated_above_, max_, saturated_});
  return out;
}

LatencyHistogram LatencyHistogram::from_bins(const std::vector<Bin>& bins, std::int64_t min_ns, std::int64_t max_ns,
                                             double sum_ns, double sum_sq_ns, std::uint64_t saturated) {
  LatencyHistogram h;
  // The writer's saturated samples are its last bin, whatever range its layout had (histogram.hpp).
  const bool last_saturated = saturated > 0 && !bins.empty() && bins.back().count == saturated;
  for (std::size_t i = 0; i < bins.size(); ++i) {
    const Bin& b = bins[i];
    if (b.count == 0) continue;
    if (b.lower_ns > kMaxValue || (last_saturated && i + 1 == bins.size())) {
      h.saturated_ += b.count;
      h.saturated_above_ = std::min(h.saturated_above_, std::max<std::int64_t>(b.lower_ns, 0));
    } else {
      h.counts_[bin_index(static_cast<std::uint64_t>(std::max<std::int64_t>(b.lower_ns, 0)))] += b.count;
    }
    h.count_ += b.count;
  }
  if (h.count_ == 0) return h;
  h.min_ = min_ns;
  h.max_ = max_ns;
  if (!to_uint128(sum_ns, h.sum_)) h.sum_ = 0;
  // With saturated samples the original square sum was not exact either; keep it as a double.
  if (h.saturated_ > 0 || !to_uint128(sum_sq_ns, h.sum_sq_)) {
    h.sum_sq_ = 0;
    h.extra_sum_sq_ = sum_sq_ns;
  }
  return h;
}

}  // namespace drivelab
