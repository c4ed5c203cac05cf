#include "tpcc_terminal.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/oltp/backend/connect_failure.hpp"

namespace drivelab::oltp::tpcc::detail {

TerminalIdentity TerminalIdentity::make(int index, int number, const DriverOptions& o, const Rng& base) {
  TerminalIdentity t;
  t.index = index;
  t.rng = base.split(static_cast<std::uint64_t>(number) + 1);
  t.home = TerminalHome::make(o.profile, o.all_warehouses, number, o.job_users > 0 ? o.job_users : o.users,
                              o.scale.warehouses, t.rng);
  return t;
}

Card TerminalIdentity::card(const InputGenerator& gen, TxType type) {
  Card c;
  c.terminal = index;
  const int w_id = home.warehouse(rng);
  const int stock_level_d_id = home.stock_level_d_id();
  switch (type) {
    case TxType::new_order: c.input = gen.new_order(rng, w_id); break;
    case TxType::payment: c.input = gen.payment(rng, w_id); break;
    case TxType::order_status: c.input = gen.order_status(rng, w_id); break;
    case TxType::delivery: c.input = gen.delivery(rng, w_id); break;
    case TxType::stock_level: c.input = gen.stock_level(rng, w_id, stock_level_d_id); break;
  }
  return c;
}

// ---- StopSignal --------------------------------------------------------------------------------

void StopSignal::request() {
  {
    // Under the mutex, so a sleeper between its check and its wait cannot miss the notify.
    std::lock_guard lock(mu_);
    flag_.store(true, std::memory_order_relaxed);
  }
  cv_.notify_all();
}

bool StopSignal::sleep_until(std::int64_t deadline_ns) const {
  // steady_clock is CLOCK_MONOTONIC in libstdc++, the clock of monotonic_ns().
  const std::chrono::steady_clock::time_point deadline{std::chrono::nanoseconds(deadline_ns)};
  std::unique_lock lock(mu_);
  return !cv_.wait_until(lock, deadline, [this] { return requested(); });
}

std::string login_failure_message(std::string_view who, int users, int logged_in, double login_rate_per_s,
                                  const std::exception& error) {
  const auto* backend_error = dynamic_cast<const BackendError*>(&error);
  const std::string_view sqlstate = backend_error != nullptr ? std::string_view(backend_error->sqlstate()) : "";
  const int native = backend_error != nullptr ? backend_error->native_code() : 0;
  std::string hint;
  switch (classify_connect_failure(sqlstate, native, error.what())) {
    case ConnectFailure::too_many_connections:
      hint = fmt::format(
          "the server refused the session for too many connections{}: its max_connections (PostgreSQL: or the "
          "database's or role's CONNECTION LIMIT; MySQL: or max_user_connections) is below the sessions open at "
          "once, this test's {} users + 1 plus any other client's; raise it, or lower users",
          native == 1040 || native == 1203 ? fmt::format(" (error {})", native)
          : sqlstate == "53300"            ? std::string(" (SQLSTATE 53300)")
                                           : std::string(),
          users);
      break;
    case ConnectFailure::timed_out:
      hint = fmt::format(
          "connecting timed out: the server did not complete the login within the connect time-out, so it (or its "
          "drive) stalls or the network drops packets; a server at max_connections refuses at once instead; {}",
          login_rate_per_s > 0
              ? fmt::format("lower login_rate (now {:g}/s) or find what stalls the server", login_rate_per_s)
              : std::string("set login_rate to stagger the logins (now 0: all at once) or find "
                            "what stalls the server"));
      break;
    case ConnectFailure::refused:
      hint =
          "the connection was refused: nothing accepts connections at that address (the server is not running, "
          "has stopped or crashed, or listens elsewhere)";
      break;
    case ConnectFailure::other: break;
  }
  return hint.empty() ? fmt::format("{} of {} could not log in ({} logged in before it): {}", who, users, logged_in,
                                    error.what())
                      : fmt::format("{} of {} could not log in ({} logged in before it): {}: {}", who, users, logged_in,
                                    hint, error.what());
}

// ---- Session -----------------------------------------------------------------------------------

Session::Session(Backend& backend, const StopSignal& stop, std::chrono::nanoseconds reconnect_timeout,
                 TxProtocol protocol, FailureMeter* failures)
    : backend_(backend), stop_(stop), reconnect_timeout_(reconnect_timeout), protocol_(protocol), failures_(failures) {
  open();
}

Session::~Session() = default;

void Session::open() {
  auto conn = backend_.connect();
  conn->set_cancel_flag(stop_.flag());
  tx_ = make_transactions(*conn, backend_.dialect(), protocol_);
  conn_ = std::move(conn);
}

TxResult Session::run_once(const Card& card, int& delivery_skipped) {
  return std::visit(
      [&](const auto& in) -> TxResult {
        using In = std::decay_t<decltype(in)>;
        if constexpr (std::is_same_v<In, NewOrderInput>) {
          NewOrderOutput o;
          return tx_->new_order(in, o);
        } else if constexpr (std::is_same_v<In, PaymentInput>) {
          PaymentOutput o;
          return tx_->payment(in, o);
        } else if constexpr (std::is_same_v<In, OrderStatusInput>) {
          OrderStatusOutput o;
          return tx_->order_status(in, o);
        } else if constexpr (std::is_same_v<In, DeliveryInput>) {
          DeliveryOutput o;
          TxResult r = tx_->delivery(in, o);
          if (r.end == TxEnd::committed) delivery_skipped = o.skipped;
          return r;
        } else {
          StockLevelOutput o;
          return tx_->stock_level(in, o);
        }
      },
      card.input);
}

bool Session::reconnect(ExecResult& result, const DbStatus& lost, std::string_view who) {
  // The old session is dead: drop it without talking to it (a rollback would only fail again).
  tx_.reset();
  conn_.reset();
  const std::int64_t deadline = monotonic_ns() + reconnect_timeout_.count();
  std::string last_error;
  for (;;) {
    if (stop_.requested()) {
      result.abandoned = true;
      return false;
    }
    try {
      open();
      ++result.reconnects;
      return true;
    } catch (const std::exception& ex) {
      last_error = ex.what();
    }
    const std::int64_t now = monotonic_ns();
    if (now >= deadline) {
      result.fatal =
          fmt::format("server connection lost: {} ({}: {}); reconnecting failed for {:.0f} s: {}", lost.message, who,
                      to_string(lost.outcome), static_cast<double>(reconnect_timeout_.count()) / 1e9, last_error);
      return false;
    }
    // Retry every 200 ms: quick enough to resume after a server restart, slow enough not to
    // hammer a server that refuses connections.
    stop_.sleep_until(std::min(deadline, now + 200'000'000));
  }
}

ExecResult Session::execute(const Card& card, std::string_view who) {
  ExecResult res;
  const TxType type = card.type();
  for (;;) {
    if (!tx_) {
      // A previous transaction lost the connection and the reconnect was interrupted.
      DbStatus none;
      none.outcome = Outcome::retryable;
      none.message = "no session";
      if (!reconnect(res, none, who)) return res;
    }
    TxResult r = run_once(card, res.delivery_skipped);
    // Every attempt counts against the failure bound, except one the stop cut short.
    const bool stopping = r.end == TxEnd::failed && stop_.requested();
    std::optional<std::string> beyond_bound;
    if (failures_ != nullptr && !stopping)
      beyond_bound = failures_->attempt(static_cast<std::size_t>(type), r.end == TxEnd::failed ? &r.status : nullptr,
                                        monotonic_ns());
    if (r.end != TxEnd::failed) {
      res.end = r.end;
      if (beyond_bound) res.fatal = std::move(beyond_bound);
      return res;
    }
    res.end = TxEnd::failed;
    const DbStatus& st = r.status;
    if (beyond_bound) {
      if (!st.connection_lost) conn_->rollback();
      res.fatal = std::move(beyond_bound);
      return res;
    }
    if (st.outcome == Outcome::storage_failure) {
      // The drive failed: never retried, never in_doubt, the run stops (issue 15). The rollback
      // is a courtesy; its own error would only hide the cause.
      if (!st.connection_lost) conn_->rollback();
      res.fatal = fmt::format("{}: {}: {}", who, to_string(type), st.to_string());
      return res;
    }
    bool session_ok = !st.connection_lost;
    if (session_ok) {
      // The one retry loop: roll back, then rerun only what is safe to rerun.
      const DbStatus rb = conn_->rollback();
      if (rb.connection_lost) {
        session_ok = false;
      } else if (rb.outcome == Outcome::fatal || rb.outcome == Outcome::storage_failure) {
        res.fatal = fmt::format("{}: {} rollback: {}", who, to_string(type), rb.to_string());
        return res;
      }
    }
    if (!session_ok && !reconnect(res, st, who)) return res;

    switch (st.outcome) {
      case Outcome::retryable:
        if (stop_.requested()) {
          res.abandoned = true;  // stopping while waiting for a lock: not an error
          return res;
        }
        if (res.retries < kMaxRetries) {
          ++res.retries;
          continue;
        }
        return res;  // retries exhausted: an error, and the terminal goes on
      case Outcome::in_doubt:
        res.in_doubt = true;  // never rerun: it may have committed
        return res;
      case Outcome::fatal:
      case Outcome::storage_failure:  // handled above
        res.fatal = fmt::format("{}: {}: {}", who, to_string(type), st.to_string());
        return res;
      case Outcome::ok: break;
    }
    return res;
  }
}

}  // namespace drivelab::oltp::tpcc::detail
