// Comparisons with confidence (report/compare.hpp): compare_values, Holm across a test's metrics,
// compare() of two sides read from real record files (results::write_record), the text and JSON,
// the noise table; and the reporter's ranks and charts with intervals (ties, error bars).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "drivelab/core/inference.hpp"
#include "drivelab/report/compare.hpp"
#include "drivelab/report/report.hpp"
#include "drivelab/results/record.hpp"
#include "report_test_util.hpp"

namespace drivelab::report {
namespace {

using testing::read_text;
using testing::table_of;
using testing::TempDir;

/// Baseline IOPS of five runs (CV about 0.8%) and their latencies.
const std::vector<double> kIops{10000, 10100, 9900, 10050, 9950};
const std::vector<double> kLatency{100, 99, 101, 99.5, 100.5};

std::vector<double> scaled(const std::vector<double>& v, double f) {
  std::vector<double> out;
  for (double x : v) out.push_back(x * f);
  return out;
}

/// A complete one-test record (test "4k-random-read", kind io) written with results::write_record.
std::filesystem::path write_run(const std::filesystem::path& dir, const std::string& run_id, double iops,
                                double latency_us, const std::string& test = "4k-random-read",
                                results::Json config = results::Json{{"rw", "randread"}}) {
  results::RunRecord rec;
  rec.run_id = run_id;
  rec.status = results::Status::complete;
  rec.target = results::Json{{"kind", "directory"}, {"model", "Test drive"}};
  results::TestRecord t;
  t.name = test;
  t.kind = "io";
  t.status = results::Status::complete;
  t.config = std::move(config);
  t.metrics = {{"iops", iops, "1/s", "I/Os per second"}, {"latency_avg_us", latency_us, "us", "average latency"}};
  rec.tests.push_back(std::move(t));
  const auto path = dir / (run_id + ".json");
  results::write_record(path, rec);
  return path;
}

Dataset side(const std::vector<std::filesystem::path>& files) {
  Dataset d;
  for (const auto& f : files) add_file(d, f, {});
  return d;
}

std::vector<std::filesystem::path> runs(const std::filesystem::path& dir, const std::string& prefix,
                                        const std::vector<double>& iops, const std::vector<double>& lat) {
  std::vector<std::filesystem::path> out;
  for (std::size_t i = 0; i < iops.size(); ++i)
    out.push_back(write_run(dir, prefix + std::to_string(i), iops[i], lat[i]));
  return out;
}

TEST(CompareValues, TheIntervalIsOfTheRatioOfGeometricMeans) {
  const MetricComparison m = compare_values("iops", "1/s", Better::higher, kIops, scaled(kIops, 0.9));
  ASSERT_TRUE(m.tested()) << m.not_tested;
  EXPECT_NEAR(m.estimate->ratio, 0.9, 1e-12);  // every value scaled by 0.9: the geometric means too
  EXPECT_NEAR(m.change_pct(), -10.0, 1e-9);
  EXPECT_TRUE(m.change_ci_pct().contains(-10.0));
  EXPECT_NEAR(MetricComparison::geometric_mean(scaled(kIops, 0.9)) / MetricComparison::geometric_mean(kIops), 0.9,
              1e-12);
  ASSERT_TRUE(m.estimate->mann_whitney_p.has_value());  // N >= 5 on both sides
  EXPECT_GT(m.estimate->detectable_change, 0.0);
}

TEST(CompareValues, NotTestedBelowTwoValuesOrForNonPositiveValues) {
  const MetricComparison one = compare_values("iops", "1/s", Better::higher, kIops, {9000});
  EXPECT_FALSE(one.tested());
  EXPECT_NE(one.not_tested.find("baseline 5, candidate 1"), std::string::npos) << one.not_tested;
  const MetricComparison zero = compare_values("iops", "1/s", Better::higher, kIops, {0, 1, 2});
  EXPECT_FALSE(zero.tested());
  EXPECT_NE(zero.not_tested.find("not > 0"), std::string::npos) << zero.not_tested;
  std::vector<MetricComparison> v{one, zero};
  apply_holm(v);
  EXPECT_EQ(verdict_word(v[0]), "not tested");
  EXPECT_FALSE(v[0].worse_beyond_margin);
}

TEST(CompareHolm, AdjustsAcrossTheMetricsOfATest) {
  // A candidate a little slower: find a scale whose single p lies in (0.02, 0.05), so that with two
  // other metrics of p > 0.3 Holm's adjusted p (3 x p) is above 0.05.
  const std::vector<double> base{100, 103, 97, 101, 99};
  const std::vector<double> other{101, 98, 102, 100, 99};
  std::optional<MetricComparison> marginal;
  for (double f = 0.999; f > 0.9 && !marginal; f -= 0.0005) {
    MetricComparison m = compare_values("iops", "1/s", Better::higher, base, scaled(base, f));
    if (m.tested() && m.estimate->p_value > 0.02 && m.estimate->p_value < 0.05) marginal = m;
  }
  ASSERT_TRUE(marginal.has_value());
  std::vector<MetricComparison> alone{*marginal};
  apply_holm(alone);
  EXPECT_EQ(alone[0].verdict, inference::Verdict::worse);  // alone: p < 0.05, worse
  EXPECT_EQ(verdict_word(alone[0]), "slower");
  EXPECT_TRUE(alone[0].worse_beyond_margin);

  std::vector<MetricComparison> three{*marginal, compare_values("tps", "1/s", Better::higher, base, other),
                                      compare_values("latency_avg_us", "us", Better::lower, base, other)};
  ASSERT_TRUE(three[1].tested() && three[2].tested());
  ASSERT_GT(three[1].estimate->p_value, 0.3);
  ASSERT_GT(three[2].estimate->p_value, 0.3);
  apply_holm(three);
  const std::vector<double> p{three[0].estimate->p_value, three[1].estimate->p_value, three[2].estimate->p_value};
  const std::vector<double> adjusted = inference::holm_adjust(p);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_DOUBLE_EQ(three[i].p_holm, adjusted[i]);
  EXPECT_GT(three[0].p_holm, 0.05);
  EXPECT_EQ(three[0].verdict, inference::Verdict::no_difference);  // Holm: not beyond doubt among three
  EXPECT_EQ(verdict_word(three[0]), "no difference detected");
  EXPECT_FALSE(three[0].worse_beyond_margin);
}

TEST(CompareSides, AaIsNoDifferenceAndTenPercentSlowerIsDetected) {
  TempDir dir;
  const Dataset base = side(runs(dir.path(), "base-", kIops, kLatency));
  const std::vector<double> aa_iops{10020, 9980, 10060, 9940, 10010};
  const Dataset aa = side(runs(dir.path(), "aa-", aa_iops, {100.2, 99.8, 100.4, 99.6, 100.1}));
  const Dataset slow = side(runs(dir.path(), "slow-", scaled(kIops, 0.9), scaled(kLatency, 1 / 0.9)));

  const CompareResult same = compare(base, aa, {.fail_if_worse_pct = 3.0});
  ASSERT_EQ(same.tests.size(), 1u);
  EXPECT_EQ(same.tests[0].test, "4k_random_read");
  EXPECT_EQ(same.tests[0].n_baseline, 5u);
  ASSERT_EQ(same.tests[0].metrics.size(), 2u);
  for (const auto& m : same.tests[0].metrics) EXPECT_EQ(verdict_word(m), "no difference detected") << m.metric;
  EXPECT_EQ(same.exit_status(), kCompareNoWorse);

  const CompareResult worse = compare(base, slow, {.fail_if_worse_pct = 3.0});
  ASSERT_EQ(worse.tests.size(), 1u);
  const auto& iops = worse.tests[0].metrics[0];
  EXPECT_EQ(iops.metric, "iops");
  EXPECT_EQ(verdict_word(iops), "slower");
  EXPECT_TRUE(iops.change_ci_pct().contains(-10.0));
  EXPECT_TRUE(iops.worse_beyond_margin);
  const auto& lat = worse.tests[0].metrics[1];
  EXPECT_EQ(lat.better, Better::lower);
  EXPECT_EQ(verdict_word(lat), "slower");  // latency up 11%
  EXPECT_EQ(worse.exit_status(), kCompareWorse);
  // A margin wider than the change: worse, but not beyond 15%.
  const CompareResult wide = compare(base, slow, {.fail_if_worse_pct = 15.0});
  EXPECT_EQ(verdict_word(wide.tests[0].metrics[0]), "slower");
  EXPECT_FALSE(wide.tests[0].metrics[0].worse_beyond_margin);
  EXPECT_EQ(wide.exit_status(), kCompareNoWorse);
  // The other way round: faster, exit 0.
  const CompareResult faster = compare(slow, base);
  EXPECT_EQ(verdict_word(faster.tests[0].metrics[0]), "faster");
  EXPECT_EQ(faster.exit_status(), kCompareNoWorse);

  const std::string text = to_text(worse);
  EXPECT_NE(text.find("slower"), std::string::npos) << text;
  EXPECT_NE(text.find("-10.0%"), std::string::npos) << text;
  EXPECT_NE(text.find("(exit 1)"), std::string::npos) << text;
  const results::Json j = to_json(worse);
  EXPECT_EQ(j["schema"], "drivelab.compare/1");
  EXPECT_EQ(j["exit_status"], 1);
  const auto& jm = j["tests"][0]["metrics"][0];
  EXPECT_EQ(jm["verdict"], "worse");
  EXPECT_EQ(jm["verdict_word"], "slower");
  EXPECT_EQ(jm["baseline"]["n"], 5);
  EXPECT_LE(jm["change_ci_pct"][0].get<double>(), -10.0);
  EXPECT_GE(jm["change_ci_pct"][1].get<double>(), -10.0);
  EXPECT_TRUE(jm["worse_beyond_margin"].get<bool>());
}

TEST(CompareSides, BadInputIsNamed) {
  TempDir dir;
  const Dataset base = side(runs(dir.path(), "base-", kIops, kLatency));
  const Dataset one = side({write_run(dir.path(), "one", 9000, 110)});
  const CompareResult n1 = compare(base, one);
  ASSERT_EQ(n1.problems.size(), 1u);
  EXPECT_NE(n1.problems[0].find("N < 2 on the candidate"), std::string::npos) << n1.problems[0];
  EXPECT_EQ(n1.exit_status(), kCompareBadInput);

  const Dataset other =
      side({write_run(dir.path(), "o1", 9000, 110, "seq-read"), write_run(dir.path(), "o2", 9000, 110, "seq-read")});
  const CompareResult none = compare(base, other);
  ASSERT_EQ(none.problems.size(), 1u);
  EXPECT_NE(none.problems[0].find("no common tests"), std::string::npos) << none.problems[0];
  EXPECT_NE(none.problems[0].find("seq_read"), std::string::npos) << none.problems[0];
  EXPECT_EQ(none.exit_status(), kCompareBadInput);
}

TEST(CompareSides, ConfigurationsThatDifferAreComparedAndSaid) {
  TempDir dir;
  const Dataset base = side(runs(dir.path(), "base-", kIops, kLatency));
  Dataset limited;
  for (int i = 0; i < 3; ++i)
    add_file(limited,
             write_run(dir.path(), "lim" + std::to_string(i), 9000 + i, 110, "4k-random-read",
                       results::Json{{"rw", "randread"}, {"iorate", 9000}}),
             {});
  const CompareResult r = compare(base, limited);
  ASSERT_EQ(r.tests.size(), 1u);
  EXPECT_NE(r.tests[0].config_difference.find("iorate"), std::string::npos) << r.tests[0].config_difference;
}

TEST(NoiseRows, MeanCvAndDetectableChange) {
  TempDir dir;
  const Dataset d = side(runs(dir.path(), "n-", kIops, kLatency));
  const std::vector<NoiseRow> rows = noise_rows(d);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].metric, "iops");
  EXPECT_EQ(rows[0].summary.n, 5u);
  EXPECT_NEAR(rows[0].summary.mean, 10000, 1e-9);
  EXPECT_GT(rows[0].summary.cv, 0.0);
  const MetricComparison self = compare_values("iops", "1/s", Better::higher, kIops, kIops);
  EXPECT_DOUBLE_EQ(rows[0].detectable_change_pct, self.estimate->detectable_change * 100);
  EXPECT_NE(noise_text(rows).find("run-to-run CV"), std::string::npos);
}

Result make(const std::string& drive, double tps) {
  Result r;
  r.drive = drive;
  r.test = "t";
  r.kind = "tpcc";
  r.source = drive + ".json";
  r.metrics = {{"tps", tps, "1/s", ""}};
  return r;
}

TEST(ReportIntervals, RanksTieWhereTheIntervalsCannotTellDrivesApart) {
  Dataset d;
  for (double v : {100.0, 101.0, 99.0}) d.results.push_back(make("A", v));
  for (double v : {100.5, 99.5, 100.2}) d.results.push_back(make("B", v));
  for (double v : {50.0, 51.0, 49.0}) d.results.push_back(make("C", v));
  d.results.push_back(make("D", 99.0));  // one run: not tested, ranked by its median
  const Report r = build_report(std::move(d));
  const MetricTable* t = table_of(r, "t", "tps");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->cells.size(), 4u);
  std::map<std::string, const Cell*> by;
  for (const auto& c : t->cells) by[c.drive] = &c;
  EXPECT_EQ(by["A"]->rank, 1);
  EXPECT_EQ(by["B"]->rank, 1);  // A and B: the interval of their ratio contains 1
  EXPECT_EQ(by["D"]->rank, 3);  // below A's and B's medians, not tested
  EXPECT_EQ(by["C"]->rank, 4);
  EXPECT_FALSE(by["D"]->rank_tested);  // one run
  EXPECT_FALSE(by["C"]->rank_tested);  // a place lost to D on medians alone
  EXPECT_TRUE(by["A"]->rank_tested);   // D's median is below A's: no place lost untested
  EXPECT_TRUE(by["A"]->mean_ci.valid());
  EXPECT_FALSE(by["D"]->mean_ci.valid());
  EXPECT_TRUE(by["A"]->mean_ci.contains(100.0));
  // The comparisons against the leader carry intervals; D's is not tested.
  for (const auto& c : r.comparisons) {
    if (c.other == "C") EXPECT_EQ(verdict_word(c.result), "slower");
    if (c.other == "D") EXPECT_FALSE(c.result.tested());
    if (c.other == "B" || c.other == "A") EXPECT_EQ(verdict_word(c.result), "no difference detected");
  }
  const std::string md = to_markdown(r);
  EXPECT_NE(md.find("(1st of 4)"), std::string::npos) << md;
  EXPECT_NE(md.find("(3rd of 4, not tested)"), std::string::npos) << md;
  EXPECT_NE(md.find("95% CI"), std::string::npos) << md;
  EXPECT_NE(md.find("not tested (needs 2+ repetitions on both)"), std::string::npos) << md;
  const std::string csv = to_csv(r);
  EXPECT_NE(csv.find(",mean,mean_ci_low,mean_ci_high,ranked_by\n"), std::string::npos);
  EXPECT_NE(csv.find(",medians\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",intervals\n"), std::string::npos) << csv;
}

TEST(ReportIntervals, BarChartsDrawTheIntervalOfTheMeanAsErrorBars) {
  if (!find_program("gnuplot")) GTEST_SKIP() << "gnuplot is not installed (Debian package gnuplot-nox); CI installs it";
  Dataset d;
  for (double v : {100.0, 110.0, 90.0}) d.results.push_back(make("A", v));
  for (double v : {50.0, 52.0}) d.results.push_back(make("B", v));
  const Report r = build_report(std::move(d));
  TempDir dir;
  const auto charts = draw_charts(r, {.dir = dir / "charts"});
  ASSERT_FALSE(charts.empty());
  const std::string gp = read_text(dir / "charts" / "t_tps_bars.gp");
  EXPECT_NE(gp.find("with yerrorbars"), std::string::npos) << gp;
  const MetricTable* t = table_of(r, "t", "tps");
  ASSERT_NE(t, nullptr);
  const Cell& a = t->cells[0];
  ASSERT_EQ(a.drive, "A");
  // The data line of A: index, mean, the interval's bounds.
  EXPECT_NE(gp.find(fmt::format("0 {} {} {} ", a.mean, a.mean_ci.low, a.mean_ci.high)), std::string::npos) << gp;
  EXPECT_NE(read_text(dir / "charts" / "t_tps_bars.svg").find("<svg"), std::string::npos);
}

}  // namespace
}  // namespace drivelab::report
