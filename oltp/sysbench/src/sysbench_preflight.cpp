#include "drivelab/oltp/sysbench/sysbench_preflight.hpp"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/oltp/sysbench/sysbench_transactions.hpp"

namespace drivelab::oltp::sysbench {
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

std::string connection_problem(int threads, std::int64_t limit, std::int64_t reserved, std::int64_t in_use,
                               std::string_view how) {
  const std::int64_t need = threads + 1;
  const std::int64_t available = limit - reserved - in_use;
  if (need <= available) return {};
  return fmt::format(
      "max_connections is {} ({}{} sessions already open), but this test needs {} connections "
      "({} threads + 1 control session); raise max_connections{} or use fewer threads",
      limit, reserved > 0 ? fmt::format("{} reserved for superusers, ", reserved) : std::string(), in_use,
      need, threads, how);
}

}  // namespace

std::optional<std::string> prepared_statement_problem(const SysbenchConfig& c, std::int64_t limit,
                                                      std::int64_t in_use, std::int64_t server_max) {
  const std::int64_t per_conn = prepared_per_connection(c.workload, c.statements, c.tables);
  const std::int64_t need = per_conn * c.threads;
  if (need + in_use <= limit) return std::nullopt;
  const auto per_table = static_cast<std::int64_t>(prepared_kinds(c.workload, c.statements).size());
  const std::string what = fmt::format(
      "max_prepared_stmt_count is {} ({} already in use), but {} with {} table(s) and {} thread(s) "
      "prepares {} server-side statements ({} per table x {} table(s) = {} per connection, x {} "
      "connections; sysbench prepares the same)",
      limit, in_use, to_string(c.workload), c.tables, c.threads, need, per_table, c.tables, per_conn, c.threads);
  if (need + in_use <= server_max)
    return fmt::format(
        "{}; raise it to at least {} (SET GLOBAL max_prepared_stmt_count = {}, or server: {{settings: "
        "{{max_prepared_stmt_count: {}}}}} for a managed server) or use fewer tables or threads",
        what, need + in_use, need + in_use, need + in_use);
  // No value of the variable can hold them: advise the sizes that fit under the server's maximum.
  const std::int64_t room = std::max<std::int64_t>(0, server_max - in_use);
  const std::int64_t threads_fit = per_conn > 0 ? room / per_conn : 0;
  const std::int64_t tables_fit = per_table > 0 ? room / (per_table * c.threads) : 0;
  std::vector<std::string> fits;
  if (threads_fit >= 1) fits.push_back(fmt::format("at most {} thread(s) with {} table(s)", threads_fit, c.tables));
  if (tables_fit >= 1) fits.push_back(fmt::format("at most {} table(s) with {} thread(s)", tables_fit, c.threads));
  return fmt::format(
      "{}; {} is above {}, the largest value this server accepts for max_prepared_stmt_count, so raising "
      "it cannot help: use {}. drivelab always prepares its statements on the server (sysbench can "
      "run this size only with --db-ps-mode=disable, statements sent as text, which is a different test)",
      what, need + in_use, server_max,
      fits.empty() ? std::string("fewer tables and threads") : fmt::format("{}", fmt::join(fits, ", or ")));
}

results::Json preflight(Backend& backend, const SysbenchConfig& c) {
  const std::string& d = backend.dialect().name;
  results::Json found = results::Json::object();
  if (d != "mysql" && d != "postgres") return found;
  auto conn = backend.connect();
  if (d == "mysql") {
    const auto vars = first_row(*conn, "SELECT @@GLOBAL.max_prepared_stmt_count, @@GLOBAL.max_connections", 2);
    if (!vars) throw BackendError("pre-flight: cannot read max_prepared_stmt_count and max_connections");
    const std::int64_t limit = number((*vars)[0]);
    const std::int64_t max_conn = number((*vars)[1]);
    // Status counters: information_schema (MariaDB, MySQL 5.x) or performance_schema (MySQL 8).
    std::int64_t stmts_in_use = 0;
    std::int64_t threads_connected = 1;
    for (const char* table : {"information_schema.GLOBAL_STATUS", "performance_schema.global_status"}) {
      const auto a = first_row(*conn, fmt::format("SELECT VARIABLE_VALUE FROM {} WHERE VARIABLE_NAME = "
                                                  "'PREPARED_STMT_COUNT'", table), 1);
      const auto b = first_row(*conn, fmt::format("SELECT VARIABLE_VALUE FROM {} WHERE VARIABLE_NAME = "
                                                  "'THREADS_CONNECTED'", table), 1);
      if (a && b) {
        stmts_in_use = number((*a)[0]);
        threads_connected = number((*b)[0]);
        break;
      }
    }
    // The largest value the server accepts for the variable: MariaDB lists it in
    // information_schema.SYSTEM_VARIABLES (10.11: 4294967295), MySQL 8 in
    // performance_schema.variables_info; otherwise MySQL 5.7's documented maximum.
    std::int64_t server_max = kDocumentedMaxPreparedStmtCount;
    for (const char* sql : {"SELECT NUMERIC_MAX_VALUE FROM information_schema.SYSTEM_VARIABLES WHERE "
                            "VARIABLE_NAME = 'MAX_PREPARED_STMT_COUNT'",
                            "SELECT MAX_VALUE FROM performance_schema.variables_info WHERE "
                            "VARIABLE_NAME = 'max_prepared_stmt_count'"}) {
      if (const auto m = first_row(*conn, sql, 1); m && number((*m)[0]) > 0) {
        server_max = number((*m)[0]);
        break;
      }
    }
    const std::int64_t need = prepared_per_connection(c.workload, c.statements, c.tables) * c.threads;
    found = {{"max_prepared_stmt_count", limit},
             {"max_prepared_stmt_count_server_max", server_max},
             {"prepared_stmt_count_in_use", stmts_in_use},
             {"prepared_statements_needed", need},
             {"max_connections", max_conn},
             {"threads_connected", threads_connected}};
    if (auto problem = prepared_statement_problem(c, limit, stmts_in_use, server_max)) throw EnvironmentError(*problem);
    // Our own control session is one of threads_connected.
    if (auto p = connection_problem(c.threads, max_conn, 0, threads_connected - 1,
                                    " (SET GLOBAL max_connections = N)");
        !p.empty())
      throw EnvironmentError(p);
  } else {
    const auto row = first_row(
        *conn,
        "SELECT current_setting('max_connections'), current_setting('superuser_reserved_connections'), "
        "(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')",
        3);
    if (!row) throw BackendError("pre-flight: cannot read max_connections");
    const std::int64_t max_conn = number((*row)[0]);
    const std::int64_t reserved = number((*row)[1]);
    const std::int64_t open = number((*row)[2]);
    found = {{"max_connections", max_conn}, {"superuser_reserved_connections", reserved}, {"client_sessions", open}};
    if (auto p = connection_problem(c.threads, max_conn, reserved, open - 1,
                                    " (postgresql.conf, or server: {settings: {max_connections: N}} for a "
                                    "managed server)");
        !p.empty())
      throw EnvironmentError(p);
  }
  return found;
}

}  // namespace drivelab::oltp::sysbench
