#pragma once
/// \file sysbench_preflight.hpp
/// Checks, before anything is loaded or run, that the server can take the run — so that a
/// review-lab configuration fails in the first second with a clear message instead of minutes
/// later with "Can't create more than max_prepared_stmt_count statements" from thread 27.
///
///   MySQL/MariaDB  every thread prepares its statements server-side (sysbench's ps mode), so
///                  threads x prepared_per_connection() must fit under the server's
///                  max_prepared_stmt_count (SELECT @@GLOBAL.max_prepared_stmt_count; MySQL's
///                  default 16,382) minus the statements other sessions hold (status
///                  Prepared_stmt_count). 100 tables x 32 threads of oltp_read_write need 28,800.
///                  Above the largest value the server accepts for the variable, the advice is
///                  fewer threads or tables instead (prepared_statement_problem).
///                  Also threads + 1 <= max_connections - Threads_connected.
///   PostgreSQL     threads + 1 <= max_connections - superuser_reserved_connections - client
///                  sessions already open (prepared statements are per-session memory, no limit).
///   SQLite, SQL Server (ODBC)  nothing to check (no server limits are read for them).
/// (+1: the control session that checks and reuses the tables.)
#include <cstdint>
#include <optional>
#include <string>

#include "drivelab/oltp/backend/backend.hpp"
#include "drivelab/oltp/backend/server_limits.hpp"
#include "drivelab/oltp/sysbench/sysbench_config.hpp"

namespace drivelab::oltp::sysbench {

/// The server's numbers are read by read_server_limits() (backend/server_limits.hpp, which
/// also holds kDocumentedMaxPreparedStmtCount, the bound assumed when a server does not say).

/// The message for a prepared-statement shortage, or nullopt when `need` fits:
/// need + in_use <= limit. Names the variable, the need and how it is made up, and the fixes:
/// raising the variable when need + in_use <= server_max (the largest value the server accepts
/// for it); otherwise says that raising cannot help and names the largest thread count (at this
/// table count) and table count (at this thread count) that fit under server_max. drivelab has no
/// mode without server-side prepared statements (sysbench's --db-ps-mode=disable).
std::optional<std::string> prepared_statement_problem(const SysbenchConfig& c, std::int64_t limit, std::int64_t in_use,
                                                      std::int64_t server_max);

/// Runs the checks above on a session of `backend`. Throws EnvironmentError with the message
/// when the server cannot take the run; BackendError if the server cannot be queried at all.
/// Returns what was found, for the record ({max_prepared_stmt_count, ...}).
results::Json preflight(Backend& backend, const SysbenchConfig& c);

}  // namespace drivelab::oltp::sysbench
