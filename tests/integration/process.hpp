#pragma once
// Test helper: run the drivelab binary as a child process with captured output.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "temp_dir.hpp"  // tests/support

extern char** environ;

namespace drivelab::testing {

/// A fresh directory under the build tree for one test (<build>/test-scratch/<name>-XXXXXX),
/// removed on destruction.
struct ScratchDir : test_support::TempDir {
  explicit ScratchDir(const std::string& name) : test_support::TempDir(name, test_support::TempBase::build_tree) {}
};

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A running child with stdout and stderr redirected to files.
class Child {
 public:
  Child(std::vector<std::string> args, const std::filesystem::path& out_file, const std::filesystem::path& err_file,
        const std::filesystem::path& cwd = {})
      : out_(out_file), err_(err_file) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), environ) != 0)
      throw std::runtime_error("posix_spawn failed for " + args[0]);
    posix_spawn_file_actions_destroy(&fa);
  }
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      int st;
      ::waitpid(pid_, &st, 0);
    }
  }
  void signal(int signo) { ::kill(pid_, signo); }
  pid_t pid() const { return pid_; }
  /// Waits up to `timeout`; returns the exit status, or -1 on timeout (child killed), or 128+signal.
  int wait(std::chrono::seconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      int st = 0;
      const pid_t r = ::waitpid(pid_, &st, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        if (WIFEXITED(st)) return WEXITSTATUS(st);
        if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
        return -2;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &st, 0);
        pid_ = -1;
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  std::string out() const { return read_file(out_); }
  std::string err() const { return read_file(err_); }

 private:
  pid_t pid_ = -1;
  std::filesystem::path out_, err_;
};

struct Result {
  int status;
  std::string out;
  std::string err;
};

inline Result run(std::vector<std::string> args, const std::filesystem::path& dir,
                  std::chrono::seconds timeout = std::chrono::seconds(300), const std::filesystem::path& cwd = {}) {
  Child c(std::move(args), dir / "stdout.txt", dir / "stderr.txt", cwd);
  const int st = c.wait(timeout);
  return {st, c.out(), c.err()};
}

}  // namespace drivelab::testing
