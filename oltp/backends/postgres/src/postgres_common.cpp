#include "postgres_common.hpp"

#include <poll.h>

#include <array>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/oltp/backend/connect_failure.hpp"

namespace drivelab::oltp::pg {
namespace {

bool contains(std::string_view haystack, std::string_view needle) noexcept {
  return haystack.find(needle) != std::string_view::npos;
}

/// libpq messages end in a newline and may hold several lines; one line reads better inside ours.
std::string one_line(std::string_view text) {
  std::string out;
  for (char c : text) out += (c == '\n' || c == '\r') ? ' ' : c;
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

bool result_ok(const PGresult* r) noexcept {
  switch (PQresultStatus(r)) {
    case PGRES_COMMAND_OK:
    case PGRES_TUPLES_OK:
    case PGRES_COPY_IN:
    case PGRES_EMPTY_QUERY:
    case PGRES_SINGLE_TUPLE: return true;
    default: return false;
  }
}

/// `text` between two `quote`s, each character preceded by what `escape_of` gives it ("" for
/// none): libpq's conninfo escapes ' and \ with a backslash, SQL doubles its quote character.
template <class EscapeOf>
std::string enclose(std::string_view text, char quote, EscapeOf escape_of) {
  std::string out(1, quote);
  for (char c : text) {
    out += escape_of(c);
    out += c;
  }
  return out + quote;
}

}  // namespace

std::string conninfo_quote(std::string_view value) {
  return enclose(value, '\'', [](char c) { return c == '\'' || c == '\\' ? "\\" : ""; });
}

std::string quote_ident(std::string_view name) {
  return enclose(name, '"', [](char c) { return c == '"' ? "\"" : ""; });
}

std::string quote_literal(std::string_view text) {
  return enclose(text, '\'', [](char c) { return c == '\'' ? "'" : ""; });
}

std::string describe_target(const PostgresOptions& o) {
  // What the whole conninfo names (the endpoint, then an existing server's `connection` string,
  // where libpq keeps the last of a keyword given twice), parsed as libpq parses it, without the
  // environment's defaults: an explicit `host=db1 port=5433` is named as given.
  std::string host;
  std::string hostaddr;
  std::string port;
  char* parse_error = nullptr;
  if (PQconninfoOption* opts = PQconninfoParse(conninfo(o).c_str(), &parse_error); opts != nullptr) {
    for (const PQconninfoOption* opt = opts; opt->keyword != nullptr; ++opt) {
      if (opt->val == nullptr || *opt->val == '\0') continue;
      const std::string_view k = opt->keyword;
      if (k == "host")
        host = opt->val;
      else if (k == "hostaddr")
        hostaddr = opt->val;
      else if (k == "port")
        port = opt->val;
    }
    PQconninfoFree(opts);
  }
  if (parse_error != nullptr) PQfreemem(parse_error);
  const std::string port_text = !port.empty() ? fmt::format(" port {}", port) : std::string(" (default port)");
  // libpq: a host starting with '/' (or '@', an abstract socket) is a socket directory.
  if (!host.empty() && (host.front() == '/' || host.front() == '@'))
    return fmt::format("socket directory {}{}", host, port_text);
  if (!host.empty() && !hostaddr.empty()) return fmt::format("host {} (address {}){}", host, hostaddr, port_text);
  if (!host.empty()) return fmt::format("host {}{}", host, port_text);
  if (!hostaddr.empty()) return fmt::format("address {}{}", hostaddr, port_text);
  return "libpq's default server (PGHOST or the default socket)" + (!port.empty() ? port_text : std::string());
}

std::string conninfo(const PostgresOptions& o) {
  const Endpoint& e = o.endpoint;
  // Defaults first: a keyword given again in conninfo_extra overrides (libpq keeps the last).
  std::string s =
      "connect_timeout=10 client_encoding=UTF8 keepalives=1 keepalives_idle=10 "
      "keepalives_interval=5 keepalives_count=3";
  if (!e.socket_path.empty())
    s += " host=" + conninfo_quote(e.socket_path);
  else if (!e.host.empty())
    s += " host=" + conninfo_quote(e.host);
  if (e.port > 0) s += fmt::format(" port={}", e.port);
  if (!o.database.empty()) s += " dbname=" + conninfo_quote(o.database);
  if (!e.user.empty()) s += " user=" + conninfo_quote(e.user);
  if (!e.password.empty()) s += " password=" + conninfo_quote(e.password);
  if (!o.application_name.empty()) s += " application_name=" + conninfo_quote(o.application_name);
  if (!o.conninfo_extra.empty()) s += " " + o.conninfo_extra;
  return s;
}

ConnHandle connect(const PostgresOptions& o) {
  ConnHandle conn(PQconnectdb(conninfo(o).c_str()));
  if (!conn) throw BackendError("postgres: out of memory creating a connection");
  if (PQstatus(conn.get()) == CONNECTION_OK) return conn;

  // libpq gives no SQLSTATE for a failed connection (PG 15), only the server's text: recognise
  // the failures a person must fix differently.
  const std::string detail = one_line(PQerrorMessage(conn.get()));
  const std::string user = o.endpoint.user.empty() ? "(libpq default user)" : o.endpoint.user;
  const std::string where = describe_target(o);
  // ERRCODE_TOO_MANY_CONNECTIONS (53300): "sorry, too many clients already" (max_connections),
  // "too many connections for database/role" (CONNECTION LIMIT), "remaining connection slots are
  // reserved ..." (postmaster.c, postinit.c).
  if (classify_connect_failure("", 0, detail) == ConnectFailure::too_many_connections)
    throw BackendError(fmt::format("postgres: the server at {} has no session left for user \"{}\" on database "
                                   "\"{}\" (too many connections, SQLSTATE 53300): {}",
                                   where, user, o.database, detail),
                       "53300");
  if (contains(detail, "password authentication failed") || contains(detail, "authentication failed") ||
      contains(detail, "no password supplied") || contains(detail, "pg_hba.conf") ||
      (contains(detail, "role \"") && contains(detail, "does not exist"))) {
    throw BackendError(fmt::format("postgres: authentication failed for user \"{}\" at {}: {}", user, where, detail),
                       contains(detail, "password") ? "28P01" : "28000");
  }
  if (contains(detail, "database \"") && contains(detail, "does not exist")) {
    throw BackendError(fmt::format("postgres: database \"{}\" does not exist on the server at {} "
                                   "(create it, or use a managed server): {}",
                                   o.database, where, detail),
                       "3D000");
  }
  if (contains(detail, "Connection refused") || contains(detail, "No such file or directory") ||
      contains(detail, "could not connect") || contains(detail, "timeout expired") ||
      contains(detail, "could not translate host name") || contains(detail, "unreachable") ||
      contains(detail, "Connection timed out")) {
    throw BackendError(fmt::format("postgres: server unreachable at {}: {}", where, detail), "08001");
  }
  throw BackendError(fmt::format("postgres: cannot connect to database \"{}\" as user \"{}\" at {}: {}", o.database,
                                 user, where, detail),
                     "08001");
}

Collected collect(PGconn* conn, const Wait& wait) {
  Collected out;
  bool have_error = false;
  const WatchedCall watched(wait.slot);
  const auto lose = [&](const std::string& message) {
    out.lost = true;
    out.lost_message = wait.slot != nullptr && wait.slot->abandoned.load(std::memory_order_acquire)
                           ? "no answer from the server within 2 s of a cancel request; session abandoned"
                           : one_line(message);
    return std::move(out);
  };
  for (;;) {
    while (PQisBusy(conn) != 0) {
      const int fd = PQsocket(conn);
      if (fd < 0 || PQstatus(conn) == CONNECTION_BAD) return lose(PQerrorMessage(conn));
      pollfd p{fd, POLLIN, 0};
      // No timeout (see postgres_cancel.hpp): the watcher cancels a call whose session is asked
      // to stop, and shuts the socket down when the server does not answer.
      const int rc = ::poll(&p, 1, -1);
      if (rc < 0 && errno != EINTR) return lose(fmt::format("poll: {}", std::strerror(errno)));
      // EOF and errors show up as readable; PQconsumeInput then reports the closed connection.
      if (rc > 0 && PQconsumeInput(conn) == 0) return lose(PQerrorMessage(conn));
    }
    ResultHandle r(PQgetResult(conn));
    if (!r) break;
    const ExecStatusType st = PQresultStatus(r.get());
    if (st == PGRES_COPY_IN) {
      out.result = std::move(r);
      return out;
    }
    if (!result_ok(r.get())) {
      if (!have_error) out.result = std::move(r);
      have_error = true;
    } else if (!have_error) {
      out.result = std::move(r);
    }
  }
  if (PQstatus(conn) == CONNECTION_BAD) return lose(PQerrorMessage(conn));
  return out;
}

bool is_connection_loss(std::string_view sqlstate) noexcept {
  return sqlstate.rfind("08", 0) == 0 || sqlstate == "57P01" || sqlstate == "57P02" || sqlstate == "57P03";
}

bool is_retryable(std::string_view sqlstate) noexcept {
  return sqlstate == "40001" || sqlstate == "40P01" || sqlstate == "55P03" || sqlstate == "57014";
}

DbStatus status_of(const Collected& c, bool in_commit) {
  if (!c.lost && c.result && result_ok(c.result.get())) return {};
  DbStatus s;
  if (c.result) {
    const char* state = PQresultErrorField(c.result.get(), PG_DIAG_SQLSTATE);
    if (state != nullptr) s.sqlstate = state;
    const char* primary = PQresultErrorField(c.result.get(), PG_DIAG_MESSAGE_PRIMARY);
    s.message = one_line(primary != nullptr ? primary : PQresultErrorMessage(c.result.get()));
  }
  if (is_storage_error(SqlDialect::postgres, s.sqlstate, 0, s.message)) {
    // Before the connection-loss test: a backend that ends its session over ENOSPC still
    // failed the drive, and its COMMIT is not in doubt but lost with the run.
    s.outcome = Outcome::storage_failure;
    s.connection_lost = c.lost || is_connection_loss(s.sqlstate);
  } else if (c.lost || is_connection_loss(s.sqlstate)) {
    s.connection_lost = true;
    s.outcome = in_commit ? Outcome::in_doubt : Outcome::retryable;
    if (s.message.empty()) s.message = c.lost_message.empty() ? "connection lost" : c.lost_message;
    s.message = "connection lost: " + s.message;
  } else if (is_retryable(s.sqlstate)) {
    s.outcome = Outcome::retryable;
  } else {
    s.outcome = Outcome::fatal;
    if (s.message.empty()) s.message = "no result from the server";
  }
  return s;
}

ResultHandle exec_or_throw(PGconn* conn, std::string_view sql, std::string_view what) {
  const std::string text(sql);
  if (PQsendQuery(conn, text.c_str()) == 0)
    throw BackendError(fmt::format("postgres: {}: {}", what, one_line(PQerrorMessage(conn))), "08006");
  Collected c = collect(conn, {});
  const DbStatus s = status_of(c, false);
  if (!s.ok()) throw_as(s, fmt::format("postgres: {}: {}", what, s.message));
  if (c.result && PQresultStatus(c.result.get()) == PGRES_COPY_IN) {
    PQputCopyEnd(conn, "unexpected COPY");
    collect(conn, {});
    throw BackendError(fmt::format("postgres: {}: unexpected COPY FROM STDIN", what));
  }
  return std::move(c.result);
}

}  // namespace drivelab::oltp::pg
