#pragma once
/// \file catalogue/declare.hpp
/// The metric catalogue's declaration helpers (results/catalogue.hpp): constexpr factories of a
/// MetricDef that take only the fields that vary within a kind, so a declaration reads as its
/// name, unit, where it is recorded, who records it and what it means:
///
///     inline constexpr MetricDef ios = operation_count("ios", kHeadline | kGroup | kInterval,
///                                                      "io vdbench replay vdi", "I/Os completed",
///                                                      {.traits = kOperationsFeed | kSummedOverHosts});
///
/// Every factory takes the metric's name as written in the record (so each name stays greppable
/// at its declaration) and its description, or derives it from what the declaration names
/// (interval_figure, host_pressure); the rarer fields (word, traits, host merge, a second unit) go
/// in a trailing MetricOptions. Included by the catalogue's headers; include catalogue.hpp, not this file.
#include <algorithm>
#include <array>
#include <cstddef>

#include "drivelab/results/catalogue_types.hpp"

namespace drivelab::results::catalogue {

/// A string literal as a template argument (interval_figure<latency, "p99">): what a derived
/// description is joined from.
template <std::size_t N>
struct Literal {
  std::array<char, N - 1> chars{};  ///< without the terminating '\0'
  consteval Literal(const char (&s)[N]) { std::copy_n(s, N - 1, chars.begin()); }
  constexpr std::string_view view() const { return {chars.data(), chars.size()}; }
};

/// The length of `parts` joined (kJoined).
template <std::size_t K>
consteval std::size_t total_size(const std::array<std::string_view, K>& parts) {
  std::size_t n = 0;
  for (std::string_view p : parts) n += p.size();
  return n;
}

/// The strings of `parts` (an array of string_views) one after another, in static storage: a
/// description derived at compile time from what its declaration states.
template <const auto& parts>
inline constexpr auto kJoined = [] {
  std::array<char, total_size(parts)> out{};
  auto it = out.begin();
  for (std::string_view p : parts) it = std::copy(p.begin(), p.end(), it);
  return out;
}();
template <const auto& parts>
constexpr std::string_view joined() {
  return {kJoined<parts>.data(), kJoined<parts>.size()};
}

/// The fields of a MetricDef that few declarations set (see MetricDef for each).
struct MetricOptions {
  Direction better = Direction::none;
  std::string_view word{};
  std::uint8_t traits = 0;
  HostMerge merge = HostMerge::by_unit;
  std::optional<Unit> other_unit = std::nullopt;
};

/// Any metric: `kind` and `where` as given, the rest from `o`.
constexpr MetricDef metric(std::string_view name, Unit unit, MetricKind kind, std::uint8_t where,
                           std::string_view recorded_by, std::string_view description, MetricOptions o = {}) {
  return MetricDef{.name = name,
                   .unit = unit,
                   .kind = kind,
                   .better = o.better,
                   .description = description,
                   .recorded_by = recorded_by,
                   .where = where,
                   .word = o.word,
                   .traits = o.traits,
                   .merge = o.merge,
                   .other_unit = o.other_unit};
}

/// The traits of figure `figure` of `family`: the p99 of the interval's latency histogram is charted.
constexpr std::uint8_t family_traits(const FigureFamily& family, std::string_view figure) {
  return static_cast<std::uint8_t>(family.interval_latency && figure == "p99" ? kCharted : 0);
}

/// Figure `figure` ("avg", "p99", "p99.9") of `family` in `unit`, named `name` =
/// `<prefix>_<figure>_<unit>` (catalogue.cpp checks the name); lower is better, recorded where and
/// by whom the family is. The catalogue generates the members no call site names with this too.
constexpr MetricDef family_member(const FigureFamily& family, std::string_view name, std::string_view figure, Unit unit,
                                  std::string_view description) {
  MetricDef d = metric(name, unit, family.kind, family.where, family.recorded_by, description,
                       {.better = Direction::lower, .traits = family_traits(family, figure)});
  d.figure = figure;
  d.family = family.prefix;
  d.of_interval_latency = family.interval_latency;
  return d;
}

/// What the description of a member of an interval-latency family (FigureFamily::interval_latency)
/// says after its figure.
inline constexpr std::string_view kOfIntervalLatency = " (interval values: of the interval's \"latency\" histogram)";
template <const FigureFamily& family, Literal figure>
inline constexpr std::array<std::string_view, 4> kIntervalFigureText{family.prefix, ": ", figure.view(),
                                                                     kOfIntervalLatency};

/// Figure `figure` of interval-latency family `family` in `unit`, named `name` (family_member),
/// where interval values and call sites name it: described as "<prefix>: <figure> (interval
/// values: of the interval's "latency" histogram)".
template <const FigureFamily& family, Literal figure>
constexpr MetricDef interval_figure(std::string_view name, Unit unit) {
  return family_member(family, name, figure.view(), unit, joined<kIntervalFigureText<family, figure>>());
}

/// Operations per second or per minute (IOPS, TPS, tpmC, fps): higher is better.
constexpr MetricDef operation_rate(std::string_view name, Unit unit, std::uint8_t where, std::string_view recorded_by,
                                   std::string_view description, MetricOptions o = {}) {
  o.better = Direction::higher;
  return metric(name, unit, MetricKind::operations, where, recorded_by, description, o);
}

/// Operations done (I/Os, transactions, queries, events), a count.
constexpr MetricDef operation_count(std::string_view name, std::uint8_t where, std::string_view recorded_by,
                                    std::string_view description, MetricOptions o = {}) {
  return metric(name, Unit::count, MetricKind::operations, where, recorded_by, description, o);
}

/// A sizing answer of a curve (runner/curve.hpp max_rate_within; issue 32): a value of the operation
/// rate `rate` (its unit and word) in the headline, per host in a merge (one host's answer is no
/// answer of the hosts together).
constexpr MetricDef sizing_answer(std::string_view name, const MetricDef& rate, std::string_view recorded_by,
                                  std::string_view description) {
  return operation_rate(name, rate.unit, kHeadline, recorded_by, description,
                        {.word = rate.word, .merge = HostMerge::per_host});
}

/// Bytes moved per second in MB/s (MB = 10^6 bytes): higher is better.
constexpr MetricDef throughput_rate(std::string_view name, std::uint8_t where, std::string_view recorded_by,
                                    std::string_view description, MetricOptions o = {}) {
  o.better = Direction::higher;
  return metric(name, Unit::mb_s, MetricKind::throughput, where, recorded_by, description, o);
}

/// Bytes moved, a count of bytes.
constexpr MetricDef bytes_moved(std::string_view name, std::uint8_t where, std::string_view recorded_by,
                                std::string_view description) {
  return metric(name, Unit::bytes, MetricKind::throughput, where, recorded_by, description);
}

/// Failures (a count or a rate): lower is better.
constexpr MetricDef error_metric(std::string_view name, Unit unit, std::uint8_t where, std::string_view recorded_by,
                                 std::string_view description, MetricOptions o = {}) {
  o.better = Direction::lower;
  return metric(name, unit, MetricKind::errors, where, recorded_by, description, o);
}

/// A time where less is better: a latency or lateness figure outside the families, a phase's time.
constexpr MetricDef time_taken(std::string_view name, Unit unit, MetricKind kind, std::uint8_t where,
                               std::string_view recorded_by, std::string_view description, MetricOptions o = {}) {
  o.better = Direction::lower;
  return metric(name, unit, kind, where, recorded_by, description, o);
}

/// Where a running test is: an interval value of kind progress (the pass, the phase, the point).
constexpr MetricDef progress_value(std::string_view name, Unit unit, std::string_view recorded_by,
                                   std::string_view description) {
  return metric(name, unit, MetricKind::progress, kInterval, recorded_by, description);
}

/// A figure of tpcc's connection pool (the transactions waiting for a connection, the busy
/// connections; kind count): the headline's over the measured phase, or an interval's.
constexpr MetricDef pool_figure(std::string_view name, Unit unit, std::uint8_t where, std::string_view description,
                                MetricOptions o = {}) {
  return metric(name, unit, MetricKind::count, where, "tpcc", description, o);
}

/// A bound of the within-run 95% confidence interval of an operation rate (results/record_stats.hpp;
/// headline, per host in a merge: a bound of one host's interval is not a bound of the hosts' sum).
constexpr MetricDef rate_bound(std::string_view name, std::string_view recorded_by, std::string_view word,
                               std::string_view description) {
  return metric(name, Unit::per_s, MetricKind::operations, kHeadline, recorded_by, description,
                {.word = word, .merge = HostMerge::per_host});
}

/// A figure of how the within-run confidence interval was taken, for every kind that has one
/// (headline, per host in a merge).
constexpr MetricDef confidence_figure(std::string_view name, Unit unit, MetricKind kind, std::string_view description) {
  return metric(name, unit, kind, kHeadline, "io vdbench replay vdi tpcc sysbench", description,
                {.merge = HostMerge::per_host});
}

/// A counter of the whole database server over the measured phase (tpcc headline; HostMerge::server).
constexpr MetricDef server_counter(std::string_view name, Unit unit, std::string_view description) {
  return metric(name, unit, MetricKind::device, kHeadline, "tpcc", description, {.merge = HostMerge::server});
}

/// Recorded by the runner's device and host telemetry for every test ("all"), headline and
/// interval, on the summary's device line: a rate the hosts of a merge add up.
constexpr MetricDef device_rate(std::string_view name, Unit unit, std::string_view description) {
  return metric(name, unit, MetricKind::device, kHeadline | kInterval, "all", description,
                {.traits = kDeviceLine | kSummedOverHosts});
}

/// As device_rate, a figure that does not add up over hosts (per host in a merge): a mean, a
/// share of time, a percentage of the host's CPUs.
constexpr MetricDef telemetry_gauge(std::string_view name, Unit unit, MetricKind kind, std::string_view description) {
  return metric(name, unit, kind, kHeadline | kInterval, "all", description,
                {.traits = kDeviceLine, .merge = HostMerge::per_host});
}

/// The host's CPU time in one state, percent of all CPUs (/proc/stat): a telemetry_gauge.
constexpr MetricDef host_cpu_share(std::string_view name, std::string_view description) {
  return telemetry_gauge(name, Unit::pct, MetricKind::cpu, description);
}

/// The lines of a /proc/pressure file: `some` (some task stalled), `full` (all non-idle tasks at once).
enum class Stall { some, full };
template <Literal resource, Literal word, Stall line>
inline constexpr std::array<std::string_view, 7> kPressureText{"share of time ",
                                                               line == Stall::some ? "some task" : "all non-idle tasks",
                                                               " stalled on ",
                                                               word.view(),
                                                               " (/proc/pressure/",
                                                               resource.view(),
                                                               ")"};

/// The share of time of line `line` of /proc/pressure/`resource` (`word`: what the tasks stalled
/// on, "I/O"), named `name`: a telemetry_gauge in % of kind device, described as "share of time
/// some task|all non-idle tasks stalled on <word> (/proc/pressure/<resource>)".
template <Literal resource, Literal word, Stall line>
constexpr MetricDef host_pressure(std::string_view name) {
  return telemetry_gauge(name, Unit::pct, MetricKind::device, joined<kPressureText<resource, word, line>>());
}

/// The device's requests of one direction over the measured phase (headline only, every test).
constexpr MetricDef device_total(std::string_view name, std::string_view description) {
  return metric(name, Unit::count, MetricKind::device, kHeadline, "all", description, {.traits = kDeviceLine});
}

/// The device's demand per unit of the application's work over the measured phase (headline,
/// per host in a merge).
constexpr MetricDef device_per_work(std::string_view name, Unit unit, std::string_view recorded_by,
                                    std::string_view description) {
  return metric(name, unit, MetricKind::device, kHeadline, recorded_by, description,
                {.traits = kDeviceLine, .merge = HostMerge::per_host});
}

}  // namespace drivelab::results::catalogue
