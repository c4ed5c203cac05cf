#include "drivelab/runner/curve.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "drivelab/results/summary.hpp"

namespace drivelab::runner {

std::uint64_t curve_rate(double max_iops, double pct) noexcept {
  if (!(max_iops > 0) || !(pct > 0)) return 0;
  // vdbench: newrate = (int) max * (int) pct / 100 in integer arithmetic; fractional percentages
  // (which vdbench truncates) keep their fraction here.
  const double raw = std::floor(std::floor(max_iops) * pct / 100.0 + 1e-9);
  auto r = static_cast<std::uint64_t>(raw);
  if (r > 1000)
    r = (r + 99) / 100 * 100;
  else
    r = (r + 9) / 10 * 10;
  return r;
}

std::vector<double> decode_curve(const config::Node& curve) {
  if (!curve.is_sequence() || curve.elements().empty()) {
    curve.error("expected a list of percentages of the max run, e.g. [10, 50, 70, 80, 90, 100, 110, 120]");
    return {};
  }
  if (const std::size_t n = curve.elements().size(); n > kMaxCurvePoints) {
    curve.error(
        fmt::format("{} curve points; at most {} (each point is a run of warm-up and measured time: "
                    "vdbench's curves have about ten)",
                    n, kMaxCurvePoints));
    return {};
  }
  std::vector<double> pts;
  for (const config::Node& e : curve.elements()) {
    std::string text = e.is_scalar() ? e.scalar() : std::string();
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
    if (!text.empty() && text.back() == '%') text.pop_back();
    char* end = nullptr;
    const double v = text.empty() ? NAN : std::strtod(text.c_str(), &end);
    if (!e.is_scalar()) {
      e.error(fmt::format("expected a percentage of the max run, found {}", e.is_map() ? "a mapping" : "a sequence"));
    } else if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v)) {
      e.error(fmt::format("expected a percentage of the max run, found '{}'", e.scalar()));
    } else if (!(v > 0) || v > 1000) {
      e.error(fmt::format("curve points must be above 0 and at most 1000%, found {}", v));
    } else if (const auto same = std::find_if(pts.begin(), pts.end(),
                                              [&](double p) { return curve_point_group(p) == curve_point_group(v); });
               same != pts.end()) {
      // Each point is recorded as its own group (curve_point_group): a repeated point would
      // overwrite the other's figures.
      e.error(fmt::format("curve point {} repeats the point {} (group {}); each point must differ", v, *same,
                          curve_point_group(v)));
    } else {
      pts.push_back(v);
    }
  }
  return pts;
}

std::string curve_point_group(double pct) {
  if (std::abs(pct - std::round(pct)) < 1e-9) return fmt::format("point_{:03}", static_cast<long>(std::lround(pct)));
  std::string s = fmt::format("point_{}", pct);
  std::replace(s.begin(), s.end(), '.', '_');
  return s;
}

std::string rate_curve_schedule(std::size_t points, const TestSettings& settings) {
  const double w = std::chrono::duration<double>(settings.warmup).count();
  const double d = std::chrono::duration<double>(settings.duration).count();
  return fmt::format(
      "rate: curve: closed-loop max run + {} open-loop points, each warm-up {:.0f} s + measured {:.0f} s: {:.0f} s "
      "after the load",
      points, w, d, static_cast<double>(1 + points) * (w + d));
}

double run_rate_curve(const TestContext& ctx, double max_rate, const std::vector<double>& curve,
                      const std::function<bool()>& stopped,
                      const std::function<bool(const RateCurvePoint&)>& run_point) {
  std::array<double, 2> max_run{max_rate, stopped() ? 1.0 : 0.0};
  ctx.sum_over_hosts(max_run, "curve max run");
  const double hosts = static_cast<double>(ctx.hosts());
  for (std::size_t i = 0; i < curve.size() && max_run[1] == 0 && max_run[0] > 0; ++i) {
    const RateCurvePoint point{.index = i + 1,
                               .pct = curve[i],
                               .group = curve_point_group(curve[i]),
                               .rate_per_s = max_run[0] * curve[i] / 100.0 / hosts};
    std::array<double, 1> point_stopped{stopped() || run_point(point) ? 1.0 : 0.0};
    ctx.sum_over_hosts(point_stopped, "curve point");
    if (point_stopped[0] > 0) break;
  }
  return max_run[0] > 0 ? max_run[0] : 0.0;
}

std::string_view to_string(SloOutcome o) noexcept {
  switch (o) {
    case SloOutcome::interpolated: return "interpolated";
    case SloOutcome::first_point_exceeds: return "first_point_exceeds";
    case SloOutcome::bound_not_reached: return "bound_not_reached";
    case SloOutcome::no_points: return "no_points";
  }
  return "?";
}

SloAnswer max_rate_within(std::vector<CurveSample> points, double bound) {
  std::erase_if(points, [](const CurveSample& p) { return !std::isfinite(p.rate) || !std::isfinite(p.value); });
  std::stable_sort(points.begin(), points.end(),
                   [](const CurveSample& a, const CurveSample& b) { return a.rate < b.rate; });
  SloAnswer a;
  if (points.empty()) return a;
  const auto beyond = std::find_if(points.begin(), points.end(), [&](const CurveSample& p) { return p.value > bound; });
  if (beyond == points.end()) {
    a.outcome = SloOutcome::bound_not_reached;
    a.rate = points.back().rate;
    a.below = points.back();
    return a;
  }
  a.above = *beyond;
  if (beyond == points.begin()) {
    a.outcome = SloOutcome::first_point_exceeds;
    return a;
  }
  const CurveSample& lo = *(beyond - 1);
  const CurveSample& hi = *beyond;
  a.below = lo;
  a.outcome = SloOutcome::interpolated;
  // hi.value > bound >= lo.value, so the denominator is positive.
  a.fraction = (bound - lo.value) / (hi.value - lo.value);
  a.rate = lo.rate + a.fraction * (hi.rate - lo.rate);
  return a;
}

namespace {

std::string rate_text(double rate, std::string_view word) {
  return word == "IOPS" ? results::format_iops(rate) : results::format_rate(rate, word);
}

std::string point_text(const CurveSample& p, std::string_view word) {
  return fmt::format("{} {} at {}", p.group, rate_text(p.rate, word), results::format_latency(p.value, "ms"));
}

std::string reason(const SloAnswer& a, const SloBound& b, std::string_view word) {
  switch (a.outcome) {
    case SloOutcome::interpolated:
      return fmt::format("interpolated between {} and {}", point_text(*a.below, word), point_text(*a.above, word));
    case SloOutcome::first_point_exceeds:
      return fmt::format("none: the lowest point, {}, is already above {:g} ms; run lower curve points",
                         point_text(*a.above, word), b.bound_ms);
    case SloOutcome::bound_not_reached:
      return fmt::format(
          "bound not reached: every point is within it, the highest is {}; the answer is above "
          "what was measured",
          point_text(*a.below, word));
    case SloOutcome::no_points: return "none: no curve point was measured";
  }
  return {};
}

results::Json sample_json(const std::optional<CurveSample>& p) {
  if (!p) return nullptr;
  return {{"group", p->group}, {"rate", p->rate}, {"value_ms", p->value}};
}

}  // namespace

std::string describe(const SloAnswer& a, const SloBound& b, std::string_view rate_word) {
  return fmt::format("max {} with {} <= {:g} ms: {} ({})", rate_word, b.figure, b.bound_ms,
                     a.outcome == SloOutcome::interpolated || a.outcome == SloOutcome::bound_not_reached
                         ? rate_text(a.rate, rate_word)
                         : "none",
                     reason(a, b, rate_word));
}

results::Json to_json(const SloAnswer& a, const SloBound& b, std::string_view metric, std::string_view rate_word) {
  return {{"key", b.key},
          {"figure", b.figure},
          {"bound_ms", b.bound_ms},
          {"metric", metric},
          {"answer", a.rate},
          {"rate_unit", rate_word},
          {"outcome", to_string(a.outcome)},
          {"reason", reason(a, b, rate_word)},
          {"below", sample_json(a.below)},
          {"above", sample_json(a.above)}};
}

SloAnswers answer_slo(results::TestRecorder& rec, std::vector<SloQuestion> questions, std::string_view metric,
                      std::string_view rate_word) {
  SloAnswers out;
  bool first = true;
  for (SloQuestion& q : questions) {
    const SloAnswer a = max_rate_within(std::move(q.samples), q.bound.bound_ms);
    const std::string line = describe(a, q.bound, rate_word);
    rec.message(line);
    out.details.push_back(to_json(a, q.bound, metric, rate_word));
    if (first || a.rate < out.binding.rate) {
      out.binding = a;
      out.binding_text = line;
    }
    first = false;
  }
  if (questions.size() > 1) out.binding_text = "within every slo bound; the lowest: " + out.binding_text;
  return out;
}

double figure_at(const SloAnswer& a, const std::function<double(const std::string& group)>& figure_of) {
  switch (a.outcome) {
    case SloOutcome::interpolated: {
      const double lo = figure_of(a.below->group);
      return lo + a.fraction * (figure_of(a.above->group) - lo);
    }
    case SloOutcome::bound_not_reached: return figure_of(a.below->group);
    case SloOutcome::first_point_exceeds:
    case SloOutcome::no_points: break;
  }
  return 0.0;
}

}  // namespace drivelab::runner
