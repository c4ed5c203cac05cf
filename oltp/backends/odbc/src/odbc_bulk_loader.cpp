// BulkLoader of the ODBC backend (odbc_backend.hpp): rows buffered column by column, inserted a
// batch at a time within the dialect's bulk_limits().
#include <sqlext.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "odbc_session.hpp"

namespace drivelab::oltp::odbc {

/// Rows buffered column by column and inserted a batch (`bulk_rows`) at a time, never more than
/// the dialect's client stack takes in one execution (bulk_limits(), odbc_backend.hpp):
///   - PostgreSQL: one prepared multi-row INSERT ... VALUES (...), (...) of a whole batch, of at
///     most max_parameters / columns rows (psqlODBC over libpq 15: 7,000 parameters).
///     psqlODBC sends a parameter array as one Bind/Execute per row (pipelined), and the server's
///     per-execution cost dominates: measured here, 100 rows per statement load 4x faster than
///     arrays of 1-row INSERTs, 1,000 rows 6x (20,000 rows of 3 columns);
///   - others: one SQLExecute of a 1-row INSERT over parameter arrays (SQL_ATTR_PARAMSET_SIZE,
///     column-wise binding): MariaDB Connector/ODBC sends an array in about one round trip,
///     Microsoft's driver as batches of RPCs;
///   - row at a time if the driver refuses arrays (describe() says so).
/// A partial batch (at commit) goes through the 1-row INSERT with arrays. Each column's C type is
/// chosen per batch from its values (integers, reals, text; all-NULL columns as VARCHAR NULLs);
/// the buffers keep their addresses between batches so a multi-row statement is rebound only
/// when a column's type or text width changes.
class OdbcBulkLoader final : public BulkLoader {
 public:
  OdbcBulkLoader(OdbcSession& session, std::string_view table, const std::vector<std::string>& columns)
      : session_(session),
        single_(make_stmt(session.dbc())),
        table_(table),
        columns_(columns.size()),
        batch_rows_(std::max(1, session.shared().options.bulk_rows)),
        limits_(bulk_limits(session.shared().options.dialect)) {
    const std::string head = fmt::format("INSERT INTO {} ({}) VALUES ", table, fmt::join(columns, ", "));
    std::string row = "(";
    for (std::size_t i = 0; i < columns.size(); ++i) row += i == 0 ? "?" : ", ?";
    row += ")";
    prepare(single_, head + row);
    if (session_.shared().options.dialect == SqlDialect::postgres && !columns.empty() && batch_rows_ > 1) {
      multi_rows_ =
          std::clamp<std::size_t>(limits_.max_parameters / columns.size(), 1, static_cast<std::size_t>(batch_rows_));
      batch_rows_ = static_cast<int>(multi_rows_);
      std::string sql = head;
      sql.reserve(head.size() + multi_rows_ * (row.size() + 2));
      for (std::size_t r = 0; r < multi_rows_; ++r) {
        if (r > 0) sql += ", ";
        sql += row;
      }
      multi_ = make_stmt(session.dbc());
      prepare(multi_, sql);
      multi_bound_.assign(columns.size(), Binding{});
    }
    // Arrays if the driver takes them: it must keep the size we set (01S02 = "changed it").
    arrays_ = session_.shared().bulk_mode.load() != BulkMode::rows && batch_rows_ > 1 &&
              try_paramset_size(static_cast<SQLULEN>(batch_rows_));
    session_.shared().bulk_mode.store(multi_ ? BulkMode::multi_row : arrays_ ? BulkMode::arrays : BulkMode::rows);
    const auto capacity = static_cast<std::size_t>(batch_rows_);
    for (Column& c : columns_) {
      c.cells.reserve(capacity);
      c.ints.reserve(capacity);
      c.reals.reserve(capacity);
      c.nulls.reserve(capacity);
      c.ind.reserve(capacity);
    }
  }

  ~OdbcBulkLoader() override { session_.forget_loader(this); }

  void add_int64(std::int64_t v) override {
    next_cell({.kind = Kind::integer, .i = v});
    batch_bytes_ += sizeof v;
  }
  void add_double(double v) override {
    next_cell({.kind = Kind::real, .d = v});
    batch_bytes_ += sizeof v;
  }
  void add_text(std::string_view v) override {
    Column& c = current_column();
    const std::size_t offset = c.pool.size();
    append_utf16(v, c.pool);
    c.cells.push_back({.kind = Kind::text, .offset = offset, .length = c.pool.size() - offset});
    ++next_column_;
    batch_bytes_ += v.size();  // as the server receives it (UTF-8)
  }
  void add_null() override { next_cell({.kind = Kind::null}); }

  void end_row() override {
    if (next_column_ != columns_.size())
      throw InternalError(
          fmt::format("odbc: bulk row for {} has {} values for {} columns", table_, next_column_, columns_.size()));
    next_column_ = 0;
    ++rows_;
    // An array ends early at the dialect's byte limit (MariaDB: one execution must fit in
    // max_allowed_packet); a multi-row statement is always whole.
    const bool array_full = arrays_ && limits_.max_array_bytes > 0 && batch_bytes_ >= limits_.max_array_bytes;
    if (rows_ >= static_cast<std::size_t>(batch_rows_) || array_full) flush();
  }

  void flush() override {
    if (rows_ == 0) return;
    if (session_.before_execute().outcome != Outcome::ok)
      session_.throw_failure(SQL_HANDLE_DBC, session_.dbc(), "bulk insert: switch transaction mode");
    fill_arrays();
    if (multi_ && rows_ == multi_rows_)
      execute_multi();
    else if (arrays_)
      execute_arrays();
    else
      execute_rows();
    discard();
  }

  /// Drops the buffered rows (their transaction was rolled back).
  void discard() noexcept {
    for (Column& c : columns_) {
      c.cells.clear();
      c.pool.clear();
    }
    rows_ = 0;
    next_column_ = 0;
    batch_bytes_ = 0;
  }

 private:
  enum class Kind : std::uint8_t { null, integer, real, text };
  struct Cell {
    Kind kind = Kind::null;
    std::int64_t i = 0;
    double d = 0;
    std::size_t offset = 0, length = 0;  // text: UTF-16 units in the column's pool
  };
  /// What a column is bound with; equal bindings need no SQLBindParameter.
  struct Binding {
    SQLSMALLINT c_type = 0, sql_type = 0;
    SQLULEN column_size = 0;
    const void* data = nullptr;
    SQLLEN element = 0;
    const SQLLEN* ind = nullptr;
    bool operator==(const Binding&) const = default;
  };
  struct Column {
    std::vector<Cell> cells;
    std::u16string pool;
    // The arrays of the current batch (capacity kept between batches):
    Kind kind = Kind::null;
    std::vector<std::int64_t> ints;
    std::vector<double> reals;
    std::vector<char16_t> texts;  // rows x width
    std::size_t width = 0;        // UTF-16 units per row incl. the terminator; only grows
    std::vector<char> nulls;
    std::vector<SQLLEN> ind;
    SQLSMALLINT c_type = 0, sql_type = 0;
    SQLULEN column_size = 0;
  };

  void prepare(const StmtHandle& h, std::string sql) {
    if (!SQL_SUCCEEDED(
            SQLPrepare(h.get(), reinterpret_cast<SQLCHAR*>(sql.data()), static_cast<SQLINTEGER>(sql.size()))))
      session_.throw_failure(SQL_HANDLE_STMT, h.get(), fmt::format("prepare bulk insert into {}", table_));
  }

  Column& current_column() {
    if (next_column_ >= columns_.size())
      throw InternalError(fmt::format("odbc: bulk row for {} has more than {} values", table_, columns_.size()));
    return columns_[next_column_];
  }
  void next_cell(Cell cell) {
    current_column().cells.push_back(cell);
    ++next_column_;
  }

  bool try_paramset_size(SQLULEN n) {
    const SQLRETURN rc = SQLSetStmtAttr(single_.get(), SQL_ATTR_PARAMSET_SIZE, reinterpret_cast<SQLPOINTER>(n), 0);
    if (!SQL_SUCCEEDED(rc)) return false;
    SQLULEN got = 0;
    if (!SQL_SUCCEEDED(SQLGetStmtAttr(single_.get(), SQL_ATTR_PARAMSET_SIZE, &got, 0, nullptr))) return false;
    return got == n;
  }

  /// Fills each column's array from its cells and picks its types.
  void fill_arrays() {
    const std::size_t n = rows_;
    for (Column& c : columns_) {
      bool any_text = false, any_real = false, any_int = false, all_int32 = true;
      std::size_t longest = 0;
      for (const Cell& cell : c.cells) {
        any_text = any_text || cell.kind == Kind::text;
        any_real = any_real || cell.kind == Kind::real;
        any_int = any_int || cell.kind == Kind::integer;
        if (cell.kind == Kind::integer) all_int32 = all_int32 && fits_int32(cell.i);
        if (cell.kind == Kind::text) longest = std::max(longest, cell.length);
      }
      c.ind.assign(n, 0);
      if (any_text) {
        // Numbers in a text column (not done by drivelab's loaders) are sent as their text.
        std::vector<std::u16string> numbers(n);
        for (std::size_t r = 0; r < n; ++r) {
          const Cell& cell = c.cells[r];
          if (cell.kind == Kind::integer || cell.kind == Kind::real) {
            utf8_to_utf16(cell.kind == Kind::integer ? std::to_string(cell.i) : fmt::format("{}", cell.d), numbers[r]);
            longest = std::max(longest, numbers[r].size());
          }
        }
        c.kind = Kind::text;
        if (longest + 1 > c.width) {
          c.width = longest + 1;
          c.texts.reserve(static_cast<std::size_t>(batch_rows_) * c.width);
        }
        c.texts.assign(n * c.width, u'\0');
        for (std::size_t r = 0; r < n; ++r) {
          const Cell& cell = c.cells[r];
          char16_t* dst = c.texts.data() + r * c.width;
          if (cell.kind == Kind::null) {
            c.ind[r] = SQL_NULL_DATA;
          } else if (cell.kind == Kind::text) {
            std::copy_n(c.pool.data() + cell.offset, cell.length, dst);
            c.ind[r] = static_cast<SQLLEN>(cell.length * sizeof(char16_t));
          } else {
            std::copy(numbers[r].begin(), numbers[r].end(), dst);
            c.ind[r] = static_cast<SQLLEN>(numbers[r].size() * sizeof(char16_t));
          }
        }
        const bool is_long = c.width - 1 > kVarcharColumnSize;
        c.c_type = SQL_C_WCHAR;
        c.sql_type = is_long ? SQL_LONGVARCHAR : SQL_VARCHAR;
        c.column_size = is_long ? c.width - 1 : kVarcharColumnSize;
      } else if (any_real) {
        c.kind = Kind::real;
        c.reals.assign(n, 0.0);
        for (std::size_t r = 0; r < n; ++r) {
          const Cell& cell = c.cells[r];
          if (cell.kind == Kind::null)
            c.ind[r] = SQL_NULL_DATA;
          else
            c.reals[r] = cell.kind == Kind::real ? cell.d : static_cast<double>(cell.i);
        }
        c.c_type = SQL_C_DOUBLE;
        c.sql_type = SQL_DOUBLE;
        c.column_size = 0;
      } else if (any_int) {
        c.kind = Kind::integer;
        c.ints.assign(n, 0);
        for (std::size_t r = 0; r < n; ++r) {
          if (c.cells[r].kind == Kind::null)
            c.ind[r] = SQL_NULL_DATA;
          else
            c.ints[r] = c.cells[r].i;
        }
        c.c_type = SQL_C_SBIGINT;
        c.sql_type = all_int32 ? SQL_INTEGER : SQL_BIGINT;
        c.column_size = 0;
      } else {
        c.kind = Kind::null;
        c.nulls.assign(n, 0);
        std::fill(c.ind.begin(), c.ind.end(), SQL_NULL_DATA);
        c.c_type = SQL_C_CHAR;
        c.sql_type = SQL_VARCHAR;
        c.column_size = 1;
      }
    }
  }

  /// Column `k`'s array as a binding (element 0).
  Binding binding(std::size_t k) const {
    const Column& c = columns_[k];
    Binding b{.c_type = c.c_type, .sql_type = c.sql_type, .column_size = c.column_size, .ind = c.ind.data()};
    switch (c.kind) {
      case Kind::integer:
        b.data = c.ints.data();
        b.element = sizeof(std::int64_t);
        break;
      case Kind::real:
        b.data = c.reals.data();
        b.element = sizeof(double);
        break;
      case Kind::text:
        b.data = c.texts.data();
        b.element = static_cast<SQLLEN>(c.width * sizeof(char16_t));
        break;
      case Kind::null:
        b.data = c.nulls.data();
        b.element = 1;
        break;
    }
    return b;
  }

  /// Binds parameter `param` of `h` to row `row` of binding `b`.
  void bind(SQLHSTMT h, std::size_t param, const Binding& b, std::size_t row) {
    auto* data = static_cast<char*>(const_cast<void*>(b.data)) + row * static_cast<std::size_t>(b.element);
    auto* ind = const_cast<SQLLEN*>(b.ind) + row;
    const SQLRETURN rc = SQLBindParameter(h, static_cast<SQLUSMALLINT>(param), SQL_PARAM_INPUT, b.c_type, b.sql_type,
                                          b.column_size, 0, data, b.element, ind);
    if (!SQL_SUCCEEDED(rc))
      session_.throw_failure(SQL_HANDLE_STMT, h, fmt::format("bulk insert into {}: bind parameter {}", table_, param));
  }

  SQLRETURN run(SQLHSTMT h, CancelReason& why) {
    RunningCall call(session_.slot(), h, 0);  // no deadline: a load may wait on I/O for long
    const SQLRETURN rc = SQLExecute(h);
    why = call.finish();
    return rc;
  }

  void execute_multi() {
    const std::size_t ncols = columns_.size();
    for (std::size_t k = 0; k < ncols; ++k) {
      const Binding b = binding(k);
      if (b == multi_bound_[k]) continue;  // same buffers: the parameters still point at them
      for (std::size_t r = 0; r < multi_rows_; ++r) bind(multi_.get(), r * ncols + k + 1, b, r);
      multi_bound_[k] = b;
    }
    CancelReason why = CancelReason::none;
    const SQLRETURN rc = run(multi_.get(), why);
    if (!SQL_SUCCEEDED(rc) && rc != SQL_NO_DATA) fail(read_diagnostics(SQL_HANDLE_STMT, multi_.get()), rows_, why);
  }

  void execute_arrays() {
    const std::size_t n = rows_;
    for (std::size_t k = 0; k < columns_.size(); ++k) bind(single_.get(), k + 1, binding(k), 0);
    // No SQL_ATTR_PARAM_STATUS_PTR: with it MariaDB Connector/ODBC was 2x slower here (same
    // round trips); a failed batch is reported as a whole, with the driver's diagnostics.
    SQLSetStmtAttr(single_.get(), SQL_ATTR_PARAM_BIND_TYPE, reinterpret_cast<SQLPOINTER>(SQL_PARAM_BIND_BY_COLUMN), 0);
    if (!try_paramset_size(n)) {
      fall_back_to_rows();
      return;
    }
    CancelReason why = CancelReason::none;
    const SQLRETURN rc = run(single_.get(), why);
    if (SQL_SUCCEEDED(rc) || rc == SQL_NO_DATA) return;
    const auto records = read_diagnostics(SQL_HANDLE_STMT, single_.get());
    if (std::any_of(records.begin(), records.end(), [](const DiagRecord& r) { return r.sqlstate == "HYC00"; })) {
      fall_back_to_rows();  // "optional feature not implemented"
      return;
    }
    fail(records, n, why);
  }

  void execute_rows() {
    try_paramset_size(1);
    for (std::size_t r = 0; r < rows_; ++r) {
      for (std::size_t k = 0; k < columns_.size(); ++k) bind(single_.get(), k + 1, binding(k), r);
      CancelReason why = CancelReason::none;
      const SQLRETURN rc = run(single_.get(), why);
      if (!SQL_SUCCEEDED(rc) && rc != SQL_NO_DATA) fail(read_diagnostics(SQL_HANDLE_STMT, single_.get()), r, why);
    }
  }

  /// The driver refused parameter arrays: this batch and the next ones row by row (describe()
  /// of the backend says so).
  void fall_back_to_rows() {
    arrays_ = false;
    if (!multi_) session_.shared().bulk_mode.store(BulkMode::rows);
    execute_rows();
  }

  /// `row` < rows_: the row that failed (row at a time); else the whole batch.
  [[noreturn]] void fail(const std::vector<DiagRecord>& records, std::size_t row, CancelReason why) {
    const std::string where = row < rows_ ? fmt::format(" (row {} of a batch of {})", row + 1, rows_)
                                          : fmt::format(" (a batch of {} rows)", rows_);
    const std::string cancelled = why == CancelReason::stop_requested ? " (cancelled: stop requested)" : "";
    const std::string message = session_.shared().scrub(
        fmt::format("odbc: bulk insert into {}{}{}: {}", table_, where, cancelled, format_diagnostics(records)));
    discard();  // the transaction has to roll back; never insert these rows in the next one
    throw_as(classify(records, session_.shared().options.dialect, false, false),
             message);  // StorageFailure for a full disk
  }

  OdbcSession& session_;
  StmtHandle single_;  ///< INSERT of one row (arrays, row at a time, partial batches)
  StmtHandle multi_;   ///< INSERT of multi_rows_ rows (PostgreSQL), or null
  std::size_t multi_rows_ = 0;
  std::vector<Binding> multi_bound_;  ///< per column: what multi_'s parameters point at
  std::string table_;
  std::vector<Column> columns_;
  int batch_rows_;
  BulkLimits limits_;
  std::size_t batch_bytes_ = 0;  ///< row data buffered in this batch, for limits_.max_array_bytes
  bool arrays_ = false;
  std::size_t rows_ = 0;
  std::size_t next_column_ = 0;
};

std::unique_ptr<BulkLoader> make_bulk_loader(OdbcSession& session, std::string_view table,
                                             const std::vector<std::string>& columns, OdbcBulkLoader*& raw) {
  auto loader = std::make_unique<OdbcBulkLoader>(session, table, columns);
  raw = loader.get();
  return loader;
}

void flush_loader(OdbcBulkLoader& loader) { loader.flush(); }
void discard_loader(OdbcBulkLoader& loader) noexcept { loader.discard(); }

}  // namespace drivelab::oltp::odbc
