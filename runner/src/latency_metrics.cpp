#include "drivelab/runner/latency_metrics.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace drivelab::runner {
namespace {

std::string_view unit_text(LatencyUnit unit) noexcept { return unit == LatencyUnit::us ? "us" : "ms"; }

std::string figure_text(const LatencyFigure& f) {
  if (!f.name.empty()) return std::string(f.name);
  switch (f.stat) {
    case LatencyFigure::Stat::avg: return "avg";
    case LatencyFigure::Stat::min: return "min";
    case LatencyFigure::Stat::max: return "max";
    case LatencyFigure::Stat::sum: return "sum";
    case LatencyFigure::Stat::percentile: break;
  }
  std::string digits = fmt::format("p{:g}", f.percentile);  // 99.9 -> "p99.9" -> "p999"
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  return digits;
}

}  // namespace

std::string latency_metric_name(std::string_view prefix, const LatencyFigure& figure, LatencyUnit unit) {
  return fmt::format("{}_{}_{}", prefix, figure_text(figure), unit_text(unit));
}

double latency_metric_value(const LatencyHistogram& h, const LatencyFigure& figure, LatencyUnit unit) noexcept {
  const double per_unit_ns = unit == LatencyUnit::us ? 1e3 : 1e6;
  switch (figure.stat) {
    case LatencyFigure::Stat::avg: return h.mean() / per_unit_ns;
    case LatencyFigure::Stat::percentile: return static_cast<double>(h.percentile(figure.percentile)) / per_unit_ns;
    case LatencyFigure::Stat::min: return static_cast<double>(h.min()) / per_unit_ns;
    case LatencyFigure::Stat::max: return static_cast<double>(h.max()) / per_unit_ns;
    case LatencyFigure::Stat::sum: return h.sum_ns() / per_unit_ns;
  }
  return 0;
}

void record_latency(results::TestRecorder& rec, const LatencyHistogram& h, std::string_view prefix, LatencyUnit unit,
                    std::initializer_list<LatencyFigure> figures) {
  for (const LatencyFigure& f : figures)
    rec.metric(latency_metric_name(prefix, f, unit), latency_metric_value(h, f, unit), std::string(unit_text(unit)),
               std::string(f.description));
}

void record_group_latency(results::TestRecorder& rec, std::string_view group, const LatencyHistogram& h,
                          std::string_view prefix, LatencyUnit unit, std::initializer_list<LatencyFigure> figures) {
  for (const LatencyFigure& f : figures)
    rec.group_metric(group, latency_metric_name(prefix, f, unit), latency_metric_value(h, f, unit),
                     std::string(unit_text(unit)), std::string(f.description));
}

}  // namespace drivelab::runner
