// The guardian of managed server processes (process.hpp: guard_process). The guardian is a fork
// of a multi-threaded process that never calls exec: it may only use async-signal-safe calls
// (signal-safety(7)), so it allocates nothing and reads /proc with open/read.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/core/process.hpp"

namespace drivelab {
namespace {

/// One registration or removal, sent as one SOCK_SEQPACKET message.
struct Message {
  int op = 0;  ///< 1 register, 2 forget, 3 register a pid file, 4 forget a pid file
  pid_t pid = 0;
  int fast_signal = 0;
  int grace_ms = 0;
  char comm[16] = {};                          ///< /proc/<pid>/stat's comm (at most 15 bytes), NUL-terminated
  char pid_file[kMaxGuardedPidFilePath] = {};  ///< ops 3 and 4, NUL-terminated
};

/// How long the guardian waits, after drivelab ended, for a registered pid file to name a
/// running server: a server that pg_ctl was still starting writes it within its first second.
constexpr std::int64_t kPidFileWaitMs = 15'000;

struct Slot {
  std::atomic<pid_t> pid{0};
  std::atomic<int> fast_signal{0};
};

Slot g_slots[kMaxGuardedProcesses];
std::mutex g_mu;    // the socket and the guardian's start
int g_socket = -1;  // drivelab's end of the socketpair (g_mu)
std::atomic<pid_t> g_guardian{-1};
bool g_start_failed = false;  // said once (g_mu)

// ---- the guardian (async-signal-safe calls only) ---------------------------------------------

/// True while `pid` runs a program whose command name is `comm` (not a zombie).
bool same_program(pid_t pid, const char* comm) noexcept {
  char path[40];
  // "/proc/<pid>/stat" without snprintf (not async-signal-safe).
  char digits[16];
  int n = 0;
  for (unsigned v = static_cast<unsigned>(pid); n == 0 || v != 0; v /= 10)
    digits[n++] = static_cast<char>('0' + v % 10);
  std::memcpy(path, "/proc/", 6);  // NOLINT(bugprone-not-null-terminated-result): "/stat" below ends it
  int len = 6;
  while (n > 0) path[len++] = digits[--n];
  std::memcpy(path + len, "/stat", 6);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[512];
  const ssize_t got = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (got <= 0) return false;
  buf[got] = '\0';
  const char* open = std::strchr(buf, '(');
  const char* close = std::strrchr(buf, ')');
  if (open == nullptr || close == nullptr || close < open || close[1] == '\0' || close[2] == '\0') return false;
  const std::size_t clen = static_cast<std::size_t>(close - open - 1);
  if (clen != std::strlen(comm) || std::memcmp(open + 1, comm, clen) != 0) return false;
  return close[2] != 'Z' && close[2] != 'X';
}

std::int64_t now_ms() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

/// The pid on the first line of a pid file (postmaster.pid, mysqld.pid); 0 if none.
pid_t pid_in_file(const char* path) noexcept {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[32];
  const ssize_t got = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (got <= 0) return 0;
  long v = 0;
  for (ssize_t i = 0; i < got && buf[i] >= '0' && buf[i] <= '9'; ++i) v = v * 10 + (buf[i] - '0');
  return v > 0 && v < (1L << 30) ? static_cast<pid_t>(v) : 0;
}

void sleep_ms(long ms) noexcept {
  timespec ts{ms / 1000, (ms % 1000) * 1'000'000};
  while (::nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

[[noreturn]] void guardian_main(int fd) noexcept {
  ::setsid();  // out of drivelab's process group: a Ctrl-C or kill of the group does not reach it
  ::prctl(PR_SET_NAME, "drivelab-guard", 0, 0, 0);
  sigset_t all;
  sigfillset(&all);
  ::sigprocmask(SIG_SETMASK, &all, nullptr);
  // Nothing of drivelab's stays open here: not the run lock's or the reserve's flock, not a test
  // runner's pipes (it would wait for us).
  ::dup2(fd, 0);
  const int null = ::open("/dev/null", O_RDWR);
  if (null >= 0) {
    ::dup2(null, 1);
    ::dup2(null, 2);
  }
  if (::syscall(SYS_close_range, 3U, ~0U, 0U) != 0)
    for (int i = 3; i < 4096; ++i) ::close(i);

  struct Entry {
    pid_t pid = 0;  ///< -1: not known yet, read from pid_file
    int fast_signal = 0;
    int grace_ms = 0;
    char comm[16] = {};
    char pid_file[kMaxGuardedPidFilePath] = {};
  };
  Entry entries[kMaxGuardedProcesses];
  for (;;) {
    Message m;
    const ssize_t n = ::recv(0, &m, sizeof m, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // end-of-file: drivelab has ended
    if (n != static_cast<ssize_t>(sizeof m)) continue;
    m.comm[sizeof m.comm - 1] = '\0';
    m.pid_file[sizeof m.pid_file - 1] = '\0';
    if (m.op == 3) {
      for (Entry& e : entries)
        if (e.pid == 0) {
          e.pid = -1;
          e.fast_signal = m.fast_signal;
          e.grace_ms = m.grace_ms;
          std::memcpy(e.comm, m.comm, sizeof e.comm);
          std::memcpy(e.pid_file, m.pid_file, sizeof e.pid_file);
          break;
        }
    } else if (m.op == 4) {
      for (Entry& e : entries)
        if (e.pid == -1 && std::strcmp(e.pid_file, m.pid_file) == 0) e.pid = 0;
    } else if (m.op == 1) {
      for (Entry& e : entries)
        if (e.pid == 0 || e.pid == m.pid) {
          e.pid = m.pid;
          e.fast_signal = m.fast_signal;
          e.grace_ms = m.grace_ms;
          std::memcpy(e.comm, m.comm, sizeof e.comm);
          break;
        }
    } else if (m.op == 2) {
      for (Entry& e : entries)
        if (e.pid == m.pid) e.pid = 0;
    }
  }
  // Servers known only by their pid file (still starting when drivelab ended): wait for the file.
  const std::int64_t pid_file_deadline = now_ms() + kPidFileWaitMs;
  for (;;) {
    bool waiting = false;
    for (Entry& e : entries) {
      if (e.pid != -1) continue;
      const pid_t p = pid_in_file(e.pid_file);
      if (p > 0 && same_program(p, e.comm))
        e.pid = p;
      else
        waiting = true;
    }
    if (!waiting || now_ms() >= pid_file_deadline) break;
    sleep_ms(50);
  }
  std::int64_t deadline = now_ms();
  for (Entry& e : entries) {
    if (e.pid <= 0) continue;
    if (!same_program(e.pid, e.comm)) {
      e.pid = 0;
      continue;
    }
    ::kill(e.pid, e.fast_signal);
    if (now_ms() + e.grace_ms > deadline) deadline = now_ms() + e.grace_ms;
  }
  for (;;) {
    bool left = false;
    for (const Entry& e : entries) left = left || (e.pid > 0 && same_program(e.pid, e.comm));
    if (!left || now_ms() >= deadline) break;
    sleep_ms(20);
  }
  for (const Entry& e : entries)
    if (e.pid > 0 && same_program(e.pid, e.comm)) {
      ::kill(-e.pid, SIGKILL);
      ::kill(e.pid, SIGKILL);
    }
  ::_exit(0);
}

// ---- drivelab's side -------------------------------------------------------------------------

/// Starts the guardian if needed (g_mu held). False when it cannot run.
bool ensure_guardian() {
  if (g_socket >= 0) return true;
  if (g_start_failed) return false;
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    g_start_failed = true;
    std::cerr << "drivelab: warning: cannot start the guardian of managed servers (socketpair: " << errno_text(errno)
              << "): a server would outlive a killed drivelab\n"
              << std::flush;
    return false;
  }
  const pid_t pid = ::fork();
  if (pid == 0) guardian_main(sv[1]);
  ::close(sv[1]);
  if (pid < 0) {
    const int err = errno;
    ::close(sv[0]);
    g_start_failed = true;
    std::cerr << "drivelab: warning: cannot start the guardian of managed servers (fork: " << errno_text(err)
              << "): a server would outlive a killed drivelab\n"
              << std::flush;
    return false;
  }
  g_socket = sv[0];
  g_guardian.store(pid, std::memory_order_relaxed);
  return true;
}

void send_message(const Message& m) {
  while (::send(g_socket, &m, sizeof m, MSG_NOSIGNAL) < 0 && errno == EINTR) {
  }
}

}  // namespace

void guard_process(pid_t pid, const std::string& comm, int fast_signal, std::chrono::milliseconds grace) {
  if (pid <= 0) return;
  std::lock_guard lock(g_mu);
  Slot* free_slot = nullptr;
  for (Slot& s : g_slots) {
    const pid_t p = s.pid.load(std::memory_order_relaxed);
    if (p == pid || (p == 0 && free_slot == nullptr)) free_slot = &s;
    if (p == pid) break;
  }
  if (free_slot == nullptr) {
    std::cerr << fmt::format(
                     "drivelab: warning: more than {} managed server processes: {} (pid {}) would outlive "
                     "a killed drivelab\n",
                     kMaxGuardedProcesses, comm, pid)
              << std::flush;
    return;
  }
  free_slot->fast_signal.store(fast_signal, std::memory_order_relaxed);
  free_slot->pid.store(pid, std::memory_order_relaxed);
  if (!ensure_guardian()) return;
  Message m;
  m.op = 1;
  m.pid = pid;
  m.fast_signal = fast_signal;
  m.grace_ms = static_cast<int>(grace.count());
  std::strncpy(m.comm, comm.c_str(), sizeof m.comm - 1);
  send_message(m);
}

void guard_pid_file(const std::filesystem::path& pid_file, const std::string& comm, int fast_signal,
                    std::chrono::milliseconds grace) {
  const std::string path = pid_file.string();
  if (path.empty() || path.size() >= static_cast<std::size_t>(kMaxGuardedPidFilePath)) {
    std::cerr << fmt::format(
                     "drivelab: warning: {} is too long a path for the guardian: a server still starting "
                     "when drivelab is killed would outlive it\n",
                     path)
              << std::flush;
    return;
  }
  std::lock_guard lock(g_mu);
  if (!ensure_guardian()) return;
  Message m;
  m.op = 3;
  m.fast_signal = fast_signal;
  m.grace_ms = static_cast<int>(grace.count());
  std::strncpy(m.comm, comm.c_str(), sizeof m.comm - 1);
  std::memcpy(m.pid_file, path.c_str(), path.size() + 1);
  send_message(m);
}

void unguard_pid_file(const std::filesystem::path& pid_file) noexcept {
  const std::string path = pid_file.string();
  std::lock_guard lock(g_mu);
  if (g_socket < 0 || path.size() >= static_cast<std::size_t>(kMaxGuardedPidFilePath)) return;
  Message m;
  m.op = 4;
  std::memcpy(m.pid_file, path.c_str(), path.size() + 1);
  send_message(m);
}

void unguard_process(pid_t pid) noexcept {
  if (pid <= 0) return;
  std::lock_guard lock(g_mu);
  for (Slot& s : g_slots)
    if (s.pid.load(std::memory_order_relaxed) == pid) s.pid.store(0, std::memory_order_relaxed);
  if (g_socket < 0) return;
  Message m;
  m.op = 2;
  m.pid = pid;
  send_message(m);
}

void stop_guarded_processes_fast() noexcept {
  for (Slot& s : g_slots) {
    const pid_t p = s.pid.load(std::memory_order_relaxed);
    if (p > 0) ::kill(p, s.fast_signal.load(std::memory_order_relaxed));
  }
}

void kill_guarded_processes(std::chrono::milliseconds limit) noexcept {
  pid_t pids[kMaxGuardedProcesses] = {};
  for (int i = 0; i < kMaxGuardedProcesses; ++i) {
    pids[i] = g_slots[i].pid.load(std::memory_order_relaxed);
    if (pids[i] <= 0) continue;
    ::kill(-pids[i], SIGKILL);  // a postmaster leads its group (pg_ctl starts it with setsid)
    ::kill(pids[i], SIGKILL);
  }
  const std::int64_t deadline = now_ms() + limit.count();
  for (;;) {
    bool left = false;
    for (const pid_t p : pids) {
      if (p <= 0) continue;
      const auto s = process_state(p);
      left = left || (s && s->state != 'Z' && s->state != 'X');
    }
    if (!left || now_ms() >= deadline) return;
    sleep_ms(20);
  }
}

pid_t guardian_pid() noexcept { return g_guardian.load(std::memory_order_relaxed); }

}  // namespace drivelab
