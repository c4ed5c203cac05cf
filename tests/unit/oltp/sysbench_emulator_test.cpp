// kind: sysbench through the protocol runner on SQLite in a temp directory: prepare (load),
// run, report fields, verify, cleanup.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <thread>

#include "drivelab/oltp/register.hpp"
#include "drivelab/runner/protocol.hpp"
#include "drivelab/runner/run.hpp"
#include "emulator_harness.hpp"
#include "protocol_run.hpp"
#include "test_db.hpp"

namespace drivelab::oltp {
namespace {

namespace fs = std::filesystem;

struct SysbenchEmulatorTest : ::testing::Test {
  test::TempDir dir;
  std::ostringstream out;

  void SetUp() override { fs::create_directories(dir.path() / "target"); }

  runner::RunOutcome run(const std::string& yaml) {
    runner::StopFlag stop;
    return run(yaml, stop);
  }
  runner::RunOutcome run(const std::string& yaml, runner::StopFlag& stop) {
    return test::run_protocol_text(yaml, dir.path() / "target", dir.path() / "out", out, stop);
  }
  static double metric(const results::TestRecord& t, std::string_view name) {
    const auto* m = t.find_metric(name);
    EXPECT_NE(m, nullptr) << name;
    return m ? m->value : -1;
  }
};

/// The value of `name` in metric group `group` of `t`, or -1 (and a failure) when missing.
double group_metric(const results::TestRecord& t, std::string_view group, std::string_view name) {
  for (const auto& g : t.groups)
    if (g.name == group)
      for (const auto& m : g.metrics)
        if (m.name == name) return m.value;
  ADD_FAILURE() << "no " << name << " in group " << group;
  return -1;
}

bool has_warning(const results::TestRecord& t, std::string_view text) {
  return std::any_of(t.warnings.begin(), t.warnings.end(),
                     [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

// rate: curve (issue 32 item 5): the closed-loop max run, then open-loop points at a percentage of
// its TPS, each a metric group, and the sizing answer of slo read off them.
TEST_F(SysbenchEmulatorTest, RateCurveRecordsItsPointsAndTheSloAnswer) {
  const auto r =
      run("protocol: p\nseed: 5\ntests:\n"
          "  - {name: sbc, kind: sysbench, warmup: 200ms, duration: 1s, interval: 500ms,\n"
          "     sysbench: {tables: 1, table_size: 2000, threads: 2, synchronous: 'OFF',\n"
          "                rate: curve, curve: [20, 300], slo: {p99_ms: 50}}}\n");
  ASSERT_EQ(r.record.tests.size(), 1u);
  const auto& t = r.record.tests[0];
  ASSERT_EQ(t.status, results::Status::complete) << t.reason << "\n" << out.str();
  // The groups of the curve's runs, in order, each recorded (and journaled) as its run finished,
  // then the threads' fairness of the max run.
  std::vector<std::string> groups;
  for (const auto& g : t.groups) groups.push_back(g.name);
  EXPECT_EQ(groups, (std::vector<std::string>{"max", "point_020", "point_300", "threads_fairness"}));
  const double max_tps = group_metric(t, "max", "tps");
  ASSERT_GT(max_tps, 0);
  EXPECT_DOUBLE_EQ(metric(t, "tps"), max_tps);  // the headline is the max run's
  EXPECT_EQ(group_metric(t, "max", "requested_pct"), 0.0);
  EXPECT_EQ(group_metric(t, "point_020", "requested_pct"), 20.0);
  // A light point holds its rate (loosely: Poisson arrivals over one second, a busy machine).
  const double light = 0.2 * max_tps;
  EXPECT_NEAR(group_metric(t, "point_020", "arrival_rate"), light, 0.35 * light);
  EXPECT_NEAR(group_metric(t, "point_020", "tps"), light, 0.35 * light);
  EXPECT_GE(group_metric(t, "point_300", "queue_wait_p99_ms"), 0.0);
  EXPECT_TRUE(t.histograms.count("latency.point_300"));
  EXPECT_TRUE(t.histograms.count("queue_wait.point_020"));
  // details.points: what the report's curve chart reads (achieved_tps, latency_*_ms).
  ASSERT_TRUE(t.details.contains("points"));
  const auto& points = t.details["points"];
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[0]["group"], "max");
  EXPECT_NEAR(points[1]["requested_tps"].get<double>(), light, 1e-6 * light);
  EXPECT_TRUE(points[1]["held"].is_boolean()) << points[1].dump();  // its value: timing, not asserted
  // The answer: the highest TPS with p99 <= 50 ms, between the two runs that bracket the bound.
  // The 300% point queues without end (its p99 is its backlog), so the bound is crossed.
  const double answer = metric(t, "max_tps_under_slo");
  EXPECT_GE(metric(t, "max_qps_under_slo"), 0.0);
  ASSERT_TRUE(t.details.contains("slo"));
  ASSERT_EQ(t.details["slo"].size(), 1u);
  const auto& a = t.details["slo"][0];
  EXPECT_EQ(a["key"], "p99_ms");
  EXPECT_EQ(a["metric"], "max_tps_under_slo");
  EXPECT_EQ(a["answer"].get<double>(), answer);
  ASSERT_EQ(a["outcome"], "interpolated") << a.dump() << "\n" << points.dump();
  const double lo = a["below"]["rate"].get<double>(), hi = a["above"]["rate"].get<double>();
  EXPECT_LE(a["below"]["value_ms"].get<double>(), 50.0);
  EXPECT_GT(a["above"]["value_ms"].get<double>(), 50.0);
  EXPECT_GE(answer, std::min(lo, hi) - 1e-9);
  EXPECT_LE(answer, std::max(lo, hi) + 1e-9);
  // The bracketing runs are curve runs, with the figures details.points gives them.
  for (const auto* side : {&a["below"], &a["above"]}) {
    const auto it =
        std::find_if(points.begin(), points.end(), [&](const auto& p) { return p["group"] == (*side)["group"]; });
    ASSERT_NE(it, points.end()) << side->dump();
    EXPECT_DOUBLE_EQ((*it)["achieved_tps"].get<double>(), (*side)["rate"].get<double>());
    EXPECT_DOUBLE_EQ((*it)["latency_p99_ms"].get<double>(), (*side)["value_ms"].get<double>());
  }
  EXPECT_EQ(t.config["rate"], "curve");
  EXPECT_NE(out.str().find("max TPS with p99 latency <= 50 ms"), std::string::npos) << out.str();
  // Each run's console line: what was requested and what was achieved, and its p99 (as vdbench
  // prints each run); the 300% point cannot hold its rate and is flagged.
  EXPECT_NE(out.str().find("curve max run: "), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("curve point 20%: requested "), std::string::npos) << out.str();
  const auto at300 = out.str().find("curve point 300%: requested ");
  ASSERT_NE(at300, std::string::npos) << out.str();
  const std::string line300 = out.str().substr(at300, out.str().find('\n', at300) - at300);
  EXPECT_NE(line300.find(", achieved "), std::string::npos) << line300;
  EXPECT_NE(line300.find(", p99 "), std::string::npos) << line300;
  EXPECT_NE(line300.find("SATURATED"), std::string::npos) << line300;
}

// A curve stopped after some points: every point run is within the bound, so the highest is only
// a lower bound of a partial curve. No headline max_tps_under_slo (a comparison would take it for
// the answer); details.slo and the console say "at least", and after which run the curve was cut.
TEST_F(SysbenchEmulatorTest, AnInterruptedCurveRecordsALowerBoundNotAnAnswer) {
  runner::StopFlag stop;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    stop.request();
  });
  const auto r =
      run("protocol: p\nseed: 5\ntests:\n"
          "  - {name: sbc, kind: sysbench, warmup: 0s, duration: 1s, interval: 500ms,\n"
          "     sysbench: {tables: 1, table_size: 2000, threads: 2, synchronous: 'OFF',\n"
          "                rate: curve, curve: [10, 20, 30, 40, 50, 60], slo: {p99_ms: 60000}}}\n",
          stop);
  stopper.join();
  ASSERT_EQ(r.record.tests.size(), 1u);
  const auto& t = r.record.tests[0];
  ASSERT_EQ(t.status, results::Status::interrupted) << t.reason << "\n" << out.str();
  EXPECT_EQ(t.find_metric("max_tps_under_slo"), nullptr) << out.str();
  EXPECT_EQ(t.find_metric("max_qps_under_slo"), nullptr);
  ASSERT_TRUE(t.details.contains("slo")) << out.str();
  const auto& a = t.details["slo"][0];
  EXPECT_EQ(a["outcome"], "interrupted_lower_bound") << a.dump();
  const auto& points = t.details["points"];
  ASSERT_GE(points.size(), 1u);
  ASSERT_LT(points.size(), 7u) << "the curve was cut";
  EXPECT_EQ(a["cut_after"], points.back()["group"]) << a.dump();
  EXPECT_GT(a["answer"].get<double>(), 0.0);
  // A point cut in its measured phase is left out: every point kept ran its whole second.
  for (const auto& p : points) EXPECT_GE(p["measured_s"].get<double>(), 0.9) << p.dump();
  const std::string console = out.str();
  EXPECT_NE(console.find("max TPS with p99 latency <= 60000 ms: at least "), std::string::npos) << console;
  EXPECT_NE(console.find("(curve interrupted after " + points.back()["group"].get<std::string>()), std::string::npos)
      << console;
  std::cout << "details.slo: " << t.details["slo"].dump(2) << "\n";
}

// A bound the lowest point already exceeds (1 µs): there is no answer, and none is recorded as a
// number (0 TPS would be compared as a drive's answer); details and the console say why.
TEST_F(SysbenchEmulatorTest, NoAnswerRecordsNoHeadlineMetric) {
  const auto r =
      run("protocol: p\nseed: 5\ntests:\n"
          "  - {name: sbc, kind: sysbench, warmup: 0s, duration: 1s, interval: 500ms,\n"
          "     sysbench: {tables: 1, table_size: 1000, threads: 1, synchronous: 'OFF',\n"
          "                rate: curve, curve: [50], slo: {p99_ms: 0.001}}}\n");
  ASSERT_EQ(r.record.tests.size(), 1u);
  const auto& t = r.record.tests[0];
  ASSERT_EQ(t.status, results::Status::complete) << t.reason << "\n" << out.str();
  EXPECT_GT(metric(t, "tps"), 0.0);
  EXPECT_EQ(t.find_metric("max_tps_under_slo"), nullptr);
  EXPECT_EQ(t.find_metric("max_qps_under_slo"), nullptr);
  const auto& a = t.details["slo"][0];
  EXPECT_EQ(a["outcome"], "first_point_exceeds") << a.dump();
  EXPECT_TRUE(a["answer"].is_null()) << a.dump();
  EXPECT_NE(out.str().find("max TPS with p99 latency <= 0.001 ms: none (the lowest point"), std::string::npos)
      << out.str();
}

// An open loop whose measured phase completed no transaction fails with the reason, rather than
// being complete with 0 TPS and 0-ms latencies. rate x duration = 1 passes validation; this seed's
// first arrival is drawn 17.1 s after the workers start (the driver's stream of seed 782, test 0),
// so the 2 s measured phase has none even when a loaded machine starts or ends it seconds late
// (seed 5's first arrival, at 3.85 s, fell inside it once in CI). If the driver's draw of arrivals
// changes, pick another seed whose first gap is as long.
TEST_F(SysbenchEmulatorTest, AMeasuredPhaseThatCompletedNothingFails) {
  const auto r =
      run("protocol: p\nseed: 782\ntests:\n"
          "  - {name: sbr, kind: sysbench, warmup: 0s, duration: 2s, interval: 1s,\n"
          "     sysbench: {tables: 1, table_size: 1000, threads: 1, synchronous: 'OFF', rate: 0.5}}\n");
  ASSERT_EQ(r.record.tests.size(), 1u);
  const auto& t = r.record.tests[0];
  EXPECT_EQ(t.status, results::Status::failed) << out.str();
  test::expect_nothing_completed_at_half_a_tps(t.reason);
  EXPECT_EQ(t.find_metric("latency_p99_ms"), nullptr);
}

// A rate at which less than one arrival is expected in the measured phase is refused at its key.
TEST(SysbenchValidate, ARateBelowOneArrivalIsRefusedAtItsKey) {
  runner::Registry reg;
  register_emulators(reg);
  config::Diagnostics diags;
  const config::Document doc = config::Document::load_string(
      "protocol: p\ntests:\n  - name: s\n    kind: sysbench\n    duration: 10s\n    sysbench:\n      rate: 1e-9\n",
      "p.yaml", diags);
  (void)runner::decode_protocol(doc, reg, diags);
  EXPECT_NE(diags.to_string().find("p.yaml:7:13: tests[0].sysbench.rate: rate 1e-09/s over the measured 10 s "
                                   "expects 1e-08 arrivals, fewer than one"),
            std::string::npos)
      << diags.to_string();
}

// rate: N far above what one worker on SQLite completes: the schedule is kept (latency from the
// intended arrival, the queue wait recorded apart) and the record says the rate was not held.
TEST_F(SysbenchEmulatorTest, PacedRunBeyondTheDatabaseWarnsThatTheRateWasNotHeld) {
  const auto r =
      run("protocol: p\nseed: 7\ntests:\n"
          "  - {name: sbr, kind: sysbench, warmup: 0s, duration: 1s, interval: 500ms,\n"
          "     sysbench: {tables: 1, table_size: 1000, threads: 1, synchronous: 'OFF', rate: 100000,\n"
          "                slo: {p99_ms: 5}}}\n");
  ASSERT_EQ(r.record.tests.size(), 1u);
  const auto& t = r.record.tests[0];
  ASSERT_EQ(t.status, results::Status::complete) << t.reason << "\n" << out.str();
  EXPECT_TRUE(has_warning(t, "rate 100000/s not held")) << ::testing::PrintToString(t.warnings);
  EXPECT_TRUE(has_warning(t, "tests[0].sysbench.slo: the sizing answers are read off a curve"))
      << ::testing::PrintToString(t.warnings);
  // Far beyond what the database served (a quiet machine: about 10,000 TPS on one thread, SQLite).
  EXPECT_GT(metric(t, "arrival_rate"), 3 * metric(t, "tps"));
  // Measured from the intended arrival: the backlog's wait is in the latency.
  EXPECT_GT(metric(t, "queue_wait_p99_ms"), metric(t, "service_time_p99_ms"));
  EXPECT_GE(metric(t, "latency_p99_ms"), metric(t, "queue_wait_p99_ms"));
  EXPECT_GT(t.details["queued_at_end"].get<double>(), 0.0);
  EXPECT_EQ(t.config["rate"], 100000.0);
  EXPECT_NE(t.details["sysbench_command"].get<std::string>().find(" --rate=100000 "), std::string::npos);
}

TEST_F(SysbenchEmulatorTest, ReadWriteOnSqliteReportsSysbenchsFields) {
  const auto r =
      run("protocol: p\nseed: 3\ntests:\n"
          "  - {name: sb, kind: sysbench, warmup: 0s, duration: 2s, interval: 500ms,\n"
          "     sysbench: {tables: 2, table_size: 3000, threads: 2, synchronous: 'OFF'}}\n");
  ASSERT_EQ(r.record.tests.size(), 1u);
  const auto& t = r.record.tests[0];
  ASSERT_EQ(t.status, results::Status::complete) << t.reason << "\n" << out.str();
  // Headline first: what sysbench prints first.
  ASSERT_GE(t.metrics.size(), 5u);
  EXPECT_EQ(t.metrics[0].name, "tps");
  EXPECT_EQ(t.metrics[1].name, "qps");
  EXPECT_EQ(t.metrics[2].name, "latency_avg_ms");
  EXPECT_EQ(t.metrics[3].name, "latency_p95_ms");
  EXPECT_EQ(t.metrics[4].name, "latency_p99_ms");
  const double tx = metric(t, "transactions");
  EXPECT_GT(tx, 0);
  EXPECT_DOUBLE_EQ(metric(t, "events"), tx);
  EXPECT_DOUBLE_EQ(metric(t, "queries"), 20 * tx);  // no ignored errors on SQLite
  EXPECT_DOUBLE_EQ(metric(t, "reads"), 14 * tx);
  EXPECT_DOUBLE_EQ(metric(t, "writes"), 4 * tx);
  EXPECT_DOUBLE_EQ(metric(t, "other"), 2 * tx);
  EXPECT_NEAR(metric(t, "qps"), 20 * metric(t, "tps"), 1e-6 * metric(t, "qps"));
  EXPECT_EQ(metric(t, "errors_s"), 0.0);
  EXPECT_EQ(metric(t, "reconnects_s"), 0.0);
  EXPECT_LE(metric(t, "latency_min_ms"), metric(t, "latency_avg_ms"));
  EXPECT_LE(metric(t, "latency_p95_ms"), metric(t, "latency_p99_ms"));
  EXPECT_LE(metric(t, "latency_p99_ms"), metric(t, "latency_max_ms"));
  EXPECT_GT(metric(t, "total_time_s"), 1.9);
  EXPECT_TRUE(t.histograms.count("latency"));
  ASSERT_EQ(t.groups.size(), 1u);
  EXPECT_EQ(t.groups[0].name, "threads_fairness");
  // Interval lines as sysbench --report-interval prints them.
  ASSERT_GE(t.intervals.size(), 3u);
  EXPECT_GE(drivelab::test_support::expect_interval_latency_histograms(t, "ms"), 3u);
  const std::vector<std::string> names = {"tps",   "qps",     "reads_s", "writes_s", "other_s", "latency_p95_ms",
                                          "err_s", "reconn_s"};
  for (std::size_t i = 0; i < names.size(); ++i) EXPECT_EQ(t.intervals[0].values[i].first, names[i]);
  // Verification: every table still has its rows.
  ASSERT_EQ(t.checks.size(), 2u);
  for (const auto& c : t.checks) EXPECT_TRUE(c.passed) << c.name << ": " << c.detail;
  // The effective config and the equivalent sysbench command are recorded.
  EXPECT_EQ(t.config["workload"], "oltp_read_write");
  EXPECT_EQ(t.config["rand_type"], "special");
  EXPECT_EQ(t.config["tables"], 2);
  EXPECT_EQ(t.details["prepared_statements_per_connection"], 18);
  EXPECT_EQ(t.details["database_reused"], false);
  EXPECT_EQ(t.details["load"]["rows"], 6000);
  EXPECT_NE(t.details["sysbench_command"].get<std::string>().find(
                "sysbench oltp_read_write --tables=2 --table-size=3000 --threads=2 --time=2"),
            std::string::npos);
  // SQLite: sysbench has no driver for it; the command says none and a note says why.
  EXPECT_EQ(t.details["sysbench_command"].get<std::string>().find("--db-driver"), std::string::npos);
  EXPECT_NE(t.details["sysbench_command_note"].get<std::string>().find("sysbench has no sqlite driver"),
            std::string::npos)
      << t.details["sysbench_command_note"];
  // Cleanup removed the database (neither keep_database nor reuse).
  EXPECT_FALSE(fs::exists(dir.path() / "target" / "drivelab-sb-sysbench.db"));
}

TEST_F(SysbenchEmulatorTest, ReuseKeepsTheTablesAndTheSecondRunSkipsTheLoad) {
  const std::string yaml =
      "protocol: p\ntests:\n"
      "  - {name: sb, kind: sysbench, warmup: 0s, duration: 1s, interval: 1s,\n"
      "     sysbench: {workload: oltp_read_only, tables: 1, table_size: 2000, threads: 2, reuse: true,\n"
      "                rand_type: uniform}}\n";
  const auto first = run(yaml);
  ASSERT_EQ(first.record.tests[0].status, results::Status::complete) << first.record.tests[0].reason;
  EXPECT_EQ(first.record.tests[0].details["database_reused"], false);
  EXPECT_TRUE(fs::exists(dir.path() / "target" / "drivelab-sb-sysbench.db"));
  const auto second = run(yaml);
  const auto& t = second.record.tests[0];
  ASSERT_EQ(t.status, results::Status::complete) << t.reason;
  EXPECT_EQ(t.details["database_reused"], true);
  EXPECT_DOUBLE_EQ(metric(t, "writes"), 0.0);
  EXPECT_DOUBLE_EQ(metric(t, "reads"), 14 * metric(t, "transactions"));
}

TEST_F(SysbenchEmulatorTest, WriteOnlyRunsFourWritesPerTransaction) {
  const auto r =
      run("protocol: p\ntests:\n"
          "  - {name: sb, kind: sysbench, warmup: 200ms, duration: 1s, interval: 1s,\n"
          "     sysbench: {workload: oltp_write_only, tables: 1, table_size: 1000, synchronous: 'OFF'}}\n");
  const auto& t = r.record.tests[0];
  ASSERT_EQ(t.status, results::Status::complete) << t.reason;
  EXPECT_GT(metric(t, "transactions"), 0);
  EXPECT_DOUBLE_EQ(metric(t, "writes"), 4 * metric(t, "transactions"));
  EXPECT_DOUBLE_EQ(metric(t, "reads"), 0.0);
  EXPECT_GT(t.warmup_s, 0.15);
}

// Issue 29, sysbench: sysbench restarts an event that fails with an error it ignores and runs on,
// reporting err/s. When every event fails (another process holds SQLite's writer lock, so every
// BEGIN IMMEDIATE gives up after busy_timeout with SQLITE_BUSY), the test fails by
// failure_bound, naming the workload, the error and when it began, instead of ending complete
// with a handful of transactions.
TEST_F(SysbenchEmulatorTest, EventsThatFailOnEveryTryFailTheTestByTheFailureBound) {
  test::ProtocolRun r;
  r.out_dir = dir.path() / "out";
  const fs::path db = dir.path() / "target" / "drivelab-sb-sysbench.db";
  std::string lock_error;
  std::thread locker([&] {
    r.wait_for_measured_phase();
    if (r.finished) return;
    try {
      auto conn = test::sqlite_at(db)->connect();
      const DbStatus st = conn->begin(TxMode::read_write);  // BEGIN IMMEDIATE: the writer lock
      if (!st.ok()) throw std::runtime_error(st.to_string());
      for (int i = 0; i < 80 && !r.finished; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      conn->rollback();
    } catch (const std::exception& ex) {
      lock_error = ex.what();
    }
  });
  const auto outcome = r.run(
      "protocol: p\nseed: 3\ntests:\n"
      "  - {name: sb, kind: sysbench, warmup: 0s, duration: 30s, interval: 500ms,\n"
      "     sysbench: {tables: 1, table_size: 1000, threads: 4, synchronous: 'OFF',\n"
      "                busy_timeout: 100ms, failure_bound: {window: 2s}}}\n",
      dir.path() / "target");
  locker.join();
  ASSERT_EQ(lock_error, "");
  ASSERT_EQ(outcome.record.tests.size(), 1u);
  const auto& t = outcome.record.tests[0];
  ::testing::Test::RecordProperty("reason", t.reason);  // in --gtest_output, for a look at the text
  EXPECT_EQ(t.status, results::Status::failed) << r.out.str();
  EXPECT_NE(t.reason.find("oltp_read_write: "), std::string::npos) << t.reason;
  EXPECT_NE(t.reason.find("more than failure_bound's 50% over 2 s"), std::string::npos) << t.reason;
  EXPECT_NE(t.reason.find("error 5 "), std::string::npos) << t.reason;  // SQLITE_BUSY
  EXPECT_NE(t.reason.find("every attempt has failed since"), std::string::npos) << t.reason;
  EXPECT_LT(t.measured_s, 15.0);
  EXPECT_GE(metric(t, "failed_attempts"), 20.0);
  EXPECT_GE(metric(t, "attempts"), metric(t, "failed_attempts"));
  ASSERT_TRUE(t.details.contains("failed_attempts"));
  EXPECT_TRUE(t.details["failed_attempts"]["oltp_read_write"].contains("first_error"));
}

}  // namespace
}  // namespace drivelab::oltp
