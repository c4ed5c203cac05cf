#pragma once
// The cancel watcher of the ODBC backend. ODBC calls are synchronous and portable asynchronous
// execution is not available (psqlODBC and MariaDB Connector/ODBC refuse SQL_ATTR_ASYNC_ENABLE),
// so a call waiting on the server (a row lock, a dead peer) cannot poll a flag itself. Instead one
// thread per backend looks at every connection's running call every kTick and calls SQLCancel on
// it from outside, which ODBC allows for a statement running on another thread
// (https://learn.microsoft.com/sql/odbc/reference/develop-app/canceling-functions-in-multithread-applications):
//   - when the connection's cancel flag is set (end of a run: the call gives up with `retryable`
//     within ~kTick + the driver's cancel time; measured here: psqlODBC sends a PostgreSQL cancel
//     request, ~10 ms; MariaDB Connector/ODBC runs KILL QUERY on a second connection, ~1 ms);
//   - when the call runs past its deadline (the query timeout plus a grace period: a backstop for
//     drivers that ignore SQL_ATTR_QUERY_TIMEOUT for lock waits, as MariaDB's does).
#include <sql.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace drivelab::oltp::odbc {

/// Why the watcher cancelled a call.
enum class CancelReason { none, stop_requested, deadline };

/// Cancels the running calls of many connections (see the file comment). Thread-safe.
class CancelWatcher {
 public:
  static constexpr std::chrono::milliseconds kTick{50};

  /// What the watcher knows about one connection.
  struct Slot {
    std::atomic<const std::atomic<bool>*> cancel_flag{nullptr};
    std::atomic<bool> busy{false};  ///< a call is running (cheap pre-check for the watcher)
    std::mutex mu;                  ///< guards the fields below and every SQLCancel of this slot
    SQLHSTMT stmt = nullptr;        ///< the running call's statement
    std::int64_t deadline_ns = 0;   ///< monotonic; 0 = none
    CancelReason cancelled = CancelReason::none;
  };

  CancelWatcher() = default;
  ~CancelWatcher();  ///< stops and joins the thread
  CancelWatcher(const CancelWatcher&) = delete;
  CancelWatcher& operator=(const CancelWatcher&) = delete;

  /// A slot for a new connection; starts the thread on first use.
  std::shared_ptr<Slot> add();
  void remove(const std::shared_ptr<Slot>& slot);

 private:
  void run();
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::vector<std::shared_ptr<Slot>> slots_;
  std::thread thread_;
};

/// Marks a call as running on `slot` for its lifetime: construct right before the ODBC call,
/// finish() right after it. finish() waits for an SQLCancel of this call that is in progress, so
/// the statement is never cancelled after it returned (the next call cannot start before).
class RunningCall {
 public:
  /// `deadline_ns`: monotonic time after which the watcher cancels the call; 0 = none.
  RunningCall(CancelWatcher::Slot& slot, SQLHSTMT stmt, std::int64_t deadline_ns);
  ~RunningCall() { finish(); }
  RunningCall(const RunningCall&) = delete;
  RunningCall& operator=(const RunningCall&) = delete;
  /// Ends the call; tells whether (and why) the watcher cancelled it.
  CancelReason finish() noexcept;

 private:
  CancelWatcher::Slot& slot_;
  bool done_ = false;
  CancelReason reason_ = CancelReason::none;
};

}  // namespace drivelab::oltp::odbc
