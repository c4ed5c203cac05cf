#pragma once
/// \file backend.hpp
/// The database backend interface of the OLTP workloads: one small set of abstract types that
/// SQLite (embedded, the default), PostgreSQL (libpq), MySQL/MariaDB (Connector/C++) and ODBC
/// implement. Modelled on sysbench's db_driver.h: the workload knows no driver; every driver
/// classifies its own native errors into what the caller should DO about them.
///
///   Backend     one database (a file or a server + schema); makes Connections; knows its Dialect.
///   Connection  one session, used by one thread at a time (each terminal owns one).
///   Statement   a prepared statement of one Connection: bind by index, execute, fetch rows.
///   BulkLoader  the fast path of the initial population, one per table (SQLite: one prepared
///               INSERT inside large transactions; PostgreSQL: COPY; MySQL: LOAD DATA / array binds).
///
/// Outcomes on the hot path are return values (DbStatus), never exceptions:
///   ok         done;
///   retryable  the transaction was (or must be) aborted because of concurrency and may be rerun
///              from the start: SQLITE_BUSY/SQLITE_LOCKED, deadlock (MySQL 1213, SQLSTATE 40P01),
///              serialization failure (40001), lock wait timeout (MySQL 1205, 55P03);
///   in_doubt   a COMMIT whose result is unknown (connection lost, I/O error during commit): it may
///              or may not have committed, so it is NEVER rerun (that could apply it twice);
///   storage_failure  the drive beneath the database failed: out of space or an I/O error
///              (SQLITE_FULL, SQLITE_IOERR_*; PostgreSQL 53100, 58030, "No space left on device";
///              MariaDB 1021, 1114, "Got error 28"; the same texts through ODBC). Never retried,
///              never counted as in_doubt, even during COMMIT: the test ends `failed` with
///              "storage failure: <the backend's message>" (issue 15; docs/backend-*.md
///              "Storage failures" list each backend's codes);
///   fatal      anything else (syntax, constraint violation, corruption): the run stops.
/// Exceptions (drivelab::BackendError, with SQLSTATE and native code) are used where failure is
/// not an expected outcome: connect, prepare, DDL, bulk load. A storage failure there is thrown
/// as StorageFailure (a BackendError whose text starts with "storage failure: ").
///
/// The one retry loop lives in the TPC-C driver (tpcc_driver.cpp): on `retryable` it rolls back
/// and reruns the whole transaction (counted as a retry); it never reruns `in_doubt`.
///
/// SQL text is written once, portably, with `?` placeholders; each backend rewrites it for its
/// API when preparing (PostgreSQL: $1, $2, ...). Dialect differences that cannot be avoided are
/// hooks of Dialect (e.g. `FOR UPDATE`, which SQLite renders as nothing because its writers are
/// serialised by BEGIN IMMEDIATE).
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "drivelab/core/errors.hpp"
#include "drivelab/oltp/backend/growth.hpp"
#include "drivelab/results/record.hpp"

namespace drivelab::oltp {

/// What the caller should do after a database call (see the file comment).
enum class Outcome { ok, retryable, in_doubt, fatal, storage_failure };
std::string_view to_string(Outcome o) noexcept;

/// A BackendError of a failed drive (Outcome::storage_failure met outside the hot path: the
/// load, DDL, a commit the workload turned into an exception). what() is
/// "storage failure: <what>", the prefix the record's reason is searched for.
class StorageFailure : public BackendError {
 public:
  StorageFailure(const std::string& what, std::string sqlstate = {}, int native_code = 0);
};

/// True when a server's error text says its storage failed, whatever code came with it (server
/// messages through a driver that passes only a generic code, ODBC HY000, a PostgreSQL XX000
/// that quotes errno): "No space left on device" (ENOSPC's strerror), "could not write",
/// "could not extend file", "could not fsync", "Disk full" (MariaDB ER_DISK_FULL), "errno 28" /
/// "error 28" (MariaDB's ER_GET_ERRNO with ENOSPC), "Input/output error" (EIO), "Read-only file
/// system" (EROFS). Case-insensitive. The texts are PostgreSQL's md.c / xlog.c and MariaDB's
/// errmsg-utf8.txt.
bool is_storage_message(std::string_view message) noexcept;

/// Result of one database call. Cheap when ok (empty strings, no allocation).
struct DbStatus {
  Outcome outcome = Outcome::ok;
  int native_code = 0;   ///< backend's own code (SQLite extended result code, MySQL errno, ...)
  std::string sqlstate;  ///< five characters ("40001") or "" when the backend has none (SQLite)
  std::string message;   ///< the backend's message, for the error report
  /// The session is unusable (server gone, socket closed, connection reset). The caller
  /// (the driver's one retry loop) drops the Connection, opens a new one with
  /// Backend::connect() and counts a reconnect; the transaction itself is classified as usual
  /// (in_doubt if the loss happened during COMMIT, retryable before it).
  bool connection_lost = false;

  bool ok() const noexcept { return outcome == Outcome::ok; }
  /// "retryable: database is locked (native 5)" — for logs and error records; a storage failure
  /// reads "storage failure: database or disk is full (native 13)".
  std::string to_string() const;
  static DbStatus success() { return {}; }
};

/// Throws `text` with the SQLSTATE and native code of `s`: as StorageFailure when `s` is a
/// storage failure, else as BackendError. The one place a failed status becomes an exception
/// (the backends' own throw paths and throw_status).
[[noreturn]] void throw_as(const DbStatus& s, const std::string& text);

/// throw_as(s, "<what>: <s.to_string()>") (the load, schema and check paths); a storage failure
/// reads "storage failure: <what>: <message> ...".
[[noreturn]] void throw_status(std::string_view what, const DbStatus& s);

/// Transaction access mode, so backends can pick the right lock mode up front.
/// SQLite: read_write -> BEGIN IMMEDIATE (takes the single writer lock at the start, so a
/// transaction never fails half-way on an upgrade), read_only -> BEGIN (a WAL snapshot reader
/// that never waits for writers). Server backends: START TRANSACTION [READ ONLY].
enum class TxMode { read_write, read_only };

/// The SQL dialects the workloads are written for. The native backends use theirs; the ODBC
/// backend takes it from the protocol (`dialect:`).
enum class SqlDialect { sqlite, postgres, mysql, sqlserver };
std::string_view to_string(SqlDialect d) noexcept;

/// True when an error of a server of dialect `d` says its storage failed: the one list of each
/// database's codes, used by its native backend and by ODBC (docs/backend-*.md "Storage
/// failures"):
///   postgres   SQLSTATE 53100 disk_full, 58030 io_error (errcodes.txt);
///   mysql      native 1021 ER_DISK_FULL, 1114 ER_RECORD_FILE_FULL (an InnoDB table that cannot
///              grow) (MariaDB errmsg-utf8.txt); 3 ER_ERROR_ON_WRITE and 1030 ER_GET_ERRNO are
///              storage failures by their text ("Errcode: 28", "Got error 28");
///   sqlserver  native 1101 / 1105 (no space for a page / an object: filegroup full), 9002
///              (transaction log full), 823 (an operating-system I/O error) (sys.messages);
///   sqlite     the primary result code SQLITE_FULL (13) or SQLITE_IOERR (10), any extended code;
/// and, for every dialect, a message that is_storage_message() recognises.
bool is_storage_error(SqlDialect d, std::string_view sqlstate, int native_code, std::string_view message) noexcept;

/// The language of the server-side procedures TPC-C can call (tpcc_procedures.hpp).
enum class ProcedureLanguage {
  none,     ///< no stored procedures (SQLite) or none written for it (T-SQL)
  plpgsql,  ///< PostgreSQL's PL/pgSQL functions
  sql_psm,  ///< MySQL/MariaDB stored procedures (the SQL/PSM dialect of MySQL 5+)
};

/// Differences of SQL text between databases that the workload cannot write around. The
/// defaults are the text SQLite, PostgreSQL and MySQL share, so a default-constructed Dialect
/// renders exactly what the SQLite backend always ran. make_dialect() fills in the rest; each
/// hook's rendering per dialect and its source are in docs/backend-odbc.md.
struct Dialect {
  std::string name;  ///< "sqlite", "postgres", "mysql", "sqlserver"
  SqlDialect kind = SqlDialect::sqlite;
  /// Appended to a SELECT that reads rows it will update (" FOR UPDATE"); empty for SQLite
  /// (writers are serialised by BEGIN IMMEDIATE) and T-SQL (no FOR UPDATE outside cursors).
  std::string for_update;
  /// Placed right after the table name of such a SELECT: T-SQL's table hint
  /// " WITH (UPDLOCK, ROWLOCK)" (update locks taken while reading, held to the end of the
  /// transaction, at row granularity); empty elsewhere.
  std::string lock_hint;
  /// First-row limiting of an ordered SELECT: `first_row_prefix` goes right after SELECT
  /// (T-SQL "TOP (1) "), `first_row_suffix` after ORDER BY (" LIMIT 1" elsewhere).
  std::string first_row_prefix;
  std::string first_row_suffix = " LIMIT 1";
  /// Column type of date-times (C_SINCE, H_DATE, O_ENTRY_D, OL_DELIVERY_D): "TIMESTAMP";
  /// T-SQL "DATETIME2" (its TIMESTAMP is rowversion, not a date); MySQL "DATETIME" (its
  /// TIMESTAMP ends in 2038 and may auto-update on UPDATE).
  std::string timestamp_type = "TIMESTAMP";
  /// Appended to CREATE TABLE (MySQL: " ENGINE=InnoDB"); empty for SQLite and PostgreSQL.
  std::string table_options;
  /// Appended to CREATE TABLE of tables whose rows are small next to a page (NEW-ORDER,
  /// ORDER-LINE, ORDERS, DISTRICT, WAREHOUSE): SQLite " WITHOUT ROWID" stores them clustered
  /// on the primary key (one B-tree instead of table + key index), as InnoDB always does.
  std::string clustered_small_table_options;
  /// A query of one row and one column: the server's connection limit. PostgreSQL
  /// current_setting('max_connections'), MySQL @@max_connections, T-SQL @@MAX_CONNECTIONS;
  /// empty for SQLite (no server).
  std::string max_connections_sql;
  /// The key column of a table whose server numbers the rows (sysbench's sbtest.id, as its
  /// drivers create it): MySQL "INTEGER NOT NULL AUTO_INCREMENT" (drv_mysql), PostgreSQL
  /// "SERIAL" (drv_pgsql); SQLite "INTEGER NOT NULL" (with PRIMARY KEY (id) the rowid alias),
  /// T-SQL "INTEGER NOT NULL".
  std::string auto_increment_key = "INTEGER NOT NULL";
  /// Errors after which sysbench 1.0.20 restarts the event instead of failing, as its drivers
  /// declare them: MySQL native 1213 (deadlock), 1020 (record changed), 1205 (lock wait timeout)
  /// (drv_mysql.c); PostgreSQL SQLSTATE 40P01 (deadlock), 40001 (serialization), 23505 (unique
  /// violation) (drv_pgsql.c). Empty elsewhere.
  std::vector<int> ignorable_native_errors;
  std::vector<std::string> ignorable_sqlstates;
  /// sysbench 1.0.20's --db-driver of this dialect ("mysql", "pgsql"); empty: sysbench has none.
  std::string sysbench_driver;
  /// TPC-C's server-side procedures in this dialect (tpcc_procedures.hpp).
  ProcedureLanguage procedures = ProcedureLanguage::none;
  /// Primary keys are cheaper built once after a bulk load than kept during it (PostgreSQL heap
  /// tables: docs/backend-postgres.md): the catalogue query of one table's primary key, taking
  /// the table name and giving (constraint name, definition). Empty: keys stay during the load
  /// (InnoDB and SQLite WITHOUT ROWID tables are clustered on them).
  std::string primary_key_sql;
};

/// A single-table SELECT for render_select(). Texts are SQL fragments with `?` placeholders.
struct SelectSql {
  std::string_view columns = {};   ///< "d_tax, d_next_o_id"
  std::string_view table = {};     ///< "district"
  std::string_view where = {};     ///< "d_w_id = ? AND d_id = ?" (required)
  std::string_view order_by = {};  ///< "no_o_id" or empty
  bool first_row_only = false;     ///< only the first row in ORDER BY order (TOP (1) / LIMIT 1)
  bool lock_rows = false;          ///< the transaction will update the rows read (FOR UPDATE / UPDLOCK)
};

/// "SELECT [TOP (1) ]<columns> FROM <table>[ WITH (UPDLOCK, ROWLOCK)] WHERE <where>
/// [ORDER BY <order_by>][ LIMIT 1][ FOR UPDATE]" with the hooks of `d` (dialect.cpp).
std::string render_select(const Dialect& d, const SelectSql& s);

/// The Dialect hooks of `d` (dialect.cpp).
Dialect make_dialect(SqlDialect d);

/// Which of HammerDB v4.12 TPROC-C's driver scripts a `profile: hammerdb` run draws New-Order's
/// item lines like (tpcc_transaction_data.hpp): its PostgreSQL and MariaDB stored procedures
/// differ (rollback 1 in 100 vs 1 in 99; a remote line's warehouse drawn from all W vs from the
/// other W - 1). Backend::hammerdb_script() says which: the mysql backend MariaDB's, every other
/// backend PostgreSQL's.
enum class HammerDbScript { postgresql, mariadb };

/// What a backend can do; the workload adapts instead of testing names.
struct Capabilities {
  /// Only one write transaction at a time in the whole database (SQLite). Writers queue on a
  /// lock; the waits show as response time and, past busy_timeout, as retries.
  bool serialized_writers = false;
  /// Largest useful number of parallel loader threads (SQLite: 1, one writer).
  int max_load_threads = 1;
  /// The database is a file of this process (SQLite): no server, no session limit.
  bool embedded = false;
  /// TPC-C's transactions can run as one server-side procedure call each (the native
  /// PostgreSQL and MySQL/MariaDB backends, HammerDB's way; tpcc_procedures.hpp).
  bool server_procedures = false;
  /// Sessions Backend::finish_load() has open at once (after the loaders closed theirs):
  /// PostgreSQL one for CHECKPOINT + its parallel ANALYZE sessions; MySQL/MariaDB one; SQLite 0.
  /// Counted by sessions_needed() (database.hpp).
  int finish_load_sessions = 1;
};

/// A prepared statement. Owned by the caller; belongs to one Connection and must not outlive it.
/// Bind indexes are 1-based (as in SQL/ODBC/SQLite); column indexes are 0-based (as in SQLite
/// and libpq). Binds stay in effect until rebound. Text passed to bind_text must stay valid
/// until execute() returns (backends may bind without copying).
class Statement {
 public:
  virtual ~Statement() = default;
  virtual void bind_int64(int index, std::int64_t value) = 0;
  virtual void bind_double(int index, double value) = 0;
  virtual void bind_text(int index, std::string_view value) = 0;
  virtual void bind_null(int index) = 0;

  /// Runs the statement with the current binds, discarding any unread rows of a previous
  /// execution. For a query, the cursor is then before the first row: call next().
  virtual DbStatus execute() = 0;
  /// Advances to the next row. Returns true when a row is available; false at the end or on
  /// error, with `status` telling which (ok at the end).
  virtual bool next(DbStatus& status) = 0;
  /// Drops the rest of the current result without decoding its values: what sysbench 1.0.20
  /// does with every query result (it stores the result and walks it with mysql_stmt_fetch
  /// without bound buffers, so no value is copied; PostgreSQL: PQclear of the whole PGresult).
  /// Returns ok, or the error met while reading to the end. The default calls next() to the
  /// end (right where rows are produced while they are read: SQLite steps the statement, ODBC
  /// fetches from the server); a backend whose execute() already holds the whole result in
  /// client memory may free it instead.
  virtual DbStatus discard_rows() {
    DbStatus st;
    while (next(st)) {
    }
    return st;
  }
  /// Rows changed by the last execute() of an INSERT/UPDATE/DELETE.
  virtual std::int64_t affected_rows() const = 0;

  /// Column access on the current row (after next() returned true).
  virtual bool is_null(int column) const = 0;
  virtual std::int64_t column_int64(int column) const = 0;
  virtual double column_double(int column) const = 0;
  /// Valid until the next call of next() or execute().
  virtual std::string_view column_text(int column) const = 0;
};

/// Fast insertion of many rows into one table (initial population). Values are given column by
/// column, in the column order given to Connection::bulk_loader(), then end_row(). Text passed
/// to add_text must stay valid until end_row() returns (backends may bind without copying).
/// Runs inside the caller's transaction (begin/commit on the Connection). Errors throw
/// BackendError.
class BulkLoader {
 public:
  virtual ~BulkLoader() = default;
  virtual void add_int64(std::int64_t value) = 0;
  virtual void add_double(double value) = 0;
  virtual void add_text(std::string_view value) = 0;
  virtual void add_null() = 0;
  virtual void end_row() = 0;
  /// Flushes buffered rows (COPY end, array bind). Called before commit.
  virtual void flush() = 0;
};

/// One database session. Not thread-safe: one thread uses it at a time.
class Connection {
 public:
  virtual ~Connection() = default;
  virtual DbStatus begin(TxMode mode) = 0;
  /// Commit. A failure whose effect is unknown is reported as Outcome::in_doubt.
  virtual DbStatus commit() = 0;
  /// Rollback; harmless when no transaction is open.
  virtual DbStatus rollback() = 0;
  /// Prepares `sql` (portable text with `?` placeholders). Throws BackendError (a bad statement
  /// is a bug or a schema mismatch, not a runtime outcome). Prepare once, execute many times.
  virtual std::unique_ptr<Statement> prepare(std::string_view sql) = 0;
  /// Executes one or more statements without results (DDL, pragmas). Throws BackendError.
  virtual void execute_immediate(std::string_view sql) = 0;
  /// A bulk loader for `table` with `columns` in that order. Throws BackendError.
  virtual std::unique_ptr<BulkLoader> bulk_loader(std::string_view table, const std::vector<std::string>& columns) = 0;
  /// While `flag` is set, waits inside the backend (lock waits) give up early with `retryable`,
  /// so a stop request is honoured within a fraction of a second. nullptr: never cancelled.
  virtual void set_cancel_flag(const std::atomic<bool>* flag) noexcept = 0;
};

/// One database. Thread-safe: connect() may be called from several threads.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual const Dialect& dialect() const noexcept = 0;
  virtual Capabilities capabilities() const noexcept = 0;
  /// Opens a session with the configured settings. Throws BackendError / EnvironmentError.
  virtual std::unique_ptr<Connection> connect() = 0;
  /// Opens a session tuned for the initial population (SQLite: no journal, no fsync; the
  /// population is rebuilt when interrupted). finish_load() must be called after it is closed.
  virtual std::unique_ptr<Connection> connect_for_load() = 0;
  /// Makes the loaded database durable and switches it to the configured run settings.
  virtual void finish_load() = 0;
  /// True if the database exists (file present / schema present).
  virtual bool exists() const = 0;
  /// Removes every object of the database (files or schema). No-op if absent.
  virtual void destroy() = 0;
  /// Bytes of the database on the drive (files incl. WAL), if known.
  virtual std::optional<std::uint64_t> size_bytes() const = 0;
  /// Self-description for the result record: {backend, version, path/dsn, settings...}.
  /// Never contains a password.
  virtual results::Json describe() const = 0;
  /// A snapshot of the server's cumulative counters as a flat JSON object of numbers, taken
  /// before and after the measured phase so the record can hold their difference
  /// (PostgreSQL: pg_stat_database xact_commit, xact_rollback, blks_read, blks_hit, tup_*;
  /// MySQL/MariaDB: SHOW GLOBAL STATUS Innodb_rows_*, Innodb_data_reads/writes/read/written,
  /// Com_commit, ...). Empty object when the backend has none (SQLite). Throws BackendError.
  virtual results::Json server_counters() { return results::Json::object(); }
  /// The HammerDB script whose New-Order inputs a `profile: hammerdb` TPC-C run copies
  /// (HammerDbScript above). Default PostgreSQL's; the mysql backend answers MariaDB's.
  virtual HammerDbScript hammerdb_script() const noexcept { return HammerDbScript::postgresql; }
  /// How the database grows on the drive under TPC-C when this backend keeps it in files of its
  /// own (growth.hpp: SQLite); nullopt for a server backend, whose database is a managed server's
  /// (ManagedServer::growth_constants()) or not on the drive at all (an existing server).
  virtual std::optional<GrowthConstants> growth_constants() const noexcept { return std::nullopt; }
};

}  // namespace drivelab::oltp
