// The statistics a record carries about itself (results/record_stats.hpp, issue 32): the summary of
// a repeated run's repetitions (values recomputed here by hand), the repetition fields through
// JSON, the journal's recovery and the merge of hosts; one test's within-run interval by batch
// means and its warning.
#include "drivelab/results/record_stats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/results/journal.hpp"
#include "drivelab/results/merge.hpp"
#include "test_util.hpp"

namespace drivelab::results {
namespace {

using testing::TempDir;

/// Repetition `k` of test `name` (an io-like test) with `iops` and a latency.
TestRecord repetition(const std::string& name, int k, double iops, double latency_us,
                      Status status = Status::complete) {
  TestRecord t;
  t.name = name;
  t.kind = "io";
  t.repetition = k;
  t.seed = 40 + static_cast<std::uint64_t>(k) - 1;
  t.status = status;
  t.metrics = {{"iops", iops, "1/s", "I/Os completed per second"},
               {"latency_avg_us", latency_us, "us", ""},
               {"measured_s", 1.0, "s", ""}};  // a time: no direction, not summarized
  return t;
}

RunRecord repeated_run() {
  RunRecord r;
  r.run_id = "20261207T020000Z-abcdef";
  r.seed = 40;
  r.status = Status::complete;
  r.repeat = Json{{"count", 3}, {"between", "discard-first"}};
  r.tests = {repetition("a", 1, 5000, 90), repetition("a", 2, 1000, 100), repetition("a", 3, 1100, 110),
             repetition("a", 4, 1300, 130), repetition("b", 1, 7, 1)};
  r.tests[0].discarded = true;
  r.tests[4].status = Status::interrupted;
  return r;
}

const Json& metric_of(const Json& summary, const std::string& name) {
  for (const Json& m : summary.at("metrics"))
    if (m.at("name") == name) return m;
  throw std::runtime_error("no " + name);
}

TEST(Repetitions, SummaryCountsCompleteNotDiscardedRepetitionsOfEachTest) {
  const Json s = summarize_repetitions(repeated_run());
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0]["test"], "a");
  EXPECT_EQ(s[0]["n"], 3);
  ASSERT_EQ(s[0]["metrics"].size(), 2u) << s.dump();  // iops and latency; measured_s has no direction
  const Json& iops = metric_of(s[0], "iops");
  // 1000, 1100, 1300: mean 1133.33, sample sd 152.75, t(0.975, 2) = 4.302653.
  const double mean = 3400.0 / 3,
               sd = std::sqrt((std::pow(1000 - mean, 2) + std::pow(1100 - mean, 2) + std::pow(1300 - mean, 2)) / 2);
  EXPECT_EQ(iops["unit"], "1/s");
  EXPECT_EQ(iops["n"], 3);
  EXPECT_NEAR(iops["mean"].get<double>(), mean, 1e-9);
  EXPECT_NEAR(iops["median"].get<double>(), 1100, 1e-9);
  EXPECT_NEAR(iops["stddev"].get<double>(), sd, 1e-9);
  EXPECT_NEAR(iops["cv"].get<double>(), sd / mean, 1e-12);
  const double half = 4.302652729911275 * sd / std::sqrt(3.0);
  EXPECT_NEAR(iops["ci95_low"].get<double>(), mean - half, 1e-6);
  EXPECT_NEAR(iops["ci95_high"].get<double>(), mean + half, 1e-6);
  EXPECT_FALSE(iops.contains("median_ci95_low"));
  // b's one repetition was interrupted: nothing counts.
  EXPECT_EQ(s[1]["test"], "b");
  EXPECT_EQ(s[1]["n"], 0);
  EXPECT_TRUE(s[1]["metrics"].empty());
  // Not a repeated run: no summary at all.
  EXPECT_TRUE(summarize_repetitions(testing::sample_run()).empty());
}

TEST(Repetitions, TheMediansIntervalFromTenRepetitions) {
  RunRecord r = repeated_run();
  r.tests.clear();
  for (int k = 1; k <= 10; ++k) r.tests.push_back(repetition("a", k, 1000 + 10 * k, 100));
  const Json summary = summarize_repetitions(r);
  const Json& iops = metric_of(summary[0], "iops");
  ASSERT_TRUE(iops.contains("median_ci95_low")) << iops.dump();
  EXPECT_LE(iops["median_ci95_low"].get<double>(), iops["median"].get<double>());
  EXPECT_GE(iops["median_ci95_high"].get<double>(), iops["median"].get<double>());
  // Seeded by the run's seed: the same record gives the same interval.
  EXPECT_EQ(metric_of(summarize_repetitions(r)[0], "iops"), iops);
}

TEST(Repetitions, FieldsRoundTripAndStayOutOfAnUnrepeatedRecord) {
  RunRecord r = repeated_run();
  r.repetitions = summarize_repetitions(r);
  const Json j = to_json(r);
  EXPECT_EQ(j["repeat"], r.repeat);
  EXPECT_EQ(j["tests"][0]["repetition"], 1);
  EXPECT_EQ(j["tests"][0]["seed"], 40);
  EXPECT_EQ(j["tests"][0]["discarded"], true);
  EXPECT_FALSE(j["tests"][1].contains("discarded"));
  EXPECT_EQ(to_json(run_record_from_json(j)), j);
  const Json plain = to_json(testing::sample_run());
  for (const char* key : {"repeat", "repetitions"}) EXPECT_FALSE(plain.contains(key)) << key;
  for (const char* key : {"repetition", "seed", "discarded"}) EXPECT_FALSE(plain["tests"][0].contains(key)) << key;
  Json bad = j;
  bad["tests"][1]["repetition"] = 0;
  EXPECT_THROW(run_record_from_json(bad), ConfigError);
}

TEST(Repetitions, RecoveryKeepsEachRepetitionAndSkippedOnesApart) {
  TempDir dir("record-stats-journal");
  const auto path = dir.path() / "r.journal.jsonl";
  RunRecord header = repeated_run();
  header.tests.clear();
  {
    Journal j(path);
    j.append(journal_run_start(header));
    for (int k = 1; k <= 2; ++k) {
      TestRecord t = repetition("a", k, 1000.0 * k, 100);
      t.discarded = k == 1;
      j.append(journal_test_start(t));
      j.append(journal_test_end(t));
    }
    TestRecord open = repetition("a", 3, 0, 0, Status::running);
    open.metrics.clear();
    j.append(journal_test_start(open));
    j.append(journal_interval("a", Interval{1, 1, {{"iops", 900}}}));
    for (int k = 1; k <= 2; ++k) {  // the next test's repetitions, skipped: test_end only
      TestRecord s = repetition("b", k, 0, 0, Status::skipped);
      s.metrics.clear();
      j.append(journal_test_end(s));
    }
  }
  const RunRecord r = recover_from_journal(path);
  ASSERT_EQ(r.tests.size(), 5u);
  EXPECT_TRUE(r.tests[0].discarded);
  EXPECT_EQ(r.tests[2].repetition, 3);
  EXPECT_EQ(r.tests[2].seed, 42u);
  EXPECT_EQ(r.tests[2].status, Status::interrupted);
  EXPECT_EQ(r.tests[2].intervals.size(), 1u);
  EXPECT_EQ(r.tests[3].repetition, 1);
  EXPECT_EQ(r.tests[4].repetition, 2);
  EXPECT_EQ(r.repeat, header.repeat);
  ASSERT_EQ(r.repetitions.size(), 2u);
  EXPECT_EQ(r.repetitions[0]["n"], 1);  // repetition 2 only: 1 discarded, 3 interrupted
  EXPECT_EQ(metric_of(r.repetitions[0], "iops")["mean"], 2000.0);
}

TEST(Repetitions, HostsMergePerTestAndRepetition) {
  std::vector<MergeInput> in;
  for (int rank = 0; rank < 2; ++rank) {
    RunRecord r = repeated_run();
    r.tests.resize(3);
    r.cohort = Json{{"job_id", "job"}, {"rank", rank}, {"size", 2}, {"hosts", {"h0", "h1"}}};
    r.run_id = "job-r" + std::to_string(rank);
    in.push_back({r, "rank" + std::to_string(rank)});
  }
  const RunRecord m = merge_host_records(in);
  ASSERT_EQ(m.tests.size(), 3u);
  EXPECT_EQ(m.tests[1].repetition, 2);
  EXPECT_TRUE(m.tests[0].discarded);
  EXPECT_EQ(m.tests[1].find_metric("iops")->value, 2000);  // summed over the two hosts
  EXPECT_EQ(m.repeat, in[0].record.repeat);
  ASSERT_EQ(m.repetitions.size(), 1u);
  EXPECT_EQ(metric_of(m.repetitions[0], "iops")["mean"], 2100.0);  // (2000 + 2200) / 2
  // A host whose repetitions are not the others' is refused, naming the test and repetition.
  in[1].record.tests[2].repetition = 4;
  try {
    merge_host_records(in);
    ADD_FAILURE() << "merged";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("tests[2].repetition 'a (repetition 4)'"), std::string::npos) << e.what();
  }
}

Interval rate_interval(double t_s, double duration_s, double iops) {
  return Interval{t_s, duration_s, {{"iops", iops}, {"latency_avg_us", 50}}};
}

TEST(WithinRun, BatchMeansOfTheRateOverFullIntervals) {
  TestRecord t = repetition("a", 0, 1000, 100);
  for (int k = 1; k <= 40; ++k) t.intervals.push_back(rate_interval(0.5 * k, 0.5, k % 2 == 0 ? 1010 : 990));
  t.intervals.push_back(rate_interval(20.1, 0.1, 5));  // the shorter last one is left out
  const auto w = within_run_confidence(t);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->rate->rate, &catalogue::iops);
  EXPECT_EQ(w->rate->low, &catalogue::iops_ci95_low);
  EXPECT_EQ(w->intervals, 40u);
  EXPECT_DOUBLE_EQ(w->measured_s, 20.0);
  EXPECT_NEAR(w->batch_means.mean, 1000, 1e-9);
  EXPECT_TRUE(w->batch_means.ci.contains(1000));
  EXPECT_LT(w->batch_means.relative_half_width, 0.02);
  EXPECT_EQ(within_run_warning(*w), "");
}

TEST(WithinRun, OneLateIntervalKeepsTheOthers) {
  // A loaded host closed one 200 ms interval 60 ms late: the reporting interval is still 200 ms
  // (the median), and all ten intervals count.
  TestRecord t = repetition("a", 0, 1000, 100);
  for (int k = 0; k < 10; ++k) t.intervals.push_back(rate_interval(0.2 * (k + 1), k == 4 ? 0.26 : 0.2, 50));
  const auto w = within_run_confidence(t);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->intervals, 10u);
  EXPECT_NEAR(w->measured_s, 2.0, 1e-9);
}

TEST(WithinRun, SecondsBelowTenKeepADecimalAndTheTimeNeededRoundsUp) {
  TestRecord t = repetition("a", 0, 1000, 100);
  // About ±3% from 2 s: some 4.5 s would give ±2%, a figure below 10 s, said to a tenth.
  const double rates[] = {950, 1050, 970, 1030, 960, 1040, 990, 1010};
  for (int k = 0; k < 8; ++k) t.intervals.push_back(rate_interval(0.25 * (k + 1), 0.25, rates[k]));
  const auto w = within_run_confidence(t);
  ASSERT_TRUE(w.has_value());
  ASSERT_GT(w->batch_means.relative_half_width, 0.02);
  ASSERT_LT(w->batch_means.needed_s, 10.0);
  const std::string warning = within_run_warning(*w);
  EXPECT_TRUE(warning.starts_with("iops: 8 intervals of 0.25 s give ±")) << warning;
  EXPECT_NE(warning.find(fmt::format("about {:.1f} s would give", std::ceil(w->batch_means.needed_s * 10) / 10)),
            std::string::npos)
      << warning;
}

TEST(WithinRun, AWideIntervalWarnsWithTheDurationThatWouldReachTwoPercent) {
  TestRecord t = repetition("a", 0, 1000, 100);
  const double rates[] = {700, 1300, 900, 1200, 800, 1100, 1000, 1250, 750, 1000, 950, 1050};
  for (int k = 0; k < 12; ++k) t.intervals.push_back(rate_interval(2.5 * (k + 1), 2.5, rates[k]));
  const auto w = within_run_confidence(t);
  ASSERT_TRUE(w.has_value());
  EXPECT_GT(w->batch_means.relative_half_width, 0.02);
  const std::string warning = within_run_warning(*w);
  EXPECT_TRUE(warning.starts_with("iops: 12 intervals of 2.5 s give ±")) << warning;
  EXPECT_NE(warning.find("% at 95% (within-run noise only); about "), std::string::npos) << warning;
  EXPECT_NE(warning.find(" s would give ±2%"), std::string::npos) << warning;
}

TEST(WithinRun, NotForFewIntervalsACurveOrARateTheCatalogueDoesNotPair) {
  TestRecord t = repetition("a", 0, 1000, 100);
  for (int k = 1; k <= 3; ++k) t.intervals.push_back(rate_interval(k, 1, 1000));
  EXPECT_FALSE(within_run_confidence(t).has_value()) << "3 intervals";
  t.intervals.push_back(rate_interval(4, 1, 1000));
  EXPECT_TRUE(within_run_confidence(t).has_value()) << "4 intervals";
  TestRecord fixed = t;  // a fixed-rate vdbench run: its point is constant
  for (Interval& i : fixed.intervals) i.values.emplace_back("point_pct", 100);
  EXPECT_TRUE(within_run_confidence(fixed).has_value()) << "a constant point";
  TestRecord curve = fixed;
  curve.intervals.back().values.back().second = 50;
  EXPECT_FALSE(within_run_confidence(curve).has_value()) << "a curve's intervals";
  // A tpcc `rate: curve`: its intervals carry no point, its details list the points.
  TestRecord tpcc_curve = t;
  tpcc_curve.details["points"] = Json::array({Json::object(), Json::object(), Json::object()});
  EXPECT_FALSE(within_run_confidence(tpcc_curve).has_value()) << "details.points of a curve";
  tpcc_curve.details["points"] = Json::array({Json::object()});
  EXPECT_TRUE(within_run_confidence(tpcc_curve).has_value()) << "one point: a max run";
  TestRecord frames = t;
  for (Interval& i : frames.intervals) i.values = {{"write_fps", 60}};
  EXPECT_FALSE(within_run_confidence(frames).has_value()) << "no declared bounds for fps";
}

}  // namespace
}  // namespace drivelab::results
