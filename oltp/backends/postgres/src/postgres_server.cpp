// A PostgreSQL cluster created by drivelab for one test (server.hpp; docs/backend-postgres.md
// has the settings profile and its sources).
//
//   start(): stale cleanup -> data directory (owned by the server user) -> initdb -> settings
//            profile (drivelab.conf, included last by postgresql.conf) -> pg_ctl start -w ->
//            a test connection on the private socket.
//   stop():  pg_ctl stop -m fast (SIGKILL after 30 s) -> remove the data directory unless keep.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/core/process.hpp"
#include "drivelab/oltp/backend/server.hpp"
#include "drivelab/oltp/backends/postgres/postgres_backend.hpp"
#include "postgres_common.hpp"
#include "postgres_process.hpp"

namespace drivelab::oltp {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

/// The socket file's port number (.s.PGSQL.5432). The socket directory is private, so the
/// usual port never collides with a system server, which listens elsewhere.
constexpr int kPort = 5432;
constexpr const char* kSuperuser = "postgres";
/// Written into the data directory after initdb: lets a later run recognise the directory as
/// drivelab's (stale cleanup) even if PG_VERSION were missing.
constexpr const char* kMarker = "drivelab-managed";
/// sun_path holds 108 bytes including the NUL.
constexpr std::size_t kMaxSocketPath = 107;

/// /usr/lib/postgresql/<newest>/bin, or $DRIVELAB_PG_BINDIR when set (other layouts).
fs::path find_bin_dir() {
  if (const char* env = std::getenv("DRIVELAB_PG_BINDIR"); env != nullptr && *env != '\0') {
    if (!fs::exists(fs::path(env) / "initdb"))
      throw EnvironmentError(fmt::format("managed postgres: DRIVELAB_PG_BINDIR={} has no initdb", env));
    return env;
  }
  fs::path best;
  int best_version = -1;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    const std::string name = e.path().filename().string();
    const int version = std::atoi(name.c_str());
    const fs::path bin = e.path() / "bin";
    if (version > best_version && fs::exists(bin / "initdb") && fs::exists(bin / "pg_ctl") &&
        fs::exists(bin / "postgres")) {
      best = bin;
      best_version = version;
    }
  }
  if (best.empty())
    throw EnvironmentError(
        "managed postgres: PostgreSQL server programs not found in /usr/lib/postgresql/*/bin "
        "(apt-get install postgresql, or set DRIVELAB_PG_BINDIR)");
  return best;
}

std::uint64_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
}

std::string kib(std::uint64_t bytes) { return fmt::format("{}kB", bytes / 1024); }

/// postgresql.conf value: always quoted (valid for every parameter type), ' doubled.
std::string conf_value(const std::string& v) {
  std::string out = "'";
  for (char c : v) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

using Settings = std::vector<std::pair<std::string, std::string>>;

void set(Settings& s, const std::string& key, std::string value) {
  const auto it = std::find_if(s.begin(), s.end(), [&](const auto& kv) { return kv.first == key; });
  if (it != s.end())
    it->second = std::move(value);
  else
    s.emplace_back(key, std::move(value));
}

/// The settings profile (docs/backend-postgres.md explains each value and its source), then
/// the protocol's own settings, which win.
Settings settings_profile(const ManagedServerOptions& o, const fs::path& socket_dir) {
  const std::uint64_t buffer = std::max<std::uint64_t>(o.buffer_bytes, 128 * 1024);
  const std::uint64_t ram = physical_memory_bytes();
  Settings s;
  // Reachable only through the private socket.
  set(s, "listen_addresses", "");
  set(s, "unix_socket_directories", socket_dir.string());
  set(s, "port", std::to_string(kPort));
  set(s, "max_connections", std::to_string(std::max(o.max_connections, 10)));
  // Memory.
  set(s, "shared_buffers", kib(buffer));
  set(s, "effective_cache_size", kib(std::max(buffer, ram / 4 * 3)));
  set(s, "wal_buffers", kib(std::clamp<std::uint64_t>(buffer / 32, 1ull << 20, 64ull << 20)));
  // Checkpoints driven by time and spread over the interval, not forced by WAL volume.
  set(s, "checkpoint_timeout", "5min");
  set(s, "checkpoint_completion_target", "0.9");
  set(s, "max_wal_size", "16GB");
  set(s, "min_wal_size", "1GB");
  // Durability is what the benchmark measures: the safe defaults, written down explicitly.
  set(s, "fsync", "on");
  set(s, "synchronous_commit", "on");
  set(s, "full_page_writes", "on");
  set(s, "wal_level", "replica");
  // A backend's PANIC (WAL write: No space left on device) ends the server instead of a silent
  // crash-restart cycle whose recovered server the terminals would reconnect to and go on
  // measuring: the test fails with the log's cause (issue 15).
  set(s, "restart_after_crash", "off");
  // Diagnostics in the server log (data directory).
  set(s, "log_checkpoints", "on");
  set(s, "logging_collector", "off");
  for (const auto& [key, value] : o.settings) {
    const bool valid_key = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
    });
    if (!valid_key || value.find_first_of("\n\r") != std::string::npos)
      throw ConfigError(
          fmt::format("server.settings: '{}' is not a PostgreSQL parameter name (or its value has a line break)", key));
    set(s, key, value);
  }
  return s;
}

void write_file(const fs::path& path, const std::string& text, std::ios::openmode mode = std::ios::trunc) {
  std::ofstream out(path, std::ios::out | mode);
  out << text;
  out.close();
  if (!out) throw EnvironmentError(fmt::format("managed postgres: cannot write {}", path.string()));
}

void chown_to(const pg::ServerUser& u, const fs::path& p) {
  if (u.switch_user && ::chown(p.c_str(), u.uid, u.gid) != 0)
    throw_errno(fmt::format("managed postgres: chown {} to {}", p.string(), u.name), errno);
}

bool wait_until_gone(pid_t pid, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (pg::is_postgres_process(pid)) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

/// SIGKILL to the postmaster and its process group (pg_ctl starts it in a session of its own).
void kill_postmaster(pid_t pid) {
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
}

class ManagedPostgres final : public ManagedServer {
 public:
  explicit ManagedPostgres(ManagedServerOptions o) : opt_(std::move(o)) {}
  ~ManagedPostgres() override { stop(); }
  ManagedPostgres(const ManagedPostgres&) = delete;
  ManagedPostgres& operator=(const ManagedPostgres&) = delete;

  void start() override {
    if (running()) return;
    if (opt_.data_dir.empty()) throw InternalError("managed postgres: no data directory");
    user_ = pg::server_user();
    bin_dir_ = find_bin_dir();
    data_dir_ = fs::absolute(opt_.data_dir).lexically_normal();
    if (user_.switch_user) pg::check_traversable(user_, data_dir_.parent_path());
    remove_stale();

    fs::create_directories(data_dir_);
    owns_data_dir_ = true;
    chown_to(user_, data_dir_);
    fs::permissions(data_dir_, fs::perms::owner_all);  // initdb wants 0700 (or 0750)
    if (user_.switch_user) pg::check_traversable(user_, data_dir_);

    choose_socket_dir();
    initdb();
    write_configuration();
    start_server();
  }

  void stop() noexcept override {
    try {
      if (!owns_data_dir_) return;
      if (const auto pid = pg::postmaster_pid(data_dir_); pid && pg::is_postgres_process(*pid)) {
        stop_postmaster(*pid, "fast", 30s, 40s);
      }
      unguard_process(std::exchange(guarded_pid_, -1));
      std::error_code ec;
      if (owns_socket_dir_) fs::remove_all(socket_dir_, ec);
      if (!opt_.keep) fs::remove_all(data_dir_, ec);
      owns_data_dir_ = false;
      owns_socket_dir_ = false;
    } catch (...) {  // NOLINT(bugprone-empty-catch): as below
      // stop() never throws (called from destructors); what could not be removed stays.
    }
  }

  bool running() const override {
    if (data_dir_.empty()) return false;
    const auto pid = pg::postmaster_pid(data_dir_);
    return pid && pg::is_postgres_process(*pid);
  }

  Endpoint endpoint() const override {
    Endpoint e;
    e.socket_path = socket_dir_.string();
    e.port = kPort;
    e.user = kSuperuser;
    return e;
  }

  void create_database(const std::string& name) override {
    const pg::ConnHandle c = pg::connect(admin_options());
    const pg::ResultHandle r = pg::exec_or_throw(
        c.get(), "SELECT 1 FROM pg_database WHERE datname = " + pg::quote_literal(name), "look up database");
    if (PQntuples(r.get()) == 0)
      pg::exec_or_throw(c.get(), "CREATE DATABASE " + pg::quote_ident(name), "create database " + name);
  }

  fs::path log_file() const override { return data_dir_.empty() ? fs::path{} : data_dir_ / "server.log"; }

  GrowthConstants growth_constants() const noexcept override { return postgres_growth_constants(); }

  WalSettings wal_settings() const override {
    WalSettings w;  // the profile's values (write_configuration), if the server cannot be asked
    try {
      const pg::ConnHandle c = pg::connect(admin_options());
      const pg::ResultHandle r = pg::exec_or_throw(
          c.get(),
          "SELECT pg_size_bytes(current_setting('max_wal_size')), pg_size_bytes(current_setting('wal_keep_size')), "
          "EXTRACT(EPOCH FROM current_setting('checkpoint_timeout')::interval)::float8, "
          "current_setting('checkpoint_completion_target')::float8",
          "read the WAL settings");
      if (PQntuples(r.get()) == 1) {
        w.max_wal_size_bytes = std::strtoull(PQgetvalue(r.get(), 0, 0), nullptr, 10);
        w.wal_keep_size_bytes = std::strtoull(PQgetvalue(r.get(), 0, 1), nullptr, 10);
        w.checkpoint_timeout_s = std::strtod(PQgetvalue(r.get(), 0, 2), nullptr);
        w.checkpoint_completion_target = std::strtod(PQgetvalue(r.get(), 0, 3), nullptr);
      }
    } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): unreadable: the profile's settings stand
    }
    return w;
  }

  results::Json describe() const override {
    results::Json settings = results::Json::object();
    for (const auto& [k, v] : applied_) settings[k] = v;
    return results::Json{{"kind", "postgres"},
                         {"version", version_},
                         {"bin_dir", bin_dir_.string()},
                         {"data_dir", data_dir_.string()},
                         {"socket_dir", socket_dir_.string()},
                         {"port", kPort},
                         {"superuser", kSuperuser},
                         {"server_os_user", user_.name},
                         {"keep", opt_.keep},
                         {"settings", settings}};
  }

 private:
  PostgresOptions admin_options() const {
    PostgresOptions o;
    o.endpoint = endpoint();
    o.database = "postgres";
    o.application_name = "drivelab-admin";
    return o;
  }

  /// A data directory left by a crashed run: stop its server if one still runs, then remove it.
  /// Anything that does not look like a PostgreSQL data directory is refused, never removed.
  void remove_stale() {
    std::error_code ec;
    if (!fs::exists(data_dir_, ec)) return;
    if (!fs::is_directory(data_dir_, ec))
      throw EnvironmentError(fmt::format("managed postgres: {} exists and is not a directory", data_dir_.string()));
    const bool ours = fs::exists(data_dir_ / "PG_VERSION") || fs::exists(data_dir_ / "postmaster.pid") ||
                      fs::exists(data_dir_ / kMarker) || fs::is_empty(data_dir_, ec);
    if (!ours)
      throw EnvironmentError(
          fmt::format("managed postgres: {} exists and is not a PostgreSQL data directory; "
                      "drivelab does not remove it (move it away or choose another target)",
                      data_dir_.string()));
    if (const auto pid = pg::postmaster_pid(data_dir_); pid && pg::is_postgres_process(*pid)) {
      // Stopped only when provably drivelab's: our marker in the directory, and the process the
      // directory's postmaster.pid names runs in that very directory (a postmaster's working
      // directory is its data directory: not a pid reused by another cluster).
      const auto cwd = process_cwd(*pid);
      std::error_code canon_ec;
      const fs::path dir = fs::weakly_canonical(data_dir_, canon_ec);
      if (!fs::exists(data_dir_ / kMarker, ec) || !cwd || *cwd != dir)
        throw EnvironmentError(fmt::format(
            "managed postgres: a PostgreSQL server (pid {}) runs with {}, which is not provably drivelab's ({}): "
            "drivelab leaves it alone. Stop it (pg_ctl stop -D {}) or choose another target",
            *pid, data_dir_.string(),
            !fs::exists(data_dir_ / kMarker, ec) ? fmt::format("no {} file in it", kMarker)
            : cwd                                ? fmt::format("its working directory is {}", cwd->string())
                                                 : std::string("its working directory cannot be read"),
            data_dir_.string()));
      std::cerr << fmt::format(
                       "drivelab: managed postgres: stopping the server (pid {}) that an earlier drivelab run "
                       "left running in {} (its postmaster.pid, working directory and {} file prove it is "
                       "drivelab's), then removing the directory\n",
                       *pid, data_dir_.string(), kMarker)
                << std::flush;
      if (!stop_postmaster(*pid, "immediate", 10s, 15s))
        throw EnvironmentError(
            fmt::format("managed postgres: the stale server (pid {}) of {} does not stop", *pid, data_dir_.string()));
    } else if (!fs::is_empty(data_dir_, ec)) {
      std::cerr << fmt::format(
                       "drivelab: managed postgres: removing {}, the server directory an earlier run left "
                       "(killed, or kept with server.keep); no server runs in it\n",
                       data_dir_.string())
                << std::flush;
    }
    fs::remove_all(data_dir_, ec);
    if (ec)
      throw EnvironmentError(
          fmt::format("managed postgres: cannot remove the stale {}: {}", data_dir_.string(), ec.message()));
  }

  /// The data directory itself, unless its socket path would not fit in sun_path: then a
  /// private directory in /tmp.
  void choose_socket_dir() {
    socket_dir_ = data_dir_;
    if ((data_dir_ / fmt::format(".s.PGSQL.{}.lock", kPort)).string().size() <= kMaxSocketPath) return;
    std::string tmpl = "/tmp/drivelab-pg-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) throw_errno("managed postgres: mkdtemp for the socket directory", errno);
    socket_dir_ = tmpl;
    owns_socket_dir_ = true;
    chown_to(user_, socket_dir_);
  }

  /// `pg_ctl stop -m <mode>` of the server in data_dir_, waiting up to `wait` (pg_ctl -t; the
  /// command is killed after `limit`); a postmaster `pid` still there 1 s later is SIGKILLed with
  /// its group. False if it is still there 5 s after that.
  bool stop_postmaster(pid_t pid, const char* mode, std::chrono::seconds wait, std::chrono::seconds limit) {
    pg::run_command(user_,
                    {(bin_dir_ / "pg_ctl").string(), "stop", "-D", data_dir_.string(), "-m", mode, "-w", "-t",
                     std::to_string(wait.count()), "-s"},
                    limit);
    if (wait_until_gone(pid, 1s)) return true;
    kill_postmaster(pid);
    return wait_until_gone(pid, 5s);
  }

  void initdb() {
    const CommandResult r =
        pg::run_command(user_,
                        {(bin_dir_ / "initdb").string(), "-D", data_dir_.string(), "-U", kSuperuser, "-A", "trust",
                         "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"},
                        180s);
    if (r.exit_code != 0)
      throw EnvironmentError(fmt::format("managed postgres: initdb of {} failed ({}):\n{}", data_dir_.string(),
                                         r.timed_out ? "timed out" : fmt::format("exit {}", r.exit_code),
                                         tail_of_text(r.output)));
    write_file(data_dir_ / "initdb.log", r.output);
    write_file(data_dir_ / kMarker, "created by drivelab for one test; removed when the test ends\n");
  }

  void write_configuration() {
    applied_ = settings_profile(opt_, socket_dir_);
    std::string conf = "# drivelab settings profile (docs/backend-postgres.md), then the protocol's settings\n";
    for (const auto& [k, v] : applied_) conf += fmt::format("{} = {}\n", k, conf_value(v));
    write_file(data_dir_ / "drivelab.conf", conf);
    write_file(data_dir_ / "postgresql.conf", "\ninclude 'drivelab.conf'\n", std::ios::app);
    // Only the private socket, only trust: nothing else can reach this server.
    write_file(data_dir_ / "pg_hba.conf", "# drivelab managed server: local socket only\nlocal all all trust\n");
    for (const char* f : {"drivelab.conf", "initdb.log", kMarker}) chown_to(user_, data_dir_ / f);
  }

  void start_server() {
    const fs::path log = log_file();
    // Guarded from before pg_ctl starts it: a drivelab killed while `pg_ctl start -w` waits would
    // otherwise leave a postmaster that nothing stops (found by the fresh review of issue 29).
    const fs::path pid_file = data_dir_ / "postmaster.pid";
    guard_pid_file(pid_file, "postgres", SIGQUIT, 5s);
    struct Unguard {
      fs::path file;
      ~Unguard() { unguard_pid_file(file); }
    } unguard{pid_file};
    const CommandResult r = pg::run_command(
        user_,
        {(bin_dir_ / "pg_ctl").string(), "start", "-D", data_dir_.string(), "-l", log.string(), "-w", "-t", "60", "-s"},
        75s);
    if (r.exit_code != 0 || !running()) {
      std::string tail = tail_of_file(log);
      if (tail.empty()) tail = tail_of_text(r.output);
      throw EnvironmentError(fmt::format(
          "managed postgres: the server in {} did not start ({}). Last lines of {}:\n{}", data_dir_.string(),
          r.timed_out ? "timed out" : fmt::format("pg_ctl exit {}", r.exit_code), log.string(), tail));
    }
    // Stopped with drivelab whatever ends it (process.hpp: guard_process): SIGQUIT is the
    // postmaster's immediate shutdown; its process group is SIGKILLed 5 s later if still there.
    if (const auto pid = pg::postmaster_pid(data_dir_)) {
      guarded_pid_ = *pid;
      guard_process(*pid, "postgres", SIGQUIT, 5s);
    }
    try {
      const pg::ConnHandle c = pg::connect(admin_options());
      const pg::ResultHandle v = pg::exec_or_throw(c.get(), "SHOW server_version", "server version");
      version_ = PQgetvalue(v.get(), 0, 0);
    } catch (const BackendError& e) {
      throw EnvironmentError(fmt::format("managed postgres: started but not reachable on {}: {}. Last lines of {}:\n{}",
                                         socket_dir_.string(), e.what(), log.string(), tail_of_file(log)));
    }
  }

  ManagedServerOptions opt_;
  pg::ServerUser user_;
  fs::path bin_dir_;
  fs::path data_dir_;
  fs::path socket_dir_;
  bool owns_data_dir_ = false;
  bool owns_socket_dir_ = false;
  pid_t guarded_pid_ = -1;  ///< the postmaster registered with guard_process
  std::string version_;
  Settings applied_;
};

}  // namespace

/// Measured on 2026-12-02 as GrowthConstants says (oltp/backend/growth.hpp):
///   pg_database_size 229,801,319 -> 245,292,391 B over 4,988 New-Orders = 3,106 B (MVCC: every
///   STOCK, CUSTOMER, DISTRICT update writes a new row version); pg_stat_wal wal_bytes
///   153,302,959 B = 30,734 B of WAL per New-Order; the load left 218,112,000 B in pg_wal for
///   229.8 MB loaded (0.95 per loaded byte), recycled by the run (pg_wal stayed at that size).
GrowthConstants postgres_growth_constants() noexcept {
  return {.table_bytes_per_new_order = 3106,
          .wal_bytes_per_new_order = 30734,
          .load_wal_per_loaded_byte = 0.95,
          .log_allowance_bytes = 0};
}

std::unique_ptr<ManagedServer> make_managed_postgres(ManagedServerOptions options) {
  return std::make_unique<ManagedPostgres>(std::move(options));
}

}  // namespace drivelab::oltp
