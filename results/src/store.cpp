// The results store (store.hpp): run records in SQLite, deduplicated by run id.
#include "drivelab/results/store.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <regex>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/results/journal.hpp"
#include "file_io.hpp"
#include "json_read.hpp"
#include "store_devices.hpp"
#include "store_sql.hpp"

namespace drivelab::results {

namespace {

/// Why `text`, "YYYY-MM-DD[THH[:MM[:SS[.fff]]]][Z]" (the format is checked by the caller's
/// pattern), is no real UTC date and time: "" when it is one; else what the calendar or the clock
/// lacks ("2026-02-30 is not a day of the calendar: 2026-02 has 28 days", "hour 25 is not a time
/// of day (00-23)"). The month's days and 00-23:00-59:00-59 are checked.
std::string calendar_error(std::string_view text) {
  const auto num = [&](std::size_t at, std::size_t len) {
    int v = 0;
    for (std::size_t i = at; i < at + len && i < text.size(); ++i) v = v * 10 + (text[i] - '0');
    return v;
  };
  if (text.size() < 10) return fmt::format("'{}' is not a date YYYY-MM-DD", text);
  const std::string_view date = text.substr(0, 10);
  const std::chrono::year year(num(0, 4));
  const std::chrono::month month(static_cast<unsigned>(num(5, 2)));
  if (!month.ok()) return fmt::format("{} is not a day of the calendar: there is no month {}", date, num(5, 2));
  const std::chrono::year_month_day ymd{year, month, std::chrono::day(static_cast<unsigned>(num(8, 2)))};
  if (!ymd.ok()) {
    const std::chrono::year_month_day_last last{year, std::chrono::month_day_last(month)};
    return fmt::format("{} is not a day of the calendar: {} has {} days", date, text.substr(0, 7),
                       static_cast<unsigned>(last.day()));
  }
  if (text.size() >= 13 && num(11, 2) > 23) return fmt::format("hour {} is not a time of day (00-23)", num(11, 2));
  if (text.size() >= 16 && num(14, 2) > 59) return fmt::format("minute {} is not a time of day (00-59)", num(14, 2));
  if (text.size() >= 19 && num(17, 2) > 59) return fmt::format("second {} is not a time of day (00-59)", num(17, 2));
  return {};
}

using detail::exec;
using detail::Statement;

/// The tables of version 1 (store.hpp); version 2 adds `devices` (store_devices.hpp).
constexpr const char* kCreateTables[] = {
    "CREATE TABLE runs ("
    " run_id TEXT PRIMARY KEY,"
    " status TEXT NOT NULL, reason TEXT NOT NULL, protocol TEXT NOT NULL,"
    " started_at TEXT NOT NULL, finished_at TEXT NOT NULL,"
    " hostname TEXT, target_model TEXT, target_serial TEXT, target_path TEXT,"
    " source TEXT NOT NULL, imported_at TEXT NOT NULL, record TEXT NOT NULL)",
    "CREATE TABLE tests ("
    " run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,"
    " position INTEGER NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL,"
    " status TEXT NOT NULL, reason TEXT NOT NULL, measured_s REAL, headline TEXT NOT NULL,"
    " PRIMARY KEY (run_id, position))",
    "CREATE INDEX tests_kind ON tests(kind)",
    "CREATE INDEX tests_name ON tests(name)",
};

Json member_or_null(const Json& object, const char* key) {
  return object.is_object() && object.contains(key) ? object[key] : Json();
}

/// SQL of one --where key with parameter number `n` (never the value itself).
std::string filter_sql(const std::string& key, int n) {
  if (key == "run") return fmt::format("run_id = ?{}", n);
  if (key == "status") return fmt::format("status = ?{}", n);
  if (key == "protocol") return fmt::format("protocol = ?{}", n);
  if (key == "host") return fmt::format("hostname = ?{}", n);
  if (key == "model") return fmt::format("target_model = ?{}", n);
  if (key == "serial") return fmt::format("target_serial = ?{}", n);
  if (key == "since") return fmt::format("started_at >= ?{}", n);
  // Inclusive: a run started on the day (or within the prefix) given.
  if (key == "until") return fmt::format("substr(started_at, 1, length(?{0})) <= ?{0}", n);
  if (key == "kind")
    return fmt::format("EXISTS (SELECT 1 FROM tests t WHERE t.run_id = runs.run_id AND t.kind = ?{})", n);
  if (key == "test")
    return fmt::format("EXISTS (SELECT 1 FROM tests t WHERE t.run_id = runs.run_id AND t.name = ?{})", n);
  if (key == "device")
    return fmt::format("EXISTS (SELECT 1 FROM devices d WHERE d.run_id = runs.run_id AND d.device = ?{})", n);
  throw ConfigError("--where: unknown key '" + key + "'");
}

}  // namespace

RunFilter parse_run_filter(std::string_view text) {
  const auto eq = text.find('=');
  const std::string keys(kRunFilterKeys);
  if (eq == std::string_view::npos || eq == 0)
    throw ConfigError(fmt::format("--where '{}': expected KEY=VALUE with KEY one of {}", text, keys));
  RunFilter f{std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
  bool known = false;
  for (std::string_view rest = kRunFilterKeys; !rest.empty();) {
    const auto comma = rest.find(',');
    known = known || rest.substr(0, comma) == f.key;
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 2);
  }
  if (!known) throw ConfigError(fmt::format("--where '{}': unknown key '{}' (the keys: {})", text, f.key, keys));
  if (f.key == "since" || f.key == "until") {
    static const std::regex kDate(
        R"(^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}(:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,3})?)?)?Z?)?$)");
    if (!std::regex_match(f.value, kDate))
      throw ConfigError(
          fmt::format("--where '{}': {} must be a UTC date YYYY-MM-DD or time YYYY-MM-DDTHH:MM:SS", text, f.key));
    if (const std::string why = calendar_error(f.value); !why.empty())
      throw ConfigError(fmt::format("--where '{}': {}", text, why));
    if (f.value.ends_with('Z')) f.value.pop_back();  // the records' times end in "Z" after the milliseconds
  }
  if (f.key == "status" && !drivelab::value_of(kStatusNames, f.value))
    throw ConfigError(
        fmt::format("--where '{}': unknown status (running, complete, interrupted, failed, skipped)", text));
  return f;
}

void RunStore::Closer::operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }

RunStore::RunStore(const std::filesystem::path& path, bool create) : path_(path) {
  if (const std::string name = path.string(); name.empty() || name.starts_with(':') || name.starts_with("file:"))
    throw ConfigError(
        fmt::format("results store '{}': not a file's name (SQLite would keep an empty name, "
                    "':memory:' or a 'file:' URI in memory or elsewhere); name the store's file",
                    name));
  std::error_code ec;
  if (!create && !std::filesystem::exists(path, ec))
    throw EnvironmentError(
        fmt::format("results store '{}' does not exist (drivelab results import RECORD... --db {} makes it)",
                    path.string(), path.string()));
  if (std::filesystem::is_directory(path, ec))
    throw EnvironmentError(
        fmt::format("results store '{}' is a directory; --db names the store's file in it", path.string()));
  if (const auto dir = path.parent_path(); create && !dir.empty() && !std::filesystem::is_directory(dir, ec))
    throw EnvironmentError(fmt::format("results store '{}': its directory '{}' does not exist (make it first)",
                                       path.string(), dir.string()));
  sqlite3* raw = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  db_.reset(raw);
  if (rc != SQLITE_OK)
    throw EnvironmentError(fmt::format("results store '{}': cannot open: {}", path.string(),
                                       raw != nullptr ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
  sqlite3_busy_timeout(raw, 10000);
  exec(raw, "PRAGMA foreign_keys = ON", path_);
  // The store's version and its count of tables; the statements end here, so no read lock outlives the reading
  // (a read lock held into BEGIN IMMEDIATE deadlocks two processes making the same store: one gets SQLITE_BUSY).
  const auto version_and_tables = [&] {
    Statement version(raw, "PRAGMA user_version", path_);
    version.step();
    Statement tables(raw, "SELECT count(*) FROM sqlite_master WHERE type = 'table'", path_);
    tables.step();
    return std::pair{version.integer(0), tables.integer(0)};
  };
  auto [v, n_tables] = version_and_tables();
  if (v == 0 && n_tables == 0) {
    if (!create)
      throw ConfigError(
          fmt::format("results store '{}': an empty database, not a drivelab results store", path.string()));
    // One transaction, the emptiness read again inside it: of several imports making the same store at once,
    // one creates it and the others wait, then find it made.
    exec(raw, "BEGIN IMMEDIATE", path_);
    try {
      std::tie(v, n_tables) = version_and_tables();
      if (v == 0 && n_tables == 0) {
        for (const char* sql : kCreateTables) exec(raw, sql, path_);
        detail::create_devices_table(raw, path_);
        exec(raw, fmt::format("PRAGMA user_version = {}", kStoreVersion), path_);
        v = kStoreVersion;
      }
      exec(raw, "COMMIT", path_);
    } catch (...) {
      sqlite3_exec(raw, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }
  if (v == 0) {
    throw ConfigError(
        fmt::format("results store '{}': an SQLite database of something else (tables, no drivelab "
                    "store version), not a drivelab results store",
                    path.string()));
  } else if (v > kStoreVersion) {
    throw ConfigError(
        fmt::format("results store '{}' has version {}; this drivelab reads version {} (a newer "
                    "drivelab made it)",
                    path.string(), v, kStoreVersion));
  } else if (v < kStoreVersion || !detail::missing_device_columns(raw, path_).empty()) {
    upgrade();
  }
}

void RunStore::upgrade() {
  sqlite3* db = db_.get();
  // One transaction: another process opening the store at the same time waits, then sees version 2.
  exec(db, "BEGIN IMMEDIATE", path_);
  try {
    Statement version(db, "PRAGMA user_version", path_);
    version.step();
    const std::int64_t v = version.integer(0);
    if (v == 1) detail::upgrade_to_devices(db, path_);
    detail::add_missing_device_columns(db, path_);
    if (v != kStoreVersion) exec(db, fmt::format("PRAGMA user_version = {}", kStoreVersion), path_);
    exec(db, "COMMIT", path_);
  } catch (...) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

RunStore::~RunStore() = default;

ImportOutcome RunStore::import_file(const std::filesystem::path& file) {
  const std::string text = detail::read_file(file, "result record");
  refuse_journal_as_record(file.string(), text);
  const RunRecord record = detail::record_from_text(text, file);
  // since/until compare started_at as text: only a real timestamp may go in.
  static const std::regex kTime(R"(^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z$)");
  if (!std::regex_match(record.started_at, kTime) || !calendar_error(record.started_at).empty())
    throw ConfigError(fmt::format("{}: started_at '{}' is not a UTC time such as 2026-12-05T23:30:00.000Z",
                                  file.string(), record.started_at));
  sqlite3* db = db_.get();
  exec(db, "BEGIN IMMEDIATE", path_);
  try {
    ImportOutcome out;
    out.run_id = record.run_id;
    Statement existing(db, "SELECT source, record FROM runs WHERE run_id = ?1", path_);
    existing.bind(1, record.run_id);
    if (existing.step()) {
      out.stored_source = existing.text(0);
      const Json stored = Json::parse(existing.text(1));
      out.same_content = stored == Json::parse(text);
      // A live record (is_live: written before its run finished) gives way to the same run's finished or
      // recovered record (`results recover`) that holds as much (holds_at_least: a journal cut short recovers
      // less); any other stored record is kept (the first import wins).
      const RunRecord stored_record = run_record_from_json(stored);
      if (!is_live(stored_record) || is_live(record) || !holds_at_least(record, stored_record)) {
        exec(db, "ROLLBACK", path_);
        return out;
      }
      out.replaced_live = true;
      Statement drop(db, "DELETE FROM runs WHERE run_id = ?1", path_);  // its tests and devices cascade
      drop.bind(1, record.run_id);
      drop.step();
    }
    Statement run(db,
                  "INSERT INTO runs (run_id, status, reason, protocol, started_at, finished_at, hostname, "
                  "target_model, target_serial, target_path, source, imported_at, record) "
                  "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                  path_);
    run.bind(1, record.run_id);
    run.bind(2, to_string(record.status));
    run.bind(3, record.reason);
    run.bind(4, record.protocol);
    run.bind(5, record.started_at);
    run.bind(6, record.finished_at);
    run.bind_or_null(7, member_or_null(record.host, "hostname"));
    run.bind_or_null(8, member_or_null(record.target, "model"));
    run.bind_or_null(9, member_or_null(record.target, "serial"));
    run.bind_or_null(10, member_or_null(record.target, "path"));
    run.bind(11, file.string());
    run.bind(12, utc_timestamp());
    run.bind(13, text);
    run.step();
    for (std::size_t i = 0; i < record.tests.size(); ++i) {
      const TestRecord& t = record.tests[i];
      Json headline = Json::object();
      for (std::size_t m = 0; m < t.metrics.size() && m < 5; ++m)
        headline[t.metrics[m].name] =
            Json{{"value", detail::number_or_null(t.metrics[m].value)}, {"unit", t.metrics[m].unit}};
      Statement test(db,
                     "INSERT INTO tests (run_id, position, name, kind, status, reason, measured_s, headline) "
                     "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                     path_);
      test.bind(1, record.run_id);
      test.bind(2, static_cast<std::int64_t>(i));
      test.bind(3, t.name);
      test.bind(4, t.kind);
      test.bind(5, to_string(t.status));
      test.bind(6, t.reason);
      test.bind(7, t.measured_s);
      test.bind(8, headline.dump());
      test.step();
    }
    detail::insert_device_rows(db, record.run_id, detail::device_rows(record), path_);
    exec(db, "COMMIT", path_);
    out.stored = true;
    return out;
  } catch (...) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

std::vector<StoredRun> RunStore::select(const std::vector<RunFilter>& where) const {
  // One group per key, in kRunFilterKeys order: (key = ?a OR key = ?b) AND (...).
  std::vector<std::string> keys;
  for (const auto& f : where)
    if (std::find(keys.begin(), keys.end(), f.key) == keys.end()) keys.push_back(f.key);
  std::string sql = "SELECT run_id, source, record FROM runs";
  std::vector<std::string> values;
  for (std::size_t k = 0; k < keys.size(); ++k) {
    std::string group;
    for (const auto& f : where) {
      if (f.key != keys[k]) continue;
      values.push_back(f.value);
      group += (group.empty() ? "" : " OR ") + filter_sql(f.key, static_cast<int>(values.size()));
    }
    sql += (k == 0 ? " WHERE (" : " AND (") + group + ")";
  }
  sql += " ORDER BY rowid";
  Statement s(db_.get(), sql, path_);
  for (std::size_t i = 0; i < values.size(); ++i) s.bind(static_cast<int>(i + 1), values[i]);
  std::vector<std::string> kinds, tests, devices;
  for (const auto& f : where) {
    if (f.key == "kind") kinds.push_back(f.value);
    if (f.key == "test") tests.push_back(f.value);
    if (f.key == "device") devices.push_back(f.value);
  }
  const auto wanted = [](const std::vector<std::string>& list, const Json& v) {
    return list.empty() || (v.is_string() && std::find(list.begin(), list.end(), v.get<std::string>()) != list.end());
  };
  // A test ran on a device when its telemetry names it (the headline or a device below it).
  const auto on_device = [&](const Json& t) {
    if (devices.empty()) return true;
    const Json* details = t.is_object() ? detail::member(t, "details") : nullptr;
    const std::vector<std::string> names =
        details != nullptr ? detail::telemetry_device_names(*details) : std::vector<std::string>{};
    return std::any_of(names.begin(), names.end(), [&](const std::string& n) {
      return std::find(devices.begin(), devices.end(), n) != devices.end();
    });
  };
  std::vector<StoredRun> out;
  while (s.step()) {
    StoredRun r{s.text(0), s.text(1), Json::parse(s.text(2))};
    if ((!kinds.empty() || !tests.empty() || !devices.empty()) && r.record.contains("tests") &&
        r.record["tests"].is_array()) {
      Json kept = Json::array();
      for (const Json& t : r.record["tests"])
        if (wanted(kinds, member_or_null(t, "kind")) && wanted(tests, member_or_null(t, "name")) && on_device(t))
          kept.push_back(t);
      // The SQL asks each key of some test: a run none of whose tests matches them all is not kept.
      if (kept.empty()) continue;
      r.record["tests"] = std::move(kept);
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::size_t RunStore::run_count() const {
  Statement s(db_.get(), "SELECT count(*) FROM runs", path_);
  s.step();
  return static_cast<std::size_t>(s.integer(0));
}

std::size_t RunStore::test_count() const {
  Statement s(db_.get(), "SELECT count(*) FROM tests", path_);
  s.step();
  return static_cast<std::size_t>(s.integer(0));
}

}  // namespace drivelab::results
