#include "drivelab/core/steady_state.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

namespace drivelab {
namespace {

struct MetricName {
  std::string_view word;
  SteadyMetric metric;
  bool slope;
};
constexpr MetricName kNames[] = {
    {"iops", SteadyMetric::iops, false}, {"iops_slope", SteadyMetric::iops, true},
    {"bw", SteadyMetric::bw, false},     {"bw_slope", SteadyMetric::bw, true},
    {"lat", SteadyMetric::lat, false},   {"lat_slope", SteadyMetric::lat, true},
};

}  // namespace

SteadyStateCriterion SteadyStateCriterion::parse(std::string_view text) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos)
    throw std::invalid_argument(fmt::format("expected <metric>:<limit> such as iops_slope:0.5%, found '{}'", text));
  const std::string_view word = text.substr(0, colon);
  std::string_view limit = text.substr(colon + 1);
  SteadyStateCriterion c;
  bool known = false;
  for (const auto& n : kNames)
    if (n.word == word) {
      c.metric = n.metric;
      c.slope = n.slope;
      known = true;
    }
  if (!known)
    throw std::invalid_argument(
        fmt::format("unknown steady-state metric '{}' (use iops, iops_slope, bw, bw_slope, lat, lat_slope)", word));
  if (!limit.empty() && limit.back() == '%') {
    c.percent = true;
    limit.remove_suffix(1);
  }
  const std::string digits(limit);
  char* end = nullptr;
  const double v = digits.empty() ? 0.0 : std::strtod(digits.c_str(), &end);
  if (digits.empty() || end != digits.c_str() + digits.size() || !(v > 0) || !std::isfinite(v))
    throw std::invalid_argument(fmt::format("the limit must be a positive number, found '{}'", limit));
  c.limit = v;
  return c;
}

std::string SteadyStateCriterion::to_string() const {
  std::string_view word = "iops";
  for (const auto& n : kNames)
    if (n.metric == metric && n.slope == slope) word = n.word;
  return fmt::format("{}:{}{}", word, limit, percent ? "%" : "");
}

SteadyStateEval evaluate_steady_state(const SteadyStateCriterion& criterion, std::span<const double> window) {
  SteadyStateEval e;
  const std::size_t n = window.size();
  if (n == 0) return e;
  double sum = 0;
  for (double y : window) sum += y;
  e.mean = sum / static_cast<double>(n);
  for (double y : window) e.deviation = std::max(e.deviation, std::abs(y - e.mean));
  if (n >= 2) {
    // Least squares with x = 0..n-1: slope = sum((x - mx)(y - my)) / sum((x - mx)^2).
    const double mx = static_cast<double>(n - 1) / 2.0;
    double sxy = 0, sxx = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double dx = static_cast<double>(i) - mx;
      sxy += dx * (window[i] - e.mean);
      sxx += dx * dx;
    }
    e.slope = sxy / sxx;
  }
  const double raw = criterion.slope ? std::abs(e.slope) : e.deviation;
  if (criterion.percent)
    e.value = e.mean != 0 ? 100.0 * raw / std::abs(e.mean) : (raw == 0 ? 0.0 : INFINITY);
  else
    e.value = raw;
  e.attained = e.value < criterion.limit;
  return e;
}

SteadyStateDetector::SteadyStateDetector(SteadyStateCriterion criterion, std::size_t window_samples,
                                         std::size_t ramp_samples)
    : criterion_(criterion), window_samples_(std::max<std::size_t>(window_samples, 2)), ramp_samples_(ramp_samples) {}

void SteadyStateDetector::add(double value) {
  ++samples_;
  if (samples_ <= ramp_samples_) return;
  window_.push_back(value);
  if (window_.size() > window_samples_) window_.pop_front();
  if (!window_full()) return;
  const std::vector<double> w(window_.begin(), window_.end());
  last_ = evaluate_steady_state(criterion_, w);
  if (last_.attained && first_attained_at_ == 0) first_attained_at_ = samples_;
}

}  // namespace drivelab
