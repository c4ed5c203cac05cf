// The Driver: options, phases and the measured-phase bookkeeping over one TerminalEngine
// (tpcc_tp_monitor.cpp or tpcc_terminal_dedicated.cpp). Samples are recorded by the engines into
// StatsShards; pool utilisation and queue length come from cumulative meters sampled here at
// the phase and interval boundaries.
#include "drivelab/oltp/tpcc/tpcc_driver.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>

#include <fmt/format.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"
#include "tpcc_terminal_engine.hpp"

namespace drivelab::oltp::tpcc {

double mean_think_time_s(Profile profile, TxType type) noexcept {
  const auto k = static_cast<std::size_t>(type);
  return profile == Profile::hammerdb ? kHammerDbMeanThinkTimeS[k] : kMeanThinkTimeS[k];
}

double think_time_s(Rng& rng, double mean_s, Profile profile) noexcept {
  const double r = 1.0 - rng.uniform01();  // (0, 1]
  if (profile == Profile::hammerdb) return std::abs(std::round(std::log(r) * mean_s));
  return std::min(-std::log(r) * mean_s, 10.0 * mean_s);
}

double tpcc_terminal_rate_per_s() noexcept {
  double cycle_s = 0;
  for (std::size_t k = 0; k < kTxTypes; ++k) cycle_s += (kKeyingTimeS[k] + kMeanThinkTimeS[k]) * Deck::kCardsPerType[k];
  return Deck::kCards / cycle_s;
}

void TypeStats::merge(const TypeStats& o) {
  response_time.merge(o.response_time);
  queue_wait.merge(o.queue_wait);
  service_time.merge(o.service_time);
  commits += o.commits;
  rollbacks += o.rollbacks;
  retries += o.retries;
  errors += o.errors;
  reconnects += o.reconnects;
}

namespace detail {

std::int64_t DriverState::keying_ns(TxType type) const noexcept {
  if (opt.think != ThinkMode::tpcc) return 0;
  return static_cast<std::int64_t>(kKeyingTimeS[static_cast<std::size_t>(type)] * opt.think_scale * 1e9);
}

std::int64_t DriverState::think_ns(TxType type, Rng& rng) const noexcept {
  if (opt.think != ThinkMode::tpcc) return 0;
  return static_cast<std::int64_t>(think_time_s(rng, mean_think_time_s(opt.profile, type), opt.profile) *
                                   opt.think_scale * 1e9);
}

double DriverState::start_spread_ns() const noexcept {
  // HammerDB's virtual users key their first transaction as soon as they are logged in, and their
  // logins are 500 ms apart: dedicated users with a login ramp do the same. Pooled terminals have
  // no login ramp, so they keep the spread.
  if (opt.profile == Profile::hammerdb && opt.terminals == TerminalMode::dedicated && opt.login_rate_per_s > 0)
    return 0.0;
  return opt.think == ThinkMode::tpcc ? kMeanThinkTimeS[0] * opt.think_scale * 1e9 : 0.0;
}

/// Cumulative meters at one instant.
struct MeterSnapshot {
  std::int64_t t_ns = 0;
  std::int64_t busy_ns = 0;
  double queue_area = 0;
  std::uint64_t arrivals = 0;
  std::uint64_t dropped = 0;
};

}  // namespace detail

namespace {

detail::MeterSnapshot snapshot(detail::TerminalEngine& e, std::uint64_t& max_queue) {
  detail::MeterSnapshot m;
  m.t_ns = monotonic_ns();
  m.busy_ns = e.busy_ns(m.t_ns);
  const auto q = e.queue(m.t_ns);
  m.queue_area = q.area;
  max_queue = q.max;
  m.arrivals = e.arrivals();
  m.dropped = e.arrivals_dropped();
  return m;
}

}  // namespace

namespace detail {

/// The meters at the start and end of the measured phase and at the last interval boundary.
struct MeasureBook {
  std::mutex mu;
  detail::MeterSnapshot start, last, end;
  bool measuring = false;
  bool ended = false;
  std::uint64_t queue_max = 0;
  int logged_in_at_start = 0;
};

}  // namespace detail

Driver::Driver(Backend& backend, DriverOptions options) : backend_(backend), opt_(options) {
  if (opt_.users < 1) throw ConfigError("tpcc driver: users must be >= 1");
  if (opt_.scale.warehouses < 1) throw ConfigError("tpcc driver: warehouses must be >= 1");
  if (opt_.terminals == TerminalMode::pooled && opt_.connections < 1)
    throw ConfigError("tpcc driver: connections must be >= 1");
  if (!(opt_.rate_per_s >= 0) || !(opt_.think_scale > 0) || !(opt_.login_rate_per_s >= 0))
    throw ConfigError("tpcc driver: rate, login_rate must be >= 0 and think_scale > 0");
  if (opt_.rate_per_s > 0 && opt_.think == ThinkMode::tpcc)
    throw ConfigError("tpcc driver: rate (open loop) and think: tpcc (closed loop) exclude each other");
  if (opt_.rate_per_s > 0 && opt_.terminals == TerminalMode::dedicated)
    throw ConfigError("tpcc driver: rate needs terminals: pooled (arrivals are queued to the pool)");
}

Driver::~Driver() { finish(); }

void Driver::start() {
  if (engine_) return;
  const int executors = opt_.terminals == TerminalMode::pooled ? opt_.connections : opt_.users;
  state_ = std::make_unique<detail::DriverState>(backend_, opt_, executors);
  book_ = std::make_unique<detail::MeasureBook>();
  engine_ = opt_.terminals == TerminalMode::pooled ? detail::make_tp_monitor(*state_)
                                                   : detail::make_dedicated_terminals(*state_);
  try {
    engine_->start();
  } catch (...) {
    state_->stop.request();
    engine_->join();
    engine_.reset();
    throw;
  }
}

void Driver::begin_measurement() {
  if (!engine_) return;
  std::lock_guard lock(book_->mu);
  std::uint64_t ignored_max = 0;
  book_->start = snapshot(*engine_, ignored_max);
  book_->last = book_->start;
  book_->logged_in_at_start = engine_->logged_in();
  book_->measuring = true;
  state_->stats.set_measuring(true);
  state_->failures.start(book_->start.t_ns);
}

IntervalStats Driver::take_interval() {
  IntervalStats out;
  if (!engine_) return out;
  std::lock_guard lock(book_->mu);
  out = state_->stats.take_interval();
  std::uint64_t max_queue = 0;
  const detail::MeterSnapshot now = snapshot(*engine_, max_queue);
  const detail::MeterSnapshot& prev = book_->last;
  const double dt_ns = static_cast<double>(now.t_ns - prev.t_ns);
  out.duration_s = seconds_between(prev.t_ns, now.t_ns);
  if (dt_ns > 0) {
    out.pool_utilisation = static_cast<double>(now.busy_ns - prev.busy_ns) / (engine_->executors() * dt_ns);
    out.queue_length_avg = (now.queue_area - prev.queue_area) / dt_ns;
  }
  out.queue_length_max = max_queue;
  book_->queue_max = std::max(book_->queue_max, max_queue);
  book_->last = now;
  return out;
}

void Driver::finish() {
  if (!engine_ || finished_) return;
  finished_ = true;
  {
    std::lock_guard lock(book_->mu);
    if (book_->measuring) {
      state_->stats.set_measuring(false);
      std::uint64_t max_queue = 0;
      book_->end = snapshot(*engine_, max_queue);
      book_->queue_max = std::max(book_->queue_max, max_queue);
      book_->measuring = false;
      book_->ended = true;
      // The last window, while the terminals still run (stopping them cuts attempts short).
      if (auto beyond = state_->failures.check_end(book_->end.t_ns)) state_->fail(std::move(*beyond));
    }
  }
  state_->stop.request();
  engine_->join();
}

DriverTotals Driver::totals() const {
  DriverTotals out;
  if (!engine_) return out;
  state_->stats.totals(out);
  const std::vector<AttemptTotals> attempts = state_->failures.totals();
  std::copy_n(attempts.begin(), std::min(attempts.size(), out.attempts.size()), out.attempts.begin());
  out.workers = engine_->executors();
  const detail::TerminalEngine::TimerThreadScheduling timer = engine_->timer_thread();
  out.timer_thread_fifo = timer.fifo;
  out.timer_thread_nice = timer.nice;
  out.timer_thread_slice_us = timer.slice_us;
  if (finished_) engine_->merge_lateness(out.timer_lateness);  // the engine's threads are joined
  std::lock_guard lock(book_->mu);
  out.users_logged_in = book_->logged_in_at_start;
  if (!book_->ended) return out;
  const detail::MeterSnapshot& a = book_->start;
  const detail::MeterSnapshot& b = book_->end;
  const double dt_ns = static_cast<double>(b.t_ns - a.t_ns);
  out.measured_s = seconds_between(a.t_ns, b.t_ns);
  if (dt_ns > 0) {
    out.pool_utilisation = static_cast<double>(b.busy_ns - a.busy_ns) / (out.workers * dt_ns);
    out.queue_length_avg = (b.queue_area - a.queue_area) / dt_ns;
  }
  out.queue_length_max = book_->queue_max;
  out.arrivals = b.arrivals - a.arrivals;
  out.arrivals_dropped = b.dropped - a.dropped;
  return out;
}

std::optional<std::string> Driver::fatal_error() const { return state_ ? state_->fatal() : std::nullopt; }

bool Driver::failed() const noexcept { return state_ && state_->failed(); }

int Driver::users_logged_in() const noexcept { return engine_ ? engine_->logged_in() : 0; }

}  // namespace drivelab::oltp::tpcc
