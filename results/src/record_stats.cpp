// The statistics a record carries about its own numbers (record_stats.hpp).
#include "drivelab/results/record_stats.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "drivelab/results/device_demand.hpp"
#include "json_read.hpp"

namespace drivelab::results {
namespace {

using detail::number_or_null;

/// The headline metrics of `first` that the summary covers: figures of merit (a direction), or
/// names the catalogue does not know.
bool summarized(const Metric& m) {
  const MetricDef* d = find_metric_def(m.name);
  return d == nullptr || d->better != Direction::none;
}

Json metric_summary(const Metric& first, const std::vector<const TestRecord*>& reps, std::uint64_t seed) {
  std::vector<double> values;
  for (const TestRecord* t : reps)
    if (const Metric* m = t->find_metric(first.name); m != nullptr && std::isfinite(m->value))
      values.push_back(m->value);
  Json out{{"name", first.name}, {"unit", first.unit}, {"n", values.size()}};
  if (values.empty()) return out;
  // Figures that cannot be negative: the interval of the mean stops at 0 (docs/confidence.md).
  const inference::Summary s = inference::summarize_nonnegative(values, 0.95, seed);
  out["mean"] = number_or_null(s.mean);
  out["median"] = number_or_null(s.median);
  out["stddev"] = number_or_null(s.stddev);
  out["cv"] = number_or_null(s.cv);
  out["ci95_low"] = number_or_null(s.mean_ci.low);
  out["ci95_high"] = number_or_null(s.mean_ci.high);
  if (s.median_ci) {
    out["median_ci95_low"] = number_or_null(s.median_ci->low);
    out["median_ci95_high"] = number_or_null(s.median_ci->high);
  }
  return out;
}

/// Whether a progress value of the intervals (a curve point, a pass, a render phase) changes
/// between them: their workload then changes by design. (A fixed-rate vdbench run's constant
/// point_pct does not.)
bool workload_changes(const std::vector<Interval>& intervals) {
  for (const auto& [name, first] : intervals.front().values) {
    const MetricDef* d = find_metric_def(name);
    if (d == nullptr || d->kind != MetricKind::progress) continue;
    for (const Interval& i : intervals) {
      const auto it = std::find_if(i.values.begin(), i.values.end(), [&](const auto& v) { return v.first == name; });
      if (it == i.values.end() || !(it->second == first)) return true;
    }
  }
  return false;
}

}  // namespace

std::string test_label(const TestRecord& t) {
  return t.repetition > 0 ? fmt::format("{} (repetition {})", t.name, t.repetition) : t.name;
}

bool counts_as_repetition(const TestRecord& t) noexcept {
  return t.repetition > 0 && t.status == Status::complete && !t.discarded;
}

Json summarize_repetitions(const RunRecord& r) {
  std::vector<std::string> names;
  for (const TestRecord& t : r.tests)
    if (t.repetition > 0 && std::find(names.begin(), names.end(), t.name) == names.end()) names.push_back(t.name);
  Json out = Json::array();
  for (const std::string& name : names) {
    std::vector<const TestRecord*> reps;
    for (const TestRecord& t : r.tests)
      if (t.name == name && counts_as_repetition(t)) reps.push_back(&t);
    Json metrics = Json::array();
    if (!reps.empty())
      for (const Metric& m : reps.front()->metrics)
        if (summarized(m)) metrics.push_back(metric_summary(m, reps, r.seed));
    out.push_back(Json{{"test", name}, {"n", reps.size()}, {"metrics", std::move(metrics)}});
  }
  return out;
}

std::optional<WithinRun> within_run_confidence(const TestRecord& t) {
  if (t.intervals.empty()) return std::nullopt;
  if (workload_changes(t.intervals)) return std::nullopt;
  // A curve (vdbench `iorate: curve`, tpcc `rate: curve`) runs several rates by design: its
  // details list the points (tpcc's intervals carry no progress value that says so).
  if (is_curve(t)) return std::nullopt;
  const RateInterval* rate = nullptr;
  for (const auto& [name, v] : t.intervals.front().values) {
    const MetricDef* d = find_metric_def(name);
    for (const RateInterval& ri : catalogue::kRateIntervals)
      if (d == ri.rate && rate == nullptr) rate = &ri;
  }
  if (rate == nullptr) return std::nullopt;
  // Equal-length intervals (batch means' premise): the reporting interval, i.e. the median length.
  // The last one of a test is shorter when the phase ended between two, and is left out; one that
  // closed late on a loaded host is a little longer and is kept (taking the longest as the length
  // instead left out every other interval after a single late close).
  std::vector<double> lengths;
  for (const Interval& i : t.intervals) lengths.push_back(i.duration_s);
  std::nth_element(lengths.begin(), lengths.begin() + static_cast<std::ptrdiff_t>(lengths.size() / 2), lengths.end());
  const double length = lengths[lengths.size() / 2];
  std::vector<double> rates;
  for (const Interval& i : t.intervals) {
    if (!(i.duration_s >= 0.95 * length)) continue;
    const std::optional<double> v = value_of(i.values, *rate->rate);
    if (!v) return std::nullopt;
    rates.push_back(*v);
  }
  if (rates.size() < 4 || !(length > 0)) return std::nullopt;
  WithinRun w;
  w.rate = rate;
  w.batch_means = inference::batch_means(rates, length);
  w.intervals = rates.size();
  w.measured_s = static_cast<double>(rates.size()) * length;
  return w;
}

std::string within_run_warning(const WithinRun& w) {
  const inference::BatchMeans& b = w.batch_means;
  std::string out;
  if (std::isfinite(b.relative_half_width) && b.relative_half_width > 0.02) {
    // The time needed as a reader compares it: one decimal below 10 s, rounded up, never down.
    const auto seconds_up = [](double s) {
      if (s < 10) return fmt::format("{:.1f}", std::ceil(s * 10) / 10);
      return fmt::format("{:.0f}", std::ceil(s));
    };
    // The intervals counted and their reporting length, not "measured N s": an interval that closed
    // late (a frozen filesystem) counts as one of them, so the phase may have lasted longer.
    out = fmt::format("{}: {} intervals of {:.3g} s give ±{:.1f}% at 95% (within-run noise only)", w.rate->rate->name,
                      w.intervals, w.measured_s / static_cast<double>(w.intervals), 100 * b.relative_half_width);
    if (std::isfinite(b.needed_s)) out += fmt::format("; about {} s would give ±2%", seconds_up(b.needed_s));
  }
  if (!b.independent && std::isfinite(b.lag1)) {
    out += fmt::format(
        "{}{}: the batch means stay correlated (lag-1 autocorrelation {:.2f} over {} batches of {} intervals): the "
        "within-run interval understates the noise; measure longer",
        out.empty() ? "" : "; ", w.rate->rate->name, b.lag1, b.batches, b.batch_size);
  }
  return out;
}

}  // namespace drivelab::results
