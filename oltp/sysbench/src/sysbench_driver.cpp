#include "drivelab/oltp/sysbench/sysbench_driver.hpp"

#include <chrono>

#include <fmt/format.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"

namespace drivelab::oltp::sysbench {

bool is_ignored_error(const DbStatus& s, const Dialect& dialect) noexcept {
  switch (s.outcome) {
    case Outcome::ok: return false;
    case Outcome::retryable: return true;
    case Outcome::in_doubt:
      // A commit lost with its connection: sysbench reconnects and restarts the event. An
      // in-doubt commit on a live session (SQLite I/O error) is a failing drive: fatal.
      return s.connection_lost;
    case Outcome::storage_failure: return false;  // the drive failed: never restarted, even with the session gone
    case Outcome::fatal: break;
  }
  if (s.connection_lost) return true;
  const auto& codes = dialect.ignorable_native_errors;
  const auto& states = dialect.ignorable_sqlstates;
  return std::find(codes.begin(), codes.end(), s.native_code) != codes.end() ||
         (!s.sqlstate.empty() && std::find(states.begin(), states.end(), s.sqlstate) != states.end());
}

void Counters::merge(const Counters& o) {
  OpenLoopLatency::merge(o);
  events += o.events;
  queries.add(o.queries);
  reconnects += o.reconnects;
}

struct Driver::Worker {
  int index = 0;
  SbRandom rnd;
  std::unique_ptr<Connection> conn;
  std::unique_ptr<PreparedSet> stmts;
  // Guarded by mu: the reporting thread swaps `interval` out while the worker runs.
  std::mutex mu;
  Counters interval;
  Counters total;
  double execution_time_s = 0;
  std::uint64_t in_doubt = 0;

  Worker(int i, const RandOptions& rand, Rng rng) : index(i), rnd(rand, rng) {}
};

Driver::Driver(Backend& backend, DriverOptions options)
    : backend_(backend),
      opt_(options),
      // sysbench sends a plain BEGIN for every script, so servers get the backend's plain
      // BEGIN / START TRANSACTION (read_write) for all three. Only SQLite runs oltp_read_only as
      // read_only: its read_write BEGIN IMMEDIATE would queue the readers behind one writer
      // lock, which no server does (docs/oltp-sysbench.md).
      mode_(options.workload == Workload::oltp_read_only && backend.capabilities().serialized_writers
                ? TxMode::read_only
                : TxMode::read_write),
      failures_(options.failure_bound, {std::string(to_string(options.workload))}) {}

Driver::~Driver() { finish(); }

void Driver::connect(Worker& w) {
  w.stmts.reset();  // statements belong to the connection: drop them first
  w.conn = backend_.connect();
  w.conn->set_cancel_flag(&stop_);
  w.stmts = std::make_unique<PreparedSet>(*w.conn, opt_.workload, opt_.statements, opt_.scale.tables);
}

void Driver::start() {
  if (started()) return;
  const Rng base(opt_.seed);
  for (int i = 0; i < opt_.threads; ++i)
    workers_.push_back(std::make_unique<Worker>(i, opt_.rand, base.split(static_cast<std::uint64_t>(i) + 1)));
  for (auto& w : workers_) threads_.emplace_back([this, wp = w.get()] { worker_main(*wp); });
  std::unique_lock lock(mu_);
  ready_cv_.wait(lock, [&] { return ready_ == opt_.threads || fatal_.has_value(); });
  if (fatal_) {
    const std::string why = *fatal_;
    lock.unlock();
    finish();
    throw BackendError(why);
  }
  if (opt_.rate_per_s > 0) generator_ = std::thread([this, t0 = monotonic_ns()] { generator_main(t0); });
}

void Driver::generator_main(std::int64_t start_ns) {
  // sysbench's sb_rand_exp(1e9 / rate) gaps, from a stream of its own (the workers' are 1..threads).
  ArrivalSchedule schedule(opt_.rate_per_s, ArrivalDistribution::exponential,
                           Rng(opt_.seed).split(static_cast<std::uint64_t>(opt_.threads) + 1), start_ns);
  std::unique_lock lock(qmu_);
  while (!stop_.load(std::memory_order_relaxed)) {
    const std::int64_t now = monotonic_ns();
    if (schedule.peek_ns() > now) {
      // libstdc++'s steady_clock reads CLOCK_MONOTONIC, the clock of monotonic_ns().
      gen_cv_.wait_until(lock, std::chrono::steady_clock::time_point(std::chrono::nanoseconds(schedule.peek_ns())),
                         [&] { return stop_.load(std::memory_order_relaxed); });
      continue;
    }
    // Every arrival that is due, each with its INTENDED time: a late wake-up shows as queue wait.
    const bool measuring = measuring_.load(std::memory_order_acquire);
    std::size_t pushed = 0;
    while (schedule.peek_ns() <= now) {
      const std::int64_t t = schedule.next_ns();
      if (measuring) ++arrivals_;
      if (queue_.size() >= kMaxQueueLen) {
        if (measuring) ++dropped_;
        continue;
      }
      queue_.push_back(t);
      ++pushed;
    }
    if (pushed == 1)
      qcv_.notify_one();
    else if (pushed > 1)
      qcv_.notify_all();
  }
}

std::optional<std::int64_t> Driver::next_arrival() {
  std::unique_lock lock(qmu_);
  qcv_.wait(lock, [&] { return stop_.load(std::memory_order_relaxed) || !queue_.empty(); });
  if (stop_.load(std::memory_order_relaxed)) return std::nullopt;  // queued events are dropped at the end
  const std::int64_t t = queue_.front();
  queue_.pop_front();
  return t;
}

void Driver::wake_all() {
  {
    std::lock_guard lock(qmu_);
  }  // a worker or the generator between its check and its wait sees the stop
  qcv_.notify_all();
  gen_cv_.notify_all();
}

void Driver::begin_measurement() {
  std::lock_guard lock(mu_);
  measure_start_ns_ = monotonic_ns();
  interval_start_ns_ = measure_start_ns_;
  for (auto& w : workers_) {
    std::lock_guard wl(w->mu);
    w->interval = Counters{};
  }
  measuring_.store(true, std::memory_order_release);
  failures_.start(measure_start_ns_);
}

IntervalStats Driver::take_interval() {
  IntervalStats out;
  for (auto& w : workers_) {
    Counters c;
    {
      std::lock_guard wl(w->mu);
      c = std::move(w->interval);
      w->interval = Counters{};
    }
    out.counters.merge(c);
  }
  std::lock_guard lock(mu_);
  const std::int64_t now = monotonic_ns();
  out.duration_s = static_cast<double>(now - interval_start_ns_) / 1e9;
  interval_start_ns_ = now;
  return out;
}

void Driver::finish() {
  if (measuring_.exchange(false)) {
    std::optional<std::string> beyond;
    {
      std::lock_guard lock(mu_);
      measure_end_ns_ = monotonic_ns();
      // The last window, while the workers still run (stopping them cuts attempts short).
      beyond = failures_.check_end(measure_end_ns_);
    }
    if (beyond) fail(std::move(*beyond));
    std::lock_guard lock(qmu_);
    queued_at_end_ = queue_.size();
  }
  stop_.store(true);
  wake_all();
  if (generator_.joinable()) generator_.join();
  for (auto& th : threads_)
    if (th.joinable()) th.join();
  // Close the sessions now (not at destruction): a managed server may be stopped next.
  for (auto& w : workers_) {
    w->stmts.reset();
    w->conn.reset();
  }
}

DriverTotals Driver::totals() const {
  DriverTotals out;
  for (const auto& w : workers_) {
    out.counters.merge(w->total);
    out.threads.push_back({w->total.events, w->execution_time_s});
    out.in_doubt += w->in_doubt;
  }
  out.attempts = failures_.totals().at(0);
  out.rate_per_s = opt_.rate_per_s;
  {
    std::lock_guard lock(qmu_);
    out.arrivals = arrivals_;
    out.arrivals_dropped = dropped_;
    out.queued_at_end = queued_at_end_;
  }
  std::lock_guard lock(mu_);
  if (measure_start_ns_ != 0) {
    const std::int64_t end = measure_end_ns_ != 0 ? measure_end_ns_ : monotonic_ns();
    out.measured_s = static_cast<double>(end - measure_start_ns_) / 1e9;
  }
  return out;
}

std::optional<std::string> Driver::fatal_error() const {
  std::lock_guard lock(mu_);
  return fatal_;
}

void Driver::fail(std::string message) {
  {
    std::lock_guard lock(mu_);
    if (!fatal_) fatal_ = std::move(message);
  }
  failed_.store(true);
  stop_.store(true);
  ready_cv_.notify_all();
  wake_all();
}

void Driver::record(Worker& w, std::int64_t intended_ns, std::int64_t start_ns, std::int64_t done_ns,
                    const QueryCounts& q, std::uint64_t reconnects) {
  if (!measuring_.load(std::memory_order_acquire)) return;  // warm-up
  const std::int64_t latency_ns = done_ns - intended_ns;
  const bool open = opt_.rate_per_s > 0;
  std::lock_guard lock(w.mu);
  for (Counters* c : {&w.interval, &w.total}) {
    if (open)
      c->record(intended_ns, start_ns, done_ns);  // latency, queue wait (lateness) and service
    else
      c->latency.record(latency_ns);
    ++c->events;
    c->queries.add(q);
    c->reconnects += reconnects;
  }
  w.execution_time_s += static_cast<double>(latency_ns) / 1e9;
}

void Driver::worker_main(Worker& w) {
  try {
    connect(w);
  } catch (const std::exception& ex) {
    fail(fmt::format("thread {}: {}", w.index, ex.what()));
    return;
  }
  {
    std::lock_guard lock(mu_);
    ++ready_;
  }
  ready_cv_.notify_all();

  const Dialect& dialect = backend_.dialect();
  EventPlan plan;
  try {
    while (!stop_.load(std::memory_order_relaxed)) {
      // Open loop: the next event of the queue (sysbench's sb_more_events), timed from its arrival.
      std::int64_t intended = 0;
      if (opt_.rate_per_s > 0) {
        const std::optional<std::int64_t> arrival = next_arrival();
        if (!arrival) break;
        intended = *arrival;
      }
      const std::int64_t t0 = monotonic_ns();
      if (opt_.rate_per_s <= 0) intended = t0;
      QueryCounts q;
      std::uint64_t reconnects = 0;
      bool abandoned = false;
      for (;;) {
        plan_event(opt_.workload, opt_.statements, opt_.scale, w.rnd, plan);
        const DbStatus st = execute_event(*w.conn, *w.stmts, plan, mode_, q);
        if (!stop_.load(std::memory_order_relaxed)) {
          if (auto beyond = failures_.attempt(0, st.ok() ? nullptr : &st, monotonic_ns())) {
            if (!st.ok() && !st.connection_lost) w.conn->rollback();
            fail(std::move(*beyond));
            return;
          }
        }
        if (st.ok()) break;
        const bool ignored = is_ignored_error(st, dialect);
        if (ignored && st.outcome == Outcome::in_doubt && measuring_.load(std::memory_order_relaxed)) {
          std::lock_guard lock(w.mu);
          ++w.in_doubt;
        }
        if (stop_.load(std::memory_order_relaxed)) {
          // Stopping: what ended this event (a KILL QUERY of the stop, or a server that stopped
          // answering and whose sockets the backend cut) is not a failure of the run, and a
          // reconnect would only wait for a server that may be gone. The open transaction ends
          // with the session.
          abandoned = true;
          break;
        }
        if (!ignored) {
          w.conn->rollback();
          fail(fmt::format("thread {}: {}", w.index, st.to_string()));
          return;
        }
        if (st.connection_lost) {
          try {
            connect(w);
          } catch (const std::exception& ex) {
            fail(fmt::format("thread {}: connection lost ({}) and reconnecting failed: {}", w.index, st.message,
                             ex.what()));
            return;
          }
          ++reconnects;
        } else if (const DbStatus rb = w.conn->rollback();
                   rb.outcome == Outcome::fatal || rb.outcome == Outcome::storage_failure) {
          fail(fmt::format("thread {}: rollback after '{}': {}", w.index, st.message, rb.to_string()));
          return;
        }
        if (stop_.load(std::memory_order_relaxed)) {
          abandoned = true;  // stopping while waiting for a lock: not an event
          break;
        }
      }
      if (abandoned) break;
      record(w, intended, t0, monotonic_ns(), q, reconnects);
    }
  } catch (const std::exception& ex) {
    fail(fmt::format("thread {}: {}", w.index, ex.what()));
  }
}

}  // namespace drivelab::oltp::sysbench
