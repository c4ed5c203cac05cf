#pragma once
/// \file store.hpp
/// The results store: run records kept in one SQLite database (`drivelab results import RECORD...
/// --db runs.sqlite`; `drivelab report --db runs.sqlite [--where KEY=VALUE]...`), so a lab's
/// years of runs can be ranked without a folder of files. Tables, filters and rules:
/// docs/reporter.md ("The results store").
///
/// Schema version 1 (`PRAGMA user_version` = 1):
///  - `runs`: one row per run id (primary key): status, reason, protocol, started_at,
///    finished_at, hostname, target_model, target_serial, target_path, source (the file as given
///    to import), imported_at (UTC, ISO-8601), and `record`: the record's JSON text as read,
///    byte for byte.
///  - `tests`: one row per test of a run (run_id, position = index in `tests`): name, kind,
///    status, reason, measured_s, and `headline`: the JSON object {name: {value, unit}} of its
///    first five metrics (the record's headline, docs/results.md).
#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "drivelab/results/record.hpp"

struct sqlite3;

namespace drivelab::results {

/// The store's schema version, in `PRAGMA user_version`.
inline constexpr int kStoreVersion = 1;

/// One `--where KEY=VALUE` of `drivelab report --db`. Filters of the same key are alternatives
/// (OR), of different keys all apply (AND). Values are bound as SQL parameters, never spliced.
struct RunFilter {
  std::string key;  ///< one of kRunFilterKeys
  std::string value;
};
/// The keys --where accepts: run, status, protocol, host, model, serial, since, until (the
/// run's), kind, test (a test's: the run is kept with only its tests that match).
inline constexpr std::string_view kRunFilterKeys =
    "run, status, protocol, host, model, serial, since, until, kind, test";
/// Parses "KEY=VALUE". Throws ConfigError naming the text and the valid keys for an unknown key
/// or a missing '='; `since`/`until` must be a date `YYYY-MM-DD` or a UTC time
/// `YYYY-MM-DDTHH:MM[:SS[.mmm]]Z`-like prefix of one; `status` a status word.
RunFilter parse_run_filter(std::string_view text);

/// A stored run, as `report --db` reads it.
struct StoredRun {
  std::string run_id;
  std::string source;  ///< the file name as given to `results import`
  Json record;         ///< the stored JSON, with only the matching tests under a kind/test filter
};

/// What one import did.
struct ImportOutcome {
  std::string run_id;
  bool stored = false;        ///< false: the run id was already in the store (nothing changed)
  std::string stored_source;  ///< when already stored: the file it was imported from
  bool same_content = true;   ///< when already stored: whether the stored JSON is this file's JSON
};

/// An open store. Not thread-safe.
class RunStore {
 public:
  /// Opens `path`; with `create`, creates it (and its tables) when it does not exist. Throws
  /// ConfigError when the file is not a drivelab store (another SQLite database, or not SQLite)
  /// or is of a newer version; EnvironmentError when it cannot be opened or created (or, without
  /// `create`, does not exist).
  RunStore(const std::filesystem::path& path, bool create);
  ~RunStore();
  RunStore(const RunStore&) = delete;
  RunStore& operator=(const RunStore&) = delete;

  /// Stores the record in `file` unless its run id is already stored (deduplication by run id:
  /// the first import wins). Throws ConfigError naming the file when it is not a drivelab.run/1
  /// record (not JSON, another schema, a malformed key: the reader's message), EnvironmentError
  /// when it cannot be read or the database cannot be written. One transaction per file.
  ImportOutcome import_file(const std::filesystem::path& file);

  /// The stored runs matching every filter, in import order.
  std::vector<StoredRun> select(const std::vector<RunFilter>& where) const;

  /// Rows of `runs` and of `tests` (for tests and `results import`'s summary).
  std::size_t run_count() const;
  std::size_t test_count() const;

 private:
  struct Closer {
    void operator()(sqlite3* db) const noexcept;
  };
  std::filesystem::path path_;
  std::unique_ptr<sqlite3, Closer> db_;
};

}  // namespace drivelab::results
