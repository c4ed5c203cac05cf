// PostgreSQL through libpq (postgres_backend.hpp; docs/backend-postgres.md).
//
// Every call sends with PQsend* and waits in pg::collect (poll(-1) on the socket), so a closed
// socket is noticed; the backend's CancelWatcher (postgres_cancel.hpp) honours the cancel flag.
// Results are fetched whole (PQgetResult), not in single-row mode: the workloads' results are a
// few rows, and single-row mode costs one PGresult allocation per row.
#include "drivelab/oltp/backends/postgres/postgres_backend.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "postgres_common.hpp"
#include "postgres_copy.hpp"
#include "postgres_sql.hpp"

namespace drivelab::oltp {
namespace {

/// ANALYZE sessions finish_load() runs in parallel (besides its own for CHECKPOINT).
constexpr std::size_t kAnalyzeSessions = 4;

/// Rows of COPY text buffered per table before they are sent (PQputCopyData).
constexpr std::size_t kCopyChunkBytes = 256 * 1024;

/// Drops the server's NOTICE/WARNING messages (e.g. "there is no transaction in progress" from
/// a harmless ROLLBACK), which libpq would otherwise print on stderr.
void ignore_notice(void* /*arg*/, const char* /*message*/) noexcept {}

std::int64_t parse_int64(std::string_view text) noexcept {
  std::int64_t v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec == std::errc() && (r.ptr == text.data() + text.size() || *r.ptr != '.')) return v;
  if (text == "t") return 1;  // boolean
  if (text == "f") return 0;
  double d = 0;  // NUMERIC such as "3001.00": as SQLite, truncate toward zero
  std::from_chars(text.data(), text.data() + text.size(), d);
  return static_cast<std::int64_t>(d);
}

double parse_double(std::string_view text) noexcept {
  double v = 0;
  std::from_chars(text.data(), text.data() + text.size(), v);
  return v;
}

class PgBulkLoader;

// ---- Connection --------------------------------------------------------------------------------

class PgConnection final : public Connection {
 public:
  /// `watcher`: where set_cancel_flag registers the session (nullptr: the flag is ignored).
  PgConnection(const PostgresOptions& options, pg::CancelWatcher* watcher)
      : conn_(pg::connect(options)), watcher_(watcher) {
    PQsetNoticeProcessor(conn_.get(), ignore_notice, nullptr);
  }
  ~PgConnection() override;

  DbStatus begin(TxMode mode) override {
    // TPC-C on PostgreSQL runs at READ COMMITTED with explicit FOR UPDATE (as HammerDB does);
    // read-only transactions take one snapshot for all their statements (REPEATABLE READ READ
    // ONLY never fails with a serialization error: only writers can).
    return simple(mode == TxMode::read_only ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
                                            : "BEGIN ISOLATION LEVEL READ COMMITTED",
                  false, true);
  }

  DbStatus commit() override;

  DbStatus rollback() override {
    if (broken_) return lost_status();
    discard_loaders();
    return simple("ROLLBACK", false, false);
  }

  std::unique_ptr<Statement> prepare(std::string_view sql) override;

  void execute_immediate(std::string_view sql) override {
    ready_for_command();
    if (broken_) throw BackendError("postgres: " + lost_status().message, "08006");
    const std::string text(sql);
    if (PQsendQuery(conn_.get(), text.c_str()) == 0) mark_broken(PQerrorMessage(conn_.get()));
    pg::Collected c = broken_ ? pg::Collected{} : pg::collect(conn_.get(), wait());
    if (c.lost) mark_broken(c.lost_message);
    const DbStatus s = broken_ ? lost_status() : pg::status_of(c, false);
    if (!s.ok()) throw_as(s, fmt::format("postgres: {}: {}", text, s.message));
  }

  std::unique_ptr<BulkLoader> bulk_loader(std::string_view table, const std::vector<std::string>& columns) override;

  void set_cancel_flag(const std::atomic<bool>* flag) noexcept override {
    if (flag != nullptr && !slot_ && watcher_ != nullptr) {
      auto slot = std::make_shared<pg::CallSlot>();
      slot->canceller.reset(PQgetCancel(conn_.get()));
      slot->socket = PQsocket(conn_.get());
      if (!slot->canceller) return;  // no cancel key (not connected): the flag cannot be honoured
      try {
        watcher_->add(slot);
        slot_ = std::move(slot);
      } catch (const std::exception&) {
        // No watcher thread: the flag cannot be honoured; lock waits end by the server's own
        // timeouts. Nothing else changes.
      }
    }
    if (slot_) slot_->cancel.store(flag, std::memory_order_relaxed);
  }

  // ---- for statements and loaders ----

  PGconn* raw() noexcept { return conn_.get(); }
  bool broken() const noexcept { return broken_; }
  pg::Wait wait() const noexcept { return {slot_.get()}; }
  std::string next_statement_name() { return fmt::format("dl{}", ++statements_); }

  void mark_broken(std::string_view message) {
    broken_ = true;
    if (lost_message_.empty()) lost_message_ = message;
  }
  /// What every call returns once the session is gone.
  DbStatus lost_status() const {
    DbStatus s;
    s.outcome = Outcome::retryable;
    s.connection_lost = true;
    s.sqlstate = "08006";
    s.message = "connection lost: " + (lost_message_.empty() ? std::string("session unusable") : lost_message_);
    return s;
  }

  /// Ends the COPY of another table (or of no table) before a command or a COPY of `owner`.
  void ready_for_command(const PgBulkLoader* owner = nullptr);
  void set_copy_owner(PgBulkLoader* l) noexcept { copy_owner_ = l; }
  PgBulkLoader* copy_owner() const noexcept { return copy_owner_; }
  void add_loader(PgBulkLoader* l) { loaders_.push_back(l); }
  void remove_loader(PgBulkLoader* l) noexcept {
    loaders_.erase(std::remove(loaders_.begin(), loaders_.end(), l), loaders_.end());
    if (copy_owner_ == l) copy_owner_ = nullptr;
  }

 private:
  DbStatus simple(const char* sql, bool in_commit, bool cancellable) {
    if (broken_) return lost_status();
    ready_for_command();
    if (PQsendQuery(conn_.get(), sql) == 0) {
      mark_broken(PQerrorMessage(conn_.get()));
      DbStatus s = lost_status();
      if (in_commit) s.outcome = Outcome::in_doubt;
      return s;
    }
    last_ = pg::collect(conn_.get(), cancellable ? wait() : pg::Wait{});
    if (last_.lost) mark_broken(last_.lost_message);
    return pg::status_of(last_, in_commit);
  }
  void discard_loaders() noexcept;

  pg::ConnHandle conn_;
  pg::CancelWatcher* watcher_ = nullptr;
  std::shared_ptr<pg::CallSlot> slot_;  ///< registered with watcher_ by set_cancel_flag
  bool broken_ = false;
  std::string lost_message_;
  std::uint64_t statements_ = 0;
  pg::Collected last_;
  std::vector<PgBulkLoader*> loaders_;
  PgBulkLoader* copy_owner_ = nullptr;
};

// ---- Statement ---------------------------------------------------------------------------------

class PgStatement final : public Statement {
 public:
  PgStatement(PgConnection& conn, std::string name, int params)
      : conn_(conn),
        name_(std::move(name)),
        values_(static_cast<std::size_t>(params)),
        pointers_(static_cast<std::size_t>(params), nullptr) {}

  void bind_int64(int index, std::int64_t value) override {
    std::string& v = slot(index);
    v.clear();
    pg::append_int64(v, value);
    pointers_[static_cast<std::size_t>(index - 1)] = v.c_str();
  }
  void bind_double(int index, double value) override {
    std::string& v = slot(index);
    v.clear();
    pg::append_double(v, value);
    pointers_[static_cast<std::size_t>(index - 1)] = v.c_str();
  }
  void bind_text(int index, std::string_view value) override {
    // Text-format parameters are NUL-terminated strings: copied (a few bytes per parameter).
    std::string& v = slot(index);
    v.assign(value);
    pointers_[static_cast<std::size_t>(index - 1)] = v.c_str();
  }
  void bind_null(int index) override {
    slot(index);
    pointers_[static_cast<std::size_t>(index - 1)] = nullptr;
  }

  DbStatus execute() override {
    result_.reset();
    row_ = -1;
    rows_ = 0;
    affected_ = 0;
    if (conn_.broken()) return conn_.lost_status();
    conn_.ready_for_command();
    if (PQsendQueryPrepared(conn_.raw(), name_.c_str(), static_cast<int>(pointers_.size()), pointers_.data(), nullptr,
                            nullptr, 0) == 0) {
      conn_.mark_broken(PQerrorMessage(conn_.raw()));
      return conn_.lost_status();
    }
    pg::Collected c = pg::collect(conn_.raw(), conn_.wait());
    if (c.lost) conn_.mark_broken(c.lost_message);
    DbStatus s = pg::status_of(c, false);
    if (!s.ok()) return s;
    result_ = std::move(c.result);
    if (result_) {
      rows_ = PQntuples(result_.get());
      const char* tuples = PQcmdTuples(result_.get());
      affected_ = tuples != nullptr && *tuples != '\0' ? parse_int64(tuples) : 0;
    }
    return s;
  }

  bool next(DbStatus& status) override {
    status = {};
    if (!result_ || row_ + 1 >= rows_) return false;
    ++row_;
    return true;
  }

  std::int64_t affected_rows() const override { return affected_; }
  bool is_null(int column) const override { return PQgetisnull(result_.get(), row_, column) != 0; }
  std::int64_t column_int64(int column) const override { return parse_int64(column_text(column)); }
  double column_double(int column) const override { return parse_double(column_text(column)); }
  std::string_view column_text(int column) const override {
    if (!result_ || row_ < 0 || column < 0 || column >= PQnfields(result_.get())) return {};
    return {PQgetvalue(result_.get(), row_, column),
            static_cast<std::size_t>(PQgetlength(result_.get(), row_, column))};
  }

 private:
  std::string& slot(int index) {
    if (index < 1 || static_cast<std::size_t>(index) > values_.size())
      throw InternalError(fmt::format("postgres: bind index {} outside 1..{}", index, values_.size()));
    return values_[static_cast<std::size_t>(index - 1)];
  }

  PgConnection& conn_;
  std::string name_;
  std::vector<std::string> values_;
  std::vector<const char*> pointers_;  // values_[i].c_str(), or nullptr for NULL
  pg::ResultHandle result_;
  int row_ = -1;
  int rows_ = 0;
  std::int64_t affected_ = 0;
};

// ---- BulkLoader (COPY ... FROM STDIN) --------------------------------------------------------

/// Rows are encoded into a buffer per table; a full buffer (kCopyChunkBytes) is sent with
/// PQputCopyData inside this table's COPY, which is started on first use and ended by flush()
/// or when another table of the same connection needs the connection (one COPY at a time per
/// session). The loader of TPC-C interleaves ORDERS and ORDER-LINE rows; the buffers turn that
/// into one COPY switch per 256 KiB instead of one per row.
///
/// Format: binary (postgres_copy.hpp) when every column has a type with a binary encoder (integers,
/// floats, NUMERIC(p,s), text types, TIMESTAMP; read from pg_attribute when the loader is
/// made), else text with COPY's escapes (postgres_sql.hpp).
class PgBulkLoader final : public BulkLoader {
 public:
  PgBulkLoader(PgConnection& conn, std::string table, const std::vector<std::string>& columns)
      : conn_(conn), table_(std::move(table)), columns_(static_cast<int>(columns.size())) {
    binary_ = binary_columns(columns);
    std::string cols;
    for (const std::string& c : columns) cols += (cols.empty() ? "" : ", ") + c;
    copy_sql_ = fmt::format("COPY {} ({}) FROM STDIN{}", table_, cols, binary_.empty() ? "" : " (FORMAT binary)");
    buffer_.reserve(kCopyChunkBytes + 4096);
    conn_.add_loader(this);
  }
  ~PgBulkLoader() override {
    if (conn_.copy_owner() == this) abort_copy("bulk loader destroyed before flush()");
    conn_.remove_loader(this);
  }

  void add_int64(std::int64_t v) override {
    if (const pg::CopyColumn* c = next_column())
      pg::put_int64(buffer_, *c, v);
    else
      pg::append_int64(buffer_, v);
  }
  void add_double(double v) override {
    if (const pg::CopyColumn* c = next_column())
      pg::put_double(buffer_, *c, v);
    else
      pg::append_double(buffer_, v);
  }
  void add_text(std::string_view v) override {
    if (const pg::CopyColumn* c = next_column())
      pg::put_text(buffer_, *c, v);
    else
      pg::append_copy_text(buffer_, v);
  }
  void add_null() override {
    if (next_column() != nullptr)
      pg::put_null(buffer_);
    else
      buffer_ += "\\N";
  }
  void end_row() override {
    if (column_ != columns_)
      throw InternalError(
          fmt::format("postgres: COPY {}: row with {} values for {} columns", table_, column_, columns_));
    if (binary_.empty()) buffer_ += '\n';
    column_ = 0;
    if (buffer_.size() >= kCopyChunkBytes) send();
  }
  void flush() override {
    if (!buffer_.empty()) send();
    if (conn_.copy_owner() == this) end_copy();
  }

  bool binary() const noexcept { return !binary_.empty(); }

  /// Ends this table's COPY (the server then checks and stores the rows). Throws BackendError.
  void end_copy() {
    conn_.set_copy_owner(nullptr);
    if (!binary_.empty()) put(pg::binary_copy_trailer());
    if (PQputCopyEnd(conn_.raw(), nullptr) != 1) fail(PQerrorMessage(conn_.raw()));
    pg::Collected c = pg::collect(conn_.raw(), {});
    if (c.lost) conn_.mark_broken(c.lost_message);
    const DbStatus s = pg::status_of(c, false);
    if (!s.ok()) throw_as(s, fmt::format("postgres: COPY {}: {}", table_, s.message));
  }
  /// Forgets unsent rows (rollback) and aborts an open COPY.
  void discard() noexcept {
    buffer_.clear();
    column_ = 0;
    if (conn_.copy_owner() == this) abort_copy("rolled back");
  }

 private:
  /// The binary encoders of `columns`, or none when some column's type has none (text format).
  std::vector<pg::CopyColumn> binary_columns(const std::vector<std::string>& columns) {
    conn_.ready_for_command();
    const pg::ResultHandle r =
        pg::exec_or_throw(conn_.raw(),
                          "SELECT lower(attname), atttypid, atttypmod FROM pg_attribute WHERE attrelid = to_regclass(" +
                              pg::quote_literal(table_) + ") AND attnum > 0 AND NOT attisdropped",
                          "column types of " + table_);
    std::vector<pg::CopyColumn> out;
    for (const std::string& name : columns) {
      std::string lower = name;
      for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      std::optional<pg::CopyColumn> col;
      for (int i = 0; i < PQntuples(r.get()) && !col; ++i) {
        if (lower != PQgetvalue(r.get(), i, 0)) continue;
        col = pg::copy_column(name, static_cast<unsigned>(std::strtoul(PQgetvalue(r.get(), i, 1), nullptr, 10)),
                              std::atoi(PQgetvalue(r.get(), i, 2)));
        if (!col) return {};  // a type without a binary encoder
      }
      if (!col) return {};  // unknown column: the text COPY will report it
      out.push_back(std::move(*col));
    }
    return out;
  }

  /// Binary: the column the next value goes to (and the row's field count first); text: the
  /// separator, and nullptr.
  const pg::CopyColumn* next_column() {
    if (column_ >= columns_)
      throw InternalError(fmt::format("postgres: COPY {}: more than {} values in a row", table_, columns_));
    if (binary_.empty()) {
      if (column_++ > 0) buffer_ += '\t';
      return nullptr;
    }
    if (column_ == 0) pg::put_field_count(buffer_, columns_);
    return &binary_[static_cast<std::size_t>(column_++)];
  }

  void send() {
    if (conn_.copy_owner() != this) {
      if (conn_.broken())
        throw BackendError(fmt::format("postgres: COPY {}: {}", table_, conn_.lost_status().message), "08006");
      conn_.ready_for_command(this);
      if (PQsendQuery(conn_.raw(), copy_sql_.c_str()) == 0) fail(PQerrorMessage(conn_.raw()));
      pg::Collected c = pg::collect(conn_.raw(), {});
      if (c.lost) conn_.mark_broken(c.lost_message);
      if (!c.result || PQresultStatus(c.result.get()) != PGRES_COPY_IN) {
        const DbStatus s = pg::status_of(c, false);
        throw_as(s, fmt::format("postgres: {}: {}", copy_sql_, s.message));
      }
      conn_.set_copy_owner(this);
      if (!binary_.empty()) put(pg::binary_copy_header());
    }
    put(buffer_);
    buffer_.clear();
  }

  /// Blocking mode: PQputCopyData waits while the socket is full (the server is parsing).
  void put(std::string_view data) {
    if (PQputCopyData(conn_.raw(), data.data(), static_cast<int>(data.size())) != 1) fail(PQerrorMessage(conn_.raw()));
  }

  void abort_copy(const char* why) noexcept {
    conn_.set_copy_owner(nullptr);
    if (PQputCopyEnd(conn_.raw(), why) == 1) {
      pg::Collected c = pg::collect(conn_.raw(), {});
      if (c.lost) conn_.mark_broken(c.lost_message);
    }
  }

  [[noreturn]] void fail(std::string_view libpq_message) {
    conn_.mark_broken(libpq_message);
    throw BackendError(fmt::format("postgres: COPY {}: {}", table_, libpq_message), "08006");
  }

  PgConnection& conn_;
  std::string table_;
  int columns_;
  int column_ = 0;
  std::vector<pg::CopyColumn> binary_;
  std::string copy_sql_;
  std::string buffer_;
};

// ---- Connection (the parts that need the other classes) ---------------------------------------

// Loaders and statements must not outlive their connection (interface contract).
PgConnection::~PgConnection() {
  if (slot_) slot_->release();  // before the socket goes
}

void PgConnection::ready_for_command(const PgBulkLoader* owner) {
  if (copy_owner_ != nullptr && copy_owner_ != owner) copy_owner_->end_copy();
}

void PgConnection::discard_loaders() noexcept {
  for (PgBulkLoader* l : loaders_) l->discard();
}

DbStatus PgConnection::commit() {
  if (broken_) {
    DbStatus s = lost_status();
    s.outcome = Outcome::in_doubt;
    return s;
  }
  // Rows still buffered in a loader belong to this transaction (BulkLoader errors throw).
  for (PgBulkLoader* l : loaders_) l->flush();
  DbStatus s = simple("COMMIT", true, true);
  if (s.ok() && last_.result && std::strcmp(PQcmdStatus(last_.result.get()), "ROLLBACK") == 0) {
    // COMMIT of a transaction that had already failed rolls back and reports success.
    s.outcome = Outcome::fatal;
    s.message = "COMMIT rolled back: the transaction had failed earlier";
  }
  return s;
}

std::unique_ptr<Statement> PgConnection::prepare(std::string_view sql) {
  if (broken_) throw BackendError("postgres: prepare: " + lost_status().message, "08006");
  ready_for_command();
  const pg::Rewritten r = pg::rewrite_placeholders(sql);
  std::string name = next_statement_name();
  if (PQsendPrepare(conn_.get(), name.c_str(), r.sql.c_str(), r.params, nullptr) == 0)
    mark_broken(PQerrorMessage(conn_.get()));
  pg::Collected c = broken_ ? pg::Collected{} : pg::collect(conn_.get(), wait());
  if (c.lost) mark_broken(c.lost_message);
  const DbStatus s = broken_ ? lost_status() : pg::status_of(c, false);
  if (!s.ok()) throw_as(s, fmt::format("postgres: prepare '{}': {}", sql, s.message));
  return std::make_unique<PgStatement>(*this, std::move(name), r.params);
}

std::unique_ptr<BulkLoader> PgConnection::bulk_loader(std::string_view table, const std::vector<std::string>& columns) {
  if (columns.empty()) throw InternalError("postgres: bulk_loader without columns");
  return std::make_unique<PgBulkLoader>(*this, std::string(table), columns);
}

// ---- Backend -----------------------------------------------------------------------------------

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

  std::unique_ptr<Connection> connect() override { return std::make_unique<PgConnection>(opt_, &watcher_); }

  std::unique_ptr<Connection> connect_for_load() override {
    auto c = std::make_unique<PgConnection>(opt_, &watcher_);
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
