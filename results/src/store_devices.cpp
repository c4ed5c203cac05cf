// The results store's devices table (store_devices.hpp, docs/reporter.md "The results store").
#include "store_devices.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "drivelab/results/catalogue.hpp"
#include "file_io.hpp"
#include "json_read.hpp"
#include "store_sql.hpp"

namespace drivelab::results::detail {
namespace {

/// One drive-health column: its name, SQL type and where in a drive's entry of the test's
/// details.health.drives (telemetry/health_record.hpp) it is read from (a JSON pointer).
struct HealthColumn {
  const char* name;
  const char* type;
  const char* pointer;
};

constexpr std::array kHealthColumns{
    HealthColumn{"drive_model", "TEXT", "/model"},
    HealthColumn{"drive_firmware", "TEXT", "/firmware"},
    HealthColumn{"drive_temperature_max_c", "REAL", "/temperature_c/max"},
    HealthColumn{"drive_percentage_used", "INTEGER", "/percentage_used/after"},
    HealthColumn{"drive_media_errors", "INTEGER", "/delta/media_errors"},
    HealthColumn{"drive_tmt1_transitions", "INTEGER", "/delta/tmt1_transitions"},
    HealthColumn{"drive_tmt2_transitions", "INTEGER", "/delta/tmt2_transitions"},
    HealthColumn{"drive_throttled", "INTEGER", "/throttled"},
};

const Json* object_member(const Json& j, std::string_view key) { return j.is_object() ? member(j, key) : nullptr; }

std::string string_member(const Json& j, std::string_view key) {
  const Json* m = object_member(j, key);
  return m != nullptr && m->is_string() ? m->get<std::string>() : std::string();
}

/// Consumes the leading decimal digits of `s`; how many there were.
std::size_t digits(std::string_view& s) {
  std::size_t n = 0;
  while (n < s.size() && std::isdigit(static_cast<unsigned char>(s[n])) != 0) ++n;
  s.remove_prefix(n);
  return n;
}

/// Whether the block device `name` is on the drive whose health was read at node `drive`
/// (telemetry/drive_health.hpp: "/dev/sda", "/dev/nvme0"): the drive itself, a partition of it
/// ("sda1", "nvme0n1p2": the kernel's names, block/partitions/core.c), or, for an NVMe controller,
/// one of its namespaces ("nvme0n1", multipath "nvme0c0n1") and their partitions.
bool on_drive(std::string_view name, std::string_view drive) {
  if (drive.starts_with("/dev/")) drive.remove_prefix(5);
  if (drive.empty() || !name.starts_with(drive)) return false;
  std::string_view rest = name.substr(drive.size());
  if (rest.empty()) return true;
  std::string_view number = drive.substr(std::min<std::size_t>(4, drive.size()));
  if (drive.starts_with("nvme") && digits(number) > 0 && number.empty()) {
    // A controller: c<N> (multipath path) then n<N> (namespace), then a partition or nothing.
    if (rest.starts_with('c')) {
      rest.remove_prefix(1);
      if (digits(rest) == 0) return false;
    }
    if (!rest.starts_with('n')) return false;
    rest.remove_prefix(1);
    if (digits(rest) == 0) return false;
    if (rest.empty()) return true;
  }
  // A partition: its number, after a 'p' when the disk's name ends in a digit.
  if (rest.starts_with('p')) rest.remove_prefix(1);
  return digits(rest) > 0 && rest.empty();
}

/// A test's devices: {name, role, below, test figures} as details.telemetry.devices has them.
struct NamedDevice {
  std::string name, role, below;
  const Json* test = nullptr;
};

std::vector<NamedDevice> named_devices(const Json& test_details) {
  std::vector<NamedDevice> out;
  const Json* tel = object_member(test_details, "telemetry");
  const Json* devices = tel != nullptr ? object_member(*tel, "devices") : nullptr;
  if (devices == nullptr || !devices->is_array()) return out;
  std::set<std::string> seen;
  for (const Json& d : *devices) {
    NamedDevice n{string_member(d, "name"), string_member(d, "role"), string_member(d, "below"),
                  object_member(d, "test")};
    if (n.name.empty() || !seen.insert(n.name).second) continue;
    if (n.role.empty()) n.role = out.empty() ? "headline" : "below";
    out.push_back(std::move(n));
  }
  return out;
}

/// `device` and every device below it (through the `below` links of `all`).
std::vector<std::string> under(const std::string& device, const std::vector<NamedDevice>& all) {
  std::vector<std::string> out{device};
  for (const NamedDevice& d : all) {
    // Follow d's chain upward: d is under `device` when the chain reaches it.
    std::string at = d.below;
    for (std::size_t hops = 0; !at.empty() && at != d.name && hops < all.size(); ++hops) {
      if (at == device) {
        out.push_back(d.name);
        break;
      }
      const auto up = std::find_if(all.begin(), all.end(), [&](const NamedDevice& x) { return x.name == at; });
      at = up == all.end() ? std::string() : up->below;
    }
  }
  return out;
}

/// Why a row has no drive health when the test's details.health has no entry for its drive.
std::string run_health_reason(const RunRecord& record) {
  const Json* h = object_member(record.details, "health");
  if (h == nullptr) return "the record holds no drive health (written before drivelab read it)";
  const Json* available = object_member(*h, "available");
  if (available != nullptr && available->is_boolean() && !available->get<bool>()) {
    const std::string why = string_member(*h, "reason");
    return why.empty() ? "no drive health in this run" : why;
  }
  return "the test has no drive health reading";
}

/// The health of the drive `row` is on (the only drive of its own or of a device below it).
void set_health(DeviceRow& row, const std::vector<NamedDevice>& all, const Json& test_details,
                const std::string& run_reason) {
  const Json* health = object_member(test_details, "health");
  const Json* drives = health != nullptr ? object_member(*health, "drives") : nullptr;
  if (drives == nullptr || !drives->is_array()) {
    row.health_reason = run_reason;
    return;
  }
  const std::vector<std::string> names = under(row.device, all);
  std::vector<const Json*> found;
  for (const Json& d : *drives) {
    const std::string node = string_member(d, "device");
    if (std::any_of(names.begin(), names.end(), [&](const std::string& n) { return on_drive(n, node); }))
      found.push_back(&d);
  }
  if (found.size() == 1) {
    row.drive = string_member(*found.front(), "device");
    if (const std::string why = string_member(*found.front(), "reason"); !why.empty())
      row.health_reason = why;
    else
      row.health = *found.front();
  } else if (found.empty()) {
    row.health_reason = fmt::format("{}: no drive under it was read for health", row.device);
  } else {
    std::string list;
    for (const Json* d : found) list += (list.empty() ? "" : ", ") + string_member(*d, "device");
    row.health_reason =
        fmt::format("{} is on {} drives ({}): see the rows of the devices below it", row.device, found.size(), list);
  }
}

/// A JSON scalar bound as SQLite's own type: text, integer, real (non-finite: NULL), boolean 0/1.
void bind_json(Statement& s, int index, const Json* j) {
  constexpr auto kMaxInt64 = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  const bool text = j != nullptr && j->is_string();
  const bool integer =
      j != nullptr && (j->is_boolean() ||
                       (j->is_number_integer() && !(j->is_number_unsigned() && j->get<std::uint64_t>() > kMaxInt64)));
  const bool real = j != nullptr && j->is_number() && std::isfinite(j->get<double>());
  if (text)
    s.bind(index, j->get<std::string>());
  else if (integer)
    s.bind(index, j->is_boolean() ? std::int64_t{j->get<bool>() ? 1 : 0} : j->get<std::int64_t>());
  else if (real)
    s.bind(index, j->get<double>());
  else
    s.bind_null(index);  // absent, null, or not finite
}

}  // namespace

std::vector<const MetricDef*> device_columns() {
  std::vector<const MetricDef*> out;
  for (const MetricDef* d : metric_defs())
    if (d->kind == MetricKind::device && d->has(kDeviceLine) && d->name.starts_with("device_")) out.push_back(d);
  return out;
}

std::vector<std::string> telemetry_device_names(const Json& test_details) {
  std::vector<std::string> out;
  for (NamedDevice& d : named_devices(test_details)) out.push_back(std::move(d.name));
  return out;
}

std::vector<DeviceRow> device_rows(const RunRecord& record) {
  std::vector<DeviceRow> out;
  const std::vector<const MetricDef*> columns = device_columns();
  const std::string run_reason = run_health_reason(record);
  for (std::size_t i = 0; i < record.tests.size(); ++i) {
    const TestRecord& t = record.tests[i];
    const std::vector<NamedDevice> devices = named_devices(t.details);
    for (std::size_t k = 0; k < devices.size(); ++k) {
      const NamedDevice& d = devices[k];
      DeviceRow row;
      row.position = i;
      row.device = d.name;
      row.role = d.role;
      row.below = d.below;
      for (const MetricDef* c : columns) {
        // The headline's figures are the test's metrics; a device below has its own.
        std::optional<double> v;
        if (k == 0) {
          if (const Metric* m = t.find_metric(c->name)) v = m->value;
        } else if (d.test != nullptr) {
          if (const Json* j = object_member(*d.test, c->name); j != nullptr && j->is_number()) v = j->get<double>();
        }
        if (v && std::isfinite(*v)) row.figures[std::string(c->name)] = *v;
      }
      set_health(row, devices, t.details, run_reason);
      out.push_back(std::move(row));
    }
  }
  return out;
}

void create_devices_table(sqlite3* db, const std::filesystem::path& where) {
  std::string sql =
      "CREATE TABLE devices ("
      " run_id TEXT NOT NULL, position INTEGER NOT NULL,"
      " device TEXT NOT NULL, role TEXT NOT NULL, below TEXT,";
  for (const MetricDef* c : device_columns()) sql += fmt::format(" {} REAL,", c->name);
  sql += " drive TEXT,";
  for (const HealthColumn& c : kHealthColumns) sql += fmt::format(" {} {},", c.name, c.type);
  sql +=
      " drive_reason TEXT,"
      " PRIMARY KEY (run_id, position, device),"
      " FOREIGN KEY (run_id, position) REFERENCES tests(run_id, position) ON DELETE CASCADE)";
  exec(db, sql, where);
  exec(db, "CREATE INDEX devices_device ON devices(device)", where);
}

std::vector<std::string> missing_device_columns(sqlite3* db, const std::filesystem::path& where) {
  std::set<std::string> have;
  Statement info(db, "SELECT name FROM pragma_table_info('devices')", where);
  while (info.step()) have.insert(info.text(0));
  std::vector<std::string> out;
  for (const MetricDef* c : device_columns())
    if (!have.contains(std::string(c->name))) out.emplace_back(c->name);
  return out;
}

void add_missing_device_columns(sqlite3* db, const std::filesystem::path& where) {
  for (const std::string& name : missing_device_columns(db, where))
    exec(db, fmt::format("ALTER TABLE devices ADD COLUMN {} REAL", name), where);
}

void insert_device_rows(sqlite3* db, const std::string& run_id, const std::vector<DeviceRow>& rows,
                        const std::filesystem::path& where) {
  if (rows.empty()) return;
  const std::vector<const MetricDef*> columns = device_columns();
  std::string names = "run_id, position, device, role, below, drive, drive_reason";
  for (const HealthColumn& c : kHealthColumns) names += fmt::format(", {}", c.name);
  for (const MetricDef* c : columns) names += fmt::format(", {}", c->name);
  const std::size_t n = 7 + kHealthColumns.size() + columns.size();
  std::string params;
  for (std::size_t p = 1; p <= n; ++p) params += fmt::format("{}?{}", p == 1 ? "" : ", ", p);
  Statement s(db, fmt::format("INSERT INTO devices ({}) VALUES ({})", names, params), where);
  for (const DeviceRow& r : rows) {
    s.reset();
    s.bind(1, run_id);
    s.bind(2, static_cast<std::int64_t>(r.position));
    s.bind(3, r.device);
    s.bind(4, r.role);
    s.bind_nonempty(5, r.below);
    s.bind_nonempty(6, r.drive);
    s.bind_nonempty(7, r.health_reason);
    int index = 8;
    for (const HealthColumn& c : kHealthColumns) {
      const Json* v = nullptr;
      if (r.health.is_object()) {
        const Json::json_pointer p(c.pointer);
        if (r.health.contains(p)) v = &r.health.at(p);
      }
      bind_json(s, index++, v);
    }
    for (const MetricDef* c : columns) bind_json(s, index++, object_member(r.figures, c->name));
    s.step();
  }
}

void upgrade_to_devices(sqlite3* db, const std::filesystem::path& where) {
  create_devices_table(db, where);
  Statement runs(db, "SELECT run_id, record FROM runs ORDER BY rowid", where);
  while (runs.step()) {
    const std::string run_id = runs.text(0);
    const RunRecord record = record_from_text(runs.text(1), fmt::format("{} (run {})", where.string(), run_id));
    insert_device_rows(db, run_id, device_rows(record), where);
  }
}

}  // namespace drivelab::results::detail
