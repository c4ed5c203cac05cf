#pragma once
/// \file recorder.hpp
/// What an emulator writes into while it runs. The runner owns the TestRecord and a Listener that
/// journals each interval, prints the progress line and rewrites the on-disk record, so every
/// emulator gets crash-safe, live results without knowing about files or terminals.
///
/// Thread-safety: every member may be called from any thread (one mutex; calls are rare —
/// intervals, not samples. Samples go into per-thread LatencyHistograms owned by the emulator).
#include <mutex>
#include <string>
#include <string_view>

#include "drivelab/results/record.hpp"

namespace drivelab::results {

class TestRecorder {
 public:
  /// Receives events as they happen (implemented by the runner).
  class Listener {
   public:
    virtual ~Listener() = default;
    virtual void on_interval(const TestRecord& test, const Interval& interval) = 0;
    /// A free-form progress message ("loading warehouse 2/10, ETA 12s").
    virtual void on_message(const TestRecord& test, std::string_view message) = 0;
  };

  TestRecorder(TestRecord& record, Listener* listener) : record_(record), listener_(listener) {}

  void interval(Interval interval);
  void message(std::string_view text);
  /// Adds or replaces a headline metric.
  void metric(std::string name, double value, std::string unit, std::string description = {});
  /// Adds or replaces a metric in group `group` (created on first use, order kept).
  void group_metric(std::string_view group, std::string name, double value, std::string unit,
                    std::string description = {});
  void histogram(std::string name, const LatencyHistogram& h);
  void check(std::string name, bool passed, std::string detail = {});
  void warning(std::string text);
  void detail(std::string key, Json value);
  void set_phase_times(double warmup_s, double measured_s);

  /// Snapshot under the lock (for the runner to write the record).
  template <class F>
  void with_record(F&& f) {
    std::lock_guard lock(mu_);
    f(record_);
  }

 private:
  std::mutex mu_;
  TestRecord& record_;
  Listener* listener_;
};

}  // namespace drivelab::results
