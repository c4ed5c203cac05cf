#pragma once
/// \file journal.hpp
/// Append-only JSON Lines journal written beside the result record while a run goes
/// (`<run>.journal.jsonl`). Each line is one event, flushed (write(2) + fdatasync) as it happens,
/// so a crash, SIGKILL or power loss leaves every finished interval on disk:
///
///   {"event":"run_start","record":{...RunRecord header, no tests...}}
///   {"event":"test_start","test":"oltp","kind":"tpcc","config":{...},"at":"..."}
///     (a repeated run's: "repetition": k, "seed": s[, "discarded": true] after "kind")
///   {"event":"interval","test":"oltp","interval":{"t_s":5,"duration_s":5,"values":{...}}}
///   {"event":"groups","test":"oltp","groups":{"max":{...},"point_050":{...}}}
///     (metric groups set while the test runs, as the record's "groups": a curve's finished runs)
///   {"event":"test_end","test":"oltp","record":{...full TestRecord...}}
///   {"event":"run_end","status":"complete","reason":"","at":"..."}
///
/// recover_from_journal() rebuilds a valid RunRecord from any prefix of such a file (a torn last
/// line is ignored): finished tests as written, an unfinished test with its intervals and status
/// `interrupted`, and the run marked `interrupted` with reason "journal ends before run_end".
///
/// Recovery rules in full (docs/results.md, "Journal"):
///  - the first complete line must be run_start with record.schema drivelab.run/1 (else ConfigError;
///    a result record given instead is named as one: "'<path>' is a result record, not a journal");
///  - test_start opens a test (status running, config, started_at = at, repetition, seed,
///    discarded); interval appends to the open test of that name; groups puts each group into the
///    open test of that name (replacing one of the same name); test_end replaces it by the full
///    record written at its end (a test_end without a test_start: a skipped test, appended; one
///    repeating the last test_end's name and repetition replaces it);
///  - run_end sets the run's status, reason and finished_at (= at);
///  - a test still open at the end: status interrupted, reason "journal ends before test_end",
///    measured_s = t_s of its last interval, and when it has groups a warning that they are the
///    finished runs of an interrupted test (kRecoveredGroupsWarning); no run_end: run status
///    interrupted, reason
///    "journal ends before run_end" (a run_end, when present, wins);
///  - a repeated run's `repetitions` are computed from the recovered tests (record_stats.hpp);
///  - a last line without its newline that does not parse (torn by a crash) is dropped with a
///    warning in the record; an unparsable line elsewhere, or an interval for a test that was
///    never started, is skipped with a warning; unknown event names are ignored (newer writers).
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "drivelab/core/fd.hpp"
#include "drivelab/results/record.hpp"

namespace drivelab::results {

class Journal {
 public:
  Journal() = default;
  /// Creates (truncates) the journal file. With `reserve_bytes` > 0 it also allocates
  /// (posix_fallocate) a reserve file of that size beside it (reserve_path()): space held back
  /// so that, when the results filesystem fills, the journal's last events and the final record
  /// still fit once the reserve is released. Throws EnvironmentError (ENOSPC already at the
  /// reserve: "cannot reserve ... (ENOSPC)").
  explicit Journal(const std::filesystem::path& path, std::uint64_t reserve_bytes = 0);
  ~Journal();
  Journal(Journal&&) noexcept = default;
  Journal& operator=(Journal&&) noexcept = default;
  /// Appends one event as one line and makes it durable. Thread-safe. Throws EnvironmentError
  /// ("cannot append to journal '<path>': No space left on device (ENOSPC)").
  /// The line goes out in one write(2) (O_APPEND), then fdatasync(2). If a write fails halfway
  /// (ENOSPC), the next append starts with a newline so the torn piece stays a line of its own.
  /// When a write or fdatasync fails and a reserve is held, the reserve is released and the
  /// event written once more; the append still throws the first error (the results filesystem
  /// is full: the run must stop), and failure() keeps it. kept_after_failure() says whether the
  /// second write made the event durable.
  void append(const Json& event);
  const std::filesystem::path& path() const noexcept { return path_; }
  bool is_open() const noexcept { return static_cast<bool>(fd_); }
  /// `<journal>.reserve`, the reserve file ("" without a reserve).
  std::filesystem::path reserve_path() const;
  /// Removes the reserve file (no-op without one). Thread-safe.
  void release_reserve() noexcept;
  /// The first append error ("" while every append succeeded). Thread-safe.
  std::string failure() const;
  /// Whether the event whose append failed first was written after the reserve was released.
  bool kept_after_failure() const;

 private:
  void release_reserve_locked() noexcept;
  int write_line(const std::string& line) noexcept;  // 0 or the errno; sets torn_

  std::filesystem::path path_;
  UniqueFd fd_;
  UniqueFd reserve_fd_;  ///< the reserve, flock'ed while held (remove_stale_reserves)
  std::unique_ptr<std::mutex> mu_ = std::make_unique<std::mutex>();  // unique_ptr: stays movable
  bool torn_ = false;      ///< the last append failed after writing part of its line
  bool reserved_ = false;  ///< reserve_path() exists and is ours
  std::string failure_;
  bool kept_after_failure_ = false;
};

/// Removes the reserve files (`*.journal.jsonl.reserve`) in `dir` that no live run holds: a run
/// flocks its reserve until it releases it, so one that can be locked was left by a run that was
/// killed (SIGKILL, a crash, power loss) and would keep 8 MiB of the results disk for good. The
/// runner calls it on its output directory, `results recover` on the journal's. Returns what it
/// removed; errors are skipped (a reserve it cannot open or remove stays).
std::vector<std::filesystem::path> remove_stale_reserves(const std::filesystem::path& dir);

/// Throws ConfigError, saying what to read instead (the record beside it, or `results recover`), when `source`
/// (a file name) with content `text` is a run's journal (its name ends in .journal.jsonl, or its first event is
/// run_start) given where a result record is expected (report, results import); else returns.
void refuse_journal_as_record(std::string_view source, std::string_view text);

/// Whether the run writing `journal` is still going: its reserve `<journal>.reserve` is there and
/// held (the rule above). A run that released its reserve (its results disk filled) reads as ended.
bool journal_run_alive(const std::filesystem::path& journal);

/// Removes `<journal>.reserve` when no live run holds it (the rule above): what `results merge`
/// does for the runs it closes. Returns whether it removed it.
bool remove_stale_reserve(const std::filesystem::path& journal);

/// The events of the file comment, built one way for every writer (the runner uses them).
Json journal_run_start(const RunRecord& header);  ///< `tests` is written empty
Json journal_test_start(const TestRecord& test);  ///< name, kind, config, at = started_at
Json journal_interval(std::string_view test, const Interval& interval);
Json journal_groups(std::string_view test, const std::vector<MetricGroup>& groups);
Json journal_test_end(const TestRecord& test);
Json journal_run_end(Status status, std::string_view reason, std::string_view at);

/// The start of the warning a recovered interrupted test with metric groups carries: "metric groups
/// recovered from the journal of an interrupted test: max, point_050 ...".
inline constexpr std::string_view kRecoveredGroupsWarning =
    "metric groups recovered from the journal of an interrupted test: ";

/// Rebuilds a record from a journal (see file comment). Throws ConfigError if the first line is
/// not a run_start event of schema drivelab.run/1.
RunRecord recover_from_journal(const std::filesystem::path& path);

}  // namespace drivelab::results
