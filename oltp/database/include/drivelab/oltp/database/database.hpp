#pragma once
/// \file database.hpp
/// The database keys shared by every OLTP workload (`tpcc:` and `sysbench:` sections) and the one
/// function that turns them into a ready Backend, starting a managed server when asked.
///
///   backend:   sqlite                    sqlite | postgres | mysql | odbc
///   database:  drivelab                  database (schema) name on a server backend
///   <the keys the chosen backend owns>   declared in its own folder (backend_row.hpp): sqlite's
///                                        journal_mode, synchronous, cache_size, busy_timeout
///                                        (sqlite_keys.cpp); odbc's dialect (odbc_keys.cpp)
///   server:                              server backends only (required for them)
///     managed: postgres                  postgres | mariadb: a fresh server in the target directory
///     buffer:  1GiB                      shared_buffers / innodb_buffer_pool_size, capped at half
///                                        of the machine's RAM (with a warning in the record)
///     max_connections: 0                 0 = sessions_needed() + 20; set below sessions_needed()
///                                        it is an error at the key (check_max_connections_key)
///     settings: {key: value}             extra server parameters, applied after the profile
///     keep:    false                     leave the server's data directory after the test
///   -- or --
///     connection: "host=db1 port=5432"   an existing server: libpq conninfo (postgres),
///                                        tcp://host:port or unix:///path.sock (mysql), an ODBC
///                                        connection string or "DSN=name" (odbc)
///     user:    bench                     user name (also accepted inside an ODBC string)
///     password_env: DRIVELAB_DB_PASSWORD the variable holding the password (never recorded)
///     password_file: ~/.drivelab-pw      or a file holding it (first line)
///
/// Errors: unknown words, a managed server with a backend that cannot speak to it (managed
/// mariadb + backend postgres: the row's managed_servers), `server` missing for a server backend,
/// a key another backend owns ("'journal_mode' is a sqlite key; this test's backend is postgres"),
/// `connection` and `managed` together, a password that cannot be read (password_env
/// not set or empty; password_file missing, unreadable or with an empty first line) — each
/// reported at its key by decode.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "drivelab/config/map_reader.hpp"
#include "drivelab/core/names.hpp"
#include "drivelab/oltp/backend/backend.hpp"
#include "drivelab/oltp/backend/backend_row.hpp"
#include "drivelab/oltp/backend/failure_bound.hpp"
#include "drivelab/oltp/backend/server.hpp"
#include "drivelab/results/record.hpp"

namespace drivelab::oltp {

enum class BackendKind { sqlite, postgres, mysql, odbc };
inline constexpr EnumNames<BackendKind, 4> kBackendKindNames{{{"sqlite", BackendKind::sqlite},
                                                              {"postgres", BackendKind::postgres},
                                                              {"mysql", BackendKind::mysql},
                                                              {"odbc", BackendKind::odbc}}};
inline std::string_view to_string(BackendKind k) noexcept { return name_of(kBackendKindNames, k); }
/// The row of `kind` (backend_row.hpp: its word, capabilities, managed servers, dialect and the
/// keys it owns), from the backend's own `<name>_row()`; database.cpp holds the one table of rows,
/// in BackendKind's order.
const BackendRow& row_of(BackendKind kind) noexcept;
/// What the backend of `kind` can do (its row's <name>_capabilities()), known before anything is
/// opened, so a workload can check its keys at decode time without testing backend names.
Capabilities capabilities_of(BackendKind kind) noexcept;

struct DatabaseConfig {
  BackendKind backend = BackendKind::sqlite;
  std::string database = "drivelab";
  /// The dialect the backend speaks: its row's own, or for odbc its `dialect` key (a managed
  /// server's dialect when the key is not given). Set by decode_database.
  SqlDialect dialect = SqlDialect::sqlite;
  /// The values of the keys the backend owns (row_of(backend).keys), as the protocol gave them;
  /// a key not given has its declared default (option_value). For odbc, "dialect" is always set
  /// after decoding (to the resolved dialect's word).
  OptionValues options;

  // managed server
  std::optional<ServerKind> managed;
  std::uint64_t buffer_bytes = 1ull << 30;
  int max_connections = 0;
  std::map<std::string, std::string> settings;
  bool keep_server = false;

  // existing server
  std::string connection;
  std::string user;
  std::string password_env;
  std::string password_file;
};

/// Reads the keys above from `r` (the workload's section reader; the workload reads its own keys
/// from the same reader and calls finish()). `section` is the node `r` reads, for key errors.
void decode_database(config::MapReader& r, const config::Node& section, DatabaseConfig& out);

/// The password of an existing server, read from where `password_env` / `password_file` say.
struct PasswordLookup {
  std::string password;  ///< "" when neither key is set; never recorded or printed
  /// Empty when the password could be read; else why not, naming the variable or the file (never
  /// the password): variable not set or empty; file missing, not a regular file, unreadable, or
  /// its first line empty. The key (`password_env` / `password_file`) is `key`.
  std::string problem;
  std::string key;
};

/// Reads the password (the first line of password_file, '~/' expanded from $HOME, a trailing
/// '\r' dropped; or the value of the variable password_env). decode_database() reports a
/// problem as a config error at the key, so `validate` and a run's own validation catch it
/// before any work; open_database() reads it again when it connects (EnvironmentError if it
/// changed in between).
PasswordLookup look_up_password(const DatabaseConfig& c);

/// The effective settings for the record (no password; the password's source is named).
results::Json to_json(const DatabaseConfig& c);

/// The most sessions one OLTP run has open on its server at the same moment: the one count that
/// sizes a managed server's max_connections, that the decoders check `server.max_connections`
/// against (tpcc_config.cpp, sysbench_config.cpp) and that the runtime checks compare with the
/// server's limit (tpcc_emulator.cpp). The phases of a run, each at its peak:
///   run:    `workers` (the terminals' or threads' sessions: tpcc dedicated = users, pooled =
///           connections; sysbench = threads) + 1 drivelab session alongside them (the server
///           counters before/after the measured phase, the New-Order count after the warm-up,
///           the consistency checks; never two at once);
///   load:   `loaders` (each a connect_for_load() session, the first also creating the schema);
///   finish: Capabilities::finish_load_sessions, after the loaders closed theirs (PostgreSQL 5:
///           CHECKPOINT + 4 parallel ANALYZE; MySQL/MariaDB 1).
/// = max(workers + 1, loaders, finish_load_sessions). `workers`, `loaders` >= 0.
int sessions_needed(int workers, int loaders, const Capabilities& capabilities) noexcept;

/// Checks a managed server's `server.max_connections` (0 = sized by drivelab) against
/// sessions_needed(workers, loaders, capabilities of the backend): an error at that key
/// (file:line:column, so `validate` exits 2) when it is set below, naming the count's parts
/// (`workers_what` names the workers: "dedicated terminals", "threads"); the same for a
/// `server.settings.max_connections` (applied after the profile, it wins). Nothing for an
/// existing server (its limit is asked at run time). `section` is the workload's section.
void check_max_connections_key(const config::Node& section, const DatabaseConfig& config, int workers, int loaders,
                               std::string_view workers_what);

/// Reads `failure_bound: {failed: 50%, window: 5s}` (failure_bound.hpp) from `r`, the workload's
/// section reader: `failed` a percentage 0-100% (100% = no bound), `window` 1 s .. 1 h; a wrong
/// value, an unknown key or a scalar instead of the mapping is an error at its key
/// (file:line:column). Shared by tpcc and sysbench.
void decode_failure_bound(config::MapReader& r, FailureBound& out);
/// {failed_pct, window} for the record's config.
results::Json to_json(const FailureBound& b);

/// What open_database needs to know about the test.
struct OpenRequest {
  std::filesystem::path target_dir;                 ///< files and managed servers go here
  std::string test_name;                            ///< names the files: drivelab-<test>-<workload>.db / -postgres/
  std::string workload;                             ///< "tpcc", "sysbench"
  int connections = 1;                              ///< the most sessions the workload opens at once
  std::function<void(const std::string&)> message;  ///< progress lines
  std::function<void(const std::string&)> warning;  ///< warnings for the record
};

/// A ready database: the backend, and the managed server behind it if any. Destroying it stops
/// the managed server (and removes it unless keep).
class Database {
 public:
  Database(std::unique_ptr<ManagedServer> server, std::unique_ptr<Backend> backend);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  Backend& backend() noexcept { return *backend_; }
  ManagedServer* server() noexcept { return server_.get(); }
  /// {backend: describe(), server: describe() or {connection: redacted}}
  results::Json describe() const;

 private:
  std::unique_ptr<ManagedServer> server_;
  std::unique_ptr<Backend> backend_;
};

/// Opens (and for managed servers creates and starts) the database. Pre-flight checks with clear
/// errors: password variable unset/empty file, server unreachable, authentication failed,
/// database missing (existing servers), ODBC driver or DSN missing, max_connections below
/// `connections`. Throws ConfigError / EnvironmentError / BackendError.
std::unique_ptr<Database> open_database(const DatabaseConfig& config, const OpenRequest& request);

}  // namespace drivelab::oltp
