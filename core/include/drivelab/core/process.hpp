#pragma once
/// \file process.hpp
/// Child processes, in one place: find a program, start it (posix_spawn), wait for it with a
/// timeout, capture its output, stop it; and what /proc says about a process. Used by the managed
/// PostgreSQL and MariaDB servers (initdb, pg_ctl, mariadb-install-db, mariadbd) and by the
/// reporter's gnuplot.
///
/// Every child starts with stdin from /dev/null and none of the parent's descriptors above 2
/// (posix_spawn_file_actions_addclosefrom_np, glibc 2.34): an inherited client socket would keep
/// that session open on its server after the parent closed it, and an inherited pipe of a test
/// runner would make the runner wait for a server that outlives the test. Its stdout and stderr
/// go together to one place (ChildOutput). The environment is the parent's.
///
/// Waiting polls every 20 ms (waitpid WNOHANG, and poll(2) on the captured pipe, which it drains
/// meanwhile so a chatty child never blocks on a full pipe).
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace drivelab {

/// The absolute path of an executable `name`: `name` itself if it contains a '/', else the first
/// `<dir>/name` that access(X_OK) accepts, searching $PATH (or "/usr/bin:/bin" when PATH is
/// unset, as execvp(3) does), then `extra_dirs` in order (server programs live in sbin, which is
/// not on every user's PATH). nullopt if none.
std::optional<std::filesystem::path> find_program(const std::string& name,
                                                  const std::vector<std::filesystem::path>& extra_dirs = {});

/// Where a child's stdout and stderr go (both to the same place).
enum class ChildOutput {
  discard,         ///< /dev/null
  append_to_file,  ///< SpawnOptions::output_file, opened O_APPEND|O_CREAT (mode 0644)
  capture,         ///< a pipe the parent drains: ChildProcess::output(), the last 64 KiB
};

struct SpawnOptions {
  ChildOutput output = ChildOutput::discard;
  std::filesystem::path output_file;  ///< for ChildOutput::append_to_file
  std::filesystem::path cwd;          ///< working directory of the child; empty: the parent's
  /// Starts the child in a process group of its own: kill() and terminate() then signal the whole
  /// group (runuser and the program it runs, pg_ctl and what it forks).
  bool own_process_group = false;
  /// The start of the error message when the child cannot be started (then ": strerror");
  /// empty: "start <argv[0]>".
  std::string start_error;
};

/// An owned, running child process (move-only). The destructor kills (SIGKILL) and reaps a child
/// still running: stop it properly with terminate() first. Thread-compatible, not thread-safe.
class ChildProcess {
 public:
  /// Starts `argv` (argv[0] a path: see find_program). Throws EnvironmentError when it cannot be
  /// started (`options.start_error` + ": " + strerror), or when argv is empty.
  explicit ChildProcess(const std::vector<std::string>& argv, const SpawnOptions& options = {});
  ~ChildProcess();
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const noexcept { return pid_; }
  /// True while the child has not exited (reaps it when it has).
  bool running() noexcept;
  /// Waits up to `timeout` for the exit; its waitpid(2) status, or nullopt if still running.
  std::optional<int> wait_for(std::chrono::milliseconds timeout) noexcept;
  /// Waits as long as it takes; the waitpid(2) status.
  int wait() noexcept;
  /// SIGKILL (to the group with own_process_group) and reap.
  void kill() noexcept;
  /// SIGTERM, then SIGKILL after `grace`; always reaps. True if it ended within `grace`.
  bool terminate(std::chrono::milliseconds grace) noexcept;
  /// The waitpid(2) status once it has ended.
  std::optional<int> status() const noexcept { return status_; }
  /// "exit code 1", "killed by signal 9", "running".
  std::string describe_status() const;
  /// With ChildOutput::capture: what the child wrote so far (drained by running()/wait*), at most
  /// the last 64 KiB. Empty otherwise.
  const std::string& output() const noexcept { return output_; }

 private:
  void drain() noexcept;
  void signal(int signo) noexcept;
  void reap() noexcept;

  pid_t pid_ = -1;
  bool group_ = false;
  int pipe_fd_ = -1;  ///< read end of the capture pipe (owned), -1 without capture
  std::optional<int> status_;
  std::string output_;
};

/// What a finished command did.
struct CommandResult {
  int exit_code = -1;      ///< the exit status; -1 when killed by a signal or by the timeout
  bool timed_out = false;  ///< killed (SIGKILL, its group with own_process_group) after `timeout`
  std::string output;      ///< stdout + stderr, the last 64 KiB
};

/// Runs `argv` to its end with its output captured (`options.output` is ignored), killing it after
/// `timeout`. Throws EnvironmentError only if it cannot be started.
CommandResult run_command(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                          SpawnOptions options = {});

/// The last `lines` lines of `text`, trailing newlines and blanks removed, for error messages.
std::string tail_of_text(const std::string& text, int lines = 20);
/// The last `lines` lines of a text file (of its last 64 KiB); "" if unreadable.
std::string tail_of_file(const std::filesystem::path& file, int lines = 20);
/// A server log's tail that a flood of one message cannot push its cause out of: the last
/// `lines` *distinct* lines of `text`, in the order of their last occurrence, each shown as it
/// last appeared; a line that occurred more than once ends with " [N times]". Two lines are the
/// same when they differ only in their digits (timestamps, pids, counts: "FATAL: the database
/// system is shutting down" from every refused reconnect, "unused item 1001" rollbacks with
/// their CONTEXT and STATEMENT lines). Trailing blanks removed; "" for a blank text.
std::string distinct_tail_of_text(const std::string& text, int lines = 20);
/// distinct_tail_of_text of a file's last 64 KiB; "" if unreadable.
std::string distinct_tail_of_file(const std::filesystem::path& file, int lines = 20);

/// Managed server processes that must not outlive drivelab (docs/architecture.md, "Signals").
///
/// guard_process() registers a server process (the postmaster, mariadbd) with the *guardian*: a
/// small process forked at the first registration, in a session of its own, that holds the read
/// end of a pipe whose write end only drivelab holds. When drivelab ends by any means (SIGKILL
/// included) the pipe reads end-of-file and the guardian sends each process still registered its
/// `fast_signal`, waits up to its `grace`, then SIGKILLs it and its process group. This stands in
/// for PR_SET_PDEATHSIG, which cannot cover these servers: pg_ctl starts the postmaster as a
/// grandchild (the setting is not inherited across fork), mariadbd changes its user when started
/// as root (which clears the setting), and the signal follows the death of the forking *thread*.
/// Before signalling, the guardian checks that the pid still runs a program of the registered
/// command name (a pid reused meanwhile is left alone).
///
/// At most kMaxGuardedProcesses at once; beyond that a process is not guarded (said on stderr).
/// Thread-safe.
inline constexpr int kMaxGuardedProcesses = 32;
/// Registers `pid` (command name `comm`, as /proc/<pid>/stat shows it: "postgres", "mariadbd").
/// Starts the guardian if it is not running; when it cannot be started, the process is still
/// stopped fast on a second signal but not when drivelab is killed (said on stderr).
void guard_process(pid_t pid, const std::string& comm, int fast_signal, std::chrono::milliseconds grace);
/// Forgets `pid` (its server was stopped normally). No-op for a pid not registered.
void unguard_process(pid_t pid) noexcept;
/// A server that is still starting, known by the pid file it will write (postmaster.pid):
/// registered before the command that starts it (pg_ctl start -w), so a drivelab killed while
/// that command waits does not leave the server behind. After drivelab ended, the guardian waits
/// up to 15 s for the file to name a running program `comm`, then treats it as guard_process
/// does. Forget it (unguard_pid_file) once the server's pid is guarded, or the guardian lingers
/// for those 15 s after a normal end. Paths of kMaxGuardedPidFilePath bytes or more are not
/// guarded (said on stderr).
inline constexpr int kMaxGuardedPidFilePath = 1024;
void guard_pid_file(const std::filesystem::path& pid_file, const std::string& comm, int fast_signal,
                    std::chrono::milliseconds grace);
void unguard_pid_file(const std::filesystem::path& pid_file) noexcept;
/// Sends every registered process its fast signal (a postmaster SIGQUIT: immediate shutdown;
/// mariadbd SIGKILL). Async-signal-safe: the signal handlers call it on a second signal.
void stop_guarded_processes_fast() noexcept;
/// SIGKILLs every registered process and its process group, then waits up to `limit` until they
/// are gone. The last resort of a third signal. Not async-signal-safe.
void kill_guarded_processes(std::chrono::milliseconds limit) noexcept;
/// The pid of the guardian process, or -1 if none was started (tests).
pid_t guardian_pid() noexcept;

/// A process as /proc/<pid>/stat shows it (proc(5): "pid (comm) state ppid ...").
struct ProcessState {
  std::string comm;  ///< the command name (at most 15 bytes; the same as /proc/<pid>/comm)
  char state = '?';  ///< R, S, D, Z (zombie: ended, not yet reaped), X (dead), T, t, I, ...
};
/// nullopt if there is no process `pid` (or /proc is not mounted).
std::optional<ProcessState> process_state(pid_t pid);
/// The working directory of `pid` (readlink /proc/<pid>/cwd: symbolic links resolved), nullopt if
/// there is no such process or it may not be read. A postmaster's is its data directory.
std::optional<std::filesystem::path> process_cwd(pid_t pid);

}  // namespace drivelab
