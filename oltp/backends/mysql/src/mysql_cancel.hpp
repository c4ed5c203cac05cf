#pragma once
// The call watcher of the MySQL/MariaDB backend: the cancel flag (Connection::set_cancel_flag)
// and the bound on a call to a server that stopped answering.
//
// Cancel. A call blocked in the server (a row-lock wait: up to innodb_lock_wait_timeout, 50 s by
// default) cannot be abandoned from the client side with Connector/C++ 1.1 (no asynchronous API,
// no way to close a socket under a running call). So one watcher thread per Backend polls every
// 20 ms and, for each session whose cancel flag is set and whose current interruptible call has
// run for 20 ms or more, sends `KILL QUERY <connection id>` on a side connection of its own. The
// server ends the statement with error 1317 (query interrupted), which the backend returns as
// `retryable`: a stop request is honoured within ~50 ms plus the server's reaction, without
// shortening lock waits during the run (the alternative — innodb_lock_wait_timeout=1 and
// re-polling — changes the server's behaviour for the whole run and reacts only within a second).
//
// An unresponsive server. Sessions of a run (Backend::connect()) set no client read timeout:
// libmariadb then waits for each reply with poll(-1), as sysbench's sessions do, instead of
// arming and cancelling a kernel timer around every wait (measured: ~4% of the client's CPU per
// sysbench transaction; docs/oltp-sysbench.md). A server that dies closes its sockets and is seen
// at once; a server that is alive but frozen (SIGSTOP, a hung host, a partition without a TCP
// reset) is bounded here instead: a call that has run for `unresponsive_after` since its session
// was asked to stop (or for `deadline` without a stop request, the read timeout sessions used to
// have) makes the watcher ask the server, on its side connection (5 s connect, 10 s read
// timeouts), to end it (KILL QUERY) or, for a call that must not be interrupted (COMMIT), whether
// it answers at all (SELECT 1). When the server does not answer, every socket of this process
// connected to the server's endpoint is shut down (shutdown(2)): each blocked call fails at once
// with a lost connection (2013), which the backend reports as connection_lost (in doubt during
// COMMIT) — as if the server had died, which for the run it has.
//
// Races: a session marks each call begin/end under its slot's mutex, and the watcher holds that
// mutex while a KILL is sent, so the KILL reaches either the call it was meant for or the idle
// session (MariaDB and MySQL reset a pending KILL QUERY when the next command starts: checked in
// the tests). COMMIT is never killed: a commit does not wait on row locks, and an interrupted
// commit would be in doubt.
//
// The watcher thread starts with the first session. Its side connection is opened on first use
// and reopened after an error.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "mysql_common.hpp"

namespace drivelab::oltp::mysql {

/// The state of one session as the watcher sees it.
struct CallSlot {
  std::mutex mu;
  std::uint64_t connection_id = 0;  ///< server thread id (CONNECTION_ID())
  /// The session's cancel flag; cleared under `mu` when the session closes (release()).
  std::atomic<const std::atomic<bool>*> cancel{nullptr};

  /// Called by the closing session: the watcher no longer reads its flag after this returns.
  void release() noexcept {
    std::lock_guard lock(mu);
    cancel.store(nullptr, std::memory_order_relaxed);
  }
  /// Start (monotonic ns) of the current call, 0 when idle. Written under `mu`; the watcher
  /// reads it without the lock first, to skip idle sessions cheaply.
  std::atomic<std::int64_t> busy_since_ns{0};
  bool killable = false;           ///< the current call may be ended by KILL QUERY (under `mu`)
  bool kill_sent = false;          ///< a KILL QUERY was sent for the current call (under `mu`)
  std::int64_t checked_at_ns = 0;  ///< last time the watcher asked the server about this call
};

/// RAII marker of one call of a session. `killable`: a statement that KILL QUERY may end when
/// the session's cancel flag is set (not COMMIT/ROLLBACK). Costs one uncontended mutex lock and
/// one clock read at each end.
class WatchedCall {
 public:
  WatchedCall(CallSlot* slot, bool killable) noexcept;
  ~WatchedCall();
  WatchedCall(const WatchedCall&) = delete;
  WatchedCall& operator=(const WatchedCall&) = delete;

 private:
  CallSlot* slot_ = nullptr;
};

/// How long a call may run before the watcher asks whether the server still answers.
struct WatchLimits {
  /// After the session's cancel flag was seen set (the stop of a run): a KILL QUERY ends any
  /// live statement within milliseconds, so a call still running this long after it is stuck.
  std::int64_t unresponsive_after_ns = 10'000'000'000;
  /// Without a stop request: the read timeout (600 s) sessions had before.
  std::int64_t deadline_ns = 600'000'000'000;
};

/// The watcher of one Backend.
class CancelWatcher {
 public:
  /// `side_params`: where the server is and as whom (its timeouts are replaced by short ones).
  explicit CancelWatcher(ConnectParams side_params, WatchLimits limits = {});
  ~CancelWatcher();  ///< stops and joins the thread
  CancelWatcher(const CancelWatcher&) = delete;
  CancelWatcher& operator=(const CancelWatcher&) = delete;

  /// Adds a session and starts the thread if not running; the slot is dropped once only the
  /// watcher holds it.
  void add(std::shared_ptr<CallSlot> slot);
  /// KILL QUERY statements sent so far (for tests and the record).
  std::uint64_t kills_sent() const noexcept { return kills_.load(std::memory_order_relaxed); }
  /// Sockets shut down because the server did not answer (for tests and the record).
  std::uint64_t sockets_shut_down() const noexcept { return shut_down_.load(std::memory_order_relaxed); }

 private:
  /// Starts the thread if not running. Never throws (a watcher that cannot start leaves lock
  /// waits to end by innodb_lock_wait_timeout and a frozen server to the write timeout).
  void start() noexcept;
  void run();
  void tick(std::unique_ptr<sql::Connection>& side);
  /// Runs `sql` on the side connection; false if the server did not answer (the connection is
  /// dropped then, to be reopened on next use).
  bool ask(std::unique_ptr<sql::Connection>& side, const std::string& sql) noexcept;

  ConnectParams params_;
  WatchLimits limits_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool started_ = false;
  std::vector<std::shared_ptr<CallSlot>> slots_;
  std::atomic<std::uint64_t> kills_{0};
  std::atomic<std::uint64_t> shut_down_{0};
  std::thread thread_;
};

/// Shuts down (shutdown(2), both directions) every socket of this process whose peer is the
/// server at `e`: the Unix socket file (same path, or the same file), or for TCP the port at one
/// of the addresses `e.host` resolves to. Returns how many. Blocked reads on them return at once.
std::size_t shut_down_sockets_to(const Endpoint& e) noexcept;

}  // namespace drivelab::oltp::mysql
