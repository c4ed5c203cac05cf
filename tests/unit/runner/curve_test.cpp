// The sizing answer of a curve (runner/curve.hpp max_rate_within) on constructed points: the
// interpolation between the bracketing points and every edge case.
#include <gtest/gtest.h>

#include <cmath>

#include "drivelab/runner/curve.hpp"

namespace drivelab::runner {
namespace {

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

TEST(SloAnswer, FirstPointBeyondTheBoundAnswersNone) {
  const SloAnswer a = max_rate_within({{"b", 200, 8.0}, {"a", 100, 6.0}}, 5.0);
  EXPECT_EQ(a.outcome, SloOutcome::first_point_exceeds);
  EXPECT_DOUBLE_EQ(a.rate, 0.0);
  EXPECT_FALSE(a.below);
  ASSERT_TRUE(a.above);
  EXPECT_EQ(a.above->group, "a");
  const std::string text = describe(a, {"p99_ms", "p99 latency", 5}, "IOPS");
  EXPECT_NE(text.find("none: the lowest point, a 100 IOPS at 6"), std::string::npos) << text;
}

TEST(SloAnswer, BoundNotReachedAnswersTheHighestRateAndSaysSo) {
  const SloAnswer a = max_rate_within({{"max", 1000, 3.0}, {"point_050", 500, 1.0}}, 5.0);
  EXPECT_EQ(a.outcome, SloOutcome::bound_not_reached);
  EXPECT_DOUBLE_EQ(a.rate, 1000.0);
  EXPECT_EQ(a.below->group, "max");
  EXPECT_FALSE(a.above);
  const std::string text = describe(a, {"p99_ms", "p99 latency", 5}, "IOPS");
  EXPECT_NE(text.find("max IOPS with p99 latency <= 5 ms: 1,000 IOPS (bound not reached"), std::string::npos) << text;
  const results::Json j = to_json(a, {"p99_ms", "p99 latency", 5}, "max_iops_under_p99", "IOPS");
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
  EXPECT_DOUBLE_EQ(run_rate_curve(ctx, 2000, {10, 50, 100, 120}, [] { return false; }, run), 2000);
  ASSERT_EQ(ran.size(), 3u);
  EXPECT_EQ(ran[0].index, 1u);
  EXPECT_EQ(ran[0].group, "point_010");
  EXPECT_DOUBLE_EQ(ran[0].rate_per_s, 200);
  EXPECT_DOUBLE_EQ(ran[1].rate_per_s, 1000);
  EXPECT_EQ(ran[2].group, "point_100");
  ran.clear();
  EXPECT_EQ(run_rate_curve(ctx, 0, {10, 50}, [] { return false; }, run), 0.0);
  EXPECT_TRUE(ran.empty());
  EXPECT_DOUBLE_EQ(run_rate_curve(ctx, 100, {10, 50}, [] { return true; }, run), 100);
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

}  // namespace
}  // namespace drivelab::runner
