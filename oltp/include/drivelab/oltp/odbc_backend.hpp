#pragma once
/// \file odbc_backend.hpp
/// Any database with an ODBC driver, through unixODBC (Debian 12: 2.3.11): SQL Server with
/// Microsoft's ODBC Driver 18 (the review labs' TPC-C target), PostgreSQL with psqlODBC,
/// MySQL/MariaDB with MariaDB Connector/ODBC. One HDBC per Connection, SQLPrepare'd statements
/// with SQLBindParameter, manual commit mode (SQL_AUTOCOMMIT_OFF). The SQL `dialect` picks the
/// statement text the workload cannot write portably (row locks, TOP/LIMIT, table options):
///   sqlserver  T-SQL: `WITH (UPDLOCK, ROWLOCK)` table hints, `SELECT TOP (n)`
///   postgres   `FOR UPDATE`, `LIMIT n`
///   mysql      `FOR UPDATE`, `LIMIT n`, `ENGINE=InnoDB`
/// The initial population binds parameter arrays (SQL_ATTR_PARAMSET_SIZE) to a prepared INSERT.
///
/// Error classification by SQLSTATE (ODBC 3 and the drivers' native codes):
///   40001 (serialization failure / deadlock victim; SQL Server 1205), 40P01, HYT00 (timeout),
///   MySQL native 1213/1205/1020                        -> retryable
///   08S01 / 08003 / 08007 (communication link failure) -> in_doubt during COMMIT, else retryable;
///                                                          both with connection_lost = true
///   everything else                                    -> fatal
#include <memory>
#include <string>

#include "drivelab/oltp/backend.hpp"
#include "drivelab/oltp/server.hpp"

namespace drivelab::oltp {

struct OdbcOptions {
  /// An ODBC connection string: "DSN=name" (odbc.ini) or DSN-less
  /// "Driver={ODBC Driver 18 for SQL Server};Server=tcp:host,1433;Database=tpcc;Encrypt=no".
  /// Without UID/PWD here, `user`/`password` are appended (and never recorded).
  std::string connection_string;
  std::string user;
  std::string password;
  SqlDialect dialect = SqlDialect::sqlserver;
};

std::unique_ptr<Backend> make_odbc_backend(OdbcOptions options);

/// A DSN-less connection string for a (managed or existing) server reached at `endpoint` through
/// Debian's driver for `kind` ("PostgreSQL Unicode" / "MariaDB Unicode" in odbcinst.ini).
std::string odbc_connection_string(ServerKind kind, const Endpoint& endpoint, const std::string& database);

}  // namespace drivelab::oltp
