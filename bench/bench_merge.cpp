// Micro-benchmarks of the multi-host merge (issue 16, results/merge.hpp): the CPU that rank 0
// spends merging four hosts' records, per interval of the merged test, and the whole online path
// of rank 0 (every rank's record as JSON text, parsed, read back and merged).
// bench/multihost.sh runs it; alone (a Release build for figures worth quoting):
//   bench_merge --benchmark_counters_tabular=true
//
// The records are those of one 4-host io test (the shape emulators/src/io_emulator.cpp writes):
// a test histogram "latency" of ~10^5 samples, headline latency metrics with `of` as
// runner::record_latency sets them, rate / count / per-host-only metrics, and K intervals, each
// with its own "latency" histogram and the values iops, mb_s, lat_avg_us, lat_p99_us, ios.
// Counter "per_interval": seconds of CPU per interval of the merged test (the time of one
// iteration / K).
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

#include "drivelab/core/histogram.hpp"
#include "drivelab/results/merge.hpp"
#include "drivelab/results/record.hpp"

namespace {

using drivelab::LatencyHistogram;
using namespace drivelab::results;

constexpr int kRanks = 4;
constexpr int kTestSamples = 100'000;  // per host, over the whole measured phase

/// `n` completion latencies of a loaded NVMe SSD doing 4 KiB random reads at a queue depth of
/// 32: most near 80 us (lognormal, sigma 0.35), 4% slowed by garbage collection (~400 us), 0.1% a
/// tail of 2-20 ms. Each host a little different (`rank`), so the merged percentiles move.
LatencyHistogram ssd_latencies(int rank, int k, int n) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(7919 * rank + k));
  std::lognormal_distribution<double> body(std::log(80'000.0 + 5'000.0 * rank), 0.35);
  std::lognormal_distribution<double> gc(std::log(400'000.0), 0.5);
  std::uniform_real_distribution<double> tail(2e6, 2e7);
  std::uniform_real_distribution<double> pick(0, 1);
  LatencyHistogram h;
  for (int i = 0; i < n; ++i) {
    const double p = pick(rng);
    h.record(static_cast<std::int64_t>(p < 0.001 ? tail(rng) : p < 0.041 ? gc(rng) : body(rng)));
  }
  return h;
}

/// A latency metric with `of`, as runner::record_latency writes it (figure of the test's "latency").
Metric latency_metric(const LatencyHistogram& h, const char* name, const char* figure) {
  return Metric{name, *histogram_figure(h, figure, "us"), "us", "", MetricSource{"latency", figure}};
}

/// Rank `rank` of a 4-host run: one io test of `intervals` intervals of 10 s.
RunRecord rank_record(int rank, int intervals) {
  RunRecord r;
  r.run_id = "20261202T160000Z-abc123-r" + std::to_string(rank);
  r.tool = Json{{"name", "drivelab"}, {"version", "0.1.0"}};
  r.host = Json{{"hostname", "host" + std::to_string(rank)}, {"cpu_cores", 16}};
  r.target = Json{{"kind", "directory"}, {"path", "/mnt/drive/drivelab"}, {"filesystem", "ext4"}};
  r.protocol = "quick";
  r.seed = 42;
  r.started_at = "2026-12-02T16:00:00.000Z";
  r.finished_at = "2026-12-02T16:25:00.000Z";
  r.status = Status::complete;
  Json names = Json::array();
  for (int k = 0; k < kRanks; ++k) names.push_back("host" + std::to_string(k));
  r.cohort = Json{{"job_id", "20261202T160000Z-abc123"},
                  {"rank", rank},
                  {"size", kRanks},
                  {"hosts", names},
                  {"clock_offset_ns", rank * 150'000},
                  {"clock_offset_uncertainty_ns", 40'000}};
  TestRecord t;
  t.name = "4k-random-read";
  t.kind = "io";
  t.status = Status::complete;
  t.warmup_s = 5;
  t.measured_s = 10.0 * intervals;
  t.barriers = Json{{"prepare", 1'764'691'200'000'000'000 + rank * 200'000},
                    {"warmup", 1'764'691'210'000'000'000 + rank * 200'000},
                    {"run", 1'764'691'215'000'000'000 + rank * 200'000}};
  LatencyHistogram total;
  const int per_interval = kTestSamples / intervals;
  for (int k = 0; k < intervals; ++k) {
    LatencyHistogram h = ssd_latencies(rank, k, per_interval);
    total.merge(h);
    const double ios = static_cast<double>(h.count());
    Interval iv;
    iv.t_s = 10.0 * (k + 1);
    iv.duration_s = 10;
    iv.values = {{"iops", ios / 10},
                 {"mb_s", ios * 4096 / 1e6 / 10},
                 {"lat_avg_us", h.mean() / 1e3},
                 {"lat_p99_us", static_cast<double>(h.percentile(99)) / 1e3},
                 {"ios", ios}};
    iv.histograms.emplace("latency", std::move(h));
    t.intervals.push_back(std::move(iv));
  }
  const double ios = static_cast<double>(total.count());
  t.metrics = {{"iops", ios / t.measured_s, "1/s", "I/Os completed per second in the measured phase"},
               {"throughput_mb_s", ios * 4096 / 1e6 / t.measured_s, "MB/s", "MB = 10^6 bytes"},
               latency_metric(total, "latency_avg_us", "avg"),
               latency_metric(total, "latency_p99_us", "p99"),
               latency_metric(total, "latency_p99_9_us", "p99.9"),
               latency_metric(total, "latency_p50_us", "p50"),
               latency_metric(total, "latency_max_us", "max"),
               {"ios", ios, "count", ""},
               {"bytes", ios * 4096, "bytes", ""},
               {"cpu_usr_pct", 12.0 + rank, "%", ""},
               {"cpu_sys_pct", 30.0 + rank, "%", ""}};
  t.histograms.emplace("latency", std::move(total));
  t.details = Json{{"engine", "io_uring"}, {"iodepth_per_job", 32}, {"jobs", 1}};
  r.tests = {std::move(t)};
  return r;
}

std::vector<MergeInput> inputs(int intervals) {
  std::vector<MergeInput> in;
  in.reserve(kRanks);
  for (int k = 0; k < kRanks; ++k) in.push_back({rank_record(k, intervals), "rank " + std::to_string(k)});
  return in;
}

/// merge_host_records of four hosts' records with K = state.range(0) intervals.
void BM_MergeHostRecords(benchmark::State& state) {
  const int intervals = static_cast<int>(state.range(0));
  const std::vector<MergeInput> in = inputs(intervals);
  for (auto _ : state) {
    RunRecord merged = merge_host_records(in);
    benchmark::DoNotOptimize(merged);
  }
  state.counters["per_interval"] =
      benchmark::Counter(intervals, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_MergeHostRecords)->Arg(1)->Arg(12)->Arg(120)->Unit(benchmark::kMicrosecond);

/// What rank 0 does at the end of a run (runner/src/run.cpp): each rank's final record as the
/// JSON text it wrote (to_json + dump), parsed, read back (run_record_from_json) and merged.
void BM_OnlineMerge(benchmark::State& state) {
  const int intervals = static_cast<int>(state.range(0));
  const std::vector<MergeInput> in = inputs(intervals);
  std::size_t bytes = 0;
  for (auto _ : state) {
    std::vector<MergeInput> parsed;
    bytes = 0;
    for (const MergeInput& m : in) {
      const std::string text = to_json(m.record).dump();
      bytes += text.size();
      parsed.push_back({run_record_from_json(Json::parse(text)), m.source});
    }
    RunRecord merged = merge_host_records(parsed);
    benchmark::DoNotOptimize(merged);
  }
  state.counters["per_interval"] =
      benchmark::Counter(intervals, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["record_bytes"] = static_cast<double>(bytes) / kRanks;  // one rank's record
}
BENCHMARK(BM_OnlineMerge)->Arg(12)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
