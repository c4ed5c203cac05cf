#pragma once
// The cancel flag of the MySQL/MariaDB backend (Connection::set_cancel_flag).
//
// A call blocked in the server (a row-lock wait: up to innodb_lock_wait_timeout, 50 s by default)
// cannot be abandoned from the client side with Connector/C++ 1.1 (no asynchronous API, no way
// to close a socket under a running call). So one watcher thread per Backend polls every 20 ms
// and, for each session whose cancel flag is set and whose current call has run for 20 ms or
// more, sends `KILL QUERY <connection id>` on a side connection of its own. The server ends the
// statement with error 1317 (query interrupted), which the backend returns as `retryable`: a stop
// request is honoured within ~50 ms plus the server's reaction, without shortening lock waits
// during the run (the alternative — innodb_lock_wait_timeout=1 and re-polling — changes the
// server's behaviour for the whole run and reacts only within a second).
//
// Races: a session marks each call begin/end under its slot's mutex, and the watcher holds that
// mutex while the KILL is sent, so the KILL reaches either the call it was meant for or the idle
// session (MariaDB and MySQL reset a pending KILL QUERY when the next command starts: checked in
// the tests). COMMIT is never interrupted: a commit does not wait on row locks, and an
// interrupted commit would be in doubt.
//
// The watcher starts with the first set_cancel_flag(non-null); sessions that never get a flag
// cost nothing. Its side connection is opened on first use and reopened after an error.
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
  std::uint64_t connection_id = 0;                   ///< server thread id (CONNECTION_ID())
  /// The session's cancel flag; cleared under `mu` when the session closes (release()).
  std::atomic<const std::atomic<bool>*> cancel{nullptr};

  /// Called by the closing session: the watcher no longer reads its flag after this returns.
  void release() noexcept {
    std::lock_guard lock(mu);
    cancel.store(nullptr, std::memory_order_relaxed);
  }
  bool busy = false;                                 ///< inside a call that may be interrupted
  std::int64_t busy_since_ns = 0;
  bool kill_sent = false;
};

/// RAII marker of one interruptible call: cheap no-op when the session has no cancel flag.
class InterruptibleCall {
 public:
  explicit InterruptibleCall(CallSlot* slot) noexcept;
  ~InterruptibleCall();
  InterruptibleCall(const InterruptibleCall&) = delete;
  InterruptibleCall& operator=(const InterruptibleCall&) = delete;

 private:
  CallSlot* slot_ = nullptr;
};

/// The watcher of one Backend.
class CancelWatcher {
 public:
  explicit CancelWatcher(ConnectParams side_params);
  ~CancelWatcher();  ///< stops and joins the thread
  CancelWatcher(const CancelWatcher&) = delete;
  CancelWatcher& operator=(const CancelWatcher&) = delete;

  /// Adds a session; the slot is dropped once only the watcher holds it.
  void add(std::shared_ptr<CallSlot> slot);
  /// Starts the thread if not running. Never throws (a watcher that cannot start leaves lock
  /// waits to end by innodb_lock_wait_timeout).
  void start() noexcept;
  /// KILL QUERY statements sent so far (for tests and the record).
  std::uint64_t kills_sent() const noexcept { return kills_.load(std::memory_order_relaxed); }

 private:
  void run();
  void tick(std::unique_ptr<sql::Connection>& side);

  ConnectParams params_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool started_ = false;
  std::vector<std::shared_ptr<CallSlot>> slots_;
  std::atomic<std::uint64_t> kills_{0};
  std::thread thread_;
};

}  // namespace drivelab::oltp::mysql
