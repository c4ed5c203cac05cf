#pragma once
// Where the terminals' measurements go.
//
//   StatsShards   per-type histograms and counters, split into a few mutex-guarded shards so that
//                 thousands of threads (dedicated users) do not share one lock and the memory does
//                 not grow with the number of users: each shard costs about 1.1 MiB (16 histograms of
//                 70 KiB), and there are at most kMaxShards of them.
//   BusyMeter     the cumulative busy time of one executor (worker or dedicated user). The pool's
//                 utilisation over [a, b] is (sum of busy(b)) - (sum of busy(a)) over workers x (b - a):
//                 exact, also for transactions that span an interval boundary.
//   QueueMeter    the time integral of the queue length (mean length over any window) and its max.
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "drivelab/core/histogram.hpp"
#include "drivelab/oltp/tpcc/tpcc_driver_options.hpp"
#include "tpcc_terminal.hpp"

namespace drivelab::oltp::tpcc::detail {

class StatsShards {
 public:
  static constexpr int kMaxShards = 16;

  /// `executors`: how many threads record (the shard of executor k is k mod shards).
  explicit StatsShards(int executors);

  void set_measuring(bool on) noexcept { measuring_.store(on, std::memory_order_release); }
  bool measuring() const noexcept { return measuring_.load(std::memory_order_acquire); }

  /// Records one finished transaction (ignored outside the measured phase). Abandoned ones
  /// (stopped mid-retry) are not recorded.
  void record(int executor, TxType type, const ExecResult& r, std::int64_t submit_ns, std::int64_t start_ns,
              std::int64_t end_ns);
  /// Records how late a timer woke (measured phase only).
  void record_lateness(int executor, std::int64_t lateness_ns);

  /// Merges and resets the interval part of every shard.
  IntervalStats take_interval();
  /// Merges the measured-phase part of every shard into `out` (by_type, in_doubt,
  /// delivery_skipped_districts, timer_lateness).
  void totals(DriverTotals& out) const;

 private:
  struct Shard {
    mutable std::mutex mu;
    std::array<TypeStats, kTxTypes> by_type;
    std::uint64_t in_doubt = 0;
    std::uint64_t delivery_skipped = 0;
    LatencyHistogram lateness;
    IntervalStats interval;
  };
  Shard& shard(int executor) noexcept { return *shards_[static_cast<std::size_t>(executor) % shards_.size()]; }

  std::vector<std::unique_ptr<Shard>> shards_;
  std::atomic<bool> measuring_{false};
};

class BusyMeter {
 public:
  void begin(std::int64_t now_ns) {
    std::lock_guard lock(mu_);
    since_ns_ = now_ns;
  }
  void end(std::int64_t now_ns) {
    std::lock_guard lock(mu_);
    busy_ns_ += now_ns - since_ns_;
    since_ns_ = -1;
  }
  /// Busy nanoseconds from the start until `now_ns`.
  std::int64_t cumulative_ns(std::int64_t now_ns) const {
    std::lock_guard lock(mu_);
    return busy_ns_ + (since_ns_ >= 0 ? now_ns - since_ns_ : 0);
  }

 private:
  mutable std::mutex mu_;
  std::int64_t busy_ns_ = 0;
  std::int64_t since_ns_ = -1;
};

/// Not thread-safe: used under the queue's mutex.
class QueueMeter {
 public:
  void changed(std::int64_t now_ns, std::size_t new_length) {
    advance(now_ns);
    length_ = new_length;
    if (length_ > window_max_) window_max_ = length_;
  }
  /// Integral of the length over time (length x ns) from the start until `now_ns`.
  double area(std::int64_t now_ns) {
    advance(now_ns);
    return area_;
  }
  /// The largest length since the previous call (at least the current one); resets.
  std::uint64_t take_max() {
    const std::uint64_t m = window_max_;
    window_max_ = length_;
    return m;
  }

 private:
  void advance(std::int64_t now_ns) {
    if (last_ns_ != 0 && now_ns > last_ns_)
      area_ += static_cast<double>(length_) * static_cast<double>(now_ns - last_ns_);
    if (now_ns > last_ns_) last_ns_ = now_ns;
  }
  std::size_t length_ = 0;
  std::uint64_t window_max_ = 0;
  std::int64_t last_ns_ = 0;
  double area_ = 0;
};

}  // namespace drivelab::oltp::tpcc::detail
