// The PostgreSQL backend against the real test server: statements, error classification (real
// deadlocks, lock waits, killed sessions), COPY, destroy() safety, connect errors.
#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/oltp/backend/connect_failure.hpp"
#include "postgres_test_db.hpp"

namespace drivelab::oltp {
namespace {

using test::pg_options;
using test::pg_value;
using test::PgTest;

TEST_F(PgTest, StatementsRoundTripIntDoubleTextNullAndCountAffectedRows) {
  auto c = backend->connect();
  c->execute_immediate("CREATE TABLE t (id INTEGER PRIMARY KEY, x DOUBLE PRECISION, s VARCHAR(40), n BIGINT)");
  auto ins = c->prepare("INSERT INTO t (id, x, s, n) VALUES (?, ?, ?, ?)");
  ASSERT_TRUE(c->begin(TxMode::read_write).ok());
  for (int i = 1; i <= 3; ++i) {
    ins->bind_int64(1, i);
    ins->bind_double(2, 0.1 * i);
    ins->bind_text(3, i == 2 ? std::string_view("it's a ? \\ \"quoted\"") : std::string_view("plain"));
    if (i == 3)
      ins->bind_null(4);
    else
      ins->bind_int64(4, -9'000'000'000LL * i);
    const DbStatus s = ins->execute();
    ASSERT_TRUE(s.ok()) << s.to_string();
    EXPECT_EQ(ins->affected_rows(), 1);
  }
  ASSERT_TRUE(c->commit().ok());

  auto upd = c->prepare("UPDATE t SET x = x + ? WHERE id >= ?");
  upd->bind_double(1, 1.5);
  upd->bind_int64(2, 2);
  ASSERT_TRUE(upd->execute().ok());
  EXPECT_EQ(upd->affected_rows(), 2);

  auto q = c->prepare("SELECT id, x, s, n FROM t WHERE id <> ? ORDER BY id");
  q->bind_int64(1, 1);
  ASSERT_TRUE(q->execute().ok());
  DbStatus st;
  ASSERT_TRUE(q->next(st));
  EXPECT_EQ(q->column_int64(0), 2);
  EXPECT_DOUBLE_EQ(q->column_double(1), 0.2 + 1.5);
  EXPECT_EQ(q->column_text(2), "it's a ? \\ \"quoted\"");
  EXPECT_FALSE(q->is_null(3));
  EXPECT_EQ(q->column_int64(3), -18'000'000'000LL);
  ASSERT_TRUE(q->next(st));
  EXPECT_EQ(q->column_int64(0), 3);
  EXPECT_TRUE(q->is_null(3));
  EXPECT_FALSE(q->next(st));
  EXPECT_TRUE(st.ok());

  // A `?` inside a literal, an identifier or a comment is text, not a placeholder.
  auto lit = c->prepare("SELECT '?''?' AS \"a?\", ? + 1 /* ? */, E'\\'?' -- ?\n");
  lit->bind_int64(1, 41);
  ASSERT_TRUE(lit->execute().ok());
  ASSERT_TRUE(lit->next(st));
  EXPECT_EQ(lit->column_text(0), "?'?");
  EXPECT_EQ(lit->column_int64(1), 42);
  EXPECT_EQ(lit->column_text(2), "'?");

  // NUMERIC reads as int (truncated) and double; a rollback with no transaction is harmless.
  EXPECT_EQ(pg_value(*c, "SELECT CAST(3001.75 AS DECIMAL(12,2))"), "3001.75");
  EXPECT_TRUE(c->rollback().ok());
}

TEST_F(PgTest, FailedStatementIsFatalAndRollbackRecovers) {
  auto c = backend->connect();
  c->execute_immediate("CREATE TABLE u (id INTEGER PRIMARY KEY)");
  auto ins = c->prepare("INSERT INTO u (id) VALUES (?)");
  ASSERT_TRUE(c->begin(TxMode::read_write).ok());
  ins->bind_int64(1, 1);
  ASSERT_TRUE(ins->execute().ok());
  const DbStatus dup = ins->execute();  // unique violation
  EXPECT_EQ(dup.outcome, Outcome::fatal);
  EXPECT_EQ(dup.sqlstate, "23505");
  EXPECT_FALSE(dup.connection_lost);
  // COMMIT of the failed transaction rolls back: reported, not silently "ok".
  const DbStatus commit = c->commit();
  EXPECT_EQ(commit.outcome, Outcome::fatal) << commit.to_string();
  EXPECT_EQ(pg_value(*c, "SELECT COUNT(*) FROM u"), "0");
  EXPECT_THROW(c->prepare("SELECT no_such_column FROM u"), BackendError);
}

TEST_F(PgTest, RealDeadlockBetweenTwoConnectionsIsRetryable) {
  auto setup = backend->connect();
  setup->execute_immediate("CREATE TABLE d (id INTEGER PRIMARY KEY, v INTEGER); INSERT INTO d VALUES (1, 0), (2, 0)");
  auto a = backend->connect();
  auto b = backend->connect();
  for (auto* c : {a.get(), b.get()}) c->execute_immediate("SET deadlock_timeout = '50ms'");
  auto ua = a->prepare("UPDATE d SET v = v + 1 WHERE id = ?");
  auto ub = b->prepare("UPDATE d SET v = v + 1 WHERE id = ?");
  ASSERT_TRUE(a->begin(TxMode::read_write).ok());
  ASSERT_TRUE(b->begin(TxMode::read_write).ok());
  ua->bind_int64(1, 1);
  ASSERT_TRUE(ua->execute().ok());
  ub->bind_int64(1, 2);
  ASSERT_TRUE(ub->execute().ok());
  // a waits for b's row 2; b then waits for a's row 1: a cycle, one of them is chosen as victim.
  auto a_second = std::async(std::launch::async, [&] {
    ua->bind_int64(1, 2);
    return ua->execute();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ub->bind_int64(1, 1);
  const DbStatus sb = ub->execute();
  const DbStatus sa = a_second.get();
  const DbStatus& victim = sa.ok() ? sb : sa;
  EXPECT_TRUE(sa.ok() != sb.ok()) << sa.to_string() << " / " << sb.to_string();
  EXPECT_EQ(victim.outcome, Outcome::retryable);
  EXPECT_EQ(victim.sqlstate, "40P01");
  EXPECT_FALSE(victim.connection_lost);
  EXPECT_TRUE(a->rollback().ok());
  EXPECT_TRUE(b->rollback().ok());
}

TEST_F(PgTest, CancelFlagEndsALockWaitAsRetryable) {
  auto setup = backend->connect();
  setup->execute_immediate("CREATE TABLE l (id INTEGER PRIMARY KEY, v INTEGER); INSERT INTO l VALUES (1, 0)");
  auto holder = backend->connect();
  ASSERT_TRUE(holder->begin(TxMode::read_write).ok());
  holder->execute_immediate("UPDATE l SET v = 1 WHERE id = 1");

  auto waiter = backend->connect();
  std::atomic<bool> stop{false};
  waiter->set_cancel_flag(&stop);
  auto upd = waiter->prepare("UPDATE l SET v = 2 WHERE id = 1");
  ASSERT_TRUE(waiter->begin(TxMode::read_write).ok());
  // The flag is raised while the statement waits for the row lock.
  std::thread raiser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    stop = true;
  });
  const auto t0 = std::chrono::steady_clock::now();
  const DbStatus s = upd->execute();
  const auto waited = std::chrono::steady_clock::now() - t0;
  raiser.join();
  EXPECT_EQ(s.outcome, Outcome::retryable) << s.to_string();
  EXPECT_EQ(s.sqlstate, "57014");
  EXPECT_FALSE(s.connection_lost);
  // Not a performance bound: a hang would be minutes (the lock is never released here).
  EXPECT_LT(waited, std::chrono::seconds(3));
  // The session stays usable once the flag is lowered.
  EXPECT_TRUE(waiter->rollback().ok());
  stop = false;
  EXPECT_EQ(pg_value(*waiter, "SELECT 7"), "7");
  EXPECT_TRUE(holder->rollback().ok());
}

TEST_F(PgTest, AFrozenServerSessionIsAbandonedTwoSecondsAfterItsCancelRequest) {
  // Sessions wait with poll(-1); the backend's watcher sends the cancel request of a session
  // asked to stop and, when the server does not act on it, shuts the socket down.
  test::expect_abandoned_when_frozen(*backend, false);
  // The whole server frozen: ManagedPostgres.AWhollyFrozenServer... (a private server).
}

TEST_F(PgTest, SessionsWithoutAStopRequestWaitAsLongAsTheServerTakes) {
  // No timeout while the flag is down: a 1.2 s statement (longer than the cancel delay and
  // several watcher ticks) runs to its end.
  auto c = backend->connect();
  std::atomic<bool> stop{false};
  c->set_cancel_flag(&stop);
  EXPECT_EQ(pg_value(*c, "SELECT count(*) FROM (SELECT pg_sleep(1.2)) s"), "1");
}

TEST_F(PgTest, TerminatedSessionIsConnectionLostAndConnectGivesAFreshOne) {
  auto setup = backend->connect();
  setup->execute_immediate("CREATE TABLE k (id INTEGER PRIMARY KEY)");
  auto victim = backend->connect();
  auto sel = victim->prepare("SELECT COUNT(*) FROM k");
  auto ins = victim->prepare("INSERT INTO k (id) VALUES (?)");
  const std::string pid = pg_value(*victim, "SELECT pg_backend_pid()");
  ASSERT_TRUE(victim->begin(TxMode::read_write).ok());
  ins->bind_int64(1, 1);
  ASSERT_TRUE(ins->execute().ok());
  EXPECT_EQ(pg_value(*admin, "SELECT pg_terminate_backend(" + pid + ")"), "t");

  // Lost before COMMIT: retryable (nothing committed); at COMMIT: in doubt.
  const DbStatus s = sel->execute();
  EXPECT_TRUE(s.connection_lost) << s.to_string();
  EXPECT_EQ(s.outcome, Outcome::retryable);
  const DbStatus c = victim->commit();
  EXPECT_TRUE(c.connection_lost);
  EXPECT_EQ(c.outcome, Outcome::in_doubt);
  EXPECT_TRUE(victim->rollback().connection_lost);

  auto fresh = backend->connect();
  EXPECT_EQ(pg_value(*fresh, "SELECT COUNT(*) FROM k"), "0");

  // Lost during COMMIT itself.
  auto second = backend->connect();
  auto ins2 = second->prepare("INSERT INTO k (id) VALUES (?)");
  ASSERT_TRUE(second->begin(TxMode::read_write).ok());
  ins2->bind_int64(1, 2);
  ASSERT_TRUE(ins2->execute().ok());
  admin->execute_immediate("SELECT pg_terminate_backend(" +
                           pg_value(*fresh,
                                    "SELECT pid FROM pg_stat_activity "
                                    "WHERE datname = current_database() AND state = 'idle in transaction'") +
                           ")");
  const DbStatus c2 = second->commit();
  EXPECT_TRUE(c2.connection_lost);
  EXPECT_EQ(c2.outcome, Outcome::in_doubt);
}

/// The format of the last COPY of the test database's sessions, from pg_stat_activity.
std::string last_copy(Connection& admin, const std::string& db) {
  return pg_value(admin, "SELECT COALESCE(MAX(query), '') FROM pg_stat_activity WHERE datname = '" + db +
                             "' AND query LIKE 'COPY%'");
}

TEST_F(PgTest, CopyLoaderKeepsAwkwardTextAndInterleavedTablesInBothFormats) {
  auto c = backend->connect();
  // Table a2 has a DATE column, which has no binary encoder: the whole table goes as text.
  c->execute_immediate("CREATE TABLE a1 (id INTEGER, s VARCHAR(100), x DECIMAL(6,2), n INTEGER)");
  c->execute_immediate("CREATE TABLE a2 (id INTEGER, s VARCHAR(100), x DECIMAL(6,2), n INTEGER, d DATE)");
  c->execute_immediate("CREATE TABLE b (id INTEGER, pad CHAR(200))");
  const std::vector<std::string> awkward = {"tab\there", "back\\slash",
                                            "new\nline", "cr\rhere",
                                            "\\N",       "\\.",
                                            "",          "end\\",
                                            "quote'\"",  "utf8 \xC3\xA9\xE2\x82\xAC"};
  for (const std::string table : {"a1", "a2"}) {
    SCOPED_TRACE(table);
    const bool text = table == "a2";
    std::vector<std::string> cols = {"id", "s", "x", "n"};
    if (text) cols.push_back("d");
    auto la = c->bulk_loader(table, cols);
    auto lb = c->bulk_loader("b", {"id", "pad"});
    const std::string pad(200, 'p');
    ASSERT_TRUE(c->begin(TxMode::read_write).ok());
    // Enough rows of b (~2 MB) that both tables' buffers are sent several times, interleaved.
    for (int i = 0; i < 10'000; ++i) {
      la->add_int64(i);
      la->add_text(awkward[static_cast<std::size_t>(i) % awkward.size()]);
      la->add_double(i % 7 == 0 ? -0.5 : 12.25);
      if (i % 3 == 0)
        la->add_null();
      else
        la->add_int64(i);
      if (text) la->add_null();
      la->end_row();
      lb->add_int64(i);
      lb->add_text(pad);
      lb->end_row();
    }
    la->flush();
    EXPECT_EQ(last_copy(*admin, name).find("FORMAT binary") == std::string::npos, text) << last_copy(*admin, name);
    lb->flush();
    ASSERT_TRUE(c->commit().ok());

    EXPECT_EQ(pg_value(*c, "SELECT COUNT(*) FROM " + table), "10000");
    EXPECT_EQ(pg_value(*c, "SELECT COUNT(*) FROM " + table + " WHERE n IS NULL"), "3334");
    auto q = c->prepare("SELECT s FROM " + table + " WHERE id = ?");
    for (std::size_t k = 0; k < awkward.size(); ++k) {
      q->bind_int64(1, static_cast<std::int64_t>(k + 10 * awkward.size()));
      ASSERT_TRUE(q->execute().ok());
      DbStatus st;
      ASSERT_TRUE(q->next(st));
      EXPECT_FALSE(q->is_null(0)) << k;  // the text "\N" is text, not NULL
      EXPECT_EQ(q->column_text(0), awkward[k]) << k;
    }
    EXPECT_EQ(pg_value(*c, "SELECT SUM(x) FROM " + table + " WHERE id < 14"), "146.00");

    // Rolled-back loads leave nothing, and the loaders stay usable.
    ASSERT_TRUE(c->begin(TxMode::read_write).ok());
    lb->add_int64(-1);
    lb->add_text("x");
    lb->end_row();
    ASSERT_TRUE(c->rollback().ok());
    EXPECT_EQ(pg_value(*c, "SELECT COUNT(*) FROM b WHERE id = -1"), "0");
  }
  EXPECT_EQ(pg_value(*c, "SELECT COUNT(*) FROM b"), "20000");
}

TEST_F(PgTest, BinaryCopyRoundTripsEveryColumnTypeItEncodes) {
  auto c = backend->connect();
  c->execute_immediate(
      "CREATE TABLE v (k INTEGER, i2 SMALLINT, i8 BIGINT, f4 REAL, f8 DOUBLE PRECISION, n4 DECIMAL(4,4), "
      "n12 DECIMAL(12,2), t TEXT, ch CHAR(5), ts TIMESTAMP)");
  auto l = c->bulk_loader("v", {"k", "i2", "i8", "f4", "f8", "n4", "n12", "t", "ch", "ts"});
  ASSERT_TRUE(c->begin(TxMode::read_write).ok());
  const auto row = [&](int k, auto... values) {
    l->add_int64(k);
    (values(*l), ...);
    l->end_row();
  };
  const auto i = [](std::int64_t v) { return [v](BulkLoader& b) { b.add_int64(v); }; };
  const auto d = [](double v) { return [v](BulkLoader& b) { b.add_double(v); }; };
  const auto t = [](std::string_view v) { return [v](BulkLoader& b) { b.add_text(v); }; };
  const auto null = [](BulkLoader& b) { b.add_null(); };
  row(1, i(-32768), i(-9'000'000'000'000'000'000LL), d(1.5), d(-2.25), d(0.12345), d(12.345), t("x"), t("ab"),
      t("2024-02-29 23:59:58.5"));
  row(2, i(7), i(0), i(3), i(-4), d(1e-05), d(-0.005), t(""), t("abcde"), t("1999-12-31 00:00:00"));
  row(3, t("12"), t("-5"), t("0.25"), t("1e3"), t("0.00005"), i(42), i(17), d(0.1), t("1970-01-01T00:00:01.000001"));
  row(4, null, null, null, null, null, null, null, null, null);
  l->flush();
  EXPECT_NE(last_copy(*admin, name).find("FORMAT binary"), std::string::npos);
  ASSERT_TRUE(c->commit().ok());

  const std::string sql = "SELECT concat_ws('|', i2, i8, f4, f8, n4, n12, t, ch || '<', ts) FROM v WHERE k = ";
  // NUMERIC rounds the decimal value half away from zero (12.345 -> 12.35), as in text format.
  EXPECT_EQ(pg_value(*c, sql + "1"), "-32768|-9000000000000000000|1.5|-2.25|0.1235|12.35|x|ab<|2024-02-29 23:59:58.5");
  EXPECT_EQ(pg_value(*c, sql + "2"), "7|0|3|-4|0.0000|-0.01||abcde<|1999-12-31 00:00:00");
  EXPECT_EQ(pg_value(*c, sql + "3"), "12|-5|0.25|1000|0.0001|42.00|17|0.1<|1970-01-01 00:00:01.000001");
  EXPECT_EQ(pg_value(*c, "SELECT COUNT(*) FROM v WHERE k = 4 AND i2 IS NULL AND ts IS NULL AND t IS NULL"), "1");

  // A value that does not fit its column is refused before it is sent, naming the column.
  ASSERT_TRUE(c->begin(TxMode::read_write).ok());
  l->add_int64(5);
  try {
    l->add_int64(40'000);  // beyond SMALLINT
    FAIL() << "40000 accepted into a SMALLINT column";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("i2"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(c->rollback().ok());
  l.reset();
  EXPECT_EQ(pg_value(*c, "SELECT COUNT(*) FROM v"), "4");
}

TEST_F(PgTest, CopyErrorThrowsNamingTheTable) {
  auto c = backend->connect();
  c->execute_immediate("CREATE TABLE e (id INTEGER NOT NULL)");
  auto l = c->bulk_loader("e", {"id"});
  ASSERT_TRUE(c->begin(TxMode::read_write).ok());
  l->add_null();
  l->end_row();
  try {
    l->flush();
    FAIL() << "NULL into a NOT NULL column was accepted";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("COPY e"), std::string::npos) << e.what();
    EXPECT_EQ(e.sqlstate(), "23502");
  }
  EXPECT_TRUE(c->rollback().ok());
}

TEST_F(PgTest, DestroyRefusesAForeignDatabaseAndEmptiesADrivelabOne) {
  EXPECT_FALSE(backend->exists());
  backend->destroy();  // empty database: nothing to do
  auto c = backend->connect();
  c->execute_immediate("CREATE TABLE payroll (id INTEGER); CREATE TABLE invoices (id INTEGER)");
  EXPECT_TRUE(backend->exists());
  try {
    backend->destroy();
    FAIL() << "destroy() dropped tables of a database that is not drivelab's";
  } catch (const BackendError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(name), std::string::npos) << what;
    EXPECT_NE(what.find("invoices"), std::string::npos) << what;
    EXPECT_NE(what.find("payroll"), std::string::npos) << what;
  }
  EXPECT_EQ(pg_value(*c, "SELECT COUNT(*) FROM payroll"), "0");  // still there

  c->execute_immediate("CREATE TABLE drivelab_meta (name VARCHAR(64) PRIMARY KEY, value VARCHAR(200))");
  backend->destroy();
  EXPECT_FALSE(backend->exists());
  EXPECT_EQ(pg_value(*c, "SELECT COUNT(*) FROM pg_tables WHERE schemaname = 'public'"), "0");
}

TEST_F(PgTest, ConnectErrorsSayWhatToFixAndNeverShowThePassword) {
  PostgresOptions missing = pg_options(svc, "dl_no_such_database");
  missing.endpoint.password = "s3cret-pw";
  try {
    make_postgres_backend(missing)->connect();
    FAIL();
  } catch (const BackendError& e) {
    EXPECT_EQ(e.sqlstate(), "3D000");
    EXPECT_NE(std::string(e.what()).find("database \"dl_no_such_database\" does not exist"), std::string::npos)
        << e.what();
    EXPECT_EQ(std::string(e.what()).find("s3cret"), std::string::npos);
  }
  EXPECT_FALSE(make_postgres_backend(missing)->exists());

  PostgresOptions user = pg_options(svc, name);
  user.endpoint.user = "dl_nobody";
  user.endpoint.password = "s3cret-pw";
  try {
    make_postgres_backend(user)->connect();
    FAIL();
  } catch (const BackendError& e) {
    EXPECT_EQ(e.sqlstate().substr(0, 2), "28");
    EXPECT_NE(std::string(e.what()).find("authentication failed for user \"dl_nobody\""), std::string::npos)
        << e.what();
    EXPECT_EQ(std::string(e.what()).find("s3cret"), std::string::npos);
  }

  PostgresOptions gone = pg_options(svc, name);
  gone.endpoint.socket_path = "/nonexistent-drivelab-socket-dir";
  try {
    make_postgres_backend(gone)->connect();
    FAIL();
  } catch (const BackendError& e) {
    EXPECT_NE(
        std::string(e.what()).find("server unreachable at socket directory /nonexistent-drivelab-socket-dir port"),
        std::string::npos)
        << e.what();
  }

  // An existing server named in the `connection` string (conninfo_extra), as a protocol's
  // `server: {connection: "host=... port=..."}` gives it: the message names that endpoint, not
  // libpq's default server. Port 1 on the loopback: nothing listens there.
  for (const auto& [connection, named] :
       {std::pair{std::string("host=127.0.0.1 port=1"), std::string("server unreachable at host 127.0.0.1 port 1: ")},
        std::pair{std::string("host=/nonexistent-drivelab-socket-dir port=5999"),
                  std::string("server unreachable at socket directory /nonexistent-drivelab-socket-dir port 5999: ")},
        std::pair{std::string("hostaddr=127.0.0.1 port=1"),
                  std::string("server unreachable at address 127.0.0.1 port 1: ")}}) {
    PostgresOptions given;
    given.database = name;
    given.conninfo_extra = connection;
    try {
      make_postgres_backend(given)->connect();
      FAIL() << connection;
    } catch (const BackendError& e) {
      EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find("libpq's default server"), std::string::npos) << e.what();
    }
  }
}

TEST_F(PgTest, AFullServerIsTooManyConnectionsNotATimeOutOrARefusal) {
  // A database that takes one session (CONNECTION LIMIT 1; superusers are exempt, so a role of
  // the test's own logs in): the second login is refused with SQLSTATE 53300, which the login
  // hint tells apart from a time-out and a refusal.
  const std::string role = name + "_r";
  admin->execute_immediate("DROP ROLE IF EXISTS \"" + role + "\"");
  admin->execute_immediate("CREATE ROLE \"" + role + "\" LOGIN");
  admin->execute_immediate("ALTER DATABASE \"" + name + "\" CONNECTION LIMIT 1");
  PostgresOptions limited = pg_options(svc, name);
  limited.endpoint.user = role;
  auto limited_backend = make_postgres_backend(limited);
  {
    auto first = limited_backend->connect();
    try {
      limited_backend->connect();
      ADD_FAILURE() << "a second session on a database of CONNECTION LIMIT 1";
    } catch (const BackendError& e) {
      const std::string m = e.what();
      EXPECT_EQ(e.sqlstate(), "53300") << m;
      EXPECT_EQ(classify_connect_failure(e.sqlstate(), e.native_code(), m), ConnectFailure::too_many_connections);
      EXPECT_NE(m.find("has no session left for user \"" + role + "\" on database \"" + name +
                       "\" (too many connections, SQLSTATE 53300): "),
                std::string::npos)
          << m;
      EXPECT_NE(m.find("too many connections for database \"" + name + "\""), std::string::npos) << m;  // the server's
    }
  }
  limited_backend.reset();
  admin->execute_immediate("DROP DATABASE IF EXISTS \"" + name + "\" WITH (FORCE)");
  admin->execute_immediate("DROP ROLE IF EXISTS \"" + role + "\"");
}

TEST_F(PgTest, DescribeAndServerCountersForTheRecord) {
  PostgresOptions o = pg_options(svc, name);
  o.endpoint.password = "s3cret-pw";  // trust auth ignores it; it must not be recorded
  auto b = make_postgres_backend(o);
  const results::Json d = b->describe();
  EXPECT_EQ(d.at("backend"), "postgres");
  EXPECT_EQ(d.at("database"), name);
  EXPECT_EQ(d.at("libpq_version"), libpq_version());
  EXPECT_FALSE(d.at("server_version").get<std::string>().empty());
  EXPECT_EQ(d.at("settings").at("fsync"), "on");
  EXPECT_TRUE(d.at("settings").contains("shared_buffers"));
  EXPECT_EQ(d.dump().find("s3cret"), std::string::npos);

  const results::Json before = b->server_counters();
  auto c = b->connect();
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(c->begin(TxMode::read_write).ok());
    ASSERT_TRUE(c->commit().ok());
  }
  c.reset();  // statistics are flushed when the session ends
  // Every key on every release (PostgreSQL 15 and 17 keep the checkpointer's counters apart).
  for (const char* key : {"xact_commit", "blks_read", "blks_hit", "tup_inserted", "deadlocks", "buffers_checkpoint",
                          "checkpoints_timed", "checkpoints_req", "checkpoint_write_time_ms", "buffers_clean",
                          "buffers_backend", "buffers_backend_fsync", "buffers_alloc", "wal_bytes", "wal_sync"}) {
    ASSERT_TRUE(before.contains(key)) << key;
    EXPECT_TRUE(before.at(key).is_number()) << key;
  }
  EXPECT_GT(b->size_bytes().value_or(0), 1'000'000u);
  EXPECT_EQ(b->capabilities().max_load_threads, 64);
  EXPECT_FALSE(b->capabilities().serialized_writers);
}

}  // namespace
}  // namespace drivelab::oltp
