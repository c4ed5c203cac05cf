#pragma once
// Child processes of the managed MariaDB server (mysql_server.cpp): mariadb-install-db and
// mariadbd, started with stdin from /dev/null and stdout + stderr appended to a log file, never
// the parent's pipes (a test runner waits for its pipes to close, so a server holding them would
// hang it), and helpers to find binaries and read the tail of a log.
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace drivelab::oltp::mysql {

/// An owned child process. The destructor kills (SIGKILL) and reaps a child still running:
/// stop it properly with terminate() first.
class ChildProcess {
 public:
  /// Starts `argv` (argv[0] a path). Throws EnvironmentError when it cannot be started.
  ChildProcess(const std::vector<std::string>& argv, const std::filesystem::path& log_file);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const noexcept { return pid_; }
  /// True while the child has not exited (reaps it when it has).
  bool running() noexcept;
  /// Waits up to `timeout` for the exit; the exit status (waitpid form) or nullopt if still running.
  std::optional<int> wait_for(std::chrono::milliseconds timeout) noexcept;
  /// SIGTERM, then SIGKILL after `grace`; always reaps. Returns true if it ended within `grace`.
  bool terminate(std::chrono::milliseconds grace) noexcept;
  /// "exit code 1", "killed by signal 9", "running".
  std::string describe_status() const;

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

/// Runs `argv` to completion (at most `timeout`, then killed). Returns the waitpid status.
int run_to_completion(const std::vector<std::string>& argv, const std::filesystem::path& log_file,
                      std::chrono::milliseconds timeout);

/// The absolute path of `name` in $PATH, /usr/sbin, /usr/local/sbin, /usr/bin (servers live in
/// sbin, which is not in every user's PATH), or nullopt.
std::optional<std::filesystem::path> find_program(const std::string& name);

/// The last `lines` lines of a text file ("" if unreadable), for error messages.
std::string tail_of(const std::filesystem::path& file, int lines = 20);

}  // namespace drivelab::oltp::mysql
