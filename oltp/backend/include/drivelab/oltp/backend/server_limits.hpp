#pragma once
/// \file server_limits.hpp
/// What a database server allows and already has in use, read in its dialect's words before a
/// run so that a test that cannot fit fails in its first second with the setting to change
/// (sysbench_preflight.hpp, the TPC-C connection check). The one place that knows where each
/// server keeps these numbers:
///   MySQL/MariaDB  @@max_connections and @@GLOBAL.max_prepared_stmt_count; status Threads_connected
///                  and Prepared_stmt_count from information_schema.GLOBAL_STATUS (MariaDB, MySQL
///                  5.x) or performance_schema.global_status (MySQL 8); the largest value the server
///                  accepts for max_prepared_stmt_count from information_schema.SYSTEM_VARIABLES
///                  (MariaDB: NUMERIC_MAX_VALUE; 10.11: 4,294,967,295) or
///                  performance_schema.variables_info (MySQL 8: MAX_VALUE), else MySQL 5.7's
///                  documented 1,048,576.
///   PostgreSQL     max_connections, superuser_reserved_connections, and the client backends in
///                  pg_stat_activity (prepared statements are per-session memory: no limit).
///   SQLite, T-SQL  nothing is read (read_server_limits returns nullopt).
#include <cstdint>
#include <optional>
#include <string>

#include "drivelab/oltp/backend/backend.hpp"
#include "drivelab/results/record.hpp"

namespace drivelab::oltp {

/// MySQL 5.7's documented upper bound of max_prepared_stmt_count (1,048,576), assumed when the
/// server does not report its own.
inline constexpr std::int64_t kDocumentedMaxPreparedStmtCount = 1'048'576;

/// The server-side prepared statements a MySQL/MariaDB server allows.
struct PreparedStatementLimits {
  std::int64_t limit = 0;       ///< max_prepared_stmt_count
  std::int64_t in_use = 0;      ///< Prepared_stmt_count (other sessions' statements)
  std::int64_t server_max = 0;  ///< the largest value the server accepts for the variable
};

struct ServerLimits {
  std::int64_t max_connections = 0;
  std::int64_t reserved_connections = 0;            ///< PostgreSQL superuser_reserved_connections; else 0
  std::int64_t sessions_open = 0;                   ///< client sessions open, the reading one included
  std::optional<PreparedStatementLimits> prepared;  ///< MySQL/MariaDB only
  /// How a user raises max_connections on this server, for messages: " (SET GLOBAL
  /// max_connections = N)" or " (postgresql.conf, or server: {settings: ...} for a managed server)".
  std::string raise_connections_hint;
  /// What was read, under the server's own names, for the record: MySQL {max_connections,
  /// threads_connected, max_prepared_stmt_count, max_prepared_stmt_count_server_max,
  /// prepared_stmt_count_in_use}; PostgreSQL {max_connections, superuser_reserved_connections,
  /// client_sessions}.
  results::Json read = results::Json::object();
};

/// Reads the limits above on a session of its own (each query in its own read-only transaction,
/// so a status table this server version lacks does not poison the next). nullopt, without
/// connecting, for a dialect without them (SQLite, T-SQL). Throws BackendError when the
/// connection limit cannot be read or the session cannot be opened.
std::optional<ServerLimits> read_server_limits(Backend& backend);

}  // namespace drivelab::oltp
