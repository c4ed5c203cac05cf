#pragma once
/// \file mysql_backend.hpp
/// MySQL and MariaDB through MySQL Connector/C++ (Debian 12: libmysqlcppconn 1.1.12, the JDBC-like
/// `sql::` API). One sql::Connection per Connection; sql::PreparedStatement for statements
/// (server-side prepared: the server's max_prepared_stmt_count applies); autocommit off and
/// explicit START TRANSACTION [READ ONLY] / COMMIT. Tables are InnoDB. The initial population
/// uses multi-row INSERT statements (about 1 MiB each) — the bulk path that needs no
/// local_infile permission.
///
/// Error classification by MySQL error number (sysbench's ignored-and-retried set and more):
///   1021 ER_DISK_FULL, 1114 ER_RECORD_FILE_FULL (table full), and any error whose text names
///   the cause (3 / 1030 with errno 28 "No space left on device"; is_storage_error in backend.hpp)
///                                                     -> storage_failure, also during COMMIT
///                                                        (the test fails; docs/backend-mysql.md)
///   1213 ER_LOCK_DEADLOCK, 1205 ER_LOCK_WAIT_TIMEOUT, 1020 ER_CHECKREAD, 1317 query interrupted
///                                                     -> retryable
///   2006 server gone away, 2013 lost connection, 2002/2003 cannot connect
///                                                     -> in_doubt during COMMIT, else retryable;
///                                                        both with connection_lost = true
///   everything else                                   -> fatal
#include <memory>
#include <string>

#include "drivelab/oltp/backend/backend.hpp"
#include "drivelab/oltp/backend/backend_row.hpp"
#include "drivelab/oltp/backend/server.hpp"

namespace drivelab::oltp {

struct MysqlOptions {
  Endpoint endpoint;     ///< socket file or host/port, user, password
  std::string database;  ///< created if missing
};

std::unique_ptr<Backend> make_mysql_backend(MysqlOptions options);

/// What every mysql backend can do (Backend::capabilities()): InnoDB takes row locks: loaders of different warehouses
/// never wait on each other (the 64 only keeps a mistaken configuration from opening hundreds of sessions); TPC-C as
/// stored procedures.
Capabilities mysql_capabilities() noexcept;

/// The mysql row (backend_row.hpp; mysql_keys.cpp): dialect mysql, managed: mariadb, no key of
/// its own in the database section.
const BackendRow& mysql_row() noexcept;

/// A managed MariaDB server (server.hpp; mysql_server.cpp). Nothing is started until start().
std::unique_ptr<ManagedServer> make_managed_mariadb(ManagedServerOptions options);

/// How a managed MariaDB's database grows under TPC-C (growth.hpp; its
/// ManagedServer::growth_constants()): 1,230 B per New-Order, measured as mysql_server.cpp says.
GrowthConstants mariadb_growth_constants() noexcept;

}  // namespace drivelab::oltp
