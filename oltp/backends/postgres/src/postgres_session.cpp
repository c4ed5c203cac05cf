// A PostgreSQL session through libpq (postgres_session.hpp): the Connection, its prepared
// Statements and its COPY BulkLoaders; the Backend that opens sessions is postgres_backend.cpp.
//
// Every call sends with PQsend* and waits in pg::collect (poll(-1) on the socket), so a closed
// socket is noticed; the backend's CancelWatcher (postgres_cancel.hpp) honours the cancel flag.
// Results are fetched whole (PQgetResult), not in single-row mode: the workloads' results are a
// few rows, and single-row mode costs one PGresult allocation per row.
#include "postgres_session.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <exception>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "postgres_common.hpp"
#include "postgres_copy.hpp"
#include "postgres_sql.hpp"

namespace drivelab::oltp {
namespace {

/// Rows of COPY text buffered per table before they are sent (PQputCopyData).
constexpr std::size_t kCopyChunkBytes = 256 * 1024;

/// Drops the server's NOTICE/WARNING messages (e.g. "there is no transaction in progress" from
/// a harmless ROLLBACK), which libpq would otherwise print on stderr.
void ignore_notice(void* /*arg*/, const char* /*message*/) noexcept {}

using pg::parse_double;
using pg::parse_int64;

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
      } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): as below
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

}  // namespace

std::unique_ptr<Connection> pg::open_session(const PostgresOptions& options, CancelWatcher* watcher) {
  return std::make_unique<PgConnection>(options, watcher);
}

}  // namespace drivelab::oltp
