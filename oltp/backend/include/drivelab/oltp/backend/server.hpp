#pragma once
/// \file server.hpp
/// Where a server database lives and how to reach it: either a *managed* server that drivelab
/// creates inside the target directory for one test (so the database files are on the drive
/// under test), or an *existing* server named by a connection string.
///
/// Managed servers (`server: {managed: postgres}` / `{managed: mariadb}`):
///   - a fresh cluster in `<target>/drivelab-<test>-<kind>/` (initdb / mariadb-install-db);
///   - started on a private Unix socket in that directory (no TCP port is opened);
///   - with a documented settings profile (docs/oltp-servers.md): buffer size from the protocol,
///     capped to half of the machine's RAM with a warning, durability settings left at the
///     server's safe defaults (fsync on, full_page_writes on / innodb_flush_log_at_trx_commit=1,
///     innodb_flush_method=O_DIRECT), max_connections sized for the test's users;
///   - stopped at the end of the test and removed unless `keep: true`; a stale one left by a
///     crashed run is stopped and removed on the next start;
///   - when drivelab runs as root, the server processes run as the packages' system users
///     (`postgres`, `mysql`), which must be able to reach the target directory.
/// Existing servers (`server: {connection: ...}`): nothing is created or removed but the
/// benchmark's tables (in `database:`). Passwords come from an environment variable or a file
/// named in the protocol and never appear in records, journals or messages.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "drivelab/core/errors.hpp"
#include "drivelab/core/names.hpp"
#include "drivelab/oltp/backend/growth.hpp"
#include "drivelab/results/record.hpp"

namespace drivelab::oltp {

enum class ServerKind { postgres, mariadb };
inline constexpr EnumNames<ServerKind, 2> kServerKindNames{
    {{"postgres", ServerKind::postgres}, {"mariadb", ServerKind::mariadb}}};
inline std::string_view to_string(ServerKind k) noexcept { return name_of(kServerKindNames, k); }

/// How to reach a server (managed or existing). Fields a backend does not use are empty.
struct Endpoint {
  std::string socket_path;  ///< Unix socket: PostgreSQL: the socket *directory*; MariaDB: the socket file
  std::string host;         ///< TCP host when no socket
  int port = 0;             ///< TCP port, or PostgreSQL's port number of the socket file (.s.PGSQL.<port>)
  std::string user;
  std::string password;  ///< never recorded
};

/// Settings of a managed server.
struct ManagedServerOptions {
  ServerKind kind = ServerKind::postgres;
  std::filesystem::path data_dir;           ///< created by start(); must be inside the target directory
  std::uint64_t buffer_bytes = 1ull << 30;  ///< shared_buffers / innodb_buffer_pool_size (already capped)
  int max_connections = 200;                ///< server's max_connections (users + loaders + margin)
  /// Extra server parameters from the protocol (`settings:`), applied after the profile, recorded.
  std::map<std::string, std::string> settings;
  bool keep = false;  ///< leave the data directory after stop()
};

/// A database server process owned by drivelab for the duration of one test.
/// Thread-compatible (driven by the emulator thread).
class ManagedServer {
 public:
  virtual ~ManagedServer() = default;  ///< implementations stop() and, unless keep, remove data_dir
  /// Creates the cluster (removing a stale one first), writes the settings profile, starts the
  /// server and waits until it accepts connections on its socket (at most 60 s). Throws
  /// EnvironmentError naming the step and quoting the tail of the server's log.
  virtual void start() = 0;
  /// Fast, clean shutdown (SIGINT/`mariadb-admin shutdown`, then SIGKILL after 30 s). Removes
  /// data_dir unless keep. Never throws; safe to call twice.
  virtual void stop() noexcept = 0;
  /// True while the server process is alive.
  virtual bool running() const = 0;
  /// Where to connect (valid after start()); the superuser of the fresh cluster.
  virtual Endpoint endpoint() const = 0;
  /// Creates database `name` if it does not exist. Throws BackendError.
  virtual void create_database(const std::string& name) = 0;
  /// {kind, version, data_dir, socket, settings profile as applied}. No passwords.
  virtual results::Json describe() const = 0;
  /// The server's own log in data_dir (PostgreSQL `server.log`, MariaDB `error.log`): where a
  /// server says why it failed ("could not write to file ...: No space left on device",
  /// "checkpoint request failed" only points at it). Readable until stop() removes data_dir.
  virtual std::filesystem::path log_file() const = 0;
  /// How its database grows on the drive under TPC-C (growth.hpp), measured for this server.
  virtual GrowthConstants growth_constants() const noexcept = 0;
  /// The bounds of its write-ahead log as running (PostgreSQL: read on a session of its own,
  /// the profile's values when they cannot be read); WalSettings{} for a server whose log has a
  /// fixed size made at start-up (MariaDB's redo log), where they are not used.
  virtual WalSettings wal_settings() const { return {}; }
};

/// How many lines of a managed server's log a failed test's reason quotes.
inline constexpr int kServerLogLines = 20;
/// How many entries of the log's end the reason quotes besides its error lines.
inline constexpr int kServerLogContextLines = 5;

/// What of a server log's `text` a failed test's reason quotes (issue 29: not 20 lines of
/// start-up noise or of a PL/pgSQL body): its error reports — a log entry (a line that starts
/// with a timestamp digit) whose level is ERROR, FATAL or PANIC (PostgreSQL "... ERROR:  ...",
/// MariaDB "... [ERROR] ..."), or that names a storage problem (is_storage_message), each with
/// the DETAIL and HINT entries right after it; the entries that say what ended or broke the
/// server below those levels (PostgreSQL "received immediate shutdown request", "server process
/// (PID n) was terminated by signal 9", "... exited with exit code 1"; MariaDB "Normal shutdown",
/// "Got signal"); and the last kServerLogContextLines entries (what the server did last). Never CONTEXT or
/// STATEMENT entries nor the lines that continue an entry (a statement's or a function's body).
/// In log order, at most `lines` + kServerLogContextLines distinct lines (distinct_tail_of_text:
/// a repeat shown once, at its last place, with " [N times]"). `error_lines`: an error report
/// was found.
struct ServerLogQuote {
  std::string text;
  bool error_lines = false;
};
ServerLogQuote server_log_quote(const std::string& text, int lines = kServerLogLines);

/// `reason` with server_log_quote of `server`'s log (its last 64 KiB) appended as
/// "\nserver log (<file>, its last N distinct ERROR/FATAL/PANIC lines, repeats counted; ...):\n<lines>",
/// so the cause is in the record before stop() removes the directory (issue 15). When `reason`
/// is not already a storage failure but the log holds one (backend.hpp is_storage_message), the
/// result starts with "storage failure: <that line> (server log); ". `reason` unchanged when the
/// log is missing or empty.
std::string with_server_log(const std::string& reason, const ManagedServer& server, int lines = kServerLogLines);

/// Runs `body()`; an exception leaving it is rethrown as BackendError(with_server_log(what,
/// *server())) when `server()` (called then: the server may have been started inside `body`)
/// is a managed server with a log, else rethrown as it was. The emulators' phases (tpcc,
/// sysbench) run inside it.
template <class Body, class ServerOf>
void adding_server_log(Body&& body, ServerOf&& server) {
  try {
    body();
  } catch (const std::exception& ex) {
    const ManagedServer* s = server();
    if (s == nullptr) throw;
    std::string reason = with_server_log(ex.what(), *s);
    if (reason == ex.what()) throw;
    throw BackendError(reason);
  }
}

/// Each server's factory is in its backend's header: make_managed_postgres()
/// (backends/postgres/postgres_backend.hpp), make_managed_mariadb() (backends/mysql/mysql_backend.hpp).

}  // namespace drivelab::oltp
