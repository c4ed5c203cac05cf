// The run's writer thread (run_state.hpp).
#include "run_state.hpp"

#include <ostream>
#include <utility>

#include <fmt/format.h>

#include "drivelab/results/summary.hpp"

namespace drivelab::runner::detail {

LiveTest live_test(const PlannedTest& test, std::size_t index) {
  return LiveTest{test.settings.name, test.settings.kind, index,
                  std::chrono::duration<double>(test.settings.duration).count()};
}

RunState::RunState(results::RunRecord& record, std::filesystem::path record_path, results::Journal& journal,
                   std::ostream& out, const RunOptions& options)
    : record_(record), record_path_(std::move(record_path)), journal_(journal), out_(out), options_(options) {
  writer_ = std::thread([this] { writer_loop(); });
}

RunState::~RunState() {
  {
    std::lock_guard lock(q_mu_);
    closing_ = true;
  }
  q_cv_.notify_all();
  writer_.join();
}

void RunState::on_interval(const results::TestRecord& test, const results::Interval& interval) {
  std::unique_lock lock(q_mu_);
  if (error_) {
    // Once: the emulator's phase fails with the writer's error (as a synchronous write would).
    std::exception_ptr e = std::exchange(error_, nullptr);
    error_reported_ = true;
    std::rethrow_exception(e);
  }
  queue_.push_back(Event{test.name, interval, {}, live_, {}});
  latest_ = test;
  has_latest_ = true;
  lock.unlock();
  q_cv_.notify_all();
}

void RunState::on_message(const results::TestRecord& test, std::string_view message) {
  if (options_.quiet) return;
  {
    std::lock_guard lock(q_mu_);
    queue_.push_back(Event{test.name, std::nullopt, std::string(message), {}, {}});
  }
  q_cv_.notify_all();
}

void RunState::on_groups(std::string_view test, const std::vector<results::MetricGroup>& groups) {
  {
    std::lock_guard lock(q_mu_);
    queue_.push_back(Event{std::string(test), std::nullopt, {}, {}, groups});
  }
  q_cv_.notify_all();
}

std::string RunState::flush() {
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

void RunState::enter_phase(const PlannedTest& test, std::size_t index, std::string_view phase) {
  const LiveTest t = live_test(test, index);
  if (options_.live_metrics != nullptr) options_.live_metrics->phase_started(t, phase);
  std::lock_guard lock(q_mu_);
  live_ = LiveEvent{std::string(t.kind), std::string(phase), t.index, t.duration_s};
}

void RunState::say(const std::string& line) {
  flush();
  std::lock_guard lock(mu_);
  clear_live_line();
  out_ << line << '\n' << std::flush;
}

void RunState::write_record() {
  flush();
  std::lock_guard lock(mu_);
  write(record_);
}

void RunState::write_final_record() { write_final_record(record_); }

void RunState::write_final_record(results::RunRecord& record) {
  flush();
  std::lock_guard lock(mu_);
  try {
    results::write_record(record_path_, record);
  } catch (const std::exception& indented) {
    record.warnings.push_back(
        fmt::format("the record is written on one line: the indented record did not fit on the results disk ({})",
                    indented.what()));
    try {
      results::write_record(record_path_, record, -1);
    } catch (...) {
      record.warnings.pop_back();
      throw;
    }
  }
}

void RunState::writer_loop() {
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
        } else if (!e.groups.empty()) {
          journal_.append(results::journal_groups(e.test, e.groups));
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

void RunState::print_interval(const std::string& test, const results::Interval& interval) {
  std::lock_guard lock(mu_);
  if (options_.quiet) return;
  clear_live_line();
  out_ << results::format_interval_line(test, interval) << '\n' << std::flush;
}

void RunState::print_message(const std::string& test, const std::string& message) {
  std::lock_guard lock(mu_);
  if (options_.live_line) {
    out_ << "\r\033[K" << fmt::format("[{}] {}", test, message) << std::flush;
    live_line_open_ = true;
  } else {
    out_ << fmt::format("[{}] {}", test, message) << '\n' << std::flush;
  }
}

void RunState::write_with_current(const results::TestRecord& current) {
  std::lock_guard lock(mu_);
  if (interval_count(record_) + current.intervals.size() < 2 * written_intervals_) return;
  results::RunRecord snapshot = record_;
  snapshot.tests.push_back(current);
  write(snapshot);
}

std::size_t RunState::interval_count(const results::RunRecord& r) {
  std::size_t n = 0;
  for (const results::TestRecord& t : r.tests) n += t.intervals.size();
  return n;
}

void RunState::write(const results::RunRecord& r) {
  written_intervals_ = interval_count(r);
  try {
    results::write_record(record_path_, r);
  } catch (const std::exception& e) {
    // The journal still has everything; do not kill the run for a failed rewrite.
    out_ << "warning: could not rewrite " << record_path_.string() << ": " << e.what() << '\n';
  }
}

void RunState::clear_live_line() {
  if (live_line_open_) {
    out_ << "\r\033[K";
    live_line_open_ = false;
  }
}

}  // namespace drivelab::runner::detail
