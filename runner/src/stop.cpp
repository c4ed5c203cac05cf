#include "drivelab/runner/stop.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>

#include "drivelab/core/errors.hpp"
#include "drivelab/core/phase.hpp"

namespace drivelab::runner {
namespace {

std::atomic<int> g_signals_seen{0};  // lock-free, so safe in a signal handler

extern "C" void on_stop_signal(int signo) {
  StopFlag::global().request();
  if (g_signals_seen.fetch_add(1, std::memory_order_relaxed) >= 1) {
    // Second Ctrl-C: give the user their terminal back even if something hangs (a call blocked
    // on a server that stopped answering, say). The signal is blocked while its handler runs,
    // so the raise() is delivered with the default action (terminate) as soon as we return.
    std::signal(signo, SIG_DFL);
    std::raise(signo);
  }
}

}  // namespace

StopFlag& StopFlag::global() noexcept {
  static StopFlag flag;
  return flag;
}

bool StopFlag::sleep_until(std::int64_t deadline_ns) const noexcept {
  return wait_until(deadline_ns, [this] { return requested(); });
}

void StopFlag::install_signal_handlers() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: blocking calls return EINTR so loops notice the stop
  // SIGHUP too: a dropped ssh session must end the run as Ctrl-C does (a valid record marked
  // interrupted), not with the default action (killed, the record left "running").
  for (int signo : {SIGINT, SIGTERM, SIGHUP})
    if (sigaction(signo, &sa, nullptr) != 0) throw_errno("sigaction", errno);
}

}  // namespace drivelab::runner
