// A MariaDB server that drivelab creates, starts, stops and removes for one test (server.hpp).
// The settings profile and its sources are in docs/backend-mysql.md.
//
// Layout of data_dir (every file of the server on the drive under test):
//   .drivelab-managed-mariadb   marker: only a directory holding it is ever removed
//   my.cnf                      the generated configuration (mariadbd --defaults-file)
//   data/                       datadir (mariadb-install-db)
//   tmp/                        tmpdir: sort files of index builds stay on the drive too
//   mysqld.sock, mysqld.pid     the private socket (skip-networking: no TCP port) and pid file
//   error.log, server.out       the server's error log; its stdout/stderr
//   install.log                 mariadb-install-db's output
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <iostream>
#include <thread>

#include <fmt/format.h>
#include <cppconn/connection.h>
#include <cppconn/exception.h>
#include <cppconn/resultset.h>
#include <cppconn/statement.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/core/process.hpp"
#include "drivelab/core/sysfs.hpp"
#include "drivelab/core/units.hpp"
#include "drivelab/oltp/backend/server.hpp"
#include "drivelab/oltp/backends/mysql/mysql_backend.hpp"
#include "mysql_common.hpp"
#include "mysql_process.hpp"

namespace drivelab::oltp {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr const char* kMarker = ".drivelab-managed-mariadb";
constexpr auto kStartTimeout = 60s;
constexpr auto kInstallTimeout = 180s;
constexpr auto kStopGrace = 30s;
/// sun_path holds 108 bytes including the terminating NUL.
constexpr std::size_t kMaxSocketPath = 107;

/// The system user the server runs as when drivelab runs as root (the package's user).
constexpr const char* kServerUser = "mysql";

/// innodb_log_file_size: as large as the buffer pool (MariaDB's guidance for the largest useful
/// redo capacity; MySQL's manual: "as large as the buffer pool or even larger"), at least
/// MariaDB 10.11's default of 96 MiB. A redo log much smaller than the dirty pages the pool can
/// hold makes InnoDB flush pages early to advance its checkpoint, and synchronously once the
/// log is nearly full: stalls that would be the log's fault, not the drive's
/// (docs/backend-mysql.md). Whole MiB.
std::uint64_t log_file_bytes(std::uint64_t buffer_bytes) {
  constexpr std::uint64_t kMiB = 1ull << 20;
  return align_down(std::max<std::uint64_t>(buffer_bytes, 96 * kMiB), kMiB);
}

std::string normalized_key(std::string_view key) {
  std::string out(key);
  for (char& c : out) {
    if (c == '-') c = '_';
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

/// Keys the managed server sets itself: overriding them would break the start or open a port.
bool is_reserved(const std::string& key) {
  static constexpr std::string_view kReserved[] = {"datadir",         "socket", "pid_file",     "log_error", "user",
                                                   "skip_networking", "port",   "bind_address", "basedir"};
  return std::find(std::begin(kReserved), std::end(kReserved), key) != std::end(kReserved);
}

/// Can `user` (with its groups) access `path` with `mode` (access(2) bits)? Decided by the kernel
/// in a forked child that takes the user's identity, so ACLs and group membership count.
bool user_can_access(const passwd& pw, const fs::path& path, int mode) {
  int ngroups = 64;
  std::vector<gid_t> groups(static_cast<std::size_t>(ngroups));
  if (getgrouplist(pw.pw_name, pw.pw_gid, groups.data(), &ngroups) < 0) {
    groups.resize(static_cast<std::size_t>(ngroups));
    getgrouplist(pw.pw_name, pw.pw_gid, groups.data(), &ngroups);
  }
  groups.resize(static_cast<std::size_t>(std::max(ngroups, 0)));
  const std::string p = path.string();
  const pid_t child = ::fork();
  if (child < 0) return true;  // cannot tell: let the server report it
  if (child == 0) {
    // Only async-signal-safe calls in the child of a multi-threaded parent.
    if (::setgroups(groups.size(), groups.data()) != 0 || ::setgid(pw.pw_gid) != 0 || ::setuid(pw.pw_uid) != 0)
      ::_exit(2);
    ::_exit(::access(p.c_str(), mode) == 0 ? 0 : 1);
  }
  int st = 0;
  while (::waitpid(child, &st, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(st) && WEXITSTATUS(st) != 1;
}

/// True if `pid` is a live mariadbd/mysqld started with `defaults_file` (so never someone else's).
bool is_our_server(pid_t pid, const fs::path& defaults_file) {
  const auto state = process_state(pid);
  if (!state || (state->comm != "mariadbd" && state->comm != "mysqld")) return false;
  // Its arguments, NUL-separated ("--defaults-file=<ours>" among them).
  const auto args = read_sysfs_text(fmt::format("/proc/{}/cmdline", pid));
  return args && args->find(defaults_file.string()) != std::string::npos;
}

/// True while `pid` runs (a zombie has ended: it only waits for its parent to reap it).
bool process_exists(pid_t pid) {
  if (::kill(pid, 0) != 0 && errno != EPERM) return false;
  const auto state = process_state(pid);
  return !state || state->state != 'Z';
}

class ManagedMariadb final : public ManagedServer {
 public:
  explicit ManagedMariadb(ManagedServerOptions options) : opt_(std::move(options)) {
    if (opt_.data_dir.empty()) throw ConfigError("managed mariadb: no data directory");
    opt_.data_dir = fs::absolute(opt_.data_dir).lexically_normal();
    as_root_ = ::geteuid() == 0;
    if (as_root_) refuse_unsafe_install_path();
    if (as_root_) {
      user_ = "root";
    } else if (const passwd* pw = ::getpwuid(::geteuid()); pw != nullptr) {
      user_ = pw->pw_name;
    } else {
      throw EnvironmentError("managed mariadb: the current user has no name (getpwuid)");
    }
    build_profile();
  }

  ~ManagedMariadb() override { stop(); }

  void start() override {
    if (server_ && server_->running()) throw InternalError("managed mariadb: start() called twice");
    const auto install_db = mysql::find_server_program("mariadb-install-db");
    const auto mariadbd = mysql::find_server_program("mariadbd");
    if (!install_db || !mariadbd)
      throw EnvironmentError(
          "managed mariadb: mariadb-install-db or mariadbd not found "
          "(Debian: apt-get install mariadb-server)");
    mariadbd_ = *mariadbd;
    const passwd* pw = nullptr;
    if (as_root_) {
      pw = ::getpwnam(kServerUser);
      if (pw == nullptr)
        throw EnvironmentError(
            fmt::format("managed mariadb: running as root, the server must run as "
                        "the '{}' system user, which does not exist "
                        "(Debian: apt-get install mariadb-server)",
                        kServerUser));
    }

    remove_stale();
    prepare_directory(pw);
    stopped_ = false;

    std::vector<std::string> install{install_db->string(), "--no-defaults",
                                     "--datadir=" + (opt_.data_dir / "data").string(),
                                     "--auth-root-authentication-method=socket", "--skip-test-db",
                                     // Its own tmpdir: a mariadbd starting elsewhere deletes every
                                     // "#sql*" file in its tmpdir (mysql_rm_tmp_tables, sql_base.cc),
                                     // so a bootstrap in the shared /tmp aborts with "Error on delete".
                                     "--tmpdir=" + tmp_dir().string()};
    if (as_root_) install.push_back(std::string("--user=") + kServerUser);
    const fs::path install_log = opt_.data_dir / "install.log";
    const int st = mysql::run_to_completion(install, install_log, kInstallTimeout);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
      throw EnvironmentError(fmt::format("managed mariadb: mariadb-install-db failed in {}; the end of {}:\n{}",
                                         opt_.data_dir.string(), install_log.string(), mysql::tail_of(install_log)));

    write_config();
    server_ = std::make_unique<ChildProcess>(mysql::start_logged(
        {mariadbd_.string(), "--defaults-file=" + config_path().string()}, opt_.data_dir / "server.out"));
    // Stopped with drivelab whatever ends it (process.hpp: guard_process): SIGKILL at once (the
    // directory is removed anyway; InnoDB would recover a kept one at its next start).
    guard_process(server_->pid(), mariadbd_.filename().string().substr(0, 15), SIGKILL, 1s);
    wait_until_ready();
  }

  void stop() noexcept override {
    if (stopped_) return;
    stopped_ = true;
    if (server_) {
      // SIGTERM is mariadbd's normal shutdown (like SHUTDOWN): it flushes and exits cleanly.
      server_->terminate(kStopGrace);
      unguard_process(server_->pid());
      server_.reset();
    }
    std::error_code ec;
    if (!opt_.keep) fs::remove_all(opt_.data_dir, ec);
    if (!socket_dir_.empty()) fs::remove_all(socket_dir_, ec);
  }

  bool running() const override { return server_ && server_->running(); }

  Endpoint endpoint() const override {
    Endpoint e;
    e.socket_path = socket_path_.string();
    e.user = user_;
    return e;
  }

  void create_database(const std::string& name) override {
    auto c = connect();
    try {
      std::unique_ptr<sql::Statement> st(c->createStatement());
      st->execute("CREATE DATABASE IF NOT EXISTS " + mysql::quote_identifier(name));
    } catch (const sql::SQLException& e) {
      mysql::throw_backend(e, fmt::format("create database '{}'", name));
    }
  }

  fs::path log_file() const override { return opt_.data_dir / "error.log"; }

  GrowthConstants growth_constants() const noexcept override { return mariadb_growth_constants(); }

  results::Json describe() const override {
    results::Json profile = results::Json::object();
    for (const auto& [k, v] : profile_) profile[k] = v;
    return results::Json{{"kind", "mariadb"},
                         {"version", version_},
                         {"mariadbd", mariadbd_.string()},
                         {"data_dir", opt_.data_dir.string()},
                         {"socket", socket_path_.string()},
                         {"user", user_},
                         {"auth", "unix_socket"},
                         {"run_as", as_root_ ? kServerUser : user_},
                         {"keep", opt_.keep},
                         {"settings", profile}};
  }

 private:
  /// Run as root, mariadb-install-db is given --user and then runs `chown $user $dir` on the
  /// datadir without quotes (scripts/mysql_install_db.sh, "Create database directories"; 10.11):
  /// the shell splits a path with a blank into several arguments (the bootstrap fails, "Cannot
  /// change ownership") and expands one with *, ? or [ to whatever it matches (root would chown
  /// someone else's files). Said before anything is created or started; no workaround is safe.
  void refuse_unsafe_install_path() const {
    const std::string path = (opt_.data_dir / "data").string();
    const auto bad = path.find_first_of(" \t\n*?[");
    if (bad == std::string::npos) return;
    const char c = path[bad];
    throw EnvironmentError(
        fmt::format("managed mariadb: cannot create a server in {}: the path holds {} ({} at character {}), and "
                    "mariadb-install-db, run as root, passes the data directory to `chown` unquoted, so the shell "
                    "{} it; use a target directory whose path has no blanks or *?[ characters",
                    path,
                    c == ' '    ? "a space"
                    : c == '\t' ? "a tab"
                    : c == '\n' ? "a newline"
                                : fmt::format("'{}'", c),
                    c == ' ' || c == '\t' || c == '\n' ? "a blank" : "a wildcard", bad + 1,
                    c == ' ' || c == '\t' || c == '\n' ? "splits" : "expands"));
  }

  fs::path config_path() const { return opt_.data_dir / "my.cnf"; }
  /// The server's tmpdir, also the bootstrap's (see start()).
  fs::path tmp_dir() const { return opt_.data_dir / "tmp"; }

  /// The documented profile (docs/backend-mysql.md), then the protocol's settings over it.
  void build_profile() {
    const auto set = [&](const std::string& key, std::string value) {
      for (auto& [k, v] : profile_)
        if (k == key) {
          v = std::move(value);
          return;
        }
      profile_.emplace_back(key, std::move(value));
    };
    set("innodb_buffer_pool_size", std::to_string(opt_.buffer_bytes));
    set("innodb_log_file_size", std::to_string(log_file_bytes(opt_.buffer_bytes)));
    set("innodb_flush_log_at_trx_commit", "1");
    set("innodb_flush_method", "O_DIRECT");
    set("innodb_doublewrite", "ON");  // a boolean on 10.11, an enum OFF/ON/fast on 11.x: ON is both
    set("innodb_file_per_table", "1");
    set("max_connections", std::to_string(opt_.max_connections));
    set("max_prepared_stmt_count", "1048576");
    set("table_open_cache", "4000");
    set("character_set_server", "utf8mb4");
    set("collation_server", "utf8mb4_general_ci");
    set("skip_name_resolve", "1");
    set("performance_schema", "0");
    for (const auto& [key, value] : opt_.settings) {
      const std::string k = normalized_key(key);
      if (k.empty() || k.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_.") != std::string::npos)
        throw ConfigError(fmt::format("server.settings.{}: not a MariaDB option name", key));
      if (is_reserved(k))
        throw ConfigError(
            fmt::format("server.settings.{}: set by the managed server itself "
                        "(private socket, no TCP port, files in the target directory)",
                        key));
      if (value.find_first_of("\n\r") != std::string::npos)
        throw ConfigError(fmt::format("server.settings.{}: the value spans lines", key));
      set(k, value);
    }
  }

  /// A data_dir left by a crashed run (or kept): stop its server if it still runs, remove it.
  void remove_stale() {
    std::error_code ec;
    if (!fs::exists(opt_.data_dir, ec)) return;
    if (!fs::exists(opt_.data_dir / kMarker, ec)) {
      if (fs::is_directory(opt_.data_dir, ec) && fs::is_empty(opt_.data_dir, ec)) return;
      throw EnvironmentError(
          fmt::format("managed mariadb: {} exists and was not created by drivelab; "
                      "remove it or choose another target directory",
                      opt_.data_dir.string()));
    }
    std::ifstream pid_in(opt_.data_dir / "mysqld.pid");
    long pid = 0;
    if (pid_in >> pid && pid > 1 && is_our_server(static_cast<pid_t>(pid), config_path())) {
      const auto p = static_cast<pid_t>(pid);
      std::cerr << fmt::format(
                       "drivelab: managed mariadb: stopping the server (pid {}) that an earlier drivelab run "
                       "left running in {} (its mysqld.pid, its --defaults-file={} and the {} file prove it "
                       "is drivelab's), then removing the directory\n",
                       p, opt_.data_dir.string(), config_path().string(), kMarker)
                << std::flush;
      ::kill(p, SIGTERM);
      const std::int64_t deadline = monotonic_ns() + std::chrono::nanoseconds(kStopGrace).count();
      while (process_exists(p) && monotonic_ns() < deadline) std::this_thread::sleep_for(50ms);
      if (process_exists(p)) {
        ::kill(p, SIGKILL);
        while (process_exists(p) && monotonic_ns() < deadline + 5'000'000'000) std::this_thread::sleep_for(20ms);
      }
    } else if (pid > 1 && process_exists(static_cast<pid_t>(pid)))
      std::cerr << fmt::format(
                       "drivelab: managed mariadb: {}/mysqld.pid names pid {}, which is not a mariadbd "
                       "started with {}: not drivelab's server, left alone\n",
                       opt_.data_dir.string(), pid, config_path().string())
                << std::flush;
    else
      std::cerr << fmt::format(
                       "drivelab: managed mariadb: removing {}, the server directory an earlier run left "
                       "(killed, or kept with server.keep); no server runs in it\n",
                       opt_.data_dir.string())
                << std::flush;
    // A socket directory outside data_dir (long paths) is named in the marker.
    std::ifstream marker(opt_.data_dir / kMarker);
    for (std::string line; std::getline(marker, line);)
      if (line.rfind("socket_dir=/tmp/drivelab-mariadb-", 0) == 0) fs::remove_all(line.substr(11), ec);
    fs::remove_all(opt_.data_dir, ec);
    if (ec)
      throw EnvironmentError(
          fmt::format("managed mariadb: cannot remove the stale {}: {}", opt_.data_dir.string(), ec.message()));
  }

  void prepare_directory(const passwd* pw) {
    std::error_code ec;
    fs::create_directories(opt_.data_dir, ec);
    if (ec) throw EnvironmentError(fmt::format("managed mariadb: create {}: {}", opt_.data_dir.string(), ec.message()));
    fs::create_directories(tmp_dir(), ec);
    socket_path_ = opt_.data_dir / "mysqld.sock";
    std::string marker_text = "managed MariaDB of drivelab; removed by the next start or stop\n";
    if (socket_path_.string().size() > kMaxSocketPath) {
      // A Unix socket path must fit sun_path: fall back to a private directory in /tmp.
      std::string tmpl = "/tmp/drivelab-mariadb-XXXXXX";
      if (::mkdtemp(tmpl.data()) == nullptr) throw_errno("managed mariadb: mkdtemp in /tmp", errno);
      socket_dir_ = tmpl;
      socket_path_ = socket_dir_ / "mysqld.sock";
      marker_text += "socket_dir=" + socket_dir_.string() + "\n";
    }
    std::ofstream(opt_.data_dir / kMarker) << marker_text;
    if (pw != nullptr) {
      for (const fs::path& p : {opt_.data_dir, tmp_dir(), socket_dir_}) {
        if (!p.empty() && ::chown(p.c_str(), pw->pw_uid, pw->pw_gid) != 0)
          throw_errno(fmt::format("managed mariadb: chown {} to {}", p.string(), kServerUser), errno);
      }
      if (!user_can_access(*pw, opt_.data_dir, R_OK | W_OK | X_OK)) {
        // Name the first directory on the way that the server user cannot search.
        fs::path blocked = opt_.data_dir;
        for (fs::path p = opt_.data_dir.parent_path(); !p.empty() && p != p.root_path(); p = p.parent_path())
          if (!user_can_access(*pw, p, X_OK)) blocked = p;
        throw EnvironmentError(
            fmt::format("managed mariadb: the server runs as '{}', which cannot reach {} ({} is not searchable "
                        "for it); give it access (e.g. chmod o+x {}) or use a target directory it can reach",
                        kServerUser, opt_.data_dir.string(), blocked.string(), blocked.string()));
      }
    }
  }

  void write_config() const {
    std::ofstream out(config_path());
    out << "# Written by drivelab for a managed MariaDB; rewritten at every start.\n"
        << "# Profile and sources: docs/backend-mysql.md\n"
        << "[mysqld]\n"
        << "datadir = " << (opt_.data_dir / "data").string() << "\n"
        << "tmpdir = " << tmp_dir().string() << "\n"
        << "socket = " << socket_path_.string() << "\n"
        << "pid_file = " << (opt_.data_dir / "mysqld.pid").string() << "\n"
        << "log_error = " << log_file().string() << "\n"
        << "skip_networking = 1\n";
    if (as_root_) out << "user = " << kServerUser << "\n";
    for (const auto& [k, v] : profile_) out << k << " = " << v << "\n";
    out.close();
    if (!out) throw EnvironmentError("managed mariadb: cannot write " + config_path().string());
  }

  std::unique_ptr<sql::Connection> connect(int connect_timeout_s = 10) const {
    mysql::ConnectParams p;
    p.endpoint = endpoint();
    p.connect_timeout_s = connect_timeout_s;
    return mysql::connect(p);
  }

  void wait_until_ready() {
    const std::int64_t deadline = monotonic_ns() + std::chrono::nanoseconds(kStartTimeout).count();
    std::string last_error;
    for (;;) {
      if (!server_->running()) {
        throw EnvironmentError(fmt::format("managed mariadb: mariadbd stopped during start-up ({}); the end of {}:\n{}",
                                           server_->describe_status(), log_file().string(),
                                           mysql::tail_of(log_file())));
      }
      std::error_code ec;
      if (fs::exists(socket_path_, ec)) {
        try {
          auto c = connect(2);
          std::unique_ptr<sql::Statement> st(c->createStatement());
          std::unique_ptr<sql::ResultSet> rs(st->executeQuery("SELECT VERSION()"));
          if (rs->next()) version_ = rs->getString(1).asStdString();
          return;
        } catch (const std::exception& e) {
          last_error = e.what();
        }
      }
      if (monotonic_ns() >= deadline) {
        server_->terminate(5s);
        throw EnvironmentError(fmt::format("managed mariadb: no connection on {} within {} s{}; the end of {}:\n{}",
                                           socket_path_.string(), kStartTimeout.count(),
                                           last_error.empty() ? "" : " (last error: " + last_error + ")",
                                           log_file().string(), mysql::tail_of(log_file())));
      }
      std::this_thread::sleep_for(100ms);
    }
  }

  ManagedServerOptions opt_;
  bool as_root_ = false;
  std::string user_;  // the superuser drivelab connects as (unix_socket authentication)
  std::vector<std::pair<std::string, std::string>> profile_;
  fs::path mariadbd_;
  fs::path socket_path_;
  fs::path socket_dir_;  // only when the socket could not live in data_dir
  std::string version_;
  mutable std::unique_ptr<ChildProcess> server_;
  bool stopped_ = true;
};

}  // namespace

/// Measured on 2026-12-02 as GrowthConstants says (oltp/backend/growth.hpp):
///   (240 s: InnoDB extends its files by whole extents, so 60 s did not show) sum(data_length +
///   index_length) 190,873,600 -> 216,743,936 B over 21,039 New-Orders = 1,230 B (du of the .ibd
///   files: 259,217,050 -> 279,139,994 B = 947 B; the larger is taken); ibdata1 (undo) stayed at
///   79,691,776 B (purge reuses it); the redo log is the fixed 256 MiB ib_logfile0 made at
///   start-up, already off the free space when the check runs: no log allowance.
GrowthConstants mariadb_growth_constants() noexcept {
  return {.table_bytes_per_new_order = 1230,
          .wal_bytes_per_new_order = 0,
          .load_wal_per_loaded_byte = 0,
          .log_allowance_bytes = 0};
}

std::unique_ptr<ManagedServer> make_managed_mariadb(ManagedServerOptions options) {
  return std::make_unique<ManagedMariadb>(std::move(options));
}

}  // namespace drivelab::oltp
