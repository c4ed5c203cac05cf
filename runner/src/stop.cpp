#include "drivelab/runner/stop.hpp"

#include <semaphore.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <iostream>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/core/phase.hpp"
#include "drivelab/core/process.hpp"
#include "drivelab/results/journal.hpp"
#include "drivelab/results/validate.hpp"

namespace drivelab::runner {
namespace {

namespace fs = std::filesystem;

std::atomic<int> g_signals_seen{0};  // lock-free, so safe in a signal handler
sem_t g_watchdog_sem;                // posted by the second and every later signal (sem_post is async-signal-safe)

/// write(2) of a literal: the only output a signal handler may make.
template <std::size_t N>
void say_from_handler(const char (&text)[N]) noexcept {
  const ssize_t ignored = ::write(STDERR_FILENO, text, N - 1);
  (void)ignored;
}

extern "C" void on_stop_signal(int signo) {
  const int saved_errno = errno;
  const int n = g_signals_seen.fetch_add(1, std::memory_order_relaxed) + 1;
  if (n == 1) {
    StopFlag::global().request(signo);
  } else {
    StopFlag::global().hurry();
    if (n == 2) {
      stop_guarded_processes_fast();
      say_from_handler(
          "\ndrivelab: second signal: managed servers stopped at once, verify skipped; the record is "
          "finalised as interrupted (a third signal ends the run at once)\n");
    } else if (n == 3) {
      say_from_handler("\ndrivelab: third signal: ending the run now (the record is rebuilt from the journal)\n");
    }
    sem_post(&g_watchdog_sem);
  }
  errno = saved_errno;
}

/// Waits for the second signal, then for the third or kHurryBound, whichever comes first, and
/// runs the last resort.
void watchdog() {
  while (sem_wait(&g_watchdog_sem) != 0) {
  }
  timespec deadline{};
  ::clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += kHurryBound.count();
  bool third = false;
  for (;;) {
    if (sem_timedwait(&g_watchdog_sem, &deadline) == 0) {
      third = true;
      break;
    }
    if (errno != EINTR) break;  // ETIMEDOUT
  }
  LastResort::run_now(third ? "a third signal came" : "the run did not end within 10 s of the second signal");
}

std::mutex g_last_resort_mu;                // held by run_now for good, and by LastResort's life changes
const LastResort* g_last_resort = nullptr;  // g_last_resort_mu

}  // namespace

StopFlag& StopFlag::global() noexcept {
  static StopFlag flag;
  return flag;
}

void StopFlag::reset() noexcept {
  requested_.store(false, std::memory_order_relaxed);
  hurried_.store(false, std::memory_order_relaxed);
  signal_.store(0, std::memory_order_relaxed);
  if (this == &global()) g_signals_seen.store(0, std::memory_order_relaxed);
}

std::string StopFlag::signal_name() const {
  const int signo = signal();
  if (signo == 0) return "signal";
  if (const char* abbrev = ::sigabbrev_np(signo)) return fmt::format("SIG{}", abbrev);
  return fmt::format("signal {}", signo);
}

bool StopFlag::sleep_until(std::int64_t deadline_ns) const noexcept {
  return wait_until(deadline_ns, [this] { return requested(); });
}

void StopFlag::install_signal_handlers() {
  static std::once_flag started;
  std::call_once(started, [] {
    if (sem_init(&g_watchdog_sem, 0, 0) != 0) throw_errno("sem_init", errno);
    std::thread(watchdog).detach();
  });
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  // Each handler blocks the other two while it runs: g_signals_seen counts them one at a time.
  for (int signo : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&sa.sa_mask, signo);
  sa.sa_flags = 0;  // no SA_RESTART: blocking calls return EINTR so loops notice the stop
  // SIGHUP too: a dropped ssh session must end the run as Ctrl-C does (a valid record marked
  // interrupted), not with the default action (killed, the record left "running").
  for (int signo : {SIGINT, SIGTERM, SIGHUP})
    if (sigaction(signo, &sa, nullptr) != 0) throw_errno("sigaction", errno);
}

LastResort::LastResort(fs::path journal, fs::path record, std::vector<fs::path> remove)
    : journal_(std::move(journal)), record_(std::move(record)), remove_(std::move(remove)) {
  std::lock_guard lock(g_last_resort_mu);
  g_last_resort = this;
}

LastResort::~LastResort() {
  std::lock_guard lock(g_last_resort_mu);
  if (g_last_resort == this) g_last_resort = nullptr;
}

void LastResort::run_now(const char* why) noexcept {
  g_last_resort_mu.lock();  // never released: the process exits below
  try {
    kill_guarded_processes(std::chrono::seconds(2));
    if (const LastResort* lr = g_last_resort) {
      std::string how;
      try {
        results::RunRecord r = results::recover_from_journal(lr->journal_);
        r.status = results::Status::interrupted;
        r.reason = fmt::format(
            "stopped by {} and {}: managed servers killed, the record rebuilt from the journal; finished "
            "intervals are kept",
            StopFlag::global().signal_name(), why);
        r.finished_at = utc_timestamp();
        results::write_record(lr->record_, r);
        results::keep_copy_for_validation(lr->record_);
        results::keep_copy_for_validation(lr->journal_);
        how = fmt::format("record {} written as interrupted", lr->record_.string());
      } catch (const std::exception& e) {
        how = fmt::format("the record could not be rebuilt ({}); drivelab results recover {} makes it", e.what(),
                          lr->journal_.string());
      }
      for (const fs::path& p : lr->remove_) {
        std::error_code ec;
        fs::remove(p, ec);
      }
      std::cerr << fmt::format("drivelab: {}: {}\n", why, how) << std::flush;
    }
  } catch (...) {  // NOLINT(bugprone-empty-catch): exiting on a signal: _exit below either way
  }
  ::_exit(130);
}

}  // namespace drivelab::runner
