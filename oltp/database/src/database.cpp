#include "drivelab/oltp/database/database.hpp"

#include <algorithm>
#include <array>
#include <span>
#include <vector>
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

namespace {

/// THE table of backends: one row each, in BackendKind's order (backend_row.hpp).
const std::array<const BackendRow*, kBackendKindNames.size()>& rows() noexcept {
  static const std::array<const BackendRow*, kBackendKindNames.size()> table{&sqlite_row(), &postgres_row(),
                                                                             &mysql_row(), &odbc_row()};
  return table;
}

}  // namespace

const BackendRow& row_of(BackendKind kind) noexcept { return *rows()[static_cast<std::size_t>(kind)]; }

Capabilities capabilities_of(BackendKind kind) noexcept { return row_of(kind).capabilities(); }

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

namespace {

/// Reads `key`, one of the chosen backend's keys, into `values` (backend_row.hpp OptionType).
void decode_key(config::MapReader& r, const config::Node& section, const OptionKey& key, OptionValues& values) {
  const std::string name(key.name);
  OptionValue v = option_value({&key, 1}, {}, key.name);
  switch (key.type) {
    case OptionType::word: {
      if (!key.any_case) {
        if (r.choice(name, v.word, std::vector<std::string_view>(key.words.begin(), key.words.end()))) values[name] = v;
        return;
      }
      if (!r.string(name, v.word)) return;
      if (accepts_word(key, v.word)) {
        values[name] = v;
        return;
      }
      std::string choices;
      for (const std::string_view w : key.words) choices += (choices.empty() ? "" : ", ") + std::string(w);
      section.child(name).error(fmt::format("'{}' is not a {} (choices: {})", v.word, key.noun, choices));
      return;
    }
    case OptionType::size:
      if (r.size(name, v.bytes, {.min = key.min_bytes, .max = key.max_bytes})) values[name] = v;
      return;
    case OptionType::duration:
      if (r.duration(name, v.duration, {.min = key.min_duration, .max = key.max_duration})) values[name] = v;
      return;
  }
}

bool owns(const BackendRow& row, std::string_view key) noexcept {
  return std::any_of(row.keys.begin(), row.keys.end(), [&](const OptionKey& k) { return k.name == key; });
}

std::string joined(std::span<const ServerKind> kinds) {
  std::string out;
  for (const ServerKind k : kinds) out += (out.empty() ? "" : " or ") + std::string(to_string(k));
  return out;
}

std::optional<SqlDialect> dialect_named(std::string_view word) noexcept {
  for (const SqlDialect d : {SqlDialect::sqlite, SqlDialect::postgres, SqlDialect::mysql, SqlDialect::sqlserver})
    if (to_string(d) == word) return d;
  return std::nullopt;
}

}  // namespace

void decode_database(config::MapReader& r, const config::Node& section, DatabaseConfig& out) {
  r.choice("backend", out.backend, kBackendKindNames);
  const BackendRow& row = row_of(out.backend);
  if (r.string("database", out.database) && !valid_identifier(out.database)) {
    section.child("database")
        .error(fmt::format("'{}' is not a database name drivelab accepts (letters, digits and _, at most 63, not "
                           "starting with a digit)",
                           out.database));
    out.database = "drivelab";
  }

  // The keys the chosen backend owns, then those another backend owns: named with their owner.
  for (const OptionKey& key : row.keys) decode_key(r, section, key, out.options);
  const bool embedded = row.capabilities().embedded;
  for (const BackendRow* other : rows())
    for (const OptionKey& key : other->keys) {
      const config::Node given = section.child(std::string(key.name));
      if (other == &row || owns(row, key.name) || !given.defined()) continue;
      r.accept(key.name);
      const bool vowel = std::string_view("aeiou").find(other->name.front()) != std::string_view::npos;
      given.error(fmt::format(
          "'{}' is {} {} key; this test's backend is {}{}", key.name, vowel ? "an" : "a", other->name, row.name,
          other->capabilities().embedded && !embedded ? " (a server's own parameters go in server.settings)" : ""));
    }

  const config::Node server = r.section("server");
  if (server.defined()) decode_server(server, out);

  if (embedded && server.defined())
    server.error(
        fmt::format("the {} backend is embedded: it takes no server (set backend: postgres, mysql or odbc)", row.name));
  if (!embedded && !server.defined())
    section.child("backend").error(fmt::format(
        "backend {0} needs a 'server:' section: {{managed: {1}}} for a server created in the target "
        "directory, or {{connection: ...}} for an existing one (on the command line: --set '{2}.server.managed={1}')",
        row.name, row.managed_servers.empty() ? std::string_view("postgres") : to_string(row.managed_servers.front()),
        section.path()));
  if (!embedded && out.managed &&
      std::find(row.managed_servers.begin(), row.managed_servers.end(), *out.managed) == row.managed_servers.end())
    server.child("managed").error(fmt::format("backend {} needs managed: {}", row.name, joined(row.managed_servers)));

  // The dialect: the backend's own, or (ODBC) its `dialect` key, which a managed server fills in.
  if (row.dialect) {
    out.dialect = *row.dialect;
    return;
  }
  const auto given = out.options.find("dialect");
  if (out.managed) {
    const SqlDialect want = dialect_of(*out.managed);
    if (given != out.options.end() && given->second.word != to_string(want))
      section.child("dialect").error(fmt::format("a managed {} server speaks dialect {}, not {}",
                                                 to_string(*out.managed), to_string(want), given->second.word));
    out.dialect = want;
    out.options["dialect"].word = std::string(to_string(want));
  } else if (given == out.options.end()) {
    if (server.defined())
      section.child("backend").error(
          fmt::format("backend {} with an existing server needs 'dialect: sqlserver|postgres|mysql'", row.name));
  } else if (const auto d = dialect_named(given->second.word)) {
    out.dialect = *d;
  }
}

results::Json to_json(const DatabaseConfig& c) {
  const BackendRow& row = row_of(c.backend);
  const bool embedded = row.capabilities().embedded;
  results::Json j{{"backend", row.name}};
  if (!embedded) j["database"] = c.database;
  for (const OptionKey& key : row.keys) {
    const OptionValue v = option_value(row.keys, c.options, key.name);
    const std::string name(key.name);
    switch (key.type) {
      case OptionType::word: j[name] = v.word; break;
      case OptionType::size: j[name] = format_size(v.bytes); break;
      case OptionType::duration: j[name] = format_duration(v.duration); break;
    }
  }
  if (embedded) return j;
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
