#include "drivelab/oltp/tpcc_driver.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/oltp/tpcc_transactions.hpp"

namespace drivelab::oltp::tpcc {

double think_time_s(Rng& rng, double mean_s) noexcept {
  const double r = 1.0 - rng.uniform01();  // (0, 1]
  return std::min(-std::log(r) * mean_s, 10.0 * mean_s);
}

void TypeStats::merge(const TypeStats& o) {
  response_time.merge(o.response_time);
  commits += o.commits;
  rollbacks += o.rollbacks;
  retries += o.retries;
  errors += o.errors;
}

struct Driver::Terminal {
  int index = 0;
  int w_id = 0;
  int stock_level_d_id = 0;
  Rng rng;
  Deck deck;
  std::unique_ptr<Connection> conn;
  std::unique_ptr<Transactions> tx;
  // Written by the terminal thread only; read after join.
  std::array<TypeStats, kTxTypes> stats;
  std::uint64_t in_doubt = 0;
  std::uint64_t delivery_skipped = 0;
};

Driver::Driver(Backend& backend, DriverOptions options) : backend_(backend), opt_(options) {}

Driver::~Driver() { finish(); }

void Driver::start() {
  if (started()) return;
  const Rng base(opt_.seed);
  const int w = opt_.scale.warehouses;
  for (int i = 0; i < opt_.users; ++i) {
    auto t = std::make_unique<Terminal>();
    t->index = i;
    t->w_id = (i % w) + 1;
    t->stock_level_d_id = ((i / w) % kDistrictsPerWarehouse) + 1;
    t->rng = base.split(static_cast<std::uint64_t>(i) + 1);
    t->conn = backend_.connect();
    t->conn->set_cancel_flag(&stop_);
    t->tx = std::make_unique<Transactions>(*t->conn, backend_.dialect());
    terminals_.push_back(std::move(t));
  }
  for (auto& t : terminals_) threads_.emplace_back([this, term = t.get()] { terminal_main(*term); });
}

void Driver::begin_measurement() {
  std::lock_guard lock(mu_);
  measure_start_ns_ = monotonic_ns();
  interval_start_ns_ = measure_start_ns_;
  interval_ = IntervalStats{};
  measuring_.store(true, std::memory_order_release);
}

IntervalStats Driver::take_interval() {
  std::lock_guard lock(mu_);
  const std::int64_t now = monotonic_ns();
  IntervalStats out = std::move(interval_);
  out.duration_s = static_cast<double>(now - interval_start_ns_) / 1e9;
  interval_ = IntervalStats{};
  interval_start_ns_ = now;
  return out;
}

void Driver::finish() {
  if (measuring_.exchange(false)) {
    std::lock_guard lock(mu_);
    measure_end_ns_ = monotonic_ns();
  }
  stop_.store(true);
  for (auto& th : threads_)
    if (th.joinable()) th.join();
}

DriverTotals Driver::totals() const {
  DriverTotals out;
  for (const auto& t : terminals_) {
    for (std::size_t k = 0; k < kTxTypes; ++k) out.by_type[k].merge(t->stats[k]);
    out.in_doubt += t->in_doubt;
    out.delivery_skipped_districts += t->delivery_skipped;
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
}

bool Driver::sleep_s(double seconds) const {
  // Sliced so that a stop request is seen within 50 ms.
  const std::int64_t deadline = monotonic_ns() + static_cast<std::int64_t>(seconds * 1e9);
  while (!stop_.load(std::memory_order_relaxed)) {
    const std::int64_t now = monotonic_ns();
    if (now >= deadline) return true;
    sleep_until_ns(std::min(deadline, now + 50'000'000));
  }
  return false;
}

void Driver::record(Terminal& t, TxType type, TxEnd end, std::int64_t response_ns, int retries) {
  if (!measuring_.load(std::memory_order_acquire)) return;  // warm-up: not recorded
  TypeStats& s = t.stats[static_cast<std::size_t>(type)];
  s.retries += static_cast<std::uint64_t>(retries);
  if (end == TxEnd::failed) {
    ++s.errors;
  } else {
    if (end == TxEnd::committed) ++s.commits;
    else ++s.rollbacks;
    s.response_time.record(response_ns);
  }
  std::lock_guard lock(mu_);
  interval_.retries += static_cast<std::uint64_t>(retries);
  if (end != TxEnd::failed) interval_.response_time.record(response_ns);
  if (end == TxEnd::committed) {
    ++interval_.commits;
    if (type == TxType::new_order) ++interval_.new_order_commits;
  }
}

void Driver::terminal_main(Terminal& t) {
  const InputGenerator gen(opt_.scale, opt_.c_run);
  const bool think = opt_.think == ThinkMode::tpcc;
  try {
    while (!stop_.load(std::memory_order_relaxed)) {
      const TxType type = t.deck.draw(t.rng);
      const auto k = static_cast<std::size_t>(type);
      if (think && !sleep_s(kKeyingTimeS[k])) break;

      // Inputs are drawn once: a retry reruns the same business transaction.
      NewOrderInput no;
      PaymentInput pay;
      OrderStatusInput os;
      DeliveryInput dl;
      StockLevelInput sl;
      switch (type) {
        case TxType::new_order: no = gen.new_order(t.rng, t.w_id); break;
        case TxType::payment: pay = gen.payment(t.rng, t.w_id); break;
        case TxType::order_status: os = gen.order_status(t.rng, t.w_id); break;
        case TxType::delivery: dl = gen.delivery(t.rng, t.w_id); break;
        case TxType::stock_level: sl = gen.stock_level(t.rng, t.w_id, t.stock_level_d_id); break;
      }

      const std::int64_t t0 = monotonic_ns();
      int retries = 0;
      TxResult r;
      bool abandoned = false;
      for (;;) {
        switch (type) {
          case TxType::new_order: { NewOrderOutput o; r = t.tx->new_order(no, o); break; }
          case TxType::payment: { PaymentOutput o; r = t.tx->payment(pay, o); break; }
          case TxType::order_status: { OrderStatusOutput o; r = t.tx->order_status(os, o); break; }
          case TxType::delivery: {
            DeliveryOutput o;
            r = t.tx->delivery(dl, o);
            if (r.end == TxEnd::committed && measuring_.load(std::memory_order_relaxed))
              t.delivery_skipped += static_cast<std::uint64_t>(o.skipped);
            break;
          }
          case TxType::stock_level: { StockLevelOutput o; r = t.tx->stock_level(sl, o); break; }
        }
        if (r.end != TxEnd::failed) break;
        // The one retry loop: roll back, then rerun only what is safe to rerun.
        const DbStatus rb = t.conn->rollback();
        if (rb.outcome == Outcome::fatal) {
          fail(fmt::format("terminal {}: {} rollback: {}", t.index, to_string(type), rb.to_string()));
          return;
        }
        if (r.status.outcome == Outcome::retryable) {
          if (stop_.load(std::memory_order_relaxed)) {
            abandoned = true;  // stopping while waiting for a lock: not an error
            break;
          }
          if (retries < kMaxRetries) {
            ++retries;
            continue;
          }
        }
        if (r.status.outcome == Outcome::in_doubt && measuring_.load(std::memory_order_relaxed))
          ++t.in_doubt;
        if (r.status.outcome == Outcome::fatal) {
          record(t, type, TxEnd::failed, 0, retries);
          fail(fmt::format("terminal {}: {}: {}", t.index, to_string(type), r.status.to_string()));
          return;
        }
        break;  // in_doubt, or retries exhausted: an error, and the terminal goes on
      }
      if (abandoned) break;
      record(t, type, r.end, monotonic_ns() - t0, retries);
      if (think && !sleep_s(think_time_s(t.rng, kMeanThinkTimeS[k]))) break;
    }
  } catch (const std::exception& ex) {
    fail(fmt::format("terminal {}: {}", t.index, ex.what()));
  }
}

}  // namespace drivelab::oltp::tpcc
