#pragma once
// IntervalCloser: the trace replayer's interval closing, off the replaying thread (replay.cpp's
// opening comment: nothing slow runs between issues). Internal to vdi/.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>

#include "drivelab/vdi/replay.hpp"

namespace drivelab::vdi::detail {

/// Closes intervals off the replaying thread: hand() swaps the finished sample for a cleared one
/// (O(1): the histograms' buffers change owner) and a worker runs on_interval on it, merges it into
/// the total and clears it. One sample in flight: hand() waits only if the worker is still busy
/// with the previous interval (a whole interval later, it never is in practice).
class IntervalCloser {
 public:
  IntervalCloser(ReplaySample& total, const Replayer::IntervalCallback& on_interval)
      : total_(total), on_interval_(on_interval), worker_([this] { loop(); }) {}
  ~IntervalCloser() { finish(); }
  IntervalCloser(const IntervalCloser&) = delete;
  IntervalCloser& operator=(const IntervalCloser&) = delete;

  /// Takes `sample` (left cleared) as the interval that ended at now_ns.
  void hand(ReplaySample& sample, std::int64_t now_ns) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !has_work_; });
    std::swap(sample, pending_);
    now_ns_ = now_ns;
    has_work_ = true;
    lock.unlock();
    cv_.notify_all();
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
  void loop() {
    std::unique_lock lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return has_work_ || done_; });
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
  std::mutex mu_;
  std::condition_variable cv_;
  ReplaySample pending_;
  std::int64_t now_ns_ = 0;
  bool has_work_ = false;
  bool done_ = false;
  std::atomic<bool> stop_{false};
  std::exception_ptr error_;  // written by the worker, read after finish()
  std::thread worker_;  // last: starts after everything above exists
};

}  // namespace drivelab::vdi::detail
