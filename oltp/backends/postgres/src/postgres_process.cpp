#include "postgres_process.hpp"

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"

namespace drivelab::oltp::pg {
namespace {

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
  throw EnvironmentError(
      "managed postgres: runuser not found (util-linux): needed to run the server as the postgres user");
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
    throw EnvironmentError(
        "managed postgres: drivelab runs as root, PostgreSQL refuses to run as root, and "
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
    struct stat st{};
    if (::stat(p.c_str(), &st) != 0) return;  // not created yet: we create it for the user
    if (!S_ISDIR(st.st_mode)) continue;
    mode_t need = S_IXOTH;
    if (st.st_uid == user.uid)
      need = S_IXUSR;
    else if (st.st_gid == user.gid || std::find(user.groups.begin(), user.groups.end(), st.st_gid) != user.groups.end())
      need = S_IXGRP;
    if ((st.st_mode & need) == 0) {
      throw EnvironmentError(
          fmt::format("managed postgres: the server runs as user '{}', which cannot reach {}: directory {} has mode "
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
  SpawnOptions options;
  options.cwd = "/";                 // the server user may not be allowed into our working directory
  options.own_process_group = true;  // a timeout kills runuser and the program it runs together
  options.start_error = fmt::format("managed postgres: start {}", full[0]);
  return drivelab::run_command(full, timeout, options);
}

std::optional<pid_t> postmaster_pid(const std::filesystem::path& data_dir) {
  std::ifstream in(data_dir / "postmaster.pid");
  long pid = 0;
  if (!(in >> pid) || pid <= 0) return std::nullopt;
  return static_cast<pid_t>(pid);
}

bool is_postgres_process(pid_t pid) {
  // A zombie (Z) is dead though not yet reaped.
  const auto s = process_state(pid);
  return s && s->comm == "postgres" && s->state != 'Z' && s->state != 'X';
}

}  // namespace drivelab::oltp::pg
