// TestRecorder: what emulators write into, from any thread, with a listener that sees snapshots.
#include "drivelab/results/recorder.hpp"

#include <gtest/gtest.h>

#include <thread>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"

namespace drivelab::results {
namespace {

struct Seen : TestRecorder::Listener {
  TestRecorder* recorder = nullptr;  // when set, the listener calls back into it
  std::vector<std::size_t> interval_counts;
  std::vector<double> interval_t;
  std::vector<std::string> messages;
  std::vector<std::string> groups;  // "<test>: <group> (<metrics>)" per group handed over
  void on_interval(const TestRecord& test, const Interval& interval) override {
    interval_counts.push_back(test.intervals.size());
    interval_t.push_back(interval.t_s);
    if (recorder) recorder->with_record([](TestRecord& r) { r.details["seen"] = true; });
  }
  void on_message(const TestRecord& test, std::string_view message) override {
    messages.push_back(test.name + ": " + std::string(message));
  }
  void on_groups(std::string_view test, const std::vector<MetricGroup>& gs) override {
    for (const MetricGroup& g : gs) groups.push_back(fmt::format("{}: {} ({})", test, g.name, g.metrics.size()));
  }
};

TEST(Recorder, IntervalsReachTheListenerWithTheRecordIncludingThem) {
  TestRecord r;
  r.name = "oltp";
  Seen seen;
  TestRecorder rec(r, &seen);
  seen.recorder = &rec;  // re-entrant call must not deadlock
  rec.interval(Interval{5, 5, {{"tps", 1}}});
  rec.interval(Interval{10, 5, {{"tps", 2}}});
  rec.message("loading warehouse 2/10");
  EXPECT_EQ(r.intervals.size(), 2u);
  EXPECT_EQ(seen.interval_counts, (std::vector<std::size_t>{1, 2}));
  EXPECT_EQ(seen.interval_t, (std::vector<double>{5, 10}));
  EXPECT_EQ(seen.messages, (std::vector<std::string>{"oltp: loading warehouse 2/10"}));
  EXPECT_EQ(r.details["seen"], true);
}

// The groups a curve's runs record reach the listener whole, once per change, before the next
// interval or message (the runner journals them: a killed curve keeps its finished runs).
TEST(Recorder, ChangedGroupsReachTheListenerBeforeTheNextIntervalOrMessage) {
  TestRecord r;
  r.name = "oltp";
  Seen seen;
  TestRecorder rec(r, &seen);
  rec.group_metric("max", catalogue::tps, 100);
  rec.group_metric("max", catalogue::qps, 2000);
  EXPECT_TRUE(seen.groups.empty());  // not yet: the run may record more of its group
  rec.message("curve point 50%: 50.0 TPS (open loop)");
  EXPECT_EQ(seen.groups, (std::vector<std::string>{"oltp: max (2)"}));
  rec.interval(Interval{5, 5, {{"tps", 1}}});
  rec.message("again");
  EXPECT_EQ(seen.groups.size(), 1u);  // nothing changed since
  rec.group_metric("point_050", catalogue::tps, 50);
  rec.group_metric("max", catalogue::tps, 101);
  rec.interval(Interval{10, 5, {{"tps", 2}}});
  EXPECT_EQ(seen.groups, (std::vector<std::string>{"oltp: max (2)", "oltp: max (2)", "oltp: point_050 (1)"}));
  rec.group_metric("point_070", catalogue::tps, 70);
  rec.flush_groups();
  rec.flush_groups();
  EXPECT_EQ(seen.groups.back(), "oltp: point_070 (1)");
  EXPECT_EQ(seen.groups.size(), 4u);
  TestRecorder quiet(r, nullptr);  // without a listener: nothing to hand over, nothing kept
  quiet.group_metric("point_080", catalogue::tps, 80);
  quiet.flush_groups();
  EXPECT_EQ(seen.groups.size(), 4u);
}

// The interval sampler (the runner's telemetry) adds its values before the interval is checked,
// recorded and handed to the listener; an undeclared name is refused as the emulator's would be.
TEST(Recorder, TheIntervalSamplerAddsValuesTheRecordAndTheListenerSee) {
  TestRecord r;
  Seen seen;
  TestRecorder rec(r, &seen);
  std::vector<std::size_t> sampled_sizes;
  rec.set_interval_sampler([&](Interval& iv) {
    sampled_sizes.push_back(iv.values.size());
    iv.values.push_back(interval_value(catalogue::device_r_s, 7));
  });
  rec.interval(Interval{1, 1, {{"iops", 1}}});
  ASSERT_EQ(r.intervals.size(), 1u);
  EXPECT_EQ(sampled_sizes, (std::vector<std::size_t>{1}));
  EXPECT_EQ(value_of(r.intervals[0].values, catalogue::device_r_s), 7.0);
  EXPECT_EQ(r.intervals[0].values.front().first, "iops") << "after the emulator's values";
  EXPECT_EQ(seen.interval_counts, (std::vector<std::size_t>{1}));
  rec.set_interval_sampler([](Interval& iv) { iv.values.emplace_back("no_such_value", 1); });
  EXPECT_THROW(rec.interval(Interval{2, 1, {{"iops", 1}}}), InternalError);
  rec.set_interval_sampler({});
  rec.interval(Interval{3, 1, {{"iops", 1}}});
  EXPECT_EQ(r.intervals.back().values.size(), 1u) << "no sampler: the emulator's values only";
}

// An interval whose latency histogram is empty (nothing completed: a frozen filesystem, an
// arrival gap) records no latency figures: a 0-ms latency would be read as one. Its other values
// stay, and an interval with completions keeps its figures.
TEST(Recorder, AnIntervalThatCompletedNothingHasNoLatencyFigures) {
  TestRecord r;
  TestRecorder rec(r, nullptr);
  Interval empty{1, 1, {{"iops", 0}, {"latency_avg_us", 0}, {"latency_p99_us", 0}}};
  empty.histograms.emplace("latency", drivelab::LatencyHistogram{});
  rec.interval(std::move(empty));
  Interval busy{2, 1, {{"iops", 1}, {"latency_avg_us", 5}, {"latency_p99_us", 5}}};
  busy.histograms["latency"].record(5000);
  rec.interval(std::move(busy));
  ASSERT_EQ(r.intervals.size(), 2u);
  EXPECT_EQ(r.intervals[0].values, (std::vector<std::pair<std::string, double>>{{"iops", 0}}));
  EXPECT_EQ(r.intervals[1].values.size(), 3u);
}

TEST(Recorder, MetricsReplaceByNameAndKeepTheirPlace) {
  TestRecord r;
  TestRecorder rec(r, nullptr);
  rec.metric(catalogue::tps, 1);
  rec.metric(catalogue::latency_avg_ms, 2, "mean");
  rec.metric(catalogue::tps, 3, "final");
  ASSERT_EQ(r.metrics.size(), 2u);
  EXPECT_EQ(r.metrics[0].name, "tps");
  EXPECT_EQ(r.metrics[0].unit, "1/s");
  EXPECT_EQ(r.metrics[0].value, 3);
  EXPECT_EQ(r.metrics[0].description, "final");
  EXPECT_EQ(r.metrics[1].name, "latency_avg_ms");
  EXPECT_EQ(r.metrics[1].unit, "ms");
  rec.group_metric("payment", catalogue::count, 5);
  rec.group_metric("new_order", catalogue::count, 6);
  rec.group_metric("payment", catalogue::count, 7);
  rec.group_metric("payment", catalogue::latency_avg_ms, 8);
  // No description given: the declaration's.
  EXPECT_EQ(r.groups[0].metrics[0].description, catalogue::count.description);
  ASSERT_EQ(r.groups.size(), 2u);
  EXPECT_EQ(r.groups[0].name, "payment");
  ASSERT_EQ(r.groups[0].metrics.size(), 2u);
  EXPECT_EQ(r.groups[0].metrics[0].value, 7);
  EXPECT_EQ(r.groups[1].metrics[0].value, 6);
}

// Issue 31: every metric recorded is declared in the catalogue, where it is recorded, in its unit;
// an old name is read, never written.
TEST(Recorder, RefusesWhatTheCatalogueDoesNotDeclare) {
  TestRecord r;
  TestRecorder rec(r, nullptr);
  const auto refused = [](auto&& f, std::string_view part) {
    try {
      f();
      ADD_FAILURE() << "not refused: " << part;
    } catch (const InternalError& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  refused([&] { rec.metric(Metric{"no_such_metric", 1, "count", "", std::nullopt}); },
          "headline metric 'no_such_metric' is not declared in the metric catalogue");
  refused([&] { rec.metric(Metric{"tps", 1, "1/min", "", std::nullopt}); },
          "metric 'tps' recorded in '1/min', declared in '1/s'");
  refused([&] { rec.metric(Metric{"lat_avg_ms", 1, "ms", "", std::nullopt}); }, "'lat_avg_ms' is not declared");
  refused([&] { rec.group_metric("g", Metric{"nopm", 1, "1/min", "", std::nullopt}); },
          "metric 'nopm' is not declared as a group metric");
  refused([&] { rec.interval(Interval{1, 1, {{"tps", 1}, {"tps_typo", 2}}}); },
          "interval value 'tps_typo' is not declared");
  EXPECT_TRUE(r.metrics.empty());
  EXPECT_TRUE(r.groups.empty());
  EXPECT_TRUE(r.intervals.empty());
  // A declaration with a second unit takes either.
  rec.group_metric("g", catalogue::ss_value, 1.5, "", Unit::none);
  rec.group_metric("g", catalogue::ss_value, 2.5, "", Unit::pct);
  EXPECT_EQ(r.groups.at(0).metrics.at(0).unit, "%");
}

TEST(Recorder, HistogramsChecksWarningsDetailsPhaseTimes) {
  TestRecord r;
  TestRecorder rec(r, nullptr);
  LatencyHistogram h;
  h.record(1000);
  rec.histogram("read", h);
  h.record(2000);
  rec.histogram("read", h);
  EXPECT_EQ(r.histograms.at("read").count(), 2u);
  rec.check("count", true);
  rec.check("sum", false, "off by 1");
  ASSERT_EQ(r.checks.size(), 2u);
  EXPECT_EQ(r.checks[1].detail, "off by 1");
  rec.warning("w1");
  rec.warning("w1");
  rec.warning("w2");
  EXPECT_EQ(r.warnings, (std::vector<std::string>{"w1", "w2"}));
  rec.detail("rollbacks", 3);
  rec.detail("rollbacks", 4);
  EXPECT_EQ(r.details, (Json{{"rollbacks", 4}}));
  rec.set_phase_times(10, 60.5);
  EXPECT_EQ(r.warmup_s, 10);
  EXPECT_EQ(r.measured_s, 60.5);
}

// Issue 15: a histogram with saturated samples (above 2^42 ns = 73.3 min) puts a warning into the
// record naming the metric, the count and the range; values above the old 68.7 s range do not.
TEST(Recorder, ASaturatedHistogramWarnsWithItsNameCountAndRange) {
  TestRecord r;
  TestRecorder rec(r, nullptr);
  LatencyHistogram h;
  for (int i = 1; i <= 99; ++i) h.record(std::int64_t{i} * 1'000'000'000);  // 1 .. 99 s
  rec.histogram("latency", h);
  EXPECT_EQ(r.histograms.at("latency").saturated(), 0u);
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();
  h.record(5'000'000'000'000);  // 5000 s
  h.record(LatencyHistogram::max_trackable_ns() + 1);
  rec.histogram("latency", h);
  rec.histogram("lateness", LatencyHistogram{});
  ASSERT_EQ(r.warnings.size(), 1u);
  const std::string& w = r.warnings.front();
  EXPECT_NE(w.find("histogram 'latency'"), std::string::npos) << w;
  EXPECT_NE(w.find("2 of 101 samples saturated"), std::string::npos) << w;
  EXPECT_NE(w.find("2^42 ns = 73.3 min"), std::string::npos) << w;
  EXPECT_NE(w.find("5000.000 s"), std::string::npos) << w;
  // Put again with more samples: the warning is replaced, not repeated.
  h.record(6'000'000'000'000);
  rec.histogram("latency", h);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings.front().find("3 of 102 samples saturated"), std::string::npos) << r.warnings.front();
  rec.histogram("latency", LatencyHistogram{});
  EXPECT_TRUE(r.warnings.empty());
}

TEST(Recorder, ConcurrentWritersLoseNothing) {
  TestRecord r;
  Seen seen;
  TestRecorder rec(r, &seen);
  std::vector<const MetricDef*> group_defs;  // ten metrics declared as group metrics
  for (const MetricDef* d : metric_defs())
    if (d->recorded_as(kGroup) && group_defs.size() < 10) group_defs.push_back(d);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        rec.group_metric("g" + std::to_string(t), *group_defs.at(static_cast<std::size_t>(i % 10)), i);
        rec.warning("thread " + std::to_string(t) + " warning " + std::to_string(i % 5));
        if (i % 20 == 0) rec.interval(Interval{static_cast<double>(i), 1, {}});
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(r.groups.size(), 4u);
  for (const auto& g : r.groups) EXPECT_EQ(g.metrics.size(), 10u);
  EXPECT_EQ(r.warnings.size(), 20u);
  EXPECT_EQ(r.intervals.size(), 40u);
  // Listener calls are serialised and each saw one more interval than the one before.
  ASSERT_EQ(seen.interval_counts.size(), 40u);
  for (std::size_t i = 0; i < 40; ++i) EXPECT_EQ(seen.interval_counts[i], i + 1);
}

}  // namespace
}  // namespace drivelab::results
