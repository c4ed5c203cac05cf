// The hints of a TPC-C run, chosen from numbers and error values: why a login failed (too many
// connections, time-out, refused: classify_connect_failure, login_failure_message), why users
// were still logging in when the measured phase began (login_lag_warning), and whether queue
// wait at the pool or a stalled service time shaped the response times (pool_wait_warning).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "drivelab/core/errors.hpp"
#include "drivelab/oltp/backend/connect_failure.hpp"
#include "tpcc_report.hpp"    // oltp/tpcc/src
#include "tpcc_terminal.hpp"  // oltp/tpcc/src

namespace drivelab::oltp::tpcc::detail {
namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(ConnectFailure, SortedFromTheErrorValuesOfEachBackend) {
  // libpq's texts (PostgreSQL 15/16 clients; no SQLSTATE for a failed connection), the
  // PostgreSQL backend's own 53300 for a full server.
  EXPECT_EQ(classify_connect_failure("", 0,
                                     "connection to server on socket \"/run/pg/.s.PGSQL.5432\" failed: "
                                     "FATAL:  sorry, too many clients already"),
            ConnectFailure::too_many_connections);
  EXPECT_EQ(classify_connect_failure("", 0, "FATAL:  too many connections for database \"tpcc\""),
            ConnectFailure::too_many_connections);
  EXPECT_EQ(classify_connect_failure("", 0, "FATAL:  too many connections for role \"bench\""),
            ConnectFailure::too_many_connections);
  EXPECT_EQ(classify_connect_failure("", 0,
                                     "FATAL:  remaining connection slots are reserved for roles with the "
                                     "SUPERUSER attribute"),
            ConnectFailure::too_many_connections);
  EXPECT_EQ(classify_connect_failure("53300", 0, "postgres: no session left"), ConnectFailure::too_many_connections);
  EXPECT_EQ(classify_connect_failure("08001", 0,
                                     "connection to server at \"10.255.255.1\", port 5432 failed: "
                                     "timeout expired"),
            ConnectFailure::timed_out);
  EXPECT_EQ(classify_connect_failure("08001", 0,
                                     "connection to server at \"db1\" (10.0.0.7), port 5432 failed: "
                                     "Connection timed out"),
            ConnectFailure::timed_out);
  EXPECT_EQ(classify_connect_failure("08001", 0,
                                     "connection to server at \"127.0.0.1\", port 1 failed: Connection "
                                     "refused Is the server running on that host and accepting TCP/IP "
                                     "connections?"),
            ConnectFailure::refused);
  EXPECT_EQ(classify_connect_failure("08001", 0,
                                     "connection to server on socket \"/x/.s.PGSQL.5999\" failed: No "
                                     "such file or directory"),
            ConnectFailure::refused);

  // MySQL / MariaDB: the error number decides; 2002/2003 carry errno in parentheses.
  EXPECT_EQ(classify_connect_failure("08004", 1040, "Too many connections"), ConnectFailure::too_many_connections);
  EXPECT_EQ(classify_connect_failure("42000", 1203,
                                     "User bench already has more than 'max_user_connections' "
                                     "active connections"),
            ConnectFailure::too_many_connections);
  EXPECT_EQ(classify_connect_failure("HY000", 2003, "Can't connect to server on '10.255.255.1' (110)"),
            ConnectFailure::timed_out);
  EXPECT_EQ(classify_connect_failure("HY000", 2013,
                                     "Lost connection to server at 'handshake: reading initial "
                                     "communication packet', system error: 110"),
            ConnectFailure::timed_out);
  EXPECT_EQ(classify_connect_failure("HY000", 2003, "Can't connect to MySQL server on '127.0.0.1' (111)"),
            ConnectFailure::refused);
  EXPECT_EQ(
      classify_connect_failure("HY000", 2002, "Can't connect to local server through socket '/x/mysqld.sock' (2)"),
      ConnectFailure::refused);

  // ODBC: the driver manager's time-out states; a psqlODBC text passed through.
  EXPECT_EQ(classify_connect_failure("HYT00", 0, "[unixODBC][MariaDB][ODBC 3.1 Driver]Login timeout"),
            ConnectFailure::timed_out);
  EXPECT_EQ(classify_connect_failure("08001", 101, "FATAL:  sorry, too many clients already"),
            ConnectFailure::too_many_connections);

  // The others say their own cause.
  EXPECT_EQ(classify_connect_failure("28P01", 0, "password authentication failed for user \"bench\""),
            ConnectFailure::other);
  EXPECT_EQ(classify_connect_failure("42000", 1049, "Unknown database 'tpcc'"), ConnectFailure::other);
  EXPECT_EQ(classify_connect_failure("HY000", 2003, "Can't connect to MySQL server on 'db1' (113)"),
            ConnectFailure::other);  // EHOSTUNREACH: neither a time-out nor a refusal
}

TEST(LoginFailure, EachKindGetsItsOwnHint) {
  const BackendError full(
      "postgres: the server at socket directory /run/pg port 5432 has no session left for user "
      "\"bench\" on database \"tpcc\" (too many connections, SQLSTATE 53300): FATAL:  sorry, "
      "too many clients already",
      "53300");
  const std::string m = login_failure_message("user 7", 50, 6, 50, full);
  EXPECT_TRUE(has(m,
                  "user 7 of 50 could not log in (6 logged in before it): the server refused the session for too "
                  "many connections (SQLSTATE 53300): its max_connections (PostgreSQL: or the database's or role's "
                  "CONNECTION LIMIT; MySQL: or max_user_connections) is below the sessions open at once, this "
                  "test's 50 users + 1 plus any other client's; raise it, or lower users: postgres: the server at"))
      << m;

  const BackendError full_mysql("mysql: connect to socket /run/my.sock as 'bench': Too many connections (error 1040)",
                                "08004", 1040);
  EXPECT_TRUE(has(login_failure_message("user 3", 10, 2, 50, full_mysql),
                  "the server refused the session for too many connections (error 1040): its max_connections"));

  const BackendError slow(
      "postgres: server unreachable at host db1 port 5432: connection to server at \"db1\" "
      "(10.0.0.7), port 5432 failed: timeout expired",
      "08001");
  const std::string t = login_failure_message("user 12", 50, 11, 2, slow);
  EXPECT_TRUE(has(t,
                  "user 12 of 50 could not log in (11 logged in before it): connecting timed out: the server did "
                  "not complete the login within the connect time-out, so it (or its drive) stalls or the network "
                  "drops packets; a server at max_connections refuses at once instead; lower login_rate (now 2/s) "
                  "or find what stalls the server: postgres: server unreachable"))
      << t;
  EXPECT_FALSE(has(t, "max_connections below")) << t;
  EXPECT_TRUE(has(login_failure_message("user 12", 50, 11, 0, slow),
                  "set login_rate to stagger the logins (now 0: "
                  "all at once)"));

  const BackendError refused(
      "mysql: cannot connect to host 127.0.0.1 port 3306: Can't connect to MySQL server on "
      "'127.0.0.1' (111) (error 2003)",
      "HY000", 2003);
  const std::string r = login_failure_message("user 1", 4, 0, 50, refused);
  EXPECT_TRUE(has(r,
                  "user 1 of 4 could not log in (0 logged in before it): the connection was refused: nothing "
                  "accepts connections at that address (the server is not running, has stopped or crashed, or "
                  "listens elsewhere): mysql: cannot connect"))
      << r;
  EXPECT_FALSE(has(r, "max_connections")) << r;

  // Another cause: the error alone, no guess.
  const std::runtime_error other("odbc: authentication failed for user 'bench'");
  EXPECT_EQ(login_failure_message("user 2", 4, 1, 50, other),
            "user 2 of 4 could not log in (1 logged in before it): odbc: authentication failed for user 'bench'");
}

TEST(LoginLag, AShortWarmUpAndSlowLoginsAreToldApart) {
  // 100 users at 10/s: the last is due at 10 s; a 5 s warm-up is too short.
  const std::string short_warmup = login_lag_warning(48, 100, 10, 5.0);
  EXPECT_EQ(short_warmup,
            "only 48 of 100 users were logged in when the measured phase began (login_rate 10/s): the last login was "
            "due 10 s into the 5 s warm-up; make warmup at least users / login_rate + 1 s = 11 s");
  // The same schedule in a 30 s warm-up: the logins themselves were slow (connect time-outs).
  const std::string slow = login_lag_warning(90, 100, 10, 30.0);
  EXPECT_EQ(slow,
            "only 90 of 100 users were logged in when the measured phase began (login_rate 10/s), though the last "
            "login was due 10 s into the 30 s warm-up: the others were still connecting, so the server accepts "
            "sessions slowly (a connect waits up to its time-out) and a longer warm-up would not fix it; the measured "
            "phase ran with fewer users than asked: find what slows the server's logins, or lower login_rate");
  EXPECT_FALSE(has(slow, "make warmup")) << slow;
  // login_rate 0: all due at once (no division by zero in the advice).
  EXPECT_TRUE(has(login_lag_warning(3, 10, 0, 20.0),
                  "though every login was due at once into the 20 s warm-up: the "
                  "others were still connecting"));
  EXPECT_TRUE(has(login_lag_warning(3, 10, 0, 0.5), "make warmup at least users / login_rate + 1 s = 1 s"));
  // warmup: 0 measures a fraction of a millisecond of start-up: said as 0 s.
  EXPECT_TRUE(has(login_lag_warning(3, 10, 1, 0.000537), "due 10 s into the 0 s warm-up;"));
}

/// A pooled run's totals from numbers (ms): `n` New-Orders and `n` Payments, each with its
/// service times, the given queue wait, response time = queue wait + service time.
DriverTotals pool_run(int n, double service_ms, double slow_service_ms, int slow_per_hundred, double queue_ms) {
  DriverTotals t;
  t.workers = 8;
  t.pool_utilisation = 0.97;
  for (TxType type : {TxType::new_order, TxType::payment}) {
    TypeStats& s = t.by_type[static_cast<std::size_t>(type)];
    for (int i = 0; i < n; ++i) {
      const double service = i % 100 < slow_per_hundred ? slow_service_ms : service_ms;
      s.service_time.record(static_cast<std::int64_t>(service * 1e6));
      s.queue_wait.record(static_cast<std::int64_t>(queue_ms * 1e6));
      s.response_time.record(static_cast<std::int64_t>((service + queue_ms) * 1e6));
      ++s.commits;
    }
  }
  return t;
}

TEST(PoolWait, SaysWhatWasMeasuredAndBlamesThePoolOnlyWhileServiceTimesAreSteady) {
  // Service time steady at 2 ms (p99 4 ms: 2x), 8 ms waiting for a connection: the pool.
  const auto steady = pool_wait_warning(pool_run(1000, 2.0, 4.0, 5, 8.0), false);
  ASSERT_TRUE(steady.has_value());
  // 10 ms reads 10.01 ms: the histogram's bin (about 0.1% wide) holding it.
  EXPECT_TRUE(has(*steady,
                  "queue wait is 80% of the response time at p50 (8.00 of 10.01 ms): transactions waited "
                  "for one of the pool's 8 connections (97% busy) while the service time on a connection "
                  "stayed steady (p50 2.00 ms, p99 4.00 ms; new_order"))
      << *steady;
  EXPECT_TRUE(has(*steady,
                  "'s p99 is 2.0x its p50, below 10x): the pool, not the database or the drive, shaped the "
                  "response times; raise connections if the database has capacity left"))
      << *steady;
  const auto open_loop = pool_wait_warning(pool_run(1000, 2.0, 4.0, 5, 8.0), true);
  ASSERT_TRUE(open_loop.has_value());
  EXPECT_TRUE(has(*open_loop, "lower rate, or raise connections if the database has capacity left")) << *open_loop;

  // 2% of the transactions stall for 400 ms on the drive: the service time p99 is 200x its p50;
  // the connections were held by them, so the warning blames the stall, not the pool's size.
  const auto stalled = pool_wait_warning(pool_run(1000, 2.0, 400.0, 2, 8.0), false);
  ASSERT_TRUE(stalled.has_value());
  EXPECT_TRUE(has(*stalled,
                  "transactions waited for one of the pool's 8 connections (97% busy) because the service "
                  "time on a connection stalled (p50 2.00 ms, p99 400."))
      << *stalled;
  EXPECT_TRUE(has(*stalled,
                  "x its p50, at or above 10x): slow transactions held the connections, so the database "
                  "server or its drive stalled (I/O, checkpoint or lock waits), not the pool's size; more "
                  "connections would wait inside the server instead"))
      << *stalled;
  EXPECT_FALSE(has(*stalled, "raise connections")) << *stalled;
  EXPECT_FALSE(has(*stalled, "not the drive")) << *stalled;

  // Queue wait at 5% of the response time: no warning.
  EXPECT_FALSE(pool_wait_warning(pool_run(1000, 2.0, 4.0, 5, 0.1), false).has_value());
  EXPECT_FALSE(pool_wait_warning(DriverTotals{}, false).has_value());
}

}  // namespace
}  // namespace drivelab::oltp::tpcc::detail
