// runner/latency_metrics.hpp: names, units, values and order of the latency metrics written from
// one histogram, as headline metrics and into a group.
#include <gtest/gtest.h>

#include "drivelab/runner/latency_metrics.hpp"

namespace drivelab::runner {
namespace {

using F = LatencyFigure;

// 1..1000 us, one sample each: mean 500.5 us, min 1 us, max 1000 us, sum 500500 us.
LatencyHistogram one_to_a_thousand_us() {
  LatencyHistogram h;
  for (std::int64_t us = 1; us <= 1000; ++us) h.record(us * 1000);
  return h;
}

TEST(LatencyMetrics, NamesCarryFigureAndUnit) {
  EXPECT_EQ(latency_metric_name("latency", F::avg(), LatencyUnit::us), "latency_avg_us");
  EXPECT_EQ(latency_metric_name("latency", F::p(50), LatencyUnit::us), "latency_p50_us");
  EXPECT_EQ(latency_metric_name("latency", F::p(99.9), LatencyUnit::us), "latency_p999_us");
  EXPECT_EQ(latency_metric_name("service_latency", F::max(), LatencyUnit::us), "service_latency_max_us");
  EXPECT_EQ(latency_metric_name("latency", F::p(95), LatencyUnit::ms), "latency_p95_ms");
  EXPECT_EQ(latency_metric_name("latency", F::min(), LatencyUnit::ms), "latency_min_ms");
  EXPECT_EQ(latency_metric_name("latency", F::sum(), LatencyUnit::ms), "latency_sum_ms");
}

TEST(LatencyMetrics, ValuesAreTheHistogramsInTheUnit) {
  const LatencyHistogram h = one_to_a_thousand_us();
  EXPECT_DOUBLE_EQ(latency_metric_value(h, F::avg(), LatencyUnit::us), h.mean() / 1e3);
  EXPECT_DOUBLE_EQ(latency_metric_value(h, F::avg(), LatencyUnit::us), 500.5);
  EXPECT_DOUBLE_EQ(latency_metric_value(h, F::min(), LatencyUnit::ms), 0.001);
  EXPECT_DOUBLE_EQ(latency_metric_value(h, F::max(), LatencyUnit::ms), 1.0);
  EXPECT_DOUBLE_EQ(latency_metric_value(h, F::sum(), LatencyUnit::ms), 500.5);
  EXPECT_DOUBLE_EQ(latency_metric_value(h, F::p(99), LatencyUnit::us), static_cast<double>(h.percentile(99)) / 1e3);
  // The 990th of 1000 samples, within the histogram's error (0.2%) and one rank.
  EXPECT_NEAR(latency_metric_value(h, F::p(99), LatencyUnit::us), 990.0, 3.0);
  const LatencyHistogram empty;
  EXPECT_EQ(latency_metric_value(empty, F::p(99), LatencyUnit::us), 0.0);
  EXPECT_EQ(latency_metric_value(empty, F::avg(), LatencyUnit::ms), 0.0);
}

TEST(LatencyMetrics, RecordWritesTheFiguresInOrderWithDescriptions) {
  results::TestRecord record;
  results::TestRecorder rec(record, nullptr);
  const LatencyHistogram h = one_to_a_thousand_us();
  record_latency(rec, h, "latency", results::catalogue::latency, LatencyUnit::us,
                 {F::avg("mean"), F::p(99), F::p(50, "median"), F::max()});
  ASSERT_EQ(record.metrics.size(), 4u);
  EXPECT_EQ(record.metrics[0].name, "latency_avg_us");
  EXPECT_EQ(record.metrics[0].unit, "us");
  EXPECT_EQ(record.metrics[0].description, "mean");
  EXPECT_DOUBLE_EQ(record.metrics[0].value, 500.5);
  EXPECT_EQ(record.metrics[1].name, "latency_p99_us");
  EXPECT_EQ(record.metrics[1].description, "");
  EXPECT_EQ(record.metrics[2].name, "latency_p50_us");
  EXPECT_EQ(record.metrics[2].description, "median");
  EXPECT_EQ(record.metrics[3].name, "latency_max_us");
  EXPECT_DOUBLE_EQ(record.metrics[3].value, 1000.0);
  EXPECT_TRUE(record.groups.empty());
  // Provenance (mh-spec, issue 16): the histogram's record name and the figure's word.
  EXPECT_EQ(record.metrics[0].of, (results::MetricSource{"latency", "avg"}));
  EXPECT_EQ(record.metrics[1].of, (results::MetricSource{"latency", "p99"}));
  EXPECT_EQ(record.metrics[3].of, (results::MetricSource{"latency", "max"}));
}

TEST(LatencyMetrics, ProvenanceNamesTheHistogramAndTheFigureWhateverTheMetricName) {
  results::TestRecord record;
  results::TestRecorder rec(record, nullptr);
  const LatencyHistogram h = one_to_a_thousand_us();
  // TPC-C's headline: metric prefix "latency", histogram "response_time", p99.9 named "p99_9".
  record_latency(rec, h, "response_time", results::catalogue::latency, LatencyUnit::ms,
                 {F::p(99.9).named("p99_9"), F::sum()});
  ASSERT_EQ(record.metrics.size(), 2u);
  EXPECT_EQ(record.metrics[0].name, "latency_p99_9_ms");
  EXPECT_EQ(record.metrics[0].of, (results::MetricSource{"response_time", "p99.9"}));
  EXPECT_EQ(record.metrics[1].of, (results::MetricSource{"response_time", "sum"}));
  // The figure word evaluates back to the metric's value.
  for (const results::Metric& m : record.metrics) {
    EXPECT_EQ(results::histogram_figure(h, m.of->figure, m.unit), m.value) << m.name;
  }
  EXPECT_EQ(latency_figure_word(F::p(99.99)), "p99.99");
  EXPECT_EQ(latency_metric_name("latency", F::p(99.99), LatencyUnit::us), "latency_p9999_us");
}

TEST(LatencyMetrics, GroupVariantWritesIntoTheGroup) {
  results::TestRecord record;
  results::TestRecorder rec(record, nullptr);
  const LatencyHistogram h = one_to_a_thousand_us();
  record_group_latency(rec, "point_050", h, "lateness_point_050", results::catalogue::lateness, LatencyUnit::ms,
                       {F::p(99), F::max("latest")});
  EXPECT_TRUE(record.metrics.empty());
  ASSERT_EQ(record.groups.size(), 1u);
  EXPECT_EQ(record.groups[0].name, "point_050");
  ASSERT_EQ(record.groups[0].metrics.size(), 2u);
  EXPECT_EQ(record.groups[0].metrics[0].name, "lateness_p99_ms");
  EXPECT_EQ(record.groups[0].metrics[0].unit, "ms");
  EXPECT_EQ(record.groups[0].metrics[1].name, "lateness_max_ms");
  EXPECT_EQ(record.groups[0].metrics[1].description, "latest");
  EXPECT_DOUBLE_EQ(record.groups[0].metrics[1].value, 1.0);
  EXPECT_EQ(record.groups[0].metrics[0].of, (results::MetricSource{"lateness_point_050", "p99"}));
}

}  // namespace
}  // namespace drivelab::runner
