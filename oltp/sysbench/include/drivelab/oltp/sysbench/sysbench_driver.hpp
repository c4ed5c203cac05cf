#pragma once
/// \file sysbench_driver.hpp
/// The worker threads of a sysbench-compatible run and their measurement: sysbench's
/// thread_run() loop (src/lua/internal/sysbench.lua) with its statistics (src/sysbench.c,
/// db_driver.c).
///
/// Threads: `threads` workers, each with its own connection, its own prepared statements
/// (sysbench_transactions.hpp PreparedSet, prepared when the thread starts, as thread_init()) and
/// its own random stream (the seed split by thread index). Closed loop, no think time: each
/// worker runs event after event as fast as the database answers.
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
/// Phases: start() connects and prepares every worker (in parallel, like sysbench's thread_init)
/// and waits until all are ready, then they run unrecorded (warm-up); begin_measurement() records
/// every event that ends from then on; finish() stops them after their current event.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "drivelab/core/histogram.hpp"
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
};

/// True when sysbench 1.0.20 ignores this failure and restarts the event (see file comment).
/// The ignorable errors are the dialect's (Dialect::ignorable_native_errors / _sqlstates).
bool is_ignored_error(const DbStatus& status, const Dialect& dialect) noexcept;

/// Counters of a stretch of time (one interval, or the whole measured phase).
struct Counters {
  LatencyHistogram latency;  ///< per event (transaction), ns
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
  AttemptTotals attempts;  ///< event attempts (restarts included) and failed ones
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
  void connect(Worker& w);
  void record(Worker& w, std::int64_t latency_ns, const QueryCounts& q, std::uint64_t reconnects);
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
};

}  // namespace drivelab::oltp::sysbench
