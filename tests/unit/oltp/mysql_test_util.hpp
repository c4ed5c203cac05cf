#pragma once
// The MySQL/MariaDB backend against the real MariaDB of the db_services fixture: a database of
// each test's own (dropped at the end) and a few query helpers.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "drivelab/oltp/backends/mysql/mysql_backend.hpp"
#include "services.hpp"

namespace drivelab::oltp::test {

/// Options for the test server's superuser and a database named after the current test.
inline MysqlOptions mysql_options(const std::string& database) {
  MysqlOptions o;
  if (auto s = drivelab::testing::services()) {
    o.endpoint.socket_path = s->mysql_socket;
    o.endpoint.user = s->mysql_user;
  }
  o.database = database;
  return o;
}

/// A backend on a fresh database of this test's own; the database is dropped in TearDown.
struct MysqlFixture : ::testing::Test {
  std::string database = drivelab::testing::unique_database_name();
  std::unique_ptr<Backend> backend;

  void SetUp() override {
    ASSERT_TRUE(drivelab::testing::services().has_value());
    backend = make_mysql_backend(mysql_options(database));
    drop_database();  // a leftover of an interrupted earlier run
  }
  void TearDown() override {
    if (backend) drop_database();
  }
  void drop_database() {
    auto system = make_mysql_backend(mysql_options("mysql"));
    auto admin = system->connect();
    admin->execute_immediate("DROP DATABASE IF EXISTS `" + database + "`");
  }
};

/// First column of the first row as int64 / text (throws on failure).
inline std::int64_t mysql_int(Connection& c, const std::string& sql) {
  auto q = c.prepare(sql);
  DbStatus s = q->execute();
  if (!s.ok() || !q->next(s)) throw std::runtime_error("query failed: " + sql + " " + s.to_string());
  return q->column_int64(0);
}
inline std::string mysql_text(Connection& c, const std::string& sql) {
  auto q = c.prepare(sql);
  DbStatus s = q->execute();
  if (!s.ok() || !q->next(s)) throw std::runtime_error("query failed: " + sql + " " + s.to_string());
  return std::string(q->column_text(0));
}

}  // namespace drivelab::oltp::test
