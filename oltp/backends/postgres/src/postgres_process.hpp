#pragma once
// Running the PostgreSQL server programs (initdb, pg_ctl) for the managed server: as the
// `postgres` system user when drivelab runs as root (the server refuses to run as root), with
// their output captured for error messages, and never waiting forever.
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

#include "drivelab/core/process.hpp"

namespace drivelab::oltp::pg {

/// The account that runs the server processes.
struct ServerUser {
  bool switch_user = false;  ///< true when we are root: commands go through runuser
  std::string name;          ///< "postgres" when switching, else our own user name
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  ///< supplementary groups (for the directory permission check)
};

/// Who runs the server: the `postgres` user when euid is 0 (EnvironmentError if it does not
/// exist), else the current user.
ServerUser server_user();

/// Checks that `user` can traverse every existing directory from / down to `dir` (search
/// permission by owner, group or other bits; ACLs are not read). Throws EnvironmentError naming
/// the first blocking directory, its mode and owner, and what to do.
void check_traversable(const ServerUser& user, const std::filesystem::path& dir);

/// Runs argv[0] (an absolute path) with `args`, as `user`, in directory /, in a process group of
/// its own, stdout and stderr captured (drivelab::run_command). Kills the group (SIGKILL) after
/// `timeout`. Throws EnvironmentError only if the process cannot be started.
CommandResult run_command(const ServerUser& user, const std::vector<std::string>& argv,
                          std::chrono::milliseconds timeout);

/// The PID in the first line of `data_dir`/postmaster.pid, if the file exists.
std::optional<pid_t> postmaster_pid(const std::filesystem::path& data_dir);
/// True if `pid` is a live process whose command name is "postgres" (not a reused PID).
bool is_postgres_process(pid_t pid);

}  // namespace drivelab::oltp::pg
