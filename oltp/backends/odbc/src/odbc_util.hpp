#pragma once
// Internal helpers of the ODBC backend (odbc_backend.cpp): RAII owners of ODBC handles, connection
// string handling (parse, credentials, redaction), diagnostics and their classification, and
// UTF-8 <-> UTF-16 conversion (text crosses the API as SQL_C_WCHAR: SQL_C_CHAR is interpreted in
// the process locale by some drivers, Microsoft's among them, and drivelab never sets a locale).
#include <sql.h>
#include <sqlext.h>

#include <array>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "drivelab/oltp/backend/backend.hpp"

namespace drivelab::oltp::odbc {

// ---- handles -----------------------------------------------------------------------------------

struct EnvFree {
  void operator()(void* h) const noexcept { SQLFreeHandle(SQL_HANDLE_ENV, h); }
};
/// An ODBC 3 environment (SQL_ATTR_ODBC_VERSION = SQL_OV_ODBC3).
using EnvHandle = std::unique_ptr<void, EnvFree>;

struct DbcFree {
  /// Rolls back what is open (SQLDisconnect refuses with 25000 inside a manual-commit
  /// transaction), disconnects, frees. Errors are ignored: the session is going away.
  void operator()(void* h) const noexcept;
};
/// A connection handle; connected once SQLDriverConnect succeeded.
using DbcHandle = std::unique_ptr<void, DbcFree>;

struct StmtFree {
  void operator()(void* h) const noexcept { SQLFreeHandle(SQL_HANDLE_STMT, h); }
};
using StmtHandle = std::unique_ptr<void, StmtFree>;

EnvHandle make_env();  ///< throws BackendError
DbcHandle make_dbc(SQLHENV env);
StmtHandle make_stmt(SQLHDBC dbc);  ///< throws BackendError with the diagnostics

/// The drivers registered with the driver manager (odbcinst.ini, as `odbcinst -q -d` lists
/// them), by SQLDrivers; empty when it has none or no odbcinst.ini.
std::vector<std::string> installed_drivers(SQLHENV env);

/// The Debian package that installs the ODBC driver registered as `driver` (case-insensitive):
/// odbc-postgresql ("PostgreSQL Unicode", "PostgreSQL ANSI"), odbc-mariadb ("MariaDB Unicode"),
/// libsqliteodbc ("SQLite3", "SQLite"); empty for others (Microsoft's msodbcsql18 is not Debian's).
std::string_view debian_package_of_driver(std::string_view driver) noexcept;

// ---- connection strings ------------------------------------------------------------------------

/// One KEY=VALUE of a connection string; `value` without its braces.
struct ConnAttr {
  std::string key;
  std::string value;
};

/// Splits "K1=V1;K2={V;2};..." (ODBC syntax: values in braces may hold ';', '}}' is a '}').
/// Tolerant: empty parts are skipped, a part without '=' becomes a key with an empty value.
std::vector<ConnAttr> parse_connection_string(std::string_view s);
/// Value of the first attribute whose key equals one of `keys` (case-insensitive).
std::optional<std::string> find_attr(const std::vector<ConnAttr>& attrs, std::span<const std::string_view> keys);
inline std::optional<std::string> find_attr(const std::vector<ConnAttr>& attrs,
                                            std::initializer_list<std::string_view> keys) {
  return find_attr(attrs, std::span<const std::string_view>(keys.begin(), keys.size()));
}
/// `v` as a connection string value: braced (with '}' doubled) when it holds ; { } or spaces
/// at an end.
std::string quote_value(std::string_view v);

/// Keys drivers take for the user and the password (UID/PWD are ODBC's own; psqlODBC also
/// takes Username/Password, MariaDB User/Password).
inline constexpr std::array<std::string_view, 4> kUserKeys = {"UID", "User", "Username", "User ID"};
inline constexpr std::array<std::string_view, 2> kPasswordKeys = {"PWD", "Password"};

/// `s` plus ";UID=user" when it names no user and `user` is set, plus ";PWD=password" when it
/// holds no password and `password` is set.
std::string with_credentials(std::string_view s, const std::string& user, const std::string& password);
/// `s` with every password value replaced by "***" (for describe() and messages).
std::string redact_connection_string(std::string_view s);
/// `text` with each occurrence of `secret` replaced by "***" (no-op for an empty secret): the
/// last line of defence for driver messages that might quote a connection string.
std::string scrub(std::string text, const std::string& secret);

// ---- diagnostics -------------------------------------------------------------------------------

struct DiagRecord {
  std::string sqlstate;  ///< five characters
  int native = 0;
  std::string message;
};

/// Every diagnostic record of `handle` (SQLGetDiagRec 1..n).
std::vector<DiagRecord> read_diagnostics(SQLSMALLINT handle_type, SQLHANDLE handle);

/// What a failed call means (odbc_backend.hpp's table):
///   a record that is_storage_error(dialect, ...) recognises (backend.hpp: PostgreSQL 53100 /
///   58030, MySQL natives 1021 / 1114, SQL Server natives 1101 / 1105 / 9002 / 823, or a HY000
///   whose text says "No space left on device", "errno 28", ...)
///                                                         -> storage_failure (also in COMMIT)
///   40001, 40P01, 55P03, 57014, HYT00, HY008; mysql natives 1213/1205/1020/1317/1969/3024;
///   sqlserver natives 1205/1222                          -> retryable
///   class 08, 57P01..57P03; mysql natives 2006/2013/2055, or `connection_dead`
///                                                         -> connection_lost: in_doubt during
///                                                            COMMIT, else retryable
///   anything else                                         -> fatal
/// Natives are read per dialect: psqlODBC's are the driver's own numbers, not the server's.
/// sqlstate/native of the result are those of the first record that is not a warning (01xxx);
/// the message joins every record.
DbStatus classify(const std::vector<DiagRecord>& records, SqlDialect dialect, bool in_commit, bool connection_dead);

/// "[08001] (native 101) message; [01000] ..." for exceptions.
std::string format_diagnostics(const std::vector<DiagRecord>& records);

/// The clear error of a failed SQLDriverConnect (pre-flight): a missing DSN or driver names it
/// and the odbcinst command that lists what is installed, failed authentication names the user,
/// an unknown database names it, an unreachable server names the server; the driver's own
/// diagnostics follow. `connection_string` must already be redacted.
std::string connect_error_message(const std::vector<DiagRecord>& records, std::string_view connection_string,
                                  const std::string& user);

/// True if the records say the named database does not exist (PostgreSQL 3D000 or its text,
/// MySQL native 1049, SQL Server native 4060).
bool is_unknown_database(const std::vector<DiagRecord>& records);

// ---- text --------------------------------------------------------------------------------------

/// UTF-8 to UTF-16 (SQLWCHAR is 16 bits with unixODBC). Invalid bytes become U+FFFD.
void utf8_to_utf16(std::string_view in, std::u16string& out);
/// The same, appended to `out`.
void append_utf16(std::string_view in, std::u16string& out);
/// UTF-16 to UTF-8, appended to `out`. Unpaired surrogates become U+FFFD.
void utf16_to_utf8(std::u16string_view in, std::string& out);

/// SQLGetInfo as text ("" when the driver does not answer).
std::string info_text(SQLHDBC dbc, SQLUSMALLINT what);

/// VARCHAR parameters are declared this long (SQL Server's largest non-MAX varchar) whatever
/// the value's length, so the declared parameter types of a prepared statement never change
/// between executions (Microsoft's driver re-prepares when they do); longer values are
/// LONGVARCHAR (varchar(max)).
inline constexpr SQLULEN kVarcharColumnSize = 8000;

/// True when `v` fits an SQL INTEGER (bound as SQL_C_SLONG instead of SQL_C_SBIGINT).
inline bool fits_int32(std::int64_t v) noexcept {
  return v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max();
}

}  // namespace drivelab::oltp::odbc
