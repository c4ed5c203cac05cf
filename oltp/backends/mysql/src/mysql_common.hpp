#pragma once
// Private helpers shared by the MySQL/MariaDB backend (mysql_backend.cpp), its cancel watcher
// (mysql_cancel.cpp) and the managed MariaDB server (mysql_server.cpp): the one Connector/C++
// driver instance, per-thread initialisation, connecting with clear errors, and the
// classification of MySQL error numbers (the table is in mysql_backend.hpp).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "drivelab/oltp/backend/backend.hpp"
#include "drivelab/oltp/backend/server.hpp"

namespace sql {
class Connection;
class SQLException;
}  // namespace sql

namespace drivelab::oltp::mysql {

/// Connector/C++ 1.1 needs MySQL_Driver::threadInit() in every thread that uses it and
/// threadEnd() before that thread exits (libmysqlclient keeps per-thread state; MariaDB's
/// Connector/C, which Debian's build links, keeps none, but the call is cheap and the contract
/// is the Connector's). Called at every entry point that may be a thread's first use (connect,
/// begin, prepare, execute_immediate); the first call in a thread registers a thread_local guard
/// whose destructor calls threadEnd(). Also creates the driver instance under std::call_once:
/// get_driver_instance() of 1.1 is not safe to race on first use.
void ensure_thread_init();

/// How to open one session.
struct ConnectParams {
  Endpoint endpoint;     ///< socket file, or host + port; user; password (never printed)
  std::string database;  ///< "" = no default database
  int connect_timeout_s = 10;
  /// Per read/write on the socket: a server that stops answering (hung, or a remote host gone
  /// without a TCP reset) fails the call after this long instead of hanging it. A crashed
  /// server process is seen at once (the kernel closes its socket). 0: no read timeout
  /// (libmariadb then waits with poll(-1); the sessions of a run, bounded by the call watcher).
  int read_timeout_s = 600;
  int write_timeout_s = 120;
};

/// Opens a session (autocommit stays as the server's default; the caller sets it). Throws
/// BackendError whose text names what failed without the password: access denied (1045) names
/// the user, unknown database (1049) names it, cannot connect (2002/2003/2005) names the socket or
/// host:port.
std::unique_ptr<sql::Connection> connect(const ConnectParams& params);

/// "socket /path/mysqld.sock" or "host:port" — for messages.
std::string where(const Endpoint& e);

/// Error numbers that mean the session is gone: 2006 server gone away, 2013 lost connection,
/// 2002/2003 cannot connect, 2055 lost connection (extended), 1927 connection killed (MariaDB),
/// 4031 disconnected for inactivity (MariaDB).
bool is_connection_lost(int code) noexcept;

/// True when error `code` with `message` says the server's storage failed (the test fails;
/// docs/backend-mysql.md "Storage failures"): is_storage_error(SqlDialect::mysql, ...) of
/// backend.hpp (1021, 1114, or "errno 28" / "Disk full" in the text).
bool is_storage_failure(int code, std::string_view message) noexcept;

/// Outcome of a failed call (see mysql_backend.hpp). `in_commit`: the call was COMMIT.
Outcome classify(int code, std::string_view message, bool in_commit) noexcept;

/// DbStatus of a Connector exception (outcome, errno, SQLSTATE, message, connection_lost).
DbStatus status_from(const sql::SQLException& e, bool in_commit);

/// BackendError text for a Connector exception: "mysql: <what>: <message> (error N, SQLSTATE S)".
[[noreturn]] void throw_backend(const sql::SQLException& e, std::string_view what);

/// `name` quoted as a MySQL identifier (backticks, inner backticks doubled).
std::string quote_identifier(std::string_view name);

/// Appends `text` as a single-quoted SQL string literal. With `no_backslash_escapes` (sql_mode
/// NO_BACKSLASH_ESCAPES) only quotes are doubled; otherwise backslash, quote, NUL, newline,
/// carriage return and Ctrl-Z are escaped as mysql_real_escape_string() does.
void append_quoted(std::string& out, std::string_view text, bool no_backslash_escapes);

/// Splits `sql` into statements at semicolons outside quotes ('...', "...", `...`) and comments
/// (-- , #, /* */). Empty statements are dropped. Used instead of CLIENT_MULTI_STATEMENTS, whose
/// Connector/C++ 1.1 result handling leaves later errors unread. A text that starts with
/// CREATE FUNCTION / CREATE PROCEDURE / CREATE TRIGGER is one statement whose BEGIN ... END
/// body holds semicolons: it is returned whole (pass such a statement alone).
std::vector<std::string> split_statements(std::string_view sql);

/// "1.1.12" (Connector/C++ version of the linked library).
std::string connector_version();

}  // namespace drivelab::oltp::mysql
