#pragma once
/// \file histogram.hpp
/// Log-linear latency histogram in nanoseconds (HdrHistogram / fio stat.h style).
///
/// Layout: values below 2^kSubBucketBits ns are counted exactly (one bin per ns). Above, every
/// power-of-two range [2^e, 2^(e+1)) is split into 2^kSubBucketBits linear sub-buckets. A value is
/// reported as the midpoint of its bin, so a percentile differs from the exact nearest-rank sample
/// by at most 1 / 2^(kSubBucketBits+1) = 1/512 ≈ 0.195% of that sample with kSubBucketBits = 8
/// (fio uses 6 bits: 0.78%; docs/protocol.md §2 asks for ≤ 0.4%). min() and max() are exact.
/// Range: 0 ns to 2^kMaxExponent - 1 ns (2^42 ns ≈ 4398 s ≈ 73.3 min, so 100 ns .. 1 h is covered
/// with the bound above: TPC-C response times and overloaded replays exceed a minute; values below
/// 512 ns are exact). Larger values are counted in `saturated()`, kept out of the regular bins and
/// reported by bins() as one extra bin [2^42, max()]; a percentile whose rank falls among them
/// reports max(), so the recorder warns whenever saturated() > 0 (results/recorder.hpp).
/// Records written before the range grew to 2^42 (issue 15) had 2^36 ns (68.7 s): their saturated
/// samples, read back by from_bins(), stay saturated above 2^36 ns (saturated_above_ns()), and a
/// merge keeps the lowest such bound. A percentile among saturated samples reads as max(), and one
/// below them counts them as the largest samples: either is then an upper bound, never lowered
/// (issue 29: the old saturated bin read as a regular bin at 68.7 s made a p99 of 98.85 s 68.85 s).
/// Memory: fixed, (kMaxExponent - kSubBucketBits + 1) * 2^kSubBucketBits counters of 8 bytes
/// = 35 x 256 x 8 B = 70 KiB, independent of the number of samples.
/// Merge: exact — adding bin counts (and min/max/sum/sum-of-squares); merging then asking for a
/// percentile equals recording all samples into one histogram. Never average percentiles.
/// Mean and standard deviation come from streamed sums, not from bins: the sum and the sum of
/// squares are exact 128-bit integers for in-range values, so mean() is exact to double precision
/// and stddev() does not suffer the E[x^2] - E[x]^2 cancellation (only saturated values fall back
/// to floating point).
/// Thread-safety: none; keep one per thread and merge (recording costs a few ns; see
/// bench/bench_histogram.cpp).
#include <cstdint>
#include <vector>

namespace drivelab {

class LatencyHistogram {
 public:
  static constexpr int kSubBucketBits = 8;
  static constexpr int kMaxExponent = 42;

  LatencyHistogram();
  /// Copyable (70 KiB). Moving is cheap and leaves the source empty and usable, as if reset():
  /// per-thread histograms are moved into records and reused for the next interval. Recording
  /// into a moved-from histogram allocates its bins again (std::terminate if memory is exhausted).
  LatencyHistogram(const LatencyHistogram&) = default;
  LatencyHistogram& operator=(const LatencyHistogram&) = default;
  LatencyHistogram(LatencyHistogram&& other) noexcept;
  LatencyHistogram& operator=(LatencyHistogram&& other) noexcept;
  ~LatencyHistogram() = default;

  /// Records one sample of `ns` nanoseconds (negative values count as 0).
  void record(std::int64_t ns) noexcept;
  /// Records `n` samples of `ns`.
  void record_n(std::int64_t ns, std::uint64_t n) noexcept;
  /// Adds every count of `other` (exact).
  void merge(const LatencyHistogram& other) noexcept;
  void reset() noexcept;

  std::uint64_t count() const noexcept { return count_; }
  std::uint64_t saturated() const noexcept { return saturated_; }
  /// The value the saturated samples are known to exceed: 2^kMaxExponent ns, or lower for samples
  /// read from a record of a smaller layout (2^36 ns before issue 15) or merged with one.
  std::int64_t saturated_above_ns() const noexcept { return saturated_above_; }
  /// Exact minimum / maximum recorded value in ns (0 if empty).
  std::int64_t min() const noexcept;
  std::int64_t max() const noexcept;
  /// Exact arithmetic mean / population standard deviation in ns (0 if empty).
  double mean() const noexcept;
  double stddev() const noexcept;
  /// Value at percentile p in [0, 100] (nearest-rank: the bin holding the ceil(p/100 * count)-th
  /// smallest sample), as the bin midpoint clamped to [min, max]; exactly min() when that rank is 1
  /// and max() when it is count(); 0 if empty. p outside [0, 100] is clamped, NaN counts as 0.
  /// The rank is computed with a relative tolerance of 1e-12 so that decimal percentiles that are
  /// not exact in binary (99.9) give the rank a person expects (99,900 of 100,000, not 99,901).
  std::int64_t percentile(double p) const noexcept;

  /// One non-empty bin: samples with lower_ns <= v <= upper_ns.
  struct Bin {
    std::int64_t lower_ns;
    std::int64_t upper_ns;
    std::uint64_t count;
  };
  /// Non-empty bins in increasing order (for the result record and for exact re-merging).
  /// Saturated samples come last as one bin {saturated_above_ns(), max(), saturated()}.
  std::vector<Bin> bins() const;
  /// Rebuilds from bins (as written by bins()) plus exact summary fields; for reading records back.
  /// Each bin is placed by its lower_ns (bins from a coarser layout land in the bin of their lower
  /// bound); lower_ns >= 2^kMaxExponent counts as saturated. `saturated` is the count the writer
  /// declared: when it is > 0 and the last bin holds exactly that many, that bin is the writer's
  /// saturated bin whatever its lower_ns (a record of the 2^36 ns layout: [2^36, max, n]), and its
  /// samples stay saturated above its lower_ns (saturated_above_ns()). from_bins(h.bins(), h.min(),
  /// h.max(), h.sum_ns(), h.sum_sq_ns(), h.saturated()) reproduces h's bins, count, saturated
  /// count and bound, percentiles, mean and stddev.
  static LatencyHistogram from_bins(const std::vector<Bin>& bins, std::int64_t min_ns, std::int64_t max_ns,
                                    double sum_ns, double sum_sq_ns, std::uint64_t saturated = 0);
  /// Sum and sum of squares of the recorded values (ns, ns^2), rounded to double.
  double sum_ns() const noexcept;
  double sum_sq_ns() const noexcept;

  /// The largest value counted in a regular bin, 2^kMaxExponent - 1 ns; above it a sample is saturated.
  static constexpr std::int64_t max_trackable_ns() noexcept { return (std::int64_t{1} << kMaxExponent) - 1; }

  /// Upper bound of the relative error of any reported value: 1 / 2^(kSubBucketBits + 1).
  static constexpr double relative_error_bound() noexcept {
    return 1.0 / static_cast<double>(1u << (kSubBucketBits + 1));
  }

 private:
  // GCC/Clang extension; __extension__ keeps -Wpedantic quiet.
  __extension__ typedef unsigned __int128 Uint128;

  void record_slow(std::int64_t ns, std::uint64_t n) noexcept;
  void ensure_bins() noexcept;
  void clear_summary() noexcept;

  std::vector<std::uint64_t> counts_;  // in-range samples only; empty after a move = all zero
  std::uint64_t count_ = 0;            // all samples, saturated included
  std::uint64_t saturated_ = 0;
  std::int64_t saturated_above_;  // saturated samples exceed this (clear_summary: 2^kMaxExponent)
  std::int64_t min_;
  std::int64_t max_;
  Uint128 sum_ = 0;          // exact sum of all values
  Uint128 sum_sq_ = 0;       // exact sum of squares of in-range values
  double extra_sum_sq_ = 0;  // squares that could overflow Uint128 (saturated values)
};

}  // namespace drivelab
