#pragma once
/// \file journal.hpp
/// Append-only JSON Lines journal written beside the result record while a run goes
/// (`<run>.journal.jsonl`). Each line is one event, flushed (write(2) + fdatasync) as it happens,
/// so a crash, SIGKILL or power loss leaves every finished interval on disk:
///
///   {"event":"run_start","record":{...RunRecord header, no tests...}}
///   {"event":"test_start","test":"oltp","kind":"tpcc","config":{...},"at":"..."}
///   {"event":"interval","test":"oltp","interval":{"t_s":5,"duration_s":5,"values":{...}}}
///   {"event":"test_end","test":"oltp","record":{...full TestRecord...}}
///   {"event":"run_end","status":"complete","reason":"","at":"..."}
///
/// recover_from_journal() rebuilds a valid RunRecord from any prefix of such a file (a torn last
/// line is ignored): finished tests as written, an unfinished test with its intervals and status
/// `interrupted`, and the run marked `interrupted` with reason "journal ends before run_end".
#include <filesystem>
#include <string>

#include "drivelab/core/fd.hpp"
#include "drivelab/results/record.hpp"

namespace drivelab::results {

class Journal {
 public:
  Journal() = default;
  /// Creates (truncates) the journal file. Throws EnvironmentError.
  explicit Journal(const std::filesystem::path& path);
  /// Appends one event as one line and makes it durable. Thread-safe. Throws EnvironmentError.
  void append(const Json& event);
  const std::filesystem::path& path() const noexcept { return path_; }
  bool is_open() const noexcept { return static_cast<bool>(fd_); }

 private:
  std::filesystem::path path_;
  UniqueFd fd_;
};

/// Rebuilds a record from a journal (see file comment). Throws ConfigError if the first line is
/// not a run_start event of schema drivelab.run/1.
RunRecord recover_from_journal(const std::filesystem::path& path);

}  // namespace drivelab::results
