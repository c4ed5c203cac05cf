// The emulator-facing recorder: every mutation under one mutex; listener calls get a snapshot.
#include "drivelab/results/recorder.hpp"

#include <algorithm>
#include <bit>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"

namespace drivelab::results {
namespace {

void put_metric(std::vector<Metric>& metrics, Metric m) {
  const auto it = std::find_if(metrics.begin(), metrics.end(), [&](const Metric& x) { return x.name == m.name; });
  if (it != metrics.end()) {
    *it = std::move(m);
  } else {
    metrics.push_back(std::move(m));
  }
}

/// The start of the saturation warning of histogram `name`: the one text that names it, so a
/// histogram put again (a running total) replaces its warning instead of adding another.
std::string saturation_prefix(std::string_view name) { return fmt::format("histogram '{}': ", name); }

/// recorder.hpp histogram(): "histogram 'latency': 3 of 120 samples saturated (above 2^42 ns =
/// 73.3 min, the histogram's range); percentiles among them read as the max, 5000.000 s". Samples
/// read from a record of the older 2^36 ns layout (or merged with one) are saturated above that
/// range, and the warning says so: "(above 2^36 ns = 1.1 min, the range of the layout they were
/// recorded with)".
std::string saturation_warning(std::string_view name, const LatencyHistogram& h) {
  const std::int64_t above = h.saturated_above_ns();
  const bool ours = above == LatencyHistogram::max_trackable_ns() + 1;
  const std::string range = std::has_single_bit(static_cast<std::uint64_t>(above))
                                ? fmt::format("2^{} ns", std::countr_zero(static_cast<std::uint64_t>(above)))
                                : fmt::format("{} ns", above);
  return fmt::format(
      "{}{} of {} samples saturated (above {} = {:.1f} min, {}); percentiles among them read as the "
      "max, {:.3f} s",
      saturation_prefix(name), h.saturated(), h.count(), range, static_cast<double>(above) / 60e9,
      ours ? "the histogram's range" : "the range of the layout they were recorded with",
      static_cast<double>(h.max()) / 1e9);
}

/// The recorder's refusal of a metric the catalogue does not declare where it is recorded, or with
/// another unit than declared (issue 31: every metric declared once). An old name (an alias) is
/// refused too: it is read, never written.
void check_declared(std::string_view name, std::optional<std::string_view> unit, Where where) {
  const MetricDef* d = find_metric_def(name);
  const char* as = where == kHeadline ? "headline metric" : where == kGroup ? "group metric" : "interval value";
  if (d == nullptr || d->name != name)
    throw InternalError(
        fmt::format("{} '{}' is not declared in the metric catalogue (results/catalogue.hpp)", as, name));
  if (!d->recorded_as(where))
    throw InternalError(fmt::format("metric '{}' is not declared as a {} (results/catalogue.hpp)", name, as));
  if (unit && *unit != unit_text(d->unit) && !(d->other_unit && *unit == unit_text(*d->other_unit)))
    throw InternalError(fmt::format("metric '{}' recorded in '{}', declared in '{}' (results/catalogue.hpp)", name,
                                    *unit, d->unit_string()));
}

}  // namespace

void TestRecorder::set_interval_sampler(std::function<void(Interval&)> sampler) {
  std::lock_guard order(listener_mu_);
  sampler_ = std::move(sampler);
}

void TestRecorder::interval(Interval interval) {
  std::unique_lock order(listener_mu_, std::defer_lock);
  if (listener_ != nullptr || sampler_) order.lock();
  if (listener_ != nullptr) flush_groups_locked();
  if (sampler_) sampler_(interval);
  for (const auto& [name, value] : interval.values) check_declared(name, std::nullopt, kInterval);
  // An interval that completed nothing has no latency: its figures of the "latency" histogram are
  // left out, not recorded as 0 ms, which a live line, a chart or a merge would read as a latency.
  if (const auto h = interval.histograms.find("latency"); h != interval.histograms.end() && h->second.count() == 0)
    std::erase_if(interval.values, [](const auto& v) {
      const MetricDef* d = find_metric_def(v.first);
      return d != nullptr && d->of_interval_latency;
    });
  TestRecord snapshot;
  {
    std::lock_guard lock(mu_);
    if (listener_ == nullptr) {
      record_.intervals.push_back(std::move(interval));
      return;
    }
    record_.intervals.push_back(interval);
    snapshot = record_;
  }
  listener_->on_interval(snapshot, interval);
}

void TestRecorder::message(std::string_view text) {
  if (listener_ == nullptr) return;
  std::lock_guard order(listener_mu_);
  flush_groups_locked();
  TestRecord snapshot;
  {
    std::lock_guard lock(mu_);
    snapshot = record_;
  }
  listener_->on_message(snapshot, text);
}

void TestRecorder::flush_groups() {
  if (listener_ == nullptr) return;
  std::lock_guard order(listener_mu_);
  flush_groups_locked();
}

void TestRecorder::flush_groups_locked() {
  std::string test;
  std::vector<MetricGroup> groups;
  {
    std::lock_guard lock(mu_);
    if (changed_groups_.empty()) return;
    for (const MetricGroup& g : record_.groups)
      if (std::find(changed_groups_.begin(), changed_groups_.end(), g.name) != changed_groups_.end())
        groups.push_back(g);
    changed_groups_.clear();
    test = record_.name;
  }
  listener_->on_groups(test, groups);
}

void TestRecorder::metric(const MetricDef& def, double value, std::string description) {
  metric(def, value, std::move(description), def.unit);
}

void TestRecorder::metric(const MetricDef& def, double value, std::string description, Unit unit) {
  metric(Metric{std::string(def.name), value, std::string(unit_text(unit)),
                description.empty() ? std::string(def.description) : std::move(description), std::nullopt});
}

void TestRecorder::metric(Metric m) {
  check_declared(m.name, m.unit, kHeadline);
  std::lock_guard lock(mu_);
  put_metric(record_.metrics, std::move(m));
}

void TestRecorder::group_metric(std::string_view group, const MetricDef& def, double value, std::string description) {
  group_metric(group, def, value, std::move(description), def.unit);
}

void TestRecorder::group_metric(std::string_view group, const MetricDef& def, double value, std::string description,
                                Unit unit) {
  group_metric(group,
               Metric{std::string(def.name), value, std::string(unit_text(unit)),
                      description.empty() ? std::string(def.description) : std::move(description), std::nullopt});
}

void TestRecorder::group_metric(std::string_view group, Metric m) {
  check_declared(m.name, m.unit, kGroup);
  std::lock_guard lock(mu_);
  auto it =
      std::find_if(record_.groups.begin(), record_.groups.end(), [&](const MetricGroup& g) { return g.name == group; });
  if (it == record_.groups.end()) {
    record_.groups.push_back(MetricGroup{std::string(group), {}});
    it = std::prev(record_.groups.end());
  }
  put_metric(it->metrics, std::move(m));
  if (std::find(changed_groups_.begin(), changed_groups_.end(), group) == changed_groups_.end())
    changed_groups_.emplace_back(group);
}

void TestRecorder::histogram(std::string name, const LatencyHistogram& h) {
  std::lock_guard lock(mu_);
  // The one place a histogram enters a record, so the one place its saturation is told.
  auto& w = record_.warnings;
  const std::string prefix = saturation_prefix(name);
  w.erase(std::remove_if(w.begin(), w.end(), [&](const std::string& x) { return x.starts_with(prefix); }), w.end());
  if (h.saturated() > 0) w.push_back(saturation_warning(name, h));
  record_.histograms.insert_or_assign(std::move(name), h);
}

void TestRecorder::check(std::string name, bool passed, std::string detail) {
  std::lock_guard lock(mu_);
  record_.checks.push_back(Check{std::move(name), passed, std::move(detail)});
}

void TestRecorder::warning(std::string text) {
  std::lock_guard lock(mu_);
  auto& w = record_.warnings;
  if (std::find(w.begin(), w.end(), text) == w.end()) w.push_back(std::move(text));
}

void TestRecorder::detail(std::string key, Json value) {
  std::lock_guard lock(mu_);
  if (!record_.details.is_object()) record_.details = Json::object();
  record_.details[std::move(key)] = std::move(value);
}

void TestRecorder::set_phase_times(double warmup_s, double measured_s) {
  std::lock_guard lock(mu_);
  record_.warmup_s = warmup_s;
  record_.measured_s = measured_s;
}

}  // namespace drivelab::results
