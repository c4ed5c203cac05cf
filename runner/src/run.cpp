#include "drivelab/runner/run.hpp"

#include <unistd.h>

#include <chrono>
#include <iostream>
#include <mutex>
#include <random>

#include <fmt/format.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/core/rng.hpp"
#include "drivelab/core/units.hpp"
#include "drivelab/results/identity.hpp"
#include "drivelab/results/journal.hpp"
#include "drivelab/results/summary.hpp"
#include "target.hpp"

namespace drivelab::runner {
namespace {

namespace fs = std::filesystem;
using results::Json;
using results::Status;

constexpr const char* kInProgressReason = "run in progress, or the process ended before the run finished";

std::string make_run_id() {
  std::string ts = utc_timestamp();  // 2026-11-29T19:53:44.123Z
  std::string compact;
  for (char c : ts.substr(0, 19))
    if (c != '-' && c != ':') compact += c;
  std::random_device rd;
  return fmt::format("{}Z-{:06x}", compact, rd() & 0xFFFFFF);
}

/// Journals intervals, prints progress and keeps the on-disk record current.
class RunState final : public results::TestRecorder::Listener {
 public:
  RunState(results::RunRecord& record, fs::path record_path, results::Journal& journal,
           std::ostream& out, const RunOptions& options)
      : record_(record), record_path_(std::move(record_path)), journal_(journal), out_(out),
        options_(options) {}

  void on_interval(const results::TestRecord& test, const results::Interval& interval) override {
    journal_.append(results::journal_interval(test.name, interval));
    std::lock_guard lock(mu_);
    if (!options_.quiet) {
      clear_live_line();
      out_ << results::format_interval_line(test.name, interval) << '\n' << std::flush;
    }
    write_with_current(test);
  }

  void on_message(const results::TestRecord& test, std::string_view message) override {
    std::lock_guard lock(mu_);
    if (options_.quiet) return;
    if (options_.live_line) {
      out_ << "\r\033[K" << fmt::format("[{}] {}", test.name, message) << std::flush;
      live_line_open_ = true;
    } else {
      out_ << fmt::format("[{}] {}", test.name, message) << '\n' << std::flush;
    }
  }

  void say(const std::string& line) {
    std::lock_guard lock(mu_);
    clear_live_line();
    out_ << line << '\n' << std::flush;
  }

  /// Writes the record as it stands plus the running test (a copy, so the emulator may go on).
  void write_with_current(const results::TestRecord& current) {
    results::RunRecord snapshot = record_;
    snapshot.tests.push_back(current);
    write(snapshot);
  }
  void write_record() {
    std::lock_guard lock(mu_);
    write(record_);
  }
  /// The final write: an error here is the run's error (the record on disk would be stale).
  void write_final_record() {
    std::lock_guard lock(mu_);
    results::write_record(record_path_, record_);
  }

 private:
  void write(const results::RunRecord& r) {
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

  std::mutex mu_;
  results::RunRecord& record_;
  fs::path record_path_;
  results::Journal& journal_;
  std::ostream& out_;
  const RunOptions& options_;
  bool live_line_open_ = false;
};

void run_one(PlannedTest& test, std::size_t index, results::RunRecord& record, RunState& state,
             results::Journal& journal, const RunOptions& options, const detail::RunTarget& target,
             const StopFlag& stop) {
  results::TestRecord tr;
  tr.name = test.settings.name;
  tr.kind = test.settings.kind;
  tr.status = Status::running;
  tr.config = test.emulator->effective_config();
  tr.started_at = utc_timestamp();
  journal.append(results::journal_test_start(tr));

  results::TestRecorder recorder(tr, &state);
  TestContext ctx;
  ctx.target_dir = options.target;
  ctx.device = target.device();
  ctx.run_id = record.run_id;
  ctx.seed = Rng(record.seed).split(index)();
  ctx.settings = test.settings;
  ctx.stop = &stop;
  ctx.recorder = &recorder;

  Emulator& e = *test.emulator;
  std::string failure;
  bool ran = false;
  const auto phase = [&](const char* name, auto&& body) {
    if (!failure.empty() || stop.requested()) return;
    state.say(fmt::format("== {} ({}): {}", tr.name, tr.kind, name));
    try {
      body();
    } catch (const std::exception& ex) {
      failure = fmt::format("{} failed: {}", name, ex.what());
    }
  };
  const std::int64_t t0 = monotonic_ns();
  std::int64_t t_run = t0;
  phase("prepare", [&] { e.prepare(ctx); });
  phase(fmt::format("warm-up {}", format_duration(test.settings.warmup)).c_str(), [&] {
    t_run = monotonic_ns();
    e.warmup(ctx);
  });
  const std::int64_t t_measure = monotonic_ns();
  phase(fmt::format("run {}", format_duration(test.settings.duration)).c_str(), [&] {
    ran = true;
    e.run(ctx);
  });
  const std::int64_t t_end = monotonic_ns();
  if (ran && failure.empty()) {
    // Verify even after an interrupt: the database must still be consistent.
    state.say(fmt::format("== {} ({}): verify", tr.name, tr.kind));
    try {
      e.verify(ctx);
    } catch (const std::exception& ex) {
      failure = fmt::format("verify failed: {}", ex.what());
    }
  }
  e.cleanup(ctx);

  recorder.with_record([&](results::TestRecord& r) {
    if (r.warmup_s == 0 && r.measured_s == 0) {
      r.warmup_s = ran ? static_cast<double>(t_measure - t_run) / 1e9 : 0.0;
      r.measured_s = ran ? static_cast<double>(t_end - t_measure) / 1e9 : 0.0;
    }
    r.finished_at = utc_timestamp();
    if (!failure.empty()) {
      r.status = Status::failed;
      r.reason = failure;
    } else if (stop.requested()) {
      r.status = Status::interrupted;
      r.reason = ran ? "stopped by signal during the measured phase; intervals so far are kept"
                     : "stopped by signal before the measured phase";
    } else {
      r.status = Status::complete;
      r.reason.clear();
    }
  });
  journal.append(results::journal_test_end(tr));
  record.tests.push_back(std::move(tr));
  state.write_record();
}

}  // namespace

RunOutcome run_protocol(Protocol& protocol, const RunOptions& options, const StopFlag& stop) {
  std::ostream& out = options.out ? *options.out : std::cout;
  std::error_code ec;
  RunOutcome outcome;
  results::RunRecord& record = outcome.record;
  record.run_id = make_run_id();
  // Before anything is created: a refused target leaves no trace.
  const detail::RunTarget target = detail::RunTarget::acquire(protocol, options, record.run_id);
  fs::create_directories(options.out_dir, ec);
  if (ec) throw EnvironmentError(fmt::format("cannot create output directory '{}': {}", options.out_dir.string(), ec.message()));

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
  if (const Json fs_type = record.target.value("filesystem", Json());
      fs_type == "tmpfs" || fs_type == "ramfs")
    record.warnings.push_back(fmt::format("target is on {} (memory): results measure RAM, not a drive",
                                          fs_type.get<std::string>()));

  outcome.record_path = options.out_dir / (record.run_id + ".json");
  outcome.journal_path = options.out_dir / (record.run_id + ".journal.jsonl");
  results::Journal journal(outcome.journal_path);
  journal.append(results::journal_run_start(record));
  RunState state(record, outcome.record_path, journal, out, options);
  state.write_record();
  const fs::path latest = options.out_dir / "latest.json";
  fs::remove(latest, ec);
  fs::create_symlink(outcome.record_path.filename(), latest, ec);

  state.say(fmt::format("drivelab {}: protocol '{}' on {} ({}), record {}", record.tool.value("version", ""),
                        protocol.name, options.target.string(),
                        target.device() ? target.describe()
                        : record.target.value("filesystem", Json()).is_string()
                            ? record.target["filesystem"].get<std::string>() : std::string("?"),
                        outcome.record_path.string()));

  for (std::size_t i = 0; i < protocol.tests.size(); ++i) {
    PlannedTest& t = protocol.tests[i];
    if (stop.requested()) {
      results::TestRecord skipped;
      skipped.name = t.settings.name;
      skipped.kind = t.settings.kind;
      skipped.status = Status::skipped;
      skipped.reason = "run interrupted before this test";
      skipped.config = t.emulator->effective_config();
      record.tests.push_back(std::move(skipped));
      continue;
    }
    run_one(t, i, record, state, journal, options, target, stop);
  }

  record.finished_at = utc_timestamp();
  bool any_failed = false;
  for (const auto& t : record.tests) any_failed = any_failed || t.status == Status::failed;
  if (stop.requested()) {
    record.status = Status::interrupted;
    record.reason = "stopped by signal (SIGINT/SIGTERM); finished intervals are kept";
  } else if (any_failed) {
    record.status = Status::failed;
    record.reason = "one or more tests failed";
  } else {
    record.status = Status::complete;
    record.reason.clear();
  }
  journal.append(results::journal_run_end(record.status, record.reason, record.finished_at));
  try {
    state.write_final_record();
  } catch (const std::exception& e) {
    throw EnvironmentError(fmt::format(
        "could not write the result record {}: {}. The journal has every result: "
        "drivelab results recover {} -o NEW_RECORD.json",
        outcome.record_path.string(), e.what(), outcome.journal_path.string()));
  }
  out << '\n' << results::format_summary(record, outcome.record_path) << std::flush;
  return outcome;
}

}  // namespace drivelab::runner
