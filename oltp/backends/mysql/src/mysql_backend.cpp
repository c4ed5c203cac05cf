// MySQL/MariaDB through MySQL Connector/C++ 1.1 (mysql_backend.hpp). The cancel watcher is in
// mysql_cancel.cpp, connecting and error classification in mysql_common.cpp.
#include "drivelab/oltp/backends/mysql/mysql_backend.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

#include <fmt/format.h>
#include <cppconn/connection.h>
#include <cppconn/exception.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <cppconn/resultset_metadata.h>
#include <cppconn/statement.h>

#include "drivelab/core/errors.hpp"
#include "mysql_cancel.hpp"
#include "mysql_common.hpp"

namespace drivelab::oltp {
namespace {

using mysql::WatchedCall;

/// Client read timeouts (see ConnectParams). The sessions of a run (connect()) have none: the
/// call watcher bounds a call to a server that stopped answering (mysql_cancel.hpp), and
/// libmariadb waits for each reply without arming a kernel timer, as sysbench's sessions do.
/// Short-lived administrative sessions keep 600 s; the load's (connect_for_load(): index builds
/// and 1 MiB inserts at review-lab scale take minutes) 3,600 s.
constexpr int kRunReadTimeoutS = 0;
constexpr int kAdminReadTimeoutS = 600;
constexpr int kLoadReadTimeoutS = 3600;
/// Size at which a bulk loader sends its multi-row INSERT. Below MySQL 5.7's 4 MiB
/// max_allowed_packet (MariaDB 10.11: 16 MiB); measured in docs/backend-mysql.md.
constexpr std::size_t kBulkStatementBytes = 1u << 20;

std::string abbreviated(std::string_view sql) {
  constexpr std::size_t kMax = 200;
  return sql.size() <= kMax ? std::string(sql) : std::string(sql.substr(0, kMax)) + "...";
}

// ---- Statement ---------------------------------------------------------------------------------

class MysqlStatement final : public Statement {
 public:
  /// `columns`: result columns from the prepare (0 for INSERT/UPDATE/DELETE/...).
  MysqlStatement(mysql::CallSlot* slot, std::unique_ptr<sql::PreparedStatement> ps, std::size_t columns,
                 std::string sql)
      : slot_(slot), ps_(std::move(ps)), texts_(columns), sql_(std::move(sql)) {}

  void bind_int64(int index, std::int64_t value) override {
    bind([&] { ps_->setInt64(static_cast<unsigned>(index), value); }, index);
  }
  void bind_double(int index, double value) override {
    bind([&] { ps_->setDouble(static_cast<unsigned>(index), value); }, index);
  }
  void bind_text(int index, std::string_view value) override {
    // setString copies: the caller's text may go away after execute().
    bind([&] { ps_->setString(static_cast<unsigned>(index), sql::SQLString(value.data(), value.size())); }, index);
  }
  void bind_null(int index) override {
    bind([&] { ps_->setNull(static_cast<unsigned>(index), sql::DataType::VARCHAR); }, index);
  }

  DbStatus execute() override {
    rs_.reset();
    affected_ = 0;
    WatchedCall call(slot_, true);
    try {
      if (!texts_.empty()) {
        // Connector/C++ 1.1 stores the whole result (mysql_stmt_store_result): every wait
        // happens here, next() only walks client memory.
        rs_.reset(ps_->executeQuery());
      } else {
        affected_ = ps_->executeUpdate();
      }
    } catch (const sql::SQLException& e) {
      rs_.reset();
      return mysql::status_from(e, false);
    }
    return {};
  }

  bool next(DbStatus& status) override {
    status = {};
    if (!rs_) return false;
    try {
      if (rs_->next()) return true;
    } catch (const sql::SQLException& e) {
      status = mysql::status_from(e, false);
    }
    rs_.reset();
    return false;
  }

  DbStatus discard_rows() override {
    // executeQuery() stored the whole result (mysql_stmt_store_result): freeing it reads
    // nothing more from the server and skips Connector/C++'s per-row fetch, which copies every
    // value into the buffers it bound for the result.
    rs_.reset();
    return {};
  }

  std::int64_t affected_rows() const override { return affected_; }
  bool is_null(int column) const override { return rs_->isNull(index(column)); }
  std::int64_t column_int64(int column) const override { return rs_->getInt64(index(column)); }
  double column_double(int column) const override { return static_cast<double>(rs_->getDouble(index(column))); }
  std::string_view column_text(int column) const override {
    auto& slot = texts_.at(static_cast<std::size_t>(column));
    slot = rs_->getString(index(column)).asStdString();
    return slot;
  }

 private:
  static std::uint32_t index(int column) { return static_cast<std::uint32_t>(column + 1); }

  template <class F>
  void bind(F&& f, int index) {
    try {
      f();
    } catch (const sql::SQLException& e) {
      mysql::throw_backend(e, fmt::format("bind parameter {} of '{}'", index, abbreviated(sql_)));
    }
  }

  mysql::CallSlot* slot_;
  std::unique_ptr<sql::PreparedStatement> ps_;
  std::unique_ptr<sql::ResultSet> rs_;      // declared after ps_: destroyed first
  mutable std::vector<std::string> texts_;  // one per result column: column_text of the current row
  std::string sql_;
  std::int64_t affected_ = 0;
};

// ---- BulkLoader --------------------------------------------------------------------------------

/// Multi-row `INSERT INTO t (cols) VALUES (...),(...)` statements of about 1 MiB, values as
/// escaped SQL literals (mysql_common.cpp: append_quoted). Needs no local_infile permission and
/// no server-side file, unlike LOAD DATA. Text statements, not a prepared multi-row INSERT: a
/// prepared statement has a fixed row count (the tail would need a second one) and Connector/C++
/// 1.1 copies every bound value into its own buffers, so it saves no work here.
class MysqlBulkLoader;
/// The live bulk loaders of one connection: COMMIT flushes what they still buffer.
using LoaderList = std::vector<MysqlBulkLoader*>;

class MysqlBulkLoader final : public BulkLoader {
 public:
  MysqlBulkLoader(sql::Statement& sender, LoaderList& live, std::string table, const std::vector<std::string>& columns,
                  bool no_backslash_escapes)
      : sender_(sender),
        live_(live),
        table_(std::move(table)),
        columns_(columns.size()),
        no_backslash_escapes_(no_backslash_escapes) {
    live_.push_back(this);
    std::vector<std::string> quoted;
    quoted.reserve(columns.size());
    for (const auto& c : columns) quoted.push_back(mysql::quote_identifier(c));
    prefix_ = fmt::format("INSERT INTO {} ({}) VALUES ", mysql::quote_identifier(table_), fmt::join(quoted, ", "));
    buf_.reserve(kBulkStatementBytes + 64 * 1024);
  }
  ~MysqlBulkLoader() override { live_.erase(std::find(live_.begin(), live_.end(), this)); }
  MysqlBulkLoader(const MysqlBulkLoader&) = delete;
  MysqlBulkLoader& operator=(const MysqlBulkLoader&) = delete;

  /// Complete rows buffered and not sent yet.
  bool pending() const noexcept { return rows_ > 0; }

  void add_int64(std::int64_t value) override {
    separator();
    const fmt::format_int f(value);
    buf_.append(f.data(), f.size());
  }
  void add_double(double value) override {
    if (!std::isfinite(value))
      throw BackendError(fmt::format("mysql: bulk insert into {}: {} is not a SQL number", table_, value));
    separator();
    fmt::format_to(std::back_inserter(buf_), "{}", value);  // shortest text that reads back exactly
  }
  void add_text(std::string_view value) override {
    separator();
    mysql::append_quoted(buf_, value, no_backslash_escapes_);
  }
  void add_null() override {
    separator();
    buf_ += "NULL";
  }
  void end_row() override {
    if (column_ != columns_)
      throw InternalError(
          fmt::format("bulk insert into {}: row has {} values for {} columns", table_, column_, columns_));
    buf_ += ')';
    column_ = 0;
    ++rows_;
    if (buf_.size() >= kBulkStatementBytes) send();
  }
  void flush() override {
    if (column_ != 0) throw InternalError(fmt::format("bulk insert into {}: flush in the middle of a row", table_));
    if (rows_ > 0) send();
  }

 private:
  void separator() {
    if (column_ == 0) {
      if (rows_ == 0)
        buf_.assign(prefix_);
      else
        buf_ += ',';
      buf_ += '(';
    } else {
      buf_ += ',';
    }
    ++column_;
  }
  void send() {
    try {
      sender_.execute(sql::SQLString(buf_));
    } catch (const sql::SQLException& e) {
      mysql::throw_backend(e, fmt::format("bulk insert of {} rows into {}", rows_, table_));
    }
    rows_ = 0;
    buf_.clear();
  }

  sql::Statement& sender_;
  LoaderList& live_;
  std::string table_;
  std::size_t columns_;
  bool no_backslash_escapes_;
  std::string prefix_;
  std::string buf_;
  std::size_t column_ = 0;  // values of the current row so far
  std::size_t rows_ = 0;    // complete rows in buf_
};

// ---- Connection --------------------------------------------------------------------------------

class MysqlConnection final : public Connection {
 public:
  MysqlConnection(std::unique_ptr<sql::Connection> conn, std::shared_ptr<mysql::CancelWatcher> watcher)
      : conn_(std::move(conn)), watcher_(std::move(watcher)) {
    watcher_->add(slot_);  // the setup below is watched too (its connection id is not known yet)
    try {
      WatchedCall call(slot_.get(), false);
      ctl_.reset(conn_->createStatement());
      // Autocommit stays ON (the server default), as in the SQLite and PostgreSQL backends:
      // begin() opens an explicit transaction (START TRANSACTION suspends autocommit until
      // COMMIT/ROLLBACK), and a statement outside one commits by itself. Callers rely on the
      // latter (DDL, drivelab_meta writes after the load); with autocommit off their work would
      // be rolled back silently when the session closes.
      try {
        // MySQL 5.7 defaults to OFF: TIMESTAMP columns would then become NOT NULL with
        // ON UPDATE CURRENT_TIMESTAMP (breaking O_ENTRY_D and the NULL OL_DELIVERY_D of TPC-C).
        // MariaDB >= 10.10 and MySQL 8 default to ON; older servers may refuse the SET.
        ctl_->execute("SET SESSION explicit_defaults_for_timestamp = 1");
      } catch (const sql::SQLException&) {  // NOLINT(bugprone-empty-catch): a refused SET keeps the server's default
      }
      std::unique_ptr<sql::ResultSet> rs(ctl_->executeQuery("SELECT CONNECTION_ID()"));
      if (rs->next()) {
        const auto id = static_cast<std::uint64_t>(rs->getInt64(1));
        std::lock_guard lock(slot_->mu);
        slot_->connection_id = id;
      }
    } catch (const sql::SQLException& e) {
      mysql::throw_backend(e, "session setup");
    }
  }
  ~MysqlConnection() override { slot_->release(); }
  MysqlConnection(const MysqlConnection&) = delete;
  MysqlConnection& operator=(const MysqlConnection&) = delete;

  DbStatus begin(TxMode mode) override {
    mysql::ensure_thread_init();
    return control(mode == TxMode::read_only ? begin_read_only_sql_ : begin_sql_, false);
  }
  DbStatus commit() override {
    // Rows a caller added but did not flush() belong to this transaction: send them first,
    // as SQLite (one INSERT per row) would have.
    for (MysqlBulkLoader* l : loaders_) {
      if (!l->pending()) continue;
      try {
        l->flush();
      } catch (const BackendError& e) {
        DbStatus s;
        s.native_code = e.native_code();
        s.sqlstate = e.sqlstate();
        s.message = e.what();
        s.outcome = mysql::classify(s.native_code, s.message, false);  // nothing was committed yet
        if (s.outcome == Outcome::ok) s.outcome = Outcome::fatal;
        s.connection_lost = mysql::is_connection_lost(s.native_code);
        return s;
      }
    }
    return control(commit_sql_, true);
  }
  DbStatus rollback() override { return control(rollback_sql_, false); }

  std::unique_ptr<Statement> prepare(std::string_view sql) override {
    mysql::ensure_thread_init();
    const std::string text(sql);
    WatchedCall call(slot_.get(), false);
    try {
      // Server-side prepared (COM_STMT_PREPARE): counts against max_prepared_stmt_count.
      std::unique_ptr<sql::PreparedStatement> ps(conn_->prepareStatement(text));
      // The result metadata of the prepare tells a query (columns) from an update (none), so
      // execute() can use executeUpdate(), whose count getUpdateCount() does not provide in 1.1.
      const std::size_t columns = ps->getMetaData()->getColumnCount();
      return std::make_unique<MysqlStatement>(slot_.get(), std::move(ps), columns, text);
    } catch (const sql::SQLException& e) {
      mysql::throw_backend(e, fmt::format("prepare '{}'", abbreviated(text)));
    }
  }

  void execute_immediate(std::string_view sql) override {
    mysql::ensure_thread_init();
    for (const std::string& s : mysql::split_statements(sql)) {
      WatchedCall call(slot_.get(), false);
      try {
        // Statements that return rows (ANALYZE TABLE, SHOW ...) have them read and dropped.
        if (ctl_->execute(s)) std::unique_ptr<sql::ResultSet> rs(ctl_->getResultSet());
      } catch (const sql::SQLException& e) {
        mysql::throw_backend(e, abbreviated(s));
      }
    }
  }

  std::unique_ptr<BulkLoader> bulk_loader(std::string_view table, const std::vector<std::string>& columns) override {
    // How text literals must be escaped depends on the session's sql_mode at the time.
    bool no_backslash_escapes = false;
    try {
      std::unique_ptr<sql::ResultSet> rs(ctl_->executeQuery("SELECT @@SESSION.sql_mode"));
      if (rs->next())
        no_backslash_escapes = rs->getString(1).asStdString().find("NO_BACKSLASH_ESCAPES") != std::string::npos;
    } catch (const sql::SQLException& e) {
      mysql::throw_backend(e, "read sql_mode");
    }
    return std::make_unique<MysqlBulkLoader>(*ctl_, loaders_, std::string(table), columns, no_backslash_escapes);
  }

  void set_cancel_flag(const std::atomic<bool>* flag) noexcept override {
    slot_->cancel.store(flag, std::memory_order_relaxed);  // the watcher runs since add()
  }

 private:
  // The control statements as Connector strings, built once per session instead of per call.
  const sql::SQLString begin_sql_{"START TRANSACTION"};
  const sql::SQLString begin_read_only_sql_{"START TRANSACTION READ ONLY"};
  const sql::SQLString commit_sql_{"COMMIT"};
  const sql::SQLString rollback_sql_{"ROLLBACK"};

  DbStatus control(const sql::SQLString& sql, bool is_commit) {
    WatchedCall call(slot_.get(), false);  // COMMIT/ROLLBACK are never killed
    try {
      ctl_->execute(sql);
    } catch (const sql::SQLException& e) {
      return mysql::status_from(e, is_commit);
    }
    return {};
  }

  std::unique_ptr<sql::Connection> conn_;
  std::unique_ptr<sql::Statement> ctl_;  // after conn_: destroyed first
  std::shared_ptr<mysql::CancelWatcher> watcher_;
  std::shared_ptr<mysql::CallSlot> slot_ = std::make_shared<mysql::CallSlot>();
  LoaderList loaders_;  // live loaders (they deregister when destroyed; they must not outlive us)
};

// ---- Backend -----------------------------------------------------------------------------------

/// Runs `sql` with optional text parameters and calls row(rs) per row.
template <class F>
void query(sql::Connection& c, const std::string& sql, const std::vector<std::string>& params, F&& row) {
  std::unique_ptr<sql::PreparedStatement> ps(c.prepareStatement(sql));
  for (std::size_t i = 0; i < params.size(); ++i)
    ps->setString(static_cast<unsigned>(i + 1), sql::SQLString(params[i]));
  std::unique_ptr<sql::ResultSet> rs(ps->executeQuery());
  while (rs->next()) row(*rs);
}

/// "123" -> 123, "ON" -> "ON": SHOW output as JSON numbers where it is one.
results::Json number_or_text(const std::string& v) {
  if (!v.empty() && v.size() <= 19 && v.find_first_not_of("0123456789") == std::string::npos)
    return static_cast<std::uint64_t>(std::stoull(v));
  return v;
}

class MysqlBackend final : public Backend {
 public:
  explicit MysqlBackend(MysqlOptions options)
      : opt_(std::move(options)),
        dialect_(make_dialect(SqlDialect::mysql)),
        watcher_(std::make_shared<mysql::CancelWatcher>(params(kAdminReadTimeoutS, false))) {
    if (opt_.database.empty()) throw ConfigError("mysql: the database name is empty");
  }

  const Dialect& dialect() const noexcept override { return dialect_; }
  Capabilities capabilities() const noexcept override { return mysql_capabilities(); }
  HammerDbScript hammerdb_script() const noexcept override { return HammerDbScript::mariadb; }

  std::unique_ptr<Connection> connect() override { return open(kRunReadTimeoutS); }
  std::unique_ptr<Connection> connect_for_load() override { return open(kLoadReadTimeoutS); }

  void finish_load() override {
    // Every commit of the load was durable (innodb_flush_log_at_trx_commit as configured), so
    // nothing needs flushing. ANALYZE TABLE gives the optimizer statistics of the loaded tables
    // now instead of after InnoDB's background recalculation (it samples a few pages per index).
    auto c = mysql::connect(params(kLoadReadTimeoutS, true));
    const auto tables = list_tables(*c);
    if (tables.empty()) return;
    std::vector<std::string> names;
    for (const auto& t : tables)
      if (t.second == "BASE TABLE") names.push_back(mysql::quote_identifier(t.first));
    try {
      std::unique_ptr<sql::Statement> st(c->createStatement());
      if (st->execute(fmt::format("ANALYZE TABLE {}", fmt::join(names, ", "))))
        std::unique_ptr<sql::ResultSet> rs(st->getResultSet());
    } catch (const sql::SQLException& e) {
      mysql::throw_backend(e, fmt::format("ANALYZE TABLE in database '{}'", opt_.database));
    }
  }

  bool exists() const override {
    auto c = admin();
    return !list_tables(*c).empty();
  }

  void destroy() override {
    auto c = admin();
    const auto tables = list_tables(*c);
    if (tables.empty()) return;  // absent or empty: nothing of ours, nothing of anyone's
    const bool ours =
        std::any_of(tables.begin(), tables.end(), [](const auto& t) { return t.first == "drivelab_meta"; });
    if (!ours) {
      throw BackendError(
          fmt::format("mysql: refusing to destroy database '{}' at {}: it holds tables drivelab did not create "
                      "({}{}) and no drivelab_meta; name an empty database or one drivelab loaded",
                      opt_.database, mysql::where(opt_.endpoint), tables[0].first,
                      tables.size() > 1 ? ", " + tables[1].first : std::string()));
    }
    try {
      std::unique_ptr<sql::Statement> st(c->createStatement());
      st->execute("SET SESSION foreign_key_checks = 0");
      for (const auto& [name, type] : tables) {
        st->execute(fmt::format("DROP {} IF EXISTS {}.{}", type == "VIEW" ? "VIEW" : "TABLE",
                                mysql::quote_identifier(opt_.database), mysql::quote_identifier(name)));
      }
    } catch (const sql::SQLException& e) {
      mysql::throw_backend(e, fmt::format("destroy database '{}'", opt_.database));
    }
  }

  std::optional<std::uint64_t> size_bytes() const override {
    auto c = admin();
    std::optional<std::uint64_t> out;
    try {
      // InnoDB's own page counts (clustered index = data, secondary indexes), fresh after
      // ANALYZE TABLE (finish_load) and otherwise refreshed by InnoDB in the background.
      query(*c,
            "SELECT COUNT(*), COALESCE(SUM(data_length + index_length), 0) FROM information_schema.tables "
            "WHERE table_schema = ?",
            {opt_.database}, [&](sql::ResultSet& rs) {
              if (rs.getInt64(1) > 0) out = static_cast<std::uint64_t>(rs.getInt64(2));
            });
    } catch (const sql::SQLException& e) {
      mysql::throw_backend(e, "size of database");
    }
    return out;
  }

  results::Json describe() const override {
    results::Json j{{"backend", "mysql"},
                    {"connector", "MySQL Connector/C++ " + mysql::connector_version()},
                    {"database", opt_.database},
                    {"user", opt_.endpoint.user}};
    if (!opt_.endpoint.socket_path.empty()) {
      j["socket"] = opt_.endpoint.socket_path;
    } else {
      j["host"] = opt_.endpoint.host;
      j["port"] = opt_.endpoint.port > 0 ? opt_.endpoint.port : 3306;
    }
    // Run sessions: no client read timeout; a call to a server that stops answering is ended
    // by the call watcher (mysql_cancel.hpp) after these.
    const mysql::WatchLimits limits;
    j["read_timeout_s"] = nullptr;
    j["unresponsive_server"] = {{"after_stop_s", limits.unresponsive_after_ns / 1'000'000'000},
                                {"deadline_s", limits.deadline_ns / 1'000'000'000}};
    j["bulk_statement_bytes"] = kBulkStatementBytes;
    try {
      auto c = admin();
      query(*c, "SELECT VERSION(), @@version_comment", {}, [&](sql::ResultSet& rs) {
        j["server_version"] = rs.getString(1).asStdString();
        j["server_version_comment"] = rs.getString(2).asStdString();
      });
      results::Json vars = results::Json::object();
      query(*c,
            "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('innodb_buffer_pool_size', "
            "'innodb_flush_log_at_trx_commit', 'innodb_flush_method', 'innodb_log_file_size', "
            "'innodb_doublewrite', 'innodb_lock_wait_timeout', 'innodb_io_capacity', 'log_bin', "
            "'sync_binlog', 'max_connections', 'max_prepared_stmt_count', 'tx_isolation', "
            "'transaction_isolation', 'character_set_server')",
            {}, [&](sql::ResultSet& rs) {
              vars[rs.getString(1).asStdString()] = number_or_text(rs.getString(2).asStdString());
            });
      j["variables"] = vars;
    } catch (const std::exception& e) {
      // A description must not fail the record; say why it is thin.
      j["error"] = e.what();
    }
    return j;
  }

  results::Json server_counters() override {
    // Innodb_rows_* exist in MySQL but not in MariaDB >= 10.6; the Handler_* row operations
    // (all engines) are in both. Names a server lacks are simply absent from the result.
    static constexpr const char* kCounters =
        "'Innodb_rows_read', 'Innodb_rows_inserted', 'Innodb_rows_updated', 'Innodb_rows_deleted', "
        "'Handler_read_key', 'Handler_read_next', 'Handler_read_rnd_next', 'Handler_write', "
        "'Handler_update', 'Handler_delete', "
        "'Innodb_data_reads', 'Innodb_data_writes', 'Innodb_data_read', 'Innodb_data_written', "
        "'Innodb_data_fsyncs', 'Innodb_os_log_written', 'Innodb_os_log_fsyncs', 'Innodb_log_writes', "
        "'Innodb_pages_read', 'Innodb_pages_written', 'Innodb_dblwr_pages_written', "
        "'Innodb_buffer_pool_reads', 'Innodb_buffer_pool_read_requests', "
        "'Innodb_buffer_pool_pages_flushed', 'Innodb_buffer_pool_wait_free', 'Innodb_log_waits', "
        "'Com_commit', 'Com_rollback', 'Innodb_row_lock_waits', 'Innodb_row_lock_time', "
        "'Innodb_deadlocks', 'Questions'";
    results::Json out = results::Json::object();
    auto c = admin();
    try {
      query(*c, fmt::format("SHOW GLOBAL STATUS WHERE Variable_name IN ({})", kCounters), {}, [&](sql::ResultSet& rs) {
        const results::Json v = number_or_text(rs.getString(2).asStdString());
        if (v.is_number()) out[rs.getString(1).asStdString()] = v;
      });
    } catch (const sql::SQLException& e) {
      mysql::throw_backend(e, "SHOW GLOBAL STATUS");
    }
    return out;
  }

 private:
  mysql::ConnectParams params(int read_timeout_s, bool with_database) const {
    mysql::ConnectParams p;
    p.endpoint = opt_.endpoint;
    if (with_database) p.database = opt_.database;
    p.read_timeout_s = read_timeout_s;
    return p;
  }

  /// A session without a default database (which may not exist yet).
  std::unique_ptr<sql::Connection> admin() const { return connect_noting(params(kAdminReadTimeoutS, false)); }

  /// mysql::connect, whose error says so when the call watcher has already found the server
  /// unresponsive: a verification or cleanup that cannot connect afterwards then names the cause.
  std::unique_ptr<sql::Connection> connect_noting(const mysql::ConnectParams& p) const {
    try {
      return mysql::connect(p);
    } catch (const BackendError& e) {
      const std::uint64_t cut = watcher_->sockets_shut_down();
      if (cut == 0) throw;
      throw BackendError(fmt::format("{}; earlier the server stopped answering: a call got no reply and "
                                     "neither did a side connection, so {} session socket(s) were cut "
                                     "(docs/backend-mysql.md, section 3)",
                                     e.what(), cut),
                         e.sqlstate(), e.native_code());
    }
  }

  std::unique_ptr<Connection> open(int read_timeout_s) {
    std::unique_ptr<sql::Connection> c;
    try {
      c = connect_noting(params(read_timeout_s, true));
    } catch (const BackendError& e) {
      if (e.native_code() != 1049) throw;
      create_database();
      c = connect_noting(params(read_timeout_s, true));
    }
    return std::make_unique<MysqlConnection>(std::move(c), watcher_);
  }

  void create_database() {
    auto c = admin();
    try {
      std::unique_ptr<sql::Statement> st(c->createStatement());
      st->execute("CREATE DATABASE IF NOT EXISTS " + mysql::quote_identifier(opt_.database));
    } catch (const sql::SQLException& e) {
      throw BackendError(
          fmt::format("mysql: database '{}' does not exist at {} and user '{}' may not "
                      "create it: {} (error {})",
                      opt_.database, mysql::where(opt_.endpoint), opt_.endpoint.user, e.what(), e.getErrorCode()),
          e.getSQLState(), e.getErrorCode());
    }
  }

  /// (name, type) of every table and view of the database, by name; empty if it does not exist.
  std::vector<std::pair<std::string, std::string>> list_tables(sql::Connection& c) const {
    std::vector<std::pair<std::string, std::string>> out;
    try {
      query(c,
            "SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = ? "
            "ORDER BY table_name",
            {opt_.database}, [&](sql::ResultSet& rs) {
              out.emplace_back(rs.getString(1).asStdString(), rs.getString(2).asStdString());
            });
    } catch (const sql::SQLException& e) {
      mysql::throw_backend(e, fmt::format("list the tables of database '{}'", opt_.database));
    }
    return out;
  }

  MysqlOptions opt_;
  Dialect dialect_;
  std::shared_ptr<mysql::CancelWatcher> watcher_;
};

}  // namespace

std::unique_ptr<Backend> make_mysql_backend(MysqlOptions options) {
  mysql::ensure_thread_init();
  return std::make_unique<MysqlBackend>(std::move(options));
}

Capabilities mysql_capabilities() noexcept {
  return {.serialized_writers = false, .max_load_threads = 64, .embedded = false, .server_procedures = true};
}

}  // namespace drivelab::oltp
