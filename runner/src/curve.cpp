#include "drivelab/runner/curve.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cctype>
#include <cmath>
#include <limits>
#include <cstdlib>

#include <fmt/format.h>

#include "drivelab/config/map_reader.hpp"
#include "drivelab/results/summary.hpp"
#include "drivelab/runner/latency_metrics.hpp"

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
    curve.error(fmt::format("{}: give a list of percentages of the max run, e.g. [10, 50, 70, 80, 90, 100, 110, 120]",
                            curve.is_sequence() ? "the curve is an empty list" : "expected a list"));
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

std::vector<SloBound> decode_slo(const config::Node& n, std::span<const SloSubject> subjects,
                                 std::string_view keys_hint) {
  std::vector<SloBound> out;
  if (!n.defined()) return out;
  config::MapReader r(n);
  bool given = false;
  for (int pct : kOltpSloPercentiles) {
    for (const SloSubject& s : subjects) {
      const std::string key = (s.name.empty() ? std::string() : std::string(s.name) + "_") + fmt::format("p{}_ms", pct);
      given = given || (n.is_map() && n.child(key).defined());
      double ms = 0;
      if (r.number(key, ms, {.min = 0.001, .max = 1e7}))
        out.push_back({.key = key,
                       .figure = fmt::format(fmt::runtime(s.figure), fmt::format("p{}", pct)),
                       .bound_ms = ms,
                       .percentile = static_cast<double>(pct),
                       .subject = std::string(s.name)});
    }
  }
  r.finish();
  if (!given && (n.is_map() || n.is_null()))  // anything else: MapReader said what it is
    n.error(fmt::format("slo needs at least one bound in ms{}", keys_hint));
  return out;
}

void rate_to_json(results::Json& j, double rate_per_s, bool rate_curve, const std::vector<double>& curve,
                  const std::vector<SloBound>& slo) {
  if (rate_per_s > 0) j["rate"] = rate_per_s;
  if (!rate_curve) return;
  j["rate"] = "curve";
  j["curve"] = curve;
  if (slo.empty()) return;
  results::Json bounds = results::Json::object();
  for (const SloBound& b : slo) bounds[b.key] = b.bound_ms;
  j["slo"] = std::move(bounds);
}

std::string slo_without_curve_warning(const config::Node& slo, bool rate_curve) {
  if (!slo.defined() || rate_curve) return {};
  return config::Diagnostic{slo.location(), slo.path(),
                            "the sizing answers are read off a curve; this test is not one (rate: curve), so slo "
                            "is ignored"}
      .to_string();
}

void check_rate_for_duration(const config::Node& section, double rate_per_s, const TestSettings& settings) {
  const double seconds = std::chrono::duration<double>(settings.duration).count();
  if (!(rate_per_s > 0) || rate_per_s * seconds >= 1.0) return;
  section.child("rate").error(
      fmt::format("rate {:g}/s over the measured {:g} s expects {:.3g} arrivals, fewer than one: the test would "
                  "measure nothing; raise rate to at least {:.3g}/s or the duration",
                  rate_per_s, seconds, rate_per_s * seconds, seconds > 0 ? 1.0 / seconds : 1.0));
}

double rate_tolerance(double requested, double measured_s) noexcept {
  // The arrivals of a Poisson process over the measured time: mean and variance requested x time.
  return std::max(kRateHeldShare, 3.0 / std::sqrt(std::max(requested * measured_s, 1.0)));
}

bool rate_held(double requested, double achieved, double measured_s) noexcept {
  return !(requested > 0) || achieved >= requested * (1.0 - rate_tolerance(requested, measured_s));
}

std::string nothing_completed(double rate_per_s, double measured_s) {
  if (rate_per_s > 0)
    return fmt::format(
        "the measured phase ({:.3g} s) completed no transaction: at rate {:g}/s about {:.3g} arrivals were "
        "expected; nothing was measured (raise rate or the duration)",
        measured_s, rate_per_s, rate_per_s * measured_s);
  return fmt::format(
      "the measured phase ({:.3g} s) completed no transaction: nothing was measured (the database answered none "
      "in time: see the server's log, or lengthen the duration)",
      measured_s);
}

std::string curve_point_start_line(const RateCurvePoint& p) {
  return fmt::format("curve point {:g}%: {} requested (open loop)", p.pct, results::format_rate(p.rate_per_s, "TPS"));
}

std::string cut_point_line(const std::string& group, double measured_s, std::chrono::nanoseconds duration) {
  return fmt::format("{} was cut {:.3g} s into its {:g} s measured phase: left out of the curve and its answer", group,
                     measured_s, std::chrono::duration<double>(duration).count());
}

void record_curve_run_rates(results::TestRecorder& rec, const std::string& group, double requested_pct,
                            double requested_tps, std::uint64_t arrivals, double measured_s, double tps,
                            std::string_view tps_what) {
  rec.group_metric(group, results::catalogue::requested_pct, requested_pct,
                   "of the max run's TPS; 0 = the closed-loop max run");
  if (requested_tps > 0)
    rec.group_metric(group, results::catalogue::arrival_rate,
                     measured_s > 0 ? static_cast<double>(arrivals) / measured_s : 0.0,
                     fmt::format("arrivals per second (requested {:.1f})", requested_tps));
  rec.group_metric(group, results::catalogue::tps, tps, std::string(tps_what));
}

void record_curve_run_latency(results::TestRecorder& rec, const std::string& group, const LatencyHistogram& h,
                              std::string_view histogram_name) {
  using Figure = LatencyFigure;
  record_group_latency(rec, group, h, histogram_name, results::catalogue::latency, LatencyUnit::ms,
                       {Figure::avg(), Figure::p(50), Figure::p(90), Figure::p(95), Figure::p(99), Figure::max()});
}

std::string above_max_run(const std::string& group, double achieved, double max_run, double measured_s) {
  if (!(max_run > 0) || !(achieved > max_run * (1.0 + rate_tolerance(max_run, measured_s)))) return {};
  return fmt::format(
      "{} completed {}, {:.1f}% more than the max run's {} (closed loop): the max run was not the maximum "
      "(with every session busy the database served less, or it ran colder); the percentages of the curve "
      "are of the max run, the sizing answer reads every run's achieved rate",
      group, results::format_rate(achieved, "TPS"), 100.0 * (achieved / max_run - 1.0),
      results::format_rate(max_run, "TPS"));
}

std::string curve_run_line(const std::string& group, double pct, double requested, double achieved, double p99_ms,
                           double measured_s) {
  const std::string p99 =
      std::isfinite(p99_ms) ? "p99 " + results::format_latency(p99_ms, "ms") : std::string("no transaction completed");
  if (!(requested > 0))
    return fmt::format("curve {} run: {} (closed loop), {}", group, results::format_rate(achieved, "TPS"), p99);
  std::string line = fmt::format("curve point {:g}%: requested {}, achieved {} ({:.1f}%), {}", pct,
                                 results::format_rate(requested, "TPS"), results::format_rate(achieved, "TPS"),
                                 100.0 * achieved / requested, p99);
  if (!rate_held(requested, achieved, measured_s))
    line += fmt::format("; SATURATED: achieved less than {:.1f}% of the requested rate",
                        100.0 * (1.0 - rate_tolerance(requested, measured_s)));
  return line;
}

RateCurveResult run_rate_curve(const TestContext& ctx, double max_rate, const std::vector<double>& curve,
                               const std::function<bool()>& stopped,
                               const std::function<bool(const RateCurvePoint&)>& run_point) {
  std::array<double, 2> max_run{max_rate, stopped() ? 1.0 : 0.0};
  ctx.sum_over_hosts(max_run, "curve max run");
  const double hosts = static_cast<double>(ctx.hosts());
  RateCurveResult out{.max_rate = max_run[0] > 0 ? max_run[0] : 0.0, .complete = max_run[1] == 0};
  for (std::size_t i = 0; i < curve.size() && out.complete && out.max_rate > 0; ++i) {
    const RateCurvePoint point{.index = i + 1,
                               .pct = curve[i],
                               .group = curve_point_group(curve[i]),
                               .rate_per_s = max_run[0] * curve[i] / 100.0 / hosts};
    std::array<double, 1> point_stopped{stopped() || run_point(point) ? 1.0 : 0.0};
    ctx.sum_over_hosts(point_stopped, "curve point");
    out.complete = point_stopped[0] == 0;
  }
  return out;
}

std::string_view to_string(SloOutcome o) noexcept {
  switch (o) {
    case SloOutcome::interpolated: return "interpolated";
    case SloOutcome::first_point_exceeds: return "first_point_exceeds";
    case SloOutcome::bound_not_reached: return "bound_not_reached";
    case SloOutcome::no_points: return "no_points";
    case SloOutcome::interrupted_lower_bound: return "interrupted_lower_bound";
  }
  return "?";
}

bool SloAnswer::is_headline() const noexcept {
  return outcome == SloOutcome::interpolated || outcome == SloOutcome::bound_not_reached;
}

SloAnswer qualify(SloAnswer a, std::string cut_after) {
  a.cut_after = std::move(cut_after);
  if (!a.cut_after.empty() && a.outcome == SloOutcome::bound_not_reached)
    a.outcome = SloOutcome::interrupted_lower_bound;
  return a;
}

double curve_sample_requested(double requested_rate) noexcept {
  return requested_rate > 0 ? requested_rate : std::numeric_limits<double>::infinity();
}

SloAnswer max_rate_within(std::vector<CurveSample> points, double bound) {
  std::erase_if(points, [](const CurveSample& p) { return !std::isfinite(p.rate) || !std::isfinite(p.value); });
  const auto order = [](const CurveSample& p) { return p.requested > 0 ? p.requested : p.rate; };
  std::stable_sort(points.begin(), points.end(),
                   [&](const CurveSample& a, const CurveSample& b) { return order(a) < order(b); });
  SloAnswer a;
  if (points.empty()) return a;
  const auto beyond = std::find_if(points.begin(), points.end(), [&](const CurveSample& p) { return p.value > bound; });
  if (beyond == points.end()) {  // every point within: the highest rate any of them achieved
    a.outcome = SloOutcome::bound_not_reached;
    a.below = *std::max_element(points.begin(), points.end(),
                                [](const CurveSample& x, const CurveSample& y) { return x.rate < y.rate; });
    a.rate = a.below->rate;
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
  // hi.value > bound >= lo.value, so the denominator is positive. A point beyond that achieved no more than the
  // one within (overloaded, it delivered less): the rate measured within the bound is the answer.
  a.fraction = hi.rate > lo.rate ? (bound - lo.value) / (hi.value - lo.value) : 0.0;
  a.rate = lo.rate + a.fraction * (hi.rate - lo.rate);
  // A point before the crossing that achieved more than that (the curve's rates fell as it was pushed): its rate was
  // measured within the bound, so it is the answer.
  const auto best = std::max_element(points.begin(), beyond,
                                     [](const CurveSample& x, const CurveSample& y) { return x.rate < y.rate; });
  if (best->rate > a.rate) {
    a.below = *best;
    a.fraction = 0;
    a.rate = best->rate;
  }
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
      return fmt::format("the lowest point, {}, is already above {:g} ms; run lower curve points",
                         point_text(*a.above, word), b.bound_ms);
    case SloOutcome::bound_not_reached:
      return fmt::format(
          "bound not reached: every point is within it, the highest is {}; the answer is above "
          "what was measured",
          point_text(*a.below, word));
    case SloOutcome::no_points: return "no curve point was measured";
    case SloOutcome::interrupted_lower_bound:
      return fmt::format(
          "curve interrupted after {}: every point run is within the bound, the highest is {}; only a lower "
          "bound of a partial curve, not the answer",
          a.cut_after, point_text(*a.below, word));
  }
  return {};
}

std::string full_reason(const SloAnswer& a, const SloBound& b, std::string_view word) {
  std::string r = reason(a, b, word);
  if (!a.cut_after.empty() && a.outcome != SloOutcome::interrupted_lower_bound)
    r += fmt::format("; the curve was cut after {}", a.cut_after);
  return r;
}

results::Json sample_json(const std::optional<CurveSample>& p) {
  if (!p) return nullptr;
  return {{"group", p->group}, {"rate", p->rate}, {"value_ms", p->value}};
}

}  // namespace

std::string describe(const SloAnswer& a, const SloBound& b, std::string_view rate_word) {
  std::string answer = "none";
  if (a.is_headline()) answer = rate_text(a.rate, rate_word);
  if (a.outcome == SloOutcome::interrupted_lower_bound) answer = "at least " + rate_text(a.rate, rate_word);
  return fmt::format("max {} with {} <= {:g} ms: {} ({})", rate_word, b.figure, b.bound_ms, answer,
                     full_reason(a, b, rate_word));
}

results::Json to_json(const SloAnswer& a, const SloBound& b, std::string_view metric, std::string_view rate_word) {
  const bool none = a.outcome == SloOutcome::first_point_exceeds || a.outcome == SloOutcome::no_points;
  results::Json j{{"key", b.key},
                  {"figure", b.figure},
                  {"bound_ms", b.bound_ms},
                  {"metric", metric},
                  {"answer", none ? results::Json(nullptr) : results::Json(a.rate)},
                  {"rate_unit", rate_word},
                  {"outcome", to_string(a.outcome)},
                  {"reason", full_reason(a, b, rate_word)},
                  {"below", sample_json(a.below)},
                  {"above", sample_json(a.above)}};
  if (!a.cut_after.empty()) j["cut_after"] = a.cut_after;
  return j;
}

void record_slo_answers(results::TestRecorder& rec, std::vector<SloQuestion> questions, const SloRecording& how) {
  if (questions.empty()) return;
  results::Json details = results::Json::array();
  std::optional<SloAnswer> binding;  // within every bound: the lowest answer
  std::string binding_text;
  for (SloQuestion& q : questions) {
    const SloAnswer a = qualify(max_rate_within(std::move(q.samples), q.bound.bound_ms), how.cut_after);
    const std::string line = describe(a, q.bound, how.rate_word);
    rec.message(line);
    details.push_back(to_json(a, q.bound, how.rate_metric->name, how.rate_word));
    const bool lower = binding && (a.rate < binding->rate || (a.rate == binding->rate && !a.is_headline()));
    if (!binding || lower) {
      binding = a;
      binding_text = line;
    }
  }
  if (questions.size() > 1) binding_text = "within every slo bound; the lowest: " + binding_text;
  if (binding->is_headline()) {
    rec.metric(*how.rate_metric, binding->rate, binding_text);
    rec.metric(*how.figure_metric, figure_at(*binding, how.figure_of),
               fmt::format("{} interpolated between the same runs: {}", how.figure_word, binding_text));
  }
  rec.detail("slo", std::move(details));
}

double figure_at(const SloAnswer& a, const std::function<double(const std::string& group)>& figure_of) {
  switch (a.outcome) {
    case SloOutcome::interpolated: {
      const double lo = figure_of(a.below->group);
      return lo + a.fraction * (figure_of(a.above->group) - lo);
    }
    case SloOutcome::bound_not_reached: return figure_of(a.below->group);
    case SloOutcome::first_point_exceeds:
    case SloOutcome::no_points:
    case SloOutcome::interrupted_lower_bound: break;
  }
  return 0.0;
}

}  // namespace drivelab::runner
