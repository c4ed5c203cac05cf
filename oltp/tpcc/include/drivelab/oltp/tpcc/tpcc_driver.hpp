#pragma once
/// \file tpcc_driver.hpp
/// The terminals of a TPC-C run and their measurement. Three ways to drive the database:
///
///   pooled      (`terminals: pooled`, the default with `think: tpcc` and with `rate:`) a TP monitor:
///               every terminal is a small state machine on a Boost.Asio steady_timer, all of them
///               in ONE timer thread; a transaction a terminal submits goes into one FIFO queue and
///               is executed by the next free worker of a pool of `connections` worker threads,
///               each with its own database Connection. Thousands of terminals cost a few hundred
///               bytes each (docs/protocol.md §2: "we multiplex thousands of terminals onto a pool
///               of connections, like a TP monitor").
///   dedicated   (`terminals: dedicated`, the default with `think: none`) one thread and one
///               Connection per user, as HammerDB's virtual users; logins are staggered at
///               `login_rate` per second (HammerDB ramps its users the same way) so the server sees
///               N sessions.
///   open loop   (`rate: N`) transactions arrive as a Poisson process of N per second in total
///               (exponential inter-arrival times), each taken by terminal (arrival mod users) with
///               that terminal's deck and home warehouse, and queued to the pool. Their response
///               time is measured from the INTENDED arrival time, so a backlog is not hidden
///               (no coordinated omission).
///
/// Terminal i (0-based) has home warehouse (i mod W) + 1 and, for Stock-Level, the fixed district
/// ((i div W) mod 10) + 1, so users = 10 x W gives the 10 terminals per warehouse of clause 4.2.2,
/// one per district. Each terminal draws its transaction type from its own deck (tpcc_random.hpp)
/// and its inputs from its own Rng (the test seed split by terminal index). With think = tpcc it
/// waits the keying time (clause 5.2.5.7, fixed) before submitting and a think time (clause
/// 5.2.5.4, negative exponential, truncated at 10 x the mean) after the response, both multiplied
/// by `think_scale` (1 in TPC-C; smaller values exist only for tests and are flagged).
/// DriverOptions::profile = hammerdb replaces these rules by HammerDB's: home warehouse and
/// district drawn per terminal (TerminalHome), an independent 1-in-23 draw instead of the deck
/// (hammerdb_transaction), whole-second untruncated think times (think_time_s), and its inputs
/// (InputGenerator).
///
/// Times of one transaction (monotonic clock, ns):
///   submit   the terminal submits it (pooled: the keying timer fired; open loop: the INTENDED
///            arrival time; dedicated: right before execution);
///   start    a worker begins it (first BEGIN);
///   end      its final COMMIT or business ROLLBACK returned.
///   response time = end - submit = queue wait (start - submit) + service time (end - start)
/// Response time is the terminal's view (clause 5.5.1). Service time includes lock waits, every
/// retry and reconnect. Keying and think time are in neither. Delivery is executed by the
/// terminal's worker, not deferred (clause 2.7.2 allows deferral; this is stricter).
/// Timer lateness: how late a keying/think/arrival timer (or a dedicated user's sleep) woke
/// relative to its schedule; high lateness means the driver machine, not the database, is slow.
/// Lateness is the time the timer's handler starts minus the time the timer was due. On a busy
/// machine it is mostly the timer thread waiting for a core behind runnable threads (the
/// database's, the pool's, other work's): under Linux's EEVDF scheduler a woken thread of normal
/// policy may wait for the running one's time slice to end, whatever its nice (measured on a
/// busy 2-core VM at nice -10: scheduling delay p99 0.7 ms, p99.9 1.7 ms, max 2.7 ms; section 4 of
/// docs/oltp-tpcc.md). So the pooled timer thread asks for SCHED_FIFO priority 1 (root or
/// CAP_SYS_NICE, and a cgroup with real-time time): it then runs as soon as it wakes, and the
/// workers it wakes cannot preempt it mid-batch. It needs a few % of a core and blocks in epoll
/// between timers; the kernel's real-time throttling (sched_rt_runtime_us) still bounds it. Where
/// SCHED_FIFO is refused it keeps SCHED_OTHER, asks for nice -10 and for a 100 us time slice
/// (sched_setattr; Linux >= 6.12 lets a thread with a shorter slice preempt on wake-up).
/// DriverTotals::timer_thread_fifo / _nice / _slice_us say what was granted.
///
/// Errors, retries, reconnects (the one retry loop, tpcc_terminal.cpp): `retryable` -> roll back
/// and rerun with the same inputs (up to Session::kMaxRetries, each a retry); `in_doubt` is never
/// rerun and counts as an error; `fatal` counts as an error, stops every terminal and is reported by
/// fatal_error(). A status with connection_lost drops the Connection and connects again (counted
/// as a reconnect; then a retryable transaction is rerun). If connecting keeps failing for
/// `reconnect_timeout`, the run ends with "server connection lost: ...". Every attempt (first
/// try or rerun) of the measured phase counts against DriverOptions::failure_bound per type
/// (failure_bound.hpp): past it the attempt's terminal reports the bound's reason as fatal.
///
/// Phases: start() connects and launches the terminals unrecorded (warm-up); begin_measurement()
/// records every transaction that ends from then on; take_interval() returns one reporting
/// interval; finish() stops recording, asks the terminals to stop (queued transactions are
/// dropped, running ones finish; lock waits give up through the cancel flag) and joins them.
#include <array>
#include <memory>
#include <optional>
#include <string>

#include "drivelab/core/rng.hpp"
#include "drivelab/oltp/backend/backend.hpp"
#include "drivelab/oltp/tpcc/tpcc_driver_options.hpp"
#include "drivelab/oltp/tpcc/tpcc_random.hpp"

namespace drivelab::oltp::tpcc {

/// Clause 5.2.5.7 keying times and clause 5.2.5.4 mean think times, in seconds, per TxType.
/// HammerDB's keying times are the same (keytime 18/3/2/2/2, pgoltp.tcl 3223-3239).
inline constexpr std::array<double, kTxTypes> kKeyingTimeS{18, 3, 2, 2, 2};
inline constexpr std::array<double, kTxTypes> kMeanThinkTimeS{12, 12, 10, 5, 5};
/// HammerDB's think times per TxType (thinktime 12/12/5/10/5, pgoltp.tcl 3225-3241): Order-Status
/// 5 s and Delivery 10 s, the clause's values swapped.
inline constexpr std::array<double, kTxTypes> kHammerDbMeanThinkTimeS{12, 12, 5, 10, 5};

/// The mean think time of `type` under `profile`.
double mean_think_time_s(Profile profile, TxType type) noexcept;

/// Negative-exponential think time with `mean_s`, truncated at 10 x the mean (clause 5.2.5.4):
/// -ln(r) x mean with r uniform in (0, 1]. Profile::hammerdb: HammerDB's thinktime
/// (tpcccommon-1.0.tm 145-149): abs(round(ln(r) x mean)) whole seconds, not truncated.
double think_time_s(Rng& rng, double mean_s, Profile profile = Profile::tpcc) noexcept;

/// Transactions per second the TPC-C keying and think times allow one terminal at zero response
/// time: 1 / (mean over the deck of keying + mean think time) = 1 / 20.7 s.
double tpcc_terminal_rate_per_s() noexcept;

namespace detail {
class DriverState;
class TerminalEngine;
struct MeasureBook;
}  // namespace detail

class Driver {
 public:
  /// `backend` must outlive the driver. Throws ConfigError on impossible options.
  Driver(Backend& backend, DriverOptions options);
  ~Driver();  ///< finish()es if still running
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  /// Connects (pooled: every worker; dedicated: the users log in in their own threads at
  /// login_rate) and starts the terminals, not recording. Throws BackendError if a pool
  /// connection cannot connect or prepare its statements.
  void start();
  bool started() const noexcept { return engine_ != nullptr; }
  /// From now on, completed transactions are recorded.
  void begin_measurement();
  /// The interval since the previous call (or begin_measurement), and resets it.
  IntervalStats take_interval();
  /// Stops recording, stops and joins the terminals. Idempotent.
  void finish();
  /// Totals of the measured phase. Call after finish().
  DriverTotals totals() const;
  /// The first fatal error of any terminal, if one happened.
  std::optional<std::string> fatal_error() const;
  /// True once a fatal error stopped the terminals.
  bool failed() const noexcept;
  /// Dedicated: users connected so far (pooled: the pool's connections).
  int users_logged_in() const noexcept;
  const DriverOptions& options() const noexcept { return opt_; }

 private:
  Backend& backend_;
  DriverOptions opt_;
  std::unique_ptr<detail::DriverState> state_;
  std::unique_ptr<detail::MeasureBook> book_;
  std::unique_ptr<detail::TerminalEngine> engine_;
  bool finished_ = false;
};

}  // namespace drivelab::oltp::tpcc
