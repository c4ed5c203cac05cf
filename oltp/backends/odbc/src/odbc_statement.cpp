// Statement of the ODBC backend (odbc_backend.hpp); the BulkLoader is in odbc_bulk_loader.cpp.
#include <sqlext.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "odbc_session.hpp"

namespace drivelab::oltp::odbc {
namespace {

bool is_character_type(SQLSMALLINT t) noexcept {
  switch (t) {
    case SQL_CHAR:
    case SQL_VARCHAR:
    case SQL_LONGVARCHAR:
    case SQL_WCHAR:
    case SQL_WVARCHAR:
    case SQL_WLONGVARCHAR: return true;
    default: return false;
  }
}

/// Counts `?` outside quotes (fallback when SQLNumParams fails).
SQLSMALLINT count_markers(std::string_view sql) {
  SQLSMALLINT n = 0;
  char quote = 0;
  for (char c : sql) {
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '?') {
      ++n;
    }
  }
  return n;
}

}  // namespace

// ---- Statement ---------------------------------------------------------------------------------

class OdbcStatement final : public Statement, public CursorOwner {
 public:
  OdbcStatement(OdbcSession& session, std::string_view sql)
      : session_(session), h_(make_stmt(session.dbc())), sql_(sql) {
    if (session_.query_timeout_s() > 0) {
      // psqlODBC turns it into SET statement_timeout (once per session), Microsoft's driver
      // into a client-side timer; MariaDB's ignores it for lock waits (the watcher backs it up).
      SQLSetStmtAttr(h_.get(), SQL_ATTR_QUERY_TIMEOUT,
                     reinterpret_cast<SQLPOINTER>(static_cast<SQLULEN>(session_.query_timeout_s())), 0);
    }
    const SQLRETURN rc =
        SQLPrepare(h_.get(), reinterpret_cast<SQLCHAR*>(sql_.data()), static_cast<SQLINTEGER>(sql_.size()));
    if (!SQL_SUCCEEDED(rc)) session_.throw_failure(SQL_HANDLE_STMT, h_.get(), fmt::format("prepare '{}'", sql_));
    SQLSMALLINT n = 0;
    if (!SQL_SUCCEEDED(SQLNumParams(h_.get(), &n))) n = count_markers(sql_);
    // Sized once: SQLBindParameter keeps pointers into these elements.
    params_.resize(static_cast<std::size_t>(std::max<SQLSMALLINT>(n, 0)));
  }

  ~OdbcStatement() override { session_.cursor_closed(this); }

  void bind_int64(int index, std::int64_t value) override {
    Param& p = param(index);
    p.i = value;
    p.ind = 0;
    bind(index, p, SQL_C_SBIGINT, fits_int32(value) ? SQL_INTEGER : SQL_BIGINT, 0, &p.i, 0);
  }
  void bind_double(int index, double value) override {
    Param& p = param(index);
    p.d = value;
    p.ind = 0;
    bind(index, p, SQL_C_DOUBLE, SQL_DOUBLE, 0, &p.d, 0);
  }
  void bind_text(int index, std::string_view value) override {
    Param& p = param(index);
    utf8_to_utf16(value, p.text);
    p.ind = static_cast<SQLLEN>(p.text.size() * sizeof(char16_t));
    const bool longer = p.text.size() > kVarcharColumnSize;
    bind(index, p, SQL_C_WCHAR, longer ? SQL_LONGVARCHAR : SQL_VARCHAR, longer ? p.text.size() : kVarcharColumnSize,
         p.text.data(), static_cast<SQLLEN>(p.text.size() * sizeof(char16_t)));
  }
  void bind_null(int index) override {
    Param& p = param(index);
    p.ind = SQL_NULL_DATA;
    bind(index, p, SQL_C_CHAR, SQL_VARCHAR, 1, &p.null_byte, 0);
  }

  DbStatus execute() override {
    close_cursor();
    if (DbStatus s = session_.before_execute(); !s.ok()) return s;
    affected_ = 0;
    SQLRETURN rc = SQL_ERROR;
    CancelReason why = CancelReason::none;
    {
      RunningCall call(session_.slot(), h_.get(), session_.call_deadline_ns());
      rc = SQLExecute(h_.get());
      why = call.finish();
    }
    if (rc == SQL_NO_DATA) return {};  // a searched UPDATE/DELETE that changed no row (ODBC 3)
    if (!SQL_SUCCEEDED(rc)) return session_.failure(SQL_HANDLE_STMT, h_.get(), false, why);
    SQLLEN rows = 0;
    if (SQL_SUCCEEDED(SQLRowCount(h_.get(), &rows)) && rows > 0) affected_ = rows;
    if (!described_) {
      if (DbStatus s = describe(); !s.ok()) return s;
    }
    if (!columns_.empty()) {
      cursor_open_ = true;
      closed_by_session_ = false;
      session_.cursor_opened(this);
    }
    return {};
  }

  bool next(DbStatus& status) override {
    status = {};
    if (!cursor_open_) {
      if (closed_by_session_) {
        closed_by_session_ = false;
        status.outcome = Outcome::fatal;
        status.message = fmt::format(
            "odbc: the rows of '{}' were discarded when another statement ran on the same connection "
            "(the driver serves one active statement per connection: read all rows first, or enable MARS)",
            sql_);
      }
      return false;
    }
    SQLRETURN rc = SQL_ERROR;
    CancelReason why = CancelReason::none;
    {
      RunningCall call(session_.slot(), h_.get(), session_.call_deadline_ns());
      rc = SQLFetch(h_.get());
      why = call.finish();
    }
    if (rc == SQL_NO_DATA) {
      close_cursor();
      return false;
    }
    if (!SQL_SUCCEEDED(rc)) {
      status = session_.failure(SQL_HANDLE_STMT, h_.get(), false, why);
      close_cursor();
      return false;
    }
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      if (!read_column(c, status)) {
        close_cursor();
        return false;
      }
    }
    return true;
  }

  std::int64_t affected_rows() const override { return affected_; }

  bool is_null(int column) const override { return col(column).null; }

  std::int64_t column_int64(int column) const override {
    const Column& c = col(column);
    if (c.null) return 0;
    const char* b = c.text.data();
    const char* e = b + c.text.size();
    std::int64_t v = 0;
    if (const auto [p, ec] = std::from_chars(b, e, v); ec == std::errc() && p == e) return v;
    return std::llround(column_double(column));  // "12.0", "1e3" from some drivers
  }

  double column_double(int column) const override {
    const Column& c = col(column);
    if (c.null) return 0;
    double v = 0;
    // from_chars takes ".50" (Microsoft's driver renders DECIMAL(4,4) 0.5 so) and "-.5".
    const char* b = c.text.data();
    while (b < c.text.data() + c.text.size() && *b == ' ') ++b;
    std::from_chars(b, c.text.data() + c.text.size(), v);
    return v;
  }

  std::string_view column_text(int column) const override { return col(column).text; }

  void close_cursor_for_session() noexcept override {
    close_cursor();
    closed_by_session_ = true;
  }

 private:
  struct Param {
    SQLSMALLINT c_type = 0, sql_type = 0;
    SQLULEN column_size = 0;
    SQLPOINTER bound = nullptr;
    SQLLEN buffer_length = -1;
    std::int64_t i = 0;
    double d = 0;
    std::u16string text;
    char null_byte = 0;
    SQLLEN ind = 0;
  };
  struct Column {
    bool wide = false;  ///< character data: fetched as SQL_C_WCHAR
    bool null = false;
    std::string text;  ///< the value as text (UTF-8)
  };

  Param& param(int index) {
    if (index < 1 || static_cast<std::size_t>(index) > params_.size())
      throw InternalError(fmt::format("odbc: bind index {} out of range 1..{} for '{}'", index, params_.size(), sql_));
    return params_[static_cast<std::size_t>(index - 1)];
  }

  const Column& col(int column) const {
    if (column < 0 || static_cast<std::size_t>(column) >= columns_.size())
      throw InternalError(fmt::format("odbc: column {} out of range 0..{} for '{}'", column,
                                      static_cast<int>(columns_.size()) - 1, sql_));
    return columns_[static_cast<std::size_t>(column)];
  }

  /// SQLBindParameter only when the binding changed (type, size or buffer address); the value
  /// and its length indicator are read at SQLExecute.
  void bind(int index, Param& p, SQLSMALLINT c_type, SQLSMALLINT sql_type, SQLULEN column_size, SQLPOINTER buffer,
            SQLLEN buffer_length) {
    if (p.c_type == c_type && p.sql_type == sql_type && p.column_size == column_size && p.bound == buffer &&
        p.buffer_length == buffer_length)
      return;
    const SQLRETURN rc = SQLBindParameter(h_.get(), static_cast<SQLUSMALLINT>(index), SQL_PARAM_INPUT, c_type, sql_type,
                                          column_size, 0, buffer, buffer_length, &p.ind);
    if (!SQL_SUCCEEDED(rc))
      session_.throw_failure(SQL_HANDLE_STMT, h_.get(), fmt::format("bind parameter {} of '{}'", index, sql_));
    p.c_type = c_type;
    p.sql_type = sql_type;
    p.column_size = column_size;
    p.bound = buffer;
    p.buffer_length = buffer_length;
  }

  /// Learns the result columns once (the text of a prepared statement does not change).
  DbStatus describe() {
    SQLSMALLINT n = 0;
    if (!SQL_SUCCEEDED(SQLNumResultCols(h_.get(), &n))) return session_.failure(SQL_HANDLE_STMT, h_.get(), false, {});
    columns_.assign(static_cast<std::size_t>(std::max<SQLSMALLINT>(n, 0)), Column{});
    for (SQLSMALLINT c = 1; c <= n; ++c) {
      SQLSMALLINT type = 0, digits = 0, nullable = 0, name_length = 0;
      SQLULEN size = 0;
      std::array<SQLCHAR, 128> name{};
      if (!SQL_SUCCEEDED(SQLDescribeCol(h_.get(), static_cast<SQLUSMALLINT>(c), name.data(),
                                        static_cast<SQLSMALLINT>(name.size()), &name_length, &type, &size, &digits,
                                        &nullable)))
        return session_.failure(SQL_HANDLE_STMT, h_.get(), false, {});
      columns_[static_cast<std::size_t>(c - 1)].wide = is_character_type(type);
    }
    described_ = true;
    return {};
  }

  /// SQLGetData of one column of the current row into its text, in pieces when long.
  bool read_column(std::size_t index, DbStatus& status) {
    Column& c = columns_[index];
    c.null = false;
    c.text.clear();
    const auto column = static_cast<SQLUSMALLINT>(index + 1);
    if (c.wide) {
      wide_.clear();
      if (!get_data<char16_t, 256>(column, SQL_C_WCHAR, wide_, c.null, status)) return false;
      utf16_to_utf8(wide_, c.text);
      return true;
    }
    return get_data<char, 128>(column, SQL_C_CHAR, c.text, c.null, status);
  }

  /// SQLGetData of one column in pieces of N units (char16_t for SQL_C_WCHAR, char for
  /// SQL_C_CHAR), appended to `out` until the whole value is read; a NULL sets `null`. False on
  /// an error (in `status`).
  template <class Unit, std::size_t N>
  bool get_data(SQLUSMALLINT column, SQLSMALLINT c_type, std::basic_string<Unit>& out, bool& null, DbStatus& status) {
    std::array<Unit, N> buf;
    const std::size_t capacity = buf.size() - 1;  // one unit for the terminator
    for (;;) {
      SQLLEN ind = 0;
      const SQLRETURN rc =
          SQLGetData(h_.get(), column, c_type, buf.data(), static_cast<SQLLEN>(buf.size() * sizeof(Unit)), &ind);
      if (rc == SQL_NO_DATA) return true;
      if (!SQL_SUCCEEDED(rc)) {
        status = session_.failure(SQL_HANDLE_STMT, h_.get(), false, {});
        return false;
      }
      if (ind == SQL_NULL_DATA) {
        null = true;
        return true;
      }
      const bool complete = ind != SQL_NO_TOTAL && static_cast<std::size_t>(ind) / sizeof(Unit) <= capacity;
      out.append(buf.data(), complete ? static_cast<std::size_t>(ind) / sizeof(Unit) : capacity);
      if (complete) return true;  // else 01004: the rest comes with the next call
    }
  }

  void close_cursor() noexcept {
    if (!cursor_open_) return;
    SQLFreeStmt(h_.get(), SQL_CLOSE);
    cursor_open_ = false;
    session_.cursor_closed(this);
  }

  OdbcSession& session_;
  StmtHandle h_;
  std::string sql_;
  std::vector<Param> params_;
  std::vector<Column> columns_;
  bool described_ = false;
  bool cursor_open_ = false;
  bool closed_by_session_ = false;
  std::int64_t affected_ = 0;
  std::u16string wide_;  // scratch of read_column
};

std::unique_ptr<Statement> make_statement(OdbcSession& session, std::string_view sql) {
  return std::make_unique<OdbcStatement>(session, sql);
}

}  // namespace drivelab::oltp::odbc
