// merge_host_records (merge.hpp, docs/results.md "Merging hosts"): per-rank records built from
// real LatencyHistograms with known samples, merged, and checked against one histogram fed all.
#include "drivelab/results/merge.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "drivelab/core/errors.hpp"
#include "test_util.hpp"

namespace drivelab::results {
namespace {

using testing::TempDir;

/// Samples of rank `rank`, interval `k`: different shapes per host so percentiles differ.
LatencyHistogram samples(int rank, int k, int n) {
  LatencyHistogram h;
  std::mt19937_64 rng(static_cast<std::uint64_t>(1000 * rank + k));
  std::lognormal_distribution<double> d(11.0 + 0.5 * rank, 0.8);
  for (int i = 0; i < n; ++i) h.record(static_cast<std::int64_t>(d(rng)));
  return h;
}

/// Rank `rank` of `size`: a tpcc-like test whose headline and group latency metrics are figures
/// of its histograms (with `of`), a rate, a count, a fixed-work time, a percent; `intervals`
/// intervals, each with its own histogram.
RunRecord rank_record(int rank, int size, int intervals = 3) {
  RunRecord r;
  r.run_id = "20261202T160000Z-abc123-r" + std::to_string(rank);
  r.tool = Json{{"name", "drivelab"}};
  r.host = Json{{"hostname", "h" + std::to_string(rank)}};
  r.target = Json{{"kind", "directory"}, {"path", "/dut" + std::to_string(rank)}};
  r.protocol = "quick";
  r.seed = 42;
  r.started_at = "2026-12-02T16:00:0" + std::to_string(rank) + ".000Z";
  r.finished_at = "2026-12-02T16:05:0" + std::to_string(rank) + ".000Z";
  r.status = Status::complete;
  r.warnings = {"debug build", "host " + std::to_string(rank) + " only"};
  Json names = Json::array();
  for (int k = 0; k < size; ++k) names.push_back("h" + std::to_string(k));
  r.cohort = Json{{"job_id", "20261202T160000Z-abc123"},
                  {"rank", rank},
                  {"size", size},
                  {"hosts", names},
                  {"clock_offset_ns", rank * 1'000'000},
                  {"clock_offset_uncertainty_ns", 5000}};
  TestRecord t;
  t.name = "oltp";
  t.kind = "tpcc";
  t.status = Status::complete;
  t.measured_s = 60 + rank;
  t.barriers = Json{{"prepare", 5'000'000'000 + rank * 1'000'000 + rank * 300},
                    {"run", 9'000'000'000 + rank * 1'000'000 + rank * 700}};
  LatencyHistogram total;
  for (int k = 0; k < intervals; ++k) {
    LatencyHistogram h = samples(rank, k, 400 + 50 * k);
    total.merge(h);
    Interval iv;
    iv.t_s = 10.0 * (k + 1);
    iv.duration_s = 10;
    iv.values = {{"tps", 100.0 + rank + k},
                 {"lat_avg_ms", h.mean() / 1e6},
                 {"lat_p99_ms", static_cast<double>(h.percentile(99)) / 1e6},
                 {"queue_len_avg", 3.5},
                 {"errors", 1}};
    iv.histograms.emplace("latency", std::move(h));
    t.intervals.push_back(std::move(iv));
  }
  t.histograms.emplace("response_time", total);
  t.histograms.emplace("response_time.payment", samples(rank, 99, 300));
  const auto fig = [&](const char* name, const char* hist, const char* figure) {
    return Metric{name, *histogram_figure(t.histograms.at(hist), figure, "ms"), "ms", "", MetricSource{hist, figure}};
  };
  t.metrics = {{"tps", 100.5 + rank, "1/s", "tx per second"}, fig("latency_avg_ms", "response_time", "avg"),
               fig("latency_p99_ms", "response_time", "p99"), fig("latency_p99_9_ms", "response_time", "p99.9"),
               {"transactions", 6000.0 + rank, "count", ""},  {"total_s", 60.0 + rank, "s", "fixed work"},
               {"efficiency_pct", 80.0 + rank, "%", ""}};
  t.groups = {{"payment", {{"tps", 40.0 + rank, "1/s", ""}, fig("latency_p95_ms", "response_time.payment", "p95")}}};
  t.checks = {{"consistency_1", rank != 1, "W_YTD"}};
  t.warnings = {"shared warning", "only on " + std::to_string(rank)};
  r.tests = {t};
  return r;
}

std::vector<MergeInput> inputs_of(int size) {
  std::vector<MergeInput> in;
  for (int k = 0; k < size; ++k) in.push_back({rank_record(k, size), "rank" + std::to_string(k) + ".json"});
  return in;
}

const Metric* find(const std::vector<Metric>& ms, std::string_view name) {
  const auto it = std::find_if(ms.begin(), ms.end(), [&](const Metric& m) { return m.name == name; });
  return it == ms.end() ? nullptr : &*it;
}

std::string merge_error(const std::vector<MergeInput>& in) {
  try {
    merge_host_records(in);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Merge, HistogramsMergeBinByBinAndFiguresEqualOneHistogramOfAllSamples) {
  const RunRecord m = merge_host_records(inputs_of(3));
  ASSERT_EQ(m.tests.size(), 1u);
  const TestRecord& t = m.tests[0];
  LatencyHistogram all;
  std::uint64_t bin_sum = 0;
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k) all.merge(samples(r, k, 400 + 50 * k));
  const LatencyHistogram& merged = t.histograms.at("response_time");
  for (const auto& b : merged.bins()) bin_sum += b.count;
  EXPECT_EQ(bin_sum, all.count());
  EXPECT_EQ(merged.count(), 3u * (400 + 450 + 500));
  EXPECT_EQ(find(t.metrics, "latency_p99_ms")->value, static_cast<double>(all.percentile(99)) / 1e6);
  EXPECT_EQ(find(t.metrics, "latency_p99_9_ms")->value, static_cast<double>(all.percentile(99.9)) / 1e6);
  EXPECT_EQ(find(t.metrics, "latency_avg_ms")->value, all.mean() / 1e6);
  EXPECT_EQ(find(t.metrics, "latency_p99_ms")->of, (MetricSource{"response_time", "p99"}));
}

TEST(Merge, RatesAndCountsSumFixedWorkTimesTakeTheMaxOthersArePerHostOnly) {
  const RunRecord m = merge_host_records(inputs_of(3));
  const TestRecord& t = m.tests[0];
  EXPECT_DOUBLE_EQ(find(t.metrics, "tps")->value, 100.5 + 101.5 + 102.5);
  EXPECT_DOUBLE_EQ(find(t.metrics, "transactions")->value, 18003);
  EXPECT_DOUBLE_EQ(find(t.metrics, "total_s")->value, 62);  // the slowest host
  EXPECT_EQ(find(t.metrics, "efficiency_pct"), nullptr);
  EXPECT_EQ(t.details["per_host_only"], Json::array({"efficiency_pct"}));
  // Its values per host are in hosts[].
  ASSERT_EQ(m.hosts.size(), 3u);
  EXPECT_EQ(m.hosts[2]["tests"][0]["metrics"]["efficiency_pct"], 82.0);
  EXPECT_EQ(m.hosts[1]["tests"][0]["metrics"]["payment.tps"], 41.0);
  // Groups: exact figures plus the labs' convention figures, labelled.
  ASSERT_EQ(t.groups.size(), 1u);
  const auto& g = t.groups[0].metrics;
  EXPECT_DOUBLE_EQ(find(g, "tps")->value, 123);
  LatencyHistogram pay;
  for (int r = 0; r < 3; ++r) pay.merge(samples(r, 99, 300));
  EXPECT_EQ(find(g, "latency_p95_ms")->value, static_cast<double>(pay.percentile(95)) / 1e6);
  ASSERT_NE(find(g, "sum_of_hosts_tps"), nullptr);
  EXPECT_DOUBLE_EQ(find(g, "sum_of_hosts_tps")->value, 123);
  ASSERT_NE(find(g, "mean_of_hosts_latency_p95_ms"), nullptr);
  double mean = 0;
  for (int r = 0; r < 3; ++r) mean += static_cast<double>(samples(r, 99, 300).percentile(95)) / 1e6 / 3;
  EXPECT_NEAR(find(g, "mean_of_hosts_latency_p95_ms")->value, mean, 1e-12);
  EXPECT_NE(find(g, "mean_of_hosts_latency_p95_ms")->description.find("not an exact figure"), std::string::npos);
}

TEST(Merge, RunFieldsCohortTargetChecksWarningsAndSkew) {
  const RunRecord m = merge_host_records(inputs_of(3));
  EXPECT_EQ(m.run_id, "20261202T160000Z-abc123");
  EXPECT_EQ(m.status, Status::complete);
  EXPECT_EQ(m.started_at, "2026-12-02T16:00:00.000Z");
  EXPECT_EQ(m.finished_at, "2026-12-02T16:05:02.000Z");
  EXPECT_EQ(m.host, (Json{{"hostname", "h0"}}));
  EXPECT_EQ(m.cohort, (Json{{"job_id", "20261202T160000Z-abc123"}, {"size", 3}, {"ranks", {0, 1, 2}}}));
  EXPECT_EQ(m.target, (Json{{"kind", "hosts"}, {"hosts", 3}, {"description", "3 hosts"}}));
  EXPECT_EQ(m.hosts[1]["run_id"], "20261202T160000Z-abc123-r1");
  EXPECT_EQ(m.hosts[1]["clock_offset_ns"], 1'000'000);
  EXPECT_FALSE(m.hosts[0]["tests"][0]["intervals"][0].contains("histograms"));
  EXPECT_EQ(m.warnings[0], "debug build");
  EXPECT_EQ(m.warnings[1], "rank 0 (host h0): host 0 only");
  const TestRecord& t = m.tests[0];
  ASSERT_EQ(t.checks.size(), 3u);
  EXPECT_EQ(t.checks[1].detail, "rank 1 (host h1): W_YTD");
  EXPECT_FALSE(t.checks[1].passed);
  EXPECT_EQ(t.warnings, (std::vector<std::string>{"shared warning", "rank 0 (host h0): only on 0",
                                                  "rank 1 (host h1): only on 1", "rank 2 (host h2): only on 2"}));
  EXPECT_DOUBLE_EQ(t.measured_s, 62);
  // Barrier minus clock offset: prepare at 5e9 + 300 r on rank 0's clock -> skew 600 ns.
  EXPECT_EQ(t.details["start_skew_ns"], (Json{{"prepare", 600}, {"run", 1400}}));
}

TEST(Merge, IntervalsOnlyWhereEveryHostHasThemLatencyRecomputedRatesSummedOthersDropped) {
  std::vector<MergeInput> in = inputs_of(2);
  in[1].record = rank_record(1, 2, 2);  // host 1 has one interval fewer
  const RunRecord m = merge_host_records(std::move(in));
  const TestRecord& t = m.tests[0];
  ASSERT_EQ(t.intervals.size(), 2u);
  const Interval& iv = t.intervals[1];
  LatencyHistogram both = samples(0, 1, 450);
  both.merge(samples(1, 1, 450));
  std::vector<std::string> names;
  for (const auto& [n, v] : iv.values) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"tps", "lat_avg_ms", "lat_p99_ms", "errors"}));
  EXPECT_DOUBLE_EQ(iv.values[0].second, 101 + 102);
  EXPECT_EQ(iv.values[1].second, both.mean() / 1e6);
  EXPECT_EQ(iv.values[2].second, static_cast<double>(both.percentile(99)) / 1e6);
  EXPECT_EQ(iv.values[3].second, 2);
  EXPECT_EQ(iv.histograms.at("latency").count(), both.count());
}

TEST(Merge, AMissingRankIsNamedAndThePartialStatusIsTheWorstPresent) {
  std::vector<MergeInput> in = inputs_of(4);
  in.erase(in.begin() + 2);  // rank 2 (host h2) sent nothing
  RunRecord m = merge_host_records(in);
  EXPECT_EQ(m.status, Status::interrupted);
  EXPECT_EQ(m.reason, "no record or journal of rank 2 (host h2)");
  EXPECT_EQ(m.hosts[2]["status"], "missing");
  EXPECT_EQ(m.hosts[2]["reason"], "no record or journal of rank 2 (host h2)");
  EXPECT_EQ(m.cohort["ranks"], Json::array({0, 1, 3}));
  EXPECT_EQ(m.tests[0].status, Status::interrupted);
  EXPECT_NE(m.tests[0].reason.find("rank 2 (host h2)"), std::string::npos);
  // A failed host makes the merge failed, with the host named.
  in[1].record.status = Status::failed;
  in[1].record.reason = "disk full";
  m = merge_host_records(in);
  EXPECT_EQ(m.status, Status::failed);
  EXPECT_EQ(m.reason, "rank 1 (host h1): failed: disk full; no record or journal of rank 2 (host h2)");
}

TEST(Merge, OrderOfInputsDoesNotMatterAndReadBackInputsGiveTheSameBytes) {
  std::vector<MergeInput> in = inputs_of(4);
  const std::string dump = to_json(merge_host_records(in)).dump(2);
  std::vector<MergeInput> shuffled = in;
  std::reverse(shuffled.begin(), shuffled.end());
  std::swap(shuffled[0], shuffled[2]);
  for (auto& x : shuffled) x.source = "other-" + x.source;  // sources never reach the output
  EXPECT_EQ(to_json(merge_host_records(shuffled)).dump(2), dump);
  // Written to files and read back (what `drivelab results merge` does): the same bytes.
  TempDir dir;
  std::vector<MergeInput> from_files;
  for (const MergeInput& x : in) {
    const auto path = dir / x.source;
    write_record(path, x.record);
    from_files.push_back({read_record(path), path.string()});
  }
  EXPECT_EQ(to_json(merge_host_records(from_files)).dump(2), dump);
}

TEST(Merge, InputsWithoutCohortAreRankedByOrder) {
  std::vector<MergeInput> in = inputs_of(2);
  for (auto& x : in) x.record.cohort = nullptr;
  const RunRecord m = merge_host_records(in);
  EXPECT_EQ(m.run_id, "merged-20261202T160000Z-abc123-r0");
  EXPECT_EQ(m.cohort["size"], 2);
  EXPECT_EQ(m.hosts[1]["name"], "h1");
  EXPECT_EQ(m.status, Status::complete);
}

TEST(Merge, RecordsWithoutCohortMergeOnlyWhenTheirTestsRanAtTheSameTime) {
  // The same protocol run by hand on two VMs: 1.5 s apart, their tests overlap (one run); three
  // minutes apart, the second started after the first had ended (two runs: refused, not summed).
  std::vector<MergeInput> in = inputs_of(2);
  for (std::size_t i = 0; i < in.size(); ++i) {
    in[i].record.cohort = nullptr;
    in[i].record.tests[0].started_at = i == 0 ? "2026-12-02T16:00:00.000Z" : "2026-12-02T16:00:01.500Z";
    in[i].record.tests[0].finished_at = i == 0 ? "2026-12-02T16:01:00.000Z" : "2026-12-02T16:01:01.500Z";
  }
  EXPECT_EQ(merge_host_records(in).status, Status::complete);
  in[1].record.tests[0].started_at = "2026-12-02T16:03:00.000Z";
  in[1].record.tests[0].finished_at = "2026-12-02T16:04:00.000Z";
  const std::string e = merge_error(in);
  EXPECT_EQ(e.substr(0, e.find(". Records")),
            "rank1.json: tests[0].started_at 2026-12-02T16:03:00.000Z: test 'oltp' started after it had ended "
            "in rank0.json (finished_at 2026-12-02T16:01:00.000Z): these are records of different runs, not the "
            "hosts of one run");
  EXPECT_NE(e.find("--start-at"), std::string::npos) << e;
  // A skipped test has no time to compare; a record with a cohort is tied by its job id instead.
  in[1].record.tests[0].status = Status::skipped;
  EXPECT_NO_THROW(merge_host_records(in));
  in = inputs_of(2);
  in[1].record.tests[0].started_at = "2026-12-02T16:03:00.000Z";
  in[1].record.tests[0].finished_at = "2026-12-02T16:04:00.000Z";
  in[0].record.tests[0].started_at = "2026-12-02T16:00:00.000Z";
  in[0].record.tests[0].finished_at = "2026-12-02T16:01:00.000Z";
  EXPECT_NO_THROW(merge_host_records(in));  // one job: its hosts' clocks may differ (clock offsets)
}

TEST(Merge, ErrorsNameTheSourceAndTheKey) {
  std::vector<MergeInput> in = inputs_of(2);
  in[1].record.cohort["job_id"] = "other";
  EXPECT_EQ(merge_error(in), "rank1.json: cohort.job_id 'other' differs from '20261202T160000Z-abc123' of rank0.json");
  in = inputs_of(2);
  in[1].record.cohort["rank"] = 0;
  EXPECT_EQ(merge_error(in), "rank1.json: cohort.rank 0 is also the rank of rank0.json");
  in = inputs_of(2);
  in[1].record.cohort["size"] = 3;
  EXPECT_EQ(merge_error(in), "rank1.json: cohort.size 3 differs from 2 of rank0.json");
  in = inputs_of(2);
  in[1].record.protocol = "vdi";
  EXPECT_EQ(merge_error(in), "rank1.json: protocol 'vdi' differs from 'quick' of rank0.json");
  in = inputs_of(2);
  in[1].record.tests[0].name = "io";
  EXPECT_EQ(merge_error(in), "rank1.json: tests[0].name 'io' differs from 'oltp' of rank0.json");
  in = inputs_of(2);
  in[0].record.cohort = nullptr;
  EXPECT_EQ(merge_error(in), "rank1.json: cohort: present while rank0.json has none");
  EXPECT_EQ(merge_error({}), "no records to merge");
}

TEST(Merge, TheSameRunTwiceAndAMergedRecordAreRefused) {
  std::vector<MergeInput> in = inputs_of(2);
  in[1] = in[0];
  in[1].source = "copy.json";
  in[1].record.cohort["rank"] = 1;  // even with another rank written in: the run is one host
  EXPECT_EQ(merge_error(in),
            "copy.json: run_id '20261202T160000Z-abc123-r0' is also the run of rank0.json: the same "
            "run given twice");
  std::vector<MergeInput> again = inputs_of(2);
  again[0] = {merge_host_records(inputs_of(2)), "job.json"};
  EXPECT_NE(merge_error(again).find("job.json: a merged record"), std::string::npos) << merge_error(again);
}

TEST(Merge, AHostKilledMidTestIsLeftOutOfItsFiguresWithAWarning) {
  std::vector<MergeInput> in = inputs_of(3);
  TestRecord& dead = in[2].record.tests[0];  // a record rewritten mid-test, then SIGKILL
  dead.status = Status::running;
  dead.metrics.clear();
  dead.groups.clear();
  dead.histograms.clear();
  dead.intervals.resize(1);
  in[2].record.status = Status::interrupted;
  const RunRecord m = merge_host_records(in);
  const TestRecord& t = m.tests[0];
  EXPECT_NE(t.status, Status::complete);
  EXPECT_DOUBLE_EQ(find(t.metrics, "tps")->value, 100.5 + 101.5);
  EXPECT_EQ(t.histograms.at("response_time").count(), 2u * (400 + 450 + 500));
  EXPECT_EQ(t.intervals.size(), 3u);
  ASSERT_FALSE(t.warnings.empty());
  EXPECT_NE(t.warnings.back().find("rank 2 (host h2) has no results for this test"), std::string::npos)
      << t.warnings.back();
}

TEST(Merge, MaximaTakeTheLargestPeaksArePerHostOnlyCpuSecondsAdd) {
  std::vector<MergeInput> in = inputs_of(2);
  for (int k = 0; k < 2; ++k) {
    auto& ms = in[static_cast<std::size_t>(k)].record.tests[0].metrics;
    ms.push_back({"queue_length_max", 10.0 + k, "count", ""});
    ms.push_back({"peak_iops", 1000.0 + k, "1/s", ""});
    ms.push_back({"cpu_usr_s", 2.0 + k, "s", ""});
  }
  const RunRecord m = merge_host_records(in);
  const TestRecord& t = m.tests[0];
  EXPECT_DOUBLE_EQ(find(t.metrics, "queue_length_max")->value, 11.0);
  EXPECT_EQ(find(t.metrics, "peak_iops"), nullptr);
  EXPECT_DOUBLE_EQ(find(t.metrics, "cpu_usr_s")->value, 5.0);
  EXPECT_DOUBLE_EQ(find(t.metrics, "total_s")->value, 61.0);  // fixed work: still the slowest host
  const Json& only = t.details["per_host_only"];
  EXPECT_NE(std::find(only.begin(), only.end(), Json("peak_iops")), only.end());
  EXPECT_EQ(t.details["clock_offset_uncertainty_ns"], 5000);
}

/// What the code before issue 15 wrote for a histogram of 2^36 ns range (68.7 s): the bins below
/// 2^36 as today's (the same log-linear layout, fewer exponents), and its saturated samples as one
/// last bin [2^36, max_ns, saturated], with the count, sums and percentiles over all samples.
Json old_layout_histogram(const LatencyHistogram& regular, std::uint64_t saturated, std::int64_t max_ns) {
  Json j = to_json(regular);
  const auto n = static_cast<double>(saturated);
  const auto x = static_cast<double>(max_ns);
  j["bins"].push_back(Json::array({std::int64_t{1} << 36, max_ns, saturated}));
  j["count"] = regular.count() + saturated;
  j["saturated"] = saturated;
  j["max_ns"] = max_ns;
  j["sum_ns"] = regular.sum_ns() + n * x;
  j["sum_sq_ns"] = regular.sum_sq_ns() + n * x * x;
  const double total = static_cast<double>(regular.count() + saturated);
  j["mean_ns"] = j["sum_ns"].get<double>() / total;
  for (const char* p : {"p90", "p95", "p99", "p99.9", "max"}) j["percentiles_ns"][p] = max_ns;
  return j;
}

// Issue 29: two records of the 2^36 ns layout, each with p99 = max = 98.85 s and 322,220 saturated
// samples, merged (read from files, as `drivelab results merge`, the report and the store read
// them) into p99 68.85 s and 0 saturated: the old saturated bin had landed in the regular bin of
// 68.7 s. Now it stays saturated above 2^36 ns and the merged p99 is the inputs' 98.85 s.
TEST(Merge, OldLayoutSaturatedSamplesStaySaturatedAndNeverLowerAPercentile) {
  constexpr std::uint64_t kSaturated = 322'220;
  constexpr std::int64_t kMax = 98'850'000'000;
  TempDir dir;
  std::vector<MergeInput> in;
  for (int k = 0; k < 2; ++k) {
    Json j = to_json(rank_record(k, 2));
    const LatencyHistogram regular = samples(k, 50, 1'000'000);
    j["tests"][0]["histograms"]["response_time"] = old_layout_histogram(regular, kSaturated, kMax);
    const auto path = dir / ("old" + std::to_string(k) + ".json");
    write_record(path, run_record_from_json(j));
    in.push_back({read_record(path), path.string()});
    const LatencyHistogram& read = in.back().record.tests[0].histograms.at("response_time");
    EXPECT_EQ(read.saturated(), kSaturated) << "read back as written";
    EXPECT_EQ(read.saturated_above_ns(), std::int64_t{1} << 36);
    EXPECT_EQ(read.percentile(99), kMax);
  }
  const RunRecord m = merge_host_records(in);
  const LatencyHistogram& merged = m.tests[0].histograms.at("response_time");
  EXPECT_EQ(merged.count(), 2 * (1'000'000 + kSaturated));
  EXPECT_EQ(merged.saturated(), 2 * kSaturated) << "was 0";
  EXPECT_EQ(merged.percentile(99), kMax) << "was 68.85 s";
  EXPECT_EQ(find(m.tests[0].metrics, "latency_p99_ms")->value, 98'850.0);
  // Written and read again: the saturated bin keeps its bound and its count.
  const Json out = to_json(m);
  const Json& h = out["tests"][0]["histograms"]["response_time"];
  EXPECT_EQ(h["saturated"], 2 * kSaturated);
  EXPECT_EQ(h["bins"].back(), Json::array({std::int64_t{1} << 36, kMax, 2 * kSaturated}));
  EXPECT_EQ(h["percentiles_ns"]["p99"], kMax);
  const RunRecord again = run_record_from_json(out);
  EXPECT_EQ(to_json(again).dump(), out.dump());
  // A declared saturated count the last bin does not hold is an error naming the key.
  Json bad = to_json(rank_record(0, 1));
  bad["tests"][0]["histograms"]["response_time"]["saturated"] = 3;
  try {
    run_record_from_json(bad);
    ADD_FAILURE() << "accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("tests[0].histograms.response_time.saturated"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("3 saturated samples, but the last bin holds"), std::string::npos) << e.what();
  }
}

// ---- intervals by time (issue 34: merge_time.hpp, docs/results.md "Intervals by time") -------

/// One interval of an io-like test: [a, b] seconds after the start of the rank's measured phase,
/// `ios` I/Os (its iops, ios and a latency histogram of that many samples).
struct Piece {
  double a;
  double b;
  int ios;
};

/// Rank `rank` of an io test whose measured phase starts at `start_ns` on rank 0's clock, on a
/// host whose clock is `offset_ns` ahead of rank 0's; the run config says interval_s 1.
RunRecord io_record(int rank, int size, std::int64_t start_ns, std::int64_t offset_ns,
                    const std::vector<Piece>& pieces) {
  RunRecord r = rank_record(rank, size, 0);
  r.cohort["clock_offset_ns"] = offset_ns;
  r.config = Json{{"protocol", "quick"}, {"tests", Json::array({Json{{"name", "io"}, {"interval_s", 1.0}}})}};
  TestRecord& t = r.tests[0];
  t.name = "io";
  t.kind = "io";
  t.groups.clear();
  t.checks.clear();
  t.warnings.clear();
  t.barriers = Json{{"run", start_ns + offset_ns}};
  t.measured_s = pieces.back().b;
  for (std::size_t k = 0; k < pieces.size(); ++k) {
    const Piece& p = pieces[k];
    const double d = p.b - p.a;
    Interval iv;
    iv.t_s = p.b;
    iv.duration_s = d;
    iv.values = {{"iops", p.ios / d}, {"ios", static_cast<double>(p.ios)}};
    iv.histograms.emplace("latency", samples(rank, static_cast<int>(k), p.ios));
    t.intervals.push_back(std::move(iv));
  }
  return r;
}

/// `n` intervals of 1 s from `from` s, `ios` each.
std::vector<Piece> seconds(double from, int n, int ios) {
  std::vector<Piece> out;
  for (int k = 0; k < n; ++k) out.push_back({from + k, from + k + 1, ios});
  return out;
}

double value_of(const Interval& iv, std::string_view name) {
  const auto it = std::find_if(iv.values.begin(), iv.values.end(), [&](const auto& p) { return p.first == name; });
  return it == iv.values.end() ? -1 : it->second;
}

/// What rank `r` delivered in merged window [end - d, end] (on the merged t_s scale, which is the
/// lowest rank's): the I/Os of its intervals that overlap the window at all (an upper bound).
double delivered(const std::vector<Piece>& pieces, double shift_s, double a, double b) {
  double ios = 0;
  for (const Piece& p : pieces)
    if (std::min(p.b + shift_s, b) > std::max(p.a + shift_s, a)) ios += p.ios;
  return ios;
}

constexpr std::int64_t kStart = 1'800'000'000'000'000'000;  // unix ns, rank 0's clock

TEST(MergeByTime, ClockOffsetsPlaceTheRanksOnRankZerosClock) {
  // Rank 1's clock is 5 s ahead; its measured phase starts 0.2 s after rank 0's.
  const auto p0 = seconds(0, 6, 1000);
  const auto p1 = seconds(0, 6, 500);
  std::vector<MergeInput> in{{io_record(0, 2, kStart, 0, p0), "r0"},
                             {io_record(1, 2, kStart + 200'000'000, 5'000'000'000, p1), "r1"}};
  RunRecord m = merge_host_records(in);
  const TestRecord& t = m.tests[0];
  EXPECT_EQ(m.status, Status::complete) << m.reason;
  EXPECT_EQ(t.details["intervals"]["merged_by"], "time");
  EXPECT_EQ(t.details["intervals"]["common_clock"], "barriers");
  ASSERT_EQ(t.intervals.size(), 6u);
  for (std::size_t k = 0; k < 6; ++k) {
    const Interval& iv = t.intervals[k];
    EXPECT_DOUBLE_EQ(iv.t_s, static_cast<double>(k + 1));
    EXPECT_DOUBLE_EQ(value_of(iv, "ios"), 1500);
    EXPECT_DOUBLE_EQ(value_of(iv, "iops"), 1500);
    LatencyHistogram both = samples(0, static_cast<int>(k), 1000);
    both.merge(samples(1, static_cast<int>(k), 500));
    EXPECT_EQ(iv.histograms.at("latency").count(), both.count());
  }
  // The common window: rank 1 measured from 0.2 s to 6.2 s on rank 0's t_s.
  EXPECT_NEAR(t.details["intervals"]["common_window_t_s"][0].get<double>(), 0.2, 1e-9);
  EXPECT_NEAR(t.details["intervals"]["common_window_t_s"][1].get<double>(), 6.0, 1e-9);
  // Without its offset rank 1 would seem to start 5.2 s late: only one window would be shared
  // (rank 0's sixth second against rank 1's first), which is what the offset prevents.
  in[1].record.cohort["clock_offset_ns"] = 0;
  m = merge_host_records(in);
  ASSERT_EQ(m.tests[0].intervals.size(), 1u);
  EXPECT_DOUBLE_EQ(m.tests[0].intervals[0].t_s, 6);
}

TEST(MergeByTime, UnequalIntervalCountsMergeWhereEveryRankMeasured) {
  // Rank 1 stopped after 4 s; rank 2's clock ticked late once (an interval of 1.3 s, then 0.7 s).
  std::vector<Piece> p2 = seconds(0, 6, 100);
  p2[2].b = 3.3;
  p2[3].a = 3.3;
  std::vector<MergeInput> in{{io_record(0, 3, kStart, 0, seconds(0, 6, 1000)), "r0"},
                             {io_record(1, 3, kStart, -7'000, seconds(0, 4, 10)), "r1"},
                             {io_record(2, 3, kStart, 123'000, p2), "r2"}};
  const RunRecord m = merge_host_records(in);
  const TestRecord& t = m.tests[0];
  EXPECT_EQ(m.status, Status::complete) << m.reason;  // 0.3 s late is no stall
  EXPECT_TRUE(t.warnings.empty()) << t.warnings.front();
  ASSERT_EQ(t.intervals.size(), 4u);  // the seconds rank 1 measured
  EXPECT_DOUBLE_EQ(value_of(t.intervals[0], "ios"), 1110);
  EXPECT_DOUBLE_EQ(value_of(t.intervals[2], "ios"), 1110);
  // Rank 2's 1.3 s interval ends in the third second: its 100 I/Os over the 1 s window.
  EXPECT_NEAR(value_of(t.intervals[2], "iops"), 1000 + 10 + 100, 1e-9);
}

TEST(MergeByTime, AStalledRankIsFlaggedLeftOutOfTheWindowsItMissedAndTheRunIsNotComplete) {
  // Two ranks, 14 s of 1 s intervals; rank 1 SIGSTOPped from 2.3 s to 8.3 s: its interval clock
  // then writes one 6.3 s interval, five catch-up intervals of 10 ms and 0.65 s to the next tick.
  const std::vector<Piece> p0 = seconds(0, 14, 1000);
  std::vector<Piece> p1 = seconds(0, 2, 1000);
  p1.push_back({2, 8.3, 300});
  for (int k = 0; k < 5; ++k) p1.push_back({8.3 + 0.01 * k, 8.31 + 0.01 * k, 10});
  p1.push_back({8.35, 9, 650});
  for (const Piece& p : seconds(9, 5, 1000)) p1.push_back(p);
  std::vector<MergeInput> in{{io_record(0, 2, kStart, 0, p0), "r0"}, {io_record(1, 2, kStart, 0, p1), "r1"}};
  const RunRecord m = merge_host_records(in);
  const TestRecord& t = m.tests[0];
  // The windows both measured in: 0-2 s, 8-9 s (rank 1 back at 8.3 s) and 9-14 s.
  std::vector<double> ends;
  for (const Interval& iv : t.intervals) ends.push_back(iv.t_s);
  EXPECT_EQ(ends, (std::vector<double>{1, 2, 9, 10, 11, 12, 13, 14}));
  EXPECT_DOUBLE_EQ(value_of(t.intervals[2], "ios"), 1000 + 5 * 10 + 650);
  EXPECT_NEAR(value_of(t.intervals[2], "iops"), 1700, 1e-9);
  // Never more than the ranks delivered in each window (the index merge summed rank 0's third
  // second with rank 1's 6.3 s interval, and its 10 ms catch-ups at 1000 I/Os per second with
  // rank 0's 1 s intervals).
  for (const Interval& iv : t.intervals) {
    const double a = iv.t_s - iv.duration_s;
    const double sum = delivered(p0, 0, a, iv.t_s) + delivered(p1, 0, a, iv.t_s);
    EXPECT_LE(value_of(iv, "ios"), sum) << "window ending " << iv.t_s;
    EXPECT_LE(value_of(iv, "iops") * iv.duration_s, sum * (1 + 1e-12)) << "window ending " << iv.t_s;
  }
  // Flagged, and beyond the 3 s tolerance: the test and the run failed, saying why.
  ASSERT_EQ(t.warnings.size(), 1u);
  EXPECT_NE(t.warnings[0].find("rank 1 (host h1) stalled 5.30 s"), std::string::npos) << t.warnings[0];
  EXPECT_EQ(t.status, Status::failed);
  EXPECT_NE(t.reason.find("rank 1 (host h1) stalled 5.30 s in the measured phase, beyond the 3 s tolerance"),
            std::string::npos)
      << t.reason;
  EXPECT_EQ(m.status, Status::failed);
  EXPECT_NE(m.reason.find("test io: rank 1 (host h1) stalled"), std::string::npos) << m.reason;
  const Json& stall = t.details["intervals"]["stalls"][0];
  EXPECT_EQ(stall["rank"], 1);
  EXPECT_NEAR(stall["stalled_s"].get<double>(), 5.3, 1e-9);
  EXPECT_NEAR(stall["outside_common_window_s"].get<double>(), 0.0, 1e-9);
  // The same stall on rank 0: the windows are rank 1's, the merged figures the same.
  std::vector<MergeInput> swapped{{io_record(0, 2, kStart, 0, p1), "r0"}, {io_record(1, 2, kStart, 0, p0), "r1"}};
  const RunRecord m2 = merge_host_records(swapped);
  ASSERT_EQ(m2.tests[0].intervals.size(), t.intervals.size());
  for (std::size_t k = 0; k < t.intervals.size(); ++k)
    EXPECT_DOUBLE_EQ(value_of(m2.tests[0].intervals[k], "ios"), value_of(t.intervals[k], "ios"));
  EXPECT_NE(m2.reason.find("rank 0 (host h0) stalled 5.30 s"), std::string::npos) << m2.reason;
}

TEST(MergeByTime, AStallWithinTheToleranceIsAWarningAndALongRunIsMeasuredOutsideTheWindow) {
  // Rank 1 stopped 0.8 s at 2 s and, its clock behind, ends 0.8 s after rank 0.
  std::vector<Piece> p1 = seconds(0, 2, 1000);
  p1.push_back({2, 3.8, 200});
  for (const Piece& p : seconds(3.8, 3, 1000)) p1.push_back(p);
  std::vector<MergeInput> in{{io_record(0, 2, kStart, 0, seconds(0, 6, 1000)), "r0"},
                             {io_record(1, 2, kStart, 0, p1), "r1"}};
  const RunRecord m = merge_host_records(in);
  const TestRecord& t = m.tests[0];
  EXPECT_EQ(m.status, Status::complete) << m.reason;
  ASSERT_EQ(t.warnings.size(), 1u);
  EXPECT_NE(t.warnings[0].find("rank 1 (host h1) stalled 0.80 s"), std::string::npos) << t.warnings[0];
  EXPECT_NE(t.warnings[0].find("measured 0.80 s outside the window every host measured in"), std::string::npos)
      << t.warnings[0];
  // Its last 0.8 s is outside the common window: in no merged interval.
  EXPECT_DOUBLE_EQ(t.intervals.back().t_s, 6);
}

TEST(MergeByTime, ATimeLimitedTestsHeadlineRatesAreOverTheCommonWindow) {
  // 14 s of `duration:`; rank 1 SIGSTOPped 2-8.3 s, so its measured phase ran on to 20 s. The
  // common window is 0-14 s: rank 1's last 6 s are left out of the summed headline rates as of the
  // merged intervals, and its stalled interval counts for its part inside the window.
  std::vector<Piece> p1 = seconds(0, 2, 1000);
  p1.push_back({2, 8.3, 300});
  p1.push_back({8.3, 9, 650});
  for (const Piece& p : seconds(9, 11, 1000)) p1.push_back(p);
  std::vector<MergeInput> in{{io_record(0, 2, kStart, 0, seconds(0, 14, 1000)), "r0"},
                             {io_record(1, 2, kStart, 0, p1), "r1"}};
  const std::vector<double> own{14000.0 / 14, (2000 + 300 + 650 + 11000) / 20.0};
  for (std::size_t i = 0; i < 2; ++i) {
    in[i].record.config["tests"][0]["duration_s"] = 14.0;
    in[i].record.tests[0].metrics.push_back({"iops", own[i], "1/s", "I/Os per second"});
  }
  RunRecord m = merge_host_records(in);
  const TestRecord& t = m.tests[0];
  const double window0 = 14000.0 / 14;
  const double window1 = (2000 + 300 + 650 + 5000) / 14.0;
  EXPECT_NEAR(find(t.metrics, "iops")->value, window0 + window1, 1e-9);
  // A summed rate the intervals do not carry (tps) scales as the rank's I/Os inside the window.
  EXPECT_NEAR(find(t.metrics, "tps")->value, 100.5 + 101.5 * window1 / own[1], 1e-9);
  EXPECT_EQ(t.details["intervals"]["headline_over_common_window"], Json::array({"tps", "iops"}));
  EXPECT_NE(t.warnings[0].find("the summed headline rates are over the common window"), std::string::npos)
      << t.warnings[0];
  // A fixed-work test (no `duration:`): each host's own rate over its own time, summed.
  for (MergeInput& x : in) x.record.config["tests"][0].erase("duration_s");
  m = merge_host_records(in);
  EXPECT_DOUBLE_EQ(find(m.tests[0].metrics, "iops")->value, own[0] + own[1]);
  EXPECT_FALSE(m.tests[0].details["intervals"].contains("headline_over_common_window"));
  // Ranks that measured the same window up to the clock's jitter (0.2 s of start skew): the exact
  // sum of their own rates.
  in = {{io_record(0, 2, kStart, 0, seconds(0, 6, 1000)), "r0"},
        {io_record(1, 2, kStart + 200'000'000, 0, seconds(0, 6, 500)), "r1"}};
  for (MergeInput& x : in) {
    x.record.config["tests"][0]["duration_s"] = 6.0;
    x.record.tests[0].metrics.push_back({"iops", 777, "1/s", ""});
  }
  m = merge_host_records(in);
  EXPECT_DOUBLE_EQ(find(m.tests[0].metrics, "iops")->value, 2 * 777);
  EXPECT_FALSE(m.tests[0].details["intervals"].contains("headline_over_common_window"));
}

TEST(MergeByTime, IntervalsWithoutAnIntervalClockMergeByIndex) {
  // render: one interval per pipeline phase, seconds long, not `interval_s`.
  std::vector<MergeInput> in{{io_record(0, 2, kStart, 0, {{0, 3, 10}, {3, 10, 20}}), "r0"},
                             {io_record(1, 2, kStart, 0, {{0, 4, 10}, {4, 12, 20}}), "r1"}};
  const RunRecord m = merge_host_records(in);
  const TestRecord& t = m.tests[0];
  EXPECT_EQ(t.details["intervals"]["merged_by"], "index");
  ASSERT_EQ(t.intervals.size(), 2u);
  EXPECT_DOUBLE_EQ(value_of(t.intervals[1], "iops"), 20.0 / 7 + 20.0 / 8);
  EXPECT_EQ(m.status, Status::complete);
  // Hosts that ran the test with different intervals (a hosts: entry's set:): by index too, and
  // rank 1's 2 s intervals are no stall.
  in = {{io_record(0, 2, kStart, 0, seconds(0, 4, 10)), "r0"},
        {io_record(1, 2, kStart, 0, {{0, 2, 10}, {2, 4, 10}}), "r1"}};
  in[1].record.config["tests"][0]["interval_s"] = 2.0;
  const RunRecord d = merge_host_records(in);
  EXPECT_EQ(d.tests[0].details["intervals"]["merged_by"], "index");
  EXPECT_EQ(d.tests[0].intervals.size(), 2u);
  EXPECT_EQ(d.status, Status::complete);
}

TEST(Merge, ARankStillRunningInItsRecordIsInterruptedNeverRunning) {
  std::vector<MergeInput> in = inputs_of(2);
  in[1].record.status = Status::running;
  in[1].record.tests[0].status = Status::running;
  const RunRecord m = merge_host_records(in);
  EXPECT_EQ(m.status, Status::interrupted);
  EXPECT_EQ(m.reason,
            "rank 1 (host h1): interrupted: its record ends mid-run (status running: the rank was killed or "
            "lost before it finished)");
  EXPECT_EQ(m.tests[0].status, Status::interrupted);
  EXPECT_EQ(m.hosts[1]["status"], "running");  // the host's own record as it is
}

TEST(Merge, ServerCountersOfOneSharedDatabaseAreTheLowestMeasuredRanksOnce) {
  std::vector<MergeInput> in = inputs_of(3);
  for (int k = 0; k < 3; ++k) {
    TestRecord& t = in[static_cast<std::size_t>(k)].record.tests[0];
    t.metrics.push_back({"server_commits", 10'000.0 + k, "count", ""});
    t.metrics.push_back({"server_wal_bytes", 9e7 + k, "bytes", ""});
    t.details["shared_database"] = Json{{"rank", k}, {"ranks", 3}};
  }
  RunRecord m = merge_host_records(in);
  EXPECT_DOUBLE_EQ(find(m.tests[0].metrics, "server_commits")->value, 10'000);
  EXPECT_DOUBLE_EQ(find(m.tests[0].metrics, "server_wal_bytes")->value, 9e7);
  EXPECT_DOUBLE_EQ(find(m.tests[0].metrics, "transactions")->value, 18003);  // the terminals' still add up
  // Rank 0 killed mid-test (no results): rank 1 is the lowest that measured.
  TestRecord& dead = in[0].record.tests[0];
  dead.metrics.clear();
  dead.histograms.clear();
  dead.groups.clear();
  m = merge_host_records(in);
  EXPECT_DOUBLE_EQ(find(m.tests[0].metrics, "server_commits")->value, 10'001);
  // Each rank on its own server: summed.
  for (auto& x : in) x.record.tests[0].details.erase("shared_database");
  in[0] = {rank_record(0, 3), "rank0.json"};
  in[0].record.tests[0].metrics.push_back({"server_commits", 10'000.0, "count", ""});
  m = merge_host_records(in);
  EXPECT_DOUBLE_EQ(find(m.tests[0].metrics, "server_commits")->value, 30'003);
}

}  // namespace
}  // namespace drivelab::results
