#pragma once
// The pieces every terminal mode shares (tpcc_driver.hpp explains the modes):
//   Card         one business transaction a terminal submits: its type and its inputs, drawn once
//                so that a retry reruns exactly the same transaction;
//   StopSignal   the driver's stop request, with sleeps that end at once when it is raised;
//   Session      one database Connection + its prepared Transactions, and THE retry loop:
//                rerun on retryable, never on in-doubt, reconnect on a lost connection.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "drivelab/core/rng.hpp"
#include "drivelab/oltp/backend/backend.hpp"
#include "drivelab/oltp/backend/failure_bound.hpp"
#include "drivelab/oltp/tpcc/tpcc_driver_options.hpp"
#include "drivelab/oltp/tpcc/tpcc_random.hpp"
#include "drivelab/oltp/tpcc/tpcc_transactions.hpp"

namespace drivelab::oltp::tpcc::detail {

/// One submitted transaction. The variant's index is the TxType.
struct Card {
  std::variant<NewOrderInput, PaymentInput, OrderStatusInput, DeliveryInput, StockLevelInput> input;
  int terminal = -1;           ///< submitting terminal (pooled), -1 when none waits for it
  std::int64_t submit_ns = 0;  ///< see tpcc_driver.hpp: response time starts here

  TxType type() const noexcept { return static_cast<TxType>(input.index()); }
};

/// A terminal's identity and random state (shared by the pooled, dedicated and open-loop modes).
struct TerminalIdentity {
  int index = 0;  ///< this driver's terminal number (0..users-1)
  TerminalHome home;
  Rng rng;
  Deck deck;

  /// This driver's terminal `index`, the job's terminal `number` (DriverOptions::terminal_first
  /// + index x terminal_step; the same on one host), of a run with options `o`: the number fixes
  /// the random stream and, under Profile::tpcc, the home warehouse and district (clause 4.2.2
  /// placement, tpcc_driver.hpp); under Profile::hammerdb they are drawn (TerminalHome).
  static TerminalIdentity make(int index, int number, const DriverOptions& o, const Rng& base);
  /// The type of the next transaction: the deck's next card, or HammerDB's independent draw.
  TxType next_type(Profile profile) noexcept {
    return profile == Profile::hammerdb ? hammerdb_transaction(rng) : deck.draw(rng);
  }
  /// Draws the inputs of a `type` transaction of this terminal (clauses 2.x.1).
  Card card(const InputGenerator& gen, TxType type);
};

/// The driver's stop request. request() wakes every sleeper at once.
class StopSignal {
 public:
  void request();
  bool requested() const noexcept { return flag_.load(std::memory_order_relaxed); }
  /// The flag handed to Connection::set_cancel_flag.
  const std::atomic<bool>* flag() const noexcept { return &flag_; }
  /// Sleeps until the monotonic deadline; false if a stop was requested first.
  bool sleep_until(std::int64_t deadline_ns) const;

 private:
  std::atomic<bool> flag_{false};
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
};

/// What Session::execute did.
struct ExecResult {
  TxEnd end = TxEnd::committed;
  int retries = 0;
  int reconnects = 0;
  bool in_doubt = false;
  bool abandoned = false;            ///< stopped while retrying: neither a success nor an error
  int delivery_skipped = 0;          ///< districts a committed Delivery found empty
  std::optional<std::string> fatal;  ///< set when the run must stop (error text)
};

/// What a dedicated user whose login failed says ("user 7 of 50 could not log in (6 logged in
/// before it): <hint>: <error>"), the hint chosen by classify_connect_failure from the error's
/// SQLSTATE, native code and text (a BackendError's; any other exception's text alone):
///   too many connections  the server's max_connections (PostgreSQL: or the database's or role's
///                         CONNECTION LIMIT; MySQL: or max_user_connections) is below the sessions
///                         open at once: raise it or lower users;
///   timed out             the server did not complete the login within the connect time-out: it
///                         (or its drive) stalls, or packets are dropped; not max_connections (a
///                         full server refuses at once): lower login_rate or find the stall;
///   refused               nothing accepts connections at that address;
///   other                 the error alone (it names authentication, an unknown database, ...).
std::string login_failure_message(std::string_view who, int users, int logged_in, double login_rate_per_s,
                                  const std::exception& error);

/// One session with the database. Not thread-safe: one worker (or one dedicated user) owns it.
class Session {
 public:
  /// How often execute() reruns a transaction that failed with a retryable error (deadlock,
  /// serialization failure, lock timeout) before it counts as an error.
  static constexpr int kMaxRetries = 100;

  /// Connects and prepares the statements or procedure calls of `protocol` (throws
  /// BackendError / EnvironmentError). Every attempt is reported to `failures` (when set); when
  /// it says the bound is crossed, execute() ends with that reason as `fatal`.
  Session(Backend& backend, const StopSignal& stop, std::chrono::nanoseconds reconnect_timeout,
          TxProtocol protocol = TxProtocol::statements, FailureMeter* failures = nullptr);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// Runs `card` to its end with the one retry loop (tpcc_driver.hpp). `who` names the terminal
  /// or worker in error messages.
  ExecResult execute(const Card& card, std::string_view who);

 private:
  TxResult run_once(const Card& card, int& delivery_skipped);
  /// Drops the dead session and connects again until it works, the stop is requested
  /// (returns false, result.abandoned) or reconnect_timeout passes (returns false, result.fatal).
  bool reconnect(ExecResult& result, const DbStatus& lost, std::string_view who);
  void open();

  Backend& backend_;
  const StopSignal& stop_;
  std::chrono::nanoseconds reconnect_timeout_;
  TxProtocol protocol_;
  FailureMeter* failures_;
  std::unique_ptr<Connection> conn_;
  std::unique_ptr<Transactions> tx_;
};

}  // namespace drivelab::oltp::tpcc::detail
