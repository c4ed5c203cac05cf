#pragma once
/// \file catalogue.hpp
/// The metric catalogue: every metric drivelab records (headline, group and interval values) is
/// declared here once, with its name, unit, kind, direction and meaning (issue 31). Emulators
/// record through these declarations (`rec.metric(catalogue::iops, v)`), so no call site types a
/// metric's name or unit; the Prometheus exporter, the console summary, the merge of hosts'
/// records and the reporter learn what a metric is from its declaration, never from its name.
/// docs/results.md ("Metric catalogue") lists every declaration and tests/unit/results/
/// catalogue_test.cpp holds the page and the catalogue to each other.
///
/// Names: lower case words joined by '_', the unit last when it is not in the word ("_ms", "_us",
/// "_s", "_mb_s", "_pct", "_bytes"); latency figures are `<family>_<figure>_<unit>`
/// (FigureFamily). The one latency prefix is `latency_` (headline, group and interval values
/// alike); the interval values written as `lat_<figure>_<unit>` before issue 31 are aliases
/// (kAliases): find_metric_def() knows them, so records and journals written before read and
/// merge as before, and the Prometheus exporter serves drivelab_interval_value under both names.
///
/// Adding a metric: declare it below (and in kAll), add its row to docs/results.md's table (the
/// catalogue test prints the row it expects), then record it. The recorder refuses a name that is
/// not declared (results::TestRecorder throws InternalError), and a unit other than the declared.
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
};

/// How a merge of hosts' records (merge.hpp) combines a headline or group metric that every host
/// has with the same unit. by_unit: recomputed from the merged histogram when it has `of`, else
/// added for a rate, count or bytes, the longest for seconds, per host only otherwise.
enum class HostMerge {
  by_unit,
  maximum,   ///< a maximum of the whole test: the largest host's (a sum of maxima is no one's)
  per_host,  ///< a peak across curve points or a process's own figure: kept per host only
  sum,       ///< added whatever the unit (CPU seconds)
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
  /// The word people read for a rate: the summary's "12.3K IOPS", "512 TPS", "40,497 tpmC".
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

namespace catalogue {

// ---- figure families (latency figures: runner::record_latency) --------------------------------
inline constexpr FigureFamily latency{"latency",
                                      MetricKind::latency,
                                      "latency (io, vdbench, replay, vdi: from the intended start in open loop, else "
                                      "from submission; sysbench: event latency; tpcc: response time at the terminal, "
                                      "queue wait + service)",
                                      "io vdbench replay vdi precondition sysbench tpcc",
                                      kHeadline | kGroup | kInterval,
                                      true};
inline constexpr FigureFamily service_latency{"service_latency", MetricKind::latency,
                                              "I/O latency from submission to completion (fio: lat)",
                                              "vdbench replay vdi", kGroup};
inline constexpr FigureFamily lateness{"lateness", MetricKind::lateness,
                                       "submission minus intended start of an I/O (open loop)", "vdbench replay vdi",
                                       kHeadline | kGroup | kInterval};
inline constexpr FigureFamily queue_wait{"queue_wait", MetricKind::latency,
                                         "TPC-C: time a transaction waited for a connection of the pool", "tpcc",
                                         kHeadline | kGroup};
inline constexpr FigureFamily service_time{"service_time", MetricKind::latency,
                                           "TPC-C: time a transaction held its connection", "tpcc", kHeadline | kGroup};

// ---- operations --------------------------------------------------------------------------------
inline constexpr MetricDef iops{.name = "iops",
                                .unit = Unit::per_s,
                                .kind = MetricKind::operations,
                                .better = Direction::higher,
                                .description = "I/Os completed per second",
                                .recorded_by = "io vdbench replay vdi precondition",
                                .where = kHeadline | kGroup | kInterval,
                                .word = "IOPS",
                                .traits = kOperationsFeed | kSummedOverHosts | kCharted};
inline constexpr MetricDef ios{.name = "ios",
                               .unit = Unit::count,
                               .kind = MetricKind::operations,
                               .description = "I/Os completed",
                               .recorded_by = "io vdbench replay vdi",
                               .where = kHeadline | kGroup | kInterval,
                               .traits = kOperationsFeed | kSummedOverHosts};
inline constexpr MetricDef read_ios{.name = "read_ios",
                                    .unit = Unit::count,
                                    .kind = MetricKind::operations,
                                    .description = "read I/Os completed",
                                    .recorded_by = "vdbench replay vdi",
                                    .where = kGroup};
inline constexpr MetricDef write_ios{.name = "write_ios",
                                     .unit = Unit::count,
                                     .kind = MetricKind::operations,
                                     .description = "write I/Os completed",
                                     .recorded_by = "vdbench replay vdi",
                                     .where = kGroup};
inline constexpr MetricDef achieved_iops{.name = "achieved_iops",
                                         .unit = Unit::per_s,
                                         .kind = MetricKind::operations,
                                         .better = Direction::higher,
                                         .description = "I/Os completed per second at a curve point",
                                         .recorded_by = "vdbench replay vdi",
                                         .where = kGroup,
                                         .word = "IOPS"};
inline constexpr MetricDef peak_iops{.name = "peak_iops",
                                     .unit = Unit::per_s,
                                     .kind = MetricKind::operations,
                                     .better = Direction::higher,
                                     .description = "highest achieved IOPS of any run of the curve",
                                     .recorded_by = "vdbench replay vdi",
                                     .where = kGroup,
                                     .word = "IOPS",
                                     .merge = HostMerge::per_host};
inline constexpr MetricDef max_run_iops{.name = "max_run_iops",
                                        .unit = Unit::per_s,
                                        .kind = MetricKind::operations,
                                        .better = Direction::higher,
                                        .description = "the rate the curve points are percentages of",
                                        .recorded_by = "vdbench replay vdi",
                                        .where = kGroup,
                                        .word = "IOPS"};
// Sizing answers (runner/curve.hpp max_rate_within; issue 32): the highest rate of a curve whose
// latency figure stays within the protocol's `slo:` bound, interpolated between the two points
// that bracket the crossing; 0 when the lowest point is already beyond the bound.
inline constexpr MetricDef max_iops_under_p99{.name = "max_iops_under_p99",
                                              .unit = Unit::per_s,
                                              .kind = MetricKind::operations,
                                              .better = Direction::higher,
                                              .description =
                                                  "curve: the highest IOPS whose p99 latency stays "
                                                  "within slo.p99_ms (interpolated)",
                                              .recorded_by = "vdbench",
                                              .word = "IOPS",
                                              .merge = HostMerge::per_host};
inline constexpr MetricDef max_iops_under_mean{.name = "max_iops_under_mean",
                                               .unit = Unit::per_s,
                                               .kind = MetricKind::operations,
                                               .better = Direction::higher,
                                               .description =
                                                   "curve: the highest IOPS whose mean latency stays "
                                                   "within slo.mean_ms (interpolated)",
                                               .recorded_by = "vdbench",
                                               .word = "IOPS",
                                               .merge = HostMerge::per_host};
inline constexpr MetricDef max_tps_under_slo{.name = "max_tps_under_slo",
                                             .unit = Unit::per_s,
                                             .kind = MetricKind::operations,
                                             .better = Direction::higher,
                                             .description =
                                                 "rate: curve: the highest TPS whose latency figures "
                                                 "all stay within the slo bounds (interpolated)",
                                             .recorded_by = "tpcc",
                                             .word = "TPS",
                                             .merge = HostMerge::per_host};
inline constexpr MetricDef max_tpmc_under_slo{.name = "max_tpmc_under_slo",
                                              .unit = Unit::per_min,
                                              .kind = MetricKind::operations,
                                              .better = Direction::higher,
                                              .description =
                                                  "rate: curve: tpm_c at max_tps_under_slo "
                                                  "(interpolated the same way)",
                                              .recorded_by = "tpcc",
                                              .word = "tpmC",
                                              .merge = HostMerge::per_host};
inline constexpr MetricDef iops_per_cpu_s{.name = "iops_per_cpu_s",
                                          .unit = Unit::per_cpu_s,
                                          .kind = MetricKind::cpu,
                                          .better = Direction::higher,
                                          .description = "I/Os per CPU second of the process (user + system)",
                                          .recorded_by = "io"};
inline constexpr MetricDef write_fps{.name = "write_fps",
                                     .unit = Unit::per_s,
                                     .kind = MetricKind::operations,
                                     .better = Direction::higher,
                                     .description = "frames written per second",
                                     .recorded_by = "video",
                                     .where = kHeadline | kInterval,
                                     .word = "fps",
                                     .traits = kOperationsFeed | kSummedOverHosts};
inline constexpr MetricDef read_fps{.name = "read_fps",
                                    .unit = Unit::per_s,
                                    .kind = MetricKind::operations,
                                    .better = Direction::higher,
                                    .description = "frames read per second",
                                    .recorded_by = "video",
                                    .where = kHeadline | kInterval,
                                    .word = "fps",
                                    .traits = kOperationsFeed | kSummedOverHosts};
inline constexpr MetricDef write_passes{.name = "write_passes",
                                        .unit = Unit::count,
                                        .kind = MetricKind::count,
                                        .description = "complete write passes over the file",
                                        .recorded_by = "video"};
inline constexpr MetricDef read_passes{.name = "read_passes",
                                       .unit = Unit::count,
                                       .kind = MetricKind::count,
                                       .description = "complete read passes over the file",
                                       .recorded_by = "video"};
inline constexpr MetricDef tps{.name = "tps",
                               .unit = Unit::per_s,
                               .kind = MetricKind::operations,
                               .better = Direction::higher,
                               .description = "committed transactions (sysbench: events) per second",
                               .recorded_by = "tpcc sysbench",
                               .where = kHeadline | kGroup | kInterval,
                               .word = "TPS",
                               .traits = kOperationsFeed | kSummedOverHosts | kCharted};
inline constexpr MetricDef tpm_c{.name = "tpm_c",
                                 .unit = Unit::per_min,
                                 .kind = MetricKind::operations,
                                 .better = Direction::higher,
                                 .description = "committed New-Order transactions per minute (tpmC-like)",
                                 .recorded_by = "tpcc",
                                 .where = kHeadline | kGroup | kInterval,
                                 .word = "tpmC",
                                 .traits = kSummedOverHosts};
inline constexpr MetricDef nopm{.name = "nopm",
                                .unit = Unit::per_min,
                                .kind = MetricKind::operations,
                                .better = Direction::higher,
                                .description = "HammerDB's New-Orders per minute",
                                .recorded_by = "tpcc",
                                .word = "NOPM"};
inline constexpr MetricDef qps{.name = "qps",
                               .unit = Unit::per_s,
                               .kind = MetricKind::operations,
                               .better = Direction::higher,
                               .description = "queries per second (read + write + other)",
                               .recorded_by = "sysbench",
                               .where = kHeadline | kInterval,
                               .word = "QPS",
                               .traits = kSummedOverHosts};
inline constexpr MetricDef reads_s{.name = "reads_s",
                                   .unit = Unit::per_s,
                                   .kind = MetricKind::operations,
                                   .better = Direction::higher,
                                   .description = "read queries per second",
                                   .recorded_by = "sysbench",
                                   .where = kHeadline | kInterval,
                                   .traits = kSummedOverHosts};
inline constexpr MetricDef writes_s{.name = "writes_s",
                                    .unit = Unit::per_s,
                                    .kind = MetricKind::operations,
                                    .better = Direction::higher,
                                    .description = "write queries per second",
                                    .recorded_by = "sysbench",
                                    .where = kHeadline | kInterval,
                                    .traits = kSummedOverHosts};
inline constexpr MetricDef other_s{.name = "other_s",
                                   .unit = Unit::per_s,
                                   .kind = MetricKind::operations,
                                   .better = Direction::higher,
                                   .description = "other queries per second (BEGIN, COMMIT, ...)",
                                   .recorded_by = "sysbench",
                                   .where = kHeadline | kInterval,
                                   .traits = kSummedOverHosts};
inline constexpr MetricDef transactions{.name = "transactions",
                                        .unit = Unit::count,
                                        .kind = MetricKind::operations,
                                        .description = "committed transactions (sysbench: events)",
                                        .recorded_by = "tpcc sysbench"};
inline constexpr MetricDef new_orders{.name = "new_orders",
                                      .unit = Unit::count,
                                      .kind = MetricKind::operations,
                                      .description = "committed New-Orders",
                                      .recorded_by = "tpcc"};
inline constexpr MetricDef queries{.name = "queries",
                                   .unit = Unit::count,
                                   .kind = MetricKind::operations,
                                   .description = "queries completed (read + write + other)",
                                   .recorded_by = "sysbench"};
inline constexpr MetricDef reads{.name = "reads",
                                 .unit = Unit::count,
                                 .kind = MetricKind::operations,
                                 .description = "read queries completed",
                                 .recorded_by = "sysbench"};
inline constexpr MetricDef writes{.name = "writes",
                                  .unit = Unit::count,
                                  .kind = MetricKind::operations,
                                  .description = "write queries completed",
                                  .recorded_by = "sysbench"};
inline constexpr MetricDef other{.name = "other",
                                 .unit = Unit::count,
                                 .kind = MetricKind::operations,
                                 .description = "other queries completed",
                                 .recorded_by = "sysbench"};
inline constexpr MetricDef events{.name = "events",
                                  .unit = Unit::count,
                                  .kind = MetricKind::operations,
                                  .description = "sysbench's \"total number of events\"",
                                  .recorded_by = "sysbench"};
inline constexpr MetricDef events_avg{.name = "events_avg",
                                      .unit = Unit::count,
                                      .kind = MetricKind::operations,
                                      .description = "events per thread, mean (sysbench's threads fairness)",
                                      .recorded_by = "sysbench",
                                      .where = kGroup};
inline constexpr MetricDef events_stddev{.name = "events_stddev",
                                         .unit = Unit::count,
                                         .kind = MetricKind::operations,
                                         .description = "events per thread, standard deviation",
                                         .recorded_by = "sysbench",
                                         .where = kGroup};
inline constexpr MetricDef count{.name = "count",
                                 .unit = Unit::count,
                                 .kind = MetricKind::operations,
                                 .description = "completed transactions of the type (commits + business rollbacks)",
                                 .recorded_by = "tpcc",
                                 .where = kGroup};
inline constexpr MetricDef arrival_rate{.name = "arrival_rate",
                                        .unit = Unit::per_s,
                                        .kind = MetricKind::setting,
                                        .description = "open loop: transactions that arrived per second",
                                        .recorded_by = "tpcc",
                                        .where = kHeadline | kGroup};

// ---- throughput --------------------------------------------------------------------------------
inline constexpr MetricDef throughput_mb_s{.name = "throughput_mb_s",
                                           .unit = Unit::mb_s,
                                           .kind = MetricKind::throughput,
                                           .better = Direction::higher,
                                           .description = "bytes transferred per second, MB = 10^6 bytes",
                                           .recorded_by = "io vdbench replay vdi",
                                           .where = kHeadline | kGroup};
inline constexpr MetricDef mb_s{.name = "mb_s",
                                .unit = Unit::mb_s,
                                .kind = MetricKind::throughput,
                                .better = Direction::higher,
                                .description = "bytes transferred per second, MB = 10^6 bytes",
                                .recorded_by = "io vdbench replay vdi precondition",
                                .where = kGroup | kInterval,
                                .traits = kBytesFeed | kSummedOverHosts};
inline constexpr MetricDef write_mb_s{.name = "write_mb_s",
                                      .unit = Unit::mb_s,
                                      .kind = MetricKind::throughput,
                                      .better = Direction::higher,
                                      .description = "frame writes, bytes per second, MB = 10^6 bytes",
                                      .recorded_by = "video",
                                      .where = kHeadline | kInterval,
                                      .traits = kBytesFeed | kSummedOverHosts};
inline constexpr MetricDef read_mb_s{.name = "read_mb_s",
                                     .unit = Unit::mb_s,
                                     .kind = MetricKind::throughput,
                                     .better = Direction::higher,
                                     .description = "frame reads, bytes per second, MB = 10^6 bytes",
                                     .recorded_by = "video",
                                     .where = kHeadline | kInterval,
                                     .traits = kBytesFeed | kSummedOverHosts};
inline constexpr MetricDef fill_mb_s{.name = "fill_mb_s",
                                     .unit = Unit::mb_s,
                                     .kind = MetricKind::throughput,
                                     .better = Direction::higher,
                                     .description = "sequential fill: bytes written per second, MB = 10^6 bytes",
                                     .recorded_by = "precondition"};
inline constexpr MetricDef random_mb_s{.name = "random_mb_s",
                                       .unit = Unit::mb_s,
                                       .kind = MetricKind::throughput,
                                       .better = Direction::higher,
                                       .description = "random overwrite: bytes written per second, MB = 10^6 bytes",
                                       .recorded_by = "precondition"};
inline constexpr MetricDef bytes{.name = "bytes",
                                 .unit = Unit::bytes,
                                 .kind = MetricKind::throughput,
                                 .description = "bytes transferred",
                                 .recorded_by = "io precondition",
                                 .where = kHeadline | kGroup};
inline constexpr MetricDef read_bytes{.name = "read_bytes",
                                      .unit = Unit::bytes,
                                      .kind = MetricKind::throughput,
                                      .description = "bytes read",
                                      .recorded_by = "replay vdi",
                                      .where = kGroup};
inline constexpr MetricDef write_bytes{.name = "write_bytes",
                                       .unit = Unit::bytes,
                                       .kind = MetricKind::throughput,
                                       .description = "bytes written",
                                       .recorded_by = "replay vdi",
                                       .where = kGroup};
inline constexpr MetricDef bytes_written{.name = "bytes_written",
                                         .unit = Unit::bytes,
                                         .kind = MetricKind::throughput,
                                         .description = "bytes written by every pass",
                                         .recorded_by = "precondition"};
inline constexpr MetricDef region_bytes{.name = "region_bytes",
                                        .unit = Unit::bytes,
                                        .kind = MetricKind::setting,
                                        .description = "bytes preconditioned (the region)",
                                        .recorded_by = "precondition"};

// ---- latency and lateness (other than the families' figures) ----------------------------------
// The family members interval values and call sites name (the others are generated: figure_def()).
inline constexpr MetricDef latency_avg_us{
    .name = "latency_avg_us",
    .unit = Unit::us,
    .kind = MetricKind::latency,
    .better = Direction::lower,
    .description = "latency: avg (interval values: of the interval's \"latency\" histogram)",
    .recorded_by = latency.recorded_by,
    .where = kHeadline | kGroup | kInterval,

    .figure = "avg",
    .family = "latency",
    .of_interval_latency = true};
inline constexpr MetricDef latency_p99_us{
    .name = "latency_p99_us",
    .unit = Unit::us,
    .kind = MetricKind::latency,
    .better = Direction::lower,
    .description = "latency: p99 (interval values: of the interval's \"latency\" histogram)",
    .recorded_by = latency.recorded_by,
    .where = kHeadline | kGroup | kInterval,
    .traits = kCharted,
    .figure = "p99",
    .family = "latency",
    .of_interval_latency = true};
inline constexpr MetricDef latency_avg_ms{
    .name = "latency_avg_ms",
    .unit = Unit::ms,
    .kind = MetricKind::latency,
    .better = Direction::lower,
    .description = "latency: avg (interval values: of the interval's \"latency\" histogram)",
    .recorded_by = latency.recorded_by,
    .where = kHeadline | kGroup | kInterval,

    .figure = "avg",
    .family = "latency",
    .of_interval_latency = true};
inline constexpr MetricDef latency_p95_ms{
    .name = "latency_p95_ms",
    .unit = Unit::ms,
    .kind = MetricKind::latency,
    .better = Direction::lower,
    .description = "latency: p95 (interval values: of the interval's \"latency\" histogram)",
    .recorded_by = latency.recorded_by,
    .where = kHeadline | kGroup | kInterval,

    .figure = "p95",
    .family = "latency",
    .of_interval_latency = true};
inline constexpr MetricDef latency_p99_ms{
    .name = "latency_p99_ms",
    .unit = Unit::ms,
    .kind = MetricKind::latency,
    .better = Direction::lower,
    .description = "latency: p99 (interval values: of the interval's \"latency\" histogram)",
    .recorded_by = latency.recorded_by,
    .where = kHeadline | kGroup | kInterval,
    .traits = kCharted,
    .figure = "p99",
    .family = "latency",
    .of_interval_latency = true};
inline constexpr MetricDef lateness_p99_us{
    .name = "lateness_p99_us",
    .unit = Unit::us,
    .kind = MetricKind::lateness,
    .better = Direction::lower,
    .description = "lateness: 99th percentile (interval value: of the interval's lateness)",
    .recorded_by = "vdbench replay vdi",
    .where = kHeadline | kGroup | kInterval,

    .figure = "p99",
    .family = "lateness",
    .of_interval_latency = false};
inline constexpr MetricDef read_frame_latency_p99_ms{.name = "read_frame_latency_p99_ms",
                                                     .unit = Unit::ms,
                                                     .kind = MetricKind::latency,
                                                     .better = Direction::lower,
                                                     .description = "99th percentile time to read one frame",
                                                     .recorded_by = "video"};
inline constexpr MetricDef write_frame_latency_p99_ms{.name = "write_frame_latency_p99_ms",
                                                      .unit = Unit::ms,
                                                      .kind = MetricKind::latency,
                                                      .better = Direction::lower,
                                                      .description = "99th percentile time to write one frame",
                                                      .recorded_by = "video"};
inline constexpr MetricDef service_avg_us{.name = "service_avg_us",
                                          .unit = Unit::us,
                                          .kind = MetricKind::latency,
                                          .better = Direction::lower,
                                          .description = "mean I/O latency from submission to completion",
                                          .recorded_by = "vdbench",
                                          .where = kInterval};
inline constexpr MetricDef timer_lateness_p99_ms{
    .name = "timer_lateness_p99_ms",
    .unit = Unit::ms,
    .kind = MetricKind::lateness,
    .better = Direction::lower,
    .description = "99th percentile of how late keying/think/arrival timers fired",
    .recorded_by = "tpcc"};
inline constexpr MetricDef timer_lateness_max_ms{.name = "timer_lateness_max_ms",
                                                 .unit = Unit::ms,
                                                 .kind = MetricKind::lateness,
                                                 .better = Direction::lower,
                                                 .description = "latest timer",
                                                 .recorded_by = "tpcc",
                                                 .merge = HostMerge::maximum};

// ---- errors ------------------------------------------------------------------------------------
inline constexpr MetricDef errors{.name = "errors",
                                  .unit = Unit::count,
                                  .kind = MetricKind::errors,
                                  .better = Direction::lower,
                                  .description = "failed transactions (tpcc) or failed or short I/Os (replay)",
                                  .recorded_by = "tpcc replay vdi",
                                  .where = kHeadline | kGroup | kInterval,
                                  .traits = kErrorsFeed | kSummedOverHosts};
inline constexpr MetricDef err_s{.name = "err_s",
                                 .unit = Unit::per_s,
                                 .kind = MetricKind::errors,
                                 .better = Direction::lower,
                                 .description = "ignored errors per second (sysbench's err/s)",
                                 .recorded_by = "sysbench",
                                 .where = kInterval,
                                 .traits = kErrorsFeed | kSummedOverHosts};
inline constexpr MetricDef errors_s{.name = "errors_s",
                                    .unit = Unit::per_s,
                                    .kind = MetricKind::errors,
                                    .better = Direction::lower,
                                    .description = "ignored errors per second (the transaction was restarted)",
                                    .recorded_by = "sysbench"};
inline constexpr MetricDef ignored_errors{.name = "ignored_errors",
                                          .unit = Unit::count,
                                          .kind = MetricKind::errors,
                                          .better = Direction::lower,
                                          .description = "failed queries whose transaction was restarted",
                                          .recorded_by = "sysbench"};
inline constexpr MetricDef retries{.name = "retries",
                                   .unit = Unit::count,
                                   .kind = MetricKind::errors,
                                   .better = Direction::lower,
                                   .description = "reruns after a retryable failure",
                                   .recorded_by = "tpcc",
                                   .where = kHeadline | kGroup | kInterval,
                                   .traits = kSummedOverHosts};
inline constexpr MetricDef rollbacks{.name = "rollbacks",
                                     .unit = Unit::count,
                                     .kind = MetricKind::errors,
                                     .description = "New-Order business rollbacks (1% by design, clause 2.4.1.4)",
                                     .recorded_by = "tpcc",
                                     .where = kHeadline | kGroup};
inline constexpr MetricDef reconnects{.name = "reconnects",
                                      .unit = Unit::count,
                                      .kind = MetricKind::errors,
                                      .better = Direction::lower,
                                      .description = "sessions reopened after a lost connection",
                                      .recorded_by = "tpcc sysbench",
                                      .where = kHeadline | kGroup | kInterval,
                                      .traits = kSummedOverHosts};
inline constexpr MetricDef reconnects_s{.name = "reconnects_s",
                                        .unit = Unit::per_s,
                                        .kind = MetricKind::errors,
                                        .better = Direction::lower,
                                        .description = "reconnects per second after a lost connection",
                                        .recorded_by = "sysbench"};
inline constexpr MetricDef reconn_s{.name = "reconn_s",
                                    .unit = Unit::per_s,
                                    .kind = MetricKind::errors,
                                    .better = Direction::lower,
                                    .description = "reconnects per second (sysbench's reconn/s)",
                                    .recorded_by = "sysbench",
                                    .where = kInterval,
                                    .traits = kSummedOverHosts};
inline constexpr MetricDef attempts{.name = "attempts",
                                    .unit = Unit::count,
                                    .kind = MetricKind::operations,
                                    .description = "executions of a transaction: first tries and reruns",
                                    .recorded_by = "tpcc sysbench",
                                    .where = kHeadline | kGroup};
inline constexpr MetricDef failed_attempts{.name = "failed_attempts",
                                           .unit = Unit::count,
                                           .kind = MetricKind::errors,
                                           .better = Direction::lower,
                                           .description =
                                               "executions that ended with an error, retryable ones "
                                               "included (failure_bound)",
                                           .recorded_by = "tpcc sysbench",
                                           .where = kHeadline | kGroup};
inline constexpr MetricDef arrivals_dropped{.name = "arrivals_dropped",
                                            .unit = Unit::count,
                                            .kind = MetricKind::errors,
                                            .better = Direction::lower,
                                            .description = "open loop: arrivals dropped because the queue was full",
                                            .recorded_by = "tpcc"};
inline constexpr MetricDef rounded_ios{.name = "rounded_ios",
                                       .unit = Unit::count,
                                       .kind = MetricKind::count,
                                       .description = "I/Os whose offset or length was changed by align",
                                       .recorded_by = "replay vdi",
                                       .where = kGroup};

// ---- queues and backlogs -----------------------------------------------------------------------
inline constexpr MetricDef queue_length_avg{
    .name = "queue_length_avg",
    .unit = Unit::count,
    .kind = MetricKind::count,
    .description = "time-weighted mean of transactions waiting for a connection",
    .recorded_by = "tpcc"};
inline constexpr MetricDef queue_length_max{.name = "queue_length_max",
                                            .unit = Unit::count,
                                            .kind = MetricKind::count,
                                            .description = "most transactions waiting at once",
                                            .recorded_by = "tpcc",
                                            .merge = HostMerge::maximum};
inline constexpr MetricDef queue_len_avg{.name = "queue_len_avg",
                                         .unit = Unit::count,
                                         .kind = MetricKind::count,
                                         .description = "interval: time-weighted mean of transactions waiting",
                                         .recorded_by = "tpcc",
                                         .where = kInterval};
inline constexpr MetricDef queue_len_max{.name = "queue_len_max",
                                         .unit = Unit::count,
                                         .kind = MetricKind::count,
                                         .description = "interval: most transactions waiting at once",
                                         .recorded_by = "tpcc",
                                         .where = kInterval};
inline constexpr MetricDef pool_utilisation_pct{.name = "pool_utilisation_pct",
                                                .unit = Unit::pct,
                                                .kind = MetricKind::count,
                                                .description =
                                                    "busy time of the connections (or users) / (their "
                                                    "number x measured time)",
                                                .recorded_by = "tpcc"};
inline constexpr MetricDef pool_util_pct{.name = "pool_util_pct",
                                         .unit = Unit::pct,
                                         .kind = MetricKind::count,
                                         .description = "interval: pool_utilisation_pct of the interval",
                                         .recorded_by = "tpcc",
                                         .where = kInterval};
inline constexpr MetricDef overflow_ios{.name = "overflow_ios",
                                        .unit = Unit::count,
                                        .kind = MetricKind::lateness,
                                        .description = "I/Os that found every slot busy at their intended start",
                                        .recorded_by = "replay vdi",
                                        .where = kHeadline | kGroup};
inline constexpr MetricDef max_backlog_ios{.name = "max_backlog_ios",
                                           .unit = Unit::count,
                                           .kind = MetricKind::lateness,
                                           .description =
                                               "most requests past their intended start but not yet "
                                               "issued at once",
                                           .recorded_by = "replay vdi",
                                           .where = kHeadline | kGroup};
inline constexpr MetricDef mean_backlog_ios{.name = "mean_backlog_ios",
                                            .unit = Unit::count,
                                            .kind = MetricKind::lateness,
                                            .description = "time average of that backlog over the replay",
                                            .recorded_by = "replay vdi",
                                            .where = kGroup};
inline constexpr MetricDef backlog_ios{.name = "backlog_ios",
                                       .unit = Unit::count,
                                       .kind = MetricKind::lateness,
                                       .description = "arrivals due but not issued when the point ended",
                                       .recorded_by = "vdbench",
                                       .where = kGroup};
inline constexpr MetricDef achieved_qd{.name = "achieved_qd",
                                       .unit = Unit::count,
                                       .kind = MetricKind::count,
                                       .description = "IOPS x mean service latency (Little's law)",
                                       .recorded_by = "vdbench",
                                       .where = kGroup};
inline constexpr MetricDef qd_deviation_pct{.name = "qd_deviation_pct",
                                            .unit = Unit::pct,
                                            .kind = MetricKind::health,
                                            .description = "(achieved_qd - threads) / threads",
                                            .recorded_by = "vdbench",
                                            .where = kGroup};

// ---- replayed requests -------------------------------------------------------------------------
inline constexpr MetricDef flushes_replayed{.name = "flushes_replayed",
                                            .unit = Unit::count,
                                            .kind = MetricKind::count,
                                            .description = "flush requests and preflushes done as fdatasync",
                                            .recorded_by = "replay vdi",
                                            .where = kGroup};
inline constexpr MetricDef flushes_skipped{.name = "flushes_skipped",
                                           .unit = Unit::count,
                                           .kind = MetricKind::count,
                                           .description = "flush requests not done (flushes: skip)",
                                           .recorded_by = "replay vdi",
                                           .where = kGroup};
inline constexpr MetricDef fua_replayed{.name = "fua_replayed",
                                        .unit = Unit::count,
                                        .kind = MetricKind::count,
                                        .description = "FUA writes followed by an fdatasync",
                                        .recorded_by = "replay vdi",
                                        .where = kGroup};
inline constexpr MetricDef fua_skipped{.name = "fua_skipped",
                                       .unit = Unit::count,
                                       .kind = MetricKind::count,
                                       .description = "FUA writes without their fdatasync (flushes: skip)",
                                       .recorded_by = "replay vdi",
                                       .where = kGroup};
inline constexpr MetricDef discards_replayed{.name = "discards_replayed",
                                             .unit = Unit::count,
                                             .kind = MetricKind::count,
                                             .description = "discards punched as holes",
                                             .recorded_by = "replay vdi",
                                             .where = kGroup};
inline constexpr MetricDef discards_skipped{.name = "discards_skipped",
                                            .unit = Unit::count,
                                            .kind = MetricKind::count,
                                            .description = "discards not done (discards: skip, or holes not supported)",
                                            .recorded_by = "replay vdi",
                                            .where = kGroup};

// ---- CPU and memory ----------------------------------------------------------------------------
inline constexpr MetricDef cpu_usr_pct{.name = "cpu_usr_pct",
                                       .unit = Unit::pct,
                                       .kind = MetricKind::cpu,
                                       .description = "user CPU time / measured time, percent of one core",
                                       .recorded_by = "io vdbench",
                                       .where = kHeadline | kGroup};
inline constexpr MetricDef cpu_sys_pct{.name = "cpu_sys_pct",
                                       .unit = Unit::pct,
                                       .kind = MetricKind::cpu,
                                       .description = "system CPU time / measured time, percent of one core",
                                       .recorded_by = "io vdbench",
                                       .where = kHeadline | kGroup};
inline constexpr MetricDef cpu_jobs_usr_pct{.name = "cpu_jobs_usr_pct",
                                            .unit = Unit::pct,
                                            .kind = MetricKind::cpu,
                                            .description = "user CPU of the I/O threads only, percent of one core",
                                            .recorded_by = "io"};
inline constexpr MetricDef cpu_jobs_sys_pct{.name = "cpu_jobs_sys_pct",
                                            .unit = Unit::pct,
                                            .kind = MetricKind::cpu,
                                            .description = "system CPU of the I/O threads only, percent of one core",
                                            .recorded_by = "io"};
inline constexpr MetricDef cpu_usr_s{.name = "cpu_usr_s",
                                     .unit = Unit::s,
                                     .kind = MetricKind::cpu,
                                     .description = "process user CPU during the point",
                                     .recorded_by = "vdbench",
                                     .where = kGroup,
                                     .merge = HostMerge::sum};
inline constexpr MetricDef cpu_sys_s{.name = "cpu_sys_s",
                                     .unit = Unit::s,
                                     .kind = MetricKind::cpu,
                                     .description = "process system CPU during the point",
                                     .recorded_by = "vdbench",
                                     .where = kGroup,
                                     .merge = HostMerge::sum};
inline constexpr MetricDef driver_cpu_pct{.name = "driver_cpu_pct",
                                          .unit = Unit::pct,
                                          .kind = MetricKind::cpu,
                                          .description =
                                              "CPU of the drivelab process (user + system) during the "
                                              "measured phase, % of one core",
                                          .recorded_by = "tpcc"};
inline constexpr MetricDef driver_rss_peak_mib{.name = "driver_rss_peak_mib",
                                               .unit = Unit::mib,
                                               .kind = MetricKind::memory,
                                               .description = "peak resident memory of the drivelab process (VmHWM)",
                                               .recorded_by = "tpcc",
                                               .merge = HostMerge::per_host};

// ---- time --------------------------------------------------------------------------------------
inline constexpr MetricDef seconds{.name = "seconds",
                                   .unit = Unit::s,
                                   .kind = MetricKind::time,
                                   .better = Direction::lower,
                                   .description = "time of the passes (precondition) or of a phase (render)",
                                   .recorded_by = "precondition render",
                                   .where = kHeadline | kGroup};
inline constexpr MetricDef measured_s{.name = "measured_s",
                                      .unit = Unit::s,
                                      .kind = MetricKind::time,
                                      .description = "measured time of the curve point",
                                      .recorded_by = "vdbench tpcc",
                                      .where = kGroup};
inline constexpr MetricDef elapsed_s{.name = "elapsed_s",
                                     .unit = Unit::s,
                                     .kind = MetricKind::time,
                                     .description = "first submission to last completion of the replay",
                                     .recorded_by = "replay vdi",
                                     .where = kGroup};
inline constexpr MetricDef total_time_s{.name = "total_time_s",
                                        .unit = Unit::s,
                                        .kind = MetricKind::time,
                                        .description = "measured time (sysbench's \"total time\")",
                                        .recorded_by = "sysbench"};
inline constexpr MetricDef execution_time_avg_s{.name = "execution_time_avg_s",
                                                .unit = Unit::s,
                                                .kind = MetricKind::time,
                                                .description = "execution time per thread, mean (threads fairness)",
                                                .recorded_by = "sysbench",
                                                .where = kGroup};
inline constexpr MetricDef execution_time_stddev_s{.name = "execution_time_stddev_s",
                                                   .unit = Unit::s,
                                                   .kind = MetricKind::time,
                                                   .description = "execution time per thread, standard deviation",
                                                   .recorded_by = "sysbench",
                                                   .where = kGroup};
inline constexpr MetricDef total_s{.name = "total_s",
                                   .unit = Unit::s,
                                   .kind = MetricKind::time,
                                   .better = Direction::lower,
                                   .description = "seconds to finish the phases that ran",
                                   .recorded_by = "render"};
inline constexpr MetricDef baseline_total_s{.name = "baseline_total_s",
                                            .unit = Unit::s,
                                            .kind = MetricKind::time,
                                            .better = Direction::lower,
                                            .description = "the same phases in RAM (mode none)",
                                            .recorded_by = "render"};
// The render pipeline's phases (render/pipeline.hpp kPhaseNames), headline and group `baseline`.
inline constexpr MetricDef load_s{.name = "load_s",
                                  .unit = Unit::s,
                                  .kind = MetricKind::time,
                                  .better = Direction::lower,
                                  .description = "render phase 1, load",
                                  .recorded_by = "render",
                                  .where = kHeadline | kGroup};
inline constexpr MetricDef unpack_s{.name = "unpack_s",
                                    .unit = Unit::s,
                                    .kind = MetricKind::time,
                                    .better = Direction::lower,
                                    .description = "render phase 2, unpack",
                                    .recorded_by = "render",
                                    .where = kHeadline | kGroup};
inline constexpr MetricDef process_s{.name = "process_s",
                                     .unit = Unit::s,
                                     .kind = MetricKind::time,
                                     .better = Direction::lower,
                                     .description = "render phase 3, process",
                                     .recorded_by = "render",
                                     .where = kHeadline | kGroup};
inline constexpr MetricDef repack_s{.name = "repack_s",
                                    .unit = Unit::s,
                                    .kind = MetricKind::time,
                                    .better = Direction::lower,
                                    .description = "render phase 4, repack",
                                    .recorded_by = "render",
                                    .where = kHeadline | kGroup};
inline constexpr MetricDef write_s{.name = "write_s",
                                   .unit = Unit::s,
                                   .kind = MetricKind::time,
                                   .better = Direction::lower,
                                   .description = "render phase 5, write",
                                   .recorded_by = "render",
                                   .where = kHeadline | kGroup};
inline constexpr MetricDef slowdown_vs_ram{.name = "slowdown_vs_ram",
                                           .unit = Unit::ratio,
                                           .kind = MetricKind::time,
                                           .better = Direction::lower,
                                           .description = "total_s / baseline_total_s",
                                           .recorded_by = "render"};

// ---- device and server counters ----------------------------------------------------------------
inline constexpr MetricDef swap_out_bytes{.name = "swap_out_bytes",
                                          .unit = Unit::bytes,
                                          .kind = MetricKind::device,
                                          .description = "pages swapped out (host-wide, /proc/vmstat pswpout) x 4 KiB",
                                          .recorded_by = "render"};
inline constexpr MetricDef swap_in_bytes{.name = "swap_in_bytes",
                                         .unit = Unit::bytes,
                                         .kind = MetricKind::device,
                                         .description = "pages swapped in (host-wide, /proc/vmstat pswpin) x 4 KiB",
                                         .recorded_by = "render"};
inline constexpr MetricDef major_faults{.name = "major_faults",
                                        .unit = Unit::count,
                                        .kind = MetricKind::device,
                                        .description = "major page faults of the drivelab process",
                                        .recorded_by = "render",
                                        .where = kHeadline | kGroup};
inline constexpr MetricDef host_major_faults{.name = "host_major_faults",
                                             .unit = Unit::count,
                                             .kind = MetricKind::device,
                                             .description = "major page faults host-wide (/proc/vmstat pgmajfault)",
                                             .recorded_by = "render",
                                             .where = kGroup};
inline constexpr MetricDef pswpin_pages{.name = "pswpin_pages",
                                        .unit = Unit::pages,
                                        .kind = MetricKind::device,
                                        .description = "/proc/vmstat pswpin, 4 KiB pages",
                                        .recorded_by = "render",
                                        .where = kGroup};
inline constexpr MetricDef pswpout_pages{.name = "pswpout_pages",
                                         .unit = Unit::pages,
                                         .kind = MetricKind::device,
                                         .description = "/proc/vmstat pswpout, 4 KiB pages",
                                         .recorded_by = "render",
                                         .where = kGroup};
inline constexpr MetricDef device_read_bytes{.name = "device_read_bytes",
                                             .unit = Unit::bytes,
                                             .kind = MetricKind::device,
                                             .description = "bytes the target's block device read (diskstats)",
                                             .recorded_by = "render",
                                             .where = kHeadline | kGroup};
inline constexpr MetricDef device_write_bytes{.name = "device_write_bytes",
                                              .unit = Unit::bytes,
                                              .kind = MetricKind::device,
                                              .description = "bytes the target's block device wrote (diskstats)",
                                              .recorded_by = "render",
                                              .where = kHeadline | kGroup};
inline constexpr MetricDef swap_in_mb_s{.name = "swap_in_mb_s",
                                        .unit = Unit::mb_s,
                                        .kind = MetricKind::device,
                                        .description = "swap-in per second of the phase, MB = 10^6 bytes",
                                        .recorded_by = "render",
                                        .where = kInterval,
                                        .traits = kSummedOverHosts};
inline constexpr MetricDef swap_out_mb_s{.name = "swap_out_mb_s",
                                         .unit = Unit::mb_s,
                                         .kind = MetricKind::device,
                                         .description = "swap-out per second of the phase, MB = 10^6 bytes",
                                         .recorded_by = "render",
                                         .where = kInterval,
                                         .traits = kSummedOverHosts};
inline constexpr MetricDef device_read_mb_s{.name = "device_read_mb_s",
                                            .unit = Unit::mb_s,
                                            .kind = MetricKind::device,
                                            .description = "device reads per second of the phase, MB = 10^6 bytes",
                                            .recorded_by = "render",
                                            .where = kInterval,
                                            .traits = kBytesFeed | kSummedOverHosts};
inline constexpr MetricDef device_write_mb_s{.name = "device_write_mb_s",
                                             .unit = Unit::mb_s,
                                             .kind = MetricKind::device,
                                             .description = "device writes per second of the phase, MB = 10^6 bytes",
                                             .recorded_by = "render",
                                             .where = kInterval,
                                             .traits = kBytesFeed | kSummedOverHosts};
// The database server's counters over the measured phase (tpcc, PostgreSQL and MariaDB/MySQL).
inline constexpr MetricDef server_blks_read{.name = "server_blks_read",
                                            .unit = Unit::count,
                                            .kind = MetricKind::device,
                                            .description =
                                                "PostgreSQL: blocks read from outside shared buffers "
                                                "(pg_stat_database)",
                                            .recorded_by = "tpcc"};
inline constexpr MetricDef server_blks_hit{
    .name = "server_blks_hit",
    .unit = Unit::count,
    .kind = MetricKind::device,
    .description = "PostgreSQL: blocks found in shared buffers (pg_stat_database)",
    .recorded_by = "tpcc"};
inline constexpr MetricDef server_commits{.name = "server_commits",
                                          .unit = Unit::count,
                                          .kind = MetricKind::device,
                                          .description =
                                              "committed transactions the server counted (PostgreSQL "
                                              "xact_commit, MySQL/MariaDB Com_commit)",
                                          .recorded_by = "tpcc"};
inline constexpr MetricDef server_wal_bytes{.name = "server_wal_bytes",
                                            .unit = Unit::bytes,
                                            .kind = MetricKind::device,
                                            .description = "PostgreSQL: WAL written (pg_stat_wal)",
                                            .recorded_by = "tpcc"};
inline constexpr MetricDef server_innodb_data_reads{.name = "server_innodb_data_reads",
                                                    .unit = Unit::count,
                                                    .kind = MetricKind::device,
                                                    .description = "InnoDB: data file reads (SHOW GLOBAL STATUS)",
                                                    .recorded_by = "tpcc"};
inline constexpr MetricDef server_innodb_data_writes{.name = "server_innodb_data_writes",
                                                     .unit = Unit::count,
                                                     .kind = MetricKind::device,
                                                     .description = "InnoDB: data file writes",
                                                     .recorded_by = "tpcc"};
inline constexpr MetricDef server_innodb_data_read_bytes{.name = "server_innodb_data_read_bytes",
                                                         .unit = Unit::bytes,
                                                         .kind = MetricKind::device,
                                                         .description = "InnoDB: bytes read from data files",
                                                         .recorded_by = "tpcc"};
inline constexpr MetricDef server_innodb_data_written_bytes{.name = "server_innodb_data_written_bytes",
                                                            .unit = Unit::bytes,
                                                            .kind = MetricKind::device,
                                                            .description = "InnoDB: bytes written to data files",
                                                            .recorded_by = "tpcc"};
inline constexpr MetricDef server_innodb_data_fsyncs{.name = "server_innodb_data_fsyncs",
                                                     .unit = Unit::count,
                                                     .kind = MetricKind::device,
                                                     .description = "InnoDB: fsync() calls",
                                                     .recorded_by = "tpcc"};

// ---- within-run confidence (issue 32: results/record_stats.hpp within_run_confidence) ----------
// A test's 95% confidence interval of its mean rate by batch means over its intervals: within-run
// noise only (docs/results.md "Repetitions"). A bound of one host's interval is not a bound of
// the hosts' sum: per host only in a merge.
inline constexpr MetricDef iops_ci95_low{.name = "iops_ci95_low",
                                         .unit = Unit::per_s,
                                         .kind = MetricKind::operations,
                                         .description =
                                             "within-run 95% confidence interval of the mean IOPS, low bound "
                                             "(batch means over the intervals; within-run noise only)",
                                         .recorded_by = "io vdbench replay vdi",
                                         .word = "IOPS",
                                         .merge = HostMerge::per_host};
inline constexpr MetricDef iops_ci95_high{
    .name = "iops_ci95_high",
    .unit = Unit::per_s,
    .kind = MetricKind::operations,
    .description = "within-run 95% confidence interval of the mean IOPS, high bound",
    .recorded_by = "io vdbench replay vdi",
    .word = "IOPS",
    .merge = HostMerge::per_host};
inline constexpr MetricDef tps_ci95_low{.name = "tps_ci95_low",
                                        .unit = Unit::per_s,
                                        .kind = MetricKind::operations,
                                        .description =
                                            "within-run 95% confidence interval of the mean TPS, low bound (batch "
                                            "means over the intervals; within-run noise only)",
                                        .recorded_by = "tpcc sysbench",
                                        .word = "TPS",
                                        .merge = HostMerge::per_host};
inline constexpr MetricDef tps_ci95_high{
    .name = "tps_ci95_high",
    .unit = Unit::per_s,
    .kind = MetricKind::operations,
    .description = "within-run 95% confidence interval of the mean TPS, high bound",
    .recorded_by = "tpcc sysbench",
    .word = "TPS",
    .merge = HostMerge::per_host};
inline constexpr MetricDef rate_ci95_half_width_pct{
    .name = "rate_ci95_half_width_pct",
    .unit = Unit::pct,
    .kind = MetricKind::health,
    .description = "half-width of the within-run 95% interval of the mean rate, % of the mean (the goal: 2)",
    .recorded_by = "io vdbench replay vdi tpcc sysbench",
    .merge = HostMerge::per_host};
inline constexpr MetricDef batch_means_lag1{
    .name = "batch_means_lag1",
    .unit = Unit::ratio,
    .kind = MetricKind::health,
    .description =
        "lag-1 autocorrelation of the batch means the within-run interval is taken over (below 0.2: "
        "independent enough)",
    .recorded_by = "io vdbench replay vdi tpcc sysbench",
    .merge = HostMerge::per_host};
inline constexpr MetricDef batch_means_batches{.name = "batch_means_batches",
                                               .unit = Unit::count,
                                               .kind = MetricKind::count,
                                               .description = "batches of intervals the within-run interval is over",
                                               .recorded_by = "io vdbench replay vdi tpcc sysbench",
                                               .merge = HostMerge::per_host};

// ---- health ------------------------------------------------------------------------------------
inline constexpr MetricDef efficiency_pct{.name = "efficiency_pct",
                                          .unit = Unit::pct,
                                          .kind = MetricKind::health,
                                          .description = "tpm_c / (12.86 x warehouses)",
                                          .recorded_by = "tpcc"};
inline constexpr MetricDef ss_attained{.name = "ss_attained",
                                       .unit = Unit::boolean,
                                       .kind = MetricKind::health,
                                       .description = "steady state reached",
                                       .recorded_by = "vdbench",
                                       .where = kGroup};
inline constexpr MetricDef ss_value{.name = "ss_value",
                                    .unit = Unit::pct,
                                    .kind = MetricKind::health,
                                    .description =
                                        "steady-state criterion value of the last full window (% for "
                                        "a percent criterion, else a plain number)",
                                    .recorded_by = "vdbench",
                                    .where = kGroup,
                                    .other_unit = Unit::none};
inline constexpr MetricDef complete{.name = "complete",
                                    .unit = Unit::boolean,
                                    .kind = MetricKind::health,
                                    .description = "the whole trace was replayed",
                                    .recorded_by = "replay vdi",
                                    .where = kGroup};
inline constexpr MetricDef stopped_by_stopcurve{.name = "stopped_by_stopcurve",
                                                .unit = Unit::boolean,
                                                .kind = MetricKind::health,
                                                .description = "the curve stopped at stopcurve",
                                                .recorded_by = "vdbench",
                                                .where = kGroup};
inline constexpr MetricDef stopcurve_at_pct{.name = "stopcurve_at_pct",
                                            .unit = Unit::pct,
                                            .kind = MetricKind::health,
                                            .description = "the curve point stopcurve stopped at",
                                            .recorded_by = "vdbench",
                                            .where = kGroup};
inline constexpr MetricDef achieved_pct_of_requested{.name = "achieved_pct_of_requested",
                                                     .unit = Unit::pct,
                                                     .kind = MetricKind::health,
                                                     .description = "achieved / requested IOPS",
                                                     .recorded_by = "vdbench",
                                                     .where = kGroup};

// ---- settings and progress ---------------------------------------------------------------------
inline constexpr MetricDef requested_iops{.name = "requested_iops",
                                          .unit = Unit::per_s,
                                          .kind = MetricKind::setting,
                                          .description = "the arrival rate asked for; 0 = unpaced",
                                          .recorded_by = "vdbench replay vdi",
                                          .where = kGroup | kInterval,
                                          .word = "IOPS",
                                          .traits = kSummedOverHosts};
inline constexpr MetricDef requested_pct{.name = "requested_pct",
                                         .unit = Unit::pct,
                                         .kind = MetricKind::setting,
                                         .description =
                                             "curve points: the rate asked for, % of the max run (or of "
                                             "the trace's rate)",
                                         .recorded_by = "vdbench replay vdi tpcc",
                                         .where = kGroup};
inline constexpr MetricDef point_pct{.name = "point_pct",
                                     .unit = Unit::pct,
                                     .kind = MetricKind::progress,
                                     .description = "interval: the curve point being run (requested_pct)",
                                     .recorded_by = "vdbench",
                                     .where = kInterval};
inline constexpr MetricDef trace_iops{.name = "trace_iops",
                                      .unit = Unit::per_s,
                                      .kind = MetricKind::setting,
                                      .description = "the trace's own rate (curve_of recorded)",
                                      .recorded_by = "replay vdi",
                                      .where = kGroup,
                                      .word = "IOPS"};
inline constexpr MetricDef points_run{.name = "points_run",
                                      .unit = Unit::count,
                                      .kind = MetricKind::progress,
                                      .description = "curve points measured",
                                      .recorded_by = "vdbench replay vdi",
                                      .where = kGroup};
inline constexpr MetricDef time_scale{.name = "time_scale",
                                      .unit = Unit::none,
                                      .kind = MetricKind::setting,
                                      .description = "trace times were multiplied by this",
                                      .recorded_by = "replay vdi",
                                      .where = kGroup};
inline constexpr MetricDef threads{.name = "threads",
                                   .unit = Unit::count,
                                   .kind = MetricKind::setting,
                                   .description = "outstanding I/O slots",
                                   .recorded_by = "vdbench",
                                   .where = kGroup};
inline constexpr MetricDef read_pct{.name = "read_pct",
                                    .unit = Unit::pct,
                                    .kind = MetricKind::setting,
                                    .description = "VDI model: reads among the generated I/Os",
                                    .recorded_by = "vdi",
                                    .where = kGroup};
inline constexpr MetricDef mean_size_bytes{.name = "mean_size_bytes",
                                           .unit = Unit::bytes,
                                           .kind = MetricKind::setting,
                                           .description = "VDI model: mean size of the generated I/Os",
                                           .recorded_by = "vdi",
                                           .where = kGroup};
inline constexpr MetricDef iops_per_desktop{.name = "iops_per_desktop",
                                            .unit = Unit::per_s,
                                            .kind = MetricKind::setting,
                                            .description = "VDI model: generated IOPS per desktop",
                                            .recorded_by = "vdi",
                                            .where = kGroup,
                                            .word = "IOPS"};
inline constexpr MetricDef pass{.name = "pass",
                                .unit = Unit::count,
                                .kind = MetricKind::progress,
                                .description = "interval: the pass being run (1 = fill)",
                                .recorded_by = "precondition",
                                .where = kInterval};
inline constexpr MetricDef done_pct{.name = "done_pct",
                                    .unit = Unit::pct,
                                    .kind = MetricKind::progress,
                                    .description = "interval: share of the pass written",
                                    .recorded_by = "precondition",
                                    .where = kInterval};
inline constexpr MetricDef phase{.name = "phase",
                                 .unit = Unit::count,
                                 .kind = MetricKind::progress,
                                 .description = "interval: the render phase (1 load ... 5 write)",
                                 .recorded_by = "render",
                                 .where = kInterval};

/// Every declaration above (the families' members are added by the catalogue): the recorder
/// refuses a name not found here.
inline constexpr std::array kAll{
    &iops, &ios, &read_ios, &write_ios, &achieved_iops, &peak_iops, &max_run_iops, &max_iops_under_p99,
    &max_iops_under_mean, &max_tps_under_slo, &max_tpmc_under_slo, &iops_per_cpu_s, &write_fps, &read_fps,
    &write_passes, &read_passes, &tps, &tpm_c, &nopm, &qps, &reads_s, &writes_s, &other_s, &transactions, &new_orders,
    &queries, &reads, &writes, &other, &events, &events_avg, &events_stddev, &count, &arrival_rate,
    // throughput
    &throughput_mb_s, &mb_s, &write_mb_s, &read_mb_s, &fill_mb_s, &random_mb_s, &bytes, &read_bytes, &write_bytes,
    &bytes_written, &region_bytes,
    // latency
    &latency_avg_us, &latency_p99_us, &latency_avg_ms, &latency_p95_ms, &latency_p99_ms, &lateness_p99_us,
    &read_frame_latency_p99_ms, &write_frame_latency_p99_ms, &service_avg_us, &timer_lateness_p99_ms,
    &timer_lateness_max_ms,
    // errors
    &errors, &err_s, &errors_s, &ignored_errors, &retries, &rollbacks, &reconnects, &reconnects_s, &reconn_s, &attempts,
    &failed_attempts, &arrivals_dropped, &rounded_ios,
    // queues
    &queue_length_avg, &queue_length_max, &queue_len_avg, &queue_len_max, &pool_utilisation_pct, &pool_util_pct,
    &overflow_ios, &max_backlog_ios, &mean_backlog_ios, &backlog_ios, &achieved_qd, &qd_deviation_pct,
    // replayed requests
    &flushes_replayed, &flushes_skipped, &fua_replayed, &fua_skipped, &discards_replayed, &discards_skipped,
    // CPU and memory
    &cpu_usr_pct, &cpu_sys_pct, &cpu_jobs_usr_pct, &cpu_jobs_sys_pct, &cpu_usr_s, &cpu_sys_s, &driver_cpu_pct,
    &driver_rss_peak_mib,
    // time
    &seconds, &measured_s, &elapsed_s, &total_time_s, &execution_time_avg_s, &execution_time_stddev_s, &total_s,
    &baseline_total_s, &load_s, &unpack_s, &process_s, &repack_s, &write_s, &slowdown_vs_ram,
    // device and server
    &swap_out_bytes, &swap_in_bytes, &major_faults, &host_major_faults, &pswpin_pages, &pswpout_pages,
    &device_read_bytes, &device_write_bytes, &swap_in_mb_s, &swap_out_mb_s, &device_read_mb_s, &device_write_mb_s,
    &server_blks_read, &server_blks_hit, &server_commits, &server_wal_bytes, &server_innodb_data_reads,
    &server_innodb_data_writes, &server_innodb_data_read_bytes, &server_innodb_data_written_bytes,
    &server_innodb_data_fsyncs,
    // within-run confidence
    &iops_ci95_low, &iops_ci95_high, &tps_ci95_low, &tps_ci95_high, &rate_ci95_half_width_pct, &batch_means_lag1,
    &batch_means_batches,
    // health
    &efficiency_pct, &ss_attained, &ss_value, &complete, &stopped_by_stopcurve, &stopcurve_at_pct,
    &achieved_pct_of_requested,
    // settings and progress
    &requested_iops, &requested_pct, &point_pct, &trace_iops, &points_run, &time_scale, &threads, &read_pct,
    &mean_size_bytes, &iops_per_desktop, &pass, &done_pct, &phase};

/// The interval rates a test's within-run confidence interval is taken of, with the metrics that
/// hold its bounds (results/record_stats.hpp): a test's headline operation rate, TPS for tpcc and
/// sysbench, IOPS for the I/O kinds.
inline constexpr std::array kRateIntervals{RateInterval{&iops, &iops_ci95_low, &iops_ci95_high},
                                           RateInterval{&tps, &tps_ci95_low, &tps_ci95_high}};

inline constexpr std::array kFamilies{&latency, &service_latency, &lateness, &queue_wait, &service_time};

/// The render phases' time metrics in the order of render/pipeline.hpp kPhaseNames.
inline constexpr std::array kRenderPhaseSeconds{&load_s, &unpack_s, &process_s, &repack_s, &write_s};

/// Names written before issue 31 settled the latency prefix on `latency_`: the interval values
/// lat_<figure>_<unit> (io, vdbench, precondition, replay, vdi, tpcc, sysbench).
inline constexpr std::array<MetricAlias, 5> kAliases{{{"lat_avg_us", "latency_avg_us"},
                                                      {"lat_p99_us", "latency_p99_us"},
                                                      {"lat_avg_ms", "latency_avg_ms"},
                                                      {"lat_p95_ms", "latency_p95_ms"},
                                                      {"lat_p99_ms", "latency_p99_ms"}}};

}  // namespace catalogue

template <class Values>
std::optional<double> value_of(const Values& values, const MetricDef& def) noexcept {
  for (const auto& [n, v] : values) {
    if (n == def.name || (find_metric_def(n) == &def)) {
      if (v == v && v - v == 0) return v;  // finite
      return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace drivelab::results
