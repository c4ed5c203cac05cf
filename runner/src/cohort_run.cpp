// The multi-host side of run_protocol (cohort_run.hpp).
#include "cohort_run.hpp"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "drivelab/results/merge.hpp"

namespace drivelab::runner::detail {

namespace fs = std::filesystem;
using results::Json;

void name_run(CohortRun& cr, std::string fresh_id, results::RunRecord& record) {
  if (cr.cohort == nullptr) {
    record.run_id = std::move(fresh_id);
    return;
  }
  // One job id for the ranks: rank 0's run id; each rank's record is "<job>-r<rank>".
  const std::string job = cr.cohort->broadcast(std::move(fresh_id), "job id");
  record.run_id = fmt::format("{}-r{}", job, cr.cohort->rank());
  const ClockOffset off = cr.cohort->clock_offset();
  record.cohort = Json{{"job_id", job},
                       {"rank", cr.cohort->rank()},
                       {"size", cr.cohort->size()},
                       {"hosts", cr.cohort->hosts()},
                       {"clock_offset_ns", off.offset_ns},
                       {"clock_offset_uncertainty_ns", off.uncertainty_ns}};
}

std::string agree(CohortRun& cr, std::string mine, std::string_view what) {
  if (cr.cohort == nullptr) return mine;
  return cr.cohort->broadcast(std::move(mine), what);
}

std::string describe_cohort(const CohortRun& cr) {
  if (cr.cohort == nullptr) return {};
  return fmt::format(
      "{} of {} ranks (hosts: {}): the interval lines are this rank's; the summary at the end is "
      "the merged record of every rank",
      cr.cohort->describe_rank(cr.cohort->rank()), cr.cohort->size(), fmt::join(cr.cohort->hosts(), ", "));
}

bool phase_barrier(CohortRun& cr, const RunOptions& options, const StopFlag& stop, std::string_view test,
                   const char* phase, std::string& failure, Json& barriers, std::function<void()> on_stop) {
  if (cr.cohort == nullptr) return failure.empty() && !stop.requested();
  if (!cr.active()) {
    if (failure.empty()) failure = "the multi-host run is broken (an earlier collective failed)";
    return false;
  }
  const PhaseState mine = !failure.empty()                            ? PhaseState::failed
                          : stop.requested() || !cr.peer_stop.empty() ? PhaseState::stopping
                                                                      : PhaseState::ready;
  const std::string what = fmt::format("test {}: {}", test, phase);
  cr.cohort->on_stop_while_waiting([&cr, &what, on_stop = std::move(on_stop)] {
    std::vector<std::string> names;
    for (int r : cr.cohort->not_arrived()) names.push_back(cr.cohort->describe_rank(r));
    if (!names.empty())
      cr.waiting_for = fmt::format("the stop came while this rank waited at '{}' for {}, not arrived there", what,
                                   fmt::join(names, ", "));
    if (on_stop) on_stop();
  });
  struct Clear {
    Cohort& c;
    ~Clear() { c.on_stop_while_waiting(nullptr); }
  } clear{*cr.cohort};
  try {
    const PhaseVote v = cr.cohort->barrier(what, mine, options.barrier_timeout);
    barriers[phase] = v.released_unix_ns;
    if (v.state == PhaseState::failed && failure.empty())
      failure = fmt::format("{} failed before '{}' (its record has the cause); the test stopped on every host",
                            cr.cohort->describe_rank(v.rank), phase);
    if (v.state == PhaseState::stopping && !stop.requested() && cr.peer_stop.empty())
      cr.peer_stop = fmt::format("stopped on {}", cr.cohort->describe_rank(v.rank));
    return v.state == PhaseState::ready;
  } catch (const CohortError& e) {
    if (cr.lost.empty()) cr.lost = fmt::format("multi-host: {}", e.what());
    if (failure.empty()) failure = cr.lost;
    return false;
  }
}

namespace {

/// Rank 0's (or the lowest survivor's) part of the end: merges the ranks' final records (`texts`
/// by rank; an empty one is a missing rank) and writes <job_id>.json, which latest.json names. A
/// failure is said, and every host's record is kept.
void write_merged(const std::vector<std::string>& texts, const RunOptions& options, RunOutcome& outcome,
                  std::ostream& out) {
  try {
    std::vector<results::MergeInput> inputs;
    for (std::size_t r = 0; r < texts.size(); ++r)
      if (!texts[r].empty())
        inputs.push_back({results::run_record_from_json(Json::parse(texts[r])), fmt::format("rank {}", r)});
    results::RunRecord merged = results::merge_host_records(std::move(inputs));
    outcome.merged_path = options.out_dir / (merged.run_id + ".json");
    results::write_record(outcome.merged_path, merged);
    std::error_code ec;
    const fs::path latest = options.out_dir / "latest.json";
    fs::remove(latest, ec);
    fs::create_symlink(outcome.merged_path.filename(), latest, ec);
    outcome.merged = std::move(merged);
  } catch (const std::exception& e) {
    out << fmt::format(
               "drivelab: the merged record could not be written: {}. Every host's record is kept; "
               "drivelab results merge builds it from them\n",
               e.what())
        << std::flush;
    outcome.merged_path.clear();
  }
}

/// How long the survivors of a broken cohort wait for each other to merge (at most).
constexpr std::chrono::seconds kSurvivorsWait{10};

/// merge_online when a phase barrier broke the cohort: the survivors (the ranks each saw arrive
/// there) send their final records to the lowest of them, which writes the merged partial record
/// (the others `missing`, named with their hosts), and the others wait until it is written.
void merge_survivors(CohortRun& cr, const RunOptions& options, RunOutcome& outcome, std::ostream& out) {
  const std::vector<int> survivors = cr.cohort->survivors();
  if (survivors.size() < 2) return;
  const auto wait = std::min<std::chrono::nanoseconds>(options.barrier_timeout, kSurvivorsWait);
  try {
    std::vector<std::string> texts = cr.cohort->gather_survivors(results::to_json(outcome.record).dump(), wait);
    if (cr.cohort->rank() == survivors.front()) write_merged(texts, options, outcome, out);
    cr.cohort->survivors_done(wait);
  } catch (const CohortError& e) {
    std::cerr << fmt::format(
                     "drivelab: rank {}: no merged record of the survivors: {}; drivelab results merge "
                     "builds it from the hosts' records\n",
                     cr.cohort->rank(), e.what())
              << std::flush;
  }
}

}  // namespace

void merge_online(CohortRun& cr, const RunOptions& options, RunOutcome& outcome, std::ostream& out) {
  if (cr.cohort == nullptr) return;
  if (!cr.active()) return merge_survivors(cr, options, outcome, out);
  std::vector<std::string> texts;
  try {
    texts = cr.cohort->gather(results::to_json(outcome.record).dump(), "the end of the run (records to rank 0)",
                              options.barrier_timeout);
  } catch (const CohortError& e) {
    std::cerr << fmt::format("drivelab: rank {}: no merged record: {}\n", cr.cohort->rank(), e.what()) << std::flush;
    return;
  }
  // Open MPI ends the job when a rank exits with a non-zero status (a failed test's 1), so no rank
  // exits before rank 0 has written the merged record: one last barrier after it.
  const auto written = [&] {
    try {
      cr.cohort->barrier("the end of the run (merged record written)", PhaseState::ready, options.barrier_timeout);
    } catch (const CohortError& e) {
      std::cerr << fmt::format("drivelab: rank {}: {}\n", cr.cohort->rank(), e.what()) << std::flush;
    }
  };
  if (cr.cohort->rank() != 0) return written();
  write_merged(texts, options, outcome, out);
  written();
}

}  // namespace drivelab::runner::detail
