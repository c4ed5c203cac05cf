#pragma once
/// \file validate.hpp
/// The JSON Schema of `drivelab.run/1` (docs/results.schema.json, JSON Schema 2020-12) and
/// `drivelab results validate`: checks run records, journals and report CSVs against it with
/// Debian's python3-jsonschema (Draft202012Validator), run through core/process.hpp.
///
/// The schema and the validator's Python text are built into the binary (CMake reads
/// docs/results.schema.json at configure time): a binary always checks against the schema of the
/// format it writes, wherever it is installed, with no file to look up (docs/results.md, Schema).
#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace drivelab::results {

/// docs/results.schema.json as this binary was built with it: the root is the run record,
/// `$defs/journal_line` one journal line, `$defs/report_csv_header` and `$defs/report_csv_row`
/// the report's CSV.
std::string_view record_schema_text() noexcept;

/// What the validator said and how it ended.
struct Validation {
  /// 0: every file valid; 2: some file invalid; 3: the validator could not run (no python3,
  /// no python3-jsonschema, an unreadable file or schema).
  int exit_code = 3;
  /// One line per valid file ("FILE: valid (record)"), one per fault: "FILE: POINTER: message"
  /// for a record, "FILE:LINE: POINTER: message" for a journal line or a CSV row (POINTER is the
  /// JSON pointer of the fault, e.g. `/tests/0/metrics/tps/value`; for a missing key the pointer
  /// where it belongs), then "N of M files valid against SCHEMA". At most 20 faults per file.
  std::string output;
};

/// Validates `files` by content type from the name: `.jsonl` a journal (each line an event),
/// `.csv` a `drivelab report --csv` output, anything else a run record. `schema_file` empty:
/// the built-in schema; otherwise that file (it must have the same `$defs` for journals and
/// CSVs). Runs `python3` (PATH) once for all files, with `timeout`. Throws EnvironmentError when
/// python3 cannot be found or started.
Validation validate_files(const std::vector<std::filesystem::path>& files,
                          const std::filesystem::path& schema_file = {},
                          std::chrono::milliseconds timeout = std::chrono::minutes(30));

/// The environment variable of keep_copy_for_validation: a directory.
inline constexpr const char* kKeepRecordsEnv = "DRIVELAB_KEEP_RECORDS_IN";

/// With $DRIVELAB_KEEP_RECORDS_IN set (the test suite sets it, tests/CMakeLists.txt): copies
/// `file` (a final record, a journal, a merged or recovered record) into that directory as
/// `<pid>-<file name>` (created if needed; overwritten, so a process keeps the last version of
/// each), for a last test to validate every one. Without the variable it does nothing. A failed
/// copy is said on stderr, never thrown: the file itself is already written.
void keep_copy_for_validation(const std::filesystem::path& file) noexcept;

}  // namespace drivelab::results
