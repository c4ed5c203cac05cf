#pragma once
// The run's writer: journals intervals, prints progress and keeps the on-disk record current
// (runner/run.hpp describes the files). Internal to the runner: run.cpp owns one per run, the test
// sequence (test_sequence.cpp) enters phases, says lines and writes the record through it.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <filesystem>
#include <iosfwd>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "drivelab/results/journal.hpp"
#include "drivelab/results/recorder.hpp"
#include "drivelab/runner/live_metrics.hpp"
#include "drivelab/runner/protocol.hpp"
#include "drivelab/runner/run.hpp"

namespace drivelab::runner::detail {

/// What RunOptions::live_metrics is told of test `index`.
LiveTest live_test(const PlannedTest& test, std::size_t index);

/// Journals intervals, prints progress and keeps the on-disk record current.
///
/// The emulator's thread only queues: a writer thread does the journal append (write + fdatasync),
/// the progress line and the record rewrite (fsync + rename + directory fsync), which together take
/// milliseconds on a real disk. Done on the emulator's thread they made every open-loop emulator
/// (trace replay, vdbench rates, TPC-C timers) issue late once per interval. Events keep their
/// order; when intervals queue up, the record is rewritten once with the newest snapshot. flush()
/// waits until everything queued is on disk (called before a test's end is journaled and before
/// any direct write). A failure of the writer is reported to the emulator at its next interval
/// and to the test sequence by flush(). What a crash can lose: intervals queued in the last few ms.
class RunState final : public results::TestRecorder::Listener {
 public:
  RunState(results::RunRecord& record, std::filesystem::path record_path, results::Journal& journal, std::ostream& out,
           const RunOptions& options);
  ~RunState() override;
  RunState(const RunState&) = delete;
  RunState& operator=(const RunState&) = delete;

  void on_interval(const results::TestRecord& test, const results::Interval& interval) override;
  void on_message(const results::TestRecord& test, std::string_view message) override;
  /// Queues the groups for the journal (event `groups`), in order with the intervals.
  void on_groups(std::string_view test, const std::vector<results::MetricGroup>& groups) override;

  /// Waits until every queued event is journaled, printed and the record rewritten. Returns the
  /// writer's error not yet reported to an emulator (empty if none).
  std::string flush();

  /// The running test and its phase, as the intervals queued from now on are published
  /// (RunOptions::live_metrics); tells the observer the phase began.
  void enter_phase(const PlannedTest& test, std::size_t index, std::string_view phase);

  /// Prints a line (after everything queued).
  void say(const std::string& line);

  /// Rewrites the record as it stands (after everything queued); a failure is a warning.
  void write_record();
  /// The final write: an error here is the run's error (the record on disk would be stale). On a
  /// full results disk the indented record may not fit in the released reserve (8 MiB; a record
  /// of thousands of intervals is larger): it is written again on one line, about a third of the
  /// size, saying so in the run's warnings.
  void write_final_record();
  /// The same final write of `record` (a snapshot of the run's end taken before a collective:
  /// RunContext::end_before_collective), after everything queued; throws as write_final_record.
  void write_final_record(results::RunRecord& record);

 private:
  /// What LiveMetrics is told of an interval besides its test's name.
  struct LiveEvent {
    std::string kind;
    std::string phase;
    std::size_t index = 0;
    double duration_s = 0;
    LiveTest view(std::string_view name) const { return LiveTest{name, kind, index, duration_s}; }
  };
  struct Event {
    std::string test;
    std::optional<results::Interval> interval;  ///< an interval, or else
    std::string message;                        ///< a progress message (groups empty), or else
    LiveEvent live;                             ///< an interval's test and phase
    std::vector<results::MetricGroup> groups;   ///< metric groups to journal
  };

  void writer_loop();
  void print_interval(const std::string& test, const results::Interval& interval);
  void print_message(const std::string& test, const std::string& message);
  /// Writes the record as it stands plus the running test, when its intervals have at least
  /// doubled since the last write: a whole-record rewrite per interval would write the square of
  /// the interval count (1.4 GB for a 15 MB record at 250 ms intervals); doubling bounds a run's
  /// mid-test rewrites to about twice its final record. The journal has every interval as it
  /// comes; between tests and at the end the record is always written.
  void write_with_current(const results::TestRecord& current);
  static std::size_t interval_count(const results::RunRecord& r);
  void write(const results::RunRecord& r);
  void clear_live_line();

  std::mutex mu_;                      ///< the output stream and record_ reads by the writer
  std::size_t written_intervals_ = 0;  ///< intervals in the record last written (mu_)
  results::RunRecord& record_;
  std::filesystem::path record_path_;
  results::Journal& journal_;
  std::ostream& out_;
  const RunOptions& options_;
  bool live_line_open_ = false;

  std::mutex q_mu_;  ///< everything below
  std::condition_variable q_cv_;
  std::deque<Event> queue_;
  LiveEvent live_;              ///< the running test and phase (enter_phase)
  results::TestRecord latest_;  ///< the newest snapshot not yet written (has_latest_)
  bool has_latest_ = false;
  bool busy_ = false;  ///< the writer is working on events taken off the queue
  bool closing_ = false;
  std::exception_ptr error_;
  bool error_reported_ = false;
  std::thread writer_;
};

}  // namespace drivelab::runner::detail
