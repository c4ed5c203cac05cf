#pragma once
/// \file stop.hpp
/// Cooperative stop requests. SIGINT/SIGTERM/SIGHUP handlers call request() (async-signal-safe: one
/// relaxed atomic store); every emulator loop polls requested() or sleeps through sleep_until(),
/// which wakes within kWaitPollNs (10 ms, core/phase.hpp's poll rule) of a request. A second
/// SIGINT restores the default action, so a hung run can still be killed.
#include <atomic>
#include <cstdint>

namespace drivelab::runner {

class StopFlag {
 public:
  /// The process-wide flag that the signal handlers set.
  static StopFlag& global() noexcept;

  void request() noexcept { requested_.store(true, std::memory_order_relaxed); }
  bool requested() const noexcept { return requested_.load(std::memory_order_relaxed); }
  void reset() noexcept { requested_.store(false, std::memory_order_relaxed); }
  /// Sleeps until the monotonic deadline (ns): drivelab::wait_until (core/phase.hpp) with this
  /// flag as its abort. Returns true if the deadline was reached, false if a stop was requested
  /// first.
  bool sleep_until(std::int64_t deadline_ns) const noexcept;

  /// Installs SIGINT/SIGTERM/SIGHUP handlers that request a stop on global().
  static void install_signal_handlers();

 private:
  std::atomic<bool> requested_{false};
};

}  // namespace drivelab::runner
