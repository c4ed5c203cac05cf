// Comparisons with confidence: compare_values / apply_holm (shared by `drivelab compare` and the
// reporter's comparisons and ranks), compare() of two sides, their text and JSON, and the noise
// table of `drivelab noise`. The statistics are core/inference.hpp's.
#include "drivelab/report/compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "drivelab/results/catalogue.hpp"
#include "drivelab/results/summary.hpp"

namespace drivelab::report {

std::optional<inference::Better> inference_better(Better b) noexcept {
  switch (b) {
    case Better::higher: return inference::Better::higher;
    case Better::lower: return inference::Better::lower;
    case Better::unranked: break;
  }
  return std::nullopt;
}

double MetricComparison::geometric_mean(const std::vector<double>& values) noexcept {
  if (values.empty()) return inference::kNaN;
  double sum = 0;
  for (const double v : values) {
    if (!(v > 0) || !std::isfinite(v)) return inference::kNaN;
    sum += std::log(v);
  }
  return std::exp(sum / static_cast<double>(values.size()));
}

double MetricComparison::change_pct() const noexcept {
  return estimate ? (estimate->ratio - 1.0) * 100.0 : inference::kNaN;
}

inference::Interval MetricComparison::change_ci_pct() const noexcept {
  if (!estimate || !estimate->ratio_ci.valid()) return {};
  const inference::Interval& ci = estimate->ratio_ci;
  return {(ci.low - 1.0) * 100.0, (ci.high - 1.0) * 100.0, ci.level};
}

MetricComparison compare_values(std::string metric, std::string unit, Better better, std::vector<double> baseline,
                                std::vector<double> candidate, double level, double power) {
  MetricComparison m;
  m.metric = std::move(metric);
  m.unit = std::move(unit);
  m.better = better;
  m.baseline = std::move(baseline);
  m.candidate = std::move(candidate);
  const auto positive = [](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x) && x > 0; });
  };
  if (better == Better::unranked) {
    m.not_tested = "the metric has no direction";
  } else if (m.baseline.size() < 2 || m.candidate.size() < 2) {
    m.not_tested =
        fmt::format("needs 2+ values on both sides (baseline {}, candidate {})", m.baseline.size(), m.candidate.size());
  } else if (!positive(m.baseline) || !positive(m.candidate)) {
    m.not_tested = "a value is not > 0 (the interval is of a ratio)";
  } else {
    try {
      m.estimate = inference::compare_ratio(m.baseline, m.candidate, level, power);
    } catch (const std::invalid_argument& e) {
      m.not_tested = e.what();
    }
  }
  return m;
}

void apply_holm(std::vector<MetricComparison>& metrics, double margin_pct) {
  std::vector<double> p;
  for (const auto& m : metrics)
    if (m.tested()) p.push_back(m.estimate->p_value);
  const std::vector<double> adjusted = inference::holm_adjust(p);
  std::size_t i = 0;
  for (auto& m : metrics) {
    m.verdict = inference::Verdict::no_difference;
    m.worse_beyond_margin = false;
    if (!m.tested()) continue;
    m.p_holm = adjusted[i++];
    m.verdict = inference::verdict(*m.estimate, *inference_better(m.better), m.p_holm);
    const inference::Interval& ci = m.estimate->ratio_ci;
    const double margin = margin_pct / 100.0;
    m.worse_beyond_margin = m.verdict == inference::Verdict::worse &&
                            (m.better == Better::higher ? ci.high < 1.0 - margin : ci.low > 1.0 + margin);
  }
}

namespace {

/// Whether a verdict on this metric reads as speed: a rate, throughput, latency or elapsed time.
bool speed_metric(const MetricComparison& m) {
  if (const results::MetricDef* d = results::find_metric_def(m.metric); d != nullptr && d->unit_string() == m.unit) {
    switch (d->kind) {
      case results::MetricKind::operations:
      case results::MetricKind::throughput:
      case results::MetricKind::latency:
      case results::MetricKind::time: return true;
      default: return false;
    }
  }
  return better_for_unit(m.unit) != Better::unranked;
}

}  // namespace

std::string verdict_word(const MetricComparison& m) {
  if (!m.tested()) return "not tested";
  switch (m.verdict) {
    case inference::Verdict::better: return speed_metric(m) ? "faster" : "better";
    case inference::Verdict::worse: return speed_metric(m) ? "slower" : "worse";
    case inference::Verdict::no_difference: break;
  }
  return std::string(inference::to_string(inference::Verdict::no_difference));
}

int CompareResult::exit_status() const noexcept {
  if (!problems.empty()) return kCompareBadInput;
  for (const auto& t : tests)
    for (const auto& m : t.metrics)
      if (m.worse_beyond_margin) return kCompareWorse;
  return kCompareNoWorse;
}

namespace {

void add_unique(std::vector<std::string>& v, const std::string& s) {
  if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

/// One side's complete measured results per test key, in first-seen order.
struct Side {
  const char* name;
  std::vector<std::string> tests;
  std::map<std::string, std::vector<const Result*>> results;
};

Side gather(const Dataset& data, const char* name, std::vector<std::string>& notes) {
  Side s{name, {}, {}};
  std::vector<std::string> other_sources;
  for (const Result& r : data.results) {
    if (r.origin != Origin::measured) {
      add_unique(other_sources, r.source);
      continue;
    }
    if (r.partial()) {
      notes.push_back(fmt::format("{}: {}: test {} is {}: left out (only complete tests are compared)", name, r.source,
                                  r.test, r.status));
      continue;
    }
    add_unique(s.tests, r.test);
    s.results[r.test].push_back(&r);
  }
  for (const auto& src : other_sources)
    notes.push_back(fmt::format("{}: {} is not a drivelab record: not compared", name, src));
  for (const auto& n : data.notes) notes.push_back(fmt::format("{}: {}", name, n));
  return s;
}

/// The headline metrics with a direction of `results` (name -> unit), in order.
std::vector<std::pair<std::string, std::string>> directed_headline(const std::vector<const Result*>& results) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Result* r : results)
    for (std::size_t i = 0; i < r->metrics.size() && i < kHeadlineMetrics; ++i) {
      const auto& m = r->metrics[i];
      if (better_for(m.name, m.unit) == Better::unranked) continue;
      if (std::none_of(out.begin(), out.end(), [&m](const auto& p) { return p.first == m.name; }))
        out.emplace_back(m.name, m.unit);
    }
  return out;
}

std::vector<double> values_of(const std::vector<const Result*>& results, const std::string& metric,
                              const std::string& unit) {
  std::vector<double> out;
  for (const Result* r : results)
    if (const results::Metric* m = r->find_metric(metric); m != nullptr && m->unit == unit && std::isfinite(m->value))
      out.push_back(m->value);
  return out;
}

const TestVariant* variant_of(const Dataset& data, const std::string& test) {
  for (const TestVariant& v : data.variants)
    if (v.as == test) return &v;
  return nullptr;
}

}  // namespace

CompareResult compare(const Dataset& baseline, const Dataset& candidate, const CompareOptions& opt) {
  CompareResult out;
  out.options = opt;
  const Side b = gather(baseline, "baseline", out.notes);
  const Side c = gather(candidate, "candidate", out.notes);
  std::vector<std::string> common;
  for (const auto& t : b.tests)
    if (c.results.count(t) != 0) common.push_back(t);
  for (const auto& t : b.tests)
    if (c.results.count(t) == 0) out.notes.push_back(fmt::format("test {} is on the baseline only: not compared", t));
  for (const auto& t : c.tests)
    if (b.results.count(t) == 0) out.notes.push_back(fmt::format("test {} is on the candidate only: not compared", t));
  if (common.empty()) {
    out.problems.push_back(
        fmt::format("no common tests: the baseline has {}, the candidate {}",
                    b.tests.empty() ? "none complete" : fmt::format("{}", fmt::join(b.tests, ", ")),
                    c.tests.empty() ? "none complete" : fmt::format("{}", fmt::join(c.tests, ", "))));
    return out;
  }
  for (const std::string& test : common) {
    TestComparison tc;
    tc.test = test;
    const auto& rb = b.results.at(test);
    const auto& rc = c.results.at(test);
    tc.n_baseline = rb.size();
    tc.n_candidate = rc.size();
    if (tc.n_baseline < 2 || tc.n_candidate < 2) {
      const char* side = tc.n_baseline < 2 ? (tc.n_candidate < 2 ? "both sides" : "the baseline") : "the candidate";
      out.problems.push_back(fmt::format(
          "test {}: N < 2 on {} (baseline {} complete run(s), candidate {}): a comparison needs 2 or more on each side",
          test, side, tc.n_baseline, tc.n_candidate));
      continue;
    }
    const TestVariant* vb = variant_of(baseline, test);
    const TestVariant* vc = variant_of(candidate, test);
    if (vb != nullptr && vc != nullptr) {
      tc.config_difference = vb->kind != vc->kind ? fmt::format("kind {} vs {}", vb->kind, vc->kind)
                                                  : config_difference(vb->config, vc->config);
      if (!tc.config_difference.empty())
        out.notes.push_back(fmt::format("test {}: the sides ran different configurations (baseline vs candidate: {})",
                                        test, tc.config_difference));
    }
    const auto mb = directed_headline(rb);
    const auto mc = directed_headline(rc);
    for (const auto& [name, unit] : mb) {
      const auto it = std::find_if(mc.begin(), mc.end(), [&](const auto& p) { return p.first == name; });
      if (it == mc.end() || it->second != unit) {
        out.notes.push_back(
            fmt::format("test {}: metric {} ({}) is on the baseline only: not compared", test, name, unit));
        continue;
      }
      tc.metrics.push_back(compare_values(name, unit, better_for(name, unit), values_of(rb, name, unit),
                                          values_of(rc, name, unit), opt.level, opt.power));
    }
    for (const auto& [name, unit] : mc)
      if (std::none_of(mb.begin(), mb.end(), [&](const auto& p) { return p.first == name && p.second == unit; }))
        out.notes.push_back(
            fmt::format("test {}: metric {} ({}) is on the candidate only: not compared", test, name, unit));
    apply_holm(tc.metrics, opt.fail_if_worse_pct.value_or(0.0));
    for (const auto& m : tc.metrics)
      if (!m.tested()) out.notes.push_back(fmt::format("test {}: {} not tested: {}", test, m.metric, m.not_tested));
    out.tests.push_back(std::move(tc));
  }
  return out;
}

namespace {

std::string pct(double v) { return std::isfinite(v) ? fmt::format("{:+.1f}%", v) : std::string("-"); }

std::string p_text(double p) {
  if (!std::isfinite(p)) return "-";
  return p < 0.001 ? std::string("<0.001") : fmt::format("{:.3f}", p);
}

std::string interval_pct(const inference::Interval& ci) {
  return ci.valid() ? fmt::format("[{}, {}]", pct(ci.low), pct(ci.high)) : std::string("-");
}

}  // namespace

std::string to_text(const CompareResult& r) {
  const int level = static_cast<int>(std::lround(r.options.level * 100));
  std::vector<std::vector<std::string>> rows{
      {"test", "metric", "n", "baseline", "candidate", "change", fmt::format("{}% interval", level), "p (Holm)",
       "Mann-Whitney p", "verdict", fmt::format("detects at {:.0f}% power", r.options.power * 100)}};
  for (const auto& t : r.tests)
    for (const auto& m : t.metrics) {
      const auto q = [&m](double v) { return results::format_quantity(v, m.unit, m.metric); };
      std::string verdict = verdict_word(m);
      if (m.worse_beyond_margin && r.options.fail_if_worse_pct)
        verdict += fmt::format(" (beyond {}%)", results::format_number(*r.options.fail_if_worse_pct));
      rows.push_back({t.test, m.metric, fmt::format("{}/{}", m.baseline.size(), m.candidate.size()),
                      q(MetricComparison::geometric_mean(m.baseline)), q(MetricComparison::geometric_mean(m.candidate)),
                      pct(m.change_pct()), interval_pct(m.change_ci_pct()), p_text(m.p_holm),
                      m.tested() && m.estimate->mann_whitney_p ? p_text(*m.estimate->mann_whitney_p) : "-", verdict,
                      m.tested() && std::isfinite(m.estimate->detectable_change)
                          ? fmt::format("±{:.1f}%", m.estimate->detectable_change * 100)
                          : "-"});
    }
  std::string out = fmt::format(
      "drivelab compare: candidate against baseline; values are geometric means over the runs (n = baseline/"
      "candidate), the change and its {}% interval from Welch's t on log values, p adjusted by Holm across each "
      "test's metrics (docs/confidence.md)\n\n",
      level);
  if (rows.size() > 1) out += results::format_columns(rows);
  if (!r.notes.empty()) {
    out += "\nnotes:\n";
    for (const auto& n : r.notes) out += "  " + n + "\n";
  }
  if (!r.problems.empty()) {
    out += "\nbad input:\n";
    for (const auto& p : r.problems) out += "  " + p + "\n";
  }
  std::vector<std::string> worse;
  for (const auto& t : r.tests)
    for (const auto& m : t.metrics)
      if (m.worse_beyond_margin) worse.push_back(t.test + " " + m.metric);
  const std::string margin =
      r.options.fail_if_worse_pct
          ? fmt::format(" by more than {}%", results::format_number(*r.options.fail_if_worse_pct))
          : std::string();
  switch (r.exit_status()) {
    case kCompareBadInput: out += "\nresult: bad input (exit 2)\n"; break;
    case kCompareWorse:
      out += fmt::format("\nresult: candidate worse{} with confidence: {} (exit 1)\n", margin, fmt::join(worse, ", "));
      break;
    default: out += fmt::format("\nresult: no candidate metric worse{} with confidence (exit 0)\n", margin); break;
  }
  return out;
}

namespace {

results::Json number(double v) { return std::isfinite(v) ? results::Json(v) : results::Json(nullptr); }

results::Json interval_json(const inference::Interval& ci) {
  if (!ci.valid()) return nullptr;
  return results::Json::array({ci.low, ci.high});
}

results::Json side_json(const std::vector<double>& values) {
  results::Json j = results::Json::object();
  j["n"] = values.size();
  j["values"] = values;
  j["geometric_mean"] = number(MetricComparison::geometric_mean(values));
  if (!values.empty()) {
    const inference::Summary s = inference::summarize(values);
    j["mean"] = number(s.mean);
    j["cv"] = number(s.cv);
  } else {
    j["mean"] = nullptr;
    j["cv"] = nullptr;
  }
  return j;
}

}  // namespace

results::Json to_json(const CompareResult& r) {
  using results::Json;
  Json j = Json::object();
  j["schema"] = "drivelab.compare/1";
  j["level"] = r.options.level;
  j["power"] = r.options.power;
  j["fail_if_worse_pct"] = r.options.fail_if_worse_pct ? Json(*r.options.fail_if_worse_pct) : Json(nullptr);
  Json tests = Json::array();
  for (const auto& t : r.tests) {
    Json jt = Json::object();
    jt["test"] = t.test;
    jt["n_baseline"] = t.n_baseline;
    jt["n_candidate"] = t.n_candidate;
    jt["config_difference"] = t.config_difference;
    Json metrics = Json::array();
    for (const auto& m : t.metrics) {
      Json jm = Json::object();
      jm["metric"] = m.metric;
      jm["unit"] = m.unit;
      jm["better"] = std::string(to_string(m.better));
      jm["baseline"] = side_json(m.baseline);
      jm["candidate"] = side_json(m.candidate);
      jm["tested"] = m.tested();
      jm["not_tested"] = m.not_tested;
      jm["ratio"] = m.tested() ? number(m.estimate->ratio) : Json(nullptr);
      jm["ratio_ci"] = m.tested() ? interval_json(m.estimate->ratio_ci) : Json(nullptr);
      jm["change_pct"] = number(m.change_pct());
      jm["change_ci_pct"] = interval_json(m.change_ci_pct());
      jm["df"] = m.tested() ? number(m.estimate->df) : Json(nullptr);
      jm["p"] = m.tested() ? number(m.estimate->p_value) : Json(nullptr);
      jm["p_holm"] = number(m.p_holm);
      jm["mann_whitney_p"] =
          m.tested() && m.estimate->mann_whitney_p ? number(*m.estimate->mann_whitney_p) : Json(nullptr);
      jm["detectable_change_pct"] = m.tested() ? number(m.estimate->detectable_change * 100) : Json(nullptr);
      jm["verdict"] = m.tested() ? std::string(inference::to_string(m.verdict)) : std::string("not tested");
      jm["verdict_word"] = verdict_word(m);
      jm["worse_beyond_margin"] = m.worse_beyond_margin;
      metrics.push_back(std::move(jm));
    }
    jt["metrics"] = std::move(metrics);
    tests.push_back(std::move(jt));
  }
  j["tests"] = std::move(tests);
  j["notes"] = r.notes;
  j["problems"] = r.problems;
  j["exit_status"] = r.exit_status();
  return j;
}

std::vector<NoiseRow> noise_rows(const Dataset& runs) {
  std::vector<std::string> ignored;
  const Side s = gather(runs, "runs", ignored);
  std::vector<NoiseRow> out;
  for (const std::string& test : s.tests) {
    const auto& rs = s.results.at(test);
    for (const auto& [name, unit] : directed_headline(rs)) {
      NoiseRow row;
      row.test = test;
      row.metric = name;
      row.unit = unit;
      row.better = better_for(name, unit);
      const std::vector<double> v = values_of(rs, name, unit);
      if (v.empty()) continue;
      row.summary = inference::summarize_nonnegative(v);
      // The same spread on both sides: the values against themselves.
      const MetricComparison self = compare_values(name, unit, row.better, v, v);
      if (self.tested()) row.detectable_change_pct = self.estimate->detectable_change * 100;
      out.push_back(std::move(row));
    }
  }
  return out;
}

std::string noise_text(const std::vector<NoiseRow>& rows) {
  std::vector<std::vector<std::string>> t{
      {"test", "metric", "n", "mean", "95% interval of the mean", "run-to-run CV", "a comparison at this N detects"}};
  for (const auto& r : rows) {
    const auto q = [&r](double v) { return results::format_quantity(v, r.unit, r.metric); };
    const auto& s = r.summary;
    t.push_back({r.test, r.metric, std::to_string(s.n), q(s.mean),
                 s.mean_ci.valid() ? fmt::format("[{}, {}]", q(s.mean_ci.low), q(s.mean_ci.high)) : "-",
                 std::isfinite(s.cv) ? fmt::format("{:.2f}%", s.cv * 100) : "-",
                 std::isfinite(r.detectable_change_pct) ? fmt::format("±{:.1f}%", r.detectable_change_pct) : "-"});
  }
  return results::format_columns(t);
}

}  // namespace drivelab::report
