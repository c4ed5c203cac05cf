// The `vdbench` kind driven through the Emulator interface, as the runner drives it: a curve with
// the null engine, a mixed curve on a real O_DIRECT file, a steady-state end of the max run.
// No timing assertions: only what every run must record.
#include <algorithm>
#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>
#include <iostream>
#include <thread>

#include "drivelab/config/document.hpp"
#include "drivelab/emulators/register.hpp"
#include "drivelab/emulators/vdbench_config.hpp"
#include "drivelab/io/engine.hpp"
#include "drivelab/results/recorder.hpp"
#include "drivelab/runner/emulator.hpp"
#include "emulator_harness.hpp"
#include "temp_dir.hpp"

namespace drivelab::emulators {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// Under the build tree: the same filesystem as the checkout, where O_DIRECT works if the disk allows.
struct ScratchDir : drivelab::test_support::TempDir {
  ScratchDir() : drivelab::test_support::TempDir("vdbench", drivelab::test_support::TempBase::build_tree) {}
};

struct VdbTest : drivelab::test_support::EmulatorHarness {
  VdbTest(const fs::path& target, const std::string& yaml, std::chrono::nanoseconds warmup,
          std::chrono::nanoseconds duration, std::chrono::nanoseconds interval)
      : EmulatorHarness(&register_emulators, "vdbench", target, yaml, warmup, duration, interval, 7) {}
  double gm(const std::string& g, const std::string& name) const { return group_metric(g, name); }
};

std::string real_engine() { return io::probe_engine("io_uring").usable ? "io_uring" : "psync"; }

TEST(VdbenchEmulator, NullEngineCurveRecordsEveryPoint) {
  ScratchDir dir;
  VdbTest t(dir.path(), "{engine: null, threads: 8, iorate: curve, curve: [50, 100, 120]}", 0s, 1s, 500ms);
  EXPECT_EQ(t.emulator->device_access(), runner::DeviceAccess::read_only) << "rdpct 100 only reads";
  t.run_all();
  EXPECT_TRUE(fs::is_empty(dir.path())) << "the null engine creates no file";
  const double max_iops = t.gm("max", "achieved_iops");
  ASSERT_GT(max_iops, 0);
  EXPECT_DOUBLE_EQ(t.gm("max", "requested_iops"), 0);
  for (const char* g : {"point_050", "point_100", "point_120"}) {
    const double pct = t.gm(g, "requested_pct");
    EXPECT_DOUBLE_EQ(t.gm(g, "requested_iops"), static_cast<double>(curve_rate(max_iops, pct))) << g;
    EXPECT_GT(t.gm(g, "ios"), 0) << g;
    EXPECT_GE(t.gm(g, "latency_avg_us"), t.gm(g, "service_latency_avg_us") * 0.999) << g;
    EXPECT_LE(t.gm(g, "latency_p50_us"), t.gm(g, "latency_p99_us")) << g;
    EXPECT_LE(t.gm(g, "latency_p99_us"), t.gm(g, "latency_max_us")) << g;
    EXPECT_EQ(t.record.histograms.count(std::string("lateness_") + g), 1u) << g;
  }
  // The max run is a closed loop: the pump updates one histogram per I/O and the sample settles
  // the other two when taken (VdbSample::settle): every I/O in all three, each one on time.
  ASSERT_EQ(t.record.histograms.count("lateness_max"), 1u);
  const LatencyHistogram& late = t.record.histograms.at("lateness_max");
  EXPECT_EQ(late.count(), static_cast<std::uint64_t>(t.gm("max", "ios")));
  EXPECT_EQ(late.max(), 0);
  EXPECT_DOUBLE_EQ(t.gm("max", "latency_avg_us"), t.gm("max", "service_latency_avg_us"));
  EXPECT_DOUBLE_EQ(t.gm("curve", "points_run"), 3);
  EXPECT_DOUBLE_EQ(t.gm("curve", "max_run_iops"), max_iops);
  // Intervals carry the point they belong to, in order.
  ASSERT_GE(t.record.intervals.size(), 8u);
  EXPECT_GE(drivelab::test_support::expect_interval_latency_histograms(t.record, "us"), 8u);
  EXPECT_EQ(t.record.intervals.front().values[0].first, "iops");
  double last_pct = -1;
  for (const auto& iv : t.record.intervals)
    for (const auto& [k, v] : iv.values)
      if (k == "point_pct") {
        EXPECT_GE(v, last_pct);
        last_pct = v;
      }
  EXPECT_DOUBLE_EQ(last_pct, 120);
  ASSERT_NE(t.check("every issued I/O completed"), nullptr);
  EXPECT_TRUE(t.check("every issued I/O completed")->passed) << t.check("every issued I/O completed")->detail;
  EXPECT_TRUE(t.check("interval counts add up to the points' ios")->passed);
  EXPECT_NE(t.check("littles_law_max"), nullptr) << "checked at iorate=max";
  EXPECT_GT(t.record.find_metric("iops")->value, 0);
  EXPECT_EQ(t.record.details["points"].size(), 4u);
  // One workload: its share of every point is all of the point's I/Os (VdbenchJob::take sets its
  // count to the sample's ios instead of counting each completion).
  for (const auto& p : t.record.details["points"]) {
    ASSERT_EQ(p["workload_share_pct"].size(), 1u);
    EXPECT_DOUBLE_EQ(p["workload_share_pct"].begin()->get<double>(), 100.0) << p["group"];
  }
}

// The sizing answers of a real curve: the bounds lie between what the 25% point and the
// overloaded 400% point measure (the null engine paced at 4x its max run piles up a backlog, so
// that point's latency grows by about a second per second: p99 ~800 ms, mean ~400 ms here, even
// when the max run was measured while other work held the CPU; the 25% point's p99 stays within
// milliseconds to ~15 ms on the busy shared VM),
// and the answer must be the interpolation between the points the record names, computed here
// again from their recorded figures.
TEST(VdbenchEmulator, SloAnswersAreInterpolatedBetweenTheRecordedPoints) {
  ScratchDir dir;
  VdbTest t(dir.path(), "{engine: null, threads: 8, iorate: curve, curve: [25, 400], slo: {p99_ms: 150, mean_ms: 80}}",
            0s, 1s, 500ms);
  t.run_all();
  ASSERT_GE(t.record.metrics.size(), 3u);
  EXPECT_EQ(t.record.metrics[1].name, "max_iops_under_p99") << "second: among the summary's first columns";
  EXPECT_EQ(t.record.metrics[2].name, "max_iops_under_mean");
  const auto& slo = t.record.details["slo"];
  ASSERT_EQ(slo.size(), 2u) << slo.dump();
  for (const auto& a : slo) {
    const std::string metric = a["metric"].get<std::string>();
    const bool p99 = metric == "max_iops_under_p99";
    const std::string figure = p99 ? "latency_p99_us" : "latency_avg_us";
    const double bound = a["bound_ms"].get<double>();
    const double answer = t.record.find_metric(metric)->value;
    std::cout << "sizing answer: " << t.record.find_metric(metric)->description << "\n";
    EXPECT_DOUBLE_EQ(answer, a["answer"].get<double>());
    ASSERT_EQ(a["outcome"], "interpolated") << a.dump();
    const std::string lo = a["below"]["group"].get<std::string>(), hi = a["above"]["group"].get<std::string>();
    const double lo_rate = t.gm(lo, "achieved_iops"), hi_rate = t.gm(hi, "achieved_iops");
    const double lo_ms = t.gm(lo, figure) / 1e3, hi_ms = t.gm(hi, figure) / 1e3;
    EXPECT_LE(lo_ms, bound) << a.dump();
    EXPECT_GT(hi_ms, bound) << a.dump();
    EXPECT_LE(lo_rate, hi_rate);
    const double expected = lo_rate + (bound - lo_ms) * (hi_rate - lo_rate) / (hi_ms - lo_ms);
    EXPECT_NEAR(answer, expected, 1e-6 * expected) << a.dump();
    EXPECT_GE(answer, lo_rate);
    EXPECT_LE(answer, hi_rate);
    // The first crossing: no run at a lower rate than the one above is beyond the bound.
    for (const char* g : {"max", "point_025", "point_400"}) {
      if (t.gm(g, "achieved_iops") < hi_rate) {
        EXPECT_LE(t.gm(g, figure) / 1e3, bound) << g;
      }
    }
    EXPECT_NE(t.record.find_metric(metric)->description.find("interpolated between"), std::string::npos);
  }
  // Every point's p99 is in the details the reporter reads.
  for (const auto& p : t.record.details["points"]) EXPECT_TRUE(p.contains("latency_p99_us")) << p.dump();
}

TEST(VdbenchEmulator, SloWithoutACurveWarnsAndAnswersNothing) {
  ScratchDir dir;
  VdbTest t(dir.path(), "{engine: null, threads: 2, iorate: max, slo: {p99_ms: 1}}", 0s, 500ms, 500ms);
  t.run_all();
  EXPECT_EQ(t.record.find_metric("max_iops_under_p99"), nullptr);
  // The null engine's I/Os take no time, so the max run also warns that its threads kept fewer
  // than `threads` I/Os outstanding (littles_law_max); the slo warning is the other one.
  EXPECT_EQ(std::count_if(t.record.warnings.begin(), t.record.warnings.end(),
                          [](const std::string& w) {
                            return w.find("slo: the sizing answers are read off a curve") != std::string::npos;
                          }),
            1);
}

TEST(VdbenchEmulator, MixedCurveOnADirectFileCompletes) {
  ScratchDir dir;
  VdbTest t(dir.path(),
            "{engine: " + real_engine() +
                ", threads: 4, file_size: 16MiB, keep_file: false, iorate: curve, curve: [50, 120],"
                " workloads: [{name: data, xfersize: \"(4k,50,8k,50)\", rdpct: 70, skew: 80, hotband: [0, 50]},"
                " {name: log, xfersize: 16k, rdpct: 0, seekpct: 0, range: [50, 100], compratio: 2, dedupratio: 2}]}",
            200ms, 1s, 500ms);
  EXPECT_EQ(t.emulator->device_access(), runner::DeviceAccess::read_write);
  t.run_all();
  EXPECT_FALSE(fs::exists(dir.path() / "drivelab-unit.dat")) << "keep_file: false removes the file";
  for (const char* g : {"max", "point_050", "point_120"}) {
    EXPECT_GT(t.gm(g, "read_ios"), 0) << g;
    EXPECT_GT(t.gm(g, "write_ios"), 0) << g;
    EXPECT_GE(t.gm(g, "threads"), 4) << g;
    EXPECT_GE(t.gm(g, "cpu_usr_s") + t.gm(g, "cpu_sys_s"), 0) << g;
  }
  const auto& shares = t.record.details["points"][0]["workload_share_pct"];
  EXPECT_GT(shares["data"].get<double>(), shares["log"].get<double>());
  for (const auto& p : t.record.details["points"])  // each completion counted for its workload once
    EXPECT_NEAR(p["workload_share_pct"]["data"].get<double>() + p["workload_share_pct"]["log"].get<double>(), 100.0,
                1e-9)
        << p["group"];
  EXPECT_GT(t.record.details["dedup_units_written"].get<double>(),
            t.record.details["dedup_units_unique"].get<double>());
  for (const auto& c : t.record.checks) {
    if (c.name != "littles_law_max") {
      EXPECT_TRUE(c.passed) << c.name << ": " << c.detail;
    }
  }
}

TEST(VdbenchEmulator, RegionOfTheFileIsWhatTheWorkloadsAddress) {
  ScratchDir dir;
  VdbTest t(dir.path(),
            "{engine: psync, threads: 2, file_size: 16MiB, keep_file: false, region: {offset: 50%, size: 25%},"
            " workloads: [{name: w, xfersize: 4k, rdpct: 50}]}",
            100ms, 500ms, 500ms);
  t.run_all();
  const auto& file = t.record.details["file"];
  EXPECT_EQ(file["region_offset_bytes"].get<std::uint64_t>(), 8u << 20) << file.dump();
  EXPECT_EQ(file["region_length_bytes"].get<std::uint64_t>(), 4u << 20) << file.dump();
  EXPECT_GT(t.gm("max", "ios"), 0);
}

TEST(VdbenchEmulator, SteadyStateEndsTheMaxRunEarly) {
  ScratchDir dir;
  VdbTest t(dir.path(), "{engine: null, threads: 4, ss: \"iops:100%\", ss_dur: 2s, ss_stop: true}", 0s, 30s, 1s);
  t.run_all();
  const auto& p = t.record.details["points"][0]["steady_state"];
  EXPECT_TRUE(p["attained"].get<bool>());
  EXPECT_TRUE(p["ended_run"].get<bool>());
  EXPECT_LT(t.gm("max", "measured_s"), 30.0);
  EXPECT_DOUBLE_EQ(t.gm("max", "ss_attained"), 1.0);
}

TEST(VdbenchEmulator, FixedRateStopsOnRequest) {
  ScratchDir dir;
  VdbTest t(dir.path(), "{engine: null, threads: 2, iorate: 2000, distribution: deterministic}", 0s, 60s, 100ms);
  t.emulator->prepare(t.ctx);
  t.emulator->warmup(t.ctx);
  std::thread stopper([&] {
    std::this_thread::sleep_for(300ms);
    t.stop.request();
  });
  t.emulator->run(t.ctx);
  stopper.join();
  t.emulator->verify(t.ctx);
  t.emulator->cleanup(t.ctx);
  EXPECT_LT(t.gm("fixed", "measured_s"), 60.0);
  EXPECT_DOUBLE_EQ(t.gm("fixed", "requested_iops"), 2000);
  EXPECT_GT(t.gm("fixed", "ios"), 0);
  EXPECT_EQ(t.check("littles_law_max"), nullptr) << "no Little's-law check for a paced run";
}

// A curve stopped during a point (Ctrl-C): the point cut in its measured phase is left out, and a
// bound the measured runs never reached is only a lower bound of a partial curve, recorded as
// interrupted_lower_bound with no headline metric (runner::qualify), as sysbench and tpcc do.
TEST(VdbenchEmulator, AStoppedCurveKeepsWholePointsAndAnswersALowerBound) {
  ScratchDir dir;
  VdbTest t(dir.path(), "{engine: null, threads: 2, iorate: curve, curve: [10, 20, 30, 40], slo: {p99_ms: 60000}}", 0s,
            1s, 250ms);
  t.emulator->prepare(t.ctx);
  t.emulator->warmup(t.ctx);
  std::thread stopper([&] {
    std::this_thread::sleep_for(2500ms);  // inside point_020's measured second
    t.stop.request();
  });
  t.emulator->run(t.ctx);
  stopper.join();
  t.emulator->cleanup(t.ctx);
  const auto& points = t.record.details["points"];
  ASSERT_GE(points.size(), 1u);
  ASSERT_LT(points.size(), 5u) << "the curve was cut";
  for (const auto& p : points) EXPECT_GE(p["measured_s"].get<double>(), 0.9) << p.dump();
  const auto& a = t.record.details["slo"][0];
  EXPECT_EQ(a["outcome"], "interrupted_lower_bound") << a.dump();
  EXPECT_EQ(a["cut_after"], points.back()["group"]) << a.dump();
  EXPECT_EQ(t.record.find_metric("max_iops_under_p99"), nullptr);
}

}  // namespace
}  // namespace drivelab::emulators
