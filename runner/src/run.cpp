#include "drivelab/runner/run.hpp"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <random>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/core/rng.hpp"
#include "drivelab/core/units.hpp"
#include "drivelab/results/identity.hpp"
#include "drivelab/results/journal.hpp"
#include "drivelab/results/merge.hpp"
#include "drivelab/results/summary.hpp"
#include "drivelab/results/validate.hpp"
#include "target.hpp"

namespace drivelab::runner {
namespace {

namespace fs = std::filesystem;
using results::Json;
using results::Status;

constexpr const char* kInProgressReason = "run in progress, or the process ended before the run finished";
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

/// What RunOptions::live_metrics is told of test `index`.
LiveTest live_test(const PlannedTest& test, std::size_t index) {
  return LiveTest{test.settings.name, test.settings.kind, index,
                  std::chrono::duration<double>(test.settings.duration).count()};
}

/// Journals intervals, prints progress and keeps the on-disk record current.
///
/// The emulator's thread only queues: a writer thread does the journal append (write + fdatasync),
/// the progress line and the record rewrite (fsync + rename + directory fsync), which together take
/// milliseconds on a real disk. Done on the emulator's thread they made every open-loop emulator
/// (trace replay, vdbench rates, TPC-C timers) issue late once per interval. Events keep their
/// order; when intervals queue up, the record is rewritten once with the newest snapshot. flush()
/// waits until everything queued is on disk (called before a test's end is journaled and before
/// any direct write). A failure of the writer is reported to the emulator at its next interval
/// and to run_one by flush(). What a crash can lose: intervals queued in the last few ms.
class RunState final : public results::TestRecorder::Listener {
 public:
  RunState(results::RunRecord& record, fs::path record_path, results::Journal& journal, std::ostream& out,
           const RunOptions& options)
      : record_(record), record_path_(std::move(record_path)), journal_(journal), out_(out), options_(options) {
    writer_ = std::thread([this] { writer_loop(); });
  }
  ~RunState() override {
    {
      std::lock_guard lock(q_mu_);
      closing_ = true;
    }
    q_cv_.notify_all();
    writer_.join();
  }
  RunState(const RunState&) = delete;
  RunState& operator=(const RunState&) = delete;

  void on_interval(const results::TestRecord& test, const results::Interval& interval) override {
    std::unique_lock lock(q_mu_);
    if (error_) {
      // Once: the emulator's phase fails with the writer's error (as a synchronous write would).
      std::exception_ptr e = std::exchange(error_, nullptr);
      error_reported_ = true;
      std::rethrow_exception(e);
    }
    queue_.push_back(Event{test.name, interval, {}, live_});
    latest_ = test;
    has_latest_ = true;
    lock.unlock();
    q_cv_.notify_all();
  }

  void on_message(const results::TestRecord& test, std::string_view message) override {
    if (options_.quiet) return;
    {
      std::lock_guard lock(q_mu_);
      queue_.push_back(Event{test.name, std::nullopt, std::string(message), {}});
    }
    q_cv_.notify_all();
  }

  /// Waits until every queued event is journaled, printed and the record rewritten. Returns the
  /// writer's error not yet reported to an emulator (empty if none).
  std::string flush() {
    std::unique_lock lock(q_mu_);
    q_cv_.wait(lock, [&] { return queue_.empty() && !has_latest_ && !busy_; });
    if (!error_) return {};
    std::exception_ptr e = std::exchange(error_, nullptr);
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      return ex.what();
    }
  }

  /// The running test and its phase, as the intervals queued from now on are published
  /// (RunOptions::live_metrics); tells the observer the phase began.
  void enter_phase(const PlannedTest& test, std::size_t index, std::string_view phase) {
    const LiveTest t = live_test(test, index);
    if (options_.live_metrics != nullptr) options_.live_metrics->phase_started(t, phase);
    std::lock_guard lock(q_mu_);
    live_ = LiveEvent{std::string(t.kind), std::string(phase), t.index, t.duration_s};
  }

  void say(const std::string& line) {
    flush();
    std::lock_guard lock(mu_);
    clear_live_line();
    out_ << line << '\n' << std::flush;
  }

  void write_record() {
    flush();
    std::lock_guard lock(mu_);
    write(record_);
  }
  /// The final write: an error here is the run's error (the record on disk would be stale). On a
  /// full results disk the indented record may not fit in the released reserve (8 MiB; a record
  /// of thousands of intervals is larger): it is written again on one line, about a third of the
  /// size, saying so in the run's warnings.
  void write_final_record() {
    flush();
    std::lock_guard lock(mu_);
    try {
      results::write_record(record_path_, record_);
    } catch (const std::exception& indented) {
      record_.warnings.push_back(
          fmt::format("the record is written on one line: the indented record did not fit on the results disk ({})",
                      indented.what()));
      try {
        results::write_record(record_path_, record_, -1);
      } catch (...) {
        record_.warnings.pop_back();
        throw;
      }
    }
  }

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
    std::string message;                        ///< a progress message
    LiveEvent live;                             ///< an interval's test and phase
  };

  void writer_loop() {
    std::unique_lock lock(q_mu_);
    for (;;) {
      q_cv_.wait(lock, [&] { return closing_ || !queue_.empty() || has_latest_; });
      if (queue_.empty() && !has_latest_) return;  // closing with nothing left
      std::deque<Event> events;
      events.swap(queue_);
      std::optional<results::TestRecord> snapshot;
      if (has_latest_) snapshot = std::move(latest_);
      has_latest_ = false;
      busy_ = true;
      lock.unlock();
      std::exception_ptr failed;
      try {
        for (const Event& e : events) {
          if (e.interval) {
            journal_.append(results::journal_interval(e.test, *e.interval));
            // Published before the line is printed: whoever reads the line can scrape its values.
            if (options_.live_metrics != nullptr)
              options_.live_metrics->interval(e.live.view(e.test), e.live.phase, *e.interval);
            print_interval(e.test, *e.interval);
          } else {
            print_message(e.test, e.message);
          }
        }
        if (snapshot) write_with_current(*snapshot);
      } catch (...) {
        failed = std::current_exception();
      }
      lock.lock();
      busy_ = false;
      if (failed && !error_ && !error_reported_) error_ = failed;
      q_cv_.notify_all();
    }
  }

  void print_interval(const std::string& test, const results::Interval& interval) {
    std::lock_guard lock(mu_);
    if (options_.quiet) return;
    clear_live_line();
    out_ << results::format_interval_line(test, interval) << '\n' << std::flush;
  }

  void print_message(const std::string& test, const std::string& message) {
    std::lock_guard lock(mu_);
    if (options_.live_line) {
      out_ << "\r\033[K" << fmt::format("[{}] {}", test, message) << std::flush;
      live_line_open_ = true;
    } else {
      out_ << fmt::format("[{}] {}", test, message) << '\n' << std::flush;
    }
  }

  /// Writes the record as it stands plus the running test, when its intervals have at least
  /// doubled since the last write: a whole-record rewrite per interval would write the square of
  /// the interval count (1.4 GB for a 15 MB record at 250 ms intervals); doubling bounds a run's
  /// mid-test rewrites to about twice its final record. The journal has every interval as it
  /// comes; between tests and at the end the record is always written.
  void write_with_current(const results::TestRecord& current) {
    std::lock_guard lock(mu_);
    if (interval_count(record_) + current.intervals.size() < 2 * written_intervals_) return;
    results::RunRecord snapshot = record_;
    snapshot.tests.push_back(current);
    write(snapshot);
  }

  static std::size_t interval_count(const results::RunRecord& r) {
    std::size_t n = 0;
    for (const results::TestRecord& t : r.tests) n += t.intervals.size();
    return n;
  }

  void write(const results::RunRecord& r) {
    written_intervals_ = interval_count(r);
    try {
      results::write_record(record_path_, r);
    } catch (const std::exception& e) {
      // The journal still has everything; do not kill the run for a failed rewrite.
      out_ << "warning: could not rewrite " << record_path_.string() << ": " << e.what() << '\n';
    }
  }
  void clear_live_line() {
    if (live_line_open_) {
      out_ << "\r\033[K";
      live_line_open_ = false;
    }
  }

  std::mutex mu_;                      ///< the output stream and record_ reads by the writer
  std::size_t written_intervals_ = 0;  ///< intervals in the record last written (mu_)
  results::RunRecord& record_;
  fs::path record_path_;
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

/// What the ranks of a multi-host run agreed on so far (every branch below depends only on
/// barrier outcomes, which are the same on every rank, so the ranks' collectives stay in step).
struct CohortRun {
  Cohort* cohort = nullptr;
  std::string peer_stop;  ///< "stopped on rank 2 (host b)": a stop on another rank ends this run too
  bool active() const noexcept { return cohort != nullptr && !cohort->broken(); }
};

/// The phase barrier before `phase` of `test` (a no-op on one host). Brings this rank's state,
/// records the release time in the test's `barriers`, and turns another rank's failure or stop
/// into this rank's (failure / peer_stop). Returns whether the phase runs.
bool phase_barrier(CohortRun& cr, const RunOptions& options, const StopFlag& stop, std::string_view test,
                   const char* phase, std::string& failure, Json& barriers) {
  if (cr.cohort == nullptr) return failure.empty() && !stop.requested();
  if (!cr.active()) {
    if (failure.empty()) failure = "the multi-host run is broken (an earlier collective failed)";
    return false;
  }
  const PhaseState mine = !failure.empty()                            ? PhaseState::failed
                          : stop.requested() || !cr.peer_stop.empty() ? PhaseState::stopping
                                                                      : PhaseState::ready;
  try {
    const PhaseVote v = cr.cohort->barrier(fmt::format("test {}: {}", test, phase), mine, options.barrier_timeout);
    barriers[phase] = v.released_unix_ns;
    if (v.state == PhaseState::failed && failure.empty())
      failure = fmt::format("{} failed before '{}' (its record has the cause); the test stopped on every host",
                            cr.cohort->describe_rank(v.rank), phase);
    if (v.state == PhaseState::stopping && !stop.requested() && cr.peer_stop.empty())
      cr.peer_stop = fmt::format("stopped on {}", cr.cohort->describe_rank(v.rank));
    return v.state == PhaseState::ready;
  } catch (const CohortError& e) {
    if (failure.empty()) failure = fmt::format("multi-host: {}", e.what());
    return false;
  }
}

void run_one(PlannedTest& test, std::size_t index, results::RunRecord& record, RunState& state,
             results::Journal& journal, const RunOptions& options, const detail::RunTarget& target,
             const StopFlag& stop, CohortRun& cr) {
  results::TestRecord tr;
  tr.name = test.settings.name;
  tr.kind = test.settings.kind;
  tr.status = Status::running;
  tr.config = test.emulator->effective_config();
  tr.started_at = utc_timestamp();
  std::string failure;
  bool failed_hurried = false;  // the failure came after a second signal stopped the servers at once
  try {
    journal.append(results::journal_test_start(tr));
  } catch (const std::exception& ex) {
    failure = fmt::format("recording results failed: {}", ex.what());
  }

  results::TestRecorder recorder(tr, &state);
  TestContext ctx;
  ctx.target_dir = options.target;
  ctx.device = target.device();
  ctx.run_id = record.run_id;
  ctx.seed = Rng(record.seed).split(index)();
  ctx.settings = test.settings;
  ctx.stop = &stop;
  ctx.recorder = &recorder;
  ctx.cohort = cr.cohort;
  ctx.cohort_timeout = options.barrier_timeout;

  Emulator& e = *test.emulator;
  bool ran = false;
  bool entered_prepare = false;
  Json barriers = Json::object();
  // One barrier before each phase; the next is passed only when the last let every rank in.
  bool go = true;
  const auto phase = [&](const char* barrier, const std::string& name, auto&& body) {
    go = go && phase_barrier(cr, options, stop, tr.name, barrier, failure, barriers);
    if (!go || !failure.empty() || stop.requested()) return;
    state.enter_phase(test, index, barrier);
    state.say(fmt::format("== {} ({}): {}", tr.name, tr.kind, name));
    try {
      body();
    } catch (const std::exception& ex) {
      failure = fmt::format("{} failed: {}", name, ex.what());
      failed_hurried = stop.hurried();
    }
  };
  const std::int64_t t0 = monotonic_ns();
  std::int64_t t_run = t0;
  phase("prepare", "prepare", [&] {
    entered_prepare = true;
    e.prepare(ctx);
  });
  phase("warmup", fmt::format("warm-up {}", format_duration(test.settings.warmup)), [&] {
    t_run = monotonic_ns();
    e.warmup(ctx);
  });
  std::int64_t t_measure = monotonic_ns();
  // A kind whose run is not `duration:` long (a render, a replay, a curve) says what it does instead.
  const std::string schedule = e.schedule(test.settings);
  phase("run", schedule.empty() ? fmt::format("run {}", format_duration(test.settings.duration)) : "run: " + schedule,
        [&] {
          ran = true;
          t_measure = monotonic_ns();
          e.run(ctx);
        });
  const std::int64_t t_end = monotonic_ns();
  // Multi-host: no rank verifies before every rank's measured phase has ended (a shared
  // database's consistency is checked once, by rank 0, after every rank's terminals stopped:
  // tpcc shared_database). A stop does not skip verify; a failure on any rank skips it on all.
  if (ran && cr.cohort != nullptr) (void)phase_barrier(cr, options, stop, tr.name, "verify", failure, barriers);
  if (ran && failure.empty() && !stop.hurried()) {
    // Verify even after an interrupt (not after a second signal): the database must still be consistent.
    state.enter_phase(test, index, "verify");
    state.say(fmt::format("== {} ({}): verify", tr.name, tr.kind));
    try {
      e.verify(ctx);
    } catch (const std::exception& ex) {
      failure = fmt::format("verify failed: {}", ex.what());
      failed_hurried = stop.hurried();
    }
  }
  if (entered_prepare) e.cleanup(ctx);
  // Every interval journaled before the test's end (the writer thread may still hold some).
  if (std::string err = state.flush(); !err.empty() && failure.empty())
    failure = fmt::format("recording results failed: {}", err);

  recorder.with_record([&](results::TestRecord& r) {
    if (r.warmup_s == 0 && r.measured_s == 0) {
      r.warmup_s = ran ? seconds_between(t_run, t_measure) : 0.0;
      r.measured_s = ran ? seconds_between(t_measure, t_end) : 0.0;
    }
    r.finished_at = utc_timestamp();
    if (cr.cohort != nullptr) r.barriers = barriers;
    if (!failure.empty() && !failed_hurried) {
      r.status = Status::failed;
      r.reason = failure;
    } else if (stop.hurried()) {
      // What failed after the servers were stopped at once failed because of it.
      r.status = Status::interrupted;
      r.reason = failure.empty() ? std::string(
                                       "stopped by a second signal: managed servers stopped at once, verify skipped; "
                                       "intervals so far are kept")
                                 : fmt::format(
                                       "stopped by a second signal: managed servers stopped at once, so {} failed (not "
                                       "counted as a failure); intervals so far are kept",
                                       failure.substr(0, failure.find(" failed")));
    } else if (!stop.requested() && !cr.peer_stop.empty()) {
      r.status = Status::interrupted;
      r.reason = fmt::format("{}: the run stopped on every host; intervals so far are kept", cr.peer_stop);
    } else if (stop.requested()) {
      r.status = Status::interrupted;
      r.reason = ran ? "stopped by signal during the measured phase; intervals so far are kept"
                     : "stopped by signal before the measured phase";
    } else {
      r.status = Status::complete;
      r.reason.clear();
    }
  });
  try {
    journal.append(results::journal_test_end(tr));
  } catch (const std::exception& ex) {
    // The results disk filled at this very event: the test fails with it, and its test_end goes
    // once more (into the released reserve; recovery keeps the last test_end of a name).
    recorder.with_record([&](results::TestRecord& r) {
      if (r.status == Status::failed) return;
      r.status = Status::failed;
      r.reason = fmt::format("recording results failed: {}", ex.what());
    });
    try {
      journal.append(results::journal_test_end(tr));
    } catch (const std::exception&) {
      // journal.failure() has the cause; run_protocol reports it
    }
  }
  if (options.live_metrics != nullptr) options.live_metrics->test_ended(live_test(test, index), tr.status);
  record.tests.push_back(std::move(tr));
  state.write_record();
}

/// The end of a multi-host run: rank 0 gathers every rank's final record (as written: the JSON
/// text), merges them with results::merge_host_records, the function `drivelab results merge`
/// uses on the files, and writes <job_id>.json; latest.json names it. A failure here leaves every
/// rank's own record as it is and is said on stderr.
void merge_online(CohortRun& cr, const RunOptions& options, RunOutcome& outcome, std::ostream& out) {
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
  try {
    std::vector<results::MergeInput> inputs;
    for (std::size_t r = 0; r < texts.size(); ++r)
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
  written();
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
    record.reason =
        cr.cohort == nullptr
            ? "stopped by signal (SIGINT/SIGTERM/SIGHUP); finished intervals are kept"
            : "stopped by signal (SIGINT/SIGTERM/SIGHUP: under mpirun, Ctrl-C on mpirun or another rank that "
              "died); finished intervals are kept";
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
}

}  // namespace

RunOutcome run_protocol(Protocol& protocol, const RunOptions& options, const StopFlag& stop) {
  std::ostream& out = options.out ? *options.out : std::cout;
  std::error_code ec;
  RunOutcome outcome;
  results::RunRecord& record = outcome.record;
  CohortRun cr{options.cohort, {}};
  if (cr.cohort != nullptr) {
    // One job id for the ranks: rank 0's run id; each rank's record is "<job>-r<rank>".
    const std::string job = cr.cohort->broadcast(make_run_id(), "job id");
    record.run_id = fmt::format("{}-r{}", job, cr.cohort->rank());
    const ClockOffset off = cr.cohort->clock_offset();
    record.cohort = Json{{"job_id", job},
                         {"rank", cr.cohort->rank()},
                         {"size", cr.cohort->size()},
                         {"hosts", cr.cohort->hosts()},
                         {"clock_offset_ns", off.offset_ns},
                         {"clock_offset_uncertainty_ns", off.uncertainty_ns}};
  } else {
    record.run_id = make_run_id();
  }
  // Before anything is created: a refused target leaves no trace.
  const detail::RunTarget target = detail::RunTarget::acquire(protocol, options, record.run_id);
  fs::create_directories(options.out_dir, ec);
  if (ec)
    throw EnvironmentError(
        fmt::format("cannot create output directory '{}': {}", options.out_dir.string(), ec.message()));
  if (options.start_at) {
    // The wait is on the monotonic clock from one reading of the wall clock: a clock step during
    // it does not move the start. A stop ends it; the tests are then skipped as interrupted.
    const auto left =
        std::chrono::duration_cast<std::chrono::nanoseconds>(*options.start_at - std::chrono::system_clock::now());
    if (left.count() > 0) {
      (options.out ? *options.out : std::cout)
          << fmt::format("drivelab: waiting {:.1f} s for --start-at\n", seconds_between(0, left.count())) << std::flush;
      stop.sleep_until(monotonic_ns() + left.count());
    }
  }

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
  record.reason = kInProgressReason;
  if (record.tool.value("sanitizers", false))
    record.warnings.push_back("built with sanitizers: numbers are not representative");
  if (record.tool.value("build_type", std::string()) == "Debug")
    record.warnings.push_back("debug build: numbers are not representative");
  for (const std::string& w : target.warnings()) record.warnings.push_back(w);
  if (const Json fs_type = record.target.value("filesystem", Json()); fs_type == "tmpfs" || fs_type == "ramfs")
    record.warnings.push_back(
        fmt::format("target is on {} (memory): results measure RAM, not a drive", fs_type.get<std::string>()));

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
  RunState state(record, outcome.record_path, journal, out, options);
  state.write_record();
  const fs::path latest = options.out_dir / "latest.json";
  if (cr.cohort == nullptr) {  // a multi-host run's latest.json is the merged record, at the end
    fs::remove(latest, ec);
    fs::create_symlink(outcome.record_path.filename(), latest, ec);
  }

  state.say(fmt::format("drivelab {}: protocol '{}' on {} ({}), record {}", record.tool.value("version", ""),
                        protocol.name, options.target.string(),
                        target.device() ? target.describe()
                        : record.target.value("filesystem", Json()).is_string()
                            ? record.target["filesystem"].get<std::string>()
                            : std::string("?"),
                        outcome.record_path.string()));
  if (cr.cohort != nullptr)
    state.say(fmt::format(
        "{} of {} ranks (hosts: {}): the interval lines are this rank's; the summary at the end is "
        "the merged record of every rank",
        cr.cohort->describe_rank(cr.cohort->rank()), cr.cohort->size(), fmt::join(cr.cohort->hosts(), ", ")));

  if (options.live_metrics != nullptr)
    options.live_metrics->run_started(record.run_id, protocol.name, protocol.tests.size());
  for (std::size_t i = 0; i < protocol.tests.size(); ++i) {
    PlannedTest& t = protocol.tests[i];
    const std::string journal_failure = journal.failure();
    if (stop.requested() || !journal_failure.empty() || !cr.peer_stop.empty() ||
        (cr.cohort != nullptr && !cr.active())) {
      if (cr.active()) {  // the other ranks learn at this test's first barrier why it is not run
        std::string failure = journal_failure;
        Json ignored;
        phase_barrier(cr, options, stop, t.settings.name, "prepare", failure, ignored);
      }
      results::TestRecord skipped;
      skipped.name = t.settings.name;
      skipped.kind = t.settings.kind;
      skipped.status = Status::skipped;
      skipped.reason = !journal_failure.empty() ? "not run: the result journal could not be written"
                       : stop.requested()       ? "run interrupted before this test"
                       : !cr.peer_stop.empty() ? fmt::format("not run: {}", cr.peer_stop)
                                               : "not run: the multi-host run is broken (an earlier collective failed)";
      skipped.config = t.emulator->effective_config();
      if (options.live_metrics != nullptr) options.live_metrics->test_ended(live_test(t, i), Status::skipped);
      // Journaled too (a test_end without a test_start), so `results recover` keeps it.
      try {
        journal.append(results::journal_test_end(skipped));
      } catch (const std::exception&) {
        // the journal's first failure is the run's reason below
      }
      record.tests.push_back(std::move(skipped));
      continue;
    }
    run_one(t, i, record, state, journal, options, target, stop, cr);
  }

  record.finished_at = utc_timestamp();
  set_run_status(record, journal.failure(), stop, cr);
  try {
    journal.append(results::journal_run_end(record.status, record.reason, record.finished_at));
  } catch (const std::exception& ex) {
    std::cerr << "drivelab: the journal's run_end was not written: " << ex.what() << '\n' << std::flush;
  }
  if (options.live_metrics != nullptr) options.live_metrics->run_ended(record.status);
  journal.release_reserve();  // the run has ended: the space it held back is the user's again
  try {
    state.write_final_record();
  } catch (const std::exception& e) {
    // The numbers still reach the user: the summary of the record that could not be written.
    if (cr.cohort == nullptr || cr.cohort->rank() == 0)
      out << '\n' << results::format_summary(record) << "\nrecord: not written (below)\n" << std::flush;
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
  if (cr.active()) merge_online(cr, options, outcome, out);
  // The test suite validates every final record and journal against the schema (no-op otherwise).
  results::keep_copy_for_validation(outcome.record_path);
  results::keep_copy_for_validation(outcome.journal_path);
  if (!outcome.merged_path.empty()) results::keep_copy_for_validation(outcome.merged_path);
  if (outcome.merged) {
    out << '\n' << results::format_summary(*outcome.merged, outcome.merged_path) << std::flush;
  } else if (cr.cohort == nullptr || cr.cohort->rank() == 0) {
    out << '\n' << results::format_summary(record, outcome.record_path) << std::flush;
  }
  return outcome;
}

}  // namespace drivelab::runner
