#include <gtest/gtest.h>

#include <iostream>
#include <sstream>
#include <thread>

#include "drivelab/oltp/register.hpp"
#include "drivelab/results/catalogue.hpp"
#include "drivelab/runner/protocol.hpp"
#include "drivelab/runner/run.hpp"
#include "../io/target_loop_device.hpp"
#include "emulator_harness.hpp"
#include "protocol_run.hpp"
#include "test_db.hpp"

namespace drivelab::oltp {
namespace {

namespace fs = std::filesystem;

struct EmulatorFixture : ::testing::Test {
  test::TempDir dir;
  std::ostringstream out;

  fs::path target;  ///< where the tests run; dir/target unless a test points it elsewhere

  void SetUp() override {
    target = dir.path() / "target";
    fs::create_directories(target);
  }

  runner::RunOutcome run(const std::string& yaml, runner::StopFlag& stop) {
    return test::run_protocol_text(yaml, target, dir.path() / "out", out, stop);
  }
  static double metric(const results::TestRecord& t, std::string_view name) {
    const auto* m = t.find_metric(name);
    EXPECT_NE(m, nullptr) << name;
    return m ? m->value : -1;
  }
};

TEST_F(EmulatorFixture, ShortRunOnOneWarehouseMeasuresAndPassesTheChecks) {
  // The shared, fully loaded database is placed where the test expects it and reused.
  test::copy_of_cached_database(dir.path() / "target", "drivelab-oltp-tpcc.db");
  runner::StopFlag stop;
  const auto r =
      run("protocol: p\nseed: 5\ntests:\n"
          "  - {name: oltp, kind: tpcc, warmup: 0s, duration: 2s, interval: 1s,\n"
          "     tpcc: {warehouses: 1, users: 2, reuse: true}}\n",
          stop);
  ASSERT_EQ(r.record.tests.size(), 1u);
  const auto& t = r.record.tests[0];
  ASSERT_EQ(t.status, results::Status::complete) << t.reason << "\n" << out.str();
  EXPECT_GT(metric(t, "tps"), 0.0);
  EXPECT_GT(metric(t, "transactions"), 0.0);
  EXPECT_EQ(metric(t, "errors"), 0.0);
  EXPECT_NEAR(metric(t, "nopm"), metric(t, "tpm_c"), 1e-9);
  EXPECT_GE(metric(t, "latency_p99_ms"), metric(t, "latency_p50_ms"));
  EXPECT_GE(metric(t, "latency_max_ms"), metric(t, "latency_p99_ms"));
  ASSERT_GE(t.checks.size(), 4u);
  for (const auto& c : t.checks) EXPECT_TRUE(c.passed) << c.name << ": " << c.detail;
  EXPECT_GE(t.intervals.size(), 2u);
  EXPECT_GE(drivelab::test_support::expect_interval_latency_histograms(t, "ms"), 2u);
  ASSERT_FALSE(t.intervals.empty());
  const auto& v = t.intervals[0].values;
  ASSERT_GE(v.size(), 11u);
  for (std::size_t i = 11; i < v.size(); ++i) {  // then the runner's device and host telemetry only
    const results::MetricDef* d = results::find_metric_def(v[i].first);
    EXPECT_TRUE(d != nullptr && d->has(results::kDeviceLine)) << v[i].first;
  }
  EXPECT_EQ(v[0].first, "tps");
  EXPECT_EQ(v[1].first, "tpm_c");
  EXPECT_EQ(v[5].first, "retries");
  EXPECT_EQ(v[8].first, "queue_len_avg");
  EXPECT_EQ(v[10].first, "pool_util_pct");
  ASSERT_EQ(t.groups.size(), 5u);
  EXPECT_EQ(t.groups[0].name, "new_order");
  EXPECT_EQ(t.groups[4].name, "stock_level");
  EXPECT_TRUE(t.histograms.count("response_time"));
  EXPECT_TRUE(t.histograms.count("response_time.delivery"));
  EXPECT_EQ(t.details["database_reused"], true);
  EXPECT_EQ(t.details["nurand_c_load"]["c_last"], test::cached_c_load().c_last);
  const int c_run = t.details["nurand_c_run"]["c_last"];
  EXPECT_TRUE(tpcc::c_last_run_is_valid(test::cached_c_load().c_last, c_run));
  EXPECT_EQ(t.config["users"], 2);
  EXPECT_EQ(t.config["terminals"], "dedicated");  // think: none keeps HammerDB's one connection per user
  EXPECT_EQ(t.details["terminals"]["mode"], "dedicated");
  EXPECT_EQ(metric(t, "queue_wait_max_ms"), 0.0);
  EXPECT_EQ(t.details["database"]["backend"]["backend"], "sqlite");
  // reuse keeps the database for the next run.
  EXPECT_TRUE(fs::exists(dir.path() / "target" / "drivelab-oltp-tpcc.db"));
}

TEST_F(EmulatorFixture, PrepareLoadsAndCleanupRemovesTheDatabase) {
  runner::StopFlag stop;
  const auto r =
      run("protocol: p\ntests:\n"
          "  - {name: small, kind: tpcc, warmup: 1s, duration: 1s, interval: 1s,\n"
          "     tpcc: {warehouses: 1, users: 3, scale_items: 1000, synchronous: OFF}}\n",
          stop);
  const auto& t = r.record.tests.at(0);
  ASSERT_EQ(t.status, results::Status::complete) << t.reason << "\n" << out.str();
  EXPECT_GT(metric(t, "tps"), 0.0);
  for (const auto& c : t.checks) EXPECT_TRUE(c.passed) << c.name << ": " << c.detail;
  EXPECT_EQ(t.details["database_reused"], false);
  EXPECT_GT(t.details["load"]["rate_mb_s"].get<double>(), 0.0);
  EXPECT_EQ(t.details["scale"]["tpcc_conformant_scale"], false);
  ASSERT_FALSE(t.warnings.empty());
  EXPECT_NE(t.warnings[0].find("not TPC-C"), std::string::npos);
  EXPECT_NE(out.str().find("loaded warehouse 1/1"), std::string::npos) << out.str();
  EXPECT_FALSE(fs::exists(dir.path() / "target" / "drivelab-small-tpcc.db"));
  EXPECT_FALSE(fs::exists(dir.path() / "target" / "drivelab-small-tpcc.db-wal"));
}

// profile: hammerdb end to end on SQLite: HammerDB's C 123 at load and run, its NOPM from the
// database's own counter (SUM(d_next_o_id) before/after), and a consistent database afterwards.
TEST_F(EmulatorFixture, HammerDbProfileRunsAndCountsNopmFromTheDatabase) {
  runner::StopFlag stop;
  const auto r =
      run("protocol: p\nseed: 9\ntests:\n"
          "  - {name: hdb, kind: tpcc, warmup: 2s, duration: 3s, interval: 1s,\n"
          "     tpcc: {warehouses: 2, users: 3, scale_items: 1000, synchronous: OFF, profile: hammerdb,\n"
          "            all_warehouses: true}}\n",
          stop);
  const auto& t = r.record.tests.at(0);
  ASSERT_EQ(t.status, results::Status::complete) << t.reason << "\n" << out.str();
  EXPECT_EQ(t.config["profile"], "hammerdb");
  EXPECT_EQ(t.config["all_warehouses"], true);
  EXPECT_EQ(t.details["terminals"]["profile"], "hammerdb");
  EXPECT_EQ(t.details["nurand_c_load"]["c_last"], tpcc::kHammerDbCLast);
  EXPECT_EQ(t.details["nurand_c_run"]["c_last"], tpcc::kHammerDbCLast);
  EXPECT_EQ(metric(t, "errors"), 0.0);
  for (const auto& c : t.checks) EXPECT_TRUE(c.passed) << c.name << ": " << c.detail;
  const auto* nopm = t.find_metric("nopm");
  ASSERT_NE(nopm, nullptr);
  EXPECT_NE(nopm->description.find("SUM(d_next_o_id)"), std::string::npos) << nopm->description;
  // The database's count and the terminals' count of the same phase differ only by the
  // New-Orders in flight at its two ends (a few per terminal at most).
  const double tpm_c = metric(t, "tpm_c");
  ASSERT_GT(tpm_c, 0.0);
  const double per_minute_of_one_order = 60.0 / t.measured_s;
  EXPECT_NEAR(nopm->value, tpm_c, 2 * 3 * per_minute_of_one_order + 0.05 * tpm_c);
}

TEST_F(EmulatorFixture, StopDuringTheMeasuredPhaseKeepsWhatWasMeasured) {
  test::copy_of_cached_database(dir.path() / "target", "drivelab-oltp-tpcc.db");
  runner::StopFlag stop;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    stop.request();
  });
  const auto r =
      run("protocol: p\ntests:\n"
          "  - {name: oltp, kind: tpcc, warmup: 0s, duration: 10m, interval: 1s,\n"
          "     tpcc: {warehouses: 1, users: 4, reuse: true}}\n",
          stop);
  stopper.join();
  const auto& t = r.record.tests.at(0);
  EXPECT_EQ(t.status, results::Status::interrupted) << t.reason;
  EXPECT_LT(t.measured_s, 60.0);
  EXPECT_GT(metric(t, "transactions"), 0.0);
  EXPECT_FALSE(t.intervals.empty());
}

TEST_F(EmulatorFixture, PooledTerminalsReportQueueWaitServiceTimeAndTheirWarnings) {
  test::copy_of_cached_database(dir.path() / "target", "drivelab-oltp-tpcc.db");
  runner::StopFlag stop;
  // 20 terminals on 1 warehouse with scaled think times: two non-TPC-C settings, both flagged.
  const auto r =
      run("protocol: p\nseed: 3\ntests:\n"
          "  - {name: oltp, kind: tpcc, warmup: 0s, duration: 2s, interval: 1s,\n"
          "     tpcc: {warehouses: 1, users: 20, think: tpcc, think_scale: 0.002, connections: 2, reuse: true}}\n",
          stop);
  const auto& t = r.record.tests.at(0);
  ASSERT_EQ(t.status, results::Status::complete) << t.reason << "\n" << out.str();
  EXPECT_EQ(t.config["terminals"], "pooled");
  EXPECT_EQ(t.config["connections"], 2);
  EXPECT_EQ(t.details["terminals"]["tpcc_conformant_think"], false);
  const auto has_warning = [&](std::string_view needle) {
    for (const auto& w : t.warnings)
      if (w.find(needle) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(has_warning("think_scale = 0.002")) << out.str();
  EXPECT_TRUE(has_warning("users = 20 is more than 10 x warehouses = 10"));
  EXPECT_GT(metric(t, "transactions"), 0.0);
  // Response = queue wait + service, transaction by transaction, so the exact means add up.
  EXPECT_NEAR(metric(t, "queue_wait_avg_ms") + metric(t, "service_time_avg_ms"), metric(t, "latency_avg_ms"),
              0.01 * metric(t, "latency_avg_ms"));
  EXPECT_GE(metric(t, "timer_lateness_p99_ms"), 0.0);
  EXPECT_GT(metric(t, "pool_utilisation_pct"), 0.0);
  EXPECT_LE(metric(t, "pool_utilisation_pct"), 100.0 + 1e-6);
  EXPECT_GT(metric(t, "driver_rss_peak_mib"), 0.0);
  EXPECT_GE(metric(t, "driver_cpu_pct"), 0.0);
  ASSERT_EQ(t.groups.size(), 5u);
  const auto group_has = [&](std::size_t g, std::string_view name) {
    for (const auto& m : t.groups[g].metrics)
      if (m.name == name) return true;
    return false;
  };
  for (const char* m : {"latency_p99_9_ms", "queue_wait_p50_ms", "service_time_p90_ms", "reconnects"})
    EXPECT_TRUE(group_has(1, m)) << m;
  EXPECT_TRUE(t.histograms.count("queue_wait.payment"));
  EXPECT_TRUE(t.histograms.count("service_time"));
  EXPECT_TRUE(t.histograms.count("timer_lateness"));
  ASSERT_TRUE(t.details.contains("pool"));
  // How the timer thread was scheduled (SCHED_FIFO where the process may, docs/oltp-tpcc.md section 4).
  const auto& pool = t.details["pool"];
  ASSERT_TRUE(pool.contains("timer_thread_policy"));
  const std::string policy = pool["timer_thread_policy"].get<std::string>();
  EXPECT_TRUE(policy == "fifo" || policy == "other") << policy;
  EXPECT_TRUE(pool.contains("timer_thread_nice"));
  EXPECT_TRUE(pool.contains("timer_thread_slice_us"));
  for (const auto& c : t.checks) EXPECT_TRUE(c.passed) << c.name << ": " << c.detail;
}

TEST_F(EmulatorFixture, OpenLoopRateIsRecorded) {
  test::copy_of_cached_database(dir.path() / "target", "drivelab-oltp-tpcc.db");
  runner::StopFlag stop;
  const auto r =
      run("protocol: p\ntests:\n"
          "  - {name: oltp, kind: tpcc, warmup: 0s, duration: 2s, interval: 1s,\n"
          "     tpcc: {warehouses: 1, rate: 100, connections: 4, reuse: true, synchronous: OFF}}\n",
          stop);
  const auto& t = r.record.tests.at(0);
  ASSERT_EQ(t.status, results::Status::complete) << t.reason << "\n" << out.str();
  EXPECT_EQ(t.config["rate"], 100.0);
  // ~200 arrivals (Poisson, sd 14); generous bounds.
  EXPECT_GT(metric(t, "arrival_rate"), 50.0);
  EXPECT_LT(metric(t, "arrival_rate"), 200.0);
  EXPECT_EQ(metric(t, "arrivals_dropped"), 0.0);
  EXPECT_GT(metric(t, "tps"), 30.0);
}

// A `rate: curve` on SQLite through the runner's curve (runner::run_rate_curve): the max run and
// each point recorded, each run's console line with requested and achieved TPS and its p99, and
// the sizing answer of a New-Order p99 bound read off them (runner::record_slo_answers).
TEST_F(EmulatorFixture, RateCurveOnSqlitePrintsEachRunAndTheSizingAnswer) {
  test::copy_of_cached_database(dir.path() / "target", "drivelab-oltp-tpcc.db");
  runner::StopFlag stop;
  const auto r =
      run("protocol: p\nseed: 5\ntests:\n"
          "  - {name: oltp, kind: tpcc, warmup: 200ms, duration: 1s, interval: 500ms,\n"
          "     tpcc: {warehouses: 1, users: 4, connections: 2, reuse: true, synchronous: 'OFF',\n"
          "            rate: curve, curve: [20, 300], slo: {new_order_p99_ms: 50}}}\n",
          stop);
  const auto& t = r.record.tests.at(0);
  ASSERT_EQ(t.status, results::Status::complete) << t.reason << "\n" << out.str();
  const std::string console = out.str();
  EXPECT_NE(console.find("curve max run: "), std::string::npos) << console;
  EXPECT_NE(console.find("curve point 20%: requested "), std::string::npos) << console;
  EXPECT_NE(console.find("curve point 300%: requested "), std::string::npos) << console;
  EXPECT_NE(console.find("max TPS with New-Order p99 <= 50 ms: "), std::string::npos) << console;
  ASSERT_EQ(t.details["points"].size(), 3u) << t.details["points"].dump();
  const auto& a = t.details["slo"].at(0);
  EXPECT_EQ(a["key"], "new_order_p99_ms");
  EXPECT_EQ(a["figure"], "New-Order p99");
  EXPECT_EQ(a["metric"], "max_tps_under_slo");
  EXPECT_FALSE(a.contains("cut_after")) << "a complete curve";
  // An answer is recorded only when there is one, and then as the details say.
  const auto* m = t.find_metric("max_tps_under_slo");
  if (a["outcome"] == "interpolated" || a["outcome"] == "bound_not_reached") {
    ASSERT_NE(m, nullptr);
    EXPECT_DOUBLE_EQ(m->value, a["answer"].get<double>());
    EXPECT_NE(t.find_metric("max_tpmc_under_slo"), nullptr);
  } else {
    EXPECT_EQ(m, nullptr) << a.dump();
  }
  EXPECT_EQ(t.config["slo"]["new_order_p99_ms"], 50.0);
}

// An interrupted tpcc curve: the answer of a partial curve whose points are all within the bound
// is a lower bound, recorded as such in details.slo and never as the headline max_tps_under_slo.
TEST_F(EmulatorFixture, AnInterruptedCurveRecordsALowerBoundNotAnAnswer) {
  test::copy_of_cached_database(dir.path() / "target", "drivelab-oltp-tpcc.db");
  runner::StopFlag stop;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    stop.request();
  });
  const auto r =
      run("protocol: p\nseed: 5\ntests:\n"
          "  - {name: oltp, kind: tpcc, warmup: 0s, duration: 1s, interval: 500ms,\n"
          "     tpcc: {warehouses: 1, users: 4, connections: 2, reuse: true, synchronous: 'OFF',\n"
          "            rate: curve, curve: [10, 20, 30, 40, 50, 60], slo: {p99_ms: 60000}}}\n",
          stop);
  stopper.join();
  const auto& t = r.record.tests.at(0);
  ASSERT_EQ(t.status, results::Status::interrupted) << t.reason << "\n" << out.str();
  EXPECT_EQ(t.find_metric("max_tps_under_slo"), nullptr) << out.str();
  EXPECT_EQ(t.find_metric("max_tpmc_under_slo"), nullptr);
  const auto& a = t.details["slo"].at(0);
  EXPECT_EQ(a["outcome"], "interrupted_lower_bound") << a.dump();
  const auto& points = t.details["points"];
  ASSERT_LT(points.size(), 7u) << "the curve was cut";
  EXPECT_EQ(a["cut_after"], points.back()["group"]) << a.dump();
  EXPECT_NE(out.str().find("max TPS with p99 of all types <= 60000 ms: at least "), std::string::npos) << out.str();
  // A point cut in its measured phase is left out: every point kept ran its whole second.
  for (const auto& p : points) EXPECT_GE(p["measured_s"].get<double>(), 0.9) << p.dump();
  std::cout << "details.slo: " << t.details["slo"].dump(2) << "\n";
}

// An open loop whose measured phase committed no transaction fails with the reason, rather than
// being complete with 0 TPS and 0-ms response times. rate x duration = 1 passes validation; this
// seed's first arrival is drawn 16.9 s after the terminals start (the TP monitor's arrival stream
// of seed 8336, test 0), so the 2 s measured phase has none even when a loaded machine starts or
// ends it seconds late (seed 5's first arrival, at 3.0 s, left one second to spare). If the
// driver's draw of arrivals changes, pick another seed whose first gap is as long.
TEST_F(EmulatorFixture, AMeasuredPhaseThatCommittedNothingFails) {
  runner::StopFlag stop;
  const auto r =
      run("protocol: p\nseed: 8336\ntests:\n"
          "  - {name: o, kind: tpcc, warmup: 0s, duration: 2s, interval: 1s,\n"
          "     tpcc: {warehouses: 1, scale_items: 1000, users: 2, connections: 1, synchronous: 'OFF', rate: 0.5}}\n",
          stop);
  const auto& t = r.record.tests.at(0);
  EXPECT_EQ(t.status, results::Status::failed) << out.str();
  test::expect_nothing_completed_at_half_a_tps(t.reason);
  EXPECT_EQ(t.find_metric("latency_p99_ms"), nullptr);
}

// A rate at which less than one arrival is expected in the measured phase is refused at its key
// (it gave a `complete` test of 0 transactions and 0-ms latencies).
TEST(TpccValidate, ARateBelowOneArrivalIsRefusedAtItsKey) {
  runner::Registry reg;
  register_emulators(reg);
  config::Diagnostics diags;
  const config::Document doc = config::Document::load_string(
      "protocol: p\ntests:\n  - name: o\n    kind: tpcc\n    duration: 10s\n    tpcc:\n      rate: 0.01\n", "p.yaml",
      diags);
  (void)runner::decode_protocol(doc, reg, diags);
  EXPECT_NE(diags.to_string().find("p.yaml:7:13: tests[0].tpcc.rate: rate 0.01/s over the measured 10 s expects "
                                   "0.1 arrivals, fewer than one"),
            std::string::npos)
      << diags.to_string();
}

// The space pre-check counts the run's growth (tpcc_growth.hpp) on a real small filesystem (ext4
// on a loop device) that holds the load but not the run.
struct SmallTargetFixture : EmulatorFixture {
  std::optional<testing::LoopDevice> loop;
  void SetUp() override {
    EmulatorFixture::SetUp();
    std::string why;
    auto made = testing::LoopDevice::create(128ull << 20, why);
    if (!made) GTEST_SKIP() << why;
    loop.emplace(std::move(*made));
    if (!loop->make_ext4() || !loop->mount_ext4()) GTEST_SKIP() << "cannot make or mount ext4 here";
    target = loop->dir() / "mnt";
  }

  /// Runs the one-test protocol `test` and checks that it failed with every one of `parts` in
  /// its reason; the reason goes to the test's log (the refusal as users see it).
  results::TestRecord refused(const std::string& test, std::initializer_list<const char*> parts) {
    runner::StopFlag stop;
    const auto r = run("protocol: p\ntests:\n" + test, stop);
    const auto& t = r.record.tests.at(0);
    EXPECT_EQ(t.status, results::Status::failed) << out.str();
    for (const char* part : parts) EXPECT_NE(t.reason.find(part), std::string::npos) << part << " in: " << t.reason;
    std::cout << "reason: " << t.reason << "\n";
    return t;
  }
};

TEST_F(SmallTargetFixture, PacedRunWhoseGrowthDoesNotFitIsRefusedBeforeTheLoad) {
  // ~45 MB to load fits in 128 MiB; 100 tps open loop (43.5 New-Orders/s) for an hour does not.
  refused(
      "  - {name: big, kind: tpcc, warmup: 0s, duration: 1h, interval: 10s,\n"
      "     tpcc: {warehouses: 1, scale_items: 1000, rate: 100, connections: 2}}\n",
      {"not enough free space", "estimated load", "growth 43.5 New-Orders/s x 3600 s", "log allowance", "needed",
       "free"});
  EXPECT_FALSE(fs::exists(target / "drivelab-big-tpcc.db"));  // refused before the load
}

TEST_F(SmallTargetFixture, ClosedLoopWhoseWarmupRateDoesNotFitIsRefusedBeforeTheMeasuredPhase) {
  // The load fits; the warm-up's New-Order rate over two hours does not.
  const results::TestRecord t = refused(
      "  - {name: big, kind: tpcc, warmup: 3s, duration: 2h, interval: 10s,\n"
      "     tpcc: {warehouses: 1, users: 2, scale_items: 1000, synchronous: OFF}}\n",
      {"not enough free space", "for the rest of this run: the database is on the drive (loaded size",
       "(the warm-up's rate) x 7200 s", "log allowance", "is free"});
  ASSERT_TRUE(t.details.contains("growth_estimate"));
  EXPECT_GT(t.details["growth_estimate"]["new_orders_per_s_in_warmup"].get<double>(), 0.0);
  EXPECT_GT(t.details["growth_estimate"]["growth_bytes"].get<double>(),
            t.details["growth_estimate"]["free_bytes"].get<double>());
  EXPECT_TRUE(t.intervals.empty());  // the measured phase never started
}

}  // namespace
}  // namespace drivelab::oltp
