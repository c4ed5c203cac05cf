#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "drivelab/core/rng.hpp"
#include "drivelab/core/steady_state.hpp"

namespace drivelab {
namespace {

TEST(SteadyStateCriterion, ParsesFioForms) {
  const auto a = SteadyStateCriterion::parse("iops_slope:0.1%");
  EXPECT_EQ(a.metric, SteadyMetric::iops);
  EXPECT_TRUE(a.slope);
  EXPECT_TRUE(a.percent);
  EXPECT_DOUBLE_EQ(a.limit, 0.1);
  EXPECT_EQ(a.to_string(), "iops_slope:0.1%");
  const auto b = SteadyStateCriterion::parse("bw:2000");
  EXPECT_EQ(b.metric, SteadyMetric::bw);
  EXPECT_FALSE(b.slope);
  EXPECT_FALSE(b.percent);
  EXPECT_EQ(b.to_string(), "bw:2000");
  EXPECT_EQ(SteadyStateCriterion::parse("lat_slope:1%").metric, SteadyMetric::lat);
  EXPECT_THROW(SteadyStateCriterion::parse("iops"), std::invalid_argument);
  EXPECT_THROW(SteadyStateCriterion::parse("clat:1%"), std::invalid_argument);
  EXPECT_THROW(SteadyStateCriterion::parse("iops:-1"), std::invalid_argument);
  EXPECT_THROW(SteadyStateCriterion::parse("iops:x%"), std::invalid_argument);
}

TEST(SteadyState, SlopeOfALineIsItsGradient) {
  std::vector<double> w;
  for (int i = 0; i < 10; ++i) w.push_back(1000.0 + 5.0 * i);  // mean 1022.5, slope 5/s
  const auto abs_c = SteadyStateCriterion::parse("iops_slope:6");
  const auto e = evaluate_steady_state(abs_c, w);
  EXPECT_NEAR(e.slope, 5.0, 1e-9);
  EXPECT_NEAR(e.mean, 1022.5, 1e-9);
  EXPECT_TRUE(e.attained);
  EXPECT_FALSE(evaluate_steady_state(SteadyStateCriterion::parse("iops_slope:4"), w).attained);
  // In percent of the mean: 100 * 5 / 1022.5 = 0.489%
  const auto pct = evaluate_steady_state(SteadyStateCriterion::parse("iops_slope:0.5%"), w);
  EXPECT_NEAR(pct.value, 0.48899, 1e-4);
  EXPECT_TRUE(pct.attained);
  EXPECT_FALSE(evaluate_steady_state(SteadyStateCriterion::parse("iops_slope:0.4%"), w).attained);
  // A falling line has the same absolute slope.
  std::vector<double> down(w.rbegin(), w.rend());
  EXPECT_NEAR(evaluate_steady_state(abs_c, down).slope, -5.0, 1e-9);
  EXPECT_TRUE(evaluate_steady_state(abs_c, down).attained);
}

TEST(SteadyState, RangeIsTheLargestDeviationFromTheMean) {
  const std::vector<double> w{100, 102, 98, 101, 99};  // mean 100, max deviation 2
  const auto e = evaluate_steady_state(SteadyStateCriterion::parse("bw:2.5"), w);
  EXPECT_DOUBLE_EQ(e.deviation, 2.0);
  EXPECT_TRUE(e.attained);
  EXPECT_FALSE(evaluate_steady_state(SteadyStateCriterion::parse("bw:2"), w).attained);  // strict: < limit
  EXPECT_TRUE(evaluate_steady_state(SteadyStateCriterion::parse("bw:2.1%"), w).attained);
  EXPECT_FALSE(evaluate_steady_state(SteadyStateCriterion::parse("bw:1.9%"), w).attained);
}

TEST(SteadyStateDetector, RampThenWarmingSeriesSettles) {
  // A drive warming up: IOPS rises 1000 -> 50000 over 20 s, then holds with 0.5% noise.
  SteadyStateDetector d(SteadyStateCriterion::parse("iops_slope:0.2%"), 10, 3);
  Rng rng(5);
  std::size_t settled_at = 0;
  for (int t = 1; t <= 60; ++t) {
    const double base = t < 20 ? 1000.0 + 2450.0 * t : 50000.0;
    d.add(base * (1.0 + 0.005 * (rng.uniform01() - 0.5)));
    if (d.attained_ever() && settled_at == 0) settled_at = static_cast<std::size_t>(t);
    if (t < 13) {
      EXPECT_FALSE(d.window_full()) << t;  // 3 ramp + 10 window
    }
  }
  EXPECT_TRUE(d.attained_ever());
  EXPECT_EQ(d.first_attained_at(), settled_at);
  EXPECT_GE(settled_at, 25u) << "not while the ramp is still in the window";
  EXPECT_TRUE(d.last().attained);
  EXPECT_NEAR(d.last().mean, 50000.0, 200.0);
}

TEST(SteadyStateDetector, NeverSteadyWhenOscillating) {
  SteadyStateDetector d(SteadyStateCriterion::parse("iops:5%"), 8);
  for (int t = 0; t < 40; ++t) d.add(t % 2 == 0 ? 1000.0 : 1200.0);  // +-~9% around 1100
  EXPECT_TRUE(d.window_full());
  EXPECT_FALSE(d.attained_ever());
  EXPECT_NEAR(d.last().value, 100.0 * 100.0 / 1100.0, 1e-6);
}

}  // namespace
}  // namespace drivelab
