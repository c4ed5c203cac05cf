#include "mysql_common.hpp"

#include <cctype>

#include <fmt/format.h>
#include <mysql_driver.h>
#include <cppconn/connection.h>
#include <cppconn/exception.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/core/escape.hpp"

namespace drivelab::oltp::mysql {
namespace {

sql::mysql::MySQL_Driver& driver() {
  // A function-local static is initialised once even when threads race (C++11 [stmt.dcl]);
  // the driver constructor also runs mysql_library_init(), which must not race either.
  static sql::mysql::MySQL_Driver* const instance = sql::mysql::get_mysql_driver_instance();
  return *instance;
}

/// threadEnd() when a thread that called threadInit() exits.
struct ThreadGuard {
  bool active = false;
  ~ThreadGuard() {
    if (active) driver().threadEnd();
  }
};
thread_local ThreadGuard thread_guard;

std::string user_of(const Endpoint& e) { return e.user.empty() ? std::string("(none)") : e.user; }

}  // namespace

void ensure_thread_init() {
  if (thread_guard.active) return;
  driver().threadInit();
  thread_guard.active = true;
}

std::string where(const Endpoint& e) {
  if (!e.socket_path.empty()) return "socket " + e.socket_path;
  return fmt::format("{}:{}", e.host.empty() ? "localhost" : e.host, e.port > 0 ? e.port : 3306);
}

std::unique_ptr<sql::Connection> connect(const ConnectParams& p) {
  ensure_thread_init();
  sql::ConnectOptionsMap o;
  const Endpoint& e = p.endpoint;
  // Connector/C++ 1.1 reads the transport from the host name: unix://<socket file> or
  // tcp://host:port (checked against MariaDB 10.11: both work).
  if (!e.socket_path.empty()) {
    o["hostName"] = sql::SQLString("unix://" + e.socket_path);
  } else {
    o["hostName"] =
        sql::SQLString(fmt::format("tcp://{}:{}", e.host.empty() ? "127.0.0.1" : e.host, e.port > 0 ? e.port : 3306));
  }
  o["userName"] = sql::SQLString(e.user);
  o["password"] = sql::SQLString(e.password);
  if (!p.database.empty()) o["schema"] = sql::SQLString(p.database);
  // A lost session must be seen as lost (and counted), never silently replaced mid-transaction.
  o["OPT_RECONNECT"] = false;
  o["OPT_CONNECT_TIMEOUT"] = p.connect_timeout_s;
  if (p.read_timeout_s > 0) o["OPT_READ_TIMEOUT"] = p.read_timeout_s;
  o["OPT_WRITE_TIMEOUT"] = p.write_timeout_s;
  // Affected rows = rows matched, as SQLite and PostgreSQL count them (MySQL's default counts
  // only rows whose value changed, so an UPDATE that writes the same value would report 0).
  o["CLIENT_FOUND_ROWS"] = true;
  o["OPT_CHARSET_NAME"] = sql::SQLString("utf8mb4");
  try {
    return std::unique_ptr<sql::Connection>(driver().connect(o));
  } catch (const sql::SQLException& ex) {
    const int code = ex.getErrorCode();
    const std::string msg = ex.what();
    std::string text;
    switch (code) {
      case 1045:  // ER_ACCESS_DENIED_ERROR
      case 1698:  // ER_ACCESS_DENIED_NO_PASSWORD_ERROR (unix_socket: another OS user)
        text = fmt::format("mysql: access denied for user '{}' at {} (wrong user or password): {}", user_of(e),
                           where(e), msg);
        break;
      case 1044:
        text =
            fmt::format("mysql: user '{}' may not use database '{}' at {}: {}", user_of(e), p.database, where(e), msg);
        break;
      case 1049: text = fmt::format("mysql: unknown database '{}' at {}", p.database, where(e)); break;
      case 2002:
      case 2003:
      case 2005:
      case 2006:
      case 2013: text = fmt::format("mysql: cannot connect to {}: {}", where(e), msg); break;
      default: text = fmt::format("mysql: connect to {} as '{}': {}", where(e), user_of(e), msg); break;
    }
    if (code != 0) text += fmt::format(" (error {})", code);
    throw BackendError(text, ex.getSQLState(), code);
  } catch (const std::exception& ex) {
    throw BackendError(fmt::format("mysql: connect to {} as '{}': {}", where(e), user_of(e), ex.what()));
  }
}

bool is_connection_lost(int code) noexcept {
  switch (code) {
    case 2002:  // CR_CONNECTION_ERROR: cannot connect through the socket
    case 2003:  // CR_CONN_HOST_ERROR: cannot connect to host
    case 2006:  // CR_SERVER_GONE_ERROR
    case 2013:  // CR_SERVER_LOST
    case 2055:  // CR_SERVER_LOST_EXTENDED
    case 1927:  // ER_CONNECTION_KILLED (MariaDB)
    case 4031:  // ER_CLIENT_INTERACTION_TIMEOUT (MariaDB: disconnected for inactivity)
      return true;
    default: return false;
  }
}

bool is_storage_failure(int code, std::string_view message) noexcept {
  return is_storage_error(SqlDialect::mysql, {}, code, message);
}

Outcome classify(int code, std::string_view message, bool in_commit) noexcept {
  if (is_storage_failure(code, message)) return Outcome::storage_failure;
  if (is_connection_lost(code)) return in_commit ? Outcome::in_doubt : Outcome::retryable;
  switch (code) {
    case 1213:  // ER_LOCK_DEADLOCK: InnoDB rolled the whole transaction back
    case 1205:  // ER_LOCK_WAIT_TIMEOUT: the statement was rolled back; the caller rolls back the rest
    case 1020:  // ER_CHECKREAD: record changed since last read
      return Outcome::retryable;
    case 1317:  // ER_QUERY_INTERRUPTED: KILL QUERY from the cancel watcher
    case 1180:  // ER_ERROR_DURING_COMMIT
      // The watcher never interrupts a COMMIT, but if one reports either error its effect is unknown.
      return in_commit ? Outcome::in_doubt : (code == 1317 ? Outcome::retryable : Outcome::fatal);
    default: return Outcome::fatal;
  }
}

DbStatus status_from(const sql::SQLException& e, bool in_commit) {
  DbStatus s;
  s.native_code = e.getErrorCode();
  s.sqlstate = e.getSQLState();
  s.message = e.what();
  s.outcome = classify(s.native_code, s.message, in_commit);
  s.connection_lost = is_connection_lost(s.native_code);
  if (s.outcome == Outcome::ok) s.outcome = Outcome::fatal;  // an exception is never success
  return s;
}

void throw_backend(const sql::SQLException& e, std::string_view what) {
  std::string text = fmt::format("mysql: {}: {}", what, e.what());
  if (e.getErrorCode() != 0) text += fmt::format(" (error {}", e.getErrorCode());
  if (!e.getSQLState().empty())
    text += fmt::format("{}SQLSTATE {}", e.getErrorCode() != 0 ? ", " : " (", e.getSQLState());
  if (e.getErrorCode() != 0 || !e.getSQLState().empty()) text += ")";
  if (is_storage_failure(e.getErrorCode(), e.what())) throw StorageFailure(text, e.getSQLState(), e.getErrorCode());
  throw BackendError(text, e.getSQLState(), e.getErrorCode());
}

std::string quote_identifier(std::string_view name) {
  static constexpr Escape kBacktick[] = {{'`', "``"}};
  std::string out = "`";
  append_escaped(out, name, kBacktick);
  out += '`';
  return out;
}

void append_quoted(std::string& out, std::string_view text, bool no_backslash_escapes) {
  // MySQL reference manual, "String Literals", table "Special Character Escape Sequences".
  static constexpr Escape kQuoteDoubled[] = {{'\'', "''"}};
  static constexpr Escape kBackslashed[] = {{'\0', "\\0"},  {'\n', "\\n"}, {'\r', "\\r"},
                                            {'\\', "\\\\"}, {'\'', "\\'"}, {'\x1a', "\\Z"}};
  out += '\'';
  if (no_backslash_escapes)
    append_escaped(out, text, kQuoteDoubled);
  else
    append_escaped(out, text, kBackslashed);
  out += '\'';
}

std::vector<std::string> split_statements(std::string_view sql) {
  std::vector<std::string> out;
  {
    // Stored programs: the body's semicolons belong to it (the mysql client's DELIMITER case).
    std::string head;
    for (char ch : sql.substr(0, 64)) head += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    const auto first = head.find_first_not_of(" \t\r\n");
    if (first != std::string::npos) {
      const std::string_view h = std::string_view(head).substr(first);
      for (std::string_view kind : {"CREATE FUNCTION ", "CREATE PROCEDURE ", "CREATE TRIGGER "})
        if (h.substr(0, kind.size()) == kind) return {std::string(sql.substr(first))};
    }
  }
  std::size_t start = 0;
  const auto emit = [&](std::size_t end) {
    std::string_view s = sql.substr(start, end - start);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) s.remove_suffix(1);
    if (!s.empty()) out.emplace_back(s);
  };
  std::size_t i = 0;
  while (i < sql.size()) {
    const char c = sql[i];
    if (c == '\'' || c == '"' || c == '`') {
      // Quoted text: a doubled quote continues it; backslash escapes inside '...' and "...".
      ++i;
      while (i < sql.size()) {
        if (c != '`' && sql[i] == '\\') {
          i += 2;
        } else if (sql[i] == c) {
          if (i + 1 < sql.size() && sql[i + 1] == c) {
            i += 2;
          } else {
            ++i;
            break;
          }
        } else {
          ++i;
        }
      }
    } else if (c == '#' || (c == '-' && sql.substr(i, 3).size() == 3 && sql[i + 1] == '-' &&
                            std::isspace(static_cast<unsigned char>(sql[i + 2])) != 0)) {
      while (i < sql.size() && sql[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < sql.size() && sql[i + 1] == '*') {
      const auto end = sql.find("*/", i + 2);
      i = end == std::string_view::npos ? sql.size() : end + 2;
    } else if (c == ';') {
      emit(i);
      start = ++i;
    } else {
      ++i;
    }
  }
  emit(std::min(i, sql.size()));
  return out;
}

std::string connector_version() {
  auto& d = driver();
  return fmt::format("{}.{}.{}", d.getMajorVersion(), d.getMinorVersion(), d.getPatchVersion());
}

}  // namespace drivelab::oltp::mysql
