#include "drivelab/runner/latency_metrics.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace drivelab::runner {
namespace {

std::string_view unit_text(LatencyUnit unit) noexcept { return unit == LatencyUnit::us ? "us" : "ms"; }

std::string figure_text(const LatencyFigure& f) {
  if (!f.name.empty()) return std::string(f.name);
  std::string digits = latency_figure_word(f);  // 99.9 -> "p99.9" -> "p999"
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  return digits;
}

results::Metric figure_metric(const LatencyHistogram& h, std::string_view histogram_name, std::string_view prefix,
                              LatencyUnit unit, const LatencyFigure& f) {
  return results::Metric{latency_metric_name(prefix, f, unit), latency_metric_value(h, f, unit),
                         std::string(unit_text(unit)), std::string(f.description),
                         results::MetricSource{std::string(histogram_name), latency_figure_word(f)}};
}

}  // namespace

std::string latency_figure_word(const LatencyFigure& f) {
  switch (f.stat) {
    case LatencyFigure::Stat::avg: return "avg";
    case LatencyFigure::Stat::min: return "min";
    case LatencyFigure::Stat::max: return "max";
    case LatencyFigure::Stat::sum: return "sum";
    case LatencyFigure::Stat::percentile: break;
  }
  return fmt::format("p{:g}", f.percentile);
}

std::string latency_metric_name(std::string_view prefix, const LatencyFigure& figure, LatencyUnit unit) {
  return fmt::format("{}_{}_{}", prefix, figure_text(figure), unit_text(unit));
}

double latency_metric_value(const LatencyHistogram& h, const LatencyFigure& figure, LatencyUnit unit) {
  // Every word latency_figure_word writes and both units are known to histogram_figure.
  return results::histogram_figure(h, latency_figure_word(figure), unit_text(unit)).value_or(0.0);
}

void record_latency(results::TestRecorder& rec, const LatencyHistogram& h, std::string_view histogram_name,
                    const results::FigureFamily& family, LatencyUnit unit,
                    std::initializer_list<LatencyFigure> figures) {
  for (const LatencyFigure& f : figures) rec.metric(figure_metric(h, histogram_name, family.prefix, unit, f));
}

void record_group_latency(results::TestRecorder& rec, std::string_view group, const LatencyHistogram& h,
                          std::string_view histogram_name, const results::FigureFamily& family, LatencyUnit unit,
                          std::initializer_list<LatencyFigure> figures) {
  for (const LatencyFigure& f : figures)
    rec.group_metric(group, figure_metric(h, histogram_name, family.prefix, unit, f));
}

}  // namespace drivelab::runner
