// open_database and Database: kept apart from database.cpp (decoding) so that a program that only
// decodes protocols does not link every backend.
#include <unistd.h>

#include <cstdlib>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/core/units.hpp"
#include "drivelab/oltp/database/database.hpp"
#include "drivelab/oltp/backends/mysql/mysql_backend.hpp"
#include "drivelab/oltp/backends/odbc/odbc_backend.hpp"
#include "drivelab/oltp/backends/postgres/postgres_backend.hpp"
#include "drivelab/oltp/backends/sqlite/sqlite_backend.hpp"

namespace drivelab::oltp {
namespace {

/// Physical memory of this machine in bytes.
std::uint64_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
}

/// The password, read again now (decode checked it); EnvironmentError if it went missing since.
std::string read_password(const DatabaseConfig& c) {
  PasswordLookup pw = look_up_password(c);
  if (!pw.problem.empty()) throw EnvironmentError(fmt::format("server.{}: {}", pw.key, pw.problem));
  return std::move(pw.password);
}

/// "tcp://host:port" or "unix:///path/to.sock" (or a bare socket path) -> Endpoint.
Endpoint parse_mysql_connection(const std::string& text) {
  Endpoint e;
  if (text.starts_with("unix://")) {
    e.socket_path = text.substr(7);
  } else if (text.starts_with("/")) {
    e.socket_path = text;
  } else {
    std::string rest = text.starts_with("tcp://") ? text.substr(6) : text;
    const auto colon = rest.rfind(':');
    if (colon != std::string::npos) {
      e.host = rest.substr(0, colon);
      char* end = nullptr;
      const long port = std::strtol(rest.c_str() + colon + 1, &end, 10);
      if (end == nullptr || *end != '\0' || port <= 0 || port > 65535)
        throw ConfigError(
            fmt::format("server.connection '{}': expected tcp://host:port or unix:///path/to/mysqld.sock", text));
      e.port = static_cast<int>(port);
    } else {
      e.host = rest;
      e.port = 3306;
    }
  }
  return e;
}

}  // namespace

Database::Database(std::unique_ptr<ManagedServer> server, std::unique_ptr<Backend> backend)
    : server_(std::move(server)), backend_(std::move(backend)) {}

Database::~Database() {
  backend_.reset();  // close the backend's shared state before the server goes away
  if (server_) server_->stop();
}

results::Json Database::describe() const {
  results::Json j{{"backend", backend_->describe()}};
  if (server_) j["server"] = server_->describe();
  return j;
}

std::unique_ptr<Database> open_database(const DatabaseConfig& c, const OpenRequest& req) {
  const auto say = [&](const std::string& m) {
    if (req.message) req.message(m);
  };
  const auto warn = [&](const std::string& m) {
    if (req.warning) req.warning(m);
  };

  if (c.backend == BackendKind::sqlite) {
    SqliteOptions opt = sqlite_options(c.options);
    opt.path = req.target_dir / fmt::format("drivelab-{}-{}.db", req.test_name, req.workload);
    return std::make_unique<Database>(nullptr, make_sqlite_backend(std::move(opt)));
  }

  std::unique_ptr<ManagedServer> server;
  Endpoint endpoint;
  if (c.managed) {
    // What can be known before a server exists is checked before one is created: an ODBC
    // driver missing from this machine would otherwise be found after the server's start-up.
    if (c.backend == BackendKind::odbc)
      if (std::string problem = odbc_driver_problem(odbc_driver_for(*c.managed)); !problem.empty())
        throw EnvironmentError(std::move(problem));
    ManagedServerOptions so;
    so.kind = *c.managed;
    so.data_dir = req.target_dir / fmt::format("drivelab-{}-{}", req.test_name, to_string(*c.managed));
    so.buffer_bytes = c.buffer_bytes;
    const std::uint64_t ram = physical_memory_bytes();
    if (ram > 0 && so.buffer_bytes > ram / 2) {
      warn(
          fmt::format("server buffer {} capped to {} (half of this machine's {} of RAM); results are "
                      "not comparable with a run that had the full buffer",
                      format_size(c.buffer_bytes), format_size(ram / 2), format_size(ram)));
      so.buffer_bytes = ram / 2;
    }
    so.max_connections = c.max_connections > 0 ? c.max_connections : req.connections + 20;
    if (so.max_connections < req.connections)
      throw ConfigError(fmt::format("server.max_connections = {} is below the {} connections this test opens",
                                    so.max_connections, req.connections));
    so.settings = c.settings;
    so.keep = c.keep_server;
    server =
        c.managed == ServerKind::postgres ? make_managed_postgres(std::move(so)) : make_managed_mariadb(std::move(so));
    say(fmt::format("starting a managed {} server in {}", to_string(*c.managed),
                    (req.target_dir / fmt::format("drivelab-{}-{}", req.test_name, to_string(*c.managed))).string()));
    server->start();
    server->create_database(c.database);
    endpoint = server->endpoint();
  } else {
    endpoint.user = c.user;
    endpoint.password = read_password(c);
  }

  std::unique_ptr<Backend> backend;
  switch (c.backend) {
    case BackendKind::postgres: {
      PostgresOptions o;
      o.endpoint = endpoint;
      o.database = c.database;
      o.conninfo_extra = c.managed ? std::string() : c.connection;
      backend = make_postgres_backend(std::move(o));
      break;
    }
    case BackendKind::mysql: {
      MysqlOptions o;
      if (c.managed) {
        o.endpoint = endpoint;
      } else {
        o.endpoint = parse_mysql_connection(c.connection);
        o.endpoint.user = endpoint.user.empty() ? "root" : endpoint.user;
        o.endpoint.password = endpoint.password;
      }
      o.database = c.database;
      backend = make_mysql_backend(std::move(o));
      break;
    }
    case BackendKind::odbc: {
      OdbcOptions o;
      o.connection_string = c.managed ? odbc_connection_string(*c.managed, endpoint, c.database) : c.connection;
      o.user = c.managed ? std::string() : endpoint.user;
      o.password = endpoint.password;
      o.dialect = c.dialect;
      backend = make_odbc_backend(std::move(o));
      break;
    }
    case BackendKind::sqlite: break;  // handled above
  }
  // Pre-flight: one session now, so that a wrong password, an unreachable server or a missing
  // database or ODBC driver is reported before anything is built.
  backend->connect();
  return std::make_unique<Database>(std::move(server), std::move(backend));
}

}  // namespace drivelab::oltp
