#pragma once
/// \file record.hpp
/// The result record `drivelab.run/1` (documented field by field in docs/results.md).
///
/// One RunRecord per `drivelab run`; one TestRecord per test of the protocol. Metrics carry their
/// unit both in the name (`latency_p99_ms`, `throughput_mb_s`) and in `unit`; MB = 10^6 bytes,
/// MiB = 2^20 bytes. Latency histograms are stored as their non-empty bins so records from several
/// runs or hosts can be merged exactly (core/histogram.hpp).
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "drivelab/core/histogram.hpp"
#include "drivelab/core/names.hpp"

namespace drivelab::results {

using Json = nlohmann::ordered_json;

inline constexpr std::string_view kSchema = "drivelab.run/1";

/// Status of a run or test.
///  - running:     only seen in a record read back from a journal of a live run;
///  - complete:    every phase finished;
///  - interrupted: stopped early (SIGINT/SIGTERM, or the process died: see `reason`); what was
///                 measured up to then is kept;
///  - failed:      an error ended it (`reason` says which);
///  - skipped:     not run (an earlier test failed or the run was interrupted before it).
enum class Status { running, complete, interrupted, failed, skipped };
inline constexpr EnumNames<Status, 5> kStatusNames{{{"running", Status::running},
                                                    {"complete", Status::complete},
                                                    {"interrupted", Status::interrupted},
                                                    {"failed", Status::failed},
                                                    {"skipped", Status::skipped}}};
inline std::string_view to_string(Status s) noexcept { return name_of(kStatusNames, s); }
/// Throws std::invalid_argument for an unknown word.
Status status_from_string(std::string_view s);

/// Where a metric's value comes from when it is a figure of one of the test's histograms
/// (mh-spec, issue 16): set by runner::record_latency / record_group_latency, so a merge of
/// several hosts' records recomputes the figure from the merged histogram instead of averaging.
struct MetricSource {
  std::string histogram;  ///< the name in TestRecord::histograms ("response_time.new_order")
  /// "avg", "min", "max", "sum" or "p" + the percentile as written by fmt "{:g}" ("p50", "p99.9");
  /// histogram_figure() evaluates it.
  std::string figure;
  bool operator==(const MetricSource&) const = default;
};

/// A scalar metric with its unit ("1/s", "ms", "us", "MB/s", "count", "ratio", "s", "%"): the
/// unit_text of its declaration in the metric catalogue (catalogue.hpp).
struct Metric {
  std::string name;
  double value = 0;
  std::string unit;
  std::string description;                        ///< one line: what it measures; may be empty
  std::optional<MetricSource> of = std::nullopt;  ///< provenance; written as `of` only when set
};

/// A named set of metrics, e.g. one per TPC-C transaction type ("new_order").
struct MetricGroup {
  std::string name;
  std::vector<Metric> metrics;
};

/// One reporting interval of the measured phase. `values` are ordered: the first few are what the
/// live progress line shows. Names carry units (tps, iops, mb_s, latency_avg_ms, latency_p99_ms);
/// each is declared in the metric catalogue (catalogue.hpp).
struct Interval {
  double t_s = 0;         ///< seconds since the start of the measured phase, at the interval's end
  double duration_s = 0;  ///< length of this interval (the last one may be shorter)
  std::vector<std::pair<std::string, double>> values;
  /// The interval's own latency histogram(s) (ns), written only when non-empty. "latency" is the
  /// one whose figures the latency values are (latency_avg_ms, latency_p99_us, ...: io, vdbench, tpcc's
  /// response time, sysbench, replay/vdi), so hosts' intervals merge exactly (mh-spec, issue 16).
  std::map<std::string, LatencyHistogram> histograms{};
};

/// A pass/fail verification (TPC-C consistency condition, replay count equality, ...).
struct Check {
  std::string name;
  bool passed = false;
  std::string detail;
};

struct TestRecord {
  std::string name;
  std::string kind;
  /// A repeated run only (RunRecord::repeat; 0, and not written, otherwise): which run of the
  /// test this is, 1-based. The repetitions of a test share its name and follow each other.
  int repetition = 0;
  /// A repeated run's first repetition under `repeat_between: discard-first` (written only when
  /// true): run to bring the drive to the test's state, left out of RunRecord::repetitions.
  bool discarded = false;
  /// A repeated run only (written with `repetition`): the run seed this repetition used, the
  /// run's seed + (repetition - 1); the test's own stream derives from it and the test's index as
  /// in a run that does not repeat, so `seed: <this>` without repeat reruns this repetition.
  std::uint64_t seed = 0;
  Status status = Status::running;
  std::string reason;  ///< why not complete; empty when complete
  Json config;         ///< the test's effective configuration after defaults
  std::string started_at;
  std::string finished_at;
  double warmup_s = 0;    ///< warm-up actually spent
  double measured_s = 0;  ///< measured phase actually spent (shorter when interrupted)
  /// Multi-host runs only (empty, and not written, on one host): {"prepare": ns, "warmup": ns,
  /// "run": ns}, this host's CLOCK_REALTIME (unix ns) at the release of the barrier before the phase.
  Json barriers = Json::object();
  std::vector<Metric> metrics;                         ///< headline metrics
  std::vector<MetricGroup> groups;                     ///< breakdowns (per transaction type, per operation)
  std::map<std::string, LatencyHistogram> histograms;  ///< name -> histogram (ns)
  std::vector<Interval> intervals;
  std::vector<Check> checks;
  std::vector<std::string> warnings;
  Json details = Json::object();  ///< emulator-specific extras (documented per emulator)

  const Metric* find_metric(std::string_view name) const noexcept;
};

struct RunRecord {
  std::string schema{kSchema};
  std::string run_id;    ///< "20261129T195344Z-1a2b3c" (UTC start + random suffix)
  Json tool;             ///< {name, version, git_describe, build_type, compiler, sanitizers}
  Json host;             ///< see identity.hpp
  Json target;           ///< see identity.hpp
  std::string protocol;  ///< protocol name
  std::string protocol_file;
  std::vector<std::string> command_line;
  Json config;  ///< effective protocol after defaults and --set overrides
  std::uint64_t seed = 0;
  std::string started_at;
  std::string finished_at;
  Status status = Status::running;
  std::string reason;
  std::vector<std::string> warnings;
  /// Multi-host runs (mh-spec, issue 16); null, and not written, for a single-host run. A rank's
  /// record: {"job_id", "rank", "size", "hosts": [hostname by rank], "clock_offset_ns",
  /// "clock_offset_uncertainty_ns"}; a merged record: {"job_id", "size", "ranks": [merged ranks]}.
  Json cohort;
  /// A merged record only (empty, and not written, otherwise): one object per rank 0..N-1, as
  /// merge_host_records() writes it (merge.hpp).
  Json hosts = Json::array();
  /// A repeated run only (null, and not written, when each test runs once): {"count": N,
  /// "between": "as-is" | "discard-first"} (runner/protocol.hpp `repeat:`, `repeat_between:`).
  Json repeat;
  /// A repeated run only (empty, and not written, otherwise): per test, the statistics of its
  /// counted repetitions (record_stats.hpp summarize_repetitions()).
  Json repetitions = Json::array();
  /// What the run found once, before its first test (empty, and not written, when nothing):
  /// {"health": {"available", "reason" | "drives"}, "harness_ceiling": {...}} (the runner's
  /// telemetry, telemetry/run_facts.hpp; docs/telemetry.md).
  Json details = Json::object();
  std::vector<TestRecord> tests;
};

/// The reason a live record carries: the record the runner rewrites while the run goes (runner/run.cpp) says run
/// status `interrupted` with this reason, its current test `running`, so that a process killed mid-run (SIGKILL,
/// a crash, power loss) leaves a valid record marked as unfinished. Its journal holds more (`results recover`).
inline constexpr std::string_view kLiveRecordReason = "run in progress, or the process ended before the run finished";

/// Whether `r` is a live record (above): written before its run finished, by a process that was then killed or
/// is still measuring. True when the run says `running` or kLiveRecordReason, or a test says `running`; a
/// finished, recovered (`results recover`) or merged record is never live.
bool is_live(const RunRecord& r) noexcept;

/// The intervals of all of `r`'s tests.
std::size_t interval_count(const RunRecord& r) noexcept;

/// Whether `a` holds as many tests as `b` and as many intervals in all, or more: what a record that replaces
/// another of the same run must hold (a journal cut short recovers less than its live record had written).
bool holds_at_least(const RunRecord& a, const RunRecord& b) noexcept;

/// The figure `figure` (MetricSource::figure: "avg", "min", "max", "sum", "p<q>") of `h` in the
/// latency unit `unit` ("ns", "us", "ms" or "s"); nullopt for a figure or unit it does not know.
/// The one evaluation of a figure: runner::latency_metric_value and the merge use it.
std::optional<double> histogram_figure(const LatencyHistogram& h, std::string_view figure, std::string_view unit);

/// Serialises; histograms become {count, saturated, min_ns, max_ns, mean_ns, stddev_ns, sum_ns,
/// sum_sq_ns, percentiles_ns{p50,p90,p95,p99,p99.9,max}, bins:[[lower_ns, upper_ns, count], ...]}.
/// Key order is fixed (docs/results.md). Non-finite doubles (NaN, inf) become null, so the output
/// is always valid JSON; a null number reads back as NaN.
Json to_json(const TestRecord& t);
Json to_json(const RunRecord& r);
/// Parses a record. Throws drivelab::ConfigError on a schema other than drivelab.run/1 (naming the
/// schema found) or on malformed content (the message names the key path, e.g.
/// "tests[1].metrics.tps.value: expected a number, got string"). Required keys: schema, run_id,
/// status, tests; in a test: name, status. Other keys default when absent; unknown keys are
/// ignored (later drivelab.run/1 writers may add fields). to_json(run_record_from_json(x)) == x for
/// every x written by to_json.
RunRecord run_record_from_json(const Json& j);
/// Throws ConfigError (key paths relative to the test object).
TestRecord test_record_from_json(const Json& j);

/// Pieces of the record, for the journal and for tools that merge records (reporter).
/// Interval: {t_s, duration_s, values{name: number|null}[, histograms{name: histogram}]} (values
/// keep their order; histograms only when there are some).
Json to_json(const Interval& i);
Interval interval_from_json(const Json& j);
/// Histogram as described at to_json(TestRecord). histogram_from_json rebuilds it with
/// LatencyHistogram::from_bins; percentiles, mean and stddev are recomputed and equal the written
/// ones. Throws ConfigError if `count` differs from the sum of the bin counts.
Json to_json(const LatencyHistogram& exact);
LatencyHistogram histogram_from_json(const Json& j);

/// Writes `r` as JSON to `path` atomically (temporary file in the same directory, fsync, rename),
/// so a reader never sees a half-written record: pretty with `indent` spaces (2, the default), or
/// on one line with -1 (about a third of the size: what a full results disk's reserve still
/// holds). Throws EnvironmentError on I/O failure.
void write_record(const std::filesystem::path& path, const RunRecord& r, int indent = 2);
/// Reads a record file. Throws ConfigError (bad JSON/schema) or EnvironmentError (unreadable).
RunRecord read_record(const std::filesystem::path& path);

}  // namespace drivelab::results
