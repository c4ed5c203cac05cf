#pragma once
// IntervalCloser: the trace replayer's interval closing, off the replaying thread (replay.cpp's
// opening comment: nothing slow runs between issues). Internal to vdi/.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>

#include "drivelab/core/clock.hpp"

#include "drivelab/vdi/replay.hpp"

namespace drivelab::vdi::detail {

/// Closes intervals off the replaying thread: the replaying thread's close_if_due() swaps the
/// finished sample for a cleared one (O(1): the histograms' buffers change owner) and a worker runs
/// on_interval on it, merges it into the total and clears it. One sample in flight: the swap waits
/// only if the worker is still busy with the previous interval (a whole interval later, it never
/// is in practice).
///
/// While the replaying thread is inside a blocking call (a reap that waits, psync I/O, fdatasync,
/// a hole punch: between block() and unblock()) the worker closes the intervals that come due
/// itself, so interval lines keep coming while the drive stalls (issue 29: they stopped until the
/// call returned). The sample has one owner at a time, by `state_`: the replaying thread while
/// running; while it is blocked, the worker may take it for the swap (a few stores) and gives it
/// back; unblock() waits out such a swap. Nothing is locked per I/O.
class IntervalCloser {
 public:
  /// `live` is the replaying thread's interval sample; intervals end every interval_ns from first_ns.
  IntervalCloser(ReplaySample& total, const Replayer::IntervalCallback& on_interval, ReplaySample& live,
                 std::int64_t first_ns, std::int64_t interval_ns)
      : total_(total),
        on_interval_(on_interval),
        live_(live),
        interval_ns_(std::max<std::int64_t>(interval_ns, 1)),
        next_due_(first_ns + interval_ns_),
        worker_([this] { loop(); }) {}
  ~IntervalCloser() { finish(); }
  IntervalCloser(const IntervalCloser&) = delete;
  IntervalCloser& operator=(const IntervalCloser&) = delete;

  /// On the replaying thread, running: when the interval has ended by now_ns, hands the live
  /// sample (left cleared) to the worker as the interval that ended at now_ns.
  void close_if_due(std::int64_t now_ns) {
    if (now_ns < next_due_.load(std::memory_order_relaxed)) return;
    hand(now_ns);
  }
  /// On the replaying thread: a call that may block follows; the worker may close intervals meanwhile.
  void block() noexcept { state_.store(kBlocked, std::memory_order_release); }
  /// On the replaying thread: the blocking call returned; it owns the live sample again.
  void unblock() noexcept {
    int expected = kBlocked;
    while (!state_.compare_exchange_weak(expected, kRunning, std::memory_order_acquire, std::memory_order_relaxed)) {
      expected = kBlocked;
      std::this_thread::yield();  // the worker is swapping the sample out: a few stores
    }
  }
  /// on_interval asked to stop (or threw).
  bool stop_requested() const noexcept { return stop_.load(std::memory_order_relaxed); }
  /// After finish(): rethrows what on_interval threw, if it did.
  void rethrow_if_failed() const {
    if (error_) std::rethrow_exception(error_);
  }
  /// Waits for the worker to finish what it has and ends it (idempotent).
  void finish() {
    {
      std::lock_guard lock(mu_);
      if (done_) return;
      done_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }

 private:
  enum : int { kRunning, kBlocked, kTaken };

  /// The live sample to the worker (the caller owns it: the replaying thread running, or the
  /// worker having taken it). Waits while the previous interval is still being closed.
  void hand(std::int64_t now_ns) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !has_work_; });
    swap_out(now_ns);
    lock.unlock();
    cv_.notify_all();
  }

  /// With mu_ held, the sample owned and no work pending: the live sample becomes the pending
  /// interval that ended at now_ns, and the next end is the first after now_ns.
  void swap_out(std::int64_t now_ns) {
    std::swap(live_, pending_);
    now_ns_ = now_ns;
    has_work_ = true;
    std::int64_t due = next_due_.load(std::memory_order_relaxed);
    while (due <= now_ns) due += interval_ns_;
    next_due_.store(due, std::memory_order_relaxed);
  }

  /// The worker, with mu_ held, at an interval's end: if the replaying thread is blocked, takes the
  /// live sample, swaps it out and gives it back.
  void close_for_blocked() {
    int expected = kBlocked;
    if (!state_.compare_exchange_strong(expected, kTaken, std::memory_order_acquire, std::memory_order_relaxed)) return;
    const std::int64_t now = monotonic_ns();
    if (now >= next_due_.load(std::memory_order_relaxed)) swap_out(now);  // mu_ is held, the worker idle
    state_.store(kBlocked, std::memory_order_release);
  }

  void loop() {
    std::unique_lock lock(mu_);
    for (;;) {
      if (!has_work_ && !done_) {
        // Until the next interval's end (a millisecond on when the replaying thread, running, has
        // not closed it yet); then close it if that thread is blocked.
        const std::int64_t now = monotonic_ns();
        const std::int64_t due = std::max(next_due_.load(std::memory_order_relaxed), now + (retry_ ? 1'000'000 : 0));
        const bool woken = cv_.wait_for(lock, std::chrono::nanoseconds(due - now), [&] { return has_work_ || done_; });
        if (!woken) {
          close_for_blocked();
          retry_ = !has_work_;
          continue;
        }
      }
      retry_ = false;
      if (!has_work_) return;
      lock.unlock();
      bool go_on = true;
      try {
        if (on_interval_) go_on = on_interval_(pending_, now_ns_);
      } catch (...) {
        // E.g. the recorder's journal failed: stop the replay, rethrow on the replaying thread.
        go_on = false;
        if (!error_) error_ = std::current_exception();
      }
      total_.merge(pending_);
      pending_.clear();
      if (!go_on) stop_.store(true, std::memory_order_relaxed);
      lock.lock();
      has_work_ = false;
      cv_.notify_all();
    }
  }

  ReplaySample& total_;
  const Replayer::IntervalCallback& on_interval_;
  ReplaySample& live_;
  const std::int64_t interval_ns_;
  std::atomic<std::int64_t> next_due_;  // written by the sample's owner; read by the worker to time its wait
  std::atomic<int> state_{kRunning};
  std::mutex mu_;
  std::condition_variable cv_;
  ReplaySample pending_;
  std::int64_t now_ns_ = 0;
  bool has_work_ = false;
  bool done_ = false;
  bool retry_ = false;  // the worker's: its last wake-up found the replaying thread running
  std::atomic<bool> stop_{false};
  std::exception_ptr error_;  // written by the worker, read after finish()
  std::thread worker_;        // last: starts after everything above exists
};

/// A blocking call on the replaying thread: IntervalCloser::block() until the end of the scope.
class BlockedSection {
 public:
  explicit BlockedSection(IntervalCloser& closer) noexcept : closer_(closer) { closer_.block(); }
  ~BlockedSection() { closer_.unblock(); }
  BlockedSection(const BlockedSection&) = delete;
  BlockedSection& operator=(const BlockedSection&) = delete;

 private:
  IntervalCloser& closer_;
};

}  // namespace drivelab::vdi::detail
