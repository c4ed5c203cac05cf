#pragma once
// Shared fixtures of the results tests: a real temporary directory and a record that uses every
// field of the schema (so round-trip tests cover all of it).
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>

#include "temp_dir.hpp"  // tests/support

#include "drivelab/results/record.hpp"

namespace drivelab::results::testing {

using drivelab::test_support::TempDir;

inline LatencyHistogram sample_histogram(std::int64_t scale_ns, int n) {
  LatencyHistogram h;
  for (int i = 1; i <= n; ++i) h.record(scale_ns * i + (i * 7919) % 1000);
  return h;
}

inline TestRecord sample_test(const std::string& name) {
  TestRecord t;
  t.name = name;
  t.kind = "tpcc";
  t.status = Status::complete;
  t.config = Json{{"warehouses", 10}, {"terminals_per_warehouse", 10}, {"backend", "sqlite"}};
  t.started_at = "2026-11-29T19:53:44.123Z";
  t.finished_at = "2026-11-29T19:58:44.456Z";
  t.warmup_s = 60;
  t.measured_s = 240.25;
  t.metrics = {{"tps", 512.345, "1/s", "committed transactions per second"},
               {"lat_avg_ms", 8.123456789, "ms", "mean response time"},
               {"lat_p99_ms", 20.3, "ms", ""},
               {"tpmc", 1.0 / 3.0, "1/min", "New-Order per minute"},
               {"unknown", std::numeric_limits<double>::quiet_NaN(), "count", "not measured"}};
  t.groups = {{"new_order", {{"count", 1234, "count", ""}, {"lat_avg_ms", 9.5, "ms", "mean"}}},
              {"payment", {{"count", 1180, "count", ""}}}};
  t.histograms.emplace("response_time", sample_histogram(1'000'000, 300));
  t.histograms.emplace("service_time", sample_histogram(1'000, 400));
  t.histograms.emplace("empty", LatencyHistogram{});
  t.intervals = {{5, 5, {{"tps", 500.5}, {"lat_avg_ms", 8.25}}},
                 {10, 5, {{"tps", 524.125}, {"lat_avg_ms", std::numeric_limits<double>::infinity()}}},
                 {12.5, 2.5, {{"tps", 0.1}, {"lat_avg_ms", 1e-300}}}};
  t.checks = {{"consistency_1", true, "W_YTD = sum(D_YTD)"}, {"consistency_2", false, "1 district off"}};
  t.warnings = {"buffer pool larger than the database"};
  t.details = Json{{"rollbacks", 12}, {"nested", {{"a", Json::array({1, 2.5, "x"})}}}};
  return t;
}

inline RunRecord sample_run() {
  RunRecord r;
  r.run_id = "20261129T195344Z-1a2b3c";
  r.tool = Json{{"name", "drivelab"}, {"version", "0.1.0"}};
  r.host = Json{{"hostname", "lab1"}, {"cpu_cores", 16}};
  r.target = Json{{"path", "/mnt/dut"},
                  {"kind", "directory"},
                  {"filesystem", "ext4"},
                  {"block_device", "nvme0n1"},
                  {"model", nullptr}};
  r.protocol = "review-quick";
  r.protocol_file = "config/protocols/review-quick.yaml";
  r.command_line = {"drivelab", "run", "--target", "/mnt/dut"};
  r.config = Json{{"tests", Json::array({Json{{"name", "oltp"}}})}};
  r.seed = 0xFEDCBA9876543210ull;  // above 2^63: must stay exact
  r.started_at = "2026-11-29T19:53:44.000Z";
  r.finished_at = "2026-11-29T20:03:44.000Z";
  r.status = Status::complete;
  r.warnings = {"debug build: results are not representative"};
  r.tests = {sample_test("oltp"), sample_test("oltp-2")};
  r.tests[1].status = Status::interrupted;
  r.tests[1].reason = "stopped by SIGINT";
  return r;
}

/// sample_run() as rank `rank` of a multi-host run of `size` (mh-spec, issue 16): cohort, barriers,
/// interval histograms and metric provenance set.
inline RunRecord sample_rank_run(int rank, int size) {
  RunRecord r = sample_run();
  Json hosts = Json::array();
  for (int k = 0; k < size; ++k) hosts.push_back("host" + std::to_string(k));
  r.cohort = Json{{"job_id", r.run_id},
                  {"rank", rank},
                  {"size", size},
                  {"hosts", hosts},
                  {"clock_offset_ns", rank == 0 ? 0 : -1234567 * rank},
                  {"clock_offset_uncertainty_ns", rank == 0 ? 0 : 20000}};
  r.run_id += "-r" + std::to_string(rank);
  for (TestRecord& t : r.tests) {
    t.barriers = Json{{"prepare", 1'796'000'000'000'000'000 + rank * 1000},
                      {"warmup", 1'796'000'010'000'000'000 + rank * 1000},
                      {"run", 1'796'000'070'000'000'000 + rank * 1000}};
    t.metrics[1].of = MetricSource{"response_time", "avg"};
    t.metrics[2].of = MetricSource{"response_time", "p99"};
    t.groups[0].metrics[1].of = MetricSource{"service_time", "avg"};
    for (std::size_t i = 0; i < t.intervals.size(); ++i) {
      t.intervals[i].histograms.emplace("latency", sample_histogram(1'000'000 + 1000 * rank, 50 + static_cast<int>(i)));
    }
  }
  return r;
}

}  // namespace drivelab::results::testing
