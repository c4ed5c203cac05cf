// run_protocol: the run's record, journal and writer around its tests (runner/run.hpp). One
// test's phases are in test_sequence.cpp, the multi-host barriers and merge in cohort_run.cpp.
#include "drivelab/runner/run.hpp"

#include <chrono>
#include <exception>
#include <iostream>
#include <random>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cohort_run.hpp"
#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/results/identity.hpp"
#include "drivelab/results/journal.hpp"
#include "drivelab/results/summary.hpp"
#include "drivelab/results/validate.hpp"
#include "run_state.hpp"
#include "target.hpp"
#include "drivelab/telemetry/run_facts.hpp"
#include "test_sequence.hpp"

namespace drivelab::runner {
namespace {

namespace fs = std::filesystem;
using detail::CohortRun;
using results::Json;
using results::Status;

/// Space the journal holds back in the results directory (results::Journal's reserve): released
/// when a journal write fails, it leaves room for the journal's last events and the final record
/// (records of long runs are a few hundred KiB; docs/results.md, "When the results disk fills").
constexpr std::uint64_t kResultsReserveBytes = std::uint64_t{8} << 20;

std::string make_run_id() {
  std::string ts = utc_timestamp();  // 2026-11-29T19:53:44.123Z
  std::string compact;
  for (char c : ts.substr(0, 19))
    if (c != '-' && c != ':') compact += c;
  std::random_device rd;
  return fmt::format("{}Z-{:06x}", compact, rd() & 0xFFFFFF);
}

/// Waits for --start-at. The wait is on the monotonic clock from one reading of the wall clock: a
/// clock step during it does not move the start. A stop ends it; the tests are then skipped as
/// interrupted.
void wait_for_start(const RunOptions& options, const StopFlag& stop) {
  if (!options.start_at) return;
  const auto left =
      std::chrono::duration_cast<std::chrono::nanoseconds>(*options.start_at - std::chrono::system_clock::now());
  if (left.count() <= 0) return;
  (options.out ? *options.out : std::cout)
      << fmt::format("drivelab: waiting {:.1f} s for --start-at\n", seconds_between(0, left.count())) << std::flush;
  stop.sleep_until(monotonic_ns() + left.count());
}

/// The record's header: identity of tool, host and target, the protocol, the run's warnings; the
/// status says "in progress" until the run ends.
void fill_header(results::RunRecord& record, const Protocol& protocol, const RunOptions& options,
                 const detail::RunTarget& target) {
  record.tool = results::probe_tool();
  record.host = results::probe_host();
  record.target = results::probe_target(options.target);
  record.protocol = protocol.name;
  record.protocol_file = protocol.file;
  record.command_line = options.command_line;
  record.config = protocol.effective();
  record.seed = protocol.seed;
  record.started_at = utc_timestamp();
  record.status = Status::interrupted;
  record.reason = results::kLiveRecordReason;
  if (record.tool.value("sanitizers", false))
    record.warnings.push_back("built with sanitizers: numbers are not representative");
  if (record.tool.value("build_type", std::string()) == "Debug")
    record.warnings.push_back("debug build: numbers are not representative");
  for (const std::string& w : target.warnings()) record.warnings.push_back(w);
  if (const Json fs_type = record.target.value("filesystem", Json()); fs_type == "tmpfs" || fs_type == "ramfs")
    record.warnings.push_back(
        fmt::format("target is on {} (memory): results measure RAM, not a drive", fs_type.get<std::string>()));
}

/// The first line of the run's output: what runs where, and the record's file.
std::string opening_line(const results::RunRecord& record, const Protocol& protocol, const RunOptions& options,
                         const detail::RunTarget& target, const fs::path& record_path) {
  return fmt::format("drivelab {}: protocol '{}' on {} ({}), record {}", record.tool.value("version", ""),
                     protocol.name, options.target.string(),
                     target.device() ? target.describe()
                     : record.target.value("filesystem", Json()).is_string()
                         ? record.target["filesystem"].get<std::string>()
                         : std::string("?"),
                     record_path.string());
}

/// How many times each test runs (protocol.hpp "Repetitions").
struct RepeatPlan {
  std::uint32_t count = 1;
  RepeatBetween between = RepeatBetween::as_is;
  bool repeats() const noexcept { return count > 1 || between == RepeatBetween::discard_first; }
  /// Runs of each test: the discarded one included.
  std::uint32_t runs() const noexcept { return count + (between == RepeatBetween::discard_first ? 1 : 0); }
  std::string text() const { return fmt::format("{} {}", count, to_string(between)); }
};

/// The run's repetitions: RunOptions::repeat over the protocol's `repeat:`; in a multi-host run
/// rank 0's (every rank runs the same sequence of tests and repetitions, so their barriers pair),
/// said in a warning on a rank that was given another.
RepeatPlan plan_repetitions(const Protocol& protocol, const RunOptions& options, CohortRun& cr,
                            results::RunRecord& record) {
  RepeatPlan plan{options.repeat.value_or(protocol.repeat), protocol.repeat_between};
  if (plan.count < 1 || plan.count > kMaxRepeat)
    throw ConfigError(fmt::format("repeat {}: expected 1 to {} repetitions", plan.count, kMaxRepeat));
  if (const std::string agreed = detail::agree(cr, plan.text(), "the repetitions"); agreed != plan.text()) {
    record.warnings.push_back(
        fmt::format("this rank was asked for repeat {}; every rank runs rank 0's: {}", plan.text(), agreed));
    const auto space = agreed.find(' ');
    plan.count = static_cast<std::uint32_t>(std::stoul(agreed.substr(0, space)));
    plan.between = value_of(kRepeatBetweenNames, agreed.substr(space + 1)).value_or(plan.between);
  }
  return plan;
}

/// The plan in the record: `repeat`, and the effective count in `config` (which has the
/// protocol's, not --repeat's).
void record_plan(results::RunRecord& record, const RepeatPlan& plan) {
  if (record.config.is_object()) record.config.erase("repeat");
  if (!plan.repeats()) return;
  record.repeat = Json{{"count", plan.count}, {"between", to_string(plan.between)}};
  if (record.config.is_object()) record.config["repeat"] = plan.count;
}

/// Every test of the protocol in order, each as many times as `plan` says, one repetition after
/// the other; once the run is stopping, the rest are skipped.
void run_tests(Protocol& protocol, const RepeatPlan& plan, detail::RunContext& run) {
  for (std::size_t i = 0; i < protocol.tests.size(); ++i) {
    PlannedTest& t = protocol.tests[i];
    for (std::uint32_t k = 1; k <= plan.runs(); ++k) {
      detail::Repetition rep{0, false, run.record.seed};
      if (plan.repeats())
        rep = {static_cast<int>(k), k == 1 && plan.between == RepeatBetween::discard_first, run.record.seed + k - 1};
      const std::string journal_failure = run.journal.failure();
      if (run.stop.requested() || !journal_failure.empty() || run.cr.ended()) {
        detail::skip_test(t, i, rep, run, journal_failure);
        continue;
      }
      // Each repetition its own emulator: an emulator runs its life cycle once.
      if (k > 1 && t.fresh) t.emulator = t.fresh();
      detail::run_one(t, i, rep, run);
    }
  }
}

/// A repeated run whose tests did not all get their count of counted repetitions says so: its
/// statistics cover fewer (a stop, a failure, a lost host ended them).
void note_short_repetitions(results::RunRecord& record, const RepeatPlan& plan) {
  if (!plan.repeats()) return;
  std::vector<std::string> short_of;
  for (const Json& t : record.repetitions)
    if (t.value("n", 0u) < plan.count) short_of.push_back(fmt::format("{} {}", t.value("test", ""), t.value("n", 0u)));
  if (short_of.empty()) return;
  record.warnings.push_back(
      fmt::format("repeat {}: fewer repetitions counted ({}): the statistics cover the complete ones only; the "
                  "others' status says why",
                  plan.count, fmt::join(short_of, ", ")));
}

/// The run's status and reason once its tests have ended: failed when the journal could not be
/// written (also said on stderr: the record may not be writable either), interrupted by a signal
/// or by another rank's stop, failed when a test failed, else complete.
void set_run_status(results::RunRecord& record, const std::string& journal_failure, const StopFlag& stop,
                    const CohortRun& cr) {
  bool any_failed = false;
  for (const auto& t : record.tests) any_failed = any_failed || t.status == Status::failed;
  if (!journal_failure.empty()) {
    // The results filesystem filled: the test that was running failed with it, the rest were
    // not run. Said on stderr too: the record may be all the user has not, if it cannot be written.
    record.status = Status::failed;
    record.reason = fmt::format("the result journal could not be written: {}", journal_failure);
    std::cerr << "drivelab: " << record.reason << "; the running test failed and the run stopped\n" << std::flush;
  } else if (stop.requested()) {
    record.status = Status::interrupted;
    record.reason = fmt::format("stopped by {}{}; finished intervals are kept", stop.signal_name(),
                                cr.cohort == nullptr ? ""
                                                     : " (under mpirun: Ctrl-C on mpirun, or the launcher ending the "
                                                       "job after another rank died)");
  } else if (!cr.peer_stop.empty() && !any_failed) {
    record.status = Status::interrupted;
    record.reason = fmt::format("{}: the run stopped on every host; finished intervals are kept", cr.peer_stop);
  } else if (any_failed) {
    record.status = Status::failed;
    record.reason = "one or more tests failed";
  } else {
    record.status = Status::complete;
    record.reason.clear();
  }
  // A rank that died or went silent: named (rank and host) in the run's reason too.
  if (!cr.lost.empty() && record.status != Status::complete) record.reason += fmt::format(" ({})", cr.lost);
  if (!cr.waiting_for.empty() && stop.requested()) record.reason += fmt::format(" ({})", cr.waiting_for);
}

/// RunContext::end_before_collective: the run's end as it stands, durable before a collective;
/// or, when the run is not ending (`ending` false), the record as it must stand if this process
/// ends inside the collective (not journaled).
void end_before_collective(const results::TestRecord* ending, std::string_view collective, bool run_ends,
                           detail::RunContext& run) {
  results::RunRecord snapshot = run.record;
  snapshot.finished_at = utc_timestamp();
  if (!run_ends) {
    if (ending != nullptr) snapshot.tests.push_back(*ending);
    snapshot.status = Status::interrupted;
    snapshot.reason = fmt::format(
        "the record was last written as this rank entered the barrier '{}': the process ended there or "
        "later, before the run finished (under mpirun, Open MPI ends every rank when one dies or is lost); "
        "finished intervals are kept, and the journal has them all",
        collective);
  } else {
    try {
      if (ending != nullptr) {
        run.journal.append(results::journal_test_end(*ending));
        snapshot.tests.push_back(*ending);
      }
      set_run_status(snapshot, run.journal.failure(), run.stop, run.cr);
      run.journal.append(results::journal_run_end(snapshot.status, snapshot.reason, snapshot.finished_at));
    } catch (const std::exception&) {
      // journal.failure() has it; the run's end reports it (and the record below is still written)
      set_run_status(snapshot, run.journal.failure(), run.stop, run.cr);
    }
  }
  try {
    run.state.write_final_record(snapshot);
  } catch (const std::exception& ex) {
    std::cerr << fmt::format("drivelab: the record was not written before the barrier '{}': {}\n", collective,
                             ex.what())
              << std::flush;
  }
}

/// The final record on disk. When it cannot be written the summary still reaches the user, and
/// the error says where the results are (the journal) or that nothing is left.
void write_final(detail::RunState& state, const RunOutcome& outcome, const CohortRun& cr, std::ostream& out) {
  try {
    state.write_final_record();
  } catch (const std::exception& e) {
    // The numbers still reach the user: the summary of the record that could not be written.
    if (cr.cohort == nullptr || cr.cohort->rank() == 0)
      out << '\n' << results::format_summary(outcome.record) << "\nrecord: not written (below)\n" << std::flush;
    std::error_code gone;
    if (!fs::exists(outcome.journal_path, gone))
      throw EnvironmentError(
          fmt::format("could not write the result record {}: {}. The journal {} is gone too (was the results directory "
                      "removed during the run?): the summary above is all that is left of this run",
                      outcome.record_path.string(), e.what(), outcome.journal_path.string()));
    throw EnvironmentError(
        fmt::format("could not write the result record {}: {}. The journal has every result: "
                    "drivelab results recover {} -o NEW_RECORD.json",
                    outcome.record_path.string(), e.what(), outcome.journal_path.string()));
  }
}

/// After the final record: validation copies for the test suite and the summary (rank 0 prints
/// the merged record's).
void conclude(const RunOutcome& outcome, const CohortRun& cr, std::ostream& out) {
  // The test suite validates every final record and journal against the schema (no-op otherwise).
  results::keep_copy_for_validation(outcome.record_path);
  results::keep_copy_for_validation(outcome.journal_path);
  if (!outcome.merged_path.empty()) results::keep_copy_for_validation(outcome.merged_path);
  if (outcome.merged) {
    out << '\n' << results::format_summary(*outcome.merged, outcome.merged_path) << std::flush;
  } else if (cr.cohort == nullptr || cr.cohort->rank() == 0) {
    out << '\n' << results::format_summary(outcome.record, outcome.record_path) << std::flush;
  }
}

}  // namespace

RunOutcome run_protocol(Protocol& protocol, const RunOptions& options, const StopFlag& stop) {
  std::ostream& out = options.out ? *options.out : std::cout;
  std::error_code ec;
  RunOutcome outcome;
  results::RunRecord& record = outcome.record;
  CohortRun cr{options.cohort, {}, {}, {}};
  detail::name_run(cr, make_run_id(), record);
  const RepeatPlan plan = plan_repetitions(protocol, options, cr, record);
  // Before anything is created: a refused target leaves no trace.
  const detail::RunTarget target = detail::RunTarget::acquire(protocol, options, record.run_id);
  fs::create_directories(options.out_dir, ec);
  if (ec)
    throw EnvironmentError(
        fmt::format("cannot create output directory '{}': {}", options.out_dir.string(), ec.message()));
  // Once, before the first test and before --start-at's wait (its second of measuring does not
  // delay an agreed start): the drives' health to read, the harness's own ceiling. In the
  // journal's run_start too, so `results recover` keeps it.
  const telemetry::RunFacts facts =
      telemetry::probe_run(options.target, options.harness_ceiling && protocol.harness_ceiling);
  wait_for_start(options, stop);
  fill_header(record, protocol, options, target);
  record_plan(record, plan);
  record.details = facts.details();

  outcome.record_path = options.out_dir / (record.run_id + ".json");
  outcome.journal_path = options.out_dir / (record.run_id + ".journal.jsonl");
  // A killed run's reserve would keep its 8 MiB of the results disk for good.
  for (const fs::path& stale : results::remove_stale_reserves(options.out_dir))
    out << fmt::format("note: removed {}, the reserve of a run that was killed\n", stale.filename().string());
  results::Journal journal(outcome.journal_path, kResultsReserveBytes);
  journal.append(results::journal_run_start(record));
  // A third signal, or a run still going 10 s after the second, ends here (stop.hpp).
  std::vector<fs::path> remove_at_last_resort{journal.reserve_path()};
  if (!target.device()) remove_at_last_resort.push_back(options.target / detail::kRunLockFile);
  const LastResort last_resort(outcome.journal_path, outcome.record_path, std::move(remove_at_last_resort));
  detail::RunState state(record, outcome.record_path, journal, out, options);
  state.write_record();
  const fs::path latest = options.out_dir / "latest.json";
  if (cr.cohort == nullptr) {  // a multi-host run's latest.json is the merged record, at the end
    fs::remove(latest, ec);
    fs::create_symlink(outcome.record_path.filename(), latest, ec);
  }

  state.say(opening_line(record, protocol, options, target, outcome.record_path));
  if (const std::string ranks = detail::describe_cohort(cr); !ranks.empty()) state.say(ranks);

  if (options.live_metrics != nullptr)
    options.live_metrics->run_started(record.run_id, protocol.name, protocol.tests.size());
  detail::RunContext run{record, state, journal, options, target, stop, cr, {}, &facts};
  run.end_before_collective = [&run](const results::TestRecord* ending, std::string_view collective, bool ends) {
    end_before_collective(ending, collective, ends, run);
  };
  run_tests(protocol, plan, run);
  note_short_repetitions(record, plan);

  record.finished_at = utc_timestamp();
  set_run_status(record, journal.failure(), stop, cr);
  try {
    journal.append(results::journal_run_end(record.status, record.reason, record.finished_at));
  } catch (const std::exception& ex) {
    std::cerr << "drivelab: the journal's run_end was not written: " << ex.what() << '\n' << std::flush;
  }
  if (options.live_metrics != nullptr) options.live_metrics->run_ended(record.status);
  journal.release_reserve();  // the run has ended: the space it held back is the user's again
  write_final(state, outcome, cr, out);
  detail::merge_online(cr, options, outcome, out);
  conclude(outcome, cr, out);
  return outcome;
}

}  // namespace drivelab::runner
