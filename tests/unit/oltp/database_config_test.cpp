// decode_database / to_json: the database keys shared by the OLTP workloads (database.hpp).
#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <utility>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"

#include "drivelab/config/map_reader.hpp"
#include "drivelab/oltp/backends/odbc/odbc_backend.hpp"
#include "drivelab/oltp/backends/sqlite/sqlite_backend.hpp"
#include "drivelab/oltp/database/database.hpp"
#include "temp_dir.hpp"  // tests/support

namespace drivelab::oltp {
namespace {

struct Decoded {
  DatabaseConfig config;
  std::string errors;
};

Decoded decode(const std::string& yaml) {
  config::Diagnostics diags;
  const auto doc = config::Document::load_string(yaml, "t.yaml", diags);
  const config::Node section = doc.root(diags).child("db");
  Decoded d;
  config::MapReader r(section);
  decode_database(r, section, d.config);
  r.finish();
  d.errors = diags.to_string();
  return d;
}

TEST(DatabaseConfig, DefaultsToEmbeddedSqlite) {
  const auto d = decode("db: {}\n");
  EXPECT_EQ(d.errors, "");
  EXPECT_EQ(d.config.backend, BackendKind::sqlite);
  EXPECT_EQ(sqlite_options(d.config.options).journal_mode, "WAL");
  EXPECT_EQ(d.config.dialect, SqlDialect::sqlite);
  EXPECT_FALSE(d.config.managed.has_value());
}

TEST(DatabaseConfig, ManagedPostgresWithProfileKeys) {
  const auto d = decode(
      "db:\n  backend: postgres\n  database: tpcc_10\n  server:\n    managed: postgres\n"
      "    buffer: 2GiB\n    max_connections: 500\n    settings: {wal_buffers: 64MB, max_wal_size: 16GB}\n"
      "    keep: true\n");
  EXPECT_EQ(d.errors, "");
  EXPECT_EQ(d.config.backend, BackendKind::postgres);
  EXPECT_EQ(d.config.database, "tpcc_10");
  ASSERT_TRUE(d.config.managed.has_value());
  EXPECT_EQ(*d.config.managed, ServerKind::postgres);
  EXPECT_EQ(d.config.buffer_bytes, 2ull << 30);
  EXPECT_EQ(d.config.max_connections, 500);
  EXPECT_EQ(d.config.settings.at("max_wal_size"), "16GB");
  EXPECT_TRUE(d.config.keep_server);
}

TEST(DatabaseConfig, OdbcTakesItsDialectFromAManagedServer) {
  const auto d = decode("db: {backend: odbc, server: {managed: mariadb}}\n");
  EXPECT_EQ(d.errors, "");
  EXPECT_EQ(d.config.dialect, SqlDialect::mysql);
}

TEST(DatabaseConfig, EveryMistakeIsReportedAtItsKey) {
  const auto d = decode(
      "db:\n"
      "  backend: postgres\n"
      "  dialect: sqlserver\n"
      "  journal_mode: wal\n"
      "  server:\n"
      "    managed: mariadb\n"
      "    connection: host=db1\n");
  EXPECT_NE(d.errors.find("t.yaml:3:12: db.dialect: 'dialect' is an odbc key; this test's backend is postgres"),
            std::string::npos)
      << d.errors;
  EXPECT_NE(d.errors.find("t.yaml:4:17: db.journal_mode: 'journal_mode' is a sqlite key; this test's backend is "
                          "postgres (a server's own parameters go in server.settings)"),
            std::string::npos)
      << d.errors;
  EXPECT_EQ(d.errors.find("unknown key"), std::string::npos) << d.errors;  // said once, with its owner
  EXPECT_NE(d.errors.find("db.server.connection: 'connection' and 'managed' exclude each other"), std::string::npos)
      << d.errors;
  EXPECT_NE(d.errors.find("db.server.managed: backend postgres needs managed: postgres"), std::string::npos)
      << d.errors;
}

TEST(DatabaseConfig, EachBackendOwnsItsKeysAndAnotherBackendsKeyNamesItsOwner) {
  // The rows: one per BackendKind, in its order, with the word the protocol uses.
  for (const auto& [word, kind] : kBackendKindNames) EXPECT_EQ(row_of(kind).name, word);
  // sqlite's keys decode into its options (any case, as SQLite takes them) ...
  const auto d = decode("db: {journal_mode: truncate, synchronous: NORMAL, cache_size: 2MiB, busy_timeout: 20ms}\n");
  EXPECT_EQ(d.errors, "");
  const SqliteOptions o = sqlite_options(d.config.options);
  EXPECT_EQ(o.journal_mode, "truncate");
  EXPECT_EQ(o.synchronous, "NORMAL");
  EXPECT_EQ(o.cache_size_bytes, 2ull << 20);
  EXPECT_EQ(o.busy_timeout, std::chrono::milliseconds(20));
  // ... with their words and ranges checked at the key.
  const auto bad = decode("db: {journal_mode: wall, cache_size: 4KiB}\n");
  EXPECT_NE(bad.errors.find("t.yaml:1:20: db.journal_mode: 'wall' is not a journal mode (choices: WAL, DELETE, "
                            "TRUNCATE, PERSIST, MEMORY, OFF)"),
            std::string::npos)
      << bad.errors;
  EXPECT_NE(bad.errors.find("db.cache_size"), std::string::npos) << bad.errors;
  // The declared defaults are SqliteOptions' own.
  const SqliteOptions defaults = sqlite_options({});
  EXPECT_EQ(defaults.journal_mode, SqliteOptions{}.journal_mode);
  EXPECT_EQ(defaults.synchronous, SqliteOptions{}.synchronous);
  EXPECT_EQ(defaults.cache_size_bytes, SqliteOptions{}.cache_size_bytes);
  EXPECT_EQ(defaults.busy_timeout, SqliteOptions{}.busy_timeout);
  // odbc's key under sqlite names its owner; a key nobody owns is unknown, with a hint.
  const auto e = decode("db: {dialect: postgres, journal_mod: WAL}\n");
  EXPECT_NE(e.errors.find("t.yaml:1:15: db.dialect: 'dialect' is an odbc key; this test's backend is sqlite"),
            std::string::npos)
      << e.errors;
  EXPECT_NE(e.errors.find("unknown key 'journal_mod' (did you mean 'journal_mode'?)"), std::string::npos) << e.errors;
  // odbc's own key with an existing server: decoded, and the dialect recorded.
  const auto f = decode("db: {backend: odbc, dialect: mysql, server: {connection: 'DSN=m'}}\n");
  EXPECT_EQ(f.errors, "");
  EXPECT_EQ(f.config.dialect, SqlDialect::mysql);
  EXPECT_EQ(to_json(f.config)["dialect"], "mysql");
  const auto g = decode("db: {backend: odbc, dialect: oracle, server: {connection: 'DSN=m'}}\n");
  EXPECT_NE(g.errors.find("db.dialect: dialect must be one of: sqlserver, postgres, mysql; found 'oracle'"),
            std::string::npos)
      << g.errors;
  // A managed server's dialect fills in odbc's key, and a contrary one is refused.
  const auto h = decode("db: {backend: odbc, dialect: sqlserver, server: {managed: postgres}}\n");
  EXPECT_NE(h.errors.find("db.dialect: a managed postgres server speaks dialect postgres, not sqlserver"),
            std::string::npos)
      << h.errors;
  EXPECT_EQ(to_json(decode("db: {backend: odbc, server: {managed: postgres}}\n").config)["dialect"], "postgres");
  // The native backends speak their own dialect.
  EXPECT_EQ(decode("db: {backend: mysql, server: {managed: mariadb}}\n").config.dialect, SqlDialect::mysql);
}

TEST(DatabaseConfig, AServerBackendNeedsAServer) {
  const auto d = decode("db: {backend: mysql}\n");
  EXPECT_NE(d.errors.find("db.backend: backend mysql needs a 'server:' section"), std::string::npos) << d.errors;
  const auto e = decode("db: {backend: odbc, server: {connection: 'DSN=sql1'}}\n");
  EXPECT_NE(e.errors.find("needs 'dialect: sqlserver|postgres|mysql'"), std::string::npos) << e.errors;
  const auto f = decode("db: {server: {managed: postgres}}\n");
  EXPECT_NE(f.errors.find("db.server: the sqlite backend is embedded"), std::string::npos) << f.errors;
  const auto g = decode("db: {backend: postgres, server: {buffer: 1GiB}}\n");
  EXPECT_NE(g.errors.find("db.server: needs either 'managed: postgres|mariadb'"), std::string::npos) << g.errors;
}

TEST(DatabaseConfig, ManagedOnlyAndConnectionOnlyKeysAreNotMixed) {
  const auto d = decode("db: {backend: postgres, server: {connection: 'host=db1', buffer: 1GiB, keep: true}}\n");
  EXPECT_NE(d.errors.find("db.server.buffer: 'buffer' applies to managed servers only"), std::string::npos) << d.errors;
  EXPECT_NE(d.errors.find("db.server.keep: 'keep' applies to managed servers only"), std::string::npos) << d.errors;
  const auto e = decode("db: {backend: postgres, server: {managed: postgres, password_env: X}}\n");
  EXPECT_NE(e.errors.find("db.server.password_env: 'password_env' applies to 'connection' servers only"),
            std::string::npos)
      << e.errors;
}

TEST(DatabaseConfig, BadNamesAreRejected) {
  const auto d =
      decode("db: {backend: postgres, database: 'x; drop', server: {connection: 'host=a', password_env: '1X'}}\n");
  EXPECT_NE(d.errors.find("db.database: 'x; drop' is not a database name"), std::string::npos) << d.errors;
  EXPECT_NE(d.errors.find("db.server.password_env: '1X' is not an environment variable name"), std::string::npos)
      << d.errors;
}

TEST(DatabaseConfig, TheRecordNeverHoldsAPassword) {
  ::setenv("PW", "s3cr;et", 1);
  auto d = decode(
      "db: {backend: odbc, dialect: sqlserver, server: {connection: "
      "'Driver={ODBC Driver 18 for SQL Server};Server=tcp:db1,1433;UID=sa;PWD={s3cr;et}', password_env: PW}}\n");
  ASSERT_EQ(d.errors, "");
  const std::string json = to_json(d.config).dump();
  EXPECT_EQ(json.find("s3cr"), std::string::npos) << json;
  EXPECT_NE(json.find("PWD=***"), std::string::npos) << json;
  EXPECT_NE(json.find("\"password_env\":\"PW\""), std::string::npos) << json;

  d = decode("db: {backend: postgres, server: {connection: 'host=db1 password=hunter2 user=bench'}}\n");
  const std::string pg = to_json(d.config).dump();
  EXPECT_EQ(pg.find("hunter2"), std::string::npos) << pg;
  EXPECT_NE(pg.find("user=bench"), std::string::npos) << pg;
}

// A password that cannot be read is a config error at its key, found by decode (so by
// `validate` and before a run does any work), and the message never holds a password.
TEST(DatabaseConfig, UnreadablePasswordIsAnErrorAtItsKey) {
  ::unsetenv("DRIVELAB_UT_NO_SUCH_PW");
  auto d = decode(
      "db:\n  backend: mysql\n  server:\n    connection: tcp://db1:3306\n"
      "    password_env: DRIVELAB_UT_NO_SUCH_PW\n");
  EXPECT_EQ(d.errors,
            "t.yaml:5:19: db.server.password_env: the environment variable DRIVELAB_UT_NO_SUCH_PW is not set (it "
            "must hold the password)")
      << d.errors;
  ::setenv("DRIVELAB_UT_EMPTY_PW", "", 1);
  d = decode("db: {backend: postgres, server: {connection: 'host=db1', password_env: DRIVELAB_UT_EMPTY_PW}}\n");
  EXPECT_NE(d.errors.find("db.server.password_env: the environment variable DRIVELAB_UT_EMPTY_PW is empty"),
            std::string::npos)
      << d.errors;
  ::setenv("DRIVELAB_UT_PW", "hunter2-env", 1);
  d = decode("db: {backend: postgres, server: {connection: 'host=db1', password_env: DRIVELAB_UT_PW}}\n");
  EXPECT_EQ(d.errors, "");
  EXPECT_EQ(look_up_password(d.config).password, "hunter2-env");

  test_support::TempDir dir("drivelab-pw-test", test_support::TempBase::memory);
  const auto missing = (dir.path() / "missing").string();
  d = decode("db:\n  backend: postgres\n  server:\n    connection: host=db1\n    password_file: " + missing + "\n");
  EXPECT_EQ(d.errors, "t.yaml:5:20: db.server.password_file: " + missing + " does not exist") << d.errors;

  d = decode("db: {backend: postgres, server: {connection: 'host=db1', password_file: " + dir.path().string() + "}}\n");
  EXPECT_NE(d.errors.find("db.server.password_file: " + dir.path().string() + " is a directory"), std::string::npos)
      << d.errors;

  const auto empty = dir.path() / "empty";
  std::ofstream(empty) << "\nhunter2-second-line\n";
  d = decode("db: {backend: postgres, server: {connection: 'host=db1', password_file: " + empty.string() + "}}\n");
  EXPECT_NE(d.errors.find("db.server.password_file: the first line of " + empty.string() + " is empty"),
            std::string::npos)
      << d.errors;
  EXPECT_EQ(d.errors.find("hunter2"), std::string::npos) << d.errors;

  const auto good = dir.path() / "good";
  std::ofstream(good) << "hunter2-file\r\nignored\n";
  d = decode("db: {backend: postgres, server: {connection: 'host=db1', password_file: " + good.string() + "}}\n");
  EXPECT_EQ(d.errors, "");
  EXPECT_EQ(look_up_password(d.config).password, "hunter2-file");
}

/// What a workload checks while decoding (capabilities_of) is what the opened backend says.
TEST(DatabaseCapabilities, KnownAtDecodeAreTheBackendsOwn) {
  const auto same = [](const Capabilities& a, const Capabilities& b) {
    return a.serialized_writers == b.serialized_writers && a.max_load_threads == b.max_load_threads &&
           a.embedded == b.embedded && a.server_procedures == b.server_procedures;
  };
  test_support::TempDir dir("caps");
  auto sqlite = make_sqlite_backend({.path = dir.path() / "caps.db"});
  EXPECT_TRUE(same(capabilities_of(BackendKind::sqlite), sqlite->capabilities()));
  EXPECT_TRUE(capabilities_of(BackendKind::sqlite).embedded);
  EXPECT_TRUE(capabilities_of(BackendKind::sqlite).serialized_writers);
  OdbcOptions o;
  o.connection_string = "DSN=drivelab-never-connected";
  o.dialect = SqlDialect::postgres;
  EXPECT_TRUE(same(capabilities_of(BackendKind::odbc), make_odbc_backend(o)->capabilities()));
  // TPC-C's procedures are called on the native servers only, whatever the ODBC dialect writes.
  EXPECT_TRUE(capabilities_of(BackendKind::postgres).server_procedures);
  EXPECT_TRUE(capabilities_of(BackendKind::mysql).server_procedures);
  EXPECT_FALSE(capabilities_of(BackendKind::odbc).server_procedures);
  EXPECT_FALSE(capabilities_of(BackendKind::sqlite).server_procedures);
}

/// A managed server behind the ODBC backend: a driver this machine lacks is said, with the Debian
/// package that provides it, before the server is created. unixODBC reads odbcinst.ini from
/// $ODBCSYSINI: an empty directory there is a machine without ODBC drivers. unixODBC keeps the
/// first odbcinst.ini path it finds for the life of the process (odbcinst_system_file_path), so
/// the machine without drivers is a child process, which writes back what open_database did.
TEST(OpenDatabase, AMissingOdbcDriverIsSaidWithItsPackageBeforeTheManagedServerStarts) {
  test_support::TempDir no_drivers("odbcsysini");
  test_support::TempDir target("odbc-target");
  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(out[0]);
    ::setenv("ODBCSYSINI", no_drivers.path().c_str(), 1);
    std::string report;
    for (const ServerKind kind : {ServerKind::postgres, ServerKind::mariadb}) {
      DatabaseConfig c;
      c.backend = BackendKind::odbc;
      c.managed = kind;
      c.dialect = kind == ServerKind::postgres ? SqlDialect::postgres : SqlDialect::mysql;
      OpenRequest req;
      req.target_dir = target.path();
      req.test_name = "t";
      req.workload = "tpcc";
      std::vector<std::string> said;
      req.message = [&](const std::string& m) { said.push_back(m); };
      try {
        open_database(c, req);
        report += "opened a database\n";
      } catch (const EnvironmentError& e) {
        report += std::string(e.what()) + "\n";
      } catch (const std::exception& e) {
        report += std::string("another error: ") + e.what() + "\n";
      }
      for (const std::string& m : said) report += "said: " + m + "\n";  // "starting a managed ... server"
      if (!std::filesystem::is_empty(target.path())) report += "the target is not empty\n";
    }
    const bool written = ::write(out[1], report.data(), report.size()) == static_cast<ssize_t>(report.size());
    ::_exit(written ? 0 : 1);
  }
  ::close(out[1]);
  std::string report;
  char buf[4096];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) report.append(buf, static_cast<std::size_t>(n));
  ::close(out[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << report;
  std::string expected;
  for (const auto& [driver, package] :
       {std::pair{"PostgreSQL Unicode", "odbc-postgresql"}, std::pair{"MariaDB Unicode", "odbc-mariadb"}})
    expected += fmt::format(
        "odbc: the ODBC driver '{}' is not installed (not in the driver manager's odbcinst.ini; "
        "`odbcinst -q -d` lists the installed drivers: none): Debian: apt-get install {}\n",
        driver, package);
  EXPECT_EQ(report, expected);  // no "said:", nothing created in the target
  // With the machine's drivers (the test image installs both): no problem.
  EXPECT_EQ(odbc_driver_problem(odbc_driver_for(ServerKind::postgres)), "");
  EXPECT_EQ(odbc_driver_problem(odbc_driver_for(ServerKind::mariadb)), "");
}

}  // namespace
}  // namespace drivelab::oltp
