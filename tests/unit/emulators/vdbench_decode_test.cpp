// Decoding of the `vdbench:` section, the curve rate rule and the xfersize distribution syntax.
#include <gtest/gtest.h>

#include <stdexcept>

#include "drivelab/config/document.hpp"
#include "drivelab/emulators/vdbench_config.hpp"

namespace drivelab::emulators {
namespace {

struct Decoded {
  config::Diagnostics diags;
  VdbenchConfig cfg;
  std::string errors() const { return diags.to_string(); }
};

Decoded decode(const std::string& yaml) {
  Decoded d;
  const config::Document doc = config::Document::load_string("vdbench: " + yaml, "t.yaml", d.diags);
  d.cfg = decode_vdbench(doc.root(d.diags).child("vdbench"));
  return d;
}

TEST(VdbenchCurveRate, RoundsUpTo100Above1000And10Below) {
  // vdbench RD_entry.set_iorate: (int) max * pct / 100, then round up.
  EXPECT_EQ(curve_rate(12345.6, 10), 1300u);    // 1234 -> 1300
  EXPECT_EQ(curve_rate(12345.6, 50), 6200u);    // 6172 -> 6200
  EXPECT_EQ(curve_rate(12345.6, 100), 12400u);  // 12345 -> 12400
  EXPECT_EQ(curve_rate(12345.6, 120), 14900u);  // 14814 -> 14900
  EXPECT_EQ(curve_rate(950, 50), 480u);         // 475 -> 480
  EXPECT_EQ(curve_rate(2000, 50), 1000u);       // exactly 1000: not above 1000, stays a multiple of 10
  EXPECT_EQ(curve_rate(2002, 50), 1100u);       // 1001 -> 1100
  EXPECT_EQ(curve_rate(760160, 90), 684200u);   // 684144 -> 684200
  EXPECT_EQ(curve_rate(99, 10), 10u);           // 9.9 -> 9 -> 10
  EXPECT_EQ(curve_rate(0, 50), 0u);
  EXPECT_EQ(curve_rate(1000, 0), 0u);
}

TEST(VdbenchXfersize, ParsesVdbenchDistributions) {
  const auto d = parse_xfersize("(4k,25,8k,75)");
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].size_bytes, 4096u);
  EXPECT_DOUBLE_EQ(d[0].pct, 25);
  EXPECT_EQ(d[1].size_bytes, 8192u);
  EXPECT_DOUBLE_EQ(d[1].pct, 75);
  EXPECT_EQ(parse_xfersize("64k").front().size_bytes, 65536u);
  EXPECT_DOUBLE_EQ(parse_xfersize(" 8k ").front().pct, 100);
  EXPECT_THROW(parse_xfersize("(4k,25,8k)"), std::invalid_argument);  // vdbench min,max,align: unsupported
  EXPECT_THROW(parse_xfersize("(4k,25,8k,75"), std::invalid_argument);
  EXPECT_THROW(parse_xfersize("(4k,x)"), std::invalid_argument);
}

TEST(VdbenchDecode, DefaultsAreVdbenchs) {
  const Decoded d = decode("{}");
  EXPECT_TRUE(d.diags.empty()) << d.errors();
  ASSERT_EQ(d.cfg.workloads.size(), 1u);
  const WorkloadDef& w = d.cfg.workloads[0];
  EXPECT_EQ(w.xfersize.front().size_bytes, 4096u);
  EXPECT_DOUBLE_EQ(w.rdpct, 100);
  EXPECT_DOUBLE_EQ(w.seekpct, 100);
  EXPECT_EQ(d.cfg.iorate, IorateMode::max);
  EXPECT_EQ(d.cfg.distribution, ArrivalDistribution::exponential);
  EXPECT_EQ(d.cfg.curve, (std::vector<double>{10, 50, 70, 80, 90, 100}));
}

TEST(VdbenchDecode, AFullCurveProfile) {
  const Decoded d = decode(R"Y({threads: 64, jobs: 2, engine: psync, file_size: 2GiB, iorate: curve,
      curve: [10, 50, 100, 120], stopcurve: 5, distribution: uniform, ss: "iops_slope:2%", ss_dur: 20s,
      ss_ramp: 5s, ss_stop: true,
      workloads: [{name: hot, xfersize: "(8k,90,64k,10)", rdpct: 70, skew: 90, hotband: [0, 10]},
                  {name: cold, xfersize: [{size: 8k, pct: 100}], rdpct: 70, range: [10, 100], seekpct: sequential,
                   compratio: 2, dedupratio: 3}]})Y");
  ASSERT_TRUE(d.diags.empty()) << d.errors();
  const VdbenchConfig& c = d.cfg;
  EXPECT_EQ(c.threads, 64u);
  EXPECT_EQ(c.jobs, 2u);
  EXPECT_EQ(c.engine, "psync");
  EXPECT_EQ(c.iorate, IorateMode::curve);
  EXPECT_EQ(c.curve, (std::vector<double>{10, 50, 100, 120}));
  EXPECT_DOUBLE_EQ(c.stopcurve_ms, 5);
  EXPECT_EQ(c.distribution, ArrivalDistribution::uniform);
  ASSERT_TRUE(c.ss.has_value());
  EXPECT_EQ(c.ss->to_string(), "iops_slope:2%");
  EXPECT_TRUE(c.ss_stop);
  ASSERT_EQ(c.workloads.size(), 2u);
  EXPECT_TRUE(c.workloads[0].hotband);
  EXPECT_DOUBLE_EQ(c.workloads[0].range_hi_pct, 10);
  EXPECT_DOUBLE_EQ(c.workloads[1].seekpct, 0);
  EXPECT_DOUBLE_EQ(c.workloads[1].dedupratio, 3);
  EXPECT_EQ(effective_skews(c.workloads), (std::vector<double>{90, 10}));
  EXPECT_NEAR(c.workloads[0].mean_xfersize_bytes(), 0.9 * 8192 + 0.1 * 65536, 1e-6);

  // The effective config decodes back to the same thing.
  const std::string again = to_json(c).dump();
  const Decoded d2 = decode(again);
  EXPECT_TRUE(d2.diags.empty()) << d2.errors() << again;
  EXPECT_EQ(to_json(d2.cfg).dump(), again);
}

// An empty curve is called one (it was "expected a list of ...", of a list); a scalar is no list.
TEST(VdbenchDecode, AnEmptyCurveIsCalledEmpty) {
  EXPECT_EQ(decode("{iorate: curve, curve: []}").errors(),
            "t.yaml:1:33: vdbench.curve: the curve is an empty list: give a list of percentages of the max run, e.g. "
            "[10, 50, 70, 80, 90, 100, 110, 120]");
  EXPECT_EQ(decode("{iorate: curve, curve: 50}").errors(),
            "t.yaml:1:33: vdbench.curve: expected a list: give a list of percentages of the max run, e.g. [10, 50, "
            "70, 80, 90, 100, 110, 120]");
}

TEST(VdbenchDecode, ACurveOfMoreThanAThousandPointsIsRefusedAtItsKey) {
  std::string points = "0.5";  // 1001 different points (a repeated point is refused on its own)
  for (int i = 1; i <= 1000; ++i) points += ", " + std::to_string(i);
  const Decoded d = decode("{iorate: curve, curve: [" + points + "]}");
  EXPECT_EQ(d.errors(),
            "t.yaml:1:33: vdbench.curve: 1001 curve points; at most 1000 (each point is a run of warm-up and "
            "measured time: vdbench's curves have about ten)");
  const Decoded ok = decode("{iorate: curve, curve: [" + points.substr(5) + "]}");  // 1000 points
  EXPECT_TRUE(ok.diags.empty()) << ok.errors();
  EXPECT_EQ(ok.cfg.curve.size(), 1000u);
}

// `workloads: []`, `workloads: ~` and a `workloads:` whose items are commented out ran the default
// workload (100% reads) as if the key were absent; each is refused at its key. The key left out
// is the default.
TEST(VdbenchDecode, AnEmptyWorkloadListIsRefusedAtItsKey) {
  const Decoded d = decode("{iorate: max, workloads: []}");
  EXPECT_EQ(d.errors(),
            "t.yaml:1:35: vdbench.workloads: workloads is an empty list: give at least one workload (rdpct, seekpct, "
            "xfersize, skew), or leave the key out for the default (one workload: 100% random 4 KiB reads)");
  const Decoded null = decode("{iorate: max, workloads: ~}");
  EXPECT_NE(null.errors().find("vdbench.workloads: workloads has no value (an empty key or '~', YAML's null)"),
            std::string::npos)
      << null.errors();
  const Decoded commented = decode("\n  iorate: max\n  workloads:\n  #  - {name: w, rdpct: 0}\n");
  EXPECT_NE(commented.errors().find("t.yaml:3:"), std::string::npos) << commented.errors();
  EXPECT_NE(commented.errors().find("workloads has no value"), std::string::npos) << commented.errors();
  const Decoded absent = decode("{iorate: max}");
  EXPECT_TRUE(absent.diags.empty()) << absent.errors();
  ASSERT_EQ(absent.cfg.workloads.size(), 1u);
  EXPECT_EQ(absent.cfg.workloads[0].name, "default");
}

TEST(VdbenchDecode, FixedRateAndUnspecifiedSkewsShareTheRest) {
  const Decoded d = decode("{iorate: 5000, workloads: [{name: a, skew: 40}, {name: b}, {name: c}]}");
  ASSERT_TRUE(d.diags.empty()) << d.errors();
  EXPECT_EQ(d.cfg.iorate, IorateMode::fixed);
  EXPECT_DOUBLE_EQ(d.cfg.iorate_iops, 5000);
  EXPECT_EQ(effective_skews(d.cfg.workloads), (std::vector<double>{40, 30, 30}));
}

TEST(VdbenchDecode, ReportsEveryMistakeWithItsPath) {
  const Decoded d = decode(R"Y({iorate: fast, threads: 0, engine: nvme, ss: "clat:1%",
      workloads: [{name: a, xfersize: "(4k,50,8k,40)", skew: 70, range: [50, 10], rdpct: 120},
                  {name: a, skew: 40, seekpct: sideways, hotband: [0, 5], range: [0, 5], colour: red}]})Y");
  const std::string e = d.errors();
  EXPECT_NE(e.find("vdbench.iorate: expected 'max', 'curve' or a number of IOPS, found 'fast'"), std::string::npos)
      << e;
  EXPECT_NE(e.find("vdbench.threads: threads must be between 1 and 65536, found 0"), std::string::npos) << e;
  EXPECT_NE(e.find("vdbench.engine: engine must be one of:"), std::string::npos) << e;
  EXPECT_NE(e.find("vdbench.ss: unknown steady-state metric 'clat'"), std::string::npos) << e;
  EXPECT_NE(e.find("workloads[0].xfersize: xfersize shares must add up to 100, found 90"), std::string::npos) << e;
  EXPECT_NE(e.find("workloads[0].range: expected 0 <= low < high <= 100, found [50, 10]"), std::string::npos) << e;
  EXPECT_NE(e.find("workloads[0].rdpct"), std::string::npos) << e;
  EXPECT_NE(e.find("workloads[1]: duplicate workload name 'a'"), std::string::npos) << e;
  EXPECT_NE(e.find("workloads[1].seekpct: expected a percentage, 'random' or 'sequential', found 'sideways'"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("range and hotband are mutually exclusive"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown key 'colour'"), std::string::npos) << e;
  EXPECT_NE(e.find("the skews add up to 110%, more than 100%"), std::string::npos) << e;
}

TEST(VdbenchDecode, CurveKeysAreIgnoredWithoutACurveAndSkewsMustLeaveRoom) {
  // A curve profile becomes a max run with one override: its curve keys are then unused, not wrong.
  const Decoded a = decode("{iorate: max, curve: [50], stopcurve: 3}");
  EXPECT_TRUE(a.diags.empty()) << a.errors();
  EXPECT_EQ(to_json(a.cfg).count("curve"), 0u);
  const Decoded z = decode("{iorate: curve, curve: [0]}");
  EXPECT_NE(z.errors().find("curve points must be above 0 and at most 1000%, found 0"), std::string::npos)
      << z.errors();
  // Each point is its own group (point_050): a repeated point would overwrite the other's figures.
  const Decoded twice = decode("{iorate: curve, curve: [50, 100, 50]}");
  EXPECT_NE(twice.errors().find("curve[2]: curve point 50 repeats the point 50 (group point_050)"), std::string::npos)
      << twice.errors();
  const Decoded b = decode("{workloads: [{name: a, skew: 100}, {name: b}]}");
  EXPECT_NE(b.errors().find("leaving nothing for the 1 workload(s) without a skew"), std::string::npos) << b.errors();
  const Decoded c = decode("{workloads: [{name: a, skew: 60}, {name: b, skew: 30}]}");
  EXPECT_NE(c.errors().find("when every workload has a skew they must add up to 100"), std::string::npos) << c.errors();
  const Decoded e = decode("{threads: 65536, workloads: [{xfersize: 1m}]}");
  EXPECT_NE(e.errors().find("of I/O buffers is more than 4 GiB"), std::string::npos) << e.errors();
}

TEST(VdbenchDecode, SloBoundsAndTheirMistakesAtFileLineKey) {
  const Decoded d = decode("{iorate: curve, slo: {p99_ms: 5, mean_ms: 2.5}}");
  ASSERT_TRUE(d.diags.empty()) << d.errors();
  EXPECT_EQ(d.cfg.slo_p99_ms, 5.0);
  EXPECT_EQ(d.cfg.slo_mean_ms, 2.5);
  const results::Json j = to_json(d.cfg);
  EXPECT_EQ(j["slo"], (results::Json{{"p99_ms", 5.0}, {"mean_ms", 2.5}}));
  const Decoded again = decode(j.dump());
  EXPECT_TRUE(again.diags.empty()) << again.errors();
  EXPECT_EQ(again.cfg.slo_p99_ms, 5.0);
  const Decoded one = decode("{iorate: curve, slo: {p99_ms: 1}}");
  EXPECT_EQ(one.cfg.slo_p99_ms, 1.0);
  EXPECT_FALSE(one.cfg.slo_mean_ms);

  EXPECT_EQ(decode("{iorate: curve, slo: {p99: 5}}").errors(),
            "t.yaml:1:32: vdbench.slo.p99: unknown key 'p99' (did you mean 'p99_ms'?)\n"
            "t.yaml:1:31: vdbench.slo: slo needs p99_ms, mean_ms or both (ms of latency the curve's IOPS must stay "
            "within), e.g. {p99_ms: 5}");
  const std::string neg = decode("{iorate: curve, slo: {p99_ms: 0}}").errors();
  EXPECT_NE(neg.find("t.yaml:1:40: vdbench.slo.p99_ms: p99_ms must be between 0.001 and 1e+07, found 0"),
            std::string::npos)
      << neg;
  const std::string word = decode("{iorate: curve, slo: {mean_ms: fast}}").errors();
  EXPECT_NE(word.find("vdbench.slo.mean_ms: expected a number, found 'fast'"), std::string::npos) << word;
  const std::string scalar = decode("{iorate: curve, slo: 5}").errors();
  EXPECT_NE(scalar.find("vdbench.slo: expected a mapping"), std::string::npos) << scalar;
}

}  // namespace
}  // namespace drivelab::emulators
