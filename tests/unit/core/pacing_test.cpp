#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "drivelab/core/errors.hpp"
#include "drivelab/core/pacing.hpp"

namespace drivelab {
namespace {

// Draws `n` arrivals and returns the mean and standard deviation of the gaps, in ns.
struct GapStats {
  double mean;
  double stddev;
  std::int64_t first;
};
GapStats gaps(ArrivalSchedule& s, int n, std::int64_t start) {
  std::vector<double> g;
  std::int64_t prev = start;
  std::int64_t first = s.peek_ns();
  for (int i = 0; i < n; ++i) {
    const std::int64_t t = s.next_ns();
    EXPECT_GE(t, prev);
    g.push_back(static_cast<double>(t - prev));
    prev = t;
  }
  double sum = 0, sq = 0;
  for (double x : g) sum += x;
  const double mean = sum / n;
  for (double x : g) sq += (x - mean) * (x - mean);
  return {mean, std::sqrt(sq / n), first};
}

TEST(ArrivalSchedule, ExponentialHasTheRequestedMeanRateAndPoissonSpread) {
  ArrivalSchedule s(10'000, ArrivalDistribution::exponential, Rng(7), 1'000'000);
  const GapStats g = gaps(s, 200'000, 1'000'000);
  EXPECT_NEAR(g.mean, 100'000.0, 100'000.0 * 0.01);    // 1/rate = 100 us, within 1%
  EXPECT_NEAR(g.stddev, 100'000.0, 100'000.0 * 0.02);  // exponential: stddev = mean
  EXPECT_EQ(s.count(), 200'000u);
}

TEST(ArrivalSchedule, UniformGapsLieInZeroToTwiceTheMean) {
  ArrivalSchedule s(1'000, ArrivalDistribution::uniform, Rng(3), 0);
  std::int64_t prev = 0;
  double sum = 0;
  const int n = 100'000;
  for (int i = 0; i < n; ++i) {
    const std::int64_t t = s.next_ns();
    EXPECT_LE(t - prev, 2'000'001);
    sum += static_cast<double>(t - prev);
    prev = t;
  }
  EXPECT_NEAR(sum / n, 1e6, 1e6 * 0.01);
  // uniform on [0, 2m]: stddev = m / sqrt(3)
  ArrivalSchedule s2(1'000, ArrivalDistribution::uniform, Rng(3), 0);
  EXPECT_NEAR(gaps(s2, n, 0).stddev, 1e6 / std::sqrt(3.0), 1e6 * 0.02);
}

TEST(ArrivalSchedule, DeterministicIsExactAndDoesNotDrift) {
  ArrivalSchedule s(3'000, ArrivalDistribution::deterministic, Rng(1), 5);
  std::int64_t last = 0;
  for (int i = 0; i < 3'000'000; ++i) last = s.next_ns();
  // The 3,000,000th arrival of 3,000/s is at exactly 1000 s (+ start), rounding never accumulates.
  EXPECT_EQ(last, 5 + 1'000'000'000'000);
}

TEST(ArrivalSchedule, DeterministicPhaseInterleavesSchedules) {
  ArrivalSchedule a(1'000, ArrivalDistribution::deterministic, Rng(1), 0, 0.0);
  ArrivalSchedule b(1'000, ArrivalDistribution::deterministic, Rng(1), 0, 0.5);
  EXPECT_EQ(a.next_ns(), 1'000'000);
  EXPECT_EQ(b.next_ns(), 500'000);
  EXPECT_EQ(b.next_ns(), 1'500'000);
}

TEST(ArrivalSchedule, SameSeedSameSchedule) {
  ArrivalSchedule a(5'000, ArrivalDistribution::exponential, Rng(9), 0);
  ArrivalSchedule b(5'000, ArrivalDistribution::exponential, Rng(9), 0);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(a.next_ns(), b.next_ns());
}

TEST(ArrivalSchedule, RejectsANonPositiveRate) {
  EXPECT_THROW(ArrivalSchedule(0, ArrivalDistribution::exponential, Rng(1), 0), InternalError);
  EXPECT_THROW(ArrivalSchedule(-5, ArrivalDistribution::uniform, Rng(1), 0), InternalError);
  EXPECT_EQ(to_string(ArrivalDistribution::deterministic), "deterministic");
}

TEST(OpenLoopLatency, RecordSplitsLatencyIntoLatenessAndService) {
  OpenLoopLatency s;
  s.record(1'000, 1'500, 4'000);  // intended, issued 500 ns late, done 2.5 us after the issue
  s.record(2'000, 2'000, 2'300);  // on time (a closed-loop I/O: intended = issue)
  ASSERT_EQ(s.latency.count(), 2u);
  EXPECT_EQ(s.latency.max(), 3'000);
  EXPECT_EQ(s.latency.min(), 300);
  EXPECT_EQ(s.service.max(), 2'500);
  EXPECT_EQ(s.lateness.max(), 500);
  EXPECT_EQ(s.lateness.min(), 0);
  // latency = lateness + service, in sum over all operations too.
  EXPECT_DOUBLE_EQ(s.latency.sum_ns(), s.lateness.sum_ns() + s.service.sum_ns());
}

TEST(OpenLoopLatency, MergeAddsEachHistogramAndResetEmptiesThem) {
  OpenLoopLatency a, b;
  a.record(0, 10, 100);
  b.record(0, 20, 1'000);
  b.record(0, 30, 2'000);
  a.merge(b);
  EXPECT_EQ(a.latency.count(), 3u);
  EXPECT_EQ(a.service.count(), 3u);
  EXPECT_EQ(a.lateness.count(), 3u);
  EXPECT_EQ(a.latency.max(), 2'000);
  EXPECT_EQ(a.lateness.max(), 30);
  EXPECT_EQ(b.latency.count(), 2u);  // the source is unchanged
  a.reset();
  EXPECT_EQ(a.latency.count(), 0u);
  EXPECT_EQ(a.service.count(), 0u);
  EXPECT_EQ(a.lateness.count(), 0u);
}

TEST(OpenLoopSample, MergeAddsTheCountsWithTheHistogramsAndResetZeroesThem) {
  OpenLoopSample a, b;
  a.record(0, 10, 100);
  a.ios = 1;
  a.reads = 1;
  b.record(0, 20, 1'000);
  b.ios = 5;
  b.reads = 2;
  b.writes = 3;
  a.merge(b);
  EXPECT_EQ(a.latency.count(), 2u);
  EXPECT_EQ(a.ios, 6u);
  EXPECT_EQ(a.reads, 3u);
  EXPECT_EQ(a.writes, 3u);
  a.reset();
  EXPECT_EQ(a.latency.count(), 0u);
  EXPECT_EQ(a.ios + a.reads + a.writes, 0u);
}

}  // namespace
}  // namespace drivelab
