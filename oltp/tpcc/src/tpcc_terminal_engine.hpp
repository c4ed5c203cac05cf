#pragma once
// The state a Driver shares with its terminals, and the small interface of the two ways of running
// them (tpcc_tp_monitor.cpp: pooled terminals and open-loop arrivals on Boost.Asio timers with a
// worker pool; tpcc_terminal_dedicated.cpp: one thread and one connection per user).
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "drivelab/oltp/backend/backend.hpp"
#include "drivelab/oltp/tpcc/tpcc_driver.hpp"
#include "drivelab/oltp/tpcc/tpcc_transactions.hpp"
#include "tpcc_terminal.hpp"
#include "tpcc_terminal_stats.hpp"

namespace drivelab::oltp::tpcc::detail {

class DriverState {
 public:
  DriverState(Backend& db, const DriverOptions& options, int executors)
      : backend(db),
        opt(options),
        gen(options.scale, options.c_run, options.profile, options.hammerdb_script),
        stats(executors),
        failures(options.failure_bound, type_names()) {}

  /// Records the first fatal error and stops every terminal.
  void fail(std::string message) {
    {
      std::lock_guard lock(mu_);
      if (!fatal_) fatal_ = std::move(message);
    }
    failed_.store(true);
    stop.request();
  }
  std::optional<std::string> fatal() const {
    std::lock_guard lock(mu_);
    return fatal_;
  }
  bool failed() const noexcept { return failed_.load(std::memory_order_relaxed); }

  /// Keying / think time in ns for `type` (0 with think: none), scaled by think_scale.
  std::int64_t keying_ns(TxType type) const noexcept;
  std::int64_t think_ns(TxType type, Rng& rng) const noexcept;
  /// With think: tpcc, terminals start at a uniform random point of this window (one mean
  /// New-Order think time, scaled), so thousands of them do not key their first card in lockstep.
  /// 0 under Profile::hammerdb for dedicated users with a login ramp (HammerDB's way).
  double start_spread_ns() const noexcept;

  Backend& backend;
  const DriverOptions opt;
  const InputGenerator gen;
  StopSignal stop;
  StatsShards stats;
  /// Attempts per TxType against DriverOptions::failure_bound (measured phase only).
  FailureMeter failures;

 private:
  static std::vector<std::string> type_names() {
    std::vector<std::string> out;
    out.reserve(kAllTxTypes.size());
    for (TxType t : kAllTxTypes) out.emplace_back(to_string(t));
    return out;
  }
  mutable std::mutex mu_;
  std::optional<std::string> fatal_;
  std::atomic<bool> failed_{false};
};

class TerminalEngine {
 public:
  virtual ~TerminalEngine() = default;
  /// Connects what must be connected up front and launches the terminals.
  virtual void start() = 0;
  /// Joins every thread (the caller requested the stop on DriverState::stop). Idempotent.
  virtual void join() = 0;
  /// Threads that execute transactions (pool workers or dedicated users).
  virtual int executors() const noexcept = 0;
  /// Sum over executors of their busy time since start, at `now_ns`.
  virtual std::int64_t busy_ns(std::int64_t now_ns) const = 0;
  /// Integral of the queue length until `now_ns` (length x ns) and the max since the last call.
  struct QueueSample {
    double area = 0;
    std::uint64_t max = 0;
  };
  virtual QueueSample queue(std::int64_t now_ns) = 0;
  /// Open loop: arrivals so far, and arrivals dropped because the queue was full.
  virtual std::uint64_t arrivals() const noexcept { return 0; }
  virtual std::uint64_t arrivals_dropped() const noexcept { return 0; }
  /// Executors connected so far.
  virtual int logged_in() const noexcept = 0;
  /// How the timer thread is scheduled (DriverTotals::timer_thread_*; all unset without one).
  struct TimerThreadScheduling {
    bool fifo = false;
    int nice = 0;
    int slice_us = 0;
  };
  virtual TimerThreadScheduling timer_thread() const noexcept { return {}; }
  /// Adds lateness samples the engine keeps outside StatsShards (call after join()).
  virtual void merge_lateness(LatencyHistogram&) const {}
};

std::unique_ptr<TerminalEngine> make_tp_monitor(DriverState& state);
std::unique_ptr<TerminalEngine> make_dedicated_terminals(DriverState& state);

}  // namespace drivelab::oltp::tpcc::detail
