#include "drivelab/oltp/database/database.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/core/units.hpp"
#include "drivelab/oltp/backends/mysql/mysql_backend.hpp"
#include "drivelab/oltp/backends/odbc/odbc_backend.hpp"
#include "drivelab/oltp/backends/postgres/postgres_backend.hpp"
#include "drivelab/oltp/backends/sqlite/sqlite_backend.hpp"

namespace drivelab::oltp {

Capabilities capabilities_of(BackendKind kind) noexcept {
  switch (kind) {
    case BackendKind::sqlite: return sqlite_capabilities();
    case BackendKind::postgres: return postgres_capabilities();
    case BackendKind::mysql: return mysql_capabilities();
    case BackendKind::odbc: return odbc_capabilities();
  }
  return {};
}

namespace {

bool valid_identifier(const std::string& s) {
  if (s.empty() || s.size() > 63) return false;
  if (std::isdigit(static_cast<unsigned char>(s[0])) != 0) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; });
}

void decode_server(const config::Node& node, DatabaseConfig& out) {
  config::MapReader r(node);
  ServerKind managed{};
  if (r.choice("managed", managed, kServerKindNames)) out.managed = managed;
  const bool has_buffer = r.size("buffer", out.buffer_bytes, {.min = 16ull << 20, .max = 16ull << 40});
  const bool has_max = r.integer("max_connections", out.max_connections, {.min = 0, .max = 100'000});
  const config::Node settings = r.section("settings");
  if (settings.defined() && !settings.is_null()) {
    if (!settings.is_map()) {
      settings.error("expected a mapping of server parameters, e.g. {wal_buffers: 64MB}");
    } else {
      for (const auto& [key, value] : settings.entries()) {
        if (!value.is_scalar()) {
          value.error("expected a scalar server parameter value");
          continue;
        }
        out.settings[key] = value.scalar();
      }
    }
  }
  const bool has_keep = r.boolean("keep", out.keep_server);
  const bool has_connection = r.string("connection", out.connection);
  const bool has_user = r.string("user", out.user);
  const bool has_pw_env = r.string("password_env", out.password_env);
  const bool has_pw_file = r.string("password_file", out.password_file);
  r.finish();

  if (out.managed && has_connection) {
    node.child("connection")
        .error(
            "'connection' and 'managed' exclude each other: a managed server is created by drivelab, "
            "'connection' names an existing one");
  }
  if (!out.managed && !has_connection) {
    node.error(
        "needs either 'managed: postgres|mariadb' (a server created in the target directory) "
        "or 'connection: ...' (an existing server)");
  }
  if (out.managed) {
    for (const auto& [present, key] :
         {std::pair{has_user, "user"}, std::pair{has_pw_env, "password_env"}, std::pair{has_pw_file, "password_file"}})
      if (present) node.child(key).error(fmt::format("'{}' applies to 'connection' servers only", key));
  } else if (has_connection) {
    for (const auto& [present, key] : {std::pair{has_buffer, "buffer"}, std::pair{has_max, "max_connections"},
                                       std::pair{settings.defined(), "settings"}, std::pair{has_keep, "keep"}})
      if (present)
        node.child(key).error(
            fmt::format("'{}' applies to managed servers only (an existing server keeps its own settings)", key));
  }
  if (has_pw_env && has_pw_file)
    node.child("password_file").error("give the password by 'password_env' or 'password_file', not both");
  if (has_pw_env && !valid_identifier(out.password_env))
    node.child("password_env").error(fmt::format("'{}' is not an environment variable name", out.password_env));
  // The password must be readable now: `validate` and the run's own validation report it before
  // any work, at its key. Only the outcome is kept here; open_database() reads it again.
  if (!out.managed && has_connection && has_pw_env != has_pw_file &&
      (!has_pw_env || valid_identifier(out.password_env)))
    if (const PasswordLookup pw = look_up_password(out); !pw.problem.empty()) node.child(pw.key).error(pw.problem);
}

}  // namespace

PasswordLookup look_up_password(const DatabaseConfig& c) {
  PasswordLookup out;
  if (!c.password_env.empty()) {
    out.key = "password_env";
    const char* v = std::getenv(c.password_env.c_str());
    if (v == nullptr)
      out.problem = fmt::format("the environment variable {} is not set (it must hold the password)", c.password_env);
    else if (*v == '\0')
      out.problem = fmt::format("the environment variable {} is empty (it must hold the password)", c.password_env);
    else
      out.password = v;
    return out;
  }
  if (c.password_file.empty()) return out;
  out.key = "password_file";
  std::string path = c.password_file;
  if (path.starts_with("~/"))
    if (const char* home = std::getenv("HOME")) path = std::string(home) + path.substr(1);
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (st.type() == std::filesystem::file_type::not_found) {
    out.problem = fmt::format("{} does not exist", path);
    return out;
  }
  if (!ec && st.type() == std::filesystem::file_type::directory) {
    out.problem = fmt::format("{} is a directory, not a file holding the password", path);
    return out;
  }
  errno = 0;
  std::ifstream in(path);
  if (!in) {
    const int err = errno;
    out.problem = fmt::format("cannot read {}: {}", path, err != 0 ? std::strerror(err) : "cannot open it");
    return out;
  }
  std::string line;
  std::getline(in, line);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (in.bad())
    out.problem = fmt::format("cannot read {}", path);
  else if (line.empty())
    out.problem = fmt::format("the first line of {} is empty (it must hold the password)", path);
  else
    out.password = std::move(line);
  return out;
}

namespace {

/// libpq conninfo / ODBC strings without their password (password=..., PWD=...).
std::string redact(std::string text) {
  static const std::regex pg(R"((password\s*=\s*)('[^']*'|\S+))", std::regex::icase);
  static const std::regex odbc(R"((PWD\s*=\s*)(\{[^}]*\}|[^;]*))", std::regex::icase);
  static const std::regex uri(R"((://[^:/@]+:)[^@/]+@)");
  text = std::regex_replace(text, pg, "$1***");
  text = std::regex_replace(text, odbc, "$1***");
  return std::regex_replace(text, uri, "$1***@");
}

}  // namespace

int sessions_needed(int workers, int loaders, const Capabilities& capabilities) noexcept {
  return std::max({std::max(workers, 0) + 1, std::max(loaders, 0), capabilities.finish_load_sessions});
}

void check_max_connections_key(const config::Node& section, const DatabaseConfig& config, int workers, int loaders,
                               std::string_view workers_what) {
  if (!config.managed) return;  // an existing server is asked at run time
  const Capabilities can = capabilities_of(config.backend);
  const int need = sessions_needed(workers, loaders, can);
  const config::Node server = section.child("server");
  const auto refuse = [&](const config::Node& key, long long value) {
    key.error(fmt::format(
        "max_connections = {} is below the {} sessions this test has open at once ({} {} + 1 drivelab "
        "session; {} load thread(s){}): set at least {}, or leave it out (drivelab sizes it)",
        value, need, workers, workers_what, loaders,
        can.finish_load_sessions > 1 ? fmt::format(", then {} sessions to analyze", can.finish_load_sessions)
                                     : std::string(),
        need));
  };
  if (config.max_connections > 0 && config.max_connections < need)
    refuse(server.child("max_connections"), config.max_connections);
  // server.settings are applied after the profile, so a max_connections there wins.
  if (const auto it = config.settings.find("max_connections"); it != config.settings.end()) {
    char* end = nullptr;
    const long long v = std::strtoll(it->second.c_str(), &end, 10);
    if (end != it->second.c_str() && *end == '\0' && v < need)
      refuse(server.child("settings").child("max_connections"), v);
  }
}

void decode_database(config::MapReader& r, const config::Node& section, DatabaseConfig& out) {
  r.choice("backend", out.backend, kBackendKindNames);
  if (r.string("database", out.database) && !valid_identifier(out.database)) {
    section.child("database")
        .error(fmt::format("'{}' is not a database name drivelab accepts (letters, digits and _, at most 63, not "
                           "starting with a digit)",
                           out.database));
    out.database = "drivelab";
  }
  const bool has_dialect = r.choice(
      "dialect", out.dialect,
      {{"sqlserver", SqlDialect::sqlserver}, {"postgres", SqlDialect::postgres}, {"mysql", SqlDialect::mysql}});

  // SQLite's own settings.
  bool sqlite_keys = false;
  if (r.string("journal_mode", out.journal_mode)) {
    sqlite_keys = true;
    if (!is_valid_journal_mode(out.journal_mode)) {
      section.child("journal_mode")
          .error(fmt::format("'{}' is not a journal mode (choices: WAL, DELETE, TRUNCATE, PERSIST, MEMORY, OFF)",
                             out.journal_mode));
      out.journal_mode = "WAL";
    }
  }
  if (r.string("synchronous", out.synchronous)) {
    sqlite_keys = true;
    if (!is_valid_synchronous(out.synchronous)) {
      section.child("synchronous")
          .error(fmt::format("'{}' is not a synchronous level (choices: OFF, NORMAL, FULL, EXTRA)", out.synchronous));
      out.synchronous = "FULL";
    }
  }
  sqlite_keys |= r.size("cache_size", out.cache_size_bytes, {.min = 1ull << 20, .max = 1ull << 40});
  sqlite_keys |=
      r.duration("busy_timeout", out.busy_timeout, {.min = std::chrono::milliseconds(1), .max = std::chrono::hours(1)});

  const config::Node server = r.section("server");
  if (server.defined()) decode_server(server, out);

  const bool is_server = out.backend != BackendKind::sqlite;
  if (!is_server && server.defined())
    server.error("the sqlite backend is embedded: it takes no server (set backend: postgres, mysql or odbc)");
  if (is_server && !server.defined())
    section.child("backend").error(fmt::format(
        "backend {0} needs a 'server:' section: {{managed: {1}}} for a server created in the target "
        "directory, or {{connection: ...}} for an existing one (on the command line: --set '{2}.server.managed={1}')",
        to_string(out.backend), out.backend == BackendKind::mysql ? "mariadb" : "postgres", section.path()));
  if (is_server && sqlite_keys)
    for (const char* key : {"journal_mode", "synchronous", "cache_size", "busy_timeout"})
      if (section.child(key).defined())
        section.child(key).error(
            fmt::format("'{}' is a sqlite setting; with backend {} use server.settings", key, to_string(out.backend)));
  if (has_dialect && out.backend != BackendKind::odbc)
    section.child("dialect").error("'dialect' applies to backend odbc only (the native backends know theirs)");

  if (out.managed) {
    const ServerKind m = *out.managed;
    if (out.backend == BackendKind::postgres && m != ServerKind::postgres)
      server.child("managed").error("backend postgres needs managed: postgres");
    if (out.backend == BackendKind::mysql && m != ServerKind::mariadb)
      server.child("managed").error("backend mysql needs managed: mariadb");
    if (out.backend == BackendKind::odbc) {
      const SqlDialect want = m == ServerKind::postgres ? SqlDialect::postgres : SqlDialect::mysql;
      if (!has_dialect)
        out.dialect = want;
      else if (out.dialect != want)
        section.child("dialect").error(fmt::format("a managed {} server speaks dialect {}, not {}", to_string(m),
                                                   to_string(want), to_string(out.dialect)));
    }
  } else if (out.backend == BackendKind::odbc && !has_dialect && server.defined()) {
    section.child("backend").error("backend odbc with an existing server needs 'dialect: sqlserver|postgres|mysql'");
  }
}

results::Json to_json(const DatabaseConfig& c) {
  results::Json j{{"backend", to_string(c.backend)}};
  if (c.backend == BackendKind::sqlite) {
    j["journal_mode"] = c.journal_mode;
    j["synchronous"] = c.synchronous;
    j["cache_size"] = format_size(c.cache_size_bytes);
    j["busy_timeout"] = format_duration(c.busy_timeout);
    return j;
  }
  j["database"] = c.database;
  if (c.backend == BackendKind::odbc) j["dialect"] = to_string(c.dialect);
  results::Json server = results::Json::object();
  if (c.managed) {
    server["managed"] = to_string(*c.managed);
    server["buffer"] = format_size(c.buffer_bytes);
    server["max_connections"] = c.max_connections;
    server["settings"] = c.settings;
    server["keep"] = c.keep_server;
  } else {
    server["connection"] = redact(c.connection);
    if (!c.user.empty()) server["user"] = c.user;
    if (!c.password_env.empty()) server["password_env"] = c.password_env;
    if (!c.password_file.empty()) server["password_file"] = c.password_file;
  }
  j["server"] = std::move(server);
  return j;
}

}  // namespace drivelab::oltp

namespace drivelab::oltp {

void decode_failure_bound(config::MapReader& r, FailureBound& out) {
  const config::Node node = r.section("failure_bound");
  if (!node.defined() || node.is_null()) return;
  config::MapReader b(node);
  b.percent("failed", out.failed_pct);
  b.duration("window", out.window, {.min = std::chrono::seconds(1), .max = std::chrono::hours(1)});
  b.finish();
}

results::Json to_json(const FailureBound& b) {
  return {{"failed_pct", b.failed_pct}, {"window", format_duration(b.window)}};
}

}  // namespace drivelab::oltp
