#include "drivelab/core/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/core/fd.hpp"

extern char** environ;

namespace drivelab {
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kKeepOutputBytes = 64 * 1024;
constexpr int kPollIntervalMs = 20;

/// RAII owner of a posix_spawn attribute object (file actions, attributes).
template <class T, int (*Init)(T*), int (*Destroy)(T*)>
struct SpawnObject {
  T value;
  SpawnObject() { Init(&value); }
  ~SpawnObject() { Destroy(&value); }
  SpawnObject(const SpawnObject&) = delete;
  SpawnObject& operator=(const SpawnObject&) = delete;
};
using FileActions =
    SpawnObject<posix_spawn_file_actions_t, posix_spawn_file_actions_init, posix_spawn_file_actions_destroy>;
using SpawnAttr = SpawnObject<posix_spawnattr_t, posix_spawnattr_init, posix_spawnattr_destroy>;

void wait_blocking(pid_t pid, int& status) noexcept {
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

std::optional<fs::path> find_program(const std::string& name, const std::vector<fs::path>& extra_dirs) {
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string::npos)
    return ::access(name.c_str(), X_OK) == 0 ? std::optional<fs::path>(name) : std::nullopt;
  std::vector<fs::path> dirs;
  const char* path = std::getenv("PATH");
  std::stringstream ss(path != nullptr ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(ss, dir, ':');)
    if (!dir.empty()) dirs.emplace_back(dir);
  dirs.insert(dirs.end(), extra_dirs.begin(), extra_dirs.end());
  for (const fs::path& d : dirs) {
    const fs::path candidate = d / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

// ---- ChildProcess ---------------------------------------------------------------------------

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const SpawnOptions& options)
    : group_(options.own_process_group) {
  if (argv.empty()) throw EnvironmentError("start: no program given");
  const std::string what = options.start_error.empty() ? "start " + argv[0] : options.start_error;
  UniqueFd read_end, write_end;
  FileActions fa;
  posix_spawn_file_actions_addopen(&fa.value, 0, "/dev/null", O_RDONLY, 0);
  switch (options.output) {
    case ChildOutput::discard: posix_spawn_file_actions_addopen(&fa.value, 1, "/dev/null", O_WRONLY, 0); break;
    case ChildOutput::append_to_file:
      posix_spawn_file_actions_addopen(&fa.value, 1, options.output_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      break;
    case ChildOutput::capture: {
      std::array<int, 2> fds{};
      if (::pipe2(fds.data(), O_CLOEXEC) != 0) throw_errno(what + ": pipe", errno);
      read_end.reset(fds[0]);
      write_end.reset(fds[1]);
      posix_spawn_file_actions_adddup2(&fa.value, write_end.get(), 1);
      break;
    }
  }
  posix_spawn_file_actions_adddup2(&fa.value, 1, 2);
  posix_spawn_file_actions_addclosefrom_np(&fa.value, 3);
  if (!options.cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa.value, options.cwd.c_str());
  SpawnAttr attr;
  if (group_) {
    posix_spawnattr_setpgroup(&attr.value, 0);
    posix_spawnattr_setflags(&attr.value, POSIX_SPAWN_SETPGROUP);
  }
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int rc = ::posix_spawn(&pid_, args[0], &fa.value, &attr.value, args.data(), environ);
  if (rc != 0) {
    pid_ = -1;
    throw_errno(what, rc);
  }
  if (read_end) {
    ::fcntl(read_end.get(), F_SETFL, O_NONBLOCK);
    pipe_fd_ = read_end.release();
  }
}

ChildProcess::ChildProcess(ChildProcess&& o) noexcept
    : pid_(std::exchange(o.pid_, -1)),
      group_(o.group_),
      pipe_fd_(std::exchange(o.pipe_fd_, -1)),
      status_(o.status_),
      output_(std::move(o.output_)) {}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !status_) kill();
  if (pipe_fd_ >= 0) ::close(pipe_fd_);
}

void ChildProcess::drain() noexcept {
  if (pipe_fd_ < 0) return;
  std::array<char, 4096> buf{};
  for (;;) {
    const ssize_t n = ::read(pipe_fd_, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    try {
      output_.append(buf.data(), static_cast<std::size_t>(n));
      if (output_.size() > 2 * kKeepOutputBytes) output_.erase(0, output_.size() - kKeepOutputBytes);
    } catch (...) {  // out of memory: keep what we have
      break;
    }
  }
}

void ChildProcess::reap() noexcept {
  int st = 0;
  wait_blocking(pid_, st);
  status_ = st;
  drain();
  if (output_.size() > kKeepOutputBytes) output_.erase(0, output_.size() - kKeepOutputBytes);
}

void ChildProcess::signal(int signo) noexcept {
  if (pid_ <= 0 || status_) return;
  if (group_) ::kill(-pid_, signo);
  ::kill(pid_, signo);
}

bool ChildProcess::running() noexcept {
  if (pid_ <= 0 || status_) return false;
  drain();
  int st = 0;
  const pid_t r = ::waitpid(pid_, &st, WNOHANG);
  if (r == pid_) {
    status_ = st;
    drain();
    if (output_.size() > kKeepOutputBytes) output_.erase(0, output_.size() - kKeepOutputBytes);
    return false;
  }
  return r == 0 || (r < 0 && errno == EINTR);
}

std::optional<int> ChildProcess::wait_for(std::chrono::milliseconds timeout) noexcept {
  const std::int64_t deadline = monotonic_ns() + std::chrono::nanoseconds(timeout).count();
  while (running()) {
    const std::int64_t left_ms = (deadline - monotonic_ns()) / 1'000'000;
    if (left_ms <= 0) return std::nullopt;
    const int wait_ms = static_cast<int>(std::min<std::int64_t>(left_ms, kPollIntervalMs));
    if (pipe_fd_ >= 0) {
      pollfd p{pipe_fd_, POLLIN, 0};
      ::poll(&p, 1, wait_ms);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    }
  }
  return status_;
}

int ChildProcess::wait() noexcept {
  while (!wait_for(std::chrono::hours(24))) {
  }
  return status_.value_or(-1);
}

void ChildProcess::kill() noexcept {
  if (pid_ <= 0 || status_) return;
  signal(SIGKILL);
  reap();
}

bool ChildProcess::terminate(std::chrono::milliseconds grace) noexcept {
  if (!running()) return true;
  signal(SIGTERM);
  if (wait_for(grace)) return true;
  kill();
  return false;
}

std::string ChildProcess::describe_status() const {
  if (!status_) return "running";
  if (WIFEXITED(*status_)) return fmt::format("exit code {}", WEXITSTATUS(*status_));
  if (WIFSIGNALED(*status_)) return fmt::format("killed by signal {}", WTERMSIG(*status_));
  return fmt::format("status {}", *status_);
}

CommandResult run_command(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                          SpawnOptions options) {
  options.output = ChildOutput::capture;
  ChildProcess child(argv, options);
  CommandResult out;
  const std::optional<int> status = child.wait_for(timeout);
  if (!status) {
    child.kill();
    out.timed_out = true;
  } else if (WIFEXITED(*status)) {
    out.exit_code = WEXITSTATUS(*status);
  }
  out.output = child.output();
  return out;
}

// ---- messages -------------------------------------------------------------------------------

std::string tail_of_text(const std::string& text, int lines) {
  std::size_t pos = text.size();
  while (pos > 0 && (text[pos - 1] == '\n' || text[pos - 1] == ' ')) --pos;
  const std::size_t end = pos;
  int seen = 0;
  while (pos > 0) {
    if (text[pos - 1] == '\n' && ++seen == lines) break;
    --pos;
  }
  return text.substr(pos, end - pos);
}

namespace {

// The last 64 KiB of `file`; "" if unreadable.
std::string last_bytes_of_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return {};
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff start =
      size > static_cast<std::streamoff>(kKeepOutputBytes) ? size - static_cast<std::streamoff>(kKeepOutputBytes) : 0;
  in.seekg(start);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::string tail_of_file(const fs::path& file, int lines) { return tail_of_text(last_bytes_of_file(file), lines); }

std::string distinct_tail_of_text(const std::string& text, int lines) {
  struct Seen {
    std::string_view last;  // the line as it last appeared
    std::size_t count = 0;
  };
  std::vector<std::string> order;  // keys, newest last occurrence first
  std::map<std::string, Seen, std::less<>> seen;
  std::string_view rest = text;
  while (!rest.empty() && (rest.back() == '\n' || rest.back() == ' ')) rest.remove_suffix(1);
  // From the end: the first time a key is met is its last occurrence.
  while (!rest.empty()) {
    const std::size_t nl = rest.rfind('\n');
    const std::string_view line = nl == std::string_view::npos ? rest : rest.substr(nl + 1);
    rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(0, nl);
    std::string key;
    key.reserve(line.size());
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (line[i] >= '0' && line[i] <= '9') {
        while (i + 1 < line.size() && line[i + 1] >= '0' && line[i + 1] <= '9') ++i;
        key += '#';
      } else {
        key += line[i];
      }
    }
    auto [it, fresh] = seen.try_emplace(key);
    if (fresh) {
      it->second.last = line;
      order.push_back(key);
    }
    ++it->second.count;
  }
  const std::size_t shown = std::min(order.size(), static_cast<std::size_t>(std::max(lines, 0)));
  std::string out;
  for (std::size_t k = shown; k-- > 0;) {
    const Seen& s = seen.find(order[k])->second;
    out.append(s.last);
    if (s.count > 1) out += fmt::format(" [{} times]", s.count);
    if (k > 0) out += '\n';
  }
  return out;
}

std::string distinct_tail_of_file(const fs::path& file, int lines) {
  return distinct_tail_of_text(last_bytes_of_file(file), lines);
}

// ---- /proc ----------------------------------------------------------------------------------

std::optional<ProcessState> process_state(pid_t pid) {
  // "pid (comm) state ...": comm may hold blanks and parentheses, so the state follows the
  // LAST ')'.
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat;
  if (!std::getline(in, stat)) return std::nullopt;
  const auto open = stat.find('(');
  const auto close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open || close + 2 >= stat.size())
    return std::nullopt;
  return ProcessState{stat.substr(open + 1, close - open - 1), stat[close + 2]};
}

std::optional<fs::path> process_cwd(pid_t pid) {
  std::error_code ec;
  fs::path cwd = fs::read_symlink(fmt::format("/proc/{}/cwd", pid), ec);
  if (ec) return std::nullopt;
  return cwd;
}

}  // namespace drivelab
