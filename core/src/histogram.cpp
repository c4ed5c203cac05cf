#include "drivelab/core/histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace drivelab {
namespace {

constexpr int kSub = LatencyHistogram::kSubBucketBits;
constexpr std::int64_t kSubCount = std::int64_t{1} << kSub;
constexpr std::int64_t kMaxValue = (std::int64_t{1} << LatencyHistogram::kMaxExponent) - 1;
// Bins: [0, kSubCount) exact, then for each exponent e in [kSub, kMaxExponent) kSubCount bins.
constexpr std::size_t kBinCount =
    static_cast<std::size_t>(kSubCount) * (LatencyHistogram::kMaxExponent - kSub + 1);

inline std::size_t bin_index(std::uint64_t v) noexcept {
  if (v < static_cast<std::uint64_t>(kSubCount)) return static_cast<std::size_t>(v);
  const int e = 63 - std::countl_zero(v);  // 2^e <= v < 2^(e+1), e >= kSub
  const int shift = e - kSub;
  const std::uint64_t sub = (v >> shift) - static_cast<std::uint64_t>(kSubCount);  // [0, kSubCount)
  return static_cast<std::size_t>(kSubCount) * static_cast<std::size_t>(e - kSub + 1) +
         static_cast<std::size_t>(sub);
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

}  // namespace

LatencyHistogram::LatencyHistogram()
    : counts_(kBinCount, 0),
      min_(std::numeric_limits<std::int64_t>::max()),
      max_(std::numeric_limits<std::int64_t>::min()) {}

void LatencyHistogram::record(std::int64_t ns) noexcept { record_n(ns, 1); }

void LatencyHistogram::record_n(std::int64_t ns, std::uint64_t n) noexcept {
  if (n == 0) return;
  if (ns < 0) ns = 0;
  std::int64_t v = ns;
  if (v > kMaxValue) {
    v = kMaxValue;
    saturated_ += n;
  }
  counts_[bin_index(static_cast<std::uint64_t>(v))] += n;
  count_ += n;
  if (ns < min_) min_ = ns;
  if (ns > max_) max_ = ns;
  const double d = static_cast<double>(ns);
  sum_ += d * static_cast<double>(n);
  sum_sq_ += d * d * static_cast<double>(n);
}

void LatencyHistogram::merge(const LatencyHistogram& o) noexcept {
  if (o.count_ == 0) return;
  for (std::size_t i = 0; i < kBinCount; ++i) counts_[i] += o.counts_[i];
  count_ += o.count_;
  saturated_ += o.saturated_;
  min_ = std::min(min_, o.min_);
  max_ = std::max(max_, o.max_);
  sum_ += o.sum_;
  sum_sq_ += o.sum_sq_;
}

void LatencyHistogram::reset() noexcept {
  std::fill(counts_.begin(), counts_.end(), 0);
  count_ = saturated_ = 0;
  min_ = std::numeric_limits<std::int64_t>::max();
  max_ = std::numeric_limits<std::int64_t>::min();
  sum_ = sum_sq_ = 0;
}

std::int64_t LatencyHistogram::min() const noexcept { return count_ ? min_ : 0; }
std::int64_t LatencyHistogram::max() const noexcept { return count_ ? max_ : 0; }

double LatencyHistogram::mean() const noexcept {
  return count_ ? sum_ / static_cast<double>(count_) : 0.0;
}

double LatencyHistogram::stddev() const noexcept {
  if (count_ == 0) return 0.0;
  const double m = mean();
  const double var = sum_sq_ / static_cast<double>(count_) - m * m;
  return var > 0 ? std::sqrt(var) : 0.0;
}

std::int64_t LatencyHistogram::percentile(double p) const noexcept {
  if (count_ == 0) return 0;
  p = std::clamp(p, 0.0, 100.0);
  auto rank = static_cast<std::uint64_t>(std::ceil(p / 100.0 * static_cast<double>(count_)));
  if (rank == 0) rank = 1;
  if (rank >= count_) return max_;
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < kBinCount; ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      std::int64_t lo, hi;
      bin_bounds(i, lo, hi);
      const std::int64_t mid = lo + (hi - lo) / 2;
      return std::clamp(mid, min_, max_);
    }
  }
  return max_;
}

std::vector<LatencyHistogram::Bin> LatencyHistogram::bins() const {
  std::vector<Bin> out;
  for (std::size_t i = 0; i < kBinCount; ++i) {
    if (counts_[i] == 0) continue;
    Bin b{};
    bin_bounds(i, b.lower_ns, b.upper_ns);
    b.count = counts_[i];
    out.push_back(b);
  }
  return out;
}

LatencyHistogram LatencyHistogram::from_bins(const std::vector<Bin>& bins, std::int64_t min_ns,
                                             std::int64_t max_ns, double sum_ns, double sum_sq_ns) {
  LatencyHistogram h;
  for (const Bin& b : bins) {
    const std::int64_t v = std::min(b.lower_ns, kMaxValue);
    h.counts_[bin_index(static_cast<std::uint64_t>(std::max<std::int64_t>(v, 0)))] += b.count;
    h.count_ += b.count;
  }
  if (h.count_ > 0) {
    h.min_ = min_ns;
    h.max_ = max_ns;
    h.saturated_ = max_ns > kMaxValue ? h.counts_[kBinCount - 1] : 0;
  }
  h.sum_ = sum_ns;
  h.sum_sq_ = sum_sq_ns;
  return h;
}

}  // namespace drivelab
