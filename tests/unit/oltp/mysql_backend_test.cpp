// The MySQL/MariaDB backend (Connector/C++ 1.1) against the real MariaDB of the db_services
// fixture: statements, error classification with real deadlocks, lock waits and killed
// sessions, the cancel flag, the bulk loader, destroy() safety and the server description.
#include <gtest/gtest.h>

#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <vector>
#include <chrono>
#include <cmath>
#include <thread>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "mysql_test_util.hpp"

namespace drivelab::oltp {
namespace {

using test::mysql_int;
using test::mysql_text;

struct MysqlBackendTest : test::MysqlFixture {
  /// Waits (at most 20 s) until the session `id` waits for a row lock.
  void wait_for_lock_wait(Connection& observer, std::int64_t id) {
    for (int i = 0; i < 130; ++i) {
      // InnoDB refreshes the INNODB_TRX cache only when it was not read for 100 ms: poll slower.
      std::this_thread::sleep_for(std::chrono::milliseconds(150));
      if (mysql_int(observer,
                    "SELECT COUNT(*) FROM information_schema.innodb_trx WHERE trx_state = "
                    "'LOCK WAIT' AND trx_mysql_thread_id = " +
                        std::to_string(id)) > 0)
        return;
    }
    FAIL() << "session " << id << " never waited for a lock";
  }
  void make_two_rows(Connection& c) {
    c.execute_immediate(
        "CREATE TABLE t (id INTEGER NOT NULL PRIMARY KEY, v INTEGER) ENGINE=InnoDB; "
        "INSERT INTO t VALUES (1, 0), (2, 0)");
  }
};

TEST_F(MysqlBackendTest, ConnectCreatesTheDatabaseAndStatementsRoundTrip) {
  EXPECT_FALSE(backend->exists());  // the database does not even exist yet
  auto c = backend->connect();
  EXPECT_EQ(mysql_text(*c, "SELECT DATABASE()"), database);
  c->execute_immediate(
      "CREATE TABLE r (id INTEGER NOT NULL PRIMARY KEY, amount DECIMAL(12,2), name VARCHAR(40), "
      "ts TIMESTAMP NULL, n INTEGER) ENGINE=InnoDB");
  EXPECT_TRUE(backend->exists());

  ASSERT_TRUE(c->begin(TxMode::read_write).ok());
  auto ins = c->prepare("INSERT INTO r (id, amount, name, ts, n) VALUES (?, ?, ?, ?, ?)");
  for (int i = 1; i <= 3; ++i) {
    const std::string name = "name 'quoted' \\ " + std::to_string(i);
    ins->bind_int64(1, i);
    ins->bind_double(2, 10.25 * i);
    ins->bind_text(3, name);
    ins->bind_text(4, "2024-01-02 03:04:05");
    if (i == 2)
      ins->bind_null(5);
    else
      ins->bind_int64(5, i * 100);
    ASSERT_TRUE(ins->execute().ok());
    EXPECT_EQ(ins->affected_rows(), 1);
  }
  ASSERT_TRUE(c->commit().ok());

  auto sel = c->prepare("SELECT id, amount, name, ts, n FROM r WHERE id >= ? ORDER BY id");
  sel->bind_int64(1, 2);
  ASSERT_TRUE(sel->execute().ok());
  DbStatus st;
  ASSERT_TRUE(sel->next(st));
  EXPECT_EQ(sel->column_int64(0), 2);
  EXPECT_DOUBLE_EQ(sel->column_double(1), 20.5);
  const std::string_view name = sel->column_text(2);
  const std::string_view ts = sel->column_text(3);  // a second column_text keeps the first valid
  EXPECT_EQ(name, "name 'quoted' \\ 2");
  EXPECT_EQ(ts, "2024-01-02 03:04:05");
  EXPECT_TRUE(sel->is_null(4));
  ASSERT_TRUE(sel->next(st));
  EXPECT_EQ(sel->column_int64(0), 3);
  EXPECT_EQ(sel->column_int64(4), 300);
  EXPECT_FALSE(sel->next(st));
  EXPECT_TRUE(st.ok());

  // Re-executing discards unread rows.
  sel->bind_int64(1, 1);
  ASSERT_TRUE(sel->execute().ok());
  ASSERT_TRUE(sel->next(st));
  EXPECT_EQ(sel->column_int64(0), 1);
  ASSERT_TRUE(sel->execute().ok());
  ASSERT_TRUE(sel->next(st));
  EXPECT_EQ(sel->column_int64(0), 1);

  // discard_rows() frees a stored result unread: the same statement, another statement and
  // COMMIT run next on the session (no "commands out of sync"), and next() then reports the end.
  ASSERT_TRUE(c->begin(TxMode::read_write).ok());
  ASSERT_TRUE(sel->execute().ok());
  EXPECT_TRUE(sel->discard_rows().ok());
  EXPECT_FALSE(sel->next(st));
  EXPECT_TRUE(st.ok());
  EXPECT_TRUE(sel->discard_rows().ok());  // twice, or with nothing to drop: harmless
  sel->bind_int64(1, 3);
  ASSERT_TRUE(sel->execute().ok());
  ASSERT_TRUE(sel->next(st));
  EXPECT_EQ(sel->column_int64(0), 3);
  EXPECT_TRUE(sel->discard_rows().ok());  // the rest of a partly read result
  ASSERT_TRUE(sel->execute().ok());
  EXPECT_TRUE(sel->discard_rows().ok());
  EXPECT_EQ(mysql_int(*c, "SELECT COUNT(*) FROM r"), 3);
  ASSERT_TRUE(c->commit().ok());

  // Affected rows count matched rows, as SQLite and PostgreSQL do (CLIENT_FOUND_ROWS).
  auto upd = c->prepare("UPDATE r SET n = n WHERE id <> ?");
  upd->bind_int64(1, 1);
  ASSERT_TRUE(upd->execute().ok());
  EXPECT_EQ(upd->affected_rows(), 2);
  auto del = c->prepare("DELETE FROM r WHERE id = ?");
  del->bind_int64(1, 42);
  ASSERT_TRUE(del->execute().ok());
  EXPECT_EQ(del->affected_rows(), 0);
  ASSERT_TRUE(c->rollback().ok());

  // Outside begin() a statement commits by itself (as in SQLite and PostgreSQL); inside, not
  // before commit().
  auto other = backend->connect();
  del->bind_int64(1, 3);
  ASSERT_TRUE(del->execute().ok());
  EXPECT_EQ(mysql_int(*other, "SELECT COUNT(*) FROM r"), 2);
  ASSERT_TRUE(c->begin(TxMode::read_write).ok());
  del->bind_int64(1, 2);
  ASSERT_TRUE(del->execute().ok());
  EXPECT_EQ(mysql_int(*other, "SELECT COUNT(*) FROM r"), 2);
  ASSERT_TRUE(c->commit().ok());
  EXPECT_EQ(mysql_int(*other, "SELECT COUNT(*) FROM r"), 1);
}

TEST_F(MysqlBackendTest, ReadOnlyTransactionsRefuseWritesAndBadSqlThrows) {
  auto c = backend->connect();
  make_two_rows(*c);
  auto upd = c->prepare("UPDATE t SET v = 1 WHERE id = 1");  // MariaDB refuses the prepare itself in one
  ASSERT_TRUE(c->begin(TxMode::read_only).ok());
  const DbStatus s = upd->execute();
  EXPECT_EQ(s.outcome, Outcome::fatal) << s.to_string();
  EXPECT_EQ(s.native_code, 1792) << s.to_string();  // ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION
  EXPECT_FALSE(s.connection_lost);
  ASSERT_TRUE(c->rollback().ok());
  try {
    c->prepare("SELEKT nonsense");
    FAIL() << "prepare of bad SQL must throw";
  } catch (const BackendError& e) {
    EXPECT_EQ(e.native_code(), 1064);
    EXPECT_NE(std::string(e.what()).find("SELEKT nonsense"), std::string::npos) << e.what();
  }
  // Several statements in one call, with a semicolon inside a literal.
  c->execute_immediate("INSERT INTO t VALUES (3, LENGTH('a;b')); -- done\n;");
  EXPECT_EQ(mysql_int(*c, "SELECT v FROM t WHERE id = 3"), 3);
  EXPECT_THROW(c->execute_immediate("INSERT INTO t VALUES (4, 0); INSERT INTO nowhere VALUES (1)"), BackendError);
}

TEST_F(MysqlBackendTest, RealDeadlockIsRetryableForExactlyOneSide) {
  auto a = backend->connect();
  auto b = backend->connect();
  auto observer = backend->connect();
  make_two_rows(*a);
  const auto b_id = mysql_int(*b, "SELECT CONNECTION_ID()");
  ASSERT_TRUE(a->begin(TxMode::read_write).ok());
  ASSERT_TRUE(b->begin(TxMode::read_write).ok());
  auto a1 = a->prepare("UPDATE t SET v = 1 WHERE id = 1");
  auto a2 = a->prepare("UPDATE t SET v = 1 WHERE id = 2");
  auto b2 = b->prepare("UPDATE t SET v = 2 WHERE id = 2");
  auto b1 = b->prepare("UPDATE t SET v = 2 WHERE id = 1");
  ASSERT_TRUE(a1->execute().ok());
  ASSERT_TRUE(b2->execute().ok());
  DbStatus b_status;
  std::thread tb([&] { b_status = b1->execute(); });  // waits for a's row 1
  wait_for_lock_wait(*observer, b_id);
  const DbStatus a_status = a2->execute();  // closes the cycle
  tb.join();
  const DbStatus& victim = a_status.ok() ? b_status : a_status;
  const DbStatus& survivor = a_status.ok() ? a_status : b_status;
  EXPECT_TRUE(survivor.ok()) << survivor.to_string();
  EXPECT_EQ(victim.outcome, Outcome::retryable) << victim.to_string();
  EXPECT_EQ(victim.native_code, 1213);
  EXPECT_EQ(victim.sqlstate, "40001");
  EXPECT_FALSE(victim.connection_lost);
  a->rollback();
  b->rollback();
}

TEST_F(MysqlBackendTest, LockWaitTimeoutIsRetryable) {
  auto a = backend->connect();
  auto b = backend->connect();
  make_two_rows(*a);
  b->execute_immediate("SET SESSION innodb_lock_wait_timeout = 1");
  ASSERT_TRUE(a->begin(TxMode::read_write).ok());
  auto lock = a->prepare("SELECT v FROM t WHERE id = 1 FOR UPDATE");
  ASSERT_TRUE(lock->execute().ok());
  ASSERT_TRUE(b->begin(TxMode::read_write).ok());
  auto upd = b->prepare("UPDATE t SET v = 5 WHERE id = 1");
  const DbStatus s = upd->execute();
  EXPECT_EQ(s.outcome, Outcome::retryable) << s.to_string();
  EXPECT_EQ(s.native_code, 1205);
  EXPECT_TRUE(b->rollback().ok());
  EXPECT_TRUE(a->rollback().ok());
}

TEST_F(MysqlBackendTest, CancelFlagEndsALockWaitWithRetryable) {
  std::atomic<bool> cancel{false};  // outlives the sessions that watch it
  auto a = backend->connect();
  auto b = backend->connect();
  auto observer = backend->connect();
  make_two_rows(*a);
  b->execute_immediate("SET SESSION innodb_lock_wait_timeout = 40");
  const auto b_id = mysql_int(*b, "SELECT CONNECTION_ID()");
  b->set_cancel_flag(&cancel);
  ASSERT_TRUE(a->begin(TxMode::read_write).ok());
  auto lock = a->prepare("UPDATE t SET v = 1 WHERE id = 1");
  ASSERT_TRUE(lock->execute().ok());
  ASSERT_TRUE(b->begin(TxMode::read_write).ok());
  auto upd = b->prepare("UPDATE t SET v = 2 WHERE id = 1");
  DbStatus s;
  std::thread tb([&] { s = upd->execute(); });
  wait_for_lock_wait(*observer, b_id);
  cancel = true;
  tb.join();  // long before the 40 s lock wait timeout: the watcher killed the wait
  EXPECT_EQ(s.outcome, Outcome::retryable) << s.to_string();
  EXPECT_EQ(s.native_code, 1317) << s.to_string();  // query interrupted, not 1205
  EXPECT_FALSE(s.connection_lost);
  // The session stays usable once the flag is cleared.
  cancel = false;
  EXPECT_TRUE(b->rollback().ok());
  EXPECT_TRUE(a->rollback().ok());
  EXPECT_EQ(mysql_int(*b, "SELECT v FROM t WHERE id = 1"), 0);
}

TEST_F(MysqlBackendTest, AKillQueryOfAnIdleSessionDoesNotHitItsNextStatement) {
  // The cancel watcher relies on this server behaviour (mysql_cancel.hpp).
  auto a = backend->connect();
  auto b = backend->connect();
  const auto a_id = mysql_int(*a, "SELECT CONNECTION_ID()");
  b->execute_immediate("KILL QUERY " + std::to_string(a_id));
  EXPECT_EQ(mysql_int(*a, "SELECT 7"), 7);
}

TEST_F(MysqlBackendTest, KilledSessionIsConnectionLostAndConnectWorksAgain) {
  auto a = backend->connect();
  auto b = backend->connect();
  make_two_rows(*a);
  const auto a_id = mysql_int(*a, "SELECT CONNECTION_ID()");
  ASSERT_TRUE(a->begin(TxMode::read_write).ok());
  auto upd = a->prepare("UPDATE t SET v = 9 WHERE id = 1");
  ASSERT_TRUE(upd->execute().ok());
  b->execute_immediate("KILL CONNECTION " + std::to_string(a_id));
  const DbStatus s = upd->execute();
  EXPECT_TRUE(s.connection_lost) << s.to_string();
  EXPECT_EQ(s.outcome, Outcome::retryable) << s.to_string();
  // A COMMIT on a lost session: its effect is unknown to the client, so in doubt.
  const DbStatus c = a->commit();
  EXPECT_TRUE(c.connection_lost) << c.to_string();
  EXPECT_EQ(c.outcome, Outcome::in_doubt) << c.to_string();
  a.reset();
  auto fresh = backend->connect();
  EXPECT_EQ(mysql_int(*fresh, "SELECT v FROM t WHERE id = 1"), 0);  // the killed work was rolled back
}

/// A Unix-socket proxy in front of the real server that can freeze: it then stops accepting and
/// forwarding, but keeps every socket open — what a client sees of a SIGSTOPped server, without
/// stopping the shared server of the other tests.
class FreezingProxy {
 public:
  explicit FreezingProxy(std::string upstream) : upstream_(std::move(upstream)) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "drivelab-proxy-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
    path_ = dir_ + "/s";
    listener_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path_.c_str(), sizeof a.sun_path - 1);
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(listener_, 64) != 0)
      throw std::runtime_error("proxy: bind/listen failed");
    thread_ = std::thread([this] { run(); });
  }
  ~FreezingProxy() {
    done_ = true;
    thread_.join();
    for (int fd : fds_) ::close(fd);
    ::close(listener_);
    std::filesystem::remove_all(dir_);
  }
  const std::string& path() const { return path_; }
  void freeze() { frozen_ = true; }

 private:
  int connect_upstream() const {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, upstream_.c_str(), sizeof a.sun_path - 1);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) throw std::runtime_error("proxy: upstream");
    return fd;
  }
  void run() {
    while (!done_) {
      if (frozen_) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        continue;
      }
      std::vector<pollfd> p{{listener_, POLLIN, 0}};
      for (int fd : fds_) p.push_back({fd, POLLIN, 0});
      if (::poll(p.data(), p.size(), 10) <= 0) continue;
      if (p[0].revents & POLLIN) {
        const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
        if (client >= 0) {
          fds_.push_back(client);
          fds_.push_back(connect_upstream());  // pairs: (2k, 2k+1)
        }
      }
      for (std::size_t i = 1; i < p.size(); ++i) {
        if (!(p[i].revents & (POLLIN | POLLHUP))) continue;
        const std::size_t k = i - 1;
        const int to = fds_[k ^ 1u];
        char buf[65536];
        const ssize_t n = ::recv(p[i].fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n > 0)
          (void)::send(to, buf, static_cast<std::size_t>(n), MSG_NOSIGNAL);
        else if (n == 0)
          ::shutdown(to, SHUT_WR);
      }
    }
  }

  std::string upstream_, dir_, path_;
  int listener_ = -1;
  std::vector<int> fds_;  // client, upstream, client, upstream, ...
  std::atomic<bool> frozen_{false}, done_{false};
  std::thread thread_;
};

TEST_F(MysqlBackendTest, AFrozenServerEndsTheCallsOfAStoppingRunAsLostConnections) {
  // Run sessions have no client read timeout (mysql_backend.cpp): the call watcher bounds a
  // call to a server that stopped answering. Here the server freezes under a running SELECT
  // and a COMMIT, then the run stops: the KILL QUERY gets no answer, so the watcher shuts the
  // sessions' sockets down and both calls end as lost connections, the COMMIT in doubt.
  ASSERT_TRUE(drivelab::testing::services().has_value());
  FreezingProxy proxy(drivelab::testing::services()->mysql_socket);
  MysqlOptions o = test::mysql_options(database);
  o.endpoint.socket_path = proxy.path();
  auto via_proxy = make_mysql_backend(o);
  std::atomic<bool> cancel{false};  // outlives the sessions that watch it
  auto a = via_proxy->connect();
  auto c = via_proxy->connect();
  a->set_cancel_flag(&cancel);
  c->set_cancel_flag(&cancel);
  make_two_rows(*a);
  ASSERT_TRUE(c->begin(TxMode::read_write).ok());
  auto upd = c->prepare("UPDATE t SET v = 3 WHERE id = 2");
  ASSERT_TRUE(upd->execute().ok());
  auto q = a->prepare("SELECT v FROM t WHERE id = 1");

  proxy.freeze();
  DbStatus sq, sc;
  std::thread ta([&] { sq = q->execute(); });
  std::thread tc([&] { sc = c->commit(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // both wait for replies
  const auto t0 = std::chrono::steady_clock::now();
  cancel = true;
  ta.join();
  tc.join();
  const double waited_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(sq.connection_lost) << sq.to_string();
  EXPECT_EQ(sq.outcome, Outcome::retryable) << sq.to_string();
  EXPECT_TRUE(sc.connection_lost) << sc.to_string();
  EXPECT_EQ(sc.outcome, Outcome::in_doubt) << sc.to_string();
  // The side connection's connect timeout (5 s) or read timeout (10 s), not a hang.
  EXPECT_LT(waited_s, 30.0);
  EXPECT_GE(waited_s, 1.0);  // the server got its chance to answer the KILL
  // A later session (a verification, the cleanup) cannot connect either; its error says why.
  try {
    via_proxy->connect();
    ADD_FAILURE() << "connected to a frozen server";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("the server stopped answering"), std::string::npos) << e.what();
  }
}

/// Text that needs escaping in a SQL literal, and some that only looks like it does.
std::vector<std::string> awkward_texts() {
  std::vector<std::string> t = {"",         "'",           "''",         "\\",         "\\'",
                                "a\\nb",    "line\nbreak", "cr\r\nlf",   "tab\there",  "ctrl-z\x1a",
                                "%_",       "\"double\"",  "`tick`",     "semi;colon", "-- not a comment",
                                "/* no */", "é ü 日本 🙂", "trailing  ", "O'Brien\\"};
  std::string bytes;
  for (int c = 1; c < 128; ++c) bytes += static_cast<char>(c);  // every ASCII byte but NUL
  t.push_back(bytes);
  std::string long_text;
  for (int i = 0; i < 150; ++i) long_text += "it's \\ a \"test\" ";
  t.push_back(long_text);
  return t;
}

TEST_F(MysqlBackendTest, BulkLoaderRoundTripsAwkwardTextInBothEscapingModes) {
  auto c = backend->connect_for_load();
  c->execute_immediate(
      "CREATE TABLE b (id INTEGER NOT NULL PRIMARY KEY, t VARCHAR(3000), "
      "d DOUBLE, n INTEGER, m DECIMAL(12,2)) ENGINE=InnoDB CHARACTER SET utf8mb4");
  const auto texts = awkward_texts();
  const double doubles[] = {0.1, -1e-7, 123456.789, 1e300, 0.0};
  constexpr int kRows = 6000;  // ~2.7 MB of text: three statements or more
  for (const char* mode : {"default", "NO_BACKSLASH_ESCAPES"}) {
    if (std::string(mode) != "default")
      c->execute_immediate("SET SESSION sql_mode = CONCAT(@@SESSION.sql_mode, ',NO_BACKSLASH_ESCAPES')");
    c->execute_immediate("DELETE FROM b");
    ASSERT_TRUE(c->begin(TxMode::read_write).ok());
    auto loader = c->bulk_loader("b", {"id", "t", "d", "n", "m"});
    for (int i = 0; i < kRows; ++i) {
      loader->add_int64(i);
      loader->add_text(texts[static_cast<std::size_t>(i) % texts.size()]);
      loader->add_double(doubles[i % 5]);
      if (i % 7 == 0)
        loader->add_null();
      else
        loader->add_int64(-i);
      loader->add_double(i * 0.01);
      loader->end_row();
    }
    loader->flush();
    ASSERT_TRUE(c->commit().ok());

    auto q = c->prepare("SELECT id, t, d, n, m FROM b ORDER BY id");
    ASSERT_TRUE(q->execute().ok());
    DbStatus st;
    int n = 0;
    while (q->next(st)) {
      const auto i = q->column_int64(0);
      ASSERT_EQ(i, n) << mode;
      ASSERT_EQ(q->column_text(1), texts[static_cast<std::size_t>(i) % texts.size()]) << mode << " row " << i;
      ASSERT_EQ(q->column_double(2), doubles[i % 5]) << mode << " row " << i;
      ASSERT_EQ(q->is_null(3), i % 7 == 0) << mode;
      if (i % 7 != 0) {
        ASSERT_EQ(q->column_int64(3), -i);
      }
      ASSERT_EQ(q->column_text(4), fmt::format("{:.2f}", static_cast<double>(i) * 0.01)) << mode;
      ++n;
    }
    EXPECT_TRUE(st.ok());
    EXPECT_EQ(n, kRows) << mode;
    c->rollback();
  }
  EXPECT_THROW(c->bulk_loader("b", {"id"})->add_double(std::nan("")), BackendError);

  // Rows a caller forgot to flush() are sent by commit(), inside the transaction.
  c->execute_immediate("DELETE FROM b");
  auto small = c->bulk_loader("b", {"id", "t"});
  ASSERT_TRUE(c->begin(TxMode::read_write).ok());
  small->add_int64(1);
  small->add_text("unflushed");
  small->end_row();
  ASSERT_TRUE(c->commit().ok());
  EXPECT_EQ(mysql_text(*backend->connect(), "SELECT t FROM b WHERE id = 1"), "unflushed");
}

TEST_F(MysqlBackendTest, DestroyRefusesAForeignDatabaseAndEmptiesOurs) {
  auto c = backend->connect();
  c->execute_immediate(
      "CREATE TABLE payroll (id INTEGER PRIMARY KEY); "
      "CREATE TABLE invoices (id INTEGER PRIMARY KEY)");
  try {
    backend->destroy();
    FAIL() << "destroy() must refuse a database with foreign tables";
  } catch (const BackendError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(database), std::string::npos) << m;
    EXPECT_NE(m.find("invoices"), std::string::npos) << m;
    EXPECT_NE(m.find("payroll"), std::string::npos) << m;
  }
  EXPECT_EQ(mysql_int(*c, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE()"), 2);

  c->execute_immediate("CREATE TABLE drivelab_meta (name VARCHAR(64) PRIMARY KEY, value VARCHAR(200))");
  c->execute_immediate("CREATE VIEW v AS SELECT id FROM payroll");
  EXPECT_TRUE(backend->exists());
  backend->destroy();
  EXPECT_FALSE(backend->exists());
  EXPECT_EQ(mysql_int(*c, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE()"), 0);
  backend->destroy();  // empty: a no-op
}

TEST_F(MysqlBackendTest, ConnectErrorsNameWhatFailedButNeverThePassword) {
  {
    MysqlOptions o = test::mysql_options(database);
    o.endpoint.socket_path = "/nonexistent/dir/mysqld.sock";
    try {
      make_mysql_backend(o)->connect();
      FAIL() << "connect to a missing socket must throw";
    } catch (const BackendError& e) {
      EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/mysqld.sock"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("cannot connect"), std::string::npos) << e.what();
    }
  }
  auto c = backend->connect();
  const std::string user = "dl_u" + std::to_string(::getpid());
  const std::string password = "S3cret-Pw!";
  c->execute_immediate("DROP USER IF EXISTS '" + user + "'@'localhost'");
  c->execute_immediate("CREATE USER '" + user + "'@'localhost' IDENTIFIED BY '" + password + "'");
  MysqlOptions o = test::mysql_options(database + "_absent");
  o.endpoint.user = user;
  o.endpoint.password = "Wr0ng-Pw!";
  try {
    make_mysql_backend(o)->connect();
    ADD_FAILURE() << "a wrong password must throw";
  } catch (const BackendError& e) {
    const std::string m = e.what();
    EXPECT_EQ(e.native_code(), 1045);
    EXPECT_NE(m.find(user), std::string::npos) << m;
    EXPECT_NE(m.find("access denied"), std::string::npos) << m;
    EXPECT_EQ(m.find("Wr0ng-Pw!"), std::string::npos) << m;
  }
  o.endpoint.password = password;
  try {
    make_mysql_backend(o)->connect();  // a database this user may neither use nor create
    ADD_FAILURE() << "a missing database the user may not create must throw";
  } catch (const BackendError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(database + "_absent"), std::string::npos) << m;
    EXPECT_NE(m.find(user), std::string::npos) << m;
    EXPECT_EQ(m.find(password), std::string::npos) << m;
  }
  c->execute_immediate("DROP USER '" + user + "'@'localhost'");
}

TEST_F(MysqlBackendTest, CountersAndDescriptionAreNumbersAndCarryNoPassword) {
  MysqlOptions o = test::mysql_options(database);
  o.endpoint.password = "never-shown-pw";  // the server's socket auth ignores it
  backend = make_mysql_backend(o);
  auto c = backend->connect();
  c->execute_immediate("CREATE TABLE t (id INTEGER PRIMARY KEY) ENGINE=InnoDB; INSERT INTO t VALUES (1)");
  const results::Json before = backend->server_counters();
  ASSERT_TRUE(c->begin(TxMode::read_write).ok());
  c->execute_immediate("INSERT INTO t VALUES (2)");
  ASSERT_TRUE(c->commit().ok());
  const results::Json after = backend->server_counters();
  for (const char* k :
       {"Handler_read_key", "Handler_write", "Innodb_data_writes", "Innodb_data_fsyncs", "Innodb_os_log_written",
        "Innodb_buffer_pool_read_requests", "Com_commit", "Innodb_row_lock_waits", "Innodb_deadlocks"}) {
    ASSERT_TRUE(after.contains(k)) << k << " in " << after.dump();
    EXPECT_TRUE(after[k].is_number()) << k;
  }
  EXPECT_GE(after["Handler_write"].get<std::uint64_t>(), before["Handler_write"].get<std::uint64_t>() + 1);
  EXPECT_GE(after["Com_commit"].get<std::uint64_t>(), before["Com_commit"].get<std::uint64_t>() + 1);

  const results::Json d = backend->describe();
  EXPECT_EQ(d["backend"], "mysql");
  EXPECT_NE(d["server_version"].get<std::string>().find("MariaDB"), std::string::npos) << d.dump();
  EXPECT_EQ(d["connector"], "MySQL Connector/C++ 1.1.12");
  EXPECT_EQ(d["database"], database);
  for (const char* v : {"innodb_buffer_pool_size", "innodb_flush_log_at_trx_commit", "innodb_flush_method",
                        "innodb_log_file_size", "sync_binlog", "max_connections", "max_prepared_stmt_count"})
    EXPECT_TRUE(d["variables"].contains(v)) << v << " in " << d.dump();
  EXPECT_TRUE(d["variables"]["max_connections"].is_number());
  EXPECT_EQ(d.dump().find("never-shown-pw"), std::string::npos);
  EXPECT_EQ(backend->capabilities().max_load_threads, 64);
  EXPECT_FALSE(backend->capabilities().serialized_writers);
  EXPECT_EQ(backend->dialect().for_update, " FOR UPDATE");
  EXPECT_EQ(backend->dialect().table_options, " ENGINE=InnoDB");
  ASSERT_TRUE(backend->size_bytes().has_value());
  EXPECT_GT(*backend->size_bytes(), 0u);
}

}  // namespace
}  // namespace drivelab::oltp
