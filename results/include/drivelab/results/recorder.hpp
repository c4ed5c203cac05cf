#pragma once
/// \file recorder.hpp
/// What an emulator writes into while it runs. The runner owns the TestRecord and a Listener that
/// journals each interval, prints the progress line and rewrites the on-disk record, so every
/// emulator gets crash-safe, live results without knowing about files or terminals.
///
/// Thread-safety: every member may be called from any thread (one mutex; calls are rare —
/// intervals, not samples. Samples go into per-thread LatencyHistograms owned by the emulator).
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "drivelab/results/catalogue.hpp"
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
    /// Metric groups of test `test` set or changed since the last call, each whole (flush_groups).
    /// The runner journals them, so the runs of a curve that finished survive a SIGKILL.
    virtual void on_groups(std::string_view test, const std::vector<MetricGroup>& groups) {
      (void)test;
      (void)groups;
    }
  };

  TestRecorder(TestRecord& record, Listener* listener) : record_(record), listener_(listener) {}

  /// Called by interval() with each interval before it is checked and appended (in the order of
  /// the appends, on the thread that closes the interval), to add values measured at the same
  /// boundary: the runner's device and host telemetry (telemetry/test_telemetry.hpp). Set it
  /// before the emulator runs, or empty to remove it; it must not call back into this recorder.
  void set_interval_sampler(std::function<void(Interval&)> sampler);
  /// Appends the interval, then calls listener->on_interval with a snapshot of the record taken
  /// under the lock (the listener runs outside it, so it may call back into this recorder;
  /// listener calls are serialised, in the order of the appends).
  /// Throws InternalError when a value's name is not a catalogued interval value (catalogue.hpp).
  void interval(Interval interval);
  /// Forwards to listener->on_message (with a snapshot, as interval()); records nothing.
  void message(std::string_view text);
  /// Hands the metric groups set or changed since the last hand-over (group_metric) to
  /// listener->on_groups, each group whole: the runner journals them (results/journal.hpp, event
  /// `groups`), so `results recover` of a killed run gives the groups of every run of a curve that
  /// had finished (max, point_050, ...). interval() and message() do it first, so a group recorded
  /// between two of them reaches the journal with the next; an emulator calls it itself when a
  /// run it just recorded is followed by a long stretch without either. No-op without a listener
  /// or without changes.
  void flush_groups();
  /// Adds or replaces the headline metric `def` (catalogue.hpp) with `value`; `description` is the
  /// record's one line, the declaration's description when empty. Name and unit are the
  /// declaration's (`unit` only for a declaration with an other_unit).
  void metric(const MetricDef& def, double value, std::string description = {});
  void metric(const MetricDef& def, double value, std::string description, Unit unit);
  /// Adds or replaces a metric built elsewhere (runner::record_latency's figures). Throws
  /// InternalError when its name is not in the catalogue, is not declared a headline metric, or
  /// its unit is not the declared one: every metric drivelab records is declared (issue 31).
  void metric(Metric m);
  /// Adds or replaces a metric in group `group` (created on first use, order kept); as metric().
  void group_metric(std::string_view group, const MetricDef& def, double value, std::string description = {});
  void group_metric(std::string_view group, const MetricDef& def, double value, std::string description, Unit unit);
  void group_metric(std::string_view group, Metric m);
  /// Adds or replaces the histogram `name` (a copy of `h`). When any of its samples saturated (a
  /// value above LatencyHistogram::max_trackable_ns(), 2^42 ns = 73.3 min: core/histogram.hpp), a
  /// warning names the histogram, the count of saturated samples of its total and the range
  /// ("histogram 'latency': 3 of 120 samples saturated (above 2^42 ns = 73.3 min, ...)"); putting
  /// the histogram again replaces that warning (removed when none saturates any more). Every
  /// emulator puts its histograms here, so this is the one place the warning is written
  /// (issue 15: no metric saturates silently).
  void histogram(std::string name, const LatencyHistogram& h);
  /// Appends a check (checks keep their order; a name may repeat, e.g. one per warehouse).
  void check(std::string name, bool passed, std::string detail = {});
  /// Appends a warning unless the same text is already there (a repeated condition warns once).
  void warning(std::string text);
  /// Sets details[key] (replacing an earlier value).
  void detail(std::string key, Json value);
  void set_phase_times(double warmup_s, double measured_s);

  /// Snapshot under the lock (for the runner to write the record).
  template <class F>
  void with_record(F&& f) {
    std::lock_guard lock(mu_);
    f(record_);
  }

 private:
  std::mutex mu_;           ///< guards record_
  std::mutex listener_mu_;  ///< keeps listener calls in order; taken before mu_, never after
  TestRecord& record_;
  Listener* listener_;
  std::function<void(Interval&)> sampler_;   ///< set before the emulator runs; called under listener_mu_
  std::vector<std::string> changed_groups_;  ///< group_metric since the last flush_groups (mu_)

  void flush_groups_locked();  ///< flush_groups with listener_mu_ held
};

}  // namespace drivelab::results
