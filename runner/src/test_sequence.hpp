#pragma once
// One test of a run, the single-host phase sequence (emulator.hpp's life cycle): the journal's
// test_start, prepare, warm-up, the measured phase with its intervals, verify, cleanup, the test's
// status and the journal's test_end. The multi-host barriers before each phase come from
// cohort_run.hpp and are no-ops on one host.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "cohort_run.hpp"
#include "drivelab/results/journal.hpp"
#include "drivelab/results/record.hpp"
#include "drivelab/runner/protocol.hpp"
#include "drivelab/runner/run.hpp"
#include "drivelab/runner/stop.hpp"
#include "drivelab/telemetry/run_facts.hpp"
#include "run_state.hpp"
#include "target.hpp"

namespace drivelab::runner::detail {

/// Which run of a test this is.
struct Repetition {
  int number = 0;          ///< 1-based in a repeated run; 0 when the run does not repeat
  bool discarded = false;  ///< repeat_between discard-first: the first repetition
  std::uint64_t seed = 0;  ///< the run seed this run of the test derives its own from
};

/// What every test of a run shares.
struct RunContext {
  results::RunRecord& record;
  RunState& state;
  results::Journal& journal;
  const RunOptions& options;
  const RunTarget& target;
  const StopFlag& stop;
  CohortRun& cr;
  /// Records before collectives (docs/multihost.md, "When a host or rank dies"), called before
  /// every phase barrier of a cohort that still works, `collective` naming it ("test oltp: verify").
  /// `ending` (CohortRun::records_first: the run ends here): journals `test` (the test that is
  /// ending, settled as it stands; null between tests) as a test_end and the run's end as a
  /// run_end, and writes the record with `test` appended as the final record (status and reason as
  /// the run would end now, never `running`). Otherwise the record alone, as it must stand if the
  /// process ends inside the collective — Open MPI 5 aborts a rank whose peer's connection closes
  /// while it waits, before any signal (measured in a Debian 13 root) — `test` and the run
  /// `interrupted`, their reasons naming the collective; nothing is journaled. Either way, if the
  /// rank comes back from the collective, the test and the run end again as usual and their later
  /// events and writes win (`results recover` keeps the last test_end of a test and the last
  /// run_end). Errors are said, not thrown.
  std::function<void(const results::TestRecord* test, std::string_view collective, bool ending)> end_before_collective;
  /// What the run found once before its first test (drive health to read, the harness's
  /// ceiling: telemetry/run_facts.hpp), for each test's telemetry.
  const telemetry::RunFacts* facts = nullptr;
};

/// Runs test `index` of the protocol as `rep` and appends its record to run.record (and writes the
/// record; a repetition updates the record's repetitions first). A test with at least 4 intervals
/// of its rate records its within-run confidence interval (results/record_stats.hpp).
void run_one(PlannedTest& test, std::size_t index, const Repetition& rep, RunContext& run);

/// Appends test `index` as skipped (the journal failed, a stop, another rank's stop, a broken
/// cohort), journaled as a test_end without a test_start so that `results recover` keeps it. In
/// a cohort that still works, the other ranks learn why at this test's first barrier.
void skip_test(PlannedTest& test, std::size_t index, const Repetition& rep, RunContext& run,
               const std::string& journal_failure);

}  // namespace drivelab::runner::detail
