// kind: sysbench on the real PostgreSQL and MariaDB test servers (db_services fixture): a short
// oltp_read_write run with sysbench's `special` distribution (hot rows: deadlocks and duplicate
// keys happen and must be ignored and retried), and the prepared-statement pre-flight.
#include <gtest/gtest.h>

#include <stdio.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/oltp/backends/mysql/mysql_backend.hpp"
#include "drivelab/oltp/backends/postgres/postgres_backend.hpp"
#include "drivelab/oltp/register.hpp"
#include "drivelab/oltp/sysbench/sysbench_config.hpp"
#include "drivelab/runner/protocol.hpp"
#include "drivelab/runner/run.hpp"
#include "services.hpp"
#include "test_db.hpp"

namespace drivelab::oltp {
namespace {

namespace fs = std::filesystem;

struct SysbenchServerTest : ::testing::Test {
  test::TempDir dir;
  std::ostringstream out;
  testing::Services svc;
  std::string database = testing::unique_database_name();

  void SetUp() override {
    auto s = testing::services();
    ASSERT_TRUE(s.has_value());
    svc = *s;
    fs::create_directories(dir.path() / "target");
  }

  std::unique_ptr<Backend> pg_admin() {
    PostgresOptions o;
    o.endpoint.socket_path = svc.pg_socket_dir;
    o.endpoint.port = svc.pg_port;
    o.endpoint.user = svc.pg_user;
    o.database = svc.pg_database;
    return make_postgres_backend(o);
  }
  std::unique_ptr<Backend> mysql_admin() {
    MysqlOptions o;
    o.endpoint.socket_path = svc.mysql_socket;
    o.endpoint.user = svc.mysql_user;
    o.database = "mysql";
    return make_mysql_backend(o);
  }
  void drop_databases() {
    pg_admin()->connect()->execute_immediate(fmt::format("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", database));
    mysql_admin()->connect()->execute_immediate(fmt::format("DROP DATABASE IF EXISTS `{}`", database));
  }
  void TearDown() override {
    if (!svc.pg_socket_dir.empty()) drop_databases();
  }

  std::string pg_section() const {
    return fmt::format("backend: postgres, database: {}, server: {{connection: 'host={} port={}', user: {}}}", database,
                       svc.pg_socket_dir, svc.pg_port, svc.pg_user);
  }
  std::string mysql_section() const {
    return fmt::format("backend: mysql, database: {}, server: {{connection: 'unix://{}', user: {}}}", database,
                       svc.mysql_socket, svc.mysql_user);
  }

  runner::RunOutcome run(const std::string& sysbench_keys, const std::string& duration = "2s") {
    runner::Registry reg;
    register_emulators(reg);
    config::Diagnostics diags;
    const std::string yaml = fmt::format(
        "protocol: p\nseed: 9\ntests:\n  - {{name: sb, kind: sysbench, warmup: 0s, duration: {}, interval: 1s,\n"
        "     sysbench: {{{}}}}}\n",
        duration, sysbench_keys);
    config::Document doc = config::Document::load_string(yaml, "p.yaml", diags);
    runner::Protocol p = runner::decode_protocol(doc, reg, diags);
    EXPECT_TRUE(diags.empty()) << diags.to_string() << "\n" << yaml;
    runner::RunOptions o;
    o.target = dir.path() / "target";
    o.out_dir = dir.path() / "out";
    o.out = &out;
    runner::StopFlag stop;
    return runner::run_protocol(p, o, stop);
  }

  static double metric(const results::TestRecord& t, std::string_view name) {
    const auto* m = t.find_metric(name);
    EXPECT_NE(m, nullptr) << name;
    return m ? m->value : -1;
  }

  /// A short special-distribution run: complete, sysbench's query mix, tables intact.
  void expect_good_run(const results::TestRecord& t) {
    ASSERT_EQ(t.status, results::Status::complete) << t.reason << "\n" << out.str();
    const double tx = metric(t, "transactions");
    EXPECT_GT(tx, 10);
    // Restarted transactions add the queries of their failed attempts: >= 20 per transaction.
    EXPECT_GE(metric(t, "queries"), 20 * tx);
    EXPECT_GE(metric(t, "reads"), 14 * tx);
    EXPECT_GE(metric(t, "other"), 2 * tx);
    EXPECT_EQ(metric(t, "reconnects"), 0.0);
    ASSERT_EQ(t.checks.size(), 2u);
    for (const auto& c : t.checks) EXPECT_TRUE(c.passed) << c.name << ": " << c.detail;
    EXPECT_GE(t.intervals.size(), 2u);
  }
};

TEST_F(SysbenchServerTest, ReadWriteOnPostgres) {
  pg_admin()->connect()->execute_immediate(fmt::format("CREATE DATABASE \"{}\"", database));
  const auto r = run(fmt::format("{}, tables: 2, table_size: 2000, threads: 4", pg_section()));
  const auto& t = r.record.tests[0];
  expect_good_run(t);
  EXPECT_EQ(t.details["preflight"]["max_connections"], 300);
  EXPECT_NE(t.details["sysbench_command"].get<std::string>().find("--db-driver=pgsql"), std::string::npos);
  // cleanup dropped the tables (they were drivelab's).
  PostgresOptions o;
  o.endpoint.socket_path = svc.pg_socket_dir;
  o.endpoint.port = svc.pg_port;
  o.endpoint.user = svc.pg_user;
  o.database = database;
  EXPECT_FALSE(make_postgres_backend(o)->exists());
}

TEST_F(SysbenchServerTest, ReadWriteOnMariadb) {
  const auto r = run(fmt::format("{}, tables: 2, table_size: 2000, threads: 4", mysql_section()));
  const auto& t = r.record.tests[0];
  expect_good_run(t);
  EXPECT_EQ(t.details["preflight"]["prepared_statements_needed"], 4 * 18);
  EXPECT_NE(t.details["sysbench_command"].get<std::string>().find("--db-driver=mysql"), std::string::npos);
}

/// Runs `command` with /bin/sh: its exit status (-1 if it did not exit) and its output (stdout and
/// stderr together).
std::pair<int, std::string> run_shell(const std::string& command) {
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return {-1, "popen failed"};
  std::string output;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) output.append(buf, n);
  const int st = ::pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, output};
}

std::string replaced(std::string text, std::string_view what, std::string_view with) {
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + with.size()))
    text.replace(at, what.size(), with);
  return text;
}

/// details.sysbench_command names the server and the database: with the password placeholder
/// filled in, Debian's sysbench 1.0.20 runs it on the tables the test left (keep_database).
void expect_sysbench_runs(const std::string& command) {
  const auto [status, output] = run_shell(command);
  EXPECT_EQ(status, 0) << command << "\n" << output;
  EXPECT_NE(output.find("SQL statistics:"), std::string::npos) << command << "\n" << output;
  EXPECT_NE(output.find("transactions:"), std::string::npos) << output;
  EXPECT_EQ(output.find("FATAL"), std::string::npos) << output;
}

TEST_F(SysbenchServerTest, RecordedCommandRunsSysbenchOnTheSameMariadbDatabase) {
  // A user with a password (password_file): the record holds the placeholder, never the password.
  const std::string user = "dl_sb_command";
  const std::string password = "Pw-sb-7731";
  auto admin_backend = mysql_admin();
  auto admin = admin_backend->connect();
  admin->execute_immediate(fmt::format("CREATE DATABASE `{}`", database));
  admin->execute_immediate(fmt::format("DROP USER IF EXISTS '{}'@'localhost'", user));
  admin->execute_immediate(fmt::format("CREATE USER '{}'@'localhost' IDENTIFIED BY '{}'", user, password));
  admin->execute_immediate(fmt::format("GRANT ALL ON `{}`.* TO '{}'@'localhost'", database, user));
  std::ofstream(dir.path() / "pw") << password << "\n";
  const auto r = run(fmt::format("backend: mysql, database: {}, server: {{connection: 'unix://{}', user: {}, "
                                 "password_file: '{}'}}, tables: 2, table_size: 1000, threads: 2, "
                                 "keep_database: true",
                                 database, svc.mysql_socket, user, (dir.path() / "pw").string()),
                     "1s");
  const auto& t = r.record.tests[0];
  ASSERT_EQ(t.status, results::Status::complete) << t.reason << "\n" << out.str();
  const std::string cmd = t.details["sysbench_command"].get<std::string>();
  EXPECT_EQ(cmd, fmt::format("sysbench oltp_read_write --tables=2 --table-size=1000 --threads=2 --time=1 "
                             "--report-interval=1 --rand-type=special --db-driver=mysql --mysql-socket={} "
                             "--mysql-user={} --mysql-db={} --mysql-password='{}' run",
                             svc.mysql_socket, user, database, sysbench::kSysbenchPasswordPlaceholder));
  EXPECT_EQ(results::to_json(r.record).dump().find(password), std::string::npos) << "the password reached the record";
  expect_sysbench_runs(replaced(cmd, sysbench::kSysbenchPasswordPlaceholder, password));
  admin->execute_immediate(fmt::format("DROP USER '{}'@'localhost'", user));
}

TEST_F(SysbenchServerTest, RecordedCommandRunsSysbenchOnTheSamePostgresDatabase) {
  pg_admin()->connect()->execute_immediate(fmt::format("CREATE DATABASE \"{}\"", database));
  const auto r =
      run(fmt::format("{}, tables: 2, table_size: 1000, threads: 2, keep_database: true", pg_section()), "1s");
  const auto& t = r.record.tests[0];
  ASSERT_EQ(t.status, results::Status::complete) << t.reason << "\n" << out.str();
  const std::string cmd = t.details["sysbench_command"].get<std::string>();
  // The connection's host (here the socket directory) and port come from where libpq connected.
  EXPECT_EQ(cmd, fmt::format("sysbench oltp_read_write --tables=2 --table-size=1000 --threads=2 --time=1 "
                             "--report-interval=1 --rand-type=special --db-driver=pgsql --pgsql-host={} "
                             "--pgsql-port={} --pgsql-user={} --pgsql-db={} run",
                             svc.pg_socket_dir, svc.pg_port, svc.pg_user, database));
  expect_sysbench_runs(cmd);
}

/// Waits until `threads` worker sessions are connected to the test's database, lets them run for
/// a moment, then kills every session of that database once (as a server restart or a network
/// cut would), from another thread while the run goes on.
class SessionKiller {
 public:
  /// `running` says whether the measured phase has begun (a run-only statement is executing:
  /// the load and its ANALYZE/CHECKPOINT sessions must not be killed, or the test fails for the
  /// wrong reason); `list` returns the ids of the database's sessions; `kill` kills one.
  SessionKiller(std::function<bool()> running, std::function<std::vector<std::string>()> list,
                std::function<void(const std::string&)> kill)
      : thread_([this, running = std::move(running), list = std::move(list), kill = std::move(kill)] {
          const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(120);
          while (std::chrono::steady_clock::now() < give_up) {
            if (running()) {
              std::this_thread::sleep_for(std::chrono::milliseconds(700));
              for (const auto& id : list()) kill(id);
              killed_ = true;
              return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
          }
        }) {}
  ~SessionKiller() { join(); }
  /// Waits for the killer; true if it found the sessions and killed them.
  bool join() {
    if (thread_.joinable()) thread_.join();
    return killed_;
  }

 private:
  std::atomic<bool> killed_{false};
  std::thread thread_;
};

std::vector<std::string> ids_of(Connection& c, const std::string& sql) {
  std::vector<std::string> out;
  auto q = c.prepare(sql);
  DbStatus st = q->execute();
  while (st.ok() && q->next(st)) out.emplace_back(q->column_text(0));
  return out;
}

TEST_F(SysbenchServerTest, PostgresSessionsKilledMidRunAreReconnectedAndCounted) {
  pg_admin()->connect()->execute_immediate(fmt::format("CREATE DATABASE \"{}\"", database));
  auto admin_backend = pg_admin();
  auto admin = admin_backend->connect();
  const std::string list_sql =
      fmt::format("SELECT pid FROM pg_stat_activity WHERE datname = '{}' AND pid <> pg_backend_pid()", database);
  // sysbench's point select runs only in the measured phase (pg_stat_activity.query holds a
  // session's current or last statement).
  const std::string running_sql = fmt::format(
      "SELECT pid FROM pg_stat_activity WHERE datname = '{}' AND query LIKE 'SELECT c FROM sbtest%'", database);
  SessionKiller killer([&] { return !ids_of(*admin, running_sql).empty(); }, [&] { return ids_of(*admin, list_sql); },
                       [&](const std::string& pid) { ids_of(*admin, "SELECT pg_terminate_backend(" + pid + ")"); });
  const auto r = run(fmt::format("{}, tables: 2, table_size: 2000, threads: 4", pg_section()), "4s");
  ASSERT_TRUE(killer.join());
  const auto& t = r.record.tests[0];
  ASSERT_EQ(t.status, results::Status::complete) << t.reason << "\n" << out.str();
  EXPECT_GE(metric(t, "reconnects"), 1.0);
  EXPECT_GT(metric(t, "reconnects_s"), 0.0);
  EXPECT_GE(metric(t, "ignored_errors"), metric(t, "reconnects"));  // the query that found the session gone
  for (const auto& c : t.checks) EXPECT_TRUE(c.passed) << c.name << ": " << c.detail;
}

TEST_F(SysbenchServerTest, MariadbSessionsKilledMidRunAreReconnectedAndCounted) {
  auto admin_backend = mysql_admin();
  auto admin = admin_backend->connect();
  const std::string list_sql =
      fmt::format("SELECT id FROM information_schema.processlist WHERE db = '{}' AND id <> CONNECTION_ID()", database);
  const std::string running_sql = fmt::format(
      "SELECT id FROM information_schema.processlist WHERE db = '{}' AND info LIKE 'SELECT c FROM sbtest%'", database);
  SessionKiller killer([&] { return !ids_of(*admin, running_sql).empty(); }, [&] { return ids_of(*admin, list_sql); },
                       [&](const std::string& id) {
                         try {
                           admin->execute_immediate("KILL CONNECTION " + id);
                         } catch (const BackendError&) {  // NOLINT(bugprone-empty-catch): already gone
                         }
                       });
  const auto r = run(fmt::format("{}, tables: 2, table_size: 2000, threads: 4", mysql_section()), "4s");
  ASSERT_TRUE(killer.join());
  const auto& t = r.record.tests[0];
  ASSERT_EQ(t.status, results::Status::complete) << t.reason << "\n" << out.str();
  EXPECT_GE(metric(t, "reconnects"), 1.0);
  for (const auto& c : t.checks) EXPECT_TRUE(c.passed) << c.name << ": " << c.detail;
}

TEST_F(SysbenchServerTest, MariadbPreflightRefusesMorePreparedStatementsThanTheServerAllows) {
  // The test server allows 100,000; 1,200 tables x 9 x 10 threads = 108,000. Checked before any
  // table is created.
  const auto r = run(fmt::format("{}, tables: 1200, table_size: 10, threads: 10", mysql_section()));
  const auto& t = r.record.tests[0];
  EXPECT_EQ(t.status, results::Status::failed);
  EXPECT_NE(t.reason.find("max_prepared_stmt_count is 100000"), std::string::npos) << t.reason;
  EXPECT_NE(t.reason.find("prepares 108000 server-side statements"), std::string::npos) << t.reason;
  MysqlOptions o;
  o.endpoint.socket_path = svc.mysql_socket;
  o.endpoint.user = svc.mysql_user;
  o.database = database;
  EXPECT_FALSE(make_mysql_backend(o)->exists());
}

TEST_F(SysbenchServerTest, MariadbPreflightSaysWhenNoValueOfTheVariableIsEnough) {
  // MariaDB 10.11 accepts max_prepared_stmt_count up to 4,294,967,295 (it says so in
  // information_schema.SYSTEM_VARIABLES); 100,000 tables x 9 x 5,000 threads = 4.5e9 is more.
  // Refused by the pre-flight, before any session or table is made.
  const auto r = run(fmt::format("{}, tables: 100000, table_size: 10, threads: 5000", mysql_section()));
  const auto& t = r.record.tests[0];
  EXPECT_EQ(t.status, results::Status::failed);
  EXPECT_NE(t.reason.find("prepares 4500000000 server-side statements"), std::string::npos) << t.reason;
  EXPECT_NE(t.reason.find("is above 4294967295, the largest value this server accepts for "
                          "max_prepared_stmt_count, so raising it cannot help: use at most 4772 thread(s) with "
                          "100000 table(s), or at most 95443 table(s) with 5000 thread(s)"),
            std::string::npos)
      << t.reason;
  EXPECT_EQ(t.reason.find("SET GLOBAL"), std::string::npos) << t.reason;
}

}  // namespace
}  // namespace drivelab::oltp
