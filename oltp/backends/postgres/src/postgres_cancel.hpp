#pragma once
// The call watcher of the PostgreSQL backend: the cancel flag (Connection::set_cancel_flag) of
// sessions that wait for the server with poll(-1).
//
// Why a thread. A session waits for each reply in pg::collect, in one poll() on its socket. A
// poll() with a timeout arms and cancels a kernel timer around every wait; sysbench's sessions
// (libpq's blocking PQexecPrepared) wait with poll(-1). Measured, back-to-back 30 s sysbench runs
// on fresh data: our client's CPU per transaction was 301 / 297 / 265 us with 100 ms poll slices
// and 269 / 252 / 254 us with poll(-1), the kernel's part falling by ~25 us (docs/oltp-sysbench.md,
// "Client CPU on PostgreSQL"). So sessions no longer wake up to look at their flag; one thread per
// Backend, started with the first session that has a cancel flag, looks at them every kTickNs:
//   - a call that has waited kCancelAfterNs while its session's flag is set gets a cancel request
//     (PQcancel: the server ends the statement with 57014, which the backend returns as
//     `retryable`) — a lock wait ends within ~kCancelAfterNs + kTickNs of the stop request;
//   - the same call still waiting kCancelGiveUpNs after its cancel request means the server no
//     longer answers: the watcher shuts the session's socket down (shutdown(2)), the session's
//     poll() returns at once and the call fails as `connection lost` ("no answer from the server
//     within 2 s of a cancel request; session abandoned"), as before this thread existed.
//
// The cancel requests are sent by a second thread, so that the watcher never waits for one:
// PQcancel connects to the server and waits until the server has read the request, which never
// happens when the whole server is frozen. That thread is detached (a backend being destroyed
// does not wait for a cancel request stuck in a frozen server), and owns, with the slot, the
// PGcancel it uses, made for the slot when the session registered.
//
// Races: a call is numbered, and the watcher acts only on the call it saw waiting. A cancel
// request that reaches the server after that call ended can end the session's next statement
// (57014, retryable): only while the flag is set, i.e. while the run stops.
#include <libpq-fe.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "drivelab/core/handle.hpp"

namespace drivelab::oltp::pg {

/// A waiting call and the cancel timing (ns): a cancel request after kCancelAfterNs with the flag
/// set; the session is abandoned when the server has not answered kCancelGiveUpNs later.
inline constexpr std::int64_t kCancelAfterNs = 100'000'000;
inline constexpr std::int64_t kCancelGiveUpNs = 2'000'000'000;

using CancelHandle = CHandle<PGcancel, PQfreeCancel>;

/// One session as the watcher sees it. The session owns the PGconn and its socket; release()
/// (under `mu`) tells the watcher the socket is gone. The slot owns the PGcancel its cancel
/// requests use (PQgetCancel of the session, made when it registered): a request in flight may
/// outlive the session.
struct CallSlot {
  std::mutex mu;
  /// The session's cancel flag; read by the watcher only while a call waits (busy_since_ns != 0).
  std::atomic<const std::atomic<bool>*> cancel{nullptr};
  /// Start (monotonic ns) of the current cancellable wait, 0 when none.
  std::atomic<std::int64_t> busy_since_ns{0};
  /// Number of the current (or last) cancellable call.
  std::atomic<std::uint64_t> call{0};
  /// Set by the watcher before it shuts the socket down: the session is abandoned.
  std::atomic<bool> abandoned{false};
  CancelHandle canceller;  ///< set before the slot is registered, then read only
  int socket = -1;         ///< under `mu`; -1 once released
  // The watcher's own (its thread only):
  std::uint64_t cancelled_call = 0;  ///< the call a cancel request was sent for
  std::int64_t cancel_sent_ns = 0;

  /// Called by the closing session: the watcher no longer touches its socket or its flag.
  void release() noexcept {
    std::lock_guard lock(mu);
    socket = -1;
    cancel.store(nullptr, std::memory_order_relaxed);
  }
};

/// Marks one cancellable wait of a session (pg::collect): two atomic stores and a clock read.
class WatchedCall {
 public:
  explicit WatchedCall(CallSlot* slot) noexcept;
  ~WatchedCall();
  WatchedCall(const WatchedCall&) = delete;
  WatchedCall& operator=(const WatchedCall&) = delete;

 private:
  CallSlot* slot_;
};

/// The watcher of one Backend (see the file comment). Thread-safe.
class CancelWatcher {
 public:
  static constexpr std::int64_t kTickNs = 50'000'000;

  CancelWatcher();
  ~CancelWatcher();  ///< stops and joins the watcher thread; the sender ends on its own
  CancelWatcher(const CancelWatcher&) = delete;
  CancelWatcher& operator=(const CancelWatcher&) = delete;

  /// Watches `slot` (its canceller set) from now on; starts the threads on first use. The slot is
  /// dropped once only the watcher holds it. Throws std::system_error when a thread cannot start.
  void add(std::shared_ptr<CallSlot> slot);

 private:
  /// The cancel requests to send, shared with the detached sender thread.
  struct Outbox {
    std::mutex mu;
    std::condition_variable cv;
    bool stop = false;
    std::deque<std::shared_ptr<CallSlot>> pending;
  };
  void run();
  void look_at(const std::shared_ptr<CallSlot>& s, std::int64_t now);

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::vector<std::shared_ptr<CallSlot>> slots_;
  std::shared_ptr<Outbox> outbox_;
  std::thread thread_;
};

}  // namespace drivelab::oltp::pg
