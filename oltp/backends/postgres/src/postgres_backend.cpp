// PostgreSQL through libpq (postgres_backend.hpp; docs/backend-postgres.md): the Backend, what it
// asks the server outside a workload's sessions (census, destroy, describe, counters, ANALYZE
// after the load). The sessions themselves (Connection, Statement, BulkLoader) are
// postgres_session.cpp.
#include "drivelab/oltp/backends/postgres/postgres_backend.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "postgres_common.hpp"
#include "postgres_session.hpp"
#include "postgres_sql.hpp"

namespace drivelab::oltp {
namespace {

/// ANALYZE sessions finish_load() runs in parallel (besides its own for CHECKPOINT).
constexpr std::size_t kAnalyzeSessions = 4;

using pg::parse_double;
using pg::parse_int64;

/// Runs a one-row query and returns its columns as JSON numbers (integers where they parse as
/// integers), named by the column names.
void add_numbers(PGconn* conn, const std::string& sql, results::Json& out) {
  const pg::ResultHandle r = pg::exec_or_throw(conn, sql, "server counters");
  if (!r || PQntuples(r.get()) < 1) return;
  for (int c = 0; c < PQnfields(r.get()); ++c) {
    if (PQgetisnull(r.get(), 0, c) != 0) continue;
    const std::string_view v(PQgetvalue(r.get(), 0, c));
    std::int64_t i = 0;
    const auto res = std::from_chars(v.data(), v.data() + v.size(), i);
    if (res.ec == std::errc() && res.ptr == v.data() + v.size())
      out[PQfname(r.get(), c)] = i;
    else
      out[PQfname(r.get(), c)] = parse_double(v);
  }
}

class PgBackend final : public Backend {
 public:
  explicit PgBackend(PostgresOptions options)
      : opt_(std::move(options)), dialect_(make_dialect(SqlDialect::postgres)) {}

  const Dialect& dialect() const noexcept override { return dialect_; }
  Capabilities capabilities() const noexcept override { return postgres_capabilities(); }

  std::unique_ptr<Connection> connect() override { return pg::open_session(opt_, &watcher_); }

  std::unique_ptr<Connection> connect_for_load() override {
    auto c = pg::open_session(opt_, &watcher_);
    // An interrupted load is rebuilt, so its commits need not wait for the WAL flush;
    // finish_load() makes the result durable with one CHECKPOINT. Index builds at the end of the
    // load sort in memory rather than in temporary files.
    c->execute_immediate("SET synchronous_commit = off; SET maintenance_work_mem = '256MB'");
    return c;
  }

  void finish_load() override {
    const pg::ConnHandle c = pg::connect(opt_);
    analyze_in_parallel(c.get());
    try {
      pg::exec_or_throw(c.get(), "CHECKPOINT", "checkpoint after the load");
    } catch (const BackendError& e) {
      // Needs superuser or pg_checkpoint: without it the load is durable anyway (the first
      // synchronous commit after it flushed its WAL), only not yet written to the tables' files.
      if (e.sqlstate() != "42501") throw;
    }
  }

  bool exists() const override {
    pg::ConnHandle c;
    try {
      c = pg::connect(opt_);
    } catch (const BackendError& e) {
      if (e.sqlstate() == "3D000") return false;
      throw;
    }
    const TableCensus t = census(c.get());
    return t.has_meta || !t.tables.empty();
  }

  void destroy() override {
    pg::ConnHandle c;
    try {
      c = pg::connect(opt_);
    } catch (const BackendError& e) {
      if (e.sqlstate() == "3D000") return;  // no database, nothing to remove
      throw;
    }
    const TableCensus t = census(c.get());
    if (!t.has_meta) {
      if (t.tables.empty()) return;
      throw BackendError(
          fmt::format("postgres: refusing to destroy database \"{}\": it holds tables drivelab did not create "
                      "({}{}) and no drivelab_meta. drivelab never removes data it was not given; name an empty "
                      "database or one created by drivelab",
                      opt_.database, t.tables[0], t.tables.size() > 1 ? ", " + t.tables[1] : std::string()));
    }
    // Every table of the schema that holds drivelab_meta (the benchmark's schema).
    const pg::ResultHandle r =
        pg::exec_or_throw(c.get(),
                          "SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) FROM pg_class c "
                          "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'p') AND "
                          "c.relnamespace = (SELECT relnamespace FROM pg_class WHERE oid = 'drivelab_meta'::regclass)",
                          "list the tables to drop");
    std::string list;
    for (int i = 0; i < PQntuples(r.get()); ++i) list += (i == 0 ? "" : ", ") + std::string(PQgetvalue(r.get(), i, 0));
    if (!list.empty())
      pg::exec_or_throw(c.get(), "DROP TABLE IF EXISTS " + list + " CASCADE", "drop the benchmark tables");
  }

  std::optional<std::uint64_t> size_bytes() const override {
    try {
      const pg::ConnHandle c = pg::connect(opt_);
      const pg::ResultHandle r =
          pg::exec_or_throw(c.get(), "SELECT pg_database_size(current_database())", "database size");
      if (!r || PQntuples(r.get()) < 1) return std::nullopt;
      return static_cast<std::uint64_t>(parse_int64(PQgetvalue(r.get(), 0, 0)));
    } catch (const BackendError&) {
      return std::nullopt;
    }
  }

  results::Json describe() const override {
    results::Json d{{"backend", "postgres"},
                    {"libpq_version", libpq_version()},
                    {"database", opt_.database},
                    {"user", opt_.endpoint.user}};
    if (!opt_.endpoint.socket_path.empty())
      d["socket_dir"] = opt_.endpoint.socket_path;
    else if (!opt_.endpoint.host.empty())
      d["host"] = opt_.endpoint.host;
    if (opt_.endpoint.port > 0) d["port"] = opt_.endpoint.port;
    try {
      const pg::ConnHandle c = pg::connect(opt_);
      if (opt_.endpoint.user.empty()) d["user"] = PQuser(c.get());
      // Where libpq connected when the endpoint left it to `connection` or libpq's defaults
      // (PQhost: a host name, or the socket directory).
      if (opt_.endpoint.socket_path.empty() && opt_.endpoint.host.empty())
        if (const char* h = PQhost(c.get()); h != nullptr && *h != '\0') d[h[0] == '/' ? "socket_dir" : "host"] = h;
      if (opt_.endpoint.port <= 0)
        if (const char* p = PQport(c.get()); p != nullptr && *p != '\0') d["port"] = std::atoi(p);
      const pg::ResultHandle v = pg::exec_or_throw(c.get(), "SHOW server_version", "server version");
      d["server_version"] = PQgetvalue(v.get(), 0, 0);
      const pg::ResultHandle r =
          pg::exec_or_throw(c.get(),
                            "SELECT name, current_setting(name) FROM pg_settings WHERE name IN ('shared_buffers', "
                            "'synchronous_commit', 'fsync', 'full_page_writes', 'wal_level', 'max_wal_size', "
                            "'min_wal_size', 'checkpoint_timeout', 'checkpoint_completion_target', 'max_connections', "
                            "'effective_cache_size', 'wal_buffers', 'data_checksums', 'wal_sync_method') ORDER BY name",
                            "server settings");
      results::Json settings = results::Json::object();
      for (int i = 0; i < PQntuples(r.get()); ++i) settings[PQgetvalue(r.get(), i, 0)] = PQgetvalue(r.get(), i, 1);
      d["settings"] = settings;
    } catch (const BackendError& e) {
      d["describe_error"] = e.what();
    }
    return d;
  }

  results::Json server_counters() override {
    const pg::ConnHandle c = pg::connect(opt_);
    results::Json out = results::Json::object();
    add_numbers(c.get(),
                "SELECT xact_commit, xact_rollback, blks_read, blks_hit, tup_returned, tup_fetched, "
                "tup_inserted, tup_updated, tup_deleted, conflicts, deadlocks, temp_files, temp_bytes, "
                "blk_read_time AS blk_read_time_ms, blk_write_time AS blk_write_time_ms "
                "FROM pg_stat_database WHERE datname = current_database()",
                out);
    // PostgreSQL 17 moved the checkpointer's counters from pg_stat_bgwriter to
    // pg_stat_checkpointer and dropped buffers_backend(_fsync), whose writes and fsyncs by client
    // backends pg_stat_io (16+) counts: the same keys are read from where each release keeps them
    // (release notes of PostgreSQL 17, E.x "Monitoring"; docs/backend-postgres.md).
    const pg::ResultHandle v = pg::exec_or_throw(c.get(), "SHOW server_version_num", "server version");
    const long version = std::strtol(PQgetvalue(v.get(), 0, 0), nullptr, 10);
    if (version >= 170000) {
      add_numbers(c.get(),
                  "SELECT num_timed AS checkpoints_timed, num_requested AS checkpoints_req, "
                  "write_time AS checkpoint_write_time_ms, sync_time AS checkpoint_sync_time_ms, "
                  "buffers_written AS buffers_checkpoint FROM pg_stat_checkpointer",
                  out);
      add_numbers(c.get(), "SELECT buffers_clean, maxwritten_clean, buffers_alloc FROM pg_stat_bgwriter", out);
      add_numbers(
          c.get(),
          "SELECT coalesce(sum(writes), 0) AS buffers_backend, coalesce(sum(fsyncs), 0) AS buffers_backend_fsync "
          "FROM pg_stat_io WHERE backend_type = 'client backend' AND object = 'relation'",
          out);
    } else {
      add_numbers(c.get(),
                  "SELECT checkpoints_timed, checkpoints_req, checkpoint_write_time AS checkpoint_write_time_ms, "
                  "checkpoint_sync_time AS checkpoint_sync_time_ms, buffers_checkpoint, buffers_clean, "
                  "maxwritten_clean, buffers_backend, buffers_backend_fsync, buffers_alloc FROM pg_stat_bgwriter",
                  out);
    }
    add_numbers(c.get(),
                "SELECT wal_records, wal_fpi, wal_bytes, wal_buffers_full, wal_write, wal_sync FROM pg_stat_wal", out);
    return out;
  }

 private:
  struct TableCensus {
    bool has_meta = false;
    std::vector<std::string> tables;  ///< up to three, "schema.table"
  };
  /// drivelab_meta visible on the search path? And a few user tables of the database.
  static TableCensus census(PGconn* c) {
    TableCensus t;
    const pg::ResultHandle m =
        pg::exec_or_throw(c, "SELECT to_regclass('drivelab_meta') IS NOT NULL", "look for drivelab_meta");
    t.has_meta = std::string_view(PQgetvalue(m.get(), 0, 0)) == "t";
    const pg::ResultHandle r = pg::exec_or_throw(
        c,
        "SELECT n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND n.nspname <> 'information_schema' "
        "AND n.nspname NOT LIKE 'pg\\_%' ORDER BY 1 LIMIT 3",
        "list the tables");
    for (int i = 0; i < PQntuples(r.get()); ++i) t.tables.emplace_back(PQgetvalue(r.get(), i, 0));
    return t;
  }

  /// Planner statistics of every table of the current schema before the first transaction
  /// (autovacuum would take minutes to get there): one ANALYZE per table, biggest first, on up
  /// to kAnalyzeSessions sessions at once (the tables are independent).
  void analyze_in_parallel(PGconn* c) const {
    const pg::ResultHandle r =
        pg::exec_or_throw(c,
                          "SELECT quote_ident(relname) FROM pg_class WHERE relkind IN ('r', 'p') AND "
                          "relnamespace = current_schema()::regnamespace ORDER BY relpages DESC",
                          "list the tables to analyze");
    std::vector<std::string> tables;
    tables.reserve(static_cast<std::size_t>(PQntuples(r.get())));
    for (int i = 0; i < PQntuples(r.get()); ++i) tables.emplace_back(PQgetvalue(r.get(), i, 0));
    std::atomic<std::size_t> next{0};
    std::mutex mu;
    std::exception_ptr error;
    const auto work = [&] {
      try {
        const pg::ConnHandle own = pg::connect(opt_);
        for (std::size_t i = next++; i < tables.size(); i = next++)
          pg::exec_or_throw(own.get(), "ANALYZE " + tables[i], "analyze " + tables[i]);
      } catch (...) {
        std::lock_guard lock(mu);
        if (!error) error = std::current_exception();
      }
    };
    std::vector<std::thread> threads;
    const std::size_t sessions = std::min<std::size_t>(tables.size(), kAnalyzeSessions);
    for (std::size_t t = 0; t < sessions; ++t) threads.emplace_back(work);
    for (std::thread& t : threads) t.join();
    if (error) std::rethrow_exception(error);
  }

  PostgresOptions opt_;
  Dialect dialect_;
  pg::CancelWatcher watcher_;  // cancels the calls of sessions asked to stop (postgres_cancel.hpp)
};

}  // namespace

std::unique_ptr<Backend> make_postgres_backend(PostgresOptions options) {
  return std::make_unique<PgBackend>(std::move(options));
}

std::string libpq_version() {
  const int v = PQlibVersion();  // 150020 for 15.20 (since PostgreSQL 10: major * 10000 + minor)
  return fmt::format("{}.{}", v / 10000, v % 10000);
}

Capabilities postgres_capabilities() noexcept {
  return {.serialized_writers = false,
          .max_load_threads = 64,
          .embedded = false,
          .server_procedures = true,
          .finish_load_sessions = 1 + static_cast<int>(kAnalyzeSessions)};
}

}  // namespace drivelab::oltp
