// Drive health in a run's record: once per run, and before and after each test (health_record.hpp).
#include "drivelab/telemetry/health_record.hpp"

#include <algorithm>
#include <optional>
#include <utility>

#include <fmt/format.h>

namespace drivelab::telemetry {
namespace {

using results::Json;

template <class T>
void put(Json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

/// {"before", "after"} of a figure either reading has.
template <class T>
void before_after(Json& j, const char* key, const std::optional<T>& before, const std::optional<T>& after) {
  if (!before && !after) return;
  Json ba = Json::object();
  put(ba, "before", before);
  put(ba, "after", after);
  j[key] = std::move(ba);
}

Json identity(const HealthSnapshot& s) {
  Json j = {{"device", s.device}, {"tool", s.tool}};
  if (!s.protocol.empty()) j["protocol"] = s.protocol;
  put(j, "model", s.model);
  put(j, "firmware", s.firmware);
  return j;
}

Json delta_json(const HealthDelta& d) {
  Json j = Json::object();
  put(j, "bytes_read", d.bytes_read);
  put(j, "bytes_written", d.bytes_written);
  put(j, "host_read_commands", d.host_read_commands);
  put(j, "host_write_commands", d.host_write_commands);
  put(j, "media_errors", d.media_errors);
  put(j, "warning_temp_minutes", d.warning_temp_minutes);
  put(j, "critical_temp_minutes", d.critical_temp_minutes);
  put(j, "tmt1_transitions", d.tmt_transitions[0]);
  put(j, "tmt2_transitions", d.tmt_transitions[1]);
  put(j, "tmt1_seconds", d.tmt_seconds[0]);
  put(j, "tmt2_seconds", d.tmt_seconds[1]);
  put(j, "percentage_used", d.percentage_used);
  return j;
}

/// temperature_c: the readings', their max and the phase's samples ("during").
Json temperature_json(const HealthSnapshot& a, const HealthSnapshot& b, const HealthDelta& d,
                      const PhaseTemperature* during) {
  Json t = Json::object();
  put(t, "before", a.temperature_c);
  put(t, "after", b.temperature_c);
  put(t, "max", d.max_temperature_c);
  if (during != nullptr && !during->samples.empty()) {
    Json p = {{"source", during->source}, {"samples", during->samples.size()}};
    put(p, "max", d.phase_max_c);
    if (d.phase_max_c) p["max_at_s"] = d.phase_max_at_s;
    put(p, "at_or_above_warning_s", d.phase_warning_s);
    put(p, "first_interval_at_warning_t_s", d.first_warning_interval_t_s);
    t["during"] = std::move(p);
  }
  return t;
}

/// One drive's entry from its two snapshots (and the phase's samples).
Json drive_json(const HealthSnapshot& a, const HealthSnapshot& b, const HealthDelta& d,
                const PhaseTemperature* during) {
  Json j = identity(b);
  if (!j.contains("model") && a.model) j["model"] = *a.model;
  if (!j.contains("firmware") && a.firmware) j["firmware"] = *a.firmware;
  if (a.temperature_c || b.temperature_c || d.phase_max_c) j["temperature_c"] = temperature_json(a, b, d, during);
  if (!a.sensors_c.empty() || !b.sensors_c.empty()) j["sensors_c"] = {{"before", a.sensors_c}, {"after", b.sensors_c}};
  put(j, "warning_temp_c", d.warning_temp_c);
  const std::optional<double> critical = b.critical_temp_c   ? b.critical_temp_c
                                         : a.critical_temp_c ? a.critical_temp_c
                                         : during != nullptr ? during->critical_c
                                                             : std::nullopt;
  put(j, "critical_temp_c", critical);
  before_after(j, "percentage_used", a.percentage_used, b.percentage_used);
  j["delta"] = delta_json(d);
  if (b.critical_warning)
    j["critical_warning"] = {{"value", *b.critical_warning}, {"bits", critical_warning_bits(*b.critical_warning)}};
  j["throttled"] = d.throttled;
  return j;
}

const DriveHealthRead* find_drive(const HealthReading& r, const std::string& device) {
  const auto it =
      std::find_if(r.drives.begin(), r.drives.end(), [&](const DriveHealthRead& d) { return d.device == device; });
  return it == r.drives.end() ? nullptr : &*it;
}

}  // namespace

Json RunHealth::json() const {
  if (!available) return {{"available", false}, {"reason", reason}};
  Json drives = Json::array();
  for (const DriveHealthRead& d : first.drives)
    drives.push_back(d.snapshot ? identity(*d.snapshot) : Json{{"device", d.device}, {"reason", d.reason}});
  return {{"available", true}, {"drives", std::move(drives)}};
}

RunHealth run_health(HealthReading first) {
  RunHealth h;
  h.available = std::any_of(first.drives.begin(), first.drives.end(),
                            [](const DriveHealthRead& d) { return d.snapshot.has_value(); });
  if (!h.available) {
    h.reason = first.reason;
    for (const DriveHealthRead& d : first.drives)
      h.reason += fmt::format("{}{}: {}", h.reason.empty() ? "" : "; ", d.device, d.reason);
    if (h.reason.empty()) h.reason = "no drive under the target";
  }
  h.first = std::move(first);
  return h;
}

TestHealth test_health(const HealthReading& before, const HealthReading& after,
                       const std::vector<PhaseTemperature>& during) {
  TestHealth out;
  Json drives = Json::array();
  std::vector<bool> used(during.size(), false);
  const auto phase_of_drive = [&](const std::string& device) -> const PhaseTemperature* {
    for (std::size_t i = 0; i < during.size(); ++i)
      if (during[i].device == device && !during[i].samples.empty()) {
        used[i] = true;
        return &during[i];
      }
    return nullptr;
  };
  const auto add = [&](const std::string& device, const HealthDelta& d, Json entry) {
    drives.push_back(std::move(entry));
    for (const std::string& w : d.warnings) out.warnings.push_back(fmt::format("drive {}: {}", device, w));
    if (d.phase_warning_s) out.warning_s = std::max(out.warning_s.value_or(0), *d.phase_warning_s);
  };
  const HealthSnapshot none{};
  for (const DriveHealthRead& b : after.drives) {
    const DriveHealthRead* a = find_drive(before, b.device);
    const PhaseTemperature* p = phase_of_drive(b.device);
    if (a == nullptr || !a->snapshot || !b.snapshot) {
      const std::string why = a == nullptr   ? "no reading before the test"
                              : !a->snapshot ? "before the test: " + a->reason
                                             : "after the test: " + b.reason;
      Json entry = {{"device", b.device}, {"reason", why}};
      if (p == nullptr) {
        drives.push_back(std::move(entry));
        continue;
      }
      const HealthDelta d = health_delta(none, none, p);  // the phase's temperature still says what it saw
      entry["temperature_c"] = temperature_json(none, none, d, p);
      add(b.device, d, std::move(entry));
      continue;
    }
    const HealthDelta d = health_delta(*a->snapshot, *b.snapshot, p);
    add(b.device, d, drive_json(*a->snapshot, *b.snapshot, d, p));
  }
  // Drives with a sensor and no reading (the run reads no health: no tool, no permission).
  for (std::size_t i = 0; i < during.size(); ++i) {
    if (used[i] || during[i].samples.empty()) continue;
    const HealthDelta d = health_delta(none, none, &during[i]);
    Json j = {{"device", during[i].device}, {"source", "hwmon"}};
    j["temperature_c"] = temperature_json(none, none, d, &during[i]);
    put(j, "warning_temp_c", d.warning_temp_c);
    put(j, "critical_temp_c", during[i].critical_c);
    j["throttled"] = d.throttled;
    add(during[i].device, d, std::move(j));
  }
  out.json["drives"] = std::move(drives);
  return out;
}

}  // namespace drivelab::telemetry
