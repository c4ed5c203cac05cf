#pragma once
/// \file postgres_backend.hpp
/// PostgreSQL through libpq (Debian 12: libpq 15). One PGconn per Connection; statements are
/// server-side prepared (PQprepare, `?` rewritten to $1..$n) and executed with text parameters
/// (PQexecPrepared), rows read from the PGresult. The initial population uses COPY ... FROM STDIN
/// (PQputCopyData, text format) — PostgreSQL's bulk path.
///
/// Error classification by SQLSTATE (https://www.postgresql.org/docs/15/errcodes-appendix.html):
///   53100 disk_full, 58030 io_error, or a message naming the cause ("No space left on device",
///   "could not write", "could not extend file"; is_storage_error in backend.hpp) -> storage_failure,
///   also during COMMIT (the test fails; docs/backend-postgres.md "Storage failures")
///   40001 serialization_failure, 40P01 deadlock_detected, 55P03 lock_not_available,
///   57014 query_canceled (by our cancel flag)                     -> retryable
///   connection lost (PQstatus == CONNECTION_BAD, class 08) during COMMIT -> in_doubt, else
///   retryable; both with connection_lost = true
///   everything else                                               -> fatal
#include <memory>
#include <string>

#include "drivelab/oltp/backend/backend.hpp"
#include "drivelab/oltp/backend/backend_row.hpp"
#include "drivelab/oltp/backend/server.hpp"

namespace drivelab::oltp {

struct PostgresOptions {
  Endpoint endpoint;     ///< socket dir or host/port, user, password
  std::string database;  ///< must exist (a managed server creates it)
  /// Extra libpq conninfo keywords from `server.connection` (e.g. "sslmode=require"), appended.
  std::string conninfo_extra;
  std::string application_name = "drivelab";
};

std::unique_ptr<Backend> make_postgres_backend(PostgresOptions options);

/// What every postgres backend can do (Backend::capabilities()): Row locks, up to 64 loaders, TPC-C as PL/pgSQL
/// functions.
Capabilities postgres_capabilities() noexcept;

/// The postgres row (backend_row.hpp; postgres_keys.cpp): dialect postgres, managed: postgres,
/// no key of its own in the database section (libpq's keywords go in server.connection).
const BackendRow& postgres_row() noexcept;

/// The libpq version in use ("15.18").
std::string libpq_version();

/// A managed PostgreSQL server (server.hpp; postgres_server.cpp). Nothing is started until start().
std::unique_ptr<ManagedServer> make_managed_postgres(ManagedServerOptions options);

/// How a managed PostgreSQL's database grows under TPC-C (growth.hpp; its
/// ManagedServer::growth_constants()): 3,106 B of tables and 30,734 B of WAL per New-Order, 0.95 B
/// of WAL per loaded byte, measured as postgres_server.cpp says.
GrowthConstants postgres_growth_constants() noexcept;

}  // namespace drivelab::oltp
