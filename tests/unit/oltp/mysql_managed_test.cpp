// The managed MariaDB server: created in a fresh directory under /tmp (reachable by the mysql
// user when the tests run as root), started on its private socket, used through the backend,
// stopped and removed; kept when asked; a stale one left by a "crashed" run cleaned up.
#include <gtest/gtest.h>

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/oltp/backends/mysql/mysql_backend.hpp"
#include "drivelab/oltp/backend/server.hpp"
#include "mysql_test_util.hpp"

namespace drivelab::oltp {
namespace {

namespace fs = std::filesystem;

/// A temporary directory in /tmp that the server's user can traverse; removed at the end.
class ServerDir {
 public:
  ServerDir() {
    std::string tmpl = "/tmp/drivelab-mariadb-test-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
    ::chmod(path_.c_str(), 0755);  // mkdtemp makes it 0700: the mysql user could not enter
  }
  ~ServerDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ServerDir(const ServerDir&) = delete;
  ServerDir& operator=(const ServerDir&) = delete;
  const fs::path& path() const noexcept { return path_; }

 private:
  fs::path path_;
};

ManagedServerOptions options_in(const fs::path& data_dir) {
  ManagedServerOptions o;
  o.kind = ServerKind::mariadb;
  o.data_dir = data_dir;
  o.buffer_bytes = 64ull << 20;
  o.max_connections = 50;
  o.settings = {{"innodb-lock-wait-timeout", "7"}};
  return o;
}

std::int64_t read_pid(const fs::path& data_dir) {
  std::ifstream in(data_dir / "mysqld.pid");
  long pid = 0;
  in >> pid;
  return pid;
}

TEST(ManagedMariadb, APathMariadbInstallDbCannotChownIsRefusedBeforeAnythingIsCreated) {
  // As root, mariadb-install-db runs `chown $user $dir` unquoted: a blank splits the path.
  if (::geteuid() != 0) GTEST_SKIP() << "mariadb-install-db chowns the data directory only when run as root";
  ServerDir dir;
  const fs::path target = dir.path() / "my target";
  const fs::path data_dir = target / "drivelab-t-mariadb";
  try {
    auto server = make_managed_mariadb(options_in(data_dir));
    server->start();
    FAIL() << "a managed MariaDB was created in " << data_dir;
  } catch (const EnvironmentError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(fmt::format("managed mariadb: cannot create a server in {}: the path holds a space (a blank at "
                                 "character {})",
                                 (data_dir / "data").string(), dir.path().string().size() + 4)),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("passes the data directory to `chown` unquoted, so the shell splits it"), std::string::npos) << m;
  }
  EXPECT_FALSE(fs::exists(target));  // nothing created, nothing started
}

TEST(ManagedMariadb, StartsOnItsSocketServesTheBackendStopsAndIsRemoved) {
  ServerDir dir;
  const fs::path data_dir = dir.path() / "drivelab-t-mariadb";
  auto server = make_managed_mariadb(options_in(data_dir));
  EXPECT_FALSE(server->running());
  server->start();
  ASSERT_TRUE(server->running());
  const Endpoint e = server->endpoint();
  EXPECT_EQ(e.socket_path, (data_dir / "mysqld.sock").string());
  EXPECT_TRUE(e.password.empty());
  EXPECT_TRUE(fs::exists(data_dir / "data" / "ibdata1"));
  EXPECT_TRUE(fs::exists(data_dir / "my.cnf"));

  server->create_database("dl_managed");
  MysqlOptions mo;
  mo.endpoint = e;
  mo.database = "dl_managed";
  auto backend = make_mysql_backend(mo);
  // What TPC-C asks instead of testing names: MariaDB's HammerDB script and growth constants.
  EXPECT_EQ(backend->hammerdb_script(), HammerDbScript::mariadb);
  EXPECT_FALSE(backend->growth_constants().has_value());  // the server's, not the backend's
  EXPECT_EQ(server->growth_constants().table_bytes_per_new_order, 1230);
  EXPECT_EQ(server->wal_settings().max_wal_size_bytes, WalSettings{}.max_wal_size_bytes);
  {
    auto c = backend->connect();
    c->execute_immediate("CREATE TABLE t (id INTEGER PRIMARY KEY) ENGINE=InnoDB; INSERT INTO t VALUES (1)");
    EXPECT_EQ(test::mysql_int(*c, "SELECT COUNT(*) FROM t"), 1);
    // The profile is applied: buffer, durability, the protocol's setting, and no TCP port.
    EXPECT_EQ(test::mysql_int(*c, "SELECT @@innodb_buffer_pool_size"), 64ll << 20);
    EXPECT_EQ(test::mysql_int(*c, "SELECT @@innodb_flush_log_at_trx_commit"), 1);
    EXPECT_EQ(test::mysql_text(*c, "SELECT @@innodb_flush_method"), "O_DIRECT");
    // A boolean (1) on MariaDB 10.11, an enum OFF/ON/fast ('ON') since 11.x: on either way.
    const std::string doublewrite = test::mysql_text(*c, "SELECT UPPER(CAST(@@innodb_doublewrite AS CHAR))");
    EXPECT_TRUE(doublewrite == "1" || doublewrite == "ON") << doublewrite;
    EXPECT_EQ(test::mysql_int(*c, "SELECT @@innodb_log_file_size"), 96ll << 20);
    EXPECT_EQ(test::mysql_int(*c, "SELECT @@max_prepared_stmt_count"), 1048576);
    EXPECT_EQ(test::mysql_int(*c, "SELECT @@max_connections"), 50);
    EXPECT_EQ(test::mysql_int(*c, "SELECT @@innodb_lock_wait_timeout"), 7);
    EXPECT_EQ(test::mysql_int(*c, "SELECT @@skip_networking"), 1);
    EXPECT_EQ(test::mysql_text(*c, "SELECT @@datadir"), (data_dir / "data").string() + "/");
  }
  const results::Json d = server->describe();
  EXPECT_EQ(d["kind"], "mariadb");
  EXPECT_NE(d["version"].get<std::string>().find("MariaDB"), std::string::npos) << d.dump();
  EXPECT_EQ(d["settings"]["innodb_lock_wait_timeout"], "7");
  EXPECT_EQ(d["settings"]["innodb_flush_method"], "O_DIRECT");

  backend.reset();
  server->stop();
  EXPECT_FALSE(server->running());
  EXPECT_FALSE(fs::exists(data_dir));
  server->stop();  // twice is harmless
}

TEST(ManagedMariadb, TheNextStartReplacesAStaleServerOfACrashedRun) {
  ServerDir dir;
  const fs::path data_dir = dir.path() / "drivelab-t-mariadb";
  ManagedServerOptions o = options_in(data_dir);
  o.keep = true;
  auto crashed = make_managed_mariadb(o);
  crashed->start();
  crashed->create_database("dl_old");
  const auto old_pid = read_pid(data_dir);
  ASSERT_GT(old_pid, 1);

  // A second start on the same directory finds a live server of a "crashed" run: it stops it,
  // removes the directory and installs a fresh cluster.
  o.keep = false;
  auto fresh = make_managed_mariadb(o);
  fresh->start();
  EXPECT_FALSE(crashed->running());  // the stale server was stopped
  EXPECT_NE(read_pid(data_dir), old_pid);
  {
    MysqlOptions mo;
    mo.endpoint = fresh->endpoint();
    mo.database = "mysql";
    auto b = make_mysql_backend(mo);
    auto c = b->connect();
    EXPECT_EQ(test::mysql_int(*c, "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = 'dl_old'"), 0);
  }
  crashed->stop();  // keep: must not touch the directory now owned by `fresh`
  EXPECT_TRUE(fresh->running());
  fresh->stop();
  EXPECT_FALSE(fs::exists(data_dir));
}

TEST(ManagedMariadb, KeepLeavesTheFilesAfterACleanStop) {
  ServerDir dir;
  const fs::path data_dir = dir.path() / "drivelab-t-mariadb";
  ManagedServerOptions o = options_in(data_dir);
  o.keep = true;
  auto kept = make_managed_mariadb(o);
  kept->start();
  kept->stop();
  EXPECT_FALSE(kept->running());
  EXPECT_TRUE(fs::exists(data_dir / "data" / "ibdata1"));
  EXPECT_TRUE(fs::exists(data_dir / "error.log"));
}

TEST(ManagedMariadb, RefusesForeignDirectoriesReservedSettingsAndUnreachablePlaces) {
  ServerDir dir;
  const fs::path foreign = dir.path() / "someones-data";
  fs::create_directories(foreign);
  std::ofstream(foreign / "important.txt") << "keep me";
  EXPECT_THROW(make_managed_mariadb(options_in(foreign))->start(), EnvironmentError);
  EXPECT_TRUE(fs::exists(foreign / "important.txt"));

  ManagedServerOptions bad = options_in(dir.path() / "x");
  bad.settings = {{"socket", "/tmp/elsewhere.sock"}};
  EXPECT_THROW(make_managed_mariadb(bad), ConfigError);
  bad.settings = {{"port", "3306"}};
  EXPECT_THROW(make_managed_mariadb(bad), ConfigError);

  if (::geteuid() == 0) {
    // A directory the mysql user cannot enter: a clear error naming it, before any install.
    const fs::path closed = dir.path() / "closed";
    fs::create_directories(closed);
    ::chmod(closed.c_str(), 0700);
    try {
      make_managed_mariadb(options_in(closed / "drivelab-t-mariadb"))->start();
      ADD_FAILURE() << "start must fail when the mysql user cannot reach the directory";
    } catch (const EnvironmentError& e) {
      EXPECT_NE(std::string(e.what()).find(closed.string()), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("mysql"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace drivelab::oltp
