// One test of a run: the single-host phase sequence (test_sequence.hpp).
#include "test_sequence.hpp"

#include <cstdint>
#include <exception>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/rng.hpp"
#include "drivelab/core/units.hpp"
#include "drivelab/results/catalogue.hpp"
#include "drivelab/results/record_stats.hpp"
#include "drivelab/results/recorder.hpp"
#include "drivelab/telemetry/test_telemetry.hpp"

namespace drivelab::runner::detail {
namespace {

using results::Json;
using results::Status;

/// A test's status and reason once its phases have ended.
struct Outcome {
  Status status = Status::complete;
  std::string reason;
};

/// failed when a phase failed (unless because a second signal stopped the servers at once),
/// interrupted by that second signal, by another rank's stop or by a signal, else complete.
Outcome test_outcome(const std::string& failure, bool failed_hurried, bool ran, const StopFlag& stop,
                     const CohortRun& cr) {
  if (!failure.empty() && !failed_hurried) return {Status::failed, failure};
  if (stop.hurried()) {
    // What failed after the servers were stopped at once failed because of it.
    return {Status::interrupted,
            failure.empty()
                ? std::string("stopped by a second signal: managed servers stopped at once, verify skipped; "
                              "intervals so far are kept")
                : fmt::format("stopped by a second signal: managed servers stopped at once, so {} failed (not "
                              "counted as a failure); intervals so far are kept",
                              failure.substr(0, failure.find(" failed")))};
  }
  if (!stop.requested() && !cr.peer_stop.empty())
    return {Status::interrupted,
            fmt::format("{}: the run stopped on every host; intervals so far are kept", cr.peer_stop)};
  if (stop.requested())
    return {Status::interrupted,
            ran ? fmt::format("stopped by {} during the measured phase; intervals so far are kept", stop.signal_name())
                : fmt::format("stopped by {} before the measured phase", stop.signal_name())};
  return {Status::complete, {}};
}

/// The phases of one test on this host, in order; each passes its barrier first (cohort_run.hpp).
class TestSequence {
 public:
  TestSequence(PlannedTest& test, std::size_t index, const Repetition& rep, RunContext& run)
      : test_(test), index_(index), rep_(rep), run_(run), recorder_(tr_, &run.state) {
    tr_.name = test.settings.name;
    tr_.kind = test.settings.kind;
    tr_.repetition = rep.number;
    tr_.discarded = rep.discarded;
    if (rep.number > 0) tr_.seed = rep.seed;
    label_ = results::test_label(tr_);
    tr_.status = Status::running;
    tr_.config = test.emulator->effective_config();
    tr_.started_at = utc_timestamp();
  }

  void run() {
    start();
    measure();
    if (ran_) record_telemetry();
    if (ran_ && failure_.empty()) within_run_confidence();
    if (ran_) target_still_there();
    verify();
    // A physics check that fails the test (telemetry/physics.hpp), after verify: the database's
    // consistency is still checked.
    if (failure_.empty() && !physics_failure_.empty()) failure_ = physics_failure_;
    if (entered_prepare_) test_.emulator->cleanup(ctx_);
    // Every interval journaled before the test's end (the writer thread may still hold some).
    if (std::string err = run_.state.flush(); !err.empty() && failure_.empty())
      failure_ = fmt::format("recording results failed: {}", err);
    settle();
    journal_end();
    if (run_.options.live_metrics != nullptr) {
      run_.options.live_metrics->test_recorded(live_test(test_, index_), tr_);
      run_.options.live_metrics->test_ended(live_test(test_, index_), tr_.status);
    }
    run_.record.tests.push_back(std::move(tr_));
    if (rep_.number > 0) run_.record.repetitions = results::summarize_repetitions(run_.record);
    run_.state.write_record();
  }

 private:
  /// The journal's test_start and the emulator's context.
  void start() {
    try {
      run_.journal.append(results::journal_test_start(tr_));
    } catch (const std::exception& ex) {
      failure_ = fmt::format("recording results failed: {}", ex.what());
    }
    // The record's target.path (absolute, links resolved: results/identity.hpp), so that every
    // path the emulators record (details.file.path, the database's directory) names its file
    // when the record is read elsewhere, spelled as target.path spells the directory.
    const auto recorded = run_.record.target.find("path");
    ctx_.target_dir = recorded != run_.record.target.end() && recorded->is_string()
                          ? std::filesystem::path(recorded->get<std::string>())
                          : run_.options.target;
    ctx_.device = run_.target.device();
    ctx_.run_id = run_.record.run_id;
    ctx_.seed = Rng(rep_.seed).split(index_)();
    ctx_.settings = test_.settings;
    ctx_.stop = &run_.stop;
    ctx_.recorder = &recorder_;
    ctx_.cohort = run_.cr.cohort;
    ctx_.cohort_timeout = run_.options.barrier_timeout;
  }

  /// One phase: its barrier, then `body` unless the test already failed or a stop was asked for.
  /// The next barrier is passed only when the last let every rank in.
  template <class Body>
  void phase(const char* barrier, const std::string& name, Body&& body) {
    if (go_) records_first(barrier);
    go_ = go_ && phase_barrier(run_.cr, run_.options, run_.stop, label_, barrier, failure_, barriers_,
                               [this, barrier] { records_first(barrier); });
    if (!go_ || !failure_.empty() || run_.stop.requested()) return;
    run_.state.enter_phase(test_, index_, barrier);
    run_.state.say(fmt::format("== {} ({}): {}", label_, tr_.kind, name));
    try {
      body();
    } catch (const std::exception& ex) {
      failure_ = fmt::format("{} failed: {}", name, ex.what());
      failed_hurried_ = run_.stop.hurried();
    }
  }

  /// prepare, warm-up and the measured phase.
  void measure() {
    Emulator& e = *test_.emulator;
    t_run_ = monotonic_ns();
    phase("prepare", "prepare", [&] {
      entered_prepare_ = true;
      e.prepare(ctx_);
    });
    phase("warmup", fmt::format("warm-up {}", format_duration(test_.settings.warmup)), [&] {
      t_run_ = monotonic_ns();
      e.warmup(ctx_);
    });
    t_measure_ = monotonic_ns();
    if (go_ && failure_.empty() && !run_.stop.requested()) health_before();
    // A kind whose run is not `duration:` long (a render, a replay, a curve) says what it does instead.
    const std::string schedule = e.schedule(test_.settings);
    phase("run",
          schedule.empty() ? fmt::format("run {}", format_duration(test_.settings.duration)) : "run: " + schedule, [&] {
            ran_ = true;
            t_measure_ = monotonic_ns();
            sample_intervals();
            e.run(ctx_);
          });
    t_end_ = monotonic_ns();
    if (telemetry_) {
      telemetry_->end();
      recorder_.set_interval_sampler({});
      if (ran_) telemetry_->health_after();
    }
  }

  /// The test's telemetry, made before the measured phase: the drives' health read now (when
  /// the run found drives to read; telemetry/health_record.hpp), outside the window.
  void health_before() {
    telemetry_.emplace(run_.options.target);
    telemetry_->set_run(run_.facts);
    telemetry_->health_before();
  }

  /// The device and host telemetry of the measured phase (telemetry/test_telemetry.hpp): a sample
  /// now, and one at each interval the emulator closes, its figures added to the interval.
  void sample_intervals() {
    if (!telemetry_) health_before();
    telemetry_->begin();
    recorder_.set_interval_sampler([this](results::Interval& iv) { telemetry_->close_interval(iv); });
  }

  /// The telemetry's figures over the measured phase, the demand per unit of work,
  /// details.telemetry and details.health, and the physics checks (a failing one fails the test
  /// after verify); a failure to record them is a warning, not the test's failure.
  void record_telemetry() {
    if (!telemetry_) return;
    try {
      physics_failure_ = telemetry_->record(recorder_);
    } catch (const std::exception& ex) {
      recorder_.warning(fmt::format("device and host telemetry not recorded: {}", ex.what()));
    }
  }

  /// Verify even after an interrupt (not after a second signal): the database must still be
  /// consistent. Multi-host: no rank verifies before every rank's measured phase has ended (a
  /// shared database's consistency is checked once, by rank 0, after every rank's terminals
  /// stopped: tpcc shared_database). A stop does not skip verify; a failure on any rank skips it on all.
  void verify() {
    if (ran_ && run_.cr.cohort != nullptr) {
      records_first("verify");
      (void)phase_barrier(run_.cr, run_.options, run_.stop, label_, "verify", failure_, barriers_,
                          [this] { records_first("verify"); });
    }
    if (!ran_ || !failure_.empty() || run_.stop.hurried()) return;
    run_.state.enter_phase(test_, index_, "verify");
    run_.state.say(fmt::format("== {} ({}): verify", label_, tr_.kind));
    try {
      test_.emulator->verify(ctx_);
    } catch (const std::exception& ex) {
      failure_ = fmt::format("verify failed: {}", ex.what());
      failed_hurried_ = run_.stop.hurried();
    }
  }

  /// The 95% interval of the test's mean rate from its own intervals, by batch means, and the
  /// warning when it is wider than ±2% (results/record_stats.hpp; within-run noise only).
  /// A target directory removed while the test ran (rm -rf, a clean-up script) leaves the test's
  /// files open and written after their names are gone: said, since the run cannot see it
  /// otherwise (the files' I/O still succeeds).
  void target_still_there() {
    if (run_.target.device()) return;
    std::error_code ec;
    if (std::filesystem::is_directory(run_.options.target, ec)) return;
    recorder_.warning(fmt::format(
        "the target directory {} no longer exists at the end of this test: it was removed while the test ran, "
        "whose files stayed open and in use after their names were gone (its figures are of unlinked files)",
        run_.options.target.string()));
  }

  void within_run_confidence() {
    std::optional<results::WithinRun> w;
    try {
      recorder_.with_record([&](const results::TestRecord& r) { w = results::within_run_confidence(r); });
    } catch (const std::invalid_argument&) {
      return;  // a rate that is not a number: no interval
    }
    if (!w) return;
    const inference::BatchMeans& b = w->batch_means;
    recorder_.metric(*w->rate->low, b.ci.low);
    recorder_.metric(*w->rate->high, b.ci.high);
    recorder_.metric(results::catalogue::rate_ci95_half_width_pct, 100 * b.relative_half_width);
    recorder_.metric(results::catalogue::batch_means_lag1, b.lag1);
    recorder_.metric(results::catalogue::batch_means_batches, static_cast<double>(b.batches));
    if (std::string text = results::within_run_warning(*w); !text.empty()) recorder_.warning(std::move(text));
  }

  /// Phase times (unless the emulator set them), the end time, the barriers and the status.
  void settle() {
    recorder_.with_record([&](results::TestRecord& r) { settle(r); });
  }
  void settle(results::TestRecord& r) const {
    if (r.warmup_s == 0 && r.measured_s == 0) {
      r.warmup_s = ran_ ? seconds_between(t_run_, t_measure_) : 0.0;
      r.measured_s = ran_ ? seconds_between(t_measure_, t_end_) : 0.0;
    }
    r.finished_at = utc_timestamp();
    if (run_.cr.cohort != nullptr) r.barriers = barriers_;
    Outcome o = test_outcome(failure_, failed_hurried_, ran_, run_.stop, run_.cr);
    r.status = o.status;
    r.reason = std::move(o.reason);
  }

  /// Before the barrier `phase` of a cohort that still works (RunContext::end_before_collective):
  /// when the run is ending here (CohortRun::records_first) the test's end as it stands (every
  /// interval journaled first), the run's end and the final record, durable before the collective;
  /// otherwise the record as it must stand if the process ends in the barrier (this test
  /// `interrupted`, naming it). Verify and cleanup, if the rank comes back, end the test again.
  void records_first(const char* phase) {
    if (!run_.cr.active()) return;
    const bool ending = run_.cr.records_first(run_.stop, !failure_.empty());
    if (std::string err = run_.state.flush(); !err.empty() && failure_.empty())
      failure_ = fmt::format("recording results failed: {}", err);
    results::TestRecord now;
    recorder_.with_record([&](const results::TestRecord& r) { now = r; });
    settle(now);
    if (!ending && now.status == Status::complete) {
      now.status = Status::interrupted;
      now.reason = fmt::format(
          "the record was last written as this rank entered the barrier before '{}': the process ended "
          "there or later; intervals so far are kept",
          phase);
    }
    run_.end_before_collective(&now, fmt::format("test {}: {}", label_, phase), ending);
  }

  void journal_end() {
    try {
      run_.journal.append(results::journal_test_end(tr_));
    } catch (const std::exception& ex) {
      // The results disk filled at this very event: the test fails with it, and its test_end goes
      // once more (into the released reserve; recovery keeps the last test_end of a name).
      recorder_.with_record([&](results::TestRecord& r) {
        if (r.status == Status::failed) return;
        r.status = Status::failed;
        r.reason = fmt::format("recording results failed: {}", ex.what());
      });
      try {
        run_.journal.append(results::journal_test_end(tr_));
      } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): run_protocol reports journal.failure()
      }
    }
  }

  PlannedTest& test_;
  std::size_t index_;
  Repetition rep_;
  RunContext& run_;
  results::TestRecord tr_;
  std::string label_;  ///< the test's name, with its repetition in a repeated run
  results::TestRecorder recorder_;
  TestContext ctx_;
  std::optional<telemetry::TestTelemetry> telemetry_;  ///< from just before the measured phase
  std::string failure_;
  std::string physics_failure_;  ///< a physics check that fails the test (telemetry/physics.hpp)
  bool failed_hurried_ = false;  ///< the failure came after a second signal stopped the servers at once
  bool go_ = true;               ///< every barrier so far let every rank in
  bool ran_ = false;
  bool entered_prepare_ = false;
  Json barriers_ = Json::object();
  std::int64_t t_run_ = 0;
  std::int64_t t_measure_ = 0;
  std::int64_t t_end_ = 0;
};

}  // namespace

void run_one(PlannedTest& test, std::size_t index, const Repetition& rep, RunContext& run) {
  TestSequence(test, index, rep, run).run();
}

void skip_test(PlannedTest& test, std::size_t index, const Repetition& rep, RunContext& run,
               const std::string& journal_failure) {
  CohortRun& cr = run.cr;
  results::TestRecord skipped;
  skipped.name = test.settings.name;
  skipped.kind = test.settings.kind;
  skipped.repetition = rep.number;
  skipped.discarded = rep.discarded;
  if (rep.number > 0) skipped.seed = rep.seed;
  // The reason is known before the barrier: this rank skips because one of the first three holds
  // (or the cohort is broken, and then there is no barrier), and the barrier can only add a
  // peer_stop, which comes after them.
  skipped.status = Status::skipped;
  skipped.reason = !journal_failure.empty() ? "not run: the result journal could not be written"
                   : run.stop.requested()   ? "run interrupted before this test"
                   : !cr.peer_stop.empty()  ? fmt::format("not run: {}", cr.peer_stop)
                                            : "not run: the multi-host run is broken (an earlier collective failed)";
  skipped.config = test.emulator->effective_config();
  if (run.options.live_metrics != nullptr)
    run.options.live_metrics->test_ended(live_test(test, index), Status::skipped);
  // Journaled too (a test_end without a test_start), so `results recover` keeps it.
  try {
    run.journal.append(results::journal_test_end(skipped));
  } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): the journal's first failure is the run's reason
  }
  const std::string label = results::test_label(skipped);
  run.record.tests.push_back(std::move(skipped));
  if (cr.active()) {  // the other ranks learn at this test's first barrier why it is not run
    std::string failure = journal_failure;
    run.end_before_collective(nullptr, fmt::format("test {}: prepare", label),
                              cr.records_first(run.stop, !failure.empty()));
    Json ignored;
    phase_barrier(cr, run.options, run.stop, label, "prepare", failure, ignored);
  }
}

}  // namespace drivelab::runner::detail
