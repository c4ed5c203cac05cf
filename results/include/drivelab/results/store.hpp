#pragma once
/// \file store.hpp
/// The results store: run records kept in one SQLite database (`drivelab results import RECORD...
/// --db runs.sqlite`; `drivelab report --db runs.sqlite [--where KEY=VALUE]...`), so a lab's
/// years of runs can be ranked without a folder of files. Tables, filters and rules:
/// docs/reporter.md ("The results store").
///
/// Schema version 2 (`PRAGMA user_version` = 2):
///  - `runs`: one row per run id (primary key): status, reason, protocol, started_at,
///    finished_at, hostname, target_model, target_serial, target_path, source (the file as given
///    to import), imported_at (UTC, ISO-8601), and `record`: the record's JSON text as read,
///    byte for byte.
///  - `tests`: one row per test of a run (run_id, position = index in `tests`): name, kind,
///    status, reason, measured_s, and `headline`: the JSON object {name: {value, unit}} of its
///    first five metrics (the record's headline, docs/results.md).
///  - `devices` (version 2, issue 33): one row per test and block device its telemetry names
///    (details.telemetry.devices, telemetry/test_telemetry.hpp; primary key run_id, position,
///    device, whose index serves lookups by test): `role` (headline, whole_disk, slave,
///    backing_device, backing_file_device) and `below` (the device it is below; NULL for the
///    headline); one REAL column per device figure of the metric catalogue, named and in the unit
///    of its declaration (catalogue/telemetry.hpp: device_r_s, device_wmb_s, device_w_await_ms,
///    device_aqu_sz, device_util_pct, ..., the counts device_read_ios, device_write_bytes, ..., and
///    the demand per unit of work, device_write_bytes_per_new_order, ..., the headline's only):
///    the headline's are the test's metrics, a device below's its details.telemetry.devices[].test;
///    a figure the record has not is NULL. Then the drive the device is on (`drive`, its node:
///    "/dev/nvme0"; the one drive of the device or of the devices below it, matched by kernel
///    name) with drive_model, drive_firmware, drive_temperature_max_c (°C), drive_percentage_used
///    (after the test), drive_media_errors, drive_tmt1_transitions, drive_tmt2_transitions
///    (deltas over the test) and drive_throttled (0/1) from the test's details.health
///    (telemetry/health_record.hpp); or NULL and `drive_reason`, the record's reason (the run's
///    "no NVMe or SATA/SAS device under the target (virtio: vda)") or ours (several drives under
///    a dm device). A test without telemetry (a record before issue 33, a merge of hosts) or
///    whose target has no block device has no row.
///
/// Upgrades: opening a version-1 store creates `devices` and fills it from every stored record's
/// JSON, then sets version 2, in one transaction; a device figure declared in the catalogue after
/// a store was made gains its column on open (NULL in the rows stored before). A store of a newer
/// version is refused.
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
inline constexpr int kStoreVersion = 2;

/// One `--where KEY=VALUE` of `drivelab report --db`. Filters of the same key are alternatives
/// (OR), of different keys all apply (AND). Values are bound as SQL parameters, never spliced.
struct RunFilter {
  std::string key;  ///< one of kRunFilterKeys
  std::string value;
};
/// The keys --where accepts: run, status, protocol, host, model, serial, since, until (the
/// run's), kind, test, device (a test's: the run is kept with only its tests that match; device:
/// a block device the test's telemetry names, its headline or one below it, as "nvme0n1p2").
inline constexpr std::string_view kRunFilterKeys =
    "run, status, protocol, host, model, serial, since, until, kind, test, device";
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
  /// stored, in place of a live record of the same run (record.hpp is_live: written before the run finished)
  /// imported from `stored_source`; this file's record has finished or was recovered (`results recover`)
  bool replaced_live = false;
};

/// An open store. Not thread-safe.
class RunStore {
 public:
  /// Opens `path`; with `create`, creates it (and its tables) when it does not exist; upgrades a
  /// version-1 store (above). Throws
  /// ConfigError when the file is not a drivelab store (another SQLite database, or not SQLite)
  /// or is of a newer version; EnvironmentError when it cannot be opened or created (or, without
  /// `create`, does not exist).
  RunStore(const std::filesystem::path& path, bool create);
  ~RunStore();
  RunStore(const RunStore&) = delete;
  RunStore& operator=(const RunStore&) = delete;

  /// Stores the record in `file` unless its run id is already stored (deduplication by run id:
  /// the first import wins, except that a stored live record, is_live, gives way to the same run's
  /// record that is not: ImportOutcome::replaced_live). Throws ConfigError naming the file when it is not a
  /// drivelab.run/1 record (not JSON, another schema, a malformed key: the reader's message), EnvironmentError when it
  /// cannot be read or the database cannot be written. One transaction per file.
  ImportOutcome import_file(const std::filesystem::path& file);

  /// The stored runs matching every filter, in import order. Under a test key (kind, test,
  /// device) a run keeps only its tests that match every test key given, and a run left without
  /// one is not returned.
  std::vector<StoredRun> select(const std::vector<RunFilter>& where) const;

  /// Rows of `runs` and of `tests` (for tests and `results import`'s summary).
  std::size_t run_count() const;
  std::size_t test_count() const;

 private:
  struct Closer {
    void operator()(sqlite3* db) const noexcept;
  };
  /// Brings an older store to kStoreVersion in one transaction (see the file comment).
  void upgrade();
  std::filesystem::path path_;
  std::unique_ptr<sqlite3, Closer> db_;
};

}  // namespace drivelab::results
