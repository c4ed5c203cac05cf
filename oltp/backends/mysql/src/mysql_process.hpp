#pragma once
// Child processes of the managed MariaDB server (mysql_server.cpp): mariadb-install-db and
// mariadbd, started with drivelab::ChildProcess (core/process.hpp) with stdout + stderr appended
// to a log file, never the parent's pipes (a test runner waits for its pipes to close, so a
// server holding them would hang it).
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "drivelab/core/process.hpp"

namespace drivelab::oltp::mysql {

/// Starts `argv` (argv[0] a path) with stdout and stderr appended to `log_file`. Throws
/// EnvironmentError when it cannot be started.
ChildProcess start_logged(const std::vector<std::string>& argv, const std::filesystem::path& log_file);

/// Runs `argv` to completion (at most `timeout`, then killed). Returns the waitpid status.
/// Throws EnvironmentError (with the log's tail) when it did not finish in time.
int run_to_completion(const std::vector<std::string>& argv, const std::filesystem::path& log_file,
                      std::chrono::milliseconds timeout);

/// The absolute path of `name` in $PATH, /usr/sbin, /usr/local/sbin, /usr/bin, /usr/local/bin
/// (servers live in sbin, which is not in every user's PATH), or nullopt.
std::optional<std::filesystem::path> find_server_program(const std::string& name);

/// The last `lines` lines of a text file ("" if unreadable), each indented by two spaces and
/// ended by a newline, for error messages.
std::string tail_of(const std::filesystem::path& file, int lines = 20);

}  // namespace drivelab::oltp::mysql
