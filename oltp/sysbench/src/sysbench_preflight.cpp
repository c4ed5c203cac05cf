#include "drivelab/oltp/sysbench/sysbench_preflight.hpp"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/oltp/backend/server_limits.hpp"
#include "drivelab/oltp/sysbench/sysbench_transactions.hpp"

namespace drivelab::oltp::sysbench {
namespace {

std::string connection_problem(int threads, std::int64_t limit, std::int64_t reserved, std::int64_t in_use,
                               std::string_view how) {
  const std::int64_t need = threads + 1;
  const std::int64_t available = limit - reserved - in_use;
  if (need <= available) return {};
  return fmt::format(
      "max_connections is {} ({}{} sessions already open), but this test needs {} connections "
      "({} threads + 1 control session); raise max_connections{} or use fewer threads",
      limit, reserved > 0 ? fmt::format("{} reserved for superusers, ", reserved) : std::string(), in_use, need,
      threads, how);
}

}  // namespace

std::optional<std::string> prepared_statement_problem(const SysbenchConfig& c, std::int64_t limit, std::int64_t in_use,
                                                      std::int64_t server_max) {
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
  const auto limits = read_server_limits(backend);
  if (!limits) return results::Json::object();
  results::Json found = limits->read;
  if (const auto& p = limits->prepared) {
    found["prepared_statements_needed"] = prepared_per_connection(c.workload, c.statements, c.tables) * c.threads;
    if (auto problem = prepared_statement_problem(c, p->limit, p->in_use, p->server_max))
      throw EnvironmentError(*problem);
  }
  // Our own control session is one of the sessions open.
  if (auto problem = connection_problem(c.threads, limits->max_connections, limits->reserved_connections,
                                        limits->sessions_open - 1, limits->raise_connections_hint);
      !problem.empty())
    throw EnvironmentError(problem);
  return found;
}

}  // namespace drivelab::oltp::sysbench
