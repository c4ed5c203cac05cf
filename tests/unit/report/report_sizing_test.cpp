// The reporter shows a curve's sizing answers (issue 32, details `slo` of a vdbench curve and of a
// tpcc `rate: curve`): a ranked table of the answer's headline metric, and on the curve chart the
// p99 points, the bound as a line and the answer as a marker on it. The records are the checked-in
// real records of tests/golden/, their curve tests given the sizing details a curve with `slo:`
// writes.
#include <gtest/gtest.h>

#include <filesystem>

#include "drivelab/report/report.hpp"
#include "report_test_util.hpp"

namespace drivelab::report {
namespace {

using testing::golden_records;
using testing::read_text;
using testing::table_of;
using testing::TempDir;

/// `metrics` with {name: value} inserted second, as the emulators record a sizing answer.
results::Json with_second_metric(const results::Json& metrics, const std::string& name, double value,
                                 const std::string& unit) {
  results::Json out = results::Json::object();
  for (const auto& [k, v] : metrics.items()) {
    out[k] = v;
    if (out.size() == 1) out[name] = {{"value", value}, {"unit", unit}, {"description", "sizing answer"}};
  }
  return out;
}

/// The golden records, the vdbench curve `sql` with a p99 answer and the tpcc test `oltp` as a
/// TPS curve with a New-Order p99 answer.
Dataset sized_dataset() {
  Dataset d;
  for (const auto& p : golden_records()) {
    results::Json j = results::Json::parse(read_text(p));
    for (auto& t : j["tests"]) {
      if (t["name"] == "sql") {
        auto& pts = t["details"]["points"];
        for (auto& pt : pts) pt["latency_p99_us"] = 2.0 * pt["latency_avg_us"].get<double>();
        const double answer = 0.5 * (pts[0]["achieved_iops"].get<double>() + pts[1]["achieved_iops"].get<double>());
        t["metrics"] = with_second_metric(t["metrics"], "max_iops_under_p99", answer, "1/s");
        t["details"]["slo"] = results::Json::array({{{"key", "p99_ms"},
                                                     {"figure", "p99 latency"},
                                                     {"bound_ms", 20.0},
                                                     {"metric", "max_iops_under_p99"},
                                                     {"answer", answer},
                                                     {"outcome", "interpolated"}}});
      } else if (t["name"] == "oltp") {
        t["details"]["points"] = results::Json::array(
            {{{"group", "max"}, {"achieved_tps", 400.0}, {"latency_avg_ms", 9.0}, {"latency_p99_ms", 30.0}},
             {{"group", "point_050"}, {"achieved_tps", 200.0}, {"latency_avg_ms", 2.0}, {"latency_p99_ms", 6.0}}});
        t["metrics"] = with_second_metric(t["metrics"], "max_tps_under_slo", 250.0, "1/s");
        t["details"]["slo"] = results::Json::array({{{"key", "new_order_p99_ms"},
                                                     {"figure", "New-Order p99"},
                                                     {"bound_ms", 10.0},
                                                     {"metric", "max_tps_under_slo"},
                                                     {"answer", 250.0},
                                                     {"outcome", "interpolated"}}});
      }
    }
    add_record(d, results::run_record_from_json(j), p.string(), {});
  }
  return d;
}

TEST(ReportSizing, TheAnswersAreRankedTablesAndCurvesCarryThem) {
  Dataset d = sized_dataset();
  bool vdbench = false, tpcc = false;
  for (const Result& r : d.results) {
    if (r.test == "sql" && !r.sizing.empty()) {
      vdbench = true;
      EXPECT_EQ(r.curve_rate_word, "IOPS");
      EXPECT_GT(r.curve.front().latency_p99_us, 0.0);
      EXPECT_EQ(r.sizing.front().figure, "p99 latency");
      EXPECT_DOUBLE_EQ(r.sizing.front().bound_ms, 20.0);
    }
    if (r.test == "oltp" && !r.sizing.empty()) {
      tpcc = true;
      EXPECT_EQ(r.curve_rate_word, "TPS");
      ASSERT_EQ(r.curve.size(), 2u);
      EXPECT_DOUBLE_EQ(r.curve[1].latency_avg_us, 2000.0);  // ms -> us
      EXPECT_DOUBLE_EQ(r.curve[1].latency_p99_us, 6000.0);
    }
  }
  EXPECT_TRUE(vdbench);
  EXPECT_TRUE(tpcc);
  const Report r = build_report(std::move(d));
  const MetricTable* iops = table_of(r, "sql", "max_iops_under_p99");
  ASSERT_NE(iops, nullptr);
  EXPECT_EQ(iops->better, Better::higher);
  ASSERT_NE(table_of(r, "oltp", "max_tps_under_slo"), nullptr);
  EXPECT_NE(to_markdown(r).find("max_iops_under_p99"), std::string::npos);
}

TEST(ReportSizing, TheCurveChartDrawsTheBoundAndTheAnswer) {
  if (!find_program("gnuplot")) GTEST_SKIP() << "gnuplot is not installed (Debian package gnuplot-nox); CI installs it";
  TempDir dir;
  const Report r = build_report(sized_dataset());
  const auto charts = draw_charts(r, {.dir = dir.path() / "charts"});
  bool sql = false, oltp = false;
  for (const Chart& c : charts) {
    if (c.name.ends_with("_curve") && c.test == "sql") {
      sql = true;
      const std::string gp = read_text(dir.path() / "charts" / (c.name + ".gp"));
      // A 20 ms bound: the axis is in ms (20000 µs would print as 2e+04).
      EXPECT_NE(gp.find("set arrow from graph 0, first 20 to graph 1, first 20 nohead"), std::string::npos) << gp;
      EXPECT_NE(gp.find("(ms)"), std::string::npos) << gp;
      EXPECT_NE(gp.find("p99 latency <= 20 ms: "), std::string::npos) << gp;
      EXPECT_NE(gp.find("with linespoints dt 2"), std::string::npos) << gp;
      EXPECT_NE(gp.find("set xlabel 'IOPS"), std::string::npos) << gp;
    }
    if (c.name.ends_with("_curve") && c.test == "oltp") {
      oltp = true;
      EXPECT_EQ(c.title, "oltp: latency (average and p99) vs TPS");
      const std::string gp = read_text(dir.path() / "charts" / (c.name + ".gp"));
      EXPECT_NE(gp.find("New-Order p99 <= 10 ms: 250 TPS"), std::string::npos) << gp;
      EXPECT_NE(gp.find("250 10\n"), std::string::npos) << gp;
    }
  }
  EXPECT_TRUE(sql);
  EXPECT_TRUE(oltp);
}

// A curve with no answer (the lowest run already beyond the bound) records no headline metric and
// details `answer: null` (runner::record_slo_answers): the report has no table for it, and its
// curve chart draws the bound without an answer marker.
TEST(ReportSizing, ACurveWithoutAnAnswerHasNoMetricAndSaysNone) {
  Dataset d;
  for (const auto& p : golden_records()) {
    results::Json j = results::Json::parse(read_text(p));
    for (auto& t : j["tests"]) {
      if (t["name"] != "oltp") continue;
      t["details"]["points"] = results::Json::array(
          {{{"group", "max"}, {"achieved_tps", 400.0}, {"latency_avg_ms", 9.0}, {"latency_p99_ms", 30.0}}});
      t["details"]["slo"] = results::Json::array({{{"key", "new_order_p99_ms"},
                                                   {"figure", "New-Order p99"},
                                                   {"bound_ms", 10.0},
                                                   {"metric", "max_tps_under_slo"},
                                                   {"answer", nullptr},
                                                   {"outcome", "first_point_exceeds"}}});
    }
    add_record(d, results::run_record_from_json(j), p.string(), {});
  }
  bool seen = false;
  for (const Result& r : d.results)
    if (r.test == "oltp" && !r.sizing.empty()) {
      seen = true;
      EXPECT_EQ(r.sizing.front().rate, 0.0);
      EXPECT_EQ(r.find_metric("max_tps_under_slo"), nullptr);
    }
  EXPECT_TRUE(seen);
  const Report r = build_report(std::move(d));
  EXPECT_EQ(table_of(r, "oltp", "max_tps_under_slo"), nullptr);
  EXPECT_NE(to_markdown(r).find("oltp"), std::string::npos);
  if (!find_program("gnuplot")) return;
  TempDir dir;
  for (const Chart& c : draw_charts(r, {.dir = dir.path() / "charts"})) {
    if (!c.name.ends_with("_curve") || c.test != "oltp") continue;
    // The bound is drawn; no answer marker (none at 0 TPS).
    const std::string gp = read_text(dir.path() / "charts" / (c.name + ".gp"));
    EXPECT_NE(gp.find("set arrow from graph 0, first 10 to graph 1, first 10 nohead"), std::string::npos) << gp;
    EXPECT_EQ(gp.find("New-Order p99 <= 10 ms: "), std::string::npos) << gp;
  }
}

}  // namespace
}  // namespace drivelab::report
