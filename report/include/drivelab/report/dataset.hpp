#pragma once
/// \file dataset.hpp
/// What the reporter reads: drivelab result records (`drivelab.run/1`, docs/results.md), fio JSON
/// (`--output-format=json` and `json+`), sysbench 1.0 text output and the published-results CSV
/// (../shared/data/published_results.csv). Every input becomes Results: one test on one drive
/// from one source (one repetition). Model and sources of every rule: docs/reporter.md.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "drivelab/results/record.hpp"
#include "drivelab/results/summary.hpp"

namespace drivelab::report {

/// Which way a metric is better (docs/reporter.md). One of drivelab's metrics has the direction
/// its catalogue declaration gives (results/catalogue.hpp MetricDef::better; none -> unranked)
/// when the unit is the declared one. A metric the catalogue does not know (fio and sysbench
/// imports, published figures) or in another unit is ranked by its unit alone
/// (better_for_unit): rates (`1/s`, `1/min`, `MB/s`, `MiB/s`) are better higher; times (`s`,
/// `ms`, `us`, `ns`) lower; everything else (counts, bytes, %, ratios) is shown but not ranked.
enum class Better { higher, lower, unranked };
Better better_for(std::string_view metric, std::string_view unit) noexcept;
Better better_for_unit(std::string_view unit) noexcept;
std::string_view to_string(Better b) noexcept;

/// Where a result came from.
enum class Origin { measured, published, fio, sysbench };
std::string_view to_string(Origin o) noexcept;

/// One point of a latency-vs-rate curve (vdbench-style curve tests: IOPS; tpcc `rate: curve`:
/// TPS, its latency converted to µs; a published peak is one point).
struct CurvePoint {
  double iops = 0;  ///< the achieved rate (Result::curve_rate_word says of what)
  double latency_avg_us = 0;
  double latency_p99_us = 0;  ///< 0: not recorded (records before issue 32, published peaks)
};

/// A sizing answer of a curve (details `slo`, runner/curve.hpp): the highest rate whose
/// latency figure stays within a bound.
struct SizingAnswer {
  std::string metric;  ///< the headline metric it gave: max_iops_under_p99, max_tps_under_slo
  std::string figure;  ///< "p99 latency", "New-Order p99"
  double bound_ms = 0;
  double rate = 0;      ///< the answer (0: none)
  std::string outcome;  ///< interpolated | first_point_exceeds | bound_not_reached | no_points |
                        ///< interrupted_lower_bound (runner/curve.hpp SloOutcome)
};

/// An I/O workload as a configuration: what a corner of the lab's curve tests, a fio spot check,
/// or a measured `io`/`vdbench` test with one workload ran.
struct IoWorkload {
  std::uint64_t xfersize_bytes = 0;  ///< transfer size, bytes
  double rdpct = 0;                  ///< % reads (vdbench rdpct; io: 100 for read/randread, 0 for write/randwrite)
  double seekpct = 0;                ///< % random (vdbench seekpct; io: 100 for rand*, 0 sequential)
  std::uint32_t outstanding = 0;     ///< I/Os in flight: vdbench threads; io jobs x iodepth (psync: jobs)
};
/// "4 KiB random, 100% reads, 128 outstanding"
std::string to_string(const IoWorkload& w);

/// The workload a published row measured, as its review ran it: the map from the published CSV's
/// test names (per source review: the reviews ran some corners at different depths) to the lab's
/// configurations. Every entry and the evidence for it (the reviews' own parameter lists, the
/// reviews named in docs/protocol.md §1, checked with Little's law on the published peaks):
/// docs/reporter.md "Published configurations".
struct PublishedConfiguration {
  std::string test;                       ///< the CSV's test name (test key, without `_<N>vms`)
  std::vector<std::string_view> sources;  ///< the CSV `source` values (seed files) it describes
  std::string workload;                   ///< what was measured, for the report
  std::optional<IoWorkload> io;           ///< set when a measured io/vdbench test can be the same workload
  /// For non-I/O tests a measured test can reproduce (kind + configuration from its record).
  bool (*matches)(std::string_view kind, const results::Json& config) = nullptr;
};
/// The configuration behind published test `test` from `source` (the CSV's `source` column);
/// nullptr when the map does not know it (a CSV of one's own): such a row is never ranked
/// against a measured test.
const PublishedConfiguration* published_configuration(std::string_view test, std::string_view source);
/// The I/O workload of a measured test from its kind and effective configuration (the record's
/// `config`): `io` (rw, xfersize, iodepth x jobs) and `vdbench` with exactly one workload of one
/// transfer size; nullopt for anything else.
std::optional<IoWorkload> measured_io_workload(std::string_view kind, const results::Json& config);
/// Whether a measured test of `kind` with `config` ran the published configuration: the same
/// transfer size, read %, seek % and outstanding I/Os (or the entry's own `matches`).
bool measures(const PublishedConfiguration& published, std::string_view kind, const results::Json& config);
/// "io: 4 KiB random, 100% reads, 32 outstanding"; "vdbench: a mix of 4 workloads, 16 threads";
/// "tpcc: another configuration" for other kinds.
std::string describe_workload(std::string_view kind, const results::Json& config);

/// One host of a multi-host result: its own figures for the same test, from the merged record's
/// `hosts[]` (the merged record of docs/results.md; docs/reporter.md "Multi-host records"). Shown
/// as a row under its system's row, never ranked.
struct HostResult {
  std::string name;  ///< host name (`hosts[].name`)
  int rank = 0;      ///< MPI rank (`hosts[].rank`)
  /// The host's status for this test (`hosts[].tests[].status`); the host's own status when it has
  /// no such test (`missing`: no record or journal of that rank reached the merge).
  std::string status;
  std::string reason;
  /// `hosts[].tests[].metrics` ({name: value}): each gets the unit of the merged test's metric of
  /// the same name (headline or group), "" when the merged test has none (a per-host-only metric).
  std::vector<results::Metric> metrics;
  std::vector<results::Interval> intervals;  ///< `hosts[].tests[].intervals` (values only, no histograms)

  const results::Metric* find_metric(std::string_view metric_name) const noexcept;
};

/// The metric named `metric_name` in `metrics`; nullptr if none (the one lookup of the
/// reporter's metric lists: Result, HostResult, lab conventions).
const results::Metric* find_metric(const std::vector<results::Metric>& metrics, std::string_view metric_name) noexcept;

/// The metric group of a merged multi-host test that holds the review labs' conventions (sum of
/// the per-host rates, mean of the per-host averages and percentiles): labelled, never a headline.
inline constexpr std::string_view kLabConventionsGroup = "lab_conventions";

/// Test key of a result that is the sum of `hosts` hosts or VMs: `key` for one host,
/// `key_<N>vms` for more (the published CSV's `vms` convention), so an N-host result is only
/// ever ranked against N-host results.
std::string hosts_test_key(const std::string& key, unsigned hosts);

/// One test on one drive from one source.
struct Result {
  std::string drive;  ///< display name: label, or target model + serial, or device/filesystem
  std::string test;   ///< test key for grouping: lower case, '-' and ' ' become '_'
  std::string kind;   ///< emulator kind (`io`, `tpcc`, `vdbench`, ...), `fio`, `sysbench`, `published`
  Origin origin = Origin::measured;
  std::string status = "complete";       ///< the test's status (docs/results.md); `running` is read as `interrupted`
  std::string reason;                    ///< why not complete
  std::string source;                    ///< input file as given (CSV: file:line)
  std::string run_id;                    ///< drivelab run id; empty for other sources
  std::vector<results::Metric> metrics;  ///< units as in the record (fio/published mapped)
  std::vector<results::Interval> intervals;  ///< per-interval time series (may be empty)
  std::vector<CurvePoint> curve;             ///< curve points in run order (may be empty)
  std::string curve_rate_word = "IOPS";      ///< what a curve point's rate counts: IOPS or TPS
  std::vector<SizingAnswer> sizing;          ///< the curve's sizing answers (may be empty)
  /// Published rows: the configuration they measured (nullptr: not in the map).
  const PublishedConfiguration* published = nullptr;
  /// Published rows shown apart: not the configuration of the measured test of their name
  /// (build_report sets it; the writers show them in a reference block "other configuration").
  bool other_configuration = false;
  /// Hosts (or VMs) the result is of: a merged record's `hosts[]` count, a published row's `vms`;
  /// 1 for a single-host record, an import or a published row with `vms` 1 or empty.
  unsigned hosts = 1;
  /// A merged multi-host record: one entry per rank, by rank (empty for everything else).
  std::vector<HostResult> per_host;
  /// A merged multi-host record's group `lab_conventions` (kLabConventionsGroup): shown in
  /// columns labelled as the labs' convention, never ranked, never a headline.
  std::vector<results::Metric> lab_conventions;

  /// The drive health the runner read before and after the test (details.health; drive_health()),
  /// shown in the test's device table: never ranked.
  std::vector<results::Metric> health;
  /// The checks that the test's number is physical that warned or failed (details.telemetry.checks;
  /// docs/telemetry.md "Is the number physical?"), shown beside the device table.
  std::vector<results::CheckSeen> checks;

  const results::Metric* find_metric(std::string_view name) const noexcept;
  bool partial() const noexcept { return status != "complete"; }
};

/// One workload seen under a test key: a measured test of the same name but another kind or
/// another configuration is another workload, never a repetition of the first (docs/reporter.md).
struct TestVariant {
  std::string key;       ///< test_key of the test's name
  std::string kind;      ///< emulator kind
  results::Json config;  ///< the test's configuration without keep_* / reuse (what the workload is)
  std::string source;    ///< where it was first seen
  std::string as;        ///< the test key its results get: `key`, `key (kind)` or `key (config N)`
};

struct Dataset {
  std::vector<Result> results;
  /// Workloads by test key, in input order (measured drivelab records only).
  std::vector<TestVariant> variants;
  /// Input-level notes shown in the report: interrupted runs, skipped tests, recovered journals.
  std::vector<std::string> notes;
};

/// Up to three top-level keys of two test configurations whose values differ, "KEY A vs B" each
/// ("rw \"randwrite\" vs \"randread\", 2 more"); "" when they are equal (or not both objects).
std::string config_difference(const results::Json& a, const results::Json& b);

/// Test key: lower case, '-' and ' ' become '_' ("4k-random-read" -> "4k_random_read"), so
/// drivelab test names meet the published CSV's names.
std::string test_key(std::string_view name);

/// A test's drive health as device-table figures (docs/reporter.md "Device columns"), over the
/// drives read (a dm or md device over several): `drive_temperature_before_c`,
/// `drive_temperature_after_c`, `drive_temperature_max_c` (°C, the hottest drive),
/// `drive_warning_temp_c` (WCTEMP, the lowest), `drive_tmt_transitions` and `drive_tmt_seconds`
/// (thermal management during the test, summed), `drive_media_errors` (new during the test,
/// summed), `drive_percentage_used` (%, after the test, the highest). A figure no drive reported
/// is absent; a test without health readings has none.
std::vector<results::Metric> drive_health(const results::TestRecord& t);

/// Display name of the drive behind a record's `target` object: "MODEL (SN SERIAL)", "MODEL",
/// "disk SERIAL" (virtio disks have a serial but no model), else "<block_device|mount_source>
/// (<filesystem>)", else the filesystem or "unknown target".
std::string drive_name(const results::Json& target);

/// Adds every test of a drivelab record. `label` (if not empty) replaces the drive name.
/// Tests with status `skipped` add no result, only a note. A run that is not complete adds a
/// note; its complete tests stay complete (each test carries its own status). A test
/// still `running` (a provisional record of a killed or still-going run) is reported as
/// `interrupted`, never as running.
///
/// `hosts` is the merged multi-host record's `hosts` array (null or empty for a single-host
/// record). When it has N entries, the record is one system: drive "N hosts" ("LABEL (N hosts)"
/// with a label), test keys hosts_test_key(name, N), Result::per_host from `hosts[]` (the test of
/// the same name; a host without it gets the host's status and reason), Result::lab_conventions
/// from the group `lab_conventions`. Throws ConfigError naming the key path
/// (`hosts[2].tests[0].metrics.tps`) on a malformed entry. Per-rank records of its job read
/// before (run ids `<job_id>-r<k>`, where job_id is the merged record's run_id) are removed, with
/// a note: their figures are the host rows.
///
/// `cohort` is the record's `cohort` object (null for a single-host run). A rank's own record
/// (`cohort.job_id` set, its run_id `<job_id>-r<k>`, no `hosts`) is one host's result, reported as
/// a single host with a note naming the job; it is left out, with a note, when the job's merged
/// record was read before.
void add_record(Dataset& data, const results::RunRecord& record, const std::string& source, const std::string& label,
                const results::Json& hosts = nullptr, const results::Json& cohort = nullptr);
/// Adds one result per fio job (`jobs[]`, both json and json+): metrics `iops` (fio's `iops`),
/// `throughput_mb_s` (fio's `bw` KiB/s x 0.001024), `latency_avg_us` (`lat_ns.mean` / 1000),
/// `latency_p99_us` (`lat_ns.percentile["99.000000"]`, else `clat_ns`'s, / 1000; fio reports
/// clat percentiles unless lat_percentiles=1). A job with reads and writes gets `read_`/`write_`
/// prefixes. Throws ConfigError naming the source if it is not fio JSON.
void add_fio_json(Dataset& data, const results::Json& fio, const std::string& source, const std::string& label);
/// Adds sysbench 1.0 text output as test `sysbench_oltp` (or `sysbench_<test>` for non-OLTP
/// output): `tps` (transactions per sec.), `qps`, `latency_avg_ms`, `latency_max_ms`,
/// `latency_pNN_ms` (the "NNth percentile" line), and the `--report-interval` lines as intervals.
/// Throws ConfigError if no sysbench statistics are found.
void add_sysbench_text(Dataset& data, const std::string& text, const std::string& source, const std::string& label);
/// Adds the published-results CSV (header `drive,capacity,source,test,metric,value,unit,vms,note`).
/// Metrics are renamed to drivelab's names (peak_iops -> iops, latency_avg_at_peak ->
/// latency_avg_us, tps -> tps, latency_avg -> latency_avg_ms, latency_p99 -> latency_p99_ms,
/// throughput -> throughput_mb_s); a peak point also becomes a one-point curve. Drive name
/// "<drive> <capacity>". A row with `vms` N > 1 is an N-VM sum: Result::hosts N, test key
/// hosts_test_key(test, N). Throws ConfigError naming file:line on a malformed row (a `vms` that
/// is not empty or a whole number >= 1 included).
void add_published_csv(Dataset& data, const std::string& text, const std::string& source);

/// Adds a drivelab record given as its JSON (a file's content, or a record kept whole in the
/// results store, results/store.hpp): run_record_from_json, then add_record with the JSON's own
/// `hosts` and `cohort` keys. Throws ConfigError "SOURCE: <the reader's message>" (an unknown
/// schema: "SOURCE: unsupported result schema 'X' (this drivelab reads drivelab.run/1)").
void add_record_json(Dataset& data, const results::Json& record, const std::string& source, const std::string& label);

/// Reads a file and dispatches on its content: JSON with `schema` -> drivelab record
/// (add_record_json; an unknown
/// schema is a ConfigError: "FILE: unsupported result schema 'X' (this drivelab reads
/// drivelab.run/1)"); JSON with `fio version` -> fio; text with "SQL statistics:" or "General
/// statistics:" -> sysbench; a CSV with the published header -> published. Throws ConfigError for
/// anything else, EnvironmentError if unreadable.
void add_file(Dataset& data, const std::filesystem::path& path, const std::string& label);

}  // namespace drivelab::report
