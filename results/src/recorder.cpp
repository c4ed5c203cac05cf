// The emulator-facing recorder: every mutation under one mutex; listener calls get a snapshot.
#include "drivelab/results/recorder.hpp"

#include <algorithm>

namespace drivelab::results {
namespace {

void put_metric(std::vector<Metric>& metrics, Metric m) {
  const auto it = std::find_if(metrics.begin(), metrics.end(),
                               [&](const Metric& x) { return x.name == m.name; });
  if (it != metrics.end()) {
    *it = std::move(m);
  } else {
    metrics.push_back(std::move(m));
  }
}

}  // namespace

void TestRecorder::interval(Interval iv) {
  std::unique_lock order(listener_mu_, std::defer_lock);
  if (listener_ != nullptr) order.lock();
  TestRecord snapshot;
  {
    std::lock_guard lock(mu_);
    record_.intervals.push_back(iv);
    if (listener_ == nullptr) return;
    snapshot = record_;
  }
  listener_->on_interval(snapshot, iv);
}

void TestRecorder::message(std::string_view text) {
  if (listener_ == nullptr) return;
  std::lock_guard order(listener_mu_);
  TestRecord snapshot;
  {
    std::lock_guard lock(mu_);
    snapshot = record_;
  }
  listener_->on_message(snapshot, text);
}

void TestRecorder::metric(std::string name, double value, std::string unit, std::string description) {
  std::lock_guard lock(mu_);
  put_metric(record_.metrics, Metric{std::move(name), value, std::move(unit), std::move(description)});
}

void TestRecorder::group_metric(std::string_view group, std::string name, double value,
                                std::string unit, std::string description) {
  std::lock_guard lock(mu_);
  auto it = std::find_if(record_.groups.begin(), record_.groups.end(),
                         [&](const MetricGroup& g) { return g.name == group; });
  if (it == record_.groups.end()) {
    record_.groups.push_back(MetricGroup{std::string(group), {}});
    it = std::prev(record_.groups.end());
  }
  put_metric(it->metrics, Metric{std::move(name), value, std::move(unit), std::move(description)});
}

void TestRecorder::histogram(std::string name, const LatencyHistogram& h) {
  std::lock_guard lock(mu_);
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
  record_.details[key] = std::move(value);
}

void TestRecorder::set_phase_times(double warmup_s, double measured_s) {
  std::lock_guard lock(mu_);
  record_.warmup_s = warmup_s;
  record_.measured_s = measured_s;
}

}  // namespace drivelab::results
