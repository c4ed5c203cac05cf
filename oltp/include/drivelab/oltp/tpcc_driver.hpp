#pragma once
/// \file tpcc_driver.hpp
/// The terminals of a TPC-C run and their measurement (closed loop, one thread and one database
/// connection per terminal, as HammerDB's virtual users).
///
/// Terminal i (0-based) has home warehouse (i mod W) + 1 and, for Stock-Level, the fixed district
/// ((i div W) mod 10) + 1, so users = 10 x W gives the 10 terminals per warehouse of clause 4.2.2,
/// one per district. Each terminal draws its transaction type from its own deck (tpcc_random.hpp),
/// its inputs from its own Rng (the test seed split by terminal index) and, with think = tpcc,
/// waits the keying time before and a think time after each transaction (clause 5.2.5).
///
/// Response time (clause 5.5.1) is measured at the terminal, from the first BEGIN to the end of
/// the final COMMIT/ROLLBACK, so it includes lock waits and every retry; keying and think times
/// are not part of it. Delivery is executed by the terminal itself, not deferred to a queue
/// (clause 2.7.2 allows deferral; its response time here is the full execution, which is stricter).
///
/// Errors and retries: a transaction that fails `retryable` is rolled back and rerun from the start
/// (same inputs) up to kMaxRetries times, each counted as a retry; `in_doubt` is never rerun and
/// counts as an error; `fatal` counts as an error, stops every terminal and is reported by
/// fatal_error() (the emulator then fails the test with it, keeping what was measured).
///
/// Phases: start() launches the terminals unrecorded (warm-up); begin_measurement() makes them
/// record every transaction that completes from then on, without stopping them; finish() stops
/// recording, asks the terminals to stop after their current transaction and joins them.
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "drivelab/core/histogram.hpp"
#include "drivelab/core/rng.hpp"
#include "drivelab/oltp/backend.hpp"
#include "drivelab/oltp/tpcc_random.hpp"
#include "drivelab/oltp/tpcc_transactions.hpp"

namespace drivelab::oltp::tpcc {

/// Keying and think times: none (closed loop at full speed: measures the drive), or the TPC-C
/// values of clause 5.2.5 (then throughput is capped near 12.86 tpmC per warehouse).
enum class ThinkMode { none, tpcc };

/// Clause 5.2.5.7 keying times and clause 5.2.5.4 mean think times, in seconds, per TxType.
inline constexpr std::array<double, kTxTypes> kKeyingTimeS{18, 3, 2, 2, 2};
inline constexpr std::array<double, kTxTypes> kMeanThinkTimeS{12, 12, 10, 5, 5};

/// Negative-exponential think time with `mean_s`, truncated at 10 x the mean (clause 5.2.5.4):
/// -ln(r) x mean with r uniform in (0, 1].
double think_time_s(Rng& rng, double mean_s) noexcept;

struct DriverOptions {
  Scale scale;
  CConstants c_run;
  int users = 10;
  ThinkMode think = ThinkMode::none;
  std::uint64_t seed = 1;
};

/// Counters of one transaction type.
struct TypeStats {
  LatencyHistogram response_time;  ///< ns, committed and business-rolled-back transactions
  std::uint64_t commits = 0;
  std::uint64_t rollbacks = 0;     ///< New-Order's 1% business rollbacks (clause 2.4.1.4)
  std::uint64_t retries = 0;       ///< reruns after a retryable failure
  std::uint64_t errors = 0;        ///< in-doubt, fatal, or retries exhausted
  void merge(const TypeStats& o);
};

/// Everything measured (per type), plus run-wide counters.
struct DriverTotals {
  std::array<TypeStats, kTxTypes> by_type;
  std::uint64_t in_doubt = 0;
  std::uint64_t delivery_skipped_districts = 0;
  double measured_s = 0;
};

/// One reporting interval (all types together).
struct IntervalStats {
  LatencyHistogram response_time;
  std::uint64_t commits = 0;
  std::uint64_t new_order_commits = 0;
  std::uint64_t retries = 0;
  double duration_s = 0;
};

class Driver {
 public:
  static constexpr int kMaxRetries = 100;

  /// `backend` must outlive the driver.
  Driver(Backend& backend, DriverOptions options);
  ~Driver();  ///< finish()es if still running
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  /// Connects every terminal and starts them (not recording). Throws BackendError if a terminal
  /// cannot connect or prepare its statements.
  void start();
  bool started() const noexcept { return !threads_.empty(); }
  /// From now on, completed transactions are recorded.
  void begin_measurement();
  /// The interval since the previous call (or begin_measurement), and resets it.
  IntervalStats take_interval();
  /// Stops recording, stops and joins the terminals. Idempotent.
  void finish();
  /// Per-type totals of the measured phase (merge of every terminal). Call after finish().
  DriverTotals totals() const;
  /// The first fatal error of any terminal, if one happened.
  std::optional<std::string> fatal_error() const;
  /// True once a fatal error stopped the terminals.
  bool failed() const noexcept { return failed_.load(std::memory_order_relaxed); }

 private:
  struct Terminal;
  void terminal_main(Terminal& t);
  void record(Terminal& t, TxType type, TxEnd end, std::int64_t response_ns, int retries);
  void fail(std::string message);
  bool sleep_s(double seconds) const;

  Backend& backend_;
  DriverOptions opt_;
  std::vector<std::unique_ptr<Terminal>> terminals_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> measuring_{false};
  std::atomic<bool> failed_{false};
  std::int64_t measure_start_ns_ = 0;
  std::int64_t measure_end_ns_ = 0;

  mutable std::mutex mu_;  // guards interval_, interval_start_ns_, fatal_
  IntervalStats interval_;
  std::int64_t interval_start_ns_ = 0;
  std::optional<std::string> fatal_;
};

}  // namespace drivelab::oltp::tpcc
