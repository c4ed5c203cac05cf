// The tpcc emulator against real PostgreSQL servers (ctest fixture db_services, and a managed
// server of the test's own): reconnect after the server killed the sessions (with server counters
// and consistency checks of a complete run), and a server that dies mid-run ending the test
// cleanly with its intervals kept.
#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
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
  const auto outcome =
      r.run(fmt::format("protocol: p\ntests:\n"
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
  EXPECT_NE(
      t.reason.find(fmt::format("needs {} sessions at once ({} pooled connections + 1 drivelab session", max + 1, max)),
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

// Issue 32's sizing answer on a managed PostgreSQL: a `rate: curve` (closed-loop max run, then
// open-loop points at 50, 100, 150 and 400% of its TPS) with a New-Order p99 bound. The bound lies
// between what the points can measure: the 400% point is overloaded (arrivals outrun the pool, so
// the queue and the response times grow by about half a second per second of the point), while
// the max run's and the 50% point's New-Orders take milliseconds. 150% alone is not enough: the
// closed-loop max run can serve less than the database's peak (docs/oltp-tpcc.md, "A point above
// the max run"; the suite on a loaded 2-core VM saw 150% served at 849 TPS, p99 271 ms, against a 600 TPS max run).
// The answer must lie between the bracketing runs' TPS, whose New-Order p99 straddle the bound (or be the
// run below's TPS when the overloaded run above delivered less: CI on Debian 13 failed the older check).
TEST(TpccManagedPostgres, ARateCurvePrintsMaxTpsUnderANewOrderP99Bound) {
  TmpTarget target;
  ProtocolRun r;
  r.out_dir = target.path() / "out";
  const auto outcome = r.run(
      "protocol: p\nseed: 3\ntests:\n"
      "  - name: pg\n    kind: tpcc\n    warmup: 1s\n    duration: 3s\n    interval: 1s\n"
      "    tpcc:\n      backend: postgres\n      server: {managed: postgres, buffer: 64MiB}\n"
      "      warehouses: 1\n      scale_items: 1000\n      users: 4\n"
      "      rate: curve\n      curve: [50, 100, 150, 400]\n      slo: {new_order_p99_ms: 300}\n",
      target.path());
  const std::string out = r.out.str();
  ASSERT_EQ(outcome.record.tests.size(), 1u) << out;
  const auto& t = outcome.record.tests.at(0);
  ASSERT_EQ(t.status, results::Status::complete) << t.reason << "\n" << out;
  ASSERT_NE(t.find_metric("max_tps_under_slo"), nullptr) << out;
  ASSERT_NE(t.find_metric("max_tpmc_under_slo"), nullptr) << out;
  const double answer = t.find_metric("max_tps_under_slo")->value;
  std::cout << "sizing answer: " << t.find_metric("max_tps_under_slo")->description << "\n";
  // The console says it, and the summary's first columns show it.
  EXPECT_NE(out.find("max TPS with New-Order p99 <= 300 ms: "), std::string::npos) << out;
  EXPECT_NE(out.find("max_tps_under_slo"), std::string::npos) << out;
  ASSERT_EQ(t.details["points"].size(), 5u) << t.details["points"].dump();
  ASSERT_EQ(t.details["slo"].size(), 1u);
  const auto& a = t.details["slo"][0];
  ASSERT_EQ(a["outcome"], "interpolated") << a.dump() << "\n" << t.details["points"].dump();
  const auto point = [&](const std::string& group) {
    for (const auto& p : t.details["points"])
      if (p["group"] == group) return p;
    ADD_FAILURE() << "no point " << group;
    return results::Json();
  };
  const auto below = point(a["below"]["group"].get<std::string>());
  const auto above = point(a["above"]["group"].get<std::string>());
  EXPECT_LE(below["new_order_p99_ms"].get<double>(), 300.0) << a.dump();
  EXPECT_GT(above["new_order_p99_ms"].get<double>(), 300.0) << a.dump();
  // The answer lies between the bracketing runs' rates, and is never below a rate measured within the bound
  // (runner/curve.hpp, max_rate_within): when the overloaded run above delivered less than the run below, it is
  // the run below's rate (fraction 0).
  const double below_tps = below["achieved_tps"].get<double>();
  const double above_tps = above["achieved_tps"].get<double>();
  EXPECT_GE(answer, below_tps) << a.dump();
  if (above_tps > below_tps)
    EXPECT_LE(answer, above_tps) << a.dump();
  else
    EXPECT_DOUBLE_EQ(answer, below_tps) << a.dump();
  EXPECT_GT(answer, 0.0);
  const double tpmc = t.find_metric("max_tpmc_under_slo")->value;
  EXPECT_GE(tpmc, std::min(below["tpm_c"].get<double>(), above["tpm_c"].get<double>()));
  EXPECT_LE(tpmc, std::max(below["tpm_c"].get<double>(), above["tpm_c"].get<double>()));
  // Each point's figures are groups of the record, per transaction type too.
  const auto has_group = [&](const std::string& g) {
    return std::any_of(t.groups.begin(), t.groups.end(), [&](const results::MetricGroup& m) { return m.name == g; });
  };
  for (const std::string g : {"max", "point_050", "point_100", "point_150"}) {
    EXPECT_TRUE(has_group(g)) << g;
    EXPECT_TRUE(has_group(g + ".new_order")) << g;
  }
}

/// Runs for `duration` with `tpcc_keys` (the tpcc section's keys after the database's) on a managed PostgreSQL of
/// its own and, 1 s into the measured phase, makes every Payment fail with a retryable error: a
/// trigger on HISTORY raising 40001 (serialization_failure). Returns the test's record.
results::TestRecord run_with_payments_refused(const std::string& duration, const std::string& tpcc_keys,
                                              std::string& out) {
  TmpTarget target;
  ProtocolRun r;
  r.out_dir = target.path() / "out";
  const fs::path server_dir = target.path() / "drivelab-pg-postgres";
  std::string trigger_error;
  std::thread saboteur([&] {
    r.wait_for_measured_phase();
    if (r.finished) return;
    std::this_thread::sleep_for(1s);
    try {
      PostgresOptions o;
      o.endpoint.socket_path = server_dir.string();
      o.endpoint.port = 5432;
      o.endpoint.user = "postgres";
      o.database = "drivelab";
      auto conn = make_postgres_backend(o)->connect();
      conn->execute_immediate(
          "CREATE FUNCTION drivelab_test_refuse_payment() RETURNS trigger AS $$\n"
          "BEGIN\n"
          "  RAISE EXCEPTION 'payment refused by the test trigger' USING ERRCODE = 'serialization_failure';\n"
          "END $$ LANGUAGE plpgsql");
      conn->execute_immediate(
          "CREATE TRIGGER drivelab_test_refuse_payment BEFORE INSERT ON history "
          "FOR EACH ROW EXECUTE FUNCTION drivelab_test_refuse_payment()");
    } catch (const std::exception& ex) {
      trigger_error = ex.what();
    }
  });
  const auto outcome = r.run(
      "protocol: p\nseed: 2\ntests:\n"
      "  - name: pg\n    kind: tpcc\n    warmup: 0s\n    duration: " +
          duration +
          "\n    interval: 1s\n"
          "    tpcc:\n      backend: postgres\n      server: {managed: postgres, buffer: 64MiB}\n"
          "      warehouses: 1\n      scale_items: 1000\n      users: 4\n" +
          tpcc_keys,
      target.path());
  saboteur.join();
  EXPECT_EQ(trigger_error, "");
  out = r.out.str();
  EXPECT_EQ(outcome.record.tests.size(), 1u) << out;
  return outcome.record.tests.at(0);
}

// Issue 29: every Payment starts failing with a retryable error on a managed PostgreSQL. Before,
// the run ended complete (exit 0) with the Payment share below clause 5.2.4.2's 43%; now it fails
// within a few windows of failure_bound, its reason naming the type, the SQLSTATE and the server's
// message, when the failures began, and the server log's ERROR lines (not its start-up lines, not
// the STATEMENT lines of the procedure calls).
TEST(TpccManagedPostgres, APaymentThatFailsOnEveryTryFailsTheTestNamingItsError) {
  std::string out;
  const auto t = run_with_payments_refused("60s", "      failure_bound: {failed: 50%, window: 2s}\n", out);
  ::testing::Test::RecordProperty("reason", t.reason);
  EXPECT_EQ(t.status, results::Status::failed) << out;
  EXPECT_NE(t.reason.find("payment: "), std::string::npos) << t.reason;
  EXPECT_NE(t.reason.find("SQLSTATE 40001 payment refused by the test trigger"), std::string::npos) << t.reason;
  EXPECT_NE(t.reason.find("more than failure_bound's 50% over 2 s"), std::string::npos) << t.reason;
  // When it began: the first failure after the last success (the trigger came ~1 s into the phase).
  EXPECT_NE(t.reason.find(" since "), std::string::npos) << t.reason;
  EXPECT_NE(t.reason.find(" s into the measured phase"), std::string::npos) << t.reason;
  // The server's ERROR line, and neither its start-up noise nor the statements' text.
  EXPECT_NE(t.reason.find("server log ("), std::string::npos) << t.reason;
  EXPECT_NE(t.reason.find("ERROR:  payment refused by the test trigger"), std::string::npos) << t.reason;
  EXPECT_EQ(t.reason.find("STATEMENT:"), std::string::npos) << t.reason;
  EXPECT_EQ(t.reason.find("listening on"), std::string::npos) << t.reason;
  EXPECT_EQ(t.reason.find("database system is ready"), std::string::npos) << t.reason;
  EXPECT_LT(t.measured_s, 20.0);  // ended by the bound, not by the 60 s duration
  // Retries and failures per type in the record.
  const auto group_metric = [&](const std::string& group, const std::string& name) -> const results::Metric* {
    for (const auto& g : t.groups)
      if (g.name == group)
        for (const auto& m : g.metrics)
          if (m.name == name) return &m;
    return nullptr;
  };
  const auto* failed = group_metric("payment", "failed_attempts");
  ASSERT_NE(failed, nullptr);
  EXPECT_GT(failed->value, 20.0);
  ASSERT_NE(group_metric("payment", "retries"), nullptr);
  EXPECT_GT(group_metric("payment", "retries")->value, 0.0);
  ASSERT_NE(group_metric("new_order", "failed_attempts"), nullptr);
  ASSERT_TRUE(t.details.contains("failed_attempts")) << t.details.dump();
  EXPECT_EQ(t.details["failed_attempts"]["payment"]["first_error"],
            "SQLSTATE 40001 payment refused by the test trigger");
  EXPECT_GT(t.details["failed_attempts"]["payment"]["first_error_s"].get<double>(), 0.5);
  EXPECT_EQ(t.config["failure_bound"]["window"], "2s");
}

// The same with the bound switched off (failed: 100%, sysbench's and the old behaviour): the run
// goes to its end, and the completed transactions, Payment far below 43%, fail clause 5.2.4.2's
// minimum mix, which profile: tpcc's deck promises. 20 s, so that the Payments completed before
// the trigger (about 1 s in; later on a loaded machine, when the first seconds also run faster
// than the rest) stay below 43% of the whole less the 4 terminals' partial decks: with 8 s, a
// sanitizer build beside five compilers once saw the trigger 2.3 s in and the share within it.
TEST(TpccManagedPostgres, WithTheBoundOffAPaymentShareBelowTheMinimumMixFailsTheTest) {
  std::string out;
  const auto t = run_with_payments_refused("20s", "      failure_bound: {failed: 100%}\n", out);
  ::testing::Test::RecordProperty("reason", t.reason);
  EXPECT_EQ(t.status, results::Status::failed) << out;
  EXPECT_NE(t.reason.find("the completed transactions miss clause 5.2.4.2's minimum mix: payment "), std::string::npos)
      << t.reason;
  EXPECT_NE(t.reason.find("(at least 43%;"), std::string::npos) << t.reason;
  EXPECT_EQ(t.reason.find("order_status"), std::string::npos) << t.reason;  // only the type that failed
  EXPECT_GT(t.measured_s, 7.0);                                             // not stopped by the bound
  ASSERT_TRUE(t.details.contains("mix_pct"));
  EXPECT_LT(t.details["mix_pct"]["payment"].get<double>(), 43.0);
}

}  // namespace
}  // namespace drivelab::oltp
