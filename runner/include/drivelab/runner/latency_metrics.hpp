#pragma once
/// \file latency_metrics.hpp
/// The one writer of a latency histogram's figures as result metrics: the emulators' headline
/// and per-group latency metrics (io, vdbench, replay, sysbench, tpcc) name and convert them here.
///
/// A figure's metric is named `<prefix>_<figure>_<unit>`: figure `avg` (the mean), `min`, `max`,
/// `sum` (of all samples, sysbench's "sum"), or `p` + the percentile's digits without the decimal
/// point (p50, p95, p99, and p999 for 99.9; LatencyFigure::named gives
/// another, as TPC-C's p99_9). Values are the histogram's nanoseconds divided by
/// 1e3 (us) or 1e6 (ms), as doubles; an empty histogram gives 0 for every figure (histogram.hpp).
/// Metrics are written in the order the figures are given, which is their order in the record.
/// Each metric's `of` (results::MetricSource) names the histogram it is a figure of, as the
/// emulator stores it with TestRecorder::histogram, and the figure's word (latency_figure_word), so
/// a merge of hosts' records recomputes it from the merged histogram (mh-spec, issue 16).
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "drivelab/core/histogram.hpp"
#include "drivelab/results/recorder.hpp"

namespace drivelab::runner {

/// The time unit of latency metrics: the metric's unit string and the name's suffix.
enum class LatencyUnit { us, ms };

/// A duration in ns (a histogram's mean or percentile, a latency) in microseconds or milliseconds,
/// as the `_us` and `_ms` metrics and interval values carry it.
constexpr double ns_to_us(double ns) noexcept { return ns / 1e3; }
constexpr double ns_to_us(std::int64_t ns) noexcept { return static_cast<double>(ns) / 1e3; }
constexpr double ns_to_ms(double ns) noexcept { return ns / 1e6; }
constexpr double ns_to_ms(std::int64_t ns) noexcept { return static_cast<double>(ns) / 1e6; }

/// One figure of a histogram to write, with its metric's description ("" for none).
struct LatencyFigure {
  enum class Stat { avg, percentile, min, max, sum };
  Stat stat = Stat::avg;
  double percentile = 0;  ///< Stat::percentile only: in [0, 100] (LatencyHistogram::percentile)
  std::string_view description;
  /// The figure's part of the metric name when it is not the default (TPC-C's "p99_9"); "" for
  /// the default above.
  std::string_view name;

  // Every member is given (`{}` for the default name): GCC's -Wextra -Wmissing-field-initializers
  // warns on each omitted one, default member initializer or not.
  static constexpr LatencyFigure avg(std::string_view what = {}) { return {Stat::avg, 0, what, {}}; }
  static constexpr LatencyFigure p(double q, std::string_view what = {}) { return {Stat::percentile, q, what, {}}; }
  static constexpr LatencyFigure min(std::string_view what = {}) { return {Stat::min, 0, what, {}}; }
  static constexpr LatencyFigure max(std::string_view what = {}) { return {Stat::max, 0, what, {}}; }
  static constexpr LatencyFigure sum(std::string_view what = {}) { return {Stat::sum, 0, what, {}}; }
  /// This figure under another name in the metric (`p(99.9).named("p99_9")`).
  constexpr LatencyFigure named(std::string_view figure_name) const {
    LatencyFigure f = *this;
    f.name = figure_name;
    return f;
  }
};

/// `<prefix>_<figure>_<unit>` for one figure ("latency", p(99.9), us -> "latency_p999_us").
std::string latency_metric_name(std::string_view prefix, const LatencyFigure& figure, LatencyUnit unit);
/// The figure's word in MetricSource::figure: "avg", "min", "max", "sum", or "p" + the percentile
/// as fmt "{:g}" writes it ("p50", "p99.9"), whatever the metric's name (`named`).
std::string latency_figure_word(const LatencyFigure& figure);
/// The figure's value in `unit` (results::histogram_figure).
double latency_metric_value(const LatencyHistogram& h, const LatencyFigure& figure, LatencyUnit unit);

/// Writes each figure of `h` as a headline metric (TestRecorder::metric), in order. `histogram_name`
/// is the name `h` has (or gets) in the test's histograms: it becomes each metric's `of.histogram`.
/// `family` is the catalogue's declaration of the figures (results/catalogue.hpp: latency,
/// service_latency, lateness, queue_wait, service_time): its prefix starts each name.
void record_latency(results::TestRecorder& rec, const LatencyHistogram& h, std::string_view histogram_name,
                    const results::FigureFamily& family, LatencyUnit unit,
                    std::initializer_list<LatencyFigure> figures);
/// Writes each figure of `h` into the metric group `group` (TestRecorder::group_metric), in order;
/// `histogram_name` as for record_latency.
void record_group_latency(results::TestRecorder& rec, std::string_view group, const LatencyHistogram& h,
                          std::string_view histogram_name, const results::FigureFamily& family, LatencyUnit unit,
                          std::initializer_list<LatencyFigure> figures);

}  // namespace drivelab::runner
