#pragma once
// The counts and failure plumbing of an emulator's I/O threads (IssuerCounts, WorkerState): the io emulator's IoWorkers
// and the vdbench emulator's VdbenchJobs each record their first error (failed(), error()) and stop; the emulator's
// thread asks any_worker_failed() while it waits (core/phase.hpp's abort) and then throws the first worker's error,
// which ends the test as failed. A failed I/O is worded by io/storage_failure.hpp, timed by the worker's PhaseClock
// from the start of the phase it is in (the precondition and video kinds' IoPump uses the same clock).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/io/pump.hpp"
#include "drivelab/io/storage_failure.hpp"

namespace drivelab::emulators::detail {

/// The phase a worker's failed I/O is timed from. The emulator's thread calls start() as each
/// phase begins (warm-up, then the measured phase); the worker's thread words a failure with
/// failure(), seconds since that start (monotonic clock). Before any start() a failure reads
/// "0.00 s into the measured phase".
class PhaseClock {
 public:
  /// `phase` must outlive the clock (a string literal: "warm-up", "measured phase", "fill").
  void start(const char* phase, std::int64_t start_ns = monotonic_ns()) noexcept {
    phase_.store(phase, std::memory_order_relaxed);
    start_ns_.store(start_ns, std::memory_order_release);
  }
  /// io::storage_failure(io, seconds since start(), the phase's name).
  std::string failure(const io::FailedIo& io) const {
    const std::int64_t start = start_ns_.load(std::memory_order_acquire);
    const std::int64_t now = monotonic_ns();
    return io::storage_failure(io, seconds_between(start > 0 ? start : now, now),
                               phase_.load(std::memory_order_relaxed));
  }

 private:
  std::atomic<const char*> phase_{"measured phase"};
  std::atomic<std::int64_t> start_ns_{0};
};

/// What every thread that issues an emulator's I/O counts (the io kind's IoWorker, vdbench's
/// VdbenchJob, the precondition and video kinds' IoPump): I/Os issued and completed by it, and
/// the PhaseClock its failures are timed by (the emulator starts each phase).
class IssuerCounts {
 public:
  std::uint64_t issued() const noexcept { return issued_; }
  std::uint64_t completed() const noexcept { return completed_; }
  /// The clock a failed I/O is timed by; the emulator starts each phase.
  PhaseClock& phase_clock() noexcept { return phase_; }

 protected:
  PhaseClock phase_;
  std::uint64_t issued_ = 0;
  std::uint64_t completed_ = 0;
};

/// IssuerCounts of a worker thread that stops at its first failure and keeps it for the
/// emulator's thread (failed(), error(); any_worker_failed and throw_worker_error below): the
/// io kind's IoWorker and vdbench's VdbenchJob.
class WorkerState : public IssuerCounts {
 public:
  bool failed() const noexcept { return failed_.load(std::memory_order_relaxed); }
  /// The first error (device error, short transfer, engine failure); valid after the thread ended.
  const std::string& error() const noexcept { return error_; }

 protected:
  /// Keeps the first failure's message and asks the thread to stop issuing (later ones are dropped).
  void fail(std::string message) {
    if (failed_.exchange(true)) return;
    error_ = std::move(message);
    stop_.store(true, std::memory_order_relaxed);
  }
  /// Runs `pump` over `driver` on this thread until it ends: an exception of the engine (setup at
  /// submit, a broken contract) fails the worker as "engine NAME: what"; issued() and completed()
  /// take the pump's counts either way.
  template <class Driver>
  void run_pump(io::Pump& pump, Driver& driver) {
    try {
      pump.run(driver);
    } catch (const std::exception& e) {
      fail(fmt::format("engine {}: {}", pump.engine().name(), e.what()));
    }
    issued_ = pump.issued();
    completed_ = pump.completed();
  }

  std::atomic<bool> stop_{false};
  std::atomic<bool> failed_{false};
  std::string error_;
};

/// I/Os issued and completed by `workers` (a range of pointers to IssuerCounts) together: the
/// verify phase's "every issued I/O completed".
struct IssuedCompleted {
  std::uint64_t issued = 0;
  std::uint64_t completed = 0;
};
template <class Workers>
IssuedCompleted issued_and_completed(const Workers& workers) noexcept {
  IssuedCompleted n;
  for (const auto& w : workers) {
    n.issued += w->issued();
    n.completed += w->completed();
  }
  return n;
}

/// The two counts of an I/O emulator's measured phases that must agree: the ios of the measured
/// phase(s), and the sum of the ios of the intervals it reported (a lost or double-counted interval
/// shows as a difference).
struct MeasuredIos {
  std::uint64_t measured = 0;
  std::uint64_t interval_sum = 0;
  /// The verify check "interval counts add up to <what>", with both counts in its detail ("sum of
  /// interval ios N, <measured_name> M").
  template <class Recorder>
  void check(Recorder& rec, const std::string& what, std::string_view measured_name) const {
    rec.check("interval counts add up to " + what, interval_sum == measured,
              fmt::format("sum of interval ios {}, {} {}", interval_sum, measured_name, measured));
  }
};

/// Calls start(phase, start_ns) on the phase clock() of each of `workers`.
template <class Workers>
void start_phase(Workers& workers, const char* phase, std::int64_t start_ns) noexcept {
  for (auto& w : workers) w->phase_clock().start(phase, start_ns);
}

/// Whether any of `workers` (a range of pointers to objects with `bool failed() const`) failed.
template <class Workers>
bool any_worker_failed(const Workers& workers) noexcept {
  return std::any_of(workers.begin(), workers.end(), [](const auto& w) { return w->failed(); });
}

/// Throws EnvironmentError with the error() of the first failed worker (a storage error such as
/// EIO or ENOSPC: the machine could not do the I/O), or InternalError(`no_message`) if none of
/// them failed (a caller's bug: call it after any_worker_failed()).
template <class Workers>
[[noreturn]] void throw_worker_error(const Workers& workers, const char* no_message) {
  for (const auto& w : workers)
    if (w->failed()) throw EnvironmentError(w->error());
  throw InternalError(no_message);
}

}  // namespace drivelab::emulators::detail
