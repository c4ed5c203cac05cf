#include <gtest/gtest.h>

#include <sstream>
#include <thread>

#include "drivelab/oltp/register.hpp"
#include "drivelab/runner/protocol.hpp"
#include "drivelab/runner/run.hpp"
#include "test_db.hpp"

namespace drivelab::oltp {
namespace {

namespace fs = std::filesystem;

struct EmulatorFixture : ::testing::Test {
  test::TempDir dir;
  std::ostringstream out;

  void SetUp() override { fs::create_directories(dir.path() / "target"); }

  runner::RunOutcome run(const std::string& yaml, runner::StopFlag& stop) {
    runner::Registry reg;
    register_emulators(reg);
    config::Diagnostics diags;
    config::Document doc = config::Document::load_string(yaml, "p.yaml", diags);
    runner::Protocol p = runner::decode_protocol(doc, reg, diags);
    EXPECT_TRUE(diags.empty()) << diags.to_string();
    runner::RunOptions o;
    o.target = dir.path() / "target";
    o.out_dir = dir.path() / "out";
    o.out = &out;
    return runner::run_protocol(p, o, stop);
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
  const auto r = run("protocol: p\nseed: 5\ntests:\n"
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
  ASSERT_EQ(t.checks.size(), 4u);
  for (const auto& c : t.checks) EXPECT_TRUE(c.passed) << c.name << ": " << c.detail;
  EXPECT_GE(t.intervals.size(), 2u);
  ASSERT_FALSE(t.intervals.empty());
  EXPECT_EQ(t.intervals[0].values[0].first, "tps");
  EXPECT_EQ(t.intervals[0].values[1].first, "tpm_c");
  EXPECT_EQ(t.intervals[0].values[5].first, "retries");
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
  // reuse keeps the database for the next run.
  EXPECT_TRUE(fs::exists(dir.path() / "target" / "drivelab-oltp-tpcc.db"));
}

TEST_F(EmulatorFixture, PrepareLoadsAndCleanupRemovesTheDatabase) {
  runner::StopFlag stop;
  const auto r = run("protocol: p\ntests:\n"
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

TEST_F(EmulatorFixture, StopDuringTheMeasuredPhaseKeepsWhatWasMeasured) {
  test::copy_of_cached_database(dir.path() / "target", "drivelab-oltp-tpcc.db");
  runner::StopFlag stop;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    stop.request();
  });
  const auto r = run("protocol: p\ntests:\n"
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

}  // namespace
}  // namespace drivelab::oltp
