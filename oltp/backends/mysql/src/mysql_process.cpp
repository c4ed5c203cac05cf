#include "mysql_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"

extern char** environ;

namespace drivelab::oltp::mysql {
namespace {

/// RAII owner of posix_spawn_file_actions_t.
class FileActions {
 public:
  FileActions() { posix_spawn_file_actions_init(&fa_); }
  ~FileActions() { posix_spawn_file_actions_destroy(&fa_); }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;
  posix_spawn_file_actions_t* get() noexcept { return &fa_; }

 private:
  posix_spawn_file_actions_t fa_;
};

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::filesystem::path& log_file) {
  FileActions fa;
  posix_spawn_file_actions_addopen(fa.get(), 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(fa.get(), 1, log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(fa.get(), 1, 2);
  // Nothing else of the parent: an inherited client socket (libraries do not always set
  // O_CLOEXEC) would keep that session open on its server after the parent closes it.
  posix_spawn_file_actions_addclosefrom_np(fa.get(), 3);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int rc = posix_spawn(&pid_, args[0], fa.get(), nullptr, args.data(), environ);
  if (rc != 0) {
    pid_ = -1;
    throw_errno(fmt::format("start {}", argv[0]), rc);
  }
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !status_) {
    ::kill(pid_, SIGKILL);
    int st = 0;
    while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
    }
  }
}

bool ChildProcess::running() noexcept {
  if (pid_ <= 0 || status_) return false;
  int st = 0;
  const pid_t r = ::waitpid(pid_, &st, WNOHANG);
  if (r == pid_) {
    status_ = st;
    return false;
  }
  return r == 0;
}

std::optional<int> ChildProcess::wait_for(std::chrono::milliseconds timeout) noexcept {
  const std::int64_t deadline = monotonic_ns() + std::chrono::nanoseconds(timeout).count();
  while (running()) {
    if (monotonic_ns() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return status_;
}

bool ChildProcess::terminate(std::chrono::milliseconds grace) noexcept {
  if (!running()) return true;
  ::kill(pid_, SIGTERM);
  if (wait_for(grace)) return true;
  ::kill(pid_, SIGKILL);
  int st = 0;
  while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
  }
  status_ = st;
  return false;
}

std::string ChildProcess::describe_status() const {
  if (!status_) return "running";
  if (WIFEXITED(*status_)) return fmt::format("exit code {}", WEXITSTATUS(*status_));
  if (WIFSIGNALED(*status_)) return fmt::format("killed by signal {}", WTERMSIG(*status_));
  return fmt::format("status {}", *status_);
}

int run_to_completion(const std::vector<std::string>& argv, const std::filesystem::path& log_file,
                      std::chrono::milliseconds timeout) {
  ChildProcess child(argv, log_file);
  if (auto st = child.wait_for(timeout)) return *st;
  child.terminate(std::chrono::seconds(5));
  throw EnvironmentError(fmt::format("{} did not finish within {} s (log: {}):\n{}", argv[0],
                                     timeout.count() / 1000, log_file.string(), tail_of(log_file)));
}

std::optional<std::filesystem::path> find_program(const std::string& name) {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    std::string p(path);
    std::size_t start = 0;
    while (start <= p.size()) {
      const auto colon = p.find(':', start);
      const auto end = colon == std::string::npos ? p.size() : colon;
      if (end > start) dirs.push_back(p.substr(start, end - start));
      start = end + 1;
    }
  }
  for (const char* d : {"/usr/sbin", "/usr/local/sbin", "/usr/bin", "/usr/local/bin"}) dirs.emplace_back(d);
  for (const auto& d : dirs) {
    const std::filesystem::path candidate = std::filesystem::path(d) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

std::string tail_of(const std::filesystem::path& file, int lines) {
  std::ifstream in(file);
  if (!in) return {};
  std::deque<std::string> last;
  for (std::string line; std::getline(in, line);) {
    last.push_back(std::move(line));
    if (static_cast<int>(last.size()) > lines) last.pop_front();
  }
  std::string out;
  for (const auto& l : last) out += "  " + l + "\n";
  return out;
}

}  // namespace drivelab::oltp::mysql
