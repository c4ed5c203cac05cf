#pragma once
/// \file tpcc_driver_options.hpp
/// What a TPC-C Driver (tpcc_driver.hpp) is asked to do, DriverOptions, and what it measures:
/// per transaction type (TypeStats), over the measured phase (DriverTotals) and per reporting
/// interval (IntervalStats). The config (tpcc_config.hpp) and the record's writer need these
/// without the Driver.
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "drivelab/core/histogram.hpp"
#include "drivelab/core/names.hpp"
#include "drivelab/oltp/backend/failure_bound.hpp"
#include "drivelab/oltp/tpcc/tpcc_random.hpp"
#include "drivelab/oltp/tpcc/tpcc_transactions.hpp"

namespace drivelab::oltp::tpcc {

/// Keying and think times: none (closed loop at full speed: measures the drive), or the TPC-C
/// values of clause 5.2.5 (then throughput is capped near 12.86 tpmC per warehouse).
enum class ThinkMode { none, tpcc };
inline constexpr EnumNames<ThinkMode, 2> kThinkModeNames{{{"none", ThinkMode::none}, {"tpcc", ThinkMode::tpcc}}};
inline std::string_view to_string(ThinkMode m) noexcept { return name_of(kThinkModeNames, m); }

/// How terminals reach the database: a TP monitor's pool or a connection per user (tpcc_driver.hpp).
enum class TerminalMode { pooled, dedicated };
inline constexpr EnumNames<TerminalMode, 2> kTerminalModeNames{
    {{"pooled", TerminalMode::pooled}, {"dedicated", TerminalMode::dedicated}}};
inline std::string_view to_string(TerminalMode m) noexcept { return name_of(kTerminalModeNames, m); }

/// One run's terminals: how many, how they pace themselves and how they reach the database.
struct DriverOptions {
  Scale scale;
  CConstants c_run;
  int users = 10;  ///< terminals (>= 1)
  ThinkMode think = ThinkMode::none;
  TerminalMode terminals = TerminalMode::dedicated;
  /// Pooled / open loop: worker threads = Connections (>= 1). Dedicated: ignored (= users).
  int connections = 1;
  /// Open loop: arrivals per second in total; 0 = closed loop (terminals wait for responses).
  double rate_per_s = 0;
  /// Dedicated: logins per second (0 = all at once). Pooled: the pool connects at once.
  double login_rate_per_s = 50;
  /// Multiplies keying and think times (TPC-C: 1). TESTING ONLY.
  double think_scale = 1.0;
  /// How long reconnecting may fail before the run ends with "server connection lost".
  std::chrono::nanoseconds reconnect_timeout = std::chrono::seconds(10);
  /// The bound on failed attempts per transaction type (failure_bound.hpp): past it the run
  /// stops and fatal_error() says why.
  FailureBound failure_bound;
  /// Open loop: arrivals beyond this many queued transactions are dropped and counted (the
  /// offered rate is then above what the database delivers; memory stays bounded).
  std::size_t max_queued = 100'000;
  /// Statements one by one, or one server-side procedure call per transaction
  /// (tpcc_procedures.hpp; the procedures must exist: create_procedures).
  TxProtocol protocol = TxProtocol::statements;
  std::uint64_t seed = 1;
  /// Whose rules draw inputs, mix, home warehouses and think times (tpcc_random.hpp), and which
  /// HammerDB script's New-Order rules apply under Profile::hammerdb.
  Profile profile = Profile::tpcc;
  HammerDbScript hammerdb_script = HammerDbScript::postgresql;
  /// Profile::hammerdb only: HammerDB's all-warehouses option (TerminalHome).
  bool all_warehouses = false;
  /// The job's terminals (every rank's; 0: `users`): HammerDB's V of all-warehouses.
  int job_users = 0;
  /// This driver's terminals are the job's terminals first, first + step, ... (`users` of them):
  /// 0 and 1 on one host; rank r of N with shared_database: r and N. A terminal's number fixes
  /// its home warehouse (number mod warehouses + 1) and its random stream, so the job's terminals
  /// are the same whatever the number of ranks.
  int terminal_first = 0;
  int terminal_step = 1;
};

/// Counters of one transaction type (measured phase only).
struct TypeStats {
  LatencyHistogram response_time;  ///< ns, end - submit; committed + business-rolled-back
  LatencyHistogram queue_wait;     ///< ns, start - submit (same transactions)
  LatencyHistogram service_time;   ///< ns, end - start (same transactions)
  std::uint64_t commits = 0;
  std::uint64_t rollbacks = 0;   ///< New-Order's 1% business rollbacks (clause 2.4.1.4)
  std::uint64_t retries = 0;     ///< reruns after a retryable failure
  std::uint64_t errors = 0;      ///< in-doubt, fatal, or retries exhausted
  std::uint64_t reconnects = 0;  ///< sessions reopened while running this type
  void merge(const TypeStats& o);
};

/// Everything measured (per type), plus run-wide counters.
struct DriverTotals {
  std::array<TypeStats, kTxTypes> by_type;
  std::uint64_t in_doubt = 0;
  std::uint64_t delivery_skipped_districts = 0;
  LatencyHistogram timer_lateness;  ///< ns; empty without timers (think: none, closed loop)
  double measured_s = 0;
  double pool_utilisation = 0;  ///< busy worker time / (workers x measured time), 0..1
  double queue_length_avg = 0;  ///< time-weighted mean of queued transactions
  std::uint64_t queue_length_max = 0;
  std::uint64_t arrivals = 0;          ///< open loop: arrivals in the measured phase
  std::uint64_t arrivals_dropped = 0;  ///< open loop: arrivals dropped (queue full)
  int workers = 0;                     ///< connections executing transactions
  int users_logged_in = 0;             ///< dedicated: users connected at begin_measurement
  /// Pooled: how the timer thread is scheduled (tpcc_driver.hpp, "Timer lateness"): SCHED_FIFO
  /// where allowed (fifo true, nice unused), else SCHED_OTHER at nice -10 where allowed (else 0)
  /// with a 100 us time slice where the kernel takes one (Linux >= 6.12; 0 = the kernel's default).
  bool timer_thread_fifo = false;
  int timer_thread_nice = 0;
  int timer_thread_slice_us = 0;
  /// Per TxType: attempts (first tries and reruns) and failed attempts of the measured phase,
  /// with the first and the latest error (failure_bound.hpp).
  std::array<AttemptTotals, kTxTypes> attempts;
};

/// One reporting interval (all types together).
struct IntervalStats {
  LatencyHistogram response_time;
  std::uint64_t commits = 0;
  std::uint64_t new_order_commits = 0;
  std::uint64_t retries = 0;
  std::uint64_t errors = 0;
  std::uint64_t reconnects = 0;
  double queue_length_avg = 0;
  std::uint64_t queue_length_max = 0;
  double pool_utilisation = 0;  ///< 0..1
  double duration_s = 0;
};

}  // namespace drivelab::oltp::tpcc
