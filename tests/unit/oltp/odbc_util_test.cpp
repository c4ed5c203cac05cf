// ODBC backend helpers without a server: connection strings, redaction, classification, text.
#include <gtest/gtest.h>

#include "drivelab/oltp/backends/odbc/odbc_backend.hpp"
#include "odbc_util.hpp"

namespace drivelab::oltp::odbc {
namespace {

TEST(OdbcConnectionString, ParsesBracedValuesAndFindsKeysCaseInsensitively) {
  const auto a = parse_connection_string(
      "Driver={ODBC Driver 18 for SQL Server};Server=tcp:db,1433; uid = bench ;"
      "PWD={p;w}}d};Encrypt=yes");
  ASSERT_EQ(a.size(), 5u);
  EXPECT_EQ(a[0].value, "ODBC Driver 18 for SQL Server");
  EXPECT_EQ(find_attr(a, {"server"}).value_or(""), "tcp:db,1433");
  EXPECT_EQ(find_attr(a, kUserKeys).value_or(""), "bench");
  EXPECT_EQ(find_attr(a, kPasswordKeys).value_or(""), "p;w}d");
  EXPECT_FALSE(find_attr(a, {"Database"}).has_value());
}

TEST(OdbcConnectionString, RedactsEveryPasswordForm) {
  EXPECT_EQ(redact_connection_string("DSN=x;UID=u;PWD=secret"), "DSN=x;UID=u;PWD=***");
  EXPECT_EQ(redact_connection_string("DSN=x;pwd={se;cr}}et};Database=d"), "DSN=x;pwd=***;Database=d");
  EXPECT_EQ(redact_connection_string("Driver={MariaDB Unicode};Password=hunter2"),
            "Driver={MariaDB Unicode};Password=***");
  EXPECT_EQ(redact_connection_string("DSN=nopassword"), "DSN=nopassword");
}

TEST(OdbcConnectionString, AppendsCredentialsOnlyWhenAbsent) {
  EXPECT_EQ(with_credentials("DSN=x", "bench", "p;w"), "DSN=x;UID=bench;PWD={p;w}");
  EXPECT_EQ(with_credentials("DSN=x;", "bench", ""), "DSN=x;UID=bench");
  // psqlODBC's Username and MariaDB's User count as a user already.
  EXPECT_EQ(with_credentials("Driver={PostgreSQL Unicode};Username=pg", "other", "pw"),
            "Driver={PostgreSQL Unicode};Username=pg;PWD=pw");
  EXPECT_EQ(with_credentials("DSN=x;User=me;Password=in", "other", "pw"), "DSN=x;User=me;Password=in");
  EXPECT_EQ(scrub("login failed: PWD=pw123 rejected", "pw123"), "login failed: PWD=*** rejected");
  EXPECT_EQ(scrub("nothing", ""), "nothing");
}

TEST(OdbcConnectionString, DebianDriversStringsForManagedServers) {
  Endpoint pg;
  pg.socket_path = "/tmp/run dir/pg";
  pg.port = 5499;
  pg.user = "postgres";
  EXPECT_EQ(odbc_connection_string(ServerKind::postgres, pg, "tpcc"),
            "Driver={PostgreSQL Unicode};Servername=/tmp/run dir/pg;Port=5499;Database=tpcc;Username=postgres;"
            "Protocol=7.4-1");
  Endpoint my;
  my.socket_path = "/tmp/m/mysqld.sock";
  my.user = "root";
  EXPECT_EQ(odbc_connection_string(ServerKind::mariadb, my, "tpcc"),
            "Driver={MariaDB Unicode};Socket=/tmp/m/mysqld.sock;Database=tpcc;User=root");
  Endpoint tcp;
  tcp.host = "db1";
  tcp.port = 3307;
  EXPECT_EQ(odbc_connection_string(ServerKind::mariadb, tcp, "x"),
            "Driver={MariaDB Unicode};Server=db1;Port=3307;Database=x");
}

TEST(OdbcClassify, RetryableConnectionLostAndFatal) {
  const auto c = [](const std::vector<DiagRecord>& r, SqlDialect d, bool in_commit = false, bool dead = false) {
    return classify(r, d, in_commit, dead);
  };
  // PostgreSQL through psqlODBC: SQLSTATEs; its natives are the driver's own numbers.
  EXPECT_EQ(c({{"40P01", 1, "deadlock detected"}}, SqlDialect::postgres).outcome, Outcome::retryable);
  EXPECT_EQ(c({{"40001", 1, "could not serialize"}}, SqlDialect::postgres).outcome, Outcome::retryable);
  EXPECT_EQ(c({{"57014", 1, "canceling statement"}}, SqlDialect::postgres).outcome, Outcome::retryable);
  EXPECT_EQ(c({{"HY000", 1213, "not a MySQL errno here"}}, SqlDialect::postgres).outcome, Outcome::fatal);
  // MariaDB Connector/ODBC: server errnos as natives.
  EXPECT_EQ(c({{"HY000", 1205, "Lock wait timeout exceeded"}}, SqlDialect::mysql).outcome, Outcome::retryable);
  EXPECT_EQ(c({{"40001", 1213, "Deadlock found"}}, SqlDialect::mysql).outcome, Outcome::retryable);
  EXPECT_EQ(c({{"HY018", 1317, "Query execution was interrupted"}}, SqlDialect::mysql).outcome, Outcome::retryable);
  // SQL Server: deadlock victim 1205 (40001), lock timeout 1222.
  EXPECT_EQ(c({{"HY000", 1222, "Lock request time out period exceeded"}}, SqlDialect::sqlserver).outcome,
            Outcome::retryable);
  EXPECT_EQ(c({{"HYT00", 0, "Query timeout expired"}}, SqlDialect::sqlserver).outcome, Outcome::retryable);
  EXPECT_EQ(c({{"42S02", 208, "Invalid object name"}}, SqlDialect::sqlserver).outcome, Outcome::fatal);

  const DbStatus lost = c({{"08S01", 2006, "Server has gone away"}}, SqlDialect::mysql);
  EXPECT_TRUE(lost.connection_lost);
  EXPECT_EQ(lost.outcome, Outcome::retryable);
  const DbStatus lost_in_commit = c({{"57P01", 108, "terminating connection"}}, SqlDialect::postgres, true);
  EXPECT_TRUE(lost_in_commit.connection_lost);
  EXPECT_EQ(lost_in_commit.outcome, Outcome::in_doubt);
  const DbStatus dead = c({{"HY000", 35, "could not send"}}, SqlDialect::postgres, false, true);
  EXPECT_TRUE(dead.connection_lost);

  // The first error (not a 01xxx warning) gives sqlstate/native; the message holds every record.
  const DbStatus s = c({{"01000", 0, "a warning"}, {"23505", 7, "duplicate key"}}, SqlDialect::postgres);
  EXPECT_EQ(s.outcome, Outcome::fatal);
  EXPECT_EQ(s.sqlstate, "23505");
  EXPECT_NE(s.message.find("a warning"), std::string::npos);
  EXPECT_NE(s.message.find("duplicate key"), std::string::npos);
}

TEST(OdbcConnectError, NamesTheMissingDsnDriverUserAndServer) {
  const std::string dsn = connect_error_message(
      {{"IM002", 0, "[unixODBC][Driver Manager]Data source name not found and no default driver specified"}},
      "DSN=tpcc_vm1;UID=sa", "");
  EXPECT_NE(dsn.find("'tpcc_vm1'"), std::string::npos) << dsn;
  EXPECT_NE(dsn.find("odbcinst -q -s"), std::string::npos) << dsn;

  const std::string driver = connect_error_message(
      {{"01000", 0, "[unixODBC][Driver Manager]Can't open lib 'ODBC Driver 18 for SQL Server' : file not found"}},
      "Driver={ODBC Driver 18 for SQL Server};Server=tcp:db,1433", "");
  EXPECT_NE(driver.find("'ODBC Driver 18 for SQL Server'"), std::string::npos) << driver;
  EXPECT_NE(driver.find("odbcinst -q -d"), std::string::npos) << driver;

  const std::string auth =
      connect_error_message({{"28000", 18456, "Login failed for user 'sa'."}}, "Driver={X};Server=db", "bench");
  EXPECT_NE(auth.find("authentication failed for user 'bench'"), std::string::npos) << auth;

  const std::string unreachable =
      connect_error_message({{"08001", 101, "connection to server on socket \"/nowhere/.s.PGSQL.5432\" failed"}},
                            "Driver={PostgreSQL Unicode};Servername=/nowhere;Database=d", "");
  EXPECT_NE(unreachable.find("cannot connect to server /nowhere"), std::string::npos) << unreachable;

  const std::string nodb = connect_error_message({{"42000", 1049, "Unknown database 'tpcc'"}},
                                                 "Driver={MariaDB Unicode};Socket=/s;Database=tpcc", "");
  EXPECT_NE(nodb.find("database 'tpcc' does not exist"), std::string::npos) << nodb;
}

TEST(OdbcText, Utf8AndUtf16RoundTrip) {
  const std::string text = "plain 'q' \"d\" \\ ; {} \t\n Zürich ✓ 😀 end";
  std::u16string wide;
  utf8_to_utf16(text, wide);
  EXPECT_EQ(wide[wide.find(u'Z') + 1], u'\u00fc');
  std::string back;
  utf16_to_utf8(wide, back);
  EXPECT_EQ(back, text);
  // Broken input never produces broken output.
  utf8_to_utf16(
      "a\xff"
      "b\xe2\x9c",
      wide);
  EXPECT_EQ(wide, u"a\uFFFDb\uFFFD");
  utf8_to_utf16("\xC0\xAF", wide);  // overlong '/'
  EXPECT_EQ(wide, u"\uFFFD\uFFFD");
  append_utf16("ok", wide);
  EXPECT_EQ(wide, u"\uFFFD\uFFFDok");
  back.clear();
  utf16_to_utf8(std::u16string(u"x") + static_cast<char16_t>(0xD800) + u"y", back);
  EXPECT_EQ(back, "x\xEF\xBF\xBDy");
}

}  // namespace
}  // namespace drivelab::oltp::odbc
