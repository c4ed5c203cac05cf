#pragma once
/// \file sysbench_driver.hpp
/// The worker threads of a sysbench-compatible run and their measurement: sysbench's
/// thread_run() loop (src/lua/internal/sysbench.lua) with its statistics (src/sysbench.c,
/// db_driver.c).
///
/// Threads: `threads` workers, each with its own connection, its own prepared statements
/// (sysbench_transactions.hpp PreparedSet, prepared when the thread starts, as thread_init()) and
/// its own random stream (the seed split by thread index). Without `rate`: closed loop, no think
/// time, each worker runs event after event as fast as the database answers.
///
/// One event = one transaction, timed from before BEGIN to after COMMIT, restarts included
/// (sysbench.event_start() .. event_stop()). When a call fails with an error sysbench ignores,
/// the event is restarted: the transaction is rolled back and event() runs again with NEW random
/// values (sysbench re-runs the Lua function), and the failed query counts as an "ignored error".
/// Ignored (sysbench 1.0.20 defaults):
///   - MySQL/MariaDB 1213 deadlock, 1020 record changed, 1205 lock wait timeout
///     (--mysql-ignore-errors=1213,1020,1205);
///   - PostgreSQL 40P01 deadlock, 40001 serialization failure, 23505 unique violation
///     (drv_pgsql.c pgsql_check_status — the DELETE+INSERT of one id by two transactions);
///   - by analogy, every call the backend classifies `retryable` (SQLite busy, lock timeouts);
///   - a lost connection (DbStatus::connection_lost): the worker reconnects, prepares its
///     statements again (sysbench's before_restart_event hook) and counts a reconnect; if the
///     server cannot be reached, the run fails (sysbench would retry forever; we end with a clear
///     status instead of hanging).
/// Anything else is fatal: every worker stops and fatal_error() tells why.
/// Every attempt of an event in the measured phase (the first and each restart) counts against
/// DriverOptions::failure_bound (failure_bound.hpp; the one kind is the workload's name): sysbench
/// would run on for ever with every event restarting and only report err/s; past the bound the
/// run stops and fatal_error() gives the bound's reason.
///
/// Open loop (`rate`, sysbench --rate; sysbench 1.0 src/sysbench.c): one generator thread
/// (eventgen_thread_proc) draws exponentially distributed gaps with mean 1 / rate (a Poisson
/// process; sysbench's sb_rand_exp, here core/pacing.hpp ArrivalSchedule) and puts each event
/// into one queue (sysbench: a ck_ring of MAX_QUEUE_LEN = 131072 timestamps); the `threads`
/// workers take events from it (sb_more_events) and run them as above. What sysbench counts:
///   - latency: its event timer adds the event's time in the queue to its execution
///     (sb_timer_stop: elapsed + queue_time, queue_time = dequeue time - enqueue time), so in
///     rate mode the latency histogram, percentiles, avg, sum and the threads' execution time
///     are queue wait + execution. We keep that meaning, measured from the event's INTENDED
///     arrival (the schedule's time), where sysbench stamps the time its generator woke up to
///     enqueue: a generator that falls behind (sysbench sleeps with usleep/sb_nanosleep) does
///     not hide its lateness here (no coordinated omission, docs/protocol.md section 2).
///     Counters::lateness keeps the queue wait (worker start - intended arrival) and
///     Counters::service the execution alone (sysbench reports neither apart).
///   - queue length and concurrency: its interval report (report_intermediate) prints the
///     ring's size and the events being executed; totals() here gives the arrivals, the events
///     still queued when the measured phase ended and the arrivals dropped.
///   - a full queue: sysbench sets sb_globals.error ("The event queue is full. This means the
///     worker threads are unable to keep up with the specified event generation rate") and the
///     run ends without its final report. Here an arrival that finds kMaxQueueLen events queued
///     is dropped and counted (arrivals_dropped), so a curve point past the database's capacity
///     still ends with its figures; the emulator warns that the rate was not held.
/// `arrivals` counts the events that arrived while measuring; every event that ends while
/// measuring is recorded, one that arrived in the warm-up too (sysbench records every event that
/// ends).
///
/// Phases: start() connects and prepares every worker (in parallel, like sysbench's thread_init)
/// and waits until all are ready, then they run unrecorded (warm-up); begin_measurement() records
/// every event that ends from then on; finish() stops them after their current event.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "drivelab/core/histogram.hpp"
#include "drivelab/core/pacing.hpp"
#include "drivelab/oltp/backend/backend.hpp"
#include "drivelab/oltp/backend/failure_bound.hpp"
#include "drivelab/oltp/sysbench/sysbench_config.hpp"
#include "drivelab/oltp/sysbench/sysbench_transactions.hpp"

namespace drivelab::oltp::sysbench {

struct DriverOptions {
  Workload workload = Workload::oltp_read_write;
  StatementOptions statements;
  RandOptions rand;
  Scale scale;
  int threads = 1;
  std::uint64_t seed = 1;
  FailureBound failure_bound;
  double rate_per_s = 0;  ///< open loop: arrivals per second in total (sysbench --rate); 0 = closed loop
};

/// The most events the open-loop queue holds: sysbench 1.0's MAX_QUEUE_LEN (src/sysbench.c).
inline constexpr std::size_t kMaxQueueLen = 131072;

/// True when sysbench 1.0.20 ignores this failure and restarts the event (see file comment).
/// The ignorable errors are the dialect's (Dialect::ignorable_native_errors / _sqlstates).
bool is_ignored_error(const DbStatus& status, const Dialect& dialect) noexcept;

/// Counters of a stretch of time (one interval, or the whole measured phase). The three
/// histograms (ns) of core/pacing.hpp OpenLoopLatency: `latency` per event (transaction), from
/// its start (closed loop) or its intended arrival (open loop); in an open loop only,
/// `lateness` its queue wait (worker start - intended arrival) and `service` its execution.
struct Counters : OpenLoopLatency {
  std::uint64_t events = 0;
  QueryCounts queries;  ///< errors = ignored errors
  std::uint64_t reconnects = 0;
  void merge(const Counters& o);
};

struct IntervalStats {
  Counters counters;
  double duration_s = 0;
};

/// One worker's share of the measured phase (sysbench's "Threads fairness").
struct ThreadShare {
  std::uint64_t events = 0;
  double execution_time_s = 0;  ///< sum of its events' latencies
};

struct DriverTotals {
  Counters counters;
  std::vector<ThreadShare> threads;
  std::uint64_t in_doubt = 0;  ///< commits whose outcome was lost with the connection
  double measured_s = 0;
  AttemptTotals attempts;              ///< event attempts (restarts included) and failed ones
  double rate_per_s = 0;               ///< the open loop's requested rate; 0 = closed loop
  std::uint64_t arrivals = 0;          ///< open loop: events that arrived in the measured phase
  std::uint64_t arrivals_dropped = 0;  ///< of them, dropped: kMaxQueueLen events were queued
  std::uint64_t queued_at_end = 0;     ///< open loop: events still waiting when measuring ended
};

class Driver {
 public:
  /// `backend` must outlive the driver.
  Driver(Backend& backend, DriverOptions options);
  ~Driver();  ///< finish()es if still running
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  /// Starts the workers and waits until every one has connected and prepared its statements.
  /// Throws BackendError (with the first worker's error) if one cannot; the others are stopped.
  void start();
  bool started() const noexcept { return !threads_.empty(); }
  void begin_measurement();
  /// The counters since the previous call (or begin_measurement), reset for the next interval.
  IntervalStats take_interval();
  /// Stops recording, stops and joins the workers. Idempotent.
  void finish();
  /// The measured phase, merged over workers. Call after finish().
  DriverTotals totals() const;
  std::optional<std::string> fatal_error() const;
  bool failed() const noexcept { return failed_.load(std::memory_order_relaxed); }

 private:
  struct Worker;
  void worker_main(Worker& w);
  /// Open loop: the generator thread (sysbench's eventgen_thread_proc).
  void generator_main(std::int64_t start_ns);
  /// Open loop: waits for the next event and returns its intended arrival; nullopt when stopping.
  std::optional<std::int64_t> next_arrival();
  void wake_all();
  void connect(Worker& w);
  /// One event: arrived (intended) at `intended_ns` (closed loop: = start_ns), started on its
  /// worker at `start_ns`, done at `done_ns` (monotonic ns).
  void record(Worker& w, std::int64_t intended_ns, std::int64_t start_ns, std::int64_t done_ns, const QueryCounts& q,
              std::uint64_t reconnects);
  void fail(std::string message);

  Backend& backend_;
  DriverOptions opt_;
  TxMode mode_;
  FailureMeter failures_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> measuring_{false};
  std::atomic<bool> failed_{false};

  mutable std::mutex mu_;  // guards ready_, fatal_, the measurement times
  std::condition_variable ready_cv_;
  int ready_ = 0;
  std::optional<std::string> fatal_;
  std::int64_t measure_start_ns_ = 0;
  std::int64_t measure_end_ns_ = 0;
  std::int64_t interval_start_ns_ = 0;

  // Open loop. queue_ holds intended arrivals (monotonic ns), guarded by qmu_.
  std::thread generator_;
  mutable std::mutex qmu_;
  std::condition_variable qcv_;     // workers wait here for an event
  std::condition_variable gen_cv_;  // the generator sleeps here until the next arrival
  std::deque<std::int64_t> queue_;
  std::uint64_t arrivals_ = 0;  // guarded by qmu_: measured phase only
  std::uint64_t dropped_ = 0;
  std::uint64_t queued_at_end_ = 0;
};

}  // namespace drivelab::oltp::sysbench
