#include "postgres_process.hpp"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/core/fd.hpp"

extern char** environ;

namespace drivelab::oltp::pg {
namespace {

constexpr std::size_t kKeepOutputBytes = 64 * 1024;

std::string user_name(uid_t uid) {
  const passwd* pw = ::getpwuid(uid);
  return pw != nullptr ? pw->pw_name : std::to_string(uid);
}

std::string group_name(gid_t gid) {
  const group* gr = ::getgrgid(gid);
  return gr != nullptr ? gr->gr_name : std::to_string(gid);
}

std::string runuser_path() {
  for (const char* p : {"/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser"})
    if (::access(p, X_OK) == 0) return p;
  throw EnvironmentError("managed postgres: runuser not found (util-linux): needed to run the server as the postgres user");
}

}  // namespace

ServerUser server_user() {
  ServerUser u;
  if (::geteuid() != 0) {
    u.uid = ::geteuid();
    u.gid = ::getegid();
    u.name = user_name(u.uid);
    return u;
  }
  const passwd* pw = ::getpwnam("postgres");
  if (pw == nullptr)
    throw EnvironmentError("managed postgres: drivelab runs as root, PostgreSQL refuses to run as root, and "
                           "there is no 'postgres' user to run it (apt-get install postgresql)");
  u.switch_user = true;
  u.name = pw->pw_name;
  u.uid = pw->pw_uid;
  u.gid = pw->pw_gid;
  int n = 32;
  std::vector<gid_t> groups(static_cast<std::size_t>(n));
  if (::getgrouplist(pw->pw_name, pw->pw_gid, groups.data(), &n) < 0) {
    groups.resize(static_cast<std::size_t>(n));
    ::getgrouplist(pw->pw_name, pw->pw_gid, groups.data(), &n);
  }
  groups.resize(static_cast<std::size_t>(std::max(n, 0)));
  u.groups = std::move(groups);
  return u;
}

void check_traversable(const ServerUser& user, const std::filesystem::path& dir) {
  if (user.uid == 0) return;
  const std::filesystem::path abs = std::filesystem::absolute(dir).lexically_normal();
  std::filesystem::path p;
  for (const auto& part : abs) {
    p /= part;
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) return;  // not created yet: we create it for the user
    if (!S_ISDIR(st.st_mode)) continue;
    mode_t need = S_IXOTH;
    if (st.st_uid == user.uid) need = S_IXUSR;
    else if (st.st_gid == user.gid || std::find(user.groups.begin(), user.groups.end(), st.st_gid) != user.groups.end())
      need = S_IXGRP;
    if ((st.st_mode & need) == 0) {
      throw EnvironmentError(fmt::format(
          "managed postgres: the server runs as user '{}', which cannot reach {}: directory {} has mode "
          "{:04o} (owner {}, group {}). Give it search permission on every directory above the data "
          "directory (e.g. chmod o+x {}) or choose a target directory it can reach",
          user.name, abs.string(), p.string(), st.st_mode & 07777, user_name(st.st_uid),
          group_name(st.st_gid), p.string()));
    }
  }
}

CommandResult run_command(const ServerUser& user, const std::vector<std::string>& argv,
                          std::chrono::milliseconds timeout) {
  std::vector<std::string> full;
  if (user.switch_user) full = {runuser_path(), "-u", user.name, "--"};
  full.insert(full.end(), argv.begin(), argv.end());
  std::vector<char*> cargv;
  for (std::string& a : full) cargv.push_back(a.data());
  cargv.push_back(nullptr);

  std::array<int, 2> fds{};
  if (::pipe2(fds.data(), O_CLOEXEC) != 0) throw_errno("managed postgres: pipe", errno);
  UniqueFd read_end(fds[0]);
  UniqueFd write_end(fds[1]);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, write_end.get(), 1);
  posix_spawn_file_actions_adddup2(&fa, write_end.get(), 2);
  // The server user may not be allowed into our working directory.
  posix_spawn_file_actions_addchdir_np(&fa, "/");
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Own process group, so a timeout kills runuser and the program it runs together.
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, cargv[0], &fa, &attr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw_errno(fmt::format("managed postgres: start {}", full[0]), rc);
  write_end.reset();
  ::fcntl(read_end.get(), F_SETFL, O_NONBLOCK);

  CommandResult out;
  const std::int64_t deadline = monotonic_ns() + std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count();
  const auto drain = [&] {
    std::array<char, 4096> buf{};
    for (;;) {
      const ssize_t n = ::read(read_end.get(), buf.data(), buf.size());
      if (n <= 0) break;
      out.output.append(buf.data(), static_cast<std::size_t>(n));
      if (out.output.size() > 2 * kKeepOutputBytes) out.output.erase(0, out.output.size() - kKeepOutputBytes);
    }
  };
  int status = 0;
  for (;;) {
    pollfd p{read_end.get(), POLLIN, 0};
    ::poll(&p, 1, 50);
    drain();
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    if (monotonic_ns() >= deadline) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      out.timed_out = true;
      break;
    }
  }
  drain();
  if (out.output.size() > kKeepOutputBytes) out.output.erase(0, out.output.size() - kKeepOutputBytes);
  if (!out.timed_out && WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
  return out;
}

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

std::string tail_of_file(const std::filesystem::path& file, int lines) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return {};
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff start = size > 65536 ? size - 65536 : 0;
  in.seekg(start);
  std::ostringstream ss;
  ss << in.rdbuf();
  return tail_of_text(ss.str(), lines);
}

std::optional<pid_t> postmaster_pid(const std::filesystem::path& data_dir) {
  std::ifstream in(data_dir / "postmaster.pid");
  long pid = 0;
  if (!(in >> pid) || pid <= 0) return std::nullopt;
  return static_cast<pid_t>(pid);
}

bool is_postgres_process(pid_t pid) {
  // /proc/<pid>/stat: "pid (comm) state ..."; a zombie (Z) is dead though not yet reaped.
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat;
  if (!std::getline(in, stat)) return false;
  const auto open = stat.find('(');
  const auto close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close + 2 >= stat.size()) return false;
  const char state = stat[close + 2];
  return stat.substr(open + 1, close - open - 1) == "postgres" && state != 'Z' && state != 'X';
}

}  // namespace drivelab::oltp::pg
