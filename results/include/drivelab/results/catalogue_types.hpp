#pragma once
/// \file catalogue_types.hpp
/// The metric catalogue's types (Unit, MetricKind, Direction, MetricDef, FigureFamily, ...) and
/// its lookups; the declarations and the rules for adding one are in catalogue.hpp (issue 31).
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace drivelab::results {

/// A metric's unit. unit_text() prints the record's unit string (record.hpp Metric::unit); MB =
/// 10^6 bytes, MiB = 2^20 bytes.
enum class Unit {
  per_s,      ///< "1/s": a rate (IOPS, TPS, QPS, frames/s)
  per_min,    ///< "1/min": tpmC, NOPM
  per_cpu_s,  ///< "1/cpu-s": operations per CPU second
  mb_s,       ///< "MB/s"
  mib,        ///< "MiB"
  bytes,      ///< "bytes"
  pages,      ///< "pages": 4 KiB pages of /proc/vmstat
  count,      ///< "count"
  ratio,      ///< "ratio": a dimensionless quotient
  pct,        ///< "%"
  boolean,    ///< "bool": 1 or 0
  s,          ///< "s"
  ms,         ///< "ms"
  us,         ///< "us"
  ns,         ///< "ns"
  celsius,    ///< "°C": a temperature (a drive's, from the kernel's hwmon sensor)
  none,       ///< "": a plain number (a scale factor)
};
std::string_view unit_text(Unit u) noexcept;
/// The unit whose unit_text is `text`; nullopt for another text.
std::optional<Unit> unit_from_text(std::string_view text) noexcept;

/// What a metric measures.
enum class MetricKind {
  operations,  ///< operations done or their rate: I/Os, transactions, queries, frames
  throughput,  ///< bytes moved or their rate
  latency,     ///< time of one operation (a figure of a latency histogram)
  lateness,    ///< how late an operation was issued after its intended start (open loop)
  errors,      ///< failures, retries, rollbacks, reconnects
  count,       ///< how many of something else (queue length, backlog, passes)
  cpu,         ///< CPU time or utilisation
  memory,      ///< memory of the drivelab process
  device,      ///< what the kernel or the database server counted (paging, device bytes, buffers)
  health,      ///< whether the test held its conditions (steady state, complete, efficiency)
  time,        ///< elapsed time of a phase or test
  setting,     ///< what the test asked for (requested rate, threads, scale, curve point, model)
  progress,    ///< where a running test is (pass, phase, done %)
};
std::string_view to_string(MetricKind k) noexcept;

/// Which way a metric is better (the reporter ranks by it); none: not a figure of merit.
enum class Direction { higher, lower, none };
std::string_view to_string(Direction d) noexcept;

/// Where a metric is recorded (bits of MetricDef::where).
enum Where : std::uint8_t {
  kHeadline = 1,  ///< TestRecord::metrics
  kGroup = 2,     ///< a MetricGroup's metrics (per transaction type, per curve point, ...)
  kInterval = 4,  ///< Interval::values
};

/// What readers do with a metric (bits of MetricDef::traits).
enum Trait : std::uint8_t {
  /// Interval value: the test's operations (drivelab_operations_total: a count as is, a rate x
  /// the interval's length; a count wins over rates, rates add up).
  kOperationsFeed = 1,
  /// Interval value in MB/s: the test's bytes per second (drivelab_interval_bytes_per_second; the
  /// flagged values add up).
  kBytesFeed = 2,
  /// Interval value: failed operations (drivelab_errors_total: a count as is, a rate x length).
  kErrorsFeed = 4,
  /// Interval value of one host that a merge of hosts adds up (a rate or count of that host).
  kSummedOverHosts = 8,
  /// Interval value drawn in the reporter's interval chart.
  kCharted = 16,
  /// Recorded by the runner's device and host telemetry for every test (telemetry/
  /// test_telemetry.hpp, docs/telemetry.md): the console summary shows it on the test's device
  /// line, not among its headline metrics, and the live interval line leaves it out.
  kDeviceLine = 32,
};

/// How a merge of hosts' records (merge.hpp) combines a headline or group metric that every host
/// has with the same unit. by_unit: recomputed from the merged histogram when it has `of`, else
/// added for a rate, count or bytes, the longest for seconds, per host only otherwise.
enum class HostMerge {
  by_unit,
  maximum,   ///< a maximum of the whole test: the largest host's (a sum of maxima is no one's)
  per_host,  ///< a peak across curve points or a process's own figure: kept per host only
  sum,       ///< added whatever the unit (CPU seconds)
  /// A counter of the whole database server (pg_stat_database, SHOW GLOBAL STATUS): by unit
  /// when each host drove its own server; when the hosts shared one (tpcc `shared_database`:
  /// the test's details.shared_database on every host), the lowest rank's, once: every rank read
  /// the same server's counters over the same measured phase, so a sum counts it N times.
  server,
};

/// One metric's declaration.
struct MetricDef {
  std::string_view name;
  Unit unit = Unit::none;
  MetricKind kind = MetricKind::count;
  Direction better = Direction::none;
  std::string_view description;  ///< what it measures (the record's description when none is given)
  std::string_view recorded_by;  ///< the emulator kinds that record it, space-separated ("io vdbench")
  std::uint8_t where = kHeadline;
  /// The word people read for a rate: the summary's "12.3K IOPS", "512 TPS", "40,497 tpmC"; for a
  /// plain number (Unit::none), what it counts: the reporter's column header "device_aqu_sz (requests)".
  std::string_view word{};
  std::uint8_t traits = 0;
  HostMerge merge = HostMerge::by_unit;
  /// A second unit the value may have (ss_value: "%" for a percent criterion, "" otherwise).
  std::optional<Unit> other_unit = std::nullopt;
  /// Figure metrics only (FigureFamily): the figure as MetricSource::figure writes it ("avg",
  /// "p99.9") and the family's prefix.
  std::string_view figure{};
  std::string_view family{};
  /// Interval value that is a figure of the interval's "latency" histogram (record.hpp Interval):
  /// a merge recomputes it from the merged histogram; Prometheus reads the histogram instead.
  bool of_interval_latency = false;

  bool recorded_as(Where w) const noexcept { return (where & w) != 0; }
  bool has(Trait t) const noexcept { return (traits & t) != 0; }
  /// The unit's text (unit_text(unit)).
  std::string_view unit_string() const noexcept { return unit_text(unit); }
};

/// A rate and the metrics that hold the bounds of its within-run confidence interval
/// (catalogue::kRateIntervals).
struct RateInterval {
  const MetricDef* rate;
  const MetricDef* low;
  const MetricDef* high;
};

/// The figures of one latency histogram written as metrics `<prefix>_<figure>_<unit>`
/// (runner/latency_metrics.hpp): figure `avg`, `min`, `max`, `sum`, `p50`, `p90`, `p95`, `p99`,
/// `p999` (99.9th) or `p99_9` (TPC-C's name of the 99.9th); unit `us` or `ms`. Every member is a
/// MetricDef of the catalogue (find_metric_def("latency_p99_us")); docs/results.md has one row
/// per family, `latency_<figure>_<unit>`.
struct FigureFamily {
  std::string_view prefix;
  MetricKind kind = MetricKind::latency;
  std::string_view description;
  std::string_view recorded_by;
  std::uint8_t where = kHeadline;
  /// Members recorded in intervals are figures of the interval's "latency" histogram.
  bool interval_latency = false;
  /// "latency_<figure>_<unit>": how the page writes the family.
  std::string pattern() const { return std::string(prefix) + "_<figure>_<unit>"; }
};

/// The member of `family` for figure name `figure_name` ("p99", "p999", "p99_9", "avg") in `unit`
/// (us or ms). Throws InternalError for a figure or unit the family has not.
const MetricDef& figure_def(const FigureFamily& family, std::string_view figure_name, Unit unit);

/// The declaration named `name` (a family member, or an alias of kAliases: its canonical
/// declaration); nullptr for a name that is not ours.
const MetricDef* find_metric_def(std::string_view name) noexcept;
/// Every declaration of kAll (not the family members), in catalogue order.
std::span<const MetricDef* const> metric_defs() noexcept;
/// Every figure family.
std::span<const FigureFamily* const> figure_families() noexcept;

/// A figure metric's percentile (figure "p99.9" -> 99.9); nullopt for avg, min, max, sum or a
/// metric that is no figure.
std::optional<double> figure_percentile(const MetricDef& def) noexcept;
/// Seconds per unit of a time unit (ms -> 1e-3); 0 for a unit that is no time.
double seconds_per(Unit u) noexcept;

/// A name no longer written, read as its replacement.
struct MetricAlias {
  std::string_view old_name;
  std::string_view name;
};
std::span<const MetricAlias> metric_aliases() noexcept;

/// An Interval::values entry: {def.name, value}.
inline std::pair<std::string, double> interval_value(const MetricDef& def, double value) {
  return {std::string(def.name), value};
}

/// The value named by `def` (its name or an alias) among `values` (Interval::values); nullopt
/// when absent or not finite.
template <class Values>
std::optional<double> value_of(const Values& values, const MetricDef& def) noexcept;

}  // namespace drivelab::results
