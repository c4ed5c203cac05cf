#pragma once
/// \file run.hpp
/// Runs a decoded protocol against a target and produces the result record.
///
/// Files (in options.out_dir, created if missing):
///   <run_id>.json           the record; rewritten atomically after every test and, within a
///                           test, whenever its intervals have doubled since the last write (the
///                           journal has every interval), so at any moment it is a valid record
///                           (status "interrupted", reason "run in progress or killed" until the
///                           run ends). Interval writes
///                           (journal, progress line, record) happen on a writer thread, never on
///                           the emulator's: TestRecorder::interval() only queues.
///   <run_id>.journal.jsonl  the append-only journal (results/journal.hpp)
///   latest.json             a symlink to the newest record
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "drivelab/results/record.hpp"
#include "drivelab/runner/cohort.hpp"
#include "drivelab/runner/live_metrics.hpp"
#include "drivelab/runner/protocol.hpp"

namespace drivelab::runner {

struct RunOptions {
  /// A directory on the drive under test (must exist), or a block device (docs/targets.md: only
  /// kinds whose Emulator::device_access() allows it; writes pass io/target_safety.hpp first).
  std::filesystem::path target;
  /// `--destroy-data-on`: consent to write to the target device with this identity ("" = none).
  std::string destroy_data_on;
  std::filesystem::path out_dir = "drivelab-results";
  std::vector<std::string> command_line;
  std::ostream* out = nullptr;  ///< progress and summary (nullptr: std::cout)
  bool live_line = false;       ///< true on a terminal: rewrite one status line (\r)
  bool quiet = false;           ///< no interval lines (summary still printed)
  /// The ranks of a multi-host run (docs/multihost.md), nullptr on one host. With a cohort:
  /// every rank's run_id is "<job_id>-r<rank>" (job_id: rank 0's run id, broadcast), the record
  /// carries `cohort`, each test passes a phase barrier before prepare, warm-up and the measured
  /// phase (TestRecord::barriers: the release times), and at the end rank 0 gathers every
  /// rank's final record and writes the merged record (results/merge.hpp) as
  /// <out_dir>/<job_id>.json, which latest.json then names.
  Cohort* cohort = nullptr;
  /// Longest wait at a phase barrier or any other collective (--barrier-timeout).
  std::chrono::nanoseconds barrier_timeout{std::chrono::minutes(10)};
  /// Receives the run's live figures (`--metrics-listen`: metrics/prometheus.hpp), nullptr for
  /// none. Called as live_metrics.hpp says; it must outlive the call.
  LiveMetrics* live_metrics = nullptr;
  /// --start-at: the wall-clock instant to start the first test at (runs started by hand on
  /// several hosts, docs/multihost.md). run_protocol waits for it after the target is checked and
  /// locked and the output directory made, so those refusals come at once and the target stays
  /// this run's through the wait; a stop during the wait skips every test (record interrupted).
  std::optional<std::chrono::system_clock::time_point> start_at;
  /// How many times each test runs (`--repeat N`, and `drivelab noise`): 1..kMaxRepeat
  /// (protocol.hpp); unset: the protocol's `repeat:`. Overrides the protocol's count, not its
  /// `repeat_between:`. A repeated run (N > 1, or discard-first) runs test 1 N times, then test 2
  /// N times (protocol.hpp "Repetitions"); each repetition is its own TestRecord of the same name
  /// with `repetition` k and `seed` = the run seed + k - 1, and the record has `repeat` and
  /// `repetitions`, the statistics of each test's complete, not discarded repetitions
  /// (results/record_stats.hpp). A stop, a failed journal or a broken multi-host run skips the
  /// remaining repetitions (each recorded as skipped). Multi-host: every rank runs rank 0's
  /// count. run_protocol throws ConfigError for a count outside 1..kMaxRepeat.
  std::optional<std::uint32_t> repeat;
  /// false (`--no-harness-ceiling`): the harness's own ceiling is not measured, whatever the
  /// protocol's `harness_ceiling:` says (protocol.hpp; docs/telemetry.md).
  bool harness_ceiling = true;
};

struct RunOutcome {
  results::RunRecord record;
  std::filesystem::path record_path;
  std::filesystem::path journal_path;
  /// Rank 0 of a multi-host run: the merged record and its file (else empty).
  std::optional<results::RunRecord> merged;
  std::filesystem::path merged_path;
};

/// Runs every test in order. Never throws for a test's failure (it is recorded); throws
/// EnvironmentError if the target or output directory is unusable, before any test runs: a
/// device target with a test that needs a directory, a device refused by the safety checks
/// (every reason listed with the flag that lifts it), destroy_data_on naming another device or
/// given for a directory target, a target locked by another run.
RunOutcome run_protocol(Protocol& protocol, const RunOptions& options, const StopFlag& stop);

}  // namespace drivelab::runner
