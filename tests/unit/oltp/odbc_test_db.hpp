#pragma once
// Databases of their own on the test servers (tests/support/services.hpp), reached through
// Debian's ODBC drivers: "PostgreSQL Unicode" (psqlODBC) and "MariaDB Unicode" (MariaDB
// Connector/ODBC), over the servers' Unix sockets.
#include <memory>
#include <stdexcept>
#include <string>

#include "drivelab/oltp/backends/odbc/odbc_backend.hpp"
#include "services.hpp"

namespace drivelab::oltp::test {

/// One of the two test servers, through its ODBC driver.
struct OdbcServer {
  const char* name;  ///< for test names: "postgres", "mariadb"
  ServerKind kind;
  SqlDialect dialect;
};

inline Endpoint endpoint_of(const testing::Services& s, ServerKind kind) {
  Endpoint e;
  if (kind == ServerKind::postgres) {
    e.socket_path = s.pg_socket_dir;
    e.port = s.pg_port;
    e.user = s.pg_user;
  } else {
    e.socket_path = s.mysql_socket;
    e.user = s.mysql_user;
  }
  return e;
}

/// A fresh database `name` (dropped first if a crashed run left it) created by the superuser
/// through ODBC, dropped again at the end.
class OdbcTestDatabase {
 public:
  OdbcTestDatabase(const testing::Services& s, const OdbcServer& server, std::string name)
      : services_(s), server_(server), name_(std::move(name)) {
    admin_ = make_odbc_backend(options_for(server_.kind == ServerKind::postgres ? s.pg_database : s.mysql_database));
    auto c = admin_->connect();
    drop(*c);
    // utf8mb4: MariaDB's default character set (latin1) cannot hold the awkward-text test.
    c->execute_immediate(server_.kind == ServerKind::postgres ? "CREATE DATABASE " + name_
                                                              : "CREATE DATABASE " + name_ + " CHARACTER SET utf8mb4");
  }
  ~OdbcTestDatabase() {
    try {
      auto c = admin_->connect();
      drop(*c);
    } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): a destructor must not throw; the test has failed
    }
  }
  OdbcTestDatabase(const OdbcTestDatabase&) = delete;
  OdbcTestDatabase& operator=(const OdbcTestDatabase&) = delete;

  const std::string& name() const noexcept { return name_; }
  OdbcOptions options() const { return options_for(name_); }
  std::unique_ptr<Backend> backend() const { return make_odbc_backend(options()); }
  /// A session of the superuser in the server's existing database (kills, counters).
  std::unique_ptr<Connection> admin() const { return admin_->connect(); }

 private:
  OdbcOptions options_for(const std::string& database) const {
    OdbcOptions o;
    o.connection_string = odbc_connection_string(server_.kind, endpoint_of(services_, server_.kind), database);
    o.dialect = server_.dialect;
    return o;
  }
  void drop(Connection& c) const {
    c.execute_immediate(server_.kind == ServerKind::postgres ? "DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)"
                                                             : "DROP DATABASE IF EXISTS " + name_);
  }

  testing::Services services_;
  OdbcServer server_;
  std::string name_;
  std::unique_ptr<Backend> admin_;
};

}  // namespace drivelab::oltp::test
