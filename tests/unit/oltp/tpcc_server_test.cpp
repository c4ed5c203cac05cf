// The tpcc emulator against real PostgreSQL servers (ctest fixture db_services, and a managed
// server of the test's own): reconnect after the server killed the sessions (with server counters
// and consistency checks of a complete run), and a server that dies mid-run ending the test
// cleanly with its intervals kept.
#include <signal.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "drivelab/oltp/register.hpp"
#include "drivelab/runner/protocol.hpp"
#include "drivelab/runner/run.hpp"
#include "postgres_test_db.hpp"
#include "protocol_run.hpp"

namespace drivelab::oltp {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using test::ProtocolRun;
using test::TmpTarget;

class TpccOnPostgres : public test::PgTest {};

TEST_F(TpccOnPostgres, PooledTerminalsReconnectAfterTheServerKilledTheirSessions) {
  // The emulator on the test server (an existing server: `connection:`), pooled closed loop;
  // after the first interval every session of the test's database is terminated by the server.
  TmpTarget target;
  ProtocolRun r;
  r.out_dir = target.path() / "out";
  const std::string yaml = fmt::format(
      "protocol: p\nseed: 4\ntests:\n"
      "  - name: pg\n    kind: tpcc\n    warmup: 0s\n    duration: 4s\n    interval: 1s\n"
      "    tpcc:\n      backend: postgres\n      database: {}\n"
      "      server: {{connection: \"host={} port={}\", user: {}}}\n"
      "      warehouses: 1\n      scale_items: 1000\n      users: 4\n      terminals: pooled\n"
      "      connections: 2\n      reconnect_timeout: 5s\n",
      name, svc.pg_socket_dir, svc.pg_port, svc.pg_user);
  std::thread killer([&] {
    r.wait_for_measured_phase();
    admin->execute_immediate("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" + name +
                             "' AND pid <> pg_backend_pid()");
  });
  const auto outcome = r.run(yaml, target.path());
  killer.join();
  const auto& t = outcome.record.tests.at(0);
  ASSERT_EQ(t.status, results::Status::complete) << t.reason << "\n" << r.out.str();
  // Each of the two connections reconnects when it next talks to the server.
  EXPECT_GE(t.find_metric("reconnects")->value, 1.0);
  EXPECT_LE(t.find_metric("reconnects")->value, 2.0);
  EXPECT_GT(t.find_metric("transactions")->value, 0.0);
  double late_commits = 0;  // the terminals went on after reconnecting
  for (std::size_t i = 1; i < t.intervals.size(); ++i) late_commits += t.intervals[i].values[0].second;
  EXPECT_GT(late_commits, 0.0);
  ASSERT_NE(t.find_metric("server_commits"), nullptr);  // pg_stat_database difference
  EXPECT_GT(t.find_metric("server_commits")->value, 0.0);
  EXPECT_TRUE(t.details.contains("server_counters"));
  EXPECT_EQ(t.details["database"]["backend"]["backend"], "postgres");
  EXPECT_GE(t.checks.size(), 4u);
  for (const auto& c : t.checks) EXPECT_TRUE(c.passed) << c.name << ": " << c.detail;
}

TEST_F(TpccOnPostgres, MorePooledSessionsThanTheServerAllowsAreRefusedBeforeTheLoad) {
  // Pooled terminals open `connections` sessions + drivelab's own (sessions_needed): a pool as
  // large as the server's whole max_connections cannot fit, whatever the terminal mode.
  const int max = std::stoi(test::pg_value(*admin, "SHOW max_connections"));
  TmpTarget target;
  ProtocolRun r;
  r.out_dir = target.path() / "out";
  const auto outcome = r.run(
      fmt::format("protocol: p\ntests:\n"
                  "  - name: pg\n    kind: tpcc\n    warmup: 0s\n    duration: 2s\n"
                  "    tpcc:\n      backend: postgres\n      database: {}\n"
                  "      server: {{connection: \"host={} port={}\", user: {}}}\n"
                  "      warehouses: 1\n      scale_items: 1000\n      users: {}\n      think: tpcc\n"
                  "      connections: {}\n",
                  name, svc.pg_socket_dir, svc.pg_port, svc.pg_user, max + 5, max),
      target.path());
  const auto& t = outcome.record.tests.at(0);
  ASSERT_EQ(t.status, results::Status::failed) << r.out.str();
  EXPECT_NE(t.reason.find(fmt::format("max_connections is {}", max)), std::string::npos) << t.reason;
  EXPECT_NE(t.reason.find(fmt::format("needs {} sessions at once ({} pooled connections + 1 drivelab session",
                                      max + 1, max)),
            std::string::npos)
      << t.reason;
  EXPECT_FALSE(t.details.contains("load"));  // refused before the load
}

TEST(TpccManagedPostgres, AServerThatDiesMidRunFailsTheTestClearlyAndKeepsTheIntervals) {
  TmpTarget target;
  ProtocolRun r;
  r.out_dir = target.path() / "out";
  const fs::path server_dir = target.path() / "drivelab-pg-postgres";
  std::thread killer([&] {
    r.wait_for_measured_phase();
    std::ifstream in(server_dir / "postmaster.pid");
    pid_t pid = 0;
    if (in >> pid && pid > 0) ::kill(pid, SIGQUIT);  // immediate shutdown: every session is cut
  });
  const auto outcome = r.run(
      "protocol: p\nseed: 2\ntests:\n"
      "  - name: pg\n    kind: tpcc\n    warmup: 1s\n    duration: 60s\n    interval: 1s\n"
      "    tpcc:\n      backend: postgres\n      server: {managed: postgres, buffer: 64MiB}\n"
      "      warehouses: 1\n      scale_items: 1000\n      users: 4\n      reconnect_timeout: 1s\n",
      target.path());
  killer.join();
  const auto& t = outcome.record.tests.at(0);
  EXPECT_EQ(t.status, results::Status::failed) << r.out.str();
  EXPECT_NE(t.reason.find("server connection lost"), std::string::npos) << t.reason;
  // The server log's last lines are in the reason, read before cleanup removed the directory.
  EXPECT_NE(t.reason.find("server log ("), std::string::npos) << t.reason;
  EXPECT_NE(t.reason.find("received immediate shutdown request"), std::string::npos) << t.reason;
  EXPECT_LT(t.measured_s, 30.0);  // ended by the failure, not by the 60 s duration
  EXPECT_FALSE(t.intervals.empty());
  ASSERT_NE(t.find_metric("transactions"), nullptr);  // what was measured is kept
  EXPECT_GT(t.find_metric("transactions")->value, 0.0);
  EXPECT_EQ(t.details["database"]["backend"]["backend"], "postgres");
  EXPECT_GT(t.details["load"]["rate_mb_s"].get<double>(), 0.0);
  EXPECT_FALSE(fs::exists(server_dir));  // cleanup removed the dead server's directory
}

}  // namespace
}  // namespace drivelab::oltp
