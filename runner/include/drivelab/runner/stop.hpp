#pragma once
/// \file stop.hpp
/// Cooperative stop requests, and what each signal does (docs/architecture.md, "Signals").
///
/// SIGINT, SIGTERM and SIGHUP count alike:
///  - the first requests a graceful stop (request(): async-signal-safe, one relaxed atomic store);
///    every emulator loop polls requested() or sleeps through sleep_until(), which wakes within
///    kWaitPollNs (10 ms, core/phase.hpp's poll rule) of a request; verify and cleanup still run;
///  - the second hurries it (hurried()): the handler sends every managed server its fast stop
///    (core/process.hpp: stop_guarded_processes_fast: a postmaster SIGQUIT, mariadbd SIGKILL),
///    verify is skipped, and the run ends as usual with its record `interrupted`. If it has not
///    ended kHurryBound after the second signal, the last resort below ends it;
///  - the third runs the last resort at once: managed servers SIGKILLed (waited for up to 2 s),
///    the record rebuilt from the journal as `interrupted` (LastResort), the results reserve and
///    the run lock removed, exit status 130.
/// Only SIGKILL skips stopping the managed servers and finalising the record; even then the
/// servers die with drivelab (guard_process) and the next run removes what was left, saying so.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace drivelab::runner {

/// How long the run may take to end by itself after the second signal before the last resort.
inline constexpr std::chrono::seconds kHurryBound{10};

class StopFlag {
 public:
  /// The process-wide flag that the signal handlers set.
  static StopFlag& global() noexcept;

  /// Asks for a stop. `signo`: the signal that asked (SIGINT, SIGTERM, SIGHUP), 0 when none did;
  /// the first signal is kept (signal()), later ones do not replace it.
  void request(int signo = 0) noexcept {
    int none = 0;
    if (signo != 0) signal_.compare_exchange_strong(none, signo, std::memory_order_relaxed);
    requested_.store(true, std::memory_order_relaxed);
  }
  bool requested() const noexcept { return requested_.load(std::memory_order_relaxed); }
  /// The signal of the first request that came from one, 0 if none did.
  int signal() const noexcept { return signal_.load(std::memory_order_relaxed); }
  /// What a record's reason says stopped it: "SIGINT", "SIGTERM", "SIGHUP" (the signal's name,
  /// sigabbrev_np), "signal N" for another, "signal" when the stop named none.
  std::string signal_name() const;
  /// A second signal came: stop at once, skip what can be skipped (verify).
  void hurry() noexcept {
    hurried_.store(true, std::memory_order_relaxed);
    request();
  }
  bool hurried() const noexcept { return hurried_.load(std::memory_order_relaxed); }
  /// Clears the flag (and, for global(), the count of signals seen): tests that send signals.
  void reset() noexcept;
  /// Sleeps until the monotonic deadline (ns): drivelab::wait_until (core/phase.hpp) with this
  /// flag as its abort. Returns true if the deadline was reached, false if a stop was requested
  /// first.
  bool sleep_until(std::int64_t deadline_ns) const noexcept;

  /// Installs SIGINT/SIGTERM/SIGHUP handlers on global() (the file comment says what each signal
  /// does) and starts the watchdog thread that runs the last resort.
  static void install_signal_handlers();

 private:
  std::atomic<bool> requested_{false};
  std::atomic<bool> hurried_{false};
  std::atomic<int> signal_{0};
};

/// What the last resort leaves behind for a run that did not end by itself: while an object of
/// this type lives (run_protocol holds one for the run), a third signal, or kHurryBound after the
/// second, rebuilds `record` from `journal` (results::recover_from_journal) with the run and its
/// unfinished test `interrupted`, removes the files in `remove` (the results reserve, the run
/// lock) and exits with status 130. One at a time; the destructor waits for a last resort under
/// way (which then exits the process).
class LastResort {
 public:
  LastResort(std::filesystem::path journal, std::filesystem::path record, std::vector<std::filesystem::path> remove);
  ~LastResort();
  LastResort(const LastResort&) = delete;
  LastResort& operator=(const LastResort&) = delete;

  /// Kills the managed servers, writes the record, removes the files and _exit(130)s. Called by
  /// the watchdog; public for the tests.
  [[noreturn]] static void run_now(const char* why) noexcept;

 private:
  std::filesystem::path journal_;
  std::filesystem::path record_;
  std::vector<std::filesystem::path> remove_;
};

}  // namespace drivelab::runner
