#pragma once
// The multi-host side of run_protocol (docs/multihost.md): the job's run ids, the phase barriers
// and the online merge of the ranks' records. On one host (no Cohort) every function here is a
// no-op or says so, so the single-host phase sequence (test_sequence.cpp) reads without them.
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

#include "drivelab/results/record.hpp"
#include "drivelab/runner/cohort.hpp"
#include "drivelab/runner/run.hpp"
#include "drivelab/runner/stop.hpp"

namespace drivelab::runner::detail {

/// What the ranks of a multi-host run agreed on so far (every branch below depends only on
/// barrier outcomes, which are the same on every rank, so the ranks' collectives stay in step).
struct CohortRun {
  Cohort* cohort = nullptr;
  std::string peer_stop;  ///< "stopped on rank 2 (host b)": a stop on another rank ends this run too
  /// The first phase barrier that failed (its CohortError: the ranks that did not arrive and their
  /// hosts); the run's reason says it.
  std::string lost;
  /// A stop request that came while this rank waited at a phase barrier: which barrier and the
  /// ranks not arrived there ("waited at 'test io: verify' for rank 1 (host b)"); the run's reason
  /// says it (the launcher ends the job when it lost a rank or a host: that rank is among them).
  std::string waiting_for;
  bool active() const noexcept { return cohort != nullptr && !cohort->broken(); }
  /// Another rank stopped, or a collective failed: no further test runs on this rank.
  bool ended() const noexcept { return !peer_stop.empty() || (cohort != nullptr && !active()); }
  /// Records before collectives (docs/multihost.md, "When a host or rank dies"): whether this rank,
  /// about to enter a collective, must first make its test's end, its run's end and its final
  /// record durable — a collective follows (the cohort still works) and the run is ending here (a
  /// stop request, `failed`: a failure of this rank's test, or another rank's stop). A launcher
  /// that ends the job while this rank waits there (Open MPI 4.1: SIGTERM 1 s after a rank died,
  /// SIGKILL 1 s later; Open MPI 5: 250 ms each) then leaves a final record, not a running one.
  bool records_first(const StopFlag& stop, bool failed) const {
    return active() && (stop.requested() || failed || !peer_stop.empty());
  }
};

/// Names the run: on one host `fresh_id`; in a cohort "<job>-r<rank>" with the job id rank 0's
/// fresh id (broadcast), and record.cohort {job_id, rank, size, hosts, clock offset}.
void name_run(CohortRun& cr, std::string fresh_id, results::RunRecord& record);

/// Rank 0's `mine` on every rank (a collective: every rank calls it at the same point); `mine` on
/// one host. `what` names it in a timeout's message.
std::string agree(CohortRun& cr, std::string mine, std::string_view what);

/// The line that tells a rank's user what its output is ("" on one host).
std::string describe_cohort(const CohortRun& cr);

/// The phase barrier before `phase` of `test` (a no-op on one host). Brings this rank's state,
/// records the release time in the test's `barriers`, and turns another rank's failure or stop
/// into this rank's (failure / peer_stop). Returns whether the phase runs. `on_stop` runs if a
/// stop request comes while this rank waits there (Cohort::on_stop_while_waiting).
bool phase_barrier(CohortRun& cr, const RunOptions& options, const StopFlag& stop, std::string_view test,
                   const char* phase, std::string& failure, results::Json& barriers,
                   std::function<void()> on_stop = {});

/// The end of a multi-host run: rank 0 gathers every rank's final record (as written: the JSON
/// text), merges them with results::merge_host_records, the function `drivelab results merge`
/// uses on the files, and writes <job_id>.json; latest.json names it. A failure here leaves every
/// rank's own record as it is and is said on stderr. When a phase barrier broke the cohort, the
/// survivors it saw do the same among themselves (Cohort::gather_survivors, at most 10 s): the
/// lowest of them writes the merged partial record. A no-op on one host.
void merge_online(CohortRun& cr, const RunOptions& options, RunOutcome& outcome, std::ostream& out);

}  // namespace drivelab::runner::detail
