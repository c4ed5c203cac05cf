#pragma once
/// \file stats.hpp
/// Streaming mean and standard deviation (Welford, 1962), for values that are not latencies
/// (per-interval IOPS, TPS). Mergeable (Chan et al., 1979).
#include <cmath>
#include <cstdint>

namespace drivelab {

class RunningStats {
 public:
  void add(double x) noexcept {
    ++n_;
    const double d = x - mean_;
    mean_ += d / static_cast<double>(n_);
    m2_ += d * (x - mean_);
    if (n_ == 1 || x < min_) min_ = x;
    if (n_ == 1 || x > max_) max_ = x;
  }
  void merge(const RunningStats& o) noexcept {
    if (o.n_ == 0) return;
    if (n_ == 0) {
      *this = o;
      return;
    }
    const double n = static_cast<double>(n_ + o.n_);
    const double d = o.mean_ - mean_;
    mean_ += d * static_cast<double>(o.n_) / n;
    m2_ += o.m2_ + d * d * static_cast<double>(n_) * static_cast<double>(o.n_) / n;
    n_ += o.n_;
    if (o.min_ < min_) min_ = o.min_;
    if (o.max_ > max_) max_ = o.max_;
  }
  std::uint64_t count() const noexcept { return n_; }
  double mean() const noexcept { return mean_; }
  /// Population standard deviation.
  double stddev() const noexcept { return n_ > 0 ? std::sqrt(m2_ / static_cast<double>(n_)) : 0.0; }
  double min() const noexcept { return min_; }
  double max() const noexcept { return max_; }

 private:
  std::uint64_t n_ = 0;
  double mean_ = 0, m2_ = 0, min_ = 0, max_ = 0;
};

}  // namespace drivelab
