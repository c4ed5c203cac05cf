#pragma once
/// \file connect_failure.hpp
/// Why a backend's connect() failed, sorted from the error it threw (BackendError's SQLSTATE
/// and native code, and its text), so that each kind gets its own remedy: a full server, a
/// time-out and a refusal are fixed in different places (the TPC-C login failure names it,
/// tpcc_terminal.hpp). The codes and texts are PostgreSQL's (errcodes.txt, postmaster.c,
/// postinit.c, libpq's fe-connect.c), MySQL/MariaDB's (mysqld_error.h, errmsg.h) and ODBC's.
#include <string_view>

namespace drivelab::oltp {

/// Why a session could not be opened: each has its own remedy (the TPC-C login failure names it).
enum class ConnectFailure {
  /// The server answered and refused the session for lack of slots: PostgreSQL SQLSTATE 53300
  /// (max_connections, a database's or role's CONNECTION LIMIT, slots reserved for superusers);
  /// MySQL/MariaDB error 1040 (ER_CON_COUNT_ERROR, max_connections) or 1203
  /// (ER_TOO_MANY_USER_CONNECTIONS, max_user_connections); or, through a driver that passes only
  /// the text, "too many clients" / "too many connections" / "remaining connection slots are
  /// reserved".
  too_many_connections,
  /// No answer within the connect time-out: libpq's "timeout expired", ETIMEDOUT's "Connection
  /// timed out" (MySQL 2002/2003 "(110)", "system error: 110"), ODBC SQLSTATE HYT00/HYT01.
  timed_out,
  /// Nothing accepts connections there: ECONNREFUSED's "Connection refused" (MySQL 2003
  /// "(111)"), a Unix socket that does not exist (libpq's "No such file or directory", MySQL 2002
  /// "(2)").
  refused,
  other,  ///< anything else (authentication, unknown database, ...): the error says it
};
std::string_view to_string(ConnectFailure f) noexcept;

/// Sorts a failed connect by the error's SQLSTATE, native code and text (case-insensitive for
/// the text), in the order above: a full server first, since its text may also mention a time.
ConnectFailure classify_connect_failure(std::string_view sqlstate, int native_code, std::string_view message) noexcept;

}  // namespace drivelab::oltp
