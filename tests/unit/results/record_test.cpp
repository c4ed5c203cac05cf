// The drivelab.run/1 record: layout, round trips, error messages, atomic files.
#include "drivelab/results/record.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <bit>
#include <cstring>
#include <fstream>
#include <limits>

#include "drivelab/core/errors.hpp"
#include "test_util.hpp"

namespace drivelab::results {
namespace {

using testing::sample_run;
using testing::sample_test;
using testing::TempDir;

std::vector<std::string> keys(const Json& j) {
  std::vector<std::string> out;
  for (const auto& [k, v] : j.items()) out.push_back(k);
  return out;
}

std::string config_error(const Json& j) {
  try {
    run_record_from_json(j);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Status, WordsRoundTrip) {
  for (Status s : {Status::running, Status::complete, Status::interrupted, Status::failed, Status::skipped}) {
    EXPECT_EQ(status_from_string(to_string(s)), s);
  }
  EXPECT_EQ(to_string(Status::interrupted), "interrupted");
  EXPECT_THROW(status_from_string("done"), std::invalid_argument);
}

TEST(Record, RunKeysInDocumentedOrder) {
  const Json j = to_json(sample_run());
  EXPECT_EQ(keys(j), (std::vector<std::string>{"schema", "run_id", "status", "reason", "protocol", "protocol_file",
                                               "started_at", "finished_at", "seed", "command_line", "tool", "host",
                                               "target", "config", "warnings", "tests"}));
  EXPECT_EQ(j["schema"], "drivelab.run/1");
  EXPECT_EQ(j["seed"].get<std::uint64_t>(), 0xFEDCBA9876543210ull);
  EXPECT_EQ(keys(j["tests"][0]),
            (std::vector<std::string>{"name", "kind", "status", "reason", "started_at", "finished_at", "warmup_s",
                                      "measured_s", "config", "metrics", "groups", "histograms", "intervals", "checks",
                                      "warnings", "details"}));
}

TEST(Record, MetricsAreObjectsKeyedByNameInInsertionOrder) {
  const Json t = to_json(sample_test("oltp"));
  EXPECT_EQ(keys(t["metrics"]), (std::vector<std::string>{"tps", "lat_avg_ms", "lat_p99_ms", "tpmc", "unknown"}));
  EXPECT_EQ(t["metrics"]["tps"],
            (Json{{"value", 512.345}, {"unit", "1/s"}, {"description", "committed transactions per second"}}));
  // Group metrics: {value, unit}, description only when set.
  EXPECT_EQ(t["groups"]["new_order"]["count"], (Json{{"value", 1234.0}, {"unit", "count"}}));
  EXPECT_EQ(t["groups"]["new_order"]["lat_avg_ms"]["description"], "mean");
  EXPECT_EQ(keys(t["groups"]), (std::vector<std::string>{"new_order", "payment"}));
  EXPECT_EQ(t["checks"][1], (Json{{"name", "consistency_2"}, {"passed", false}, {"detail", "1 district off"}}));
  EXPECT_EQ(t["intervals"][0],
            (Json{{"t_s", 5.0}, {"duration_s", 5.0}, {"values", {{"tps", 500.5}, {"lat_avg_ms", 8.25}}}}));
}

TEST(Record, NonFiniteNumbersBecomeNullAndTheTextStaysValidJson) {
  const Json j = to_json(sample_run());
  EXPECT_TRUE(j["tests"][0]["metrics"]["unknown"]["value"].is_null());
  EXPECT_TRUE(j["tests"][0]["intervals"][1]["values"]["lat_avg_ms"].is_null());
  const std::string text = j.dump(2);
  EXPECT_EQ(text.find("NaN"), std::string::npos);
  EXPECT_EQ(text.find("inf"), std::string::npos);
  EXPECT_EQ(Json::parse(text), j);
  // And null reads back as NaN.
  const RunRecord back = run_record_from_json(j);
  EXPECT_TRUE(std::isnan(back.tests[0].find_metric("unknown")->value));
}

TEST(Record, HistogramLayout) {
  const Json h = to_json(sample_test("oltp"))["histograms"]["response_time"];
  EXPECT_EQ(keys(h), (std::vector<std::string>{"count", "saturated", "min_ns", "max_ns", "mean_ns", "stddev_ns",
                                               "sum_ns", "sum_sq_ns", "percentiles_ns", "bins"}));
  EXPECT_EQ(keys(h["percentiles_ns"]), (std::vector<std::string>{"p50", "p90", "p95", "p99", "p99.9", "max"}));
  EXPECT_EQ(h["count"], 300u);
  std::uint64_t sum = 0;
  std::int64_t previous_upper = -1;
  for (const Json& bin : h["bins"]) {
    ASSERT_EQ(bin.size(), 3u);
    EXPECT_GT(bin[0].get<std::int64_t>(), previous_upper);  // increasing, disjoint
    EXPECT_LE(bin[0].get<std::int64_t>(), bin[1].get<std::int64_t>());
    previous_upper = bin[1].get<std::int64_t>();
    sum += bin[2].get<std::uint64_t>();
  }
  EXPECT_EQ(sum, 300u);
  EXPECT_EQ(h["percentiles_ns"]["max"], h["max_ns"]);
  const Json empty = to_json(sample_test("oltp"))["histograms"]["empty"];
  EXPECT_EQ(empty["count"], 0u);
  EXPECT_EQ(empty["min_ns"], 0);
  EXPECT_TRUE(empty["bins"].empty());
}

TEST(Record, RoundTripIsExact) {
  const Json j = to_json(sample_run());
  EXPECT_EQ(to_json(run_record_from_json(j)), j);
  // Through text as well (what a file does).
  const Json reparsed = Json::parse(j.dump(2));
  EXPECT_EQ(to_json(run_record_from_json(reparsed)), j);
  // A record with nothing but the required fields round-trips to itself once written.
  RunRecord minimal;
  minimal.run_id = "x";
  const Json m = to_json(minimal);
  EXPECT_EQ(to_json(run_record_from_json(m)), m);
  EXPECT_TRUE(m["tool"].is_null());
}

TEST(Record, MultiHostFieldsRoundTripAndAreWrittenOnlyWhenSet) {
  // mh-spec (issue 16): cohort, barriers, interval histograms, metric provenance, hosts.
  RunRecord r = testing::sample_rank_run(1, 3);
  r.hosts = Json::array({Json{{"rank", 0}, {"name", "host0"}, {"status", "missing"}}});
  const Json j = to_json(r);
  EXPECT_EQ(keys(j), (std::vector<std::string>{"schema", "run_id", "status", "reason", "protocol", "protocol_file",
                                               "started_at", "finished_at", "seed", "command_line", "tool", "host",
                                               "target", "cohort", "config", "warnings", "hosts", "tests"}));
  const Json& t = j["tests"][0];
  EXPECT_EQ(keys(t), (std::vector<std::string>{"name", "kind", "status", "reason", "started_at", "finished_at",
                                               "warmup_s", "measured_s", "barriers", "config", "metrics", "groups",
                                               "histograms", "intervals", "checks", "warnings", "details"}));
  EXPECT_EQ(t["metrics"]["lat_p99_ms"]["of"], (Json{{"histogram", "response_time"}, {"figure", "p99"}}));
  EXPECT_FALSE(t["metrics"]["tps"].contains("of"));
  EXPECT_EQ(t["groups"]["new_order"]["lat_avg_ms"]["of"]["histogram"], "service_time");
  EXPECT_EQ(t["intervals"][0]["histograms"]["latency"]["count"], 50);
  EXPECT_EQ(j["cohort"]["rank"], 1);
  const RunRecord back = run_record_from_json(Json::parse(j.dump(2)));
  EXPECT_EQ(to_json(back), j);
  EXPECT_EQ(back.cohort, r.cohort);
  EXPECT_EQ(back.tests[0].barriers, r.tests[0].barriers);
  EXPECT_EQ(back.tests[0].metrics[2].of, r.tests[0].metrics[2].of);
  EXPECT_EQ(back.tests[0].intervals[2].histograms.at("latency").bins().size(),
            r.tests[0].intervals[2].histograms.at("latency").bins().size());
  // A single-host record has none of the keys, and a record written before them still reads.
  const Json one = to_json(sample_run());
  EXPECT_FALSE(one.contains("cohort"));
  EXPECT_FALSE(one.contains("hosts"));
  EXPECT_FALSE(one["tests"][0].contains("barriers"));
  EXPECT_FALSE(one["tests"][0]["intervals"][0].contains("histograms"));
  EXPECT_FALSE(one["tests"][0]["metrics"]["lat_p99_ms"].contains("of"));
  const RunRecord old = run_record_from_json(one);
  EXPECT_TRUE(old.cohort.is_null());
  EXPECT_TRUE(old.hosts.empty());
  EXPECT_FALSE(old.tests[0].metrics[2].of.has_value());
  EXPECT_TRUE(old.tests[0].intervals[0].histograms.empty());
}

TEST(Record, MultiHostFieldsMalformedNameTheKeyPath) {
  Json j = to_json(testing::sample_rank_run(0, 2));
  j["tests"][0]["metrics"]["lat_p99_ms"]["of"].erase("figure");
  EXPECT_EQ(config_error(j), "tests[0].metrics.lat_p99_ms.of.figure: missing");
  j = to_json(testing::sample_rank_run(0, 2));
  j["tests"][1]["intervals"][0]["histograms"]["latency"]["count"] = 3;
  EXPECT_EQ(config_error(j), "tests[1].intervals[0].histograms.latency.count: 3 is not the sum of the bin counts (50)");
  j = to_json(testing::sample_rank_run(0, 2));
  j["cohort"] = 5;
  EXPECT_EQ(config_error(j), "cohort: expected an object, got number");
}

TEST(Record, HistogramFigureEvaluatesEveryFigureWord) {
  LatencyHistogram h;
  for (int i = 1; i <= 1000; ++i) h.record(i * 1000);  // 1..1000 us
  EXPECT_EQ(histogram_figure(h, "avg", "us"), h.mean() / 1e3);
  EXPECT_EQ(histogram_figure(h, "min", "ms"), 0.001);
  EXPECT_EQ(histogram_figure(h, "max", "s"), 0.001);
  EXPECT_EQ(histogram_figure(h, "sum", "ns"), h.sum_ns());
  EXPECT_EQ(histogram_figure(h, "p99.9", "us"), static_cast<double>(h.percentile(99.9)) / 1e3);
  EXPECT_EQ(histogram_figure(h, "p50", "ms"), static_cast<double>(h.percentile(50)) / 1e6);
  EXPECT_FALSE(histogram_figure(h, "p101", "ms").has_value());
  EXPECT_FALSE(histogram_figure(h, "median", "ms").has_value());
  EXPECT_FALSE(histogram_figure(h, "p50x", "ms").has_value());
  EXPECT_FALSE(histogram_figure(h, "avg", "MB/s").has_value());
}

TEST(Record, HistogramPercentilesSurviveTheRoundTrip) {
  const TestRecord t = sample_test("oltp");
  const TestRecord back = test_record_from_json(to_json(t));
  for (const auto& [name, h] : t.histograms) {
    const LatencyHistogram& b = back.histograms.at(name);
    EXPECT_EQ(b.count(), h.count()) << name;
    EXPECT_EQ(b.min(), h.min()) << name;
    EXPECT_EQ(b.max(), h.max()) << name;
    // The record's sums are doubles: the rebuilt mean/stddev are the ones written, and within a
    // few ulps of the exact in-memory figures.
    const Json written = to_json(h);
    EXPECT_EQ(b.mean(), written["mean_ns"].get<double>()) << name;
    EXPECT_EQ(b.stddev(), written["stddev_ns"].get<double>()) << name;
    EXPECT_DOUBLE_EQ(b.mean(), h.mean()) << name;
    EXPECT_DOUBLE_EQ(b.stddev(), h.stddev()) << name;
    for (double p : {0.0, 1.0, 25.0, 50.0, 90.0, 95.0, 99.0, 99.9, 99.99, 100.0}) {
      EXPECT_EQ(b.percentile(p), h.percentile(p)) << name << " p" << p;
    }
  }
}

TEST(Record, SaturatedHistogramRoundTrips) {
  LatencyHistogram h;
  h.record(std::int64_t{1} << 44);  // beyond the 2^42 ns range: counted as saturated
  h.record(5000);
  ASSERT_EQ(h.saturated(), 1u);
  const Json j = to_json(h);
  EXPECT_EQ(j["saturated"], 1u);
  EXPECT_EQ(to_json(histogram_from_json(j)), j);
}

TEST(Record, HistogramsMergeExactlyFromTheirBins) {
  // docs/results.md: merging two records' bins equals recording every sample in one histogram.
  const LatencyHistogram a = testing::sample_histogram(1000, 300);
  const LatencyHistogram b = testing::sample_histogram(70'000, 300);
  LatencyHistogram merged = histogram_from_json(to_json(a));
  merged.merge(histogram_from_json(to_json(b)));
  LatencyHistogram all = a;
  all.merge(b);
  const Json m = to_json(merged), x = to_json(all);
  for (const char* exact : {"count", "saturated", "min_ns", "max_ns", "percentiles_ns", "bins"}) {
    EXPECT_EQ(m[exact], x[exact]) << exact;
  }
  EXPECT_DOUBLE_EQ(m["mean_ns"].get<double>(), x["mean_ns"].get<double>());
  EXPECT_DOUBLE_EQ(m["stddev_ns"].get<double>(), x["stddev_ns"].get<double>());
}

TEST(Record, DoublesRoundTripBitForBit) {
  const double values[] = {0.1,
                           1.0 / 3.0,
                           2.0 / 3.0,
                           1e-300,
                           5e-324,
                           123456.789012345678,
                           std::numeric_limits<double>::max(),
                           -0.0,
                           9007199254740993.0,
                           std::numeric_limits<double>::epsilon(),
                           512.345,
                           8.123456789};
  for (double v : values) {
    Interval i{v, v, {{"x", v}}};
    const Interval back = interval_from_json(Json::parse(to_json(i).dump()));
    EXPECT_EQ(std::bit_cast<std::uint64_t>(back.values[0].second), std::bit_cast<std::uint64_t>(v)) << v;
    EXPECT_EQ(std::bit_cast<std::uint64_t>(back.t_s), std::bit_cast<std::uint64_t>(v)) << v;
  }
}

TEST(Record, IntervalValuesKeepTheirOrder) {
  const Interval i{30, 5, {{"tps", 1}, {"lat_p99_ms", 2}, {"iops", 3}, {"a", 4}}};
  const Interval back = interval_from_json(to_json(i));
  ASSERT_EQ(back.values.size(), 4u);
  EXPECT_EQ(back.values[1].first, "lat_p99_ms");
  EXPECT_EQ(back.values[3].first, "a");
  EXPECT_EQ(back.values[3].second, 4);
}

TEST(Record, UnsupportedSchemaNamesBothSchemas) {
  Json j = to_json(sample_run());
  j["schema"] = "drivelab.run/2";
  EXPECT_EQ(config_error(j), "unsupported result schema 'drivelab.run/2' (this drivelab reads drivelab.run/1)");
  j.erase("schema");
  EXPECT_EQ(config_error(j), "not a drivelab result record: no 'schema' field (this drivelab reads drivelab.run/1)");
  EXPECT_EQ(config_error(Json::array()),
            "not a drivelab result record: expected a JSON object, got array (this drivelab reads "
            "drivelab.run/1)");
}

TEST(Record, MalformedContentNamesTheKeyPath) {
  Json j = to_json(sample_run());
  j["tests"][1]["metrics"]["tps"]["value"] = "fast";
  EXPECT_EQ(config_error(j), "tests[1].metrics.tps.value: expected a number, got string");

  j = to_json(sample_run());
  j["tests"][0]["status"] = "done";
  EXPECT_EQ(config_error(j),
            "tests[0].status: unknown status 'done' (expected running, complete, "
            "interrupted, failed or skipped)");

  j = to_json(sample_run());
  j.erase("run_id");
  EXPECT_EQ(config_error(j), "run_id: missing");

  j = to_json(sample_run());
  j["tests"][0]["histograms"]["response_time"]["count"] = 299;
  EXPECT_EQ(config_error(j),
            "tests[0].histograms.response_time.count: 299 is not the sum of the "
            "bin counts (300)");

  j = to_json(sample_run());
  j["tests"][0]["intervals"][2]["values"]["tps"] = true;
  EXPECT_EQ(config_error(j), "tests[0].intervals[2].values.tps: expected a number, got boolean");

  j = to_json(sample_run());
  j["seed"] = -1;
  EXPECT_EQ(config_error(j), "seed: expected a non-negative integer, got number");
}

TEST(Record, AbsentOptionalFieldsTakeDefaultsAndUnknownKeysAreIgnored) {
  const Json j = Json::parse(R"({"schema":"drivelab.run/1","run_id":"r1","status":"failed",
    "added_later":{"x":1},
    "tests":[{"name":"t","status":"skipped"}]})");
  const RunRecord r = run_record_from_json(j);
  EXPECT_EQ(r.run_id, "r1");
  EXPECT_EQ(r.status, Status::failed);
  EXPECT_EQ(r.seed, 0u);
  ASSERT_EQ(r.tests.size(), 1u);
  EXPECT_EQ(r.tests[0].status, Status::skipped);
  EXPECT_TRUE(r.tests[0].metrics.empty());
  EXPECT_TRUE(r.tests[0].details.is_object());
}

TEST(Record, FindMetric) {
  const TestRecord t = sample_test("oltp");
  ASSERT_NE(t.find_metric("lat_p99_ms"), nullptr);
  EXPECT_EQ(t.find_metric("lat_p99_ms")->value, 20.3);
  EXPECT_EQ(t.find_metric("nope"), nullptr);
}

TEST(RecordFile, WriteThenReadIsExactAndLeavesNoTemporaryFile) {
  TempDir dir;
  const auto path = dir / "run.json";
  write_record(path, sample_run());
  EXPECT_EQ(to_json(read_record(path)), to_json(sample_run()));
  // Rewrite in place (the runner does it after every interval).
  RunRecord r = sample_run();
  r.status = Status::failed;
  r.reason = "disk full";
  write_record(path, r);
  EXPECT_EQ(read_record(path).reason, "disk full");
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 1u);
  // Pretty, two-space indent, trailing newline.
  std::ifstream in(path);
  std::ostringstream whole;  // not istreambuf_iterator: GCC 14 -Wnull-dereference in libstdc++
  whole << in.rdbuf();
  const std::string text = whole.str();
  EXPECT_EQ(text.rfind("{\n  \"schema\": \"drivelab.run/1\",\n  \"run_id\"", 0), 0u);
  EXPECT_EQ(text.back(), '\n');
}

TEST(RecordFile, InvalidUtf8IsReplacedNotFatal) {
  TempDir dir;
  RunRecord r = sample_run();
  r.target["model"] = std::string("SSD \xff\xfe model");
  r.warnings.push_back(std::string("bad \xc3"));
  write_record(dir / "run.json", r);
  const RunRecord back = read_record(dir / "run.json");
  EXPECT_EQ(back.warnings.back(), "bad \xef\xbf\xbd");  // U+FFFD
}

TEST(RecordFile, ErrorsNameTheFile) {
  TempDir dir;
  try {
    read_record(dir / "missing.json");
    FAIL();
  } catch (const EnvironmentError& e) {
    EXPECT_NE(std::string(e.what()).find("missing.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("No such file"), std::string::npos) << e.what();
  }
  std::ofstream(dir / "garbage.json") << "{\"schema\": \"drivelab.run/1\", ";
  try {
    read_record(dir / "garbage.json");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("garbage.json': not valid JSON"), std::string::npos) << e.what();
  }
  std::ofstream(dir / "future.json") << R"({"schema": "drivelab.run/7", "tests": []})";
  try {
    read_record(dir / "future.json");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "result record '" + (dir / "future.json").string() +
                                         "': unsupported result schema 'drivelab.run/7' (this "
                                         "drivelab reads drivelab.run/1)");
  }
  EXPECT_THROW(write_record(dir / "no-such-dir" / "run.json", sample_run()), EnvironmentError);
}

}  // namespace
}  // namespace drivelab::results
