// What a server allows and has in use (server_limits.hpp): the queries of each dialect.
#include "drivelab/oltp/backend/server_limits.hpp"

#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"

namespace drivelab::oltp {
namespace {

/// The first row of `sql` as text (NULL as ""), or nullopt if the query fails (e.g. a status
/// table this server version does not have). Runs in its own transaction, so one failure does
/// not poison the next query (PostgreSQL aborts a transaction on any error).
std::optional<std::vector<std::string>> first_row(Connection& conn, const std::string& sql, int columns) {
  std::unique_ptr<Statement> q;
  try {
    q = conn.prepare(sql);
  } catch (const BackendError&) {
    return std::nullopt;
  }
  if (!conn.begin(TxMode::read_only).ok()) return std::nullopt;
  std::optional<std::vector<std::string>> out;
  if (q->execute().ok()) {
    DbStatus st;
    if (q->next(st)) {
      out.emplace();
      for (int i = 0; i < columns; ++i) out->emplace_back(q->is_null(i) ? "" : std::string(q->column_text(i)));
    }
    while (q->next(st)) {
    }
  }
  conn.rollback();
  return out;
}

std::int64_t number(const std::string& s) { return std::atoll(s.c_str()); }

std::int64_t max_connections(Connection& conn, const Dialect& d) {
  const auto row = first_row(conn, d.max_connections_sql, 1);
  if (!row) throw BackendError("pre-flight: cannot read max_connections");
  return number((*row)[0]);
}

ServerLimits read_mysql(Connection& conn, const Dialect& d) {
  ServerLimits out;
  out.max_connections = max_connections(conn, d);
  const auto limit = first_row(conn, "SELECT @@GLOBAL.max_prepared_stmt_count", 1);
  if (!limit) throw BackendError("pre-flight: cannot read max_prepared_stmt_count");
  PreparedStatementLimits p{.limit = number((*limit)[0]), .in_use = 0, .server_max = kDocumentedMaxPreparedStmtCount};
  out.sessions_open = 1;
  for (const char* table : {"information_schema.GLOBAL_STATUS", "performance_schema.global_status"}) {
    const auto a = first_row(conn,
                             fmt::format("SELECT VARIABLE_VALUE FROM {} WHERE VARIABLE_NAME = "
                                         "'PREPARED_STMT_COUNT'",
                                         table),
                             1);
    const auto b = first_row(conn,
                             fmt::format("SELECT VARIABLE_VALUE FROM {} WHERE VARIABLE_NAME = "
                                         "'THREADS_CONNECTED'",
                                         table),
                             1);
    if (a && b) {
      p.in_use = number((*a)[0]);
      out.sessions_open = number((*b)[0]);
      break;
    }
  }
  for (const char* sql : {"SELECT NUMERIC_MAX_VALUE FROM information_schema.SYSTEM_VARIABLES WHERE "
                          "VARIABLE_NAME = 'MAX_PREPARED_STMT_COUNT'",
                          "SELECT MAX_VALUE FROM performance_schema.variables_info WHERE "
                          "VARIABLE_NAME = 'max_prepared_stmt_count'"}) {
    if (const auto m = first_row(conn, sql, 1); m && number((*m)[0]) > 0) {
      p.server_max = number((*m)[0]);
      break;
    }
  }
  out.prepared = p;
  out.raise_connections_hint = " (SET GLOBAL max_connections = N)";
  out.read = {{"max_prepared_stmt_count", p.limit},
              {"max_prepared_stmt_count_server_max", p.server_max},
              {"prepared_stmt_count_in_use", p.in_use},
              {"max_connections", out.max_connections},
              {"threads_connected", out.sessions_open}};
  return out;
}

ServerLimits read_postgres(Connection& conn, const Dialect& d) {
  ServerLimits out;
  out.max_connections = max_connections(conn, d);
  const auto row = first_row(conn,
                             "SELECT current_setting('superuser_reserved_connections'), "
                             "(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')",
                             2);
  if (!row) throw BackendError("pre-flight: cannot read superuser_reserved_connections and the client sessions");
  out.reserved_connections = number((*row)[0]);
  out.sessions_open = number((*row)[1]);
  out.raise_connections_hint = " (postgresql.conf, or server: {settings: {max_connections: N}} for a managed server)";
  out.read = {{"max_connections", out.max_connections},
              {"superuser_reserved_connections", out.reserved_connections},
              {"client_sessions", out.sessions_open}};
  return out;
}

}  // namespace

std::optional<ServerLimits> read_server_limits(Backend& backend) {
  const Dialect& dialect = backend.dialect();
  switch (dialect.kind) {
    case SqlDialect::mysql: return read_mysql(*backend.connect(), dialect);
    case SqlDialect::postgres: return read_postgres(*backend.connect(), dialect);
    case SqlDialect::sqlite:
    case SqlDialect::sqlserver: break;
  }
  return std::nullopt;
}

}  // namespace drivelab::oltp
