#pragma once
// Helpers of the reporter tests: a real temporary directory, running a real program, and the
// checked-in real records (tests/golden/report_*.json).
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include <vector>

#include "drivelab/report/report.hpp"
#include "temp_dir.hpp"  // tests/support

extern char** environ;

namespace drivelab::report::testing {

using drivelab::test_support::TempDir;

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Runs `args` (PATH search) with stdout to `out` (or /dev/null) and stderr to `err` (or
/// /dev/null), optionally in `cwd`; returns the exit status (128+signal when killed).
inline int run_command(std::vector<std::string> args, const std::filesystem::path& out = {},
                       const std::filesystem::path& err = {}, const std::filesystem::path& cwd = {}) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out.empty() ? "/dev/null" : out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.empty() ? "/dev/null" : err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return 127;
  int st = 0;
  ::waitpid(pid, &st, 0);
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
}

/// The table of `metric` in test `test`; nullptr if the report has none.
inline const MetricTable* table_of(const Report& r, const std::string& test, const std::string& metric) {
  for (const auto& t : r.tables)
    if (t.test == test && t.metric == metric) return &t;
  return nullptr;
}

/// The checked-in real records, sorted by name (two runs on each of two targets).
inline std::vector<std::filesystem::path> golden_records() {
  std::vector<std::filesystem::path> out;
  for (const auto& e :
       std::filesystem::directory_iterator(std::filesystem::path(DRIVELAB_SOURCE_DIR) / "tests/golden")) {
    const std::string n = e.path().filename().string();
    if (n.starts_with("report_run_") && n.ends_with(".json")) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// The same list relative to the source root (what a user types when running from there).
inline std::vector<std::string> golden_record_args() {
  std::vector<std::string> out;
  for (const auto& p : golden_records()) out.push_back("tests/golden/" + p.filename().string());
  return out;
}

}  // namespace drivelab::report::testing
