// The ODBC backend against the real test servers through Debian's drivers (psqlODBC, MariaDB
// Connector/ODBC): round trips, classification of real deadlocks and lost connections, cancel
// and timeout of lock waits, bulk loading, exists/destroy, counters, pre-flight errors.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/oltp/tpcc/tpcc_schema.hpp"
#include "odbc_test_db.hpp"
#include "test_db.hpp"

namespace drivelab::oltp {
namespace {

using test::OdbcServer;
using test::OdbcTestDatabase;
using test::query_int;
using test::query_text;

class OdbcBackendTest : public ::testing::TestWithParam<OdbcServer> {
 protected:
  void SetUp() override {
    services_ = testing::services();
    if (!services_) GTEST_SKIP() << "no servers";
    db_ = std::make_unique<OdbcTestDatabase>(*services_, GetParam(), testing::unique_database_name());
  }
  bool pg() const { return GetParam().kind == ServerKind::postgres; }
  /// The server's id of a session, for killing it.
  std::int64_t session_id(Connection& c) const {
    return query_int(c, pg() ? "SELECT pg_backend_pid()" : "SELECT CONNECTION_ID()");
  }
  void kill(std::int64_t id) const {
    auto admin = db_->admin();
    if (pg())
      query_int(*admin, fmt::format("SELECT CAST(pg_terminate_backend({}) AS INTEGER)", id));
    else
      admin->execute_immediate(fmt::format("KILL {}", id));
  }
  /// Until `id` is gone from the server's session list (pg_terminate_backend only signals).
  void wait_gone(std::int64_t id) const {
    auto admin = db_->admin();
    const std::string sql = pg() ? fmt::format("SELECT COUNT(*) FROM pg_stat_activity WHERE pid = {}", id)
                                 : fmt::format("SELECT COUNT(*) FROM information_schema.processlist WHERE id = {}", id);
    for (int i = 0; i < 100 && query_int(*admin, sql) != 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }

  std::optional<testing::Services> services_;
  std::unique_ptr<OdbcTestDatabase> db_;
};

TEST_P(OdbcBackendTest, RoundTripsTypesNullsAndLongText) {
  auto backend = db_->backend();
  auto c = backend->connect();
  c->execute_immediate(
      "CREATE TABLE t (k INTEGER NOT NULL PRIMARY KEY, big BIGINT, d DECIMAL(12,2), "
      "f DOUBLE PRECISION, s VARCHAR(2000), ts " +
      backend->dialect().timestamp_type + ")");
  auto ins = c->prepare("INSERT INTO t (k, big, d, f, s, ts) VALUES (?, ?, ?, ?, ?, ?)");
  const std::string long_text(1500, 'x');
  ASSERT_TRUE(c->begin(TxMode::read_write).ok());
  ins->bind_int64(1, 1);
  ins->bind_int64(2, std::int64_t{1} << 40);
  ins->bind_double(3, 1234.56);
  ins->bind_double(4, -0.125);
  ins->bind_text(5, "Zürich ✓ 'q' ; {x}");
  ins->bind_text(6, "2026-11-29 12:34:56");
  ASSERT_TRUE(ins->execute().ok());
  EXPECT_EQ(ins->affected_rows(), 1);
  ins->bind_int64(1, 2);
  ins->bind_null(2);
  ins->bind_null(3);
  ins->bind_null(4);
  ins->bind_text(5, long_text);
  ins->bind_null(6);
  ASSERT_TRUE(ins->execute().ok());
  ASSERT_TRUE(c->commit().ok());

  ASSERT_TRUE(c->begin(TxMode::read_only).ok());
  auto q = c->prepare("SELECT k, big, d, f, s, ts FROM t ORDER BY k");
  ASSERT_TRUE(q->execute().ok());
  DbStatus s;
  ASSERT_TRUE(q->next(s));
  EXPECT_EQ(q->column_int64(0), 1);
  EXPECT_EQ(q->column_int64(1), std::int64_t{1} << 40);
  EXPECT_DOUBLE_EQ(q->column_double(2), 1234.56);
  EXPECT_EQ(q->column_text(2), "1234.56");
  EXPECT_DOUBLE_EQ(q->column_double(3), -0.125);
  EXPECT_EQ(q->column_text(4), "Zürich ✓ 'q' ; {x}");
  EXPECT_EQ(q->column_text(5).substr(0, 19), "2026-11-29 12:34:56");
  EXPECT_FALSE(q->is_null(5));
  ASSERT_TRUE(q->next(s));
  EXPECT_TRUE(q->is_null(1));
  EXPECT_TRUE(q->is_null(2));
  EXPECT_TRUE(q->is_null(5));
  EXPECT_EQ(q->column_text(4), long_text);  // read in pieces (SQLGetData 01004)
  EXPECT_FALSE(q->next(s));
  EXPECT_TRUE(s.ok()) << s.to_string();
  ASSERT_TRUE(c->commit().ok());

  // A searched UPDATE of no row is ok with 0 rows (psqlODBC answers SQL_NO_DATA).
  auto upd = c->prepare("UPDATE t SET f = f + ? WHERE k = ?");
  ASSERT_TRUE(c->begin(TxMode::read_write).ok());
  upd->bind_double(1, 1.0);
  upd->bind_int64(2, 99);
  ASSERT_TRUE(upd->execute().ok());
  EXPECT_EQ(upd->affected_rows(), 0);
  upd->bind_int64(2, 1);
  ASSERT_TRUE(upd->execute().ok());
  EXPECT_EQ(upd->affected_rows(), 1);
  ASSERT_TRUE(c->rollback().ok());
  EXPECT_DOUBLE_EQ(test::query_double(*c, "SELECT f FROM t WHERE k = 1"), -0.125);

  // A failing statement is fatal with the server's SQLSTATE, and the session stays usable.
  ASSERT_TRUE(c->begin(TxMode::read_write).ok());
  ins->bind_int64(1, 1);  // duplicate key
  const DbStatus dup = ins->execute();
  EXPECT_EQ(dup.outcome, Outcome::fatal) << dup.to_string();
  EXPECT_EQ(dup.sqlstate.substr(0, 2), "23") << dup.to_string();
  ASSERT_TRUE(c->rollback().ok());
  EXPECT_EQ(query_int(*c, "SELECT COUNT(*) FROM t"), 2);
}

TEST_P(OdbcBackendTest, DescribeNamesTheDriverAndNeverThePassword) {
  OdbcOptions o = db_->options();
  o.password = "s3cr3t-pw";  // the servers authenticate by socket/trust and ignore it
  o.connection_string += ";PWD=inline-s3cr3t";
  auto backend = make_odbc_backend(o);
  backend->connect();
  const std::string d = backend->describe().dump();
  EXPECT_EQ(d.find("s3cr3t"), std::string::npos) << d;
  EXPECT_NE(d.find("PWD=***"), std::string::npos) << d;
  EXPECT_NE(d.find(pg() ? "psqlodbc" : "libmaodbc"), std::string::npos) << d;
  EXPECT_NE(d.find(pg() ? "PostgreSQL" : "MariaDB"), std::string::npos) << d;
  EXPECT_NE(d.find(std::string("\"dialect\":\"") + (pg() ? "postgres" : "mysql") + "\""), std::string::npos) << d;
}

TEST_P(OdbcBackendTest, RealDeadlockIsRetryable) {
  auto backend = db_->backend();
  auto setup = backend->connect();
  setup->execute_immediate("CREATE TABLE t (k INTEGER NOT NULL PRIMARY KEY, v INTEGER)");
  setup->execute_immediate("INSERT INTO t VALUES (1, 0), (2, 0)");
  auto a = backend->connect();
  auto b = backend->connect();
  auto ua = a->prepare("UPDATE t SET v = v + 1 WHERE k = ?");
  auto ub = b->prepare("UPDATE t SET v = v + 1 WHERE k = ?");
  ASSERT_TRUE(a->begin(TxMode::read_write).ok());
  ASSERT_TRUE(b->begin(TxMode::read_write).ok());
  ua->bind_int64(1, 1);
  ASSERT_TRUE(ua->execute().ok());
  ub->bind_int64(1, 2);
  ASSERT_TRUE(ub->execute().ok());
  DbStatus sb;
  std::thread tb([&] {
    ub->bind_int64(1, 1);
    sb = ub->execute();  // waits for a
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ua->bind_int64(1, 2);
  const DbStatus sa = ua->execute();  // closes the cycle: one of the two is the victim
  if (sa.ok()) (void)a->commit();
  tb.join();
  if (sb.ok()) (void)b->commit();
  const DbStatus& victim = sa.ok() ? sb : sa;
  EXPECT_NE(sa.ok(), sb.ok()) << sa.to_string() << " / " << sb.to_string();
  EXPECT_EQ(victim.outcome, Outcome::retryable) << victim.to_string();
  EXPECT_FALSE(victim.connection_lost);
  if (pg()) {
    EXPECT_EQ(victim.sqlstate, "40P01");
  } else {
    EXPECT_EQ(victim.native_code, 1213);
  }
  (void)a->rollback();
  (void)b->rollback();
}

TEST_P(OdbcBackendTest, LostConnectionIsRetryableBeforeCommitAndInDoubtDuringIt) {
  auto backend = db_->backend();
  auto setup = backend->connect();
  setup->execute_immediate("CREATE TABLE t (k INTEGER NOT NULL PRIMARY KEY, v INTEGER)");
  setup->execute_immediate("INSERT INTO t VALUES (1, 0)");

  auto c = backend->connect();
  auto upd = c->prepare("UPDATE t SET v = v + 1 WHERE k = 1");
  const auto id = session_id(*c);
  kill(id);
  wait_gone(id);
  // The loss shows at the first call that reaches the server: begin() when it has to switch the
  // session back to manual commit (it ran session_id() in autocommit), else the statement.
  DbStatus s = c->begin(TxMode::read_write);
  if (s.ok()) s = upd->execute();
  EXPECT_TRUE(s.connection_lost) << s.to_string();
  EXPECT_EQ(s.outcome, Outcome::retryable) << s.to_string();

  // During COMMIT: the update was sent, the session dies, the commit's fate is unknown.
  auto c2 = backend->connect();
  auto upd2 = c2->prepare("UPDATE t SET v = v + 1 WHERE k = 1");
  ASSERT_TRUE(c2->begin(TxMode::read_write).ok());
  ASSERT_TRUE(upd2->execute().ok());
  const auto id2 = session_id(*c2);
  kill(id2);
  wait_gone(id2);
  const DbStatus cs = c2->commit();
  EXPECT_TRUE(cs.connection_lost) << cs.to_string();
  EXPECT_EQ(cs.outcome, Outcome::in_doubt) << cs.to_string();

  // connect() gives a fresh session; neither update committed.
  auto fresh = backend->connect();
  EXPECT_EQ(query_int(*fresh, "SELECT v FROM t WHERE k = 1"), 0);
}

/// A row lock held by one session and a second session waiting for it.
struct LockWait {
  std::unique_ptr<Connection> holder, waiter;
  std::unique_ptr<Statement> hold, wait;
  LockWait(Backend& holder_backend, Backend& waiter_backend) {
    holder = holder_backend.connect();
    waiter = waiter_backend.connect();
    hold = holder->prepare("UPDATE t SET v = v + 1 WHERE k = 1");
    wait = waiter->prepare("UPDATE t SET v = v + 1 WHERE k = 1");
    if (!holder->begin(TxMode::read_write).ok() || !hold->execute().ok()) throw std::runtime_error("lock");
    if (!waiter->begin(TxMode::read_write).ok()) throw std::runtime_error("begin");
  }
};

TEST_P(OdbcBackendTest, CancelFlagEndsALockWaitAsRetryable) {
  auto backend = db_->backend();
  backend->connect()->execute_immediate("CREATE TABLE t (k INTEGER NOT NULL PRIMARY KEY, v INTEGER)");
  backend->connect()->execute_immediate("INSERT INTO t VALUES (1, 0)");
  LockWait lw(*backend, *backend);
  std::atomic<bool> stop{false};
  lw.waiter->set_cancel_flag(&stop);
  const auto t0 = std::chrono::steady_clock::now();
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop = true;
  });
  const DbStatus s = lw.wait->execute();  // would wait forever (PostgreSQL) or 50 s (InnoDB)
  setter.join();
  const auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(s.outcome, Outcome::retryable) << s.to_string();
  EXPECT_FALSE(s.connection_lost);
  EXPECT_NE(s.message.find("stop requested"), std::string::npos) << s.message;
  EXPECT_LT(waited, std::chrono::seconds(20));  // far below InnoDB's 50 s lock wait timeout
  EXPECT_TRUE(lw.waiter->rollback().ok());
  EXPECT_TRUE(lw.holder->rollback().ok());
  // The session is still good.
  lw.waiter->set_cancel_flag(nullptr);
  EXPECT_EQ(query_int(*lw.waiter, "SELECT COUNT(*) FROM t"), 1);
}

TEST_P(OdbcBackendTest, QueryTimeoutEndsALockWaitAsRetryable) {
  auto holder_backend = db_->backend();
  holder_backend->connect()->execute_immediate("CREATE TABLE t (k INTEGER NOT NULL PRIMARY KEY, v INTEGER)");
  holder_backend->connect()->execute_immediate("INSERT INTO t VALUES (1, 0)");
  OdbcOptions o = db_->options();
  o.query_timeout_s = 1;
  auto waiter_backend = make_odbc_backend(o);
  LockWait lw(*holder_backend, *waiter_backend);
  const DbStatus s = lw.wait->execute();
  // psqlODBC: the server's statement_timeout (57014); MariaDB: the watcher's SQLCancel (1317).
  EXPECT_EQ(s.outcome, Outcome::retryable) << s.to_string();
  EXPECT_FALSE(s.connection_lost);
  EXPECT_TRUE(lw.waiter->rollback().ok());
  EXPECT_TRUE(lw.holder->rollback().ok());
}

TEST_P(OdbcBackendTest, BulkLoaderKeepsAwkwardTextExactlyAcrossBatches) {
  OdbcOptions o = db_->options();
  o.bulk_rows = 7;  // several parameter-array executions and a partial batch flushed at commit
  auto backend = make_odbc_backend(o);
  auto c = backend->connect_for_load();
  c->execute_immediate(
      "CREATE TABLE b (id INTEGER NOT NULL PRIMARY KEY, n BIGINT, x DOUBLE PRECISION, "
      "t VARCHAR(3000), u VARCHAR(10))");
  const std::string awkward[] = {"",
                                 "plain",
                                 "it's \"quoted\" ; and {braced} }}",
                                 "back\\slash \\N \\\\",
                                 "tab\there\nnew line\r\n",
                                 "Zürich Ærøskøbing ✓ 中文",
                                 "emoji 😀 outside the BMP",
                                 std::string(2500, 'L') + "end",
                                 ",,,|||%%%___"};
  const auto text_of = [&](int i) { return awkward[static_cast<std::size_t>(i) % std::size(awkward)]; };
  auto loader = c->bulk_loader("b", {"id", "n", "x", "t", "u"});
  ASSERT_TRUE(c->begin(TxMode::read_write).ok());
  for (int i = 0; i < 50; ++i) {
    const std::string t = text_of(i);
    loader->add_int64(i);
    loader->add_int64((std::int64_t{1} << 40) + i);
    if (i % 5 == 0)
      loader->add_null();
    else
      loader->add_double(i * 0.25);
    loader->add_text(t);
    if (i % 3 == 0)
      loader->add_null();
    else
      loader->add_text(i % 2 == 0 ? "" : "u");
    loader->end_row();
  }
  ASSERT_TRUE(c->commit().ok());  // flushes the last 1 buffered row (50 = 7 x 7 + 1)
  // Rows of a rolled-back transaction are never inserted later.
  ASSERT_TRUE(c->begin(TxMode::read_write).ok());
  for (int i = 100; i < 103; ++i) {
    loader->add_int64(i);
    loader->add_int64(0);
    loader->add_double(0);
    loader->add_text("gone");
    loader->add_null();
    loader->end_row();
  }
  ASSERT_TRUE(c->rollback().ok());
  ASSERT_TRUE(c->begin(TxMode::read_write).ok());
  ASSERT_TRUE(c->commit().ok());

  auto q = c->prepare("SELECT id, n, x, t, u FROM b ORDER BY id");
  ASSERT_TRUE(q->execute().ok());
  DbStatus s;
  int i = 0;
  for (; q->next(s); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(q->column_int64(0), i);
    EXPECT_EQ(q->column_int64(1), (std::int64_t{1} << 40) + i);
    EXPECT_EQ(q->is_null(2), i % 5 == 0);
    if (i % 5 != 0) {
      EXPECT_DOUBLE_EQ(q->column_double(2), i * 0.25);
    }
    EXPECT_EQ(q->column_text(3), text_of(i));
    EXPECT_FALSE(q->is_null(3));  // '' is not NULL
    EXPECT_EQ(q->is_null(4), i % 3 == 0);
    if (i % 3 != 0) {
      EXPECT_EQ(q->column_text(4), i % 2 == 0 ? "" : "u");
    }
  }
  EXPECT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(i, 50);
  EXPECT_EQ(backend->describe()["bulk_load"],
            pg() ? "multi-row INSERT of up to 7 rows" : "parameter arrays of 7 rows (column-wise)");
}

/// The widest TPC-C table (STOCK, 17 columns) through the BulkLoader: at the default bulk_rows
/// (psqlODBC over libpq 15 failed a 1,000-row statement of 17,000 parameters with "lost
/// synchronization with server") and at a batch far past every limit (MariaDB: 50,000 rows of
/// ~330 bytes are more than max_allowed_packet's 16 MiB in one array).
TEST_P(OdbcBackendTest, BulkLoaderKeepsTheWidestTableWithinTheClientStacksLimits) {
  const std::vector<std::string> columns{"s_i_id",       "s_w_id",    "s_quantity", "s_dist_01", "s_dist_02",
                                         "s_dist_03",    "s_dist_04", "s_dist_05",  "s_dist_06", "s_dist_07",
                                         "s_dist_08",    "s_dist_09", "s_dist_10",  "s_ytd",     "s_order_cnt",
                                         "s_remote_cnt", "s_data"};
  const auto load = [&](const OdbcOptions& o, int warehouse, int rows) {
    auto backend = make_odbc_backend(o);
    auto c = backend->connect_for_load();
    auto loader = c->bulk_loader("stock", columns);
    EXPECT_TRUE(c->begin(TxMode::read_write).ok());
    for (int i = 1; i <= rows; ++i) {
      loader->add_int64(i);
      loader->add_int64(warehouse);
      loader->add_int64(10 + i % 91);
      for (int d = 0; d < 10; ++d) loader->add_text(fmt::format("{:<24}", fmt::format("dist {} of {}", d, i)));
      loader->add_int64(0);
      loader->add_int64(0);
      loader->add_int64(0);
      loader->add_text(std::string(26 + i % 25, static_cast<char>('a' + i % 26)));
      loader->end_row();
    }
    EXPECT_TRUE(c->commit().ok());
    return backend->describe();
  };
  {
    auto backend = db_->backend();
    auto c = backend->connect();
    for (const std::string& sql : tpcc::schema_ddl(backend->dialect()))  // TPC-C's own STOCK
      if (sql.starts_with("CREATE TABLE stock ")) c->execute_immediate(sql);
  }
  const auto j = load(db_->options(), 1, 2'000);  // the defaults: bulk_rows 1,000
  EXPECT_EQ(j["bulk_max_parameters"], bulk_limits(GetParam().dialect).max_parameters);
  OdbcOptions large = db_->options();
  large.bulk_rows = 50'000;
  load(large, 2, 50'000);

  auto c = db_->backend()->connect();
  EXPECT_EQ(query_int(*c, "SELECT COUNT(*) FROM stock WHERE s_w_id = 1"), 2'000);
  EXPECT_EQ(query_int(*c, "SELECT COUNT(*) FROM stock WHERE s_w_id = 2"), 50'000);
  EXPECT_EQ(query_int(*c, "SELECT SUM(s_quantity) FROM stock WHERE s_w_id = 2"), [] {
    std::int64_t sum = 0;
    for (int i = 1; i <= 50'000; ++i) sum += 10 + i % 91;
    return sum;
  }());
  // CHAR(24): MariaDB drops the trailing blanks when read back, PostgreSQL keeps them.
  EXPECT_EQ(query_text(*c, "SELECT RTRIM(s_dist_07) FROM stock WHERE s_w_id = 2 AND s_i_id = 49999"),
            "dist 6 of 49999");
}

TEST_P(OdbcBackendTest, ExistsAndDestroyFollowTheSharedRules) {
  auto backend = db_->backend();
  EXPECT_FALSE(backend->exists());
  backend->destroy();  // empty: nothing to do

  auto c = backend->connect();
  c->execute_immediate("CREATE TABLE user_orders (k INTEGER)");
  c->execute_immediate("CREATE TABLE user_items (k INTEGER)");
  EXPECT_TRUE(backend->exists());
  try {
    backend->destroy();
    ADD_FAILURE() << "destroyed a database that is not drivelab's";
  } catch (const BackendError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(db_->name()), std::string::npos) << m;
    EXPECT_NE(m.find("user_"), std::string::npos) << m;
    EXPECT_NE(m.find("never destroys"), std::string::npos) << m;
  }
  EXPECT_EQ(query_int(*c, "SELECT COUNT(*) FROM user_orders"), 0);  // still there

  c->execute_immediate("CREATE TABLE drivelab_meta (name VARCHAR(64) NOT NULL PRIMARY KEY, value VARCHAR(200))");
  backend->destroy();  // now drivelab's: every table goes
  EXPECT_FALSE(backend->exists());

  // A database that does not exist does not exist.
  OdbcOptions o = db_->options();
  o.connection_string = odbc_connection_string(GetParam().kind, test::endpoint_of(*services_, GetParam().kind),
                                               "dl_odbc_no_such_database");
  EXPECT_FALSE(make_odbc_backend(o)->exists());
}

TEST_P(OdbcBackendTest, ServerCountersAndSize) {
  auto backend = db_->backend();
  backend->connect()->execute_immediate("CREATE TABLE t (k INTEGER)");
  const auto counters = backend->server_counters();
  ASSERT_TRUE(counters.is_object());
  if (pg()) {
    ASSERT_TRUE(counters.contains("xact_commit")) << counters.dump();
    EXPECT_GT(counters["xact_commit"].get<std::int64_t>(), 0);
    EXPECT_TRUE(counters.contains("blks_read"));
  } else {
    // MySQL: Innodb_rows_read; MariaDB 10.6+: Rows_read.
    ASSERT_TRUE(counters.contains("Innodb_rows_read") || counters.contains("Rows_read")) << counters.dump();
    EXPECT_TRUE(counters.contains("Innodb_data_writes"));
    EXPECT_TRUE(counters.contains("Com_commit"));
  }
  const auto size = backend->size_bytes();
  ASSERT_TRUE(size.has_value());
  EXPECT_GT(*size, 0u);
}

INSTANTIATE_TEST_SUITE_P(Drivers, OdbcBackendTest,
                         ::testing::Values(OdbcServer{"postgres", ServerKind::postgres, SqlDialect::postgres},
                                           OdbcServer{"mariadb", ServerKind::mariadb, SqlDialect::mysql}),
                         [](const auto& p) { return std::string(p.param.name); });

// ---- pre-flight errors -------------------------------------------------------------------------

std::string connect_error(const OdbcOptions& o) {
  try {
    make_odbc_backend(o)->connect();
  } catch (const BackendError& e) {
    return e.what();
  }
  return "(connected)";
}

TEST(OdbcPreflight, MissingDsnAndDriverAreNamedWithTheCommandToListThem) {
  OdbcOptions o;
  o.dialect = SqlDialect::sqlserver;
  o.connection_string = "DSN=drivelab_no_such_dsn";
  o.user = "sa";
  o.password = "pw-not-shown";
  const std::string dsn = connect_error(o);
  EXPECT_NE(dsn.find("'drivelab_no_such_dsn'"), std::string::npos) << dsn;
  EXPECT_NE(dsn.find("IM002"), std::string::npos) << dsn;
  EXPECT_NE(dsn.find("odbcinst -q -s"), std::string::npos) << dsn;
  EXPECT_EQ(dsn.find("pw-not-shown"), std::string::npos) << dsn;

  o.connection_string = "Driver={ODBC Driver 18 for SQL Server};Server=tcp:db,1433;Database=tpcc;Encrypt=yes";
  const std::string driver = connect_error(o);
  EXPECT_NE(driver.find("'ODBC Driver 18 for SQL Server'"), std::string::npos) << driver;
  EXPECT_NE(driver.find("odbcinst -q -d"), std::string::npos) << driver;
  EXPECT_EQ(driver.find("pw-not-shown"), std::string::npos) << driver;
}

TEST(OdbcPreflight, WrongUserAndUnreachableServerAreNamed) {
  const auto services = testing::services();
  if (!services) return;
  OdbcOptions o;
  o.dialect = SqlDialect::mysql;
  Endpoint e = test::endpoint_of(*services, ServerKind::mariadb);
  e.user = "drivelab_nosuch";
  o.connection_string = odbc_connection_string(ServerKind::mariadb, e, services->mysql_database);
  o.password = "pw-not-shown";
  const std::string auth = connect_error(o);
  EXPECT_NE(auth.find("authentication failed for user 'drivelab_nosuch'"), std::string::npos) << auth;
  EXPECT_EQ(auth.find("pw-not-shown"), std::string::npos) << auth;

  o.dialect = SqlDialect::postgres;
  Endpoint nowhere;
  nowhere.socket_path = "/nonexistent-drivelab-dir";
  nowhere.port = 5432;
  o.connection_string = odbc_connection_string(ServerKind::postgres, nowhere, "tpcc");
  const std::string unreachable = connect_error(o);
  EXPECT_NE(unreachable.find("cannot connect to server /nonexistent-drivelab-dir"), std::string::npos) << unreachable;
}

}  // namespace
}  // namespace drivelab::oltp
