#pragma once
// A PostgreSQL database of the current test's own on the test server (tests/support/services.hpp):
// created with the superuser connection before the test, dropped (WITH (FORCE)) after it.
#include <memory>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "drivelab/oltp/backends/postgres/postgres_backend.hpp"
#include "services.hpp"

namespace drivelab::oltp::test {

inline PostgresOptions pg_options(const testing::Services& s, const std::string& database) {
  PostgresOptions o;
  o.endpoint.socket_path = s.pg_socket_dir;
  o.endpoint.port = s.pg_port;
  o.endpoint.user = s.pg_user;
  o.database = database;
  return o;
}

/// Runs a single-value query and returns it as text (throws on failure).
inline std::string pg_value(Connection& c, const std::string& sql) {
  auto q = c.prepare(sql);
  DbStatus s = q->execute();
  if (!s.ok() || !q->next(s)) throw std::runtime_error("query failed: " + sql + " " + s.to_string());
  return std::string(q->column_text(0));
}

/// Fixture: `backend` on a fresh database named after the test; `admin` on the server's
/// existing database (for CREATE/DROP DATABASE and pg_terminate_backend).
class PgTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = testing::services();
    ASSERT_TRUE(s.has_value());
    svc = *s;
    name = testing::unique_database_name();
    admin_backend = make_postgres_backend(pg_options(svc, svc.pg_database));
    admin = admin_backend->connect();
    admin->execute_immediate("DROP DATABASE IF EXISTS \"" + name + "\" WITH (FORCE)");
    admin->execute_immediate("CREATE DATABASE \"" + name + "\"");
    backend = make_postgres_backend(pg_options(svc, name));
  }
  void TearDown() override {
    backend.reset();
    if (admin) admin->execute_immediate("DROP DATABASE IF EXISTS \"" + name + "\" WITH (FORCE)");
  }

  testing::Services svc;
  std::string name;
  std::unique_ptr<Backend> admin_backend;
  std::unique_ptr<Connection> admin;
  std::unique_ptr<Backend> backend;
};

}  // namespace drivelab::oltp::test
