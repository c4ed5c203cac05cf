// The ODBC backend (odbc_backend.hpp): sessions and the backend. Statements are in
// odbc_statement.cpp, bulk loaders in odbc_bulk_loader.cpp, handles/diagnostics/strings in
// odbc_util.cpp, the watcher in odbc_watcher.cpp. docs/backend-odbc.md describes the whole.
#include "drivelab/oltp/backends/odbc/odbc_backend.hpp"

#include <sqlext.h>

#include <algorithm>
#include <array>
#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"
#include "odbc_session.hpp"

namespace drivelab::oltp {
namespace odbc {

namespace {

/// Seconds SQLDriverConnect may take (SQL_ATTR_LOGIN_TIMEOUT).
constexpr SQLULEN kLoginTimeoutS = 15;
/// The watcher cancels a statement this long after its query timeout, so that a driver that
/// enforces SQL_ATTR_QUERY_TIMEOUT itself reports its own timeout first.
constexpr std::int64_t kWatchGraceNs = 2'000'000'000;

const DiagRecord* first_error(const std::vector<DiagRecord>& records) {
  for (const DiagRecord& r : records)
    if (!r.sqlstate.starts_with("01")) return &r;
  return records.empty() ? nullptr : &records.front();
}

}  // namespace

// ---- session -----------------------------------------------------------------------------------

OdbcSession::OdbcSession(std::shared_ptr<Shared> shared, int query_timeout_s)
    : shared_(std::move(shared)), dbc_(make_dbc(shared_->env.get())), query_timeout_s_(query_timeout_s) {
  SQLHDBC h = dbc_.get();
  SQLSetConnectAttr(h, SQL_ATTR_LOGIN_TIMEOUT, reinterpret_cast<SQLPOINTER>(kLoginTimeoutS), 0);
  std::string cs = shared_->connection_string;
  const SQLRETURN rc = SQLDriverConnect(h, nullptr, reinterpret_cast<SQLCHAR*>(cs.data()),
                                        static_cast<SQLSMALLINT>(cs.size()), nullptr, 0, nullptr, SQL_DRIVER_NOPROMPT);
  std::fill(cs.begin(), cs.end(), '\0');  // the copy held the password
  if (!SQL_SUCCEEDED(rc)) {
    auto records = read_diagnostics(SQL_HANDLE_DBC, h);
    for (DiagRecord& r : records) r.message = shared_->scrub(r.message);
    const std::string message =
        shared_->scrub(connect_error_message(records, shared_->redacted, shared_->options.user));
    const DiagRecord* first = first_error(records);
    const std::string state = first != nullptr ? first->sqlstate : std::string();
    const int native = first != nullptr ? first->native : 0;
    if (is_unknown_database(records)) throw UnknownDatabase(message, state, native);
    throw BackendError(message, state, native);
  }
  if (const DbStatus s = set_autocommit(false); !s.ok())
    throw BackendError("odbc: switching to manual commit (SQL_AUTOCOMMIT_OFF): " + s.to_string(), s.sqlstate,
                       s.native_code);
  SQLUSMALLINT activities = 0;
  if (SQL_SUCCEEDED(SQLGetInfo(h, SQL_MAX_CONCURRENT_ACTIVITIES, &activities, sizeof activities, nullptr)))
    one_active_statement_ = activities == 1;
  {
    std::lock_guard lock(shared_->info_mu);
    if (!shared_->driver_info) {
      shared_->driver_info = results::Json{{"driver", info_text(h, SQL_DRIVER_NAME)},
                                           {"driver_version", info_text(h, SQL_DRIVER_VER)},
                                           {"driver_odbc_version", info_text(h, SQL_DRIVER_ODBC_VER)},
                                           {"dbms", info_text(h, SQL_DBMS_NAME)},
                                           {"dbms_version", info_text(h, SQL_DBMS_VER)},
                                           {"max_concurrent_activities", activities}};
    }
  }
  slot_ = shared_->watcher.add();
}

OdbcSession::~OdbcSession() {
  shared_->watcher.remove(slot_);
  // dbc_'s deleter rolls back what is open and disconnects.
}

std::int64_t OdbcSession::call_deadline_ns() const noexcept {
  if (query_timeout_s_ <= 0) return 0;
  return monotonic_ns() + std::int64_t{query_timeout_s_} * 1'000'000'000 + kWatchGraceNs;
}

DbStatus OdbcSession::set_autocommit(bool on) {
  const SQLRETURN rc = SQLSetConnectAttr(dbc_.get(), SQL_ATTR_AUTOCOMMIT,
                                         reinterpret_cast<SQLPOINTER>(on ? SQL_AUTOCOMMIT_ON : SQL_AUTOCOMMIT_OFF), 0);
  if (!SQL_SUCCEEDED(rc)) return failure(SQL_HANDLE_DBC, dbc_.get(), false, CancelReason::none);
  autocommit_ = on;
  return {};
}

DbStatus OdbcSession::before_execute() {
  if (one_active_statement_) close_open_cursor();
  if (!in_tx_ && !autocommit_) return set_autocommit(true);  // outside begin(): commit as it runs
  return {};
}

void OdbcSession::cursor_opened(CursorOwner* owner) noexcept {
  if (one_active_statement_) cursor_owner_ = owner;
}

void OdbcSession::cursor_closed(CursorOwner* owner) noexcept {
  if (cursor_owner_ == owner) cursor_owner_ = nullptr;
}

void OdbcSession::close_open_cursor() noexcept {
  if (cursor_owner_ == nullptr) return;
  CursorOwner* owner = cursor_owner_;
  cursor_owner_ = nullptr;
  owner->close_cursor_for_session();
}

void OdbcSession::forget_loader(OdbcBulkLoader* loader) noexcept {
  loaders_.erase(std::remove(loaders_.begin(), loaders_.end(), loader), loaders_.end());
}

bool OdbcSession::connection_dead() const noexcept {
  SQLUINTEGER dead = SQL_CD_FALSE;
  if (!SQL_SUCCEEDED(SQLGetConnectAttr(dbc_.get(), SQL_ATTR_CONNECTION_DEAD, &dead, 0, nullptr))) return false;
  return dead == SQL_CD_TRUE;
}

DbStatus OdbcSession::failure(SQLSMALLINT handle_type, SQLHANDLE handle, bool in_commit, CancelReason why) {
  const auto records = read_diagnostics(handle_type, handle);
  DbStatus s = classify(records, shared_->options.dialect, in_commit, connection_dead());
  s.message = shared_->scrub(std::move(s.message));
  if (why != CancelReason::none && !s.connection_lost) {
    // Whatever the driver calls a cancelled call (57014, HY008, MySQL 1317), it is ours.
    s.outcome = Outcome::retryable;
    s.message = (why == CancelReason::stop_requested
                     ? std::string("cancelled (stop requested): ")
                     : fmt::format("cancelled after the query timeout of {} s: ", query_timeout_s_)) +
                s.message;
  }
  return s;
}

void OdbcSession::throw_failure(SQLSMALLINT handle_type, SQLHANDLE handle, std::string_view what) {
  const auto records = read_diagnostics(handle_type, handle);
  // A storage failure throws StorageFailure (classify reads the records as for a status).
  throw_as(classify(records, shared_->options.dialect, false, false),
           shared_->scrub(fmt::format("odbc: {}: {}", what, format_diagnostics(records))));
}

DbStatus OdbcSession::begin(TxMode mode) {
  // ODBC has no BEGIN: in manual-commit mode the driver opens a transaction with the first
  // statement. The access mode is a hint for the driver (T-SQL has no START TRANSACTION READ
  // ONLY); set only when it changes, and never again once the driver says it ignores it.
  const bool read_only = mode == TxMode::read_only;
  if (read_only != read_only_ && access_mode_supported_) {
    const SQLRETURN rc =
        SQLSetConnectAttr(dbc_.get(), SQL_ATTR_ACCESS_MODE,
                          reinterpret_cast<SQLPOINTER>(read_only ? SQL_MODE_READ_ONLY : SQL_MODE_READ_WRITE), 0);
    if (rc == SQL_SUCCESS) {
      read_only_ = read_only;
    } else {
      access_mode_supported_ = false;  // 01S02 "option value changed", HYC00 "not implemented"
      if (read_only_) {
        SQLSetConnectAttr(dbc_.get(), SQL_ATTR_ACCESS_MODE, reinterpret_cast<SQLPOINTER>(SQL_MODE_READ_WRITE), 0);
        read_only_ = false;
      }
    }
  }
  if (autocommit_) {
    if (DbStatus s = set_autocommit(false); !s.ok()) return s;
  }
  in_tx_ = true;
  return {};
}

DbStatus OdbcSession::commit() {
  // Rows still buffered in bulk loaders belong to this transaction.
  for (OdbcBulkLoader* l : std::vector<OdbcBulkLoader*>(loaders_)) {
    try {
      flush_loader(*l);
    } catch (const BackendError& e) {
      DbStatus s;
      s.outcome = Outcome::fatal;
      s.sqlstate = e.sqlstate();
      s.native_code = e.native_code();
      s.message = e.what();
      return s;
    }
  }
  close_open_cursor();
  const SQLRETURN rc = SQLEndTran(SQL_HANDLE_DBC, dbc_.get(), SQL_COMMIT);
  in_tx_ = false;
  if (!SQL_SUCCEEDED(rc)) return failure(SQL_HANDLE_DBC, dbc_.get(), true, CancelReason::none);
  return {};
}

DbStatus OdbcSession::rollback() {
  for (OdbcBulkLoader* l : loaders_) discard_loader(*l);
  close_open_cursor();
  const SQLRETURN rc = SQLEndTran(SQL_HANDLE_DBC, dbc_.get(), SQL_ROLLBACK);
  in_tx_ = false;
  if (!SQL_SUCCEEDED(rc)) return failure(SQL_HANDLE_DBC, dbc_.get(), false, CancelReason::none);
  return {};
}

std::unique_ptr<Statement> OdbcSession::prepare(std::string_view sql) { return make_statement(*this, sql); }

void OdbcSession::execute_immediate(std::string_view sql) {
  if (const DbStatus s = before_execute(); !s.ok()) throw_status("odbc", s);
  StmtHandle h = make_stmt(dbc_.get());
  std::string text(sql);
  SQLRETURN rc = SQL_ERROR;
  {
    RunningCall call(*slot_, h.get(), 0);  // DDL may take long (an index on 1,500 warehouses)
    rc = SQLExecDirect(h.get(), reinterpret_cast<SQLCHAR*>(text.data()), static_cast<SQLINTEGER>(text.size()));
  }
  if (!SQL_SUCCEEDED(rc) && rc != SQL_NO_DATA) throw_failure(SQL_HANDLE_STMT, h.get(), fmt::format("'{}'", text));
}

std::unique_ptr<BulkLoader> OdbcSession::bulk_loader(std::string_view table, const std::vector<std::string>& columns) {
  OdbcBulkLoader* raw = nullptr;
  auto loader = make_bulk_loader(*this, table, columns, raw);
  loaders_.push_back(raw);
  return loader;
}

void OdbcSession::set_cancel_flag(const std::atomic<bool>* flag) noexcept {
  slot_->cancel_flag.store(flag, std::memory_order_release);
}

// ---- backend -----------------------------------------------------------------------------------

namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

/// Runs a query and calls `row(stmt)` per row. Throws BackendError.
template <class F>
void for_each_row(Connection& c, const std::string& sql, F&& row) {
  auto q = c.prepare(sql);
  DbStatus s = q->execute();
  if (!s.ok()) throw_status("odbc: " + sql, s);
  while (q->next(s)) row(*q);
  if (!s.ok()) throw_status("odbc: " + sql, s);
}

std::string query_text(Connection& c, const std::string& sql) {
  std::string out;
  for_each_row(c, sql, [&](Statement& q) { out = std::string(q.column_text(0)); });
  return out;
}

/// A number from a counter's text (integers stay integers in the JSON).
std::optional<results::Json> number(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::size_t used = 0;
  try {
    const std::string t(text);
    const long long i = std::stoll(t, &used);
    if (used == t.size()) return results::Json(i);
    const double d = std::stod(t, &used);
    if (used == t.size()) return results::Json(d);
  } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): not a number: the text below
  }
  return std::nullopt;
}

/// Where the benchmark's tables live: the current schema (PostgreSQL, SQL Server) or the
/// current database (MySQL, whose catalogs are databases).
struct TableScope {
  std::string catalog;
  std::string schema;
};

struct TableName {
  std::string catalog, schema, name;
};

class OdbcBackend final : public Backend {
 public:
  explicit OdbcBackend(std::shared_ptr<Shared> shared) : shared_(std::move(shared)) {}

  const Dialect& dialect() const noexcept override { return shared_->dialect; }
  Capabilities capabilities() const noexcept override { return odbc_capabilities(); }

  std::unique_ptr<Connection> connect() override {
    return std::make_unique<OdbcSession>(shared_, shared_->options.query_timeout_s);
  }
  std::unique_ptr<Connection> connect_for_load() override { return admin(); }

  void finish_load() override {
    // Fresh planner statistics for PostgreSQL (autovacuum would get there later); InnoDB and
    // SQL Server keep theirs up to date as rows arrive.
    if (shared_->options.dialect == SqlDialect::postgres) admin()->execute_immediate("ANALYZE");
  }

  bool exists() const override {
    std::unique_ptr<OdbcSession> s;
    try {
      s = admin();
    } catch (const UnknownDatabase&) {
      return false;
    }
    return !list_tables(*s).empty();
  }

  void destroy() override {
    std::unique_ptr<OdbcSession> s;
    try {
      s = admin();
    } catch (const UnknownDatabase&) {
      return;  // nothing to remove
    }
    auto tables = list_tables(*s);
    if (tables.empty()) return;
    const auto meta =
        std::find_if(tables.begin(), tables.end(), [](const TableName& t) { return iequals(t.name, "drivelab_meta"); });
    if (meta == tables.end()) {
      throw BackendError(fmt::format(
          "odbc: database '{}' holds {} table(s) ({}{}{}) and no drivelab_meta: it was not created by drivelab, so "
          "nothing was dropped (drivelab never destroys data the user did not name); name an empty database",
          database_name(*s), tables.size(), tables[0].name, tables.size() > 1 ? ", " : "",
          tables.size() > 1 ? tables[1].name : ""));
    }
    // drivelab_meta last: an interrupted destroy leaves the database recognisably drivelab's.
    std::rotate(meta, meta + 1, tables.end());
    const std::string q = info_text(s->dbc(), SQL_IDENTIFIER_QUOTE_CHAR);
    const std::string quote = q == " " ? std::string() : q;
    const auto quoted = [&](const std::string& id) {
      std::string out = quote;
      for (char c : id) {
        out += c;
        if (!quote.empty() && c == quote[0]) out += c;
      }
      return out + quote;
    };
    for (const TableName& t : tables) {
      const std::string prefix =
          shared_->options.dialect == SqlDialect::mysql || t.schema.empty() ? std::string() : quoted(t.schema) + ".";
      s->execute_immediate("DROP TABLE " + prefix + quoted(t.name));
    }
  }

  std::optional<std::uint64_t> size_bytes() const override {
    std::string sql;
    switch (shared_->options.dialect) {
      case SqlDialect::postgres: sql = "SELECT pg_database_size(current_database())"; break;
      case SqlDialect::mysql:
        sql =
            "SELECT COALESCE(SUM(data_length + index_length), 0) FROM information_schema.tables "
            "WHERE table_schema = DATABASE()";
        break;
      case SqlDialect::sqlserver: sql = "SELECT SUM(CAST(size AS BIGINT)) * 8192 FROM sys.database_files"; break;
      case SqlDialect::sqlite: return std::nullopt;
    }
    try {
      auto s = admin();
      const auto n = number(query_text(*s, sql));
      if (n && n->is_number()) return n->get<std::uint64_t>();
    } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): unknown: nullopt below
    }
    return std::nullopt;
  }

  results::Json describe() const override {
    results::Json j{
        {"backend", "odbc"}, {"dialect", to_string(shared_->options.dialect)}, {"connection", shared_->redacted}};
    bool known = false;
    {
      std::lock_guard lock(shared_->info_mu);
      known = shared_->driver_info.has_value();
    }
    if (!known) {
      try {
        admin();                         // not connected yet: one session for the driver's self-description
      } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): the driver stays unknown
      }
    }
    {
      std::lock_guard lock(shared_->info_mu);
      if (shared_->driver_info) j.update(*shared_->driver_info);
    }
    switch (shared_->bulk_mode.load()) {
      case BulkMode::multi_row:
        j["bulk_load"] = fmt::format("multi-row INSERT of up to {} rows", shared_->options.bulk_rows);
        break;
      case BulkMode::arrays:
        j["bulk_load"] = fmt::format("parameter arrays of {} rows (column-wise)", shared_->options.bulk_rows);
        break;
      case BulkMode::rows: j["bulk_load"] = "row at a time (the driver refused parameter arrays)"; break;
      case BulkMode::unknown: j["bulk_load"] = "not used yet"; break;
    }
    const BulkLimits limits = bulk_limits(shared_->options.dialect);
    j["bulk_max_parameters"] = limits.max_parameters;
    if (limits.max_array_bytes > 0) j["bulk_max_array_bytes"] = limits.max_array_bytes;
    j["query_timeout_s"] = shared_->options.query_timeout_s;
    j["cancel"] = "SQLCancel from a watcher thread (checked every 50 ms)";
    return j;
  }

  results::Json server_counters() override {
    results::Json out = results::Json::object();
    try {
      auto s = admin();
      switch (shared_->options.dialect) {
        case SqlDialect::postgres: postgres_counters(*s, out); break;
        case SqlDialect::mysql: mysql_counters(*s, out); break;
        case SqlDialect::sqlserver: sqlserver_counters(*s, out); break;
        case SqlDialect::sqlite: break;
      }
    } catch (const std::exception&) {
      return results::Json::object();  // best effort: counters are context, not the result
    }
    return out;
  }

 private:
  /// A session without query timeout (load, DDL, bookkeeping).
  std::unique_ptr<OdbcSession> admin() const { return std::make_unique<OdbcSession>(shared_, 0); }

  std::string database_name(OdbcSession& s) const {
    std::array<SQLCHAR, 256> buf{};
    SQLINTEGER length = 0;
    if (SQL_SUCCEEDED(SQLGetConnectAttr(s.dbc(), SQL_ATTR_CURRENT_CATALOG, buf.data(),
                                        static_cast<SQLINTEGER>(buf.size()), &length)) &&
        length > 0)
      return std::string(reinterpret_cast<const char*>(buf.data()),
                         std::min<std::size_t>(static_cast<std::size_t>(length), buf.size() - 1));
    return find_attr(parse_connection_string(shared_->redacted), {"Database", "DB", "Initial Catalog"})
        .value_or("(the DSN's database)");
  }

  TableScope scope(OdbcSession& s) const {
    TableScope sc;
    switch (shared_->options.dialect) {
      case SqlDialect::postgres: sc.schema = query_text(s, "SELECT current_schema()"); break;
      case SqlDialect::sqlserver: sc.schema = query_text(s, "SELECT SCHEMA_NAME()"); break;
      case SqlDialect::mysql: sc.catalog = query_text(s, "SELECT DATABASE()"); break;
      case SqlDialect::sqlite: break;
    }
    return sc;
  }

  /// The base tables in scope, by SQLTables.
  std::vector<TableName> list_tables(OdbcSession& s) const {
    const TableScope sc = scope(s);
    // The schema argument of SQLTables is a search pattern: escape its '_' and '%'.
    std::string schema;
    const std::string escape = info_text(s.dbc(), SQL_SEARCH_PATTERN_ESCAPE);
    for (char c : sc.schema) {
      if ((c == '_' || c == '%') && !escape.empty()) schema += escape;
      schema += c;
    }
    std::string catalog = sc.catalog;
    std::string name = "%";
    std::string type = "TABLE";
    StmtHandle h = make_stmt(s.dbc());
    const auto arg = [](std::string& v, bool use) {
      return std::pair<SQLCHAR*, SQLSMALLINT>(use ? reinterpret_cast<SQLCHAR*>(v.data()) : nullptr,
                                              use ? static_cast<SQLSMALLINT>(v.size()) : SQLSMALLINT{0});
    };
    const auto [cat_p, cat_n] = arg(catalog, !catalog.empty());
    const auto [sch_p, sch_n] = arg(schema, !sc.schema.empty());
    const SQLRETURN rc = SQLTables(h.get(), cat_p, cat_n, sch_p, sch_n, reinterpret_cast<SQLCHAR*>(name.data()),
                                   static_cast<SQLSMALLINT>(name.size()), reinterpret_cast<SQLCHAR*>(type.data()),
                                   static_cast<SQLSMALLINT>(type.size()));
    if (!SQL_SUCCEEDED(rc)) s.throw_failure(SQL_HANDLE_STMT, h.get(), "SQLTables");
    std::vector<TableName> out;
    const auto text = [&](SQLUSMALLINT col) {
      std::array<char16_t, 256> buf{};
      SQLLEN ind = 0;
      std::string v;
      if (SQL_SUCCEEDED(SQLGetData(h.get(), col, SQL_C_WCHAR, buf.data(), static_cast<SQLLEN>(sizeof buf), &ind)) &&
          ind != SQL_NULL_DATA) {
        const auto n = std::min<std::size_t>(ind == SQL_NO_TOTAL ? buf.size() - 1 : static_cast<std::size_t>(ind) / 2,
                                             buf.size() - 1);
        utf16_to_utf8(std::u16string_view(buf.data(), n), v);
      }
      return v;
    };
    for (SQLRETURN f = SQLFetch(h.get()); SQL_SUCCEEDED(f); f = SQLFetch(h.get()))
      out.push_back({text(1), text(2), text(3)});
    return out;
  }

  static void postgres_counters(OdbcSession& s, results::Json& out) {
    static constexpr std::string_view kColumns[] = {"xact_commit",  "xact_rollback", "blks_read",     "blks_hit",
                                                    "tup_returned", "tup_fetched",   "tup_inserted",  "tup_updated",
                                                    "tup_deleted",  "conflicts",     "deadlocks",     "temp_files",
                                                    "temp_bytes",   "blk_read_time", "blk_write_time"};
    const std::string sql =
        fmt::format("SELECT {} FROM pg_stat_database WHERE datname = current_database()", fmt::join(kColumns, ", "));
    for_each_row(s, sql, [&](Statement& q) {
      for (std::size_t i = 0; i < std::size(kColumns); ++i)
        if (auto n = number(q.column_text(static_cast<int>(i)))) out[std::string(kColumns[i])] = *n;
    });
  }

  static void mysql_counters(OdbcSession& s, results::Json& out) {
    // Innodb_rows_* exist in MySQL and MariaDB < 10.6; MariaDB 10.6+ counts rows in Rows_read
    // and Handler_* only.
    static constexpr std::string_view kPrefixes[] = {"Innodb_rows_",
                                                     "Innodb_data_",
                                                     "Innodb_buffer_pool_read",
                                                     "Innodb_buffer_pool_write_requests",
                                                     "Innodb_os_log_written",
                                                     "Innodb_log_writes",
                                                     "Innodb_row_lock_",
                                                     "Innodb_deadlocks",
                                                     "Innodb_pages_",
                                                     "Rows_read",
                                                     "Handler_write",
                                                     "Handler_update",
                                                     "Handler_delete",
                                                     "Handler_read_key",
                                                     "Handler_read_next",
                                                     "Handler_commit",
                                                     "Handler_rollback",
                                                     "Com_commit",
                                                     "Com_rollback",
                                                     "Questions"};
    for_each_row(s, "SHOW GLOBAL STATUS", [&](Statement& q) {
      const std::string name(q.column_text(0));
      const bool wanted = std::any_of(std::begin(kPrefixes), std::end(kPrefixes),
                                      [&](std::string_view p) { return name.starts_with(p); });
      if (!wanted) return;
      if (auto n = number(q.column_text(1))) out[name] = *n;
    });
  }

  /// Cumulative file I/O of the database and the raw values of two "per second" counters
  /// (sys.dm_os_performance_counters keeps them as running totals: cntr_type 272696576).
  static void sqlserver_counters(OdbcSession& s, results::Json& out) {
    for_each_row(s,
                 "SELECT SUM(num_of_reads), SUM(num_of_writes), SUM(num_of_bytes_read), SUM(num_of_bytes_written), "
                 "SUM(io_stall_read_ms), SUM(io_stall_write_ms) FROM sys.dm_io_virtual_file_stats(DB_ID(), NULL)",
                 [&](Statement& q) {
                   static constexpr std::string_view kNames[] = {"num_of_reads",      "num_of_writes",
                                                                 "num_of_bytes_read", "num_of_bytes_written",
                                                                 "io_stall_read_ms",  "io_stall_write_ms"};
                   for (std::size_t i = 0; i < std::size(kNames); ++i)
                     if (auto n = number(q.column_text(static_cast<int>(i)))) out[std::string(kNames[i])] = *n;
                 });
    for_each_row(
        s,
        "SELECT RTRIM(counter_name), cntr_value FROM sys.dm_os_performance_counters WHERE "
        "(object_name LIKE '%:SQL Statistics%' AND counter_name = 'Batch Requests/sec') OR "
        "(object_name LIKE '%:Databases%' AND counter_name = 'Transactions/sec' AND instance_name = DB_NAME())",
        [&](Statement& q) {
          if (auto n = number(q.column_text(1))) out[std::string(q.column_text(0))] = *n;
        });
  }

  std::shared_ptr<Shared> shared_;
};

}  // namespace
}  // namespace odbc

std::unique_ptr<Backend> make_odbc_backend(OdbcOptions options) {
  if (options.connection_string.empty())
    throw ConfigError("odbc: empty connection string (give DSN=name or Driver={...};...)");
  if (options.query_timeout_s < 0) throw ConfigError("odbc: query timeout must be >= 0 s");
  if (options.bulk_rows < 1) throw ConfigError("odbc: bulk_rows must be >= 1");
  auto shared = std::make_shared<odbc::Shared>();
  std::string cs = options.connection_string;
  const auto attrs = odbc::parse_connection_string(cs);
  if (options.dialect == SqlDialect::postgres && !odbc::find_attr(attrs, {"Protocol"})) {
    // psqlODBC: roll back the transaction on errors instead of a SAVEPOINT around every statement.
    if (!cs.empty() && cs.back() != ';') cs += ';';
    cs += "Protocol=7.4-1";
  }
  shared->redacted = odbc::redact_connection_string(cs);
  shared->connection_string = odbc::with_credentials(cs, options.user, options.password);
  shared->dialect = make_dialect(options.dialect);
  shared->options = std::move(options);
  shared->env = odbc::make_env();
  return std::make_unique<odbc::OdbcBackend>(std::move(shared));
}

BulkLimits bulk_limits(SqlDialect dialect) noexcept {
  switch (dialect) {  // the sources of each number: odbc_backend.hpp
    case SqlDialect::postgres: return {.max_parameters = 7'000, .max_array_bytes = 0};
    case SqlDialect::mysql: return {.max_parameters = 65'535, .max_array_bytes = std::size_t{1} << 20};
    case SqlDialect::sqlserver: return {.max_parameters = 2'100, .max_array_bytes = 0};
    case SqlDialect::sqlite: return {.max_parameters = 32'766, .max_array_bytes = 0};
  }
  return {.max_parameters = 2'100, .max_array_bytes = 0};
}

std::string odbc_connection_string(ServerKind kind, const Endpoint& endpoint, const std::string& database) {
  using odbc::quote_value;
  std::string s;
  if (kind == ServerKind::postgres) {
    // psqlODBC hands Servername to libpq as host: a directory means the Unix socket in it.
    s = fmt::format("Driver={{{}}};Servername={};Port={};Database={}", odbc_driver_for(kind),
                    quote_value(!endpoint.socket_path.empty() ? endpoint.socket_path : endpoint.host),
                    endpoint.port > 0 ? endpoint.port : 5432, quote_value(database));
    if (!endpoint.user.empty()) s += ";Username=" + quote_value(endpoint.user);
    s += ";Protocol=7.4-1";
  } else {
    s = fmt::format("Driver={{{}}};", odbc_driver_for(kind));
    if (!endpoint.socket_path.empty())
      s += "Socket=" + quote_value(endpoint.socket_path);
    else
      s += fmt::format("Server={};Port={}", quote_value(endpoint.host), endpoint.port > 0 ? endpoint.port : 3306);
    s += ";Database=" + quote_value(database);
    if (!endpoint.user.empty()) s += ";User=" + quote_value(endpoint.user);
  }
  return s;
}

std::string_view odbc_driver_for(ServerKind kind) noexcept {
  return kind == ServerKind::postgres ? "PostgreSQL Unicode" : "MariaDB Unicode";
}

std::string odbc_driver_problem(std::string_view driver) {
  const odbc::EnvHandle env = odbc::make_env();
  const std::vector<std::string> drivers = odbc::installed_drivers(static_cast<SQLHENV>(env.get()));
  const auto same = [&](const std::string& d) {
    return d.size() == driver.size() && std::equal(d.begin(), d.end(), driver.begin(), [](char a, char b) {
             return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
           });
  };
  if (std::any_of(drivers.begin(), drivers.end(), same)) return {};
  const std::string_view package = odbc::debian_package_of_driver(driver);
  return fmt::format(
      "odbc: the ODBC driver '{}' is not installed (not in the driver manager's odbcinst.ini; "
      "`odbcinst -q -d` lists the installed drivers: {}){}",
      driver, drivers.empty() ? std::string("none") : fmt::format("{}", fmt::join(drivers, ", ")),
      package.empty() ? std::string() : fmt::format(": Debian: apt-get install {}", package));
}

Capabilities odbc_capabilities() noexcept {
  return {.serialized_writers = false, .max_load_threads = 8, .embedded = false, .server_procedures = false};
}

}  // namespace drivelab::oltp
