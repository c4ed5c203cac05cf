#pragma once
/// \file stat.hpp
/// `drivelab trace stat`: one streaming pass over a TraceSource, memory bounded whatever the trace
/// length (fixed histograms, at most kMaxRateBuckets rate buckets, one entry per device).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "drivelab/trace/source.hpp"

namespace drivelab::trace {

/// Per-operation totals, indexed by TraceOp (read, write, flush, discard).
struct OpTotals {
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;
};

/// Per trace device: request count, bytes, and the LBA span touched (lowest offset to the highest
/// end offset, bytes; flushes excluded).
struct DeviceStats {
  std::string name;
  std::uint64_t ios = 0;
  std::uint64_t bytes = 0;
  std::uint64_t min_offset_bytes = 0;
  std::uint64_t max_end_bytes = 0;  ///< highest offset + size
  bool has_span = false;            ///< false if the device saw only flushes
};

struct TraceStats {
  /// At most this many IOPS buckets: when a trace is longer, adjacent buckets merge and the
  /// bucket width doubles (1 s, 2 s, 4 s, ...).
  static constexpr std::size_t kMaxRateBuckets = 4096;
  /// Size histogram: bucket i counts sizes in (2^(i-1), 2^i] bytes, bucket 0 counts size 0 and 1.
  static constexpr std::size_t kSizeBuckets = 33;

  std::string source;                                        ///< TraceSource::describe()
  std::int64_t tick_ns = 0;                                  ///< TraceSource::tick_ns()
  TraceClock clock;                                          ///< TraceSource::clock(): the unit and where it came from
  std::uint64_t ios = 0;                                     ///< every request, all operations
  std::uint64_t bytes = 0;                                   ///< sum of size_bytes, all operations
  std::array<OpTotals, 4> ops{};                             ///< by TraceOp
  std::uint64_t preflushes = 0;                              ///< requests carrying TraceIo::kPreflush (a flush each)
  std::uint64_t fua = 0;                                     ///< requests carrying TraceIo::kFua
  std::array<std::uint64_t, kSizeBuckets> size_histogram{};  ///< reads, writes and discards
  std::int64_t first_time_ns = 0;                            ///< earliest time_ns seen
  std::int64_t last_time_ns = 0;                             ///< latest time_ns seen
  std::uint64_t out_of_order = 0;                            ///< requests earlier than their predecessor
  std::int64_t max_backward_ns = 0;                          ///< the most one of them is earlier than its predecessor
  std::int64_t rate_bucket_ns = 1'000'000'000;               ///< width of each iops_buckets entry
  std::vector<std::uint64_t> iops_buckets;                   ///< requests per bucket, from time 0
  std::vector<DeviceStats> devices;                          ///< by TraceIo::device
  std::vector<std::string> warnings;                         ///< plausibility_warnings(), set by compute_trace_stats

  /// last - first arrival, ns (0 for fewer than two requests).
  [[nodiscard]] std::int64_t duration_ns() const noexcept { return last_time_ns - first_time_ns; }
  /// Mean requests per second over the duration (0 if the duration is 0).
  [[nodiscard]] double mean_iops() const noexcept;
  /// Peak requests per second over windows of one bucket width that tile [first, last]: each
  /// bucket's count over the part of [first, last] it covers, a partial bucket at either end joined
  /// to its neighbour (so no window is narrower than a bucket, and a trace shorter than a bucket is
  /// one window). The windows' rates average to the mean, weighted by width, so mean <= peak
  /// always. 0 if the duration is 0.
  [[nodiscard]] double peak_iops() const noexcept;
  /// Flushes in all: flush requests plus the preflushes that write (or other) requests carry.
  [[nodiscard]] std::uint64_t flushes() const noexcept { return ops[2].count + preflushes; }
};

/// Rates that suggest the clock unit is wrong (a trace read in µs that is in ns replays 1000x
/// slow): a mean under 1 IOPS, a span of a day or more for fewer than 100,000 requests, or a mean
/// above 10 million IOPS. Each names the unit and where it came from, and --time-unit where it
/// applies. Empty for fewer than two requests.
std::vector<std::string> plausibility_warnings(const TraceStats& stats);

/// Reads `source` to the end. Throws what the source throws (TraceFormatError, EnvironmentError).
TraceStats compute_trace_stats(TraceSource& source);

/// A human-readable report (what `drivelab trace stat` prints).
std::string format_trace_stats(const TraceStats& stats);
/// The same as a JSON object (`--json`): ios, bytes, reads/writes/flushes/discards {count, bytes},
/// preflushes, fua, size_histogram [{le_bytes, count}], time_unit, time_unit_origin, tick_ns,
/// duration_s, out_of_order, max_backward_s, mean_iops, peak_iops, iops {bucket_s, counts: requests
/// per bucket}, devices [{name, ios, bytes,
/// lba_min_bytes, lba_max_bytes}], warnings [text].
std::string trace_stats_json(const TraceStats& stats);

}  // namespace drivelab::trace
