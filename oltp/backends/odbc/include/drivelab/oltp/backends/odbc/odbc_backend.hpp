#pragma once
/// \file odbc_backend.hpp
/// Any database with an ODBC driver, through unixODBC (Debian 12: 2.3.11): SQL Server with
/// Microsoft's ODBC Driver 18 (the review labs' TPC-C target), PostgreSQL with psqlODBC,
/// MySQL/MariaDB with MariaDB Connector/ODBC. One HDBC per Connection, SQLPrepare'd statements
/// with SQLBindParameter, manual commit mode (SQL_AUTOCOMMIT_OFF). The SQL `dialect` picks the
/// statement text the workload cannot write portably (row locks, TOP/LIMIT, types, table options):
///   sqlserver  T-SQL: `WITH (UPDLOCK, ROWLOCK)` table hints, `SELECT TOP (n)`, DATETIME2
///   postgres   `FOR UPDATE`, `LIMIT n`
///   mysql      `FOR UPDATE`, `LIMIT n`, `ENGINE=InnoDB`, DATETIME
/// The initial population binds parameter arrays (SQL_ATTR_PARAMSET_SIZE, column-wise) to a
/// prepared INSERT, `bulk_rows` rows per execution (PostgreSQL: one multi-row INSERT); row at a
/// time if the driver refuses arrays. No execution exceeds what the dialect's client stack
/// accepts (bulk_limits()).
/// Text crosses the API as UTF-16 (SQL_C_WCHAR) into VARCHAR parameters, so no driver depends on
/// the process locale. Everything is documented in docs/backend-odbc.md.
///
/// Error classification by SQLSTATE (ODBC 3 and the drivers' native codes):
///   40001 (serialization failure / deadlock victim; SQL Server 1205), 40P01, 55P03, 57014
///   (cancelled), HYT00 (timeout), HY008 (cancelled), MySQL native 1213/1205/1020/1317,
///   SQL Server native 1205/1222                         -> retryable
///   08xxx (08S01 / 08003 / 08007: communication link failure), 57P01-57P03 (PostgreSQL
///   terminated the session), MySQL native 2006/2013, SQL_ATTR_CONNECTION_DEAD
///                                                        -> in_doubt during COMMIT, else
///                                                           retryable; both with connection_lost
///   everything else                                      -> fatal
///
/// Statements run outside begin()...commit() (DDL, bookkeeping) are committed as they run, as in
/// SQLite: the connection switches to autocommit for them and back to manual commit at begin().
///
/// Cancel flag and timeouts: a watcher thread per backend calls SQLCancel on a connection's
/// running statement when its cancel flag is set (checked every 50 ms) or when the statement has
/// run query_timeout_s + 2 s; SQL_ATTR_QUERY_TIMEOUT = query_timeout_s is also set so that
/// drivers with a client-side timeout (Microsoft's) enforce it themselves. Both end the call with
/// `retryable`. A server that died closes the socket: the call fails with 08S01/57P01 at once.
#include <cstddef>
#include <memory>
#include <string>

#include "drivelab/oltp/backend/backend.hpp"
#include "drivelab/oltp/backend/backend_row.hpp"
#include "drivelab/oltp/backend/server.hpp"

namespace drivelab::oltp {

struct OdbcOptions {
  /// An ODBC connection string: "DSN=name" (odbc.ini) or DSN-less
  /// "Driver={ODBC Driver 18 for SQL Server};Server=tcp:host,1433;Database=tpcc;Encrypt=no".
  /// Without UID/PWD here, `user`/`password` are appended (and never recorded).
  std::string connection_string;
  std::string user;
  std::string password;
  SqlDialect dialect = SqlDialect::sqlserver;
  /// Seconds a statement of a run session (connect()) may take before it is cancelled and
  /// reported `retryable`; 0 = no limit. Load sessions and DDL have no limit.
  int query_timeout_s = 60;
  /// Rows per execution of the BulkLoader (a parameter array, or PostgreSQL's multi-row
  /// INSERT), at most; bulk_limits() of the dialect may make a table's batches smaller.
  int bulk_rows = 1000;
};

/// What one bulk execution may carry through a dialect's client stack (docs/backend-odbc.md,
/// "Bulk path"). The BulkLoader sends at most min(bulk_rows, max_parameters / columns) rows in
/// one multi-row statement, and ends a parameter array early once its rows hold
/// max_array_bytes of data (0: no such limit).
///   postgres   7,000 parameters: psqlODBC (13.02, UseServerSidePrepare=1, its default) has the
///              server describe the prepared statement, and libpq 15 accepts a ParameterDescription
///              ('t', 6 + 4 bytes per parameter) only up to 30,000 bytes (fe-protocol3.c: 't' is
///              not a VALID_LONG_MESSAGE_TYPE), i.e. 7,498 parameters; beyond, the call fails with
///              "lost synchronization with server" (as pyodbc issue 627 reports). The server's own
///              limit is 65,535 (the protocol's Int16 count).
///   mysql      65,535 parameters (COM_STMT_PREPARE's 2-byte count); an array of 1 MiB at most,
///              the native MySQL backend's statement size, well below max_allowed_packet (MySQL
///              5.7: 4 MiB, MariaDB 10.11: 16 MiB) that one bulk execution must fit in.
///   sqlserver  2,100 parameters per request (SQL Server's "Maximum capacity specifications");
///              Microsoft's driver sends an array as one RPC per row, so one row's parameters count.
///   sqlite     32,766 (SQLITE_MAX_VARIABLE_NUMBER's default since SQLite 3.32).
struct BulkLimits {
  std::size_t max_parameters = 0;   ///< parameter markers in one statement
  std::size_t max_array_bytes = 0;  ///< bytes of row data in one parameter-array execution; 0: none
};
BulkLimits bulk_limits(SqlDialect dialect) noexcept;

/// Throws ConfigError for an empty connection string or bad numbers. Connects lazily: the first
/// connect() reports a missing DSN/driver (IM002, naming it and `odbcinst -q -s` / `-q -d`),
/// failed authentication (naming the user), an unknown database or an unreachable server
/// (naming it) as BackendError.
std::unique_ptr<Backend> make_odbc_backend(OdbcOptions options);

/// What every odbc backend can do (Backend::capabilities()): Up to 8 loaders; transactions as portable statements (no
/// procedure calls through ODBC).
Capabilities odbc_capabilities() noexcept;

/// The odbc row (backend_row.hpp; odbc_keys.cpp): managed: postgres or mariadb through Debian's
/// drivers, and the key `dialect` (sqlserver | postgres | mysql) it owns: the dialect of the
/// server behind the driver, a managed server's own when not given (database/ fills it in),
/// required with an existing server.
const BackendRow& odbc_row() noexcept;

/// A DSN-less connection string for a (managed or existing) server reached at `endpoint` through
/// Debian's driver for `kind` ("PostgreSQL Unicode" / "MariaDB Unicode" in odbcinst.ini):
///   postgres: Driver={PostgreSQL Unicode};Servername=<socket dir or host>;Port=<port>;
///             Database=<database>;Username=<user>;Protocol=7.4-1
///   mariadb:  Driver={MariaDB Unicode};Socket=<socket> (or Server=<host>;Port=<port>);
///             Database=<database>;User=<user>
/// The password is not put in the string (make_odbc_backend appends it from OdbcOptions).
/// Protocol=7.4-1: psqlODBC rolls back the transaction on an error instead of wrapping every
/// statement in a SAVEPOINT (its default, -2, adds two statements per statement).
std::string odbc_connection_string(ServerKind kind, const Endpoint& endpoint, const std::string& database);

/// The driver name odbc_connection_string uses for `kind`: "PostgreSQL Unicode" or "MariaDB Unicode".
std::string_view odbc_driver_for(ServerKind kind) noexcept;

/// Empty if the driver manager knows the driver `driver` (registered in odbcinst.ini: what
/// `odbcinst -q -d` lists, read through SQLDrivers), else the message to show: the driver, where
/// it is looked for and, for a driver Debian packages, the package ("Debian: apt-get install
/// odbc-postgresql"). open_database calls it before it starts a managed server, so a missing
/// driver is said before anything is created. A registered driver whose library is missing is
/// reported by connect() (IM003, with the same package).
std::string odbc_driver_problem(std::string_view driver);

}  // namespace drivelab::oltp
