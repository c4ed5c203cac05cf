// The sizing answer of a curve (runner/curve.hpp max_rate_within) on constructed points: the
// interpolation between the bracketing points and every edge case.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "drivelab/results/catalogue.hpp"
#include "drivelab/runner/curve.hpp"

namespace drivelab::runner {
namespace {

const SloBound kP99Bound{.key = "p99_ms", .figure = "p99 latency", .bound_ms = 5, .percentile = 99, .subject = {}};

TEST(SloAnswer, InterpolatesBetweenTheBracketingPoints) {
  // Given out of order (the max run first, as a curve records them): ordered by rate.
  const SloAnswer a = max_rate_within({{"max", 1000, 9.0}, {"point_050", 500, 2.0}, {"point_080", 800, 4.0}}, 5.0);
  EXPECT_EQ(a.outcome, SloOutcome::interpolated);
  ASSERT_TRUE(a.below && a.above);
  EXPECT_EQ(a.below->group, "point_080");
  EXPECT_EQ(a.above->group, "max");
  // 800 + (5 - 4) x (1000 - 800) / (9 - 4) = 840
  EXPECT_DOUBLE_EQ(a.rate, 840.0);
  EXPECT_DOUBLE_EQ(a.fraction, 0.2);
}

TEST(SloAnswer, APointExactlyAtTheBoundIsWithinIt) {
  const SloAnswer a = max_rate_within({{"a", 100, 1.0}, {"b", 200, 5.0}, {"c", 300, 7.0}}, 5.0);
  EXPECT_EQ(a.outcome, SloOutcome::interpolated);
  EXPECT_EQ(a.below->group, "b");
  EXPECT_DOUBLE_EQ(a.rate, 200.0);
  EXPECT_DOUBLE_EQ(a.fraction, 0.0);
}

TEST(SloAnswer, TheFirstCrossingCountsNotALaterDip) {
  // Above the bound at 200, within it again at 300 (noise): every rate up to the answer must meet it.
  const SloAnswer a = max_rate_within({{"a", 100, 1.0}, {"b", 200, 3.0}, {"c", 300, 1.5}}, 2.0);
  EXPECT_EQ(a.outcome, SloOutcome::interpolated);
  EXPECT_EQ(a.above->group, "b");
  EXPECT_DOUBLE_EQ(a.rate, 150.0);
}

// The curve's order is the order its points were asked for (vdbench's 10%, 20%, ..., the max run last), not
// what they achieved: a stalled point (asked 20%, achieved less than 10%'s) keeps its place, and an
// overloaded point that delivered less than the point within the bound answers that point's rate.
TEST(SloAnswer, PointsKeepTheOrderTheyWereAskedFor) {
  const double max = curve_sample_requested(0);
  EXPECT_TRUE(std::isinf(max));
  // The stall: point_020 achieved 1,650 IOPS (below point_010's 2,000) with 9 ms; by achieved rate it
  // would be the lowest point, beyond the bound: "none". In the asked-for order point_010 is within.
  const SloAnswer stalled =
      max_rate_within({{"max", 20000, 12.0, max}, {"point_010", 2000, 1.0, 2000}, {"point_020", 1650, 9.0, 4000}}, 5.0);
  EXPECT_EQ(stalled.outcome, SloOutcome::interpolated);
  ASSERT_TRUE(stalled.below);
  EXPECT_EQ(stalled.below->group, "point_010");
  EXPECT_EQ(stalled.above->group, "point_020");
  EXPECT_DOUBLE_EQ(stalled.rate, 2000.0) << "the point beyond delivered less: the rate measured within";
  EXPECT_DOUBLE_EQ(stalled.fraction, 0.0);
  // An overloaded OLTP curve: the 400% point delivered 1,015 TPS against 50%'s 1,072, beyond the bound.
  const SloAnswer overloaded =
      max_rate_within({{"max", 1100, 30.0, max}, {"point_050", 1072, 4.0, 550}, {"point_400", 1015, 80.0, 4400}}, 10.0);
  EXPECT_EQ(overloaded.outcome, SloOutcome::interpolated);
  EXPECT_EQ(overloaded.below->group, "point_050");
  EXPECT_DOUBLE_EQ(overloaded.rate, 1072.0);
  // Rates falling before the crossing: 1,072 at 50% beats the interpolation between 80% and 100%.
  const SloAnswer falling = max_rate_within({{"point_050", 1072, 2.0, 550},
                                             {"point_080", 1000, 4.0, 880},
                                             {"point_100", 1010, 14.0, 1100},
                                             {"max", 1100, 30.0, max}},
                                            5.0);
  EXPECT_EQ(falling.below->group, "point_050");
  EXPECT_EQ(falling.above->group, "point_100");
  EXPECT_DOUBLE_EQ(falling.rate, 1072.0);
  EXPECT_DOUBLE_EQ(falling.fraction, 0.0);
  // The max run comes last whatever it achieved; with no point beyond, the answer is the highest achieved.
  const SloAnswer within = max_rate_within({{"max", 900, 3.0, max}, {"point_090", 950, 2.0, 990}}, 5.0);
  EXPECT_EQ(within.outcome, SloOutcome::bound_not_reached);
  EXPECT_EQ(within.below->group, "point_090") << "every point within: the highest achieved rate";
  EXPECT_DOUBLE_EQ(within.rate, 950.0);
}

TEST(SloAnswer, FirstPointBeyondTheBoundAnswersNone) {
  const SloAnswer a = max_rate_within({{"b", 200, 8.0}, {"a", 100, 6.0}}, 5.0);
  EXPECT_EQ(a.outcome, SloOutcome::first_point_exceeds);
  EXPECT_DOUBLE_EQ(a.rate, 0.0);
  EXPECT_FALSE(a.below);
  ASSERT_TRUE(a.above);
  EXPECT_EQ(a.above->group, "a");
  const std::string text = describe(a, kP99Bound, "IOPS");
  EXPECT_NE(text.find("the lowest point, a 100 IOPS at 6"), std::string::npos) << text;
}

TEST(SloAnswer, BoundNotReachedAnswersTheHighestRateAndSaysSo) {
  const SloAnswer a = max_rate_within({{"max", 1000, 3.0}, {"point_050", 500, 1.0}}, 5.0);
  EXPECT_EQ(a.outcome, SloOutcome::bound_not_reached);
  EXPECT_DOUBLE_EQ(a.rate, 1000.0);
  EXPECT_EQ(a.below->group, "max");
  EXPECT_FALSE(a.above);
  const std::string text = describe(a, kP99Bound, "IOPS");
  EXPECT_NE(text.find("max IOPS with p99 latency <= 5 ms: 1,000 IOPS (bound not reached"), std::string::npos) << text;
  const results::Json j = to_json(a, kP99Bound, "max_iops_under_p99", "IOPS");
  EXPECT_EQ(j["outcome"], "bound_not_reached");
  EXPECT_TRUE(j["above"].is_null());
  EXPECT_EQ(j["below"]["group"], "max");
}

TEST(SloAnswer, NoPointsAndNonFinitePoints) {
  EXPECT_EQ(max_rate_within({}, 1.0).outcome, SloOutcome::no_points);
  const SloAnswer a = max_rate_within({{"nan", NAN, 0.5}, {"inf", 10, INFINITY}}, 1.0);
  EXPECT_EQ(a.outcome, SloOutcome::no_points);
  EXPECT_DOUBLE_EQ(a.rate, 0.0);
}

TEST(SloAnswer, EqualRatesKeepTheirOrder) {
  // Two points at one achieved rate (an overloaded curve's 110% and 120%): the crossing is at it.
  const SloAnswer a = max_rate_within({{"a", 100, 1.0}, {"p110", 200, 2.0}, {"p120", 200, 9.0}}, 5.0);
  EXPECT_EQ(a.outcome, SloOutcome::interpolated);
  EXPECT_EQ(a.below->group, "p110");
  EXPECT_EQ(a.above->group, "p120");
  EXPECT_DOUBLE_EQ(a.rate, 200.0);
}

}  // namespace
}  // namespace drivelab::runner

namespace drivelab::runner {
namespace {

// figure_at: another figure of the runs at the answer (tpmC, QPS), the same way as the rate.
TEST(SloAnswer, FigureAtInterpolatesOtherFiguresTheSameWay) {
  const SloAnswer a = max_rate_within({{"max", 1000, 9.0}, {"point_050", 500, 2.0}, {"point_080", 800, 4.0}}, 5.0);
  const auto qps = [](const std::string& group) {
    return group == "max" ? 20000.0 : group == "point_080" ? 16000.0 : 10000.0;
  };
  EXPECT_DOUBLE_EQ(figure_at(a, qps), 16000.0 + 0.2 * (20000.0 - 16000.0));
  EXPECT_DOUBLE_EQ(figure_at(max_rate_within({{"max", 1000, 1.0}, {"point_050", 500, 0.5}}, 5.0), qps), 20000.0);
  EXPECT_EQ(figure_at(max_rate_within({{"point_050", 500, 9.0}}, 5.0), qps), 0.0);
  EXPECT_EQ(figure_at(max_rate_within({}, 5.0), qps), 0.0);
}

// run_rate_curve on one host: each point at its percentage of the max run, in order, with its
// own stream index; the curve ends at the first stopped point; no points after an empty max run.
TEST(RateCurve, RunsThePointsAtTheirShareOfTheMaxRunUntilStopped) {
  TestContext ctx;
  std::vector<RateCurvePoint> ran;
  const auto run = [&](const RateCurvePoint& p) {
    ran.push_back(p);
    return p.pct >= 100;  // stopped during the 100% point
  };
  const RateCurveResult cut = run_rate_curve(ctx, 2000, {10, 50, 100, 120}, [] { return false; }, run);
  EXPECT_DOUBLE_EQ(cut.max_rate, 2000);
  EXPECT_FALSE(cut.complete) << "stopped during the 100% point: the 120% point never ran";
  ASSERT_EQ(ran.size(), 3u);
  EXPECT_EQ(ran[0].index, 1u);
  EXPECT_EQ(ran[0].group, "point_010");
  EXPECT_DOUBLE_EQ(ran[0].rate_per_s, 200);
  EXPECT_DOUBLE_EQ(ran[1].rate_per_s, 1000);
  EXPECT_EQ(ran[2].group, "point_100");
  ran.clear();
  EXPECT_TRUE(run_rate_curve(ctx, 2000, {10, 50}, [] { return false; }, run).complete);
  EXPECT_EQ(ran.size(), 2u);
  ran.clear();
  EXPECT_EQ(run_rate_curve(ctx, 0, {10, 50}, [] { return false; }, run).max_rate, 0.0);
  EXPECT_TRUE(ran.empty());
  const RateCurveResult stopped = run_rate_curve(ctx, 100, {10, 50}, [] { return true; }, run);
  EXPECT_DOUBLE_EQ(stopped.max_rate, 100);
  EXPECT_FALSE(stopped.complete);
  EXPECT_TRUE(ran.empty()) << "stopped before the curve";
}

TEST(RateCurve, ScheduleSaysHowLongTheCurveRuns) {
  TestSettings s;
  s.warmup = std::chrono::seconds(60);
  s.duration = std::chrono::seconds(300);
  EXPECT_EQ(rate_curve_schedule(8, s),
            "rate: curve: closed-loop max run + 8 open-loop points, each warm-up 60 s + measured 300 s: 3240 s after "
            "the load");
}

// A curve cut short (a stop or a failure after some points): a crossing among the points run
// stands, said to be from a cut curve; "bound not reached" is only a lower bound of a partial
// curve, never a headline answer.
TEST(SloAnswer, ACutCurveKeepsItsCrossingButNotItsLowerBound) {
  const SloAnswer crossed = qualify(max_rate_within({{"max", 1000, 9.0}, {"point_080", 800, 4.0}}, 5.0), "point_080");
  EXPECT_EQ(crossed.outcome, SloOutcome::interpolated);
  EXPECT_TRUE(crossed.is_headline());
  EXPECT_NE(describe(crossed, kP99Bound, "TPS").find("; the curve was cut after point_080"), std::string::npos);

  const SloAnswer partial = qualify(
      max_rate_within({{"max", 1000, 3.0}, {"point_010", 100, 1.0}, {"point_080", 800, 2.0}}, 5.0), "point_080");
  EXPECT_EQ(partial.outcome, SloOutcome::interrupted_lower_bound);
  EXPECT_FALSE(partial.is_headline());
  EXPECT_DOUBLE_EQ(partial.rate, 1000.0);
  const std::string text = describe(partial, kP99Bound, "TPS");
  EXPECT_NE(text.find("max TPS with p99 latency <= 5 ms: at least 1,000 TPS (curve interrupted after point_080"),
            std::string::npos)
      << text;
  const results::Json j = to_json(partial, kP99Bound, "max_tps_under_slo", "TPS");
  EXPECT_EQ(j["outcome"], "interrupted_lower_bound");
  EXPECT_EQ(j["cut_after"], "point_080");
  EXPECT_EQ(j["answer"], 1000.0);
  EXPECT_EQ(figure_at(partial, [](const std::string&) { return 7.0; }), 0.0);

  // A complete curve: nothing changes.
  const SloAnswer whole = qualify(max_rate_within({{"max", 1000, 3.0}}, 5.0), "");
  EXPECT_EQ(whole.outcome, SloOutcome::bound_not_reached);
  EXPECT_TRUE(whole.is_headline());
  EXPECT_FALSE(to_json(whole, kP99Bound, "m", "TPS").contains("cut_after"));
}

// "None" has no number: the details' answer is null, not 0.
TEST(SloAnswer, NoneIsNullNotZero) {
  const SloAnswer a = max_rate_within({{"point_010", 100, 9.0}}, 5.0);
  EXPECT_FALSE(a.is_headline());
  EXPECT_TRUE(to_json(a, kP99Bound, "m", "TPS")["answer"].is_null());
  EXPECT_FALSE(max_rate_within({}, 5.0).is_headline());
}

struct Console final : results::TestRecorder::Listener {
  std::vector<std::string> lines;
  void on_interval(const results::TestRecord&, const results::Interval&) override {}
  void on_message(const results::TestRecord&, std::string_view m) override { lines.emplace_back(m); }
};

SloRecording tps_recording(std::string cut_after) {
  return {.rate_metric = &results::catalogue::max_tps_under_slo,
          .rate_word = "TPS",
          .figure_metric = &results::catalogue::max_qps_under_slo,
          .figure_word = "qps",
          .figure_of = [](const std::string& group) { return group == "max" ? 20000.0 : 10000.0; },
          .cut_after = std::move(cut_after)};
}

// The headline metrics only for an answer: an interpolated one (also of a cut curve) is recorded;
// "none" and a cut curve's lower bound are not (0 TPS would be compared as a drive's answer), and
// the details and the console say why.
TEST(SloAnswer, RecordsAHeadlineOnlyForAnAnswer) {
  const auto record = [](std::vector<CurveSample> samples, std::string cut, Console& console) {
    results::TestRecord t;
    results::TestRecorder rec(t, &console);
    record_slo_answers(rec, {{kP99Bound, std::move(samples)}}, tps_recording(std::move(cut)));
    return t;
  };
  Console c1;
  const results::TestRecord answered = record({{"max", 1000, 9.0}, {"point_050", 500, 4.0}}, "", c1);
  ASSERT_NE(answered.find_metric("max_tps_under_slo"), nullptr);
  EXPECT_DOUBLE_EQ(answered.find_metric("max_tps_under_slo")->value, 500 + 0.2 * 500);
  EXPECT_DOUBLE_EQ(answered.find_metric("max_qps_under_slo")->value, 10000 + 0.2 * 10000);

  Console c2;
  const results::TestRecord none = record({{"point_050", 500, 6.0}, {"max", 1000, 9.0}}, "", c2);
  EXPECT_EQ(none.find_metric("max_tps_under_slo"), nullptr);
  EXPECT_EQ(none.find_metric("max_qps_under_slo"), nullptr);
  EXPECT_EQ(none.details["slo"][0]["outcome"], "first_point_exceeds");
  EXPECT_TRUE(none.details["slo"][0]["answer"].is_null());
  ASSERT_EQ(c2.lines.size(), 1u);
  EXPECT_NE(c2.lines[0].find("max TPS with p99 latency <= 5 ms: none (the lowest point"), std::string::npos)
      << c2.lines[0];

  Console c3;
  const results::TestRecord partial = record({{"max", 1000, 3.0}, {"point_050", 500, 1.0}}, "point_050", c3);
  EXPECT_EQ(partial.find_metric("max_tps_under_slo"), nullptr);
  EXPECT_EQ(partial.details["slo"][0]["outcome"], "interrupted_lower_bound");
  ASSERT_EQ(c3.lines.size(), 1u);
  EXPECT_NE(c3.lines[0].find("at least 1,000 TPS (curve interrupted after point_050"), std::string::npos)
      << c3.lines[0];
}

// Several bounds: the answer within all is the lowest; a cut curve's lower bound that is the lowest
// is no answer either.
TEST(SloAnswer, TheLowestOfSeveralBoundsDecides) {
  results::TestRecord t;
  results::TestRecorder rec(t, nullptr);
  SloBound p90 = kP99Bound;
  p90.key = "p90_ms";
  record_slo_answers(rec,
                     {{kP99Bound, {{"max", 1000, 9.0}, {"point_050", 500, 4.0}}},
                      {p90, {{"max", 1000, 1.0}, {"point_050", 500, 0.5}}}},
                     tps_recording(""));
  ASSERT_NE(t.find_metric("max_tps_under_slo"), nullptr);
  EXPECT_DOUBLE_EQ(t.find_metric("max_tps_under_slo")->value, 600.0);
  EXPECT_EQ(t.details["slo"].size(), 2u);
}

// Each curve run's console line: requested and achieved TPS and the p99, as vdbench prints each
// run; a point that fell short of its rate (beyond the Poisson noise) is flagged.
TEST(RateCurve, EachRunsLineSaysWhatWasAchieved) {
  EXPECT_EQ(curve_run_line("max", 0, 0, 2469.04, 9.8, 10), "curve max run: 2,469 TPS (closed loop), p99 9.80 ms");
  EXPECT_EQ(curve_run_line("point_050", 50, 1234.4, 1230.2, 4.2, 10),
            "curve point 50%: requested 1,234 TPS, achieved 1,230 TPS (99.7%), p99 4.20 ms");
  const std::string saturated = curve_run_line("point_120", 120, 2962.8, 2500, 350, 10);
  EXPECT_NE(saturated.find("achieved 2,500 TPS (84.4%)"), std::string::npos) << saturated;
  EXPECT_NE(saturated.find("SATURATED: achieved less than 95.0% of the requested rate"), std::string::npos)
      << saturated;
  // Few arrivals: the Poisson count's noise is allowed (3 standard deviations of 100 arrivals: 30%).
  EXPECT_TRUE(rate_held(10, 8, 10));
  EXPECT_FALSE(rate_held(10, 6, 10));
  EXPECT_NE(curve_run_line("point_010", 10, 5, 0, NAN, 1).find("no transaction completed"), std::string::npos);
}

// A point that completed more than the max run beyond the noise (5%, or 3 standard deviations of
// the max run's count over the point's time) says the max run was not the maximum; within it, nothing.
TEST(RateCurve, APointAboveTheMaxRunBeyondTheNoiseIsSaid) {
  const std::string w = above_max_run("point_120", 545, 431, 10);
  EXPECT_NE(w.find("point_120 completed 545 TPS, 26.5% more than the max run's 431 TPS (closed loop)"),
            std::string::npos)
      << w;
  EXPECT_EQ(above_max_run("point_110", 450, 431, 10), "");  // 4.4%: within 5%
  EXPECT_EQ(above_max_run("point_110", 12, 10, 10), "");    // 100 transactions: 30% is noise
  EXPECT_EQ(above_max_run("point_110", 5, 0, 10), "");      // no max run rate
}

// The OLTP rules of `rate` and `slo` shared by kinds tpcc and sysbench.
TEST(RateCurve, SloDecodesOnceForEveryKind) {
  config::Diagnostics diags;
  const config::Document doc =
      config::Document::load_string("slo: {new_order_p99_ms: 10, p90_ms: 50}\n", "t.yaml", diags);
  const config::Node root = doc.root(diags);
  constexpr std::array<SloSubject, 2> kSubjects{{{"", "{} of all"}, {"new_order", "New-Order {}"}}};
  const std::vector<SloBound> slo = decode_slo(root.child("slo"), kSubjects, ": hint");
  ASSERT_TRUE(diags.empty()) << diags.to_string();
  ASSERT_EQ(slo.size(), 2u);
  EXPECT_EQ(slo[0].key, "p90_ms");
  EXPECT_EQ(slo[0].figure, "p90 of all");
  EXPECT_EQ(slo[0].subject, "");
  EXPECT_EQ(slo[1].key, "new_order_p99_ms");
  EXPECT_EQ(slo[1].figure, "New-Order p99");
  EXPECT_EQ(slo[1].subject, "new_order");
  EXPECT_DOUBLE_EQ(slo[1].percentile, 99);
  EXPECT_DOUBLE_EQ(slo[1].bound_ms, 10);
  results::Json j = results::Json::object();
  rate_to_json(j, 0, true, {50, 100}, slo);
  EXPECT_EQ(j,
            (results::Json{
                {"rate", "curve"}, {"curve", {50.0, 100.0}}, {"slo", {{"p90_ms", 50.0}, {"new_order_p99_ms", 10.0}}}}));
  results::Json open = results::Json::object();
  rate_to_json(open, 250, false, {50}, slo);
  EXPECT_EQ(open, (results::Json{{"rate", 250.0}}));
  // Without rate: curve the slo is kept but ignored: a warning at its key.
  EXPECT_EQ(slo_without_curve_warning(root.child("slo"), false),
            "t.yaml:1:6: slo: the sizing answers are read off a curve; this test is not one (rate: curve), so slo is "
            "ignored");
  EXPECT_EQ(slo_without_curve_warning(root.child("slo"), true), "");
  EXPECT_EQ(slo_without_curve_warning(root.child("nothing"), false), "");
}

// rate x duration below one arrival: the test would measure nothing; refused at the rate key.
TEST(RateCurve, ARateBelowOneArrivalInTheMeasuredTimeIsRefused) {
  config::Diagnostics diags;
  const config::Document doc = config::Document::load_string("tpcc:\n  rate: 1e-9\n", "t.yaml", diags);
  const config::Node section = doc.root(diags).child("tpcc");
  TestSettings s;
  s.duration = std::chrono::seconds(10);
  check_rate_for_duration(section, 0.1, s);  // one arrival expected: allowed
  check_rate_for_duration(section, 0, s);    // closed loop
  EXPECT_TRUE(diags.empty()) << diags.to_string();
  check_rate_for_duration(section, 1e-9, s);
  EXPECT_NE(diags.to_string().find("t.yaml:2:9: tpcc.rate: rate 1e-09/s over the measured 10 s expects 1e-08 "
                                   "arrivals, fewer than one"),
            std::string::npos)
      << diags.to_string();
}

}  // namespace
}  // namespace drivelab::runner
