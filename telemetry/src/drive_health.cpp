#include "drivelab/telemetry/drive_health.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "drivelab/core/errors.hpp"
#include "drivelab/core/process.hpp"

namespace drivelab::telemetry {
namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

constexpr double kKelvin = 273.15;
/// NVMe data units: 1000 units of 512 bytes (NVMe base spec 2.0, page 02h bytes 32-47).
constexpr std::uint64_t kNvmeDataUnitBytes = 512000;

Json parse_json(std::string_view text, const std::string& source) {
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    throw EnvironmentError(fmt::format("{}: not JSON: {}", source, e.what()));
  }
}

/// A counter as the tools print it: an integer, a float ("9898518.0", nvme-cli 1.x) or a string
/// of digits. nullopt when absent, negative or not a number.
std::optional<std::uint64_t> count(const Json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end()) return std::nullopt;
  const Json& v = *it;
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer()) {
    const auto x = v.get<std::int64_t>();
    return x < 0 ? std::nullopt : std::optional<std::uint64_t>(static_cast<std::uint64_t>(x));
  }
  if (v.is_number_float()) {
    const double x = v.get<double>();
    // Below 2^63, where llround is defined (a 128-bit counter past that is not a real drive's).
    if (!(x >= 0 && x < 9.2e18)) return std::nullopt;
    return static_cast<std::uint64_t>(std::llround(x));
  }
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    try {
      return std::stoull(s);
    } catch (...) {
      return std::nullopt;
    }
  }
  if (v.is_object()) return count(v, "value");  // --verbose: {"value": 0, "available_spare": 0, ...}
  return std::nullopt;
}

std::optional<std::string> text(const Json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  std::string s = it->get<std::string>();
  while (!s.empty() && (s.back() == ' ' || s.back() == '\0')) s.pop_back();
  while (!s.empty() && s.front() == ' ') s.erase(s.begin());
  if (s.empty()) return std::nullopt;
  return s;
}

std::optional<double> kelvin_to_c(std::optional<std::uint64_t> k) {
  if (!k || *k == 0) return std::nullopt;  // 0: not reported
  return std::round((static_cast<double>(*k) - kKelvin) * 100.0) / 100.0;
}

std::optional<std::uint64_t> scaled(std::optional<std::uint64_t> v, std::uint64_t factor) {
  if (!v) return std::nullopt;
  return *v * factor;
}

/// The page 02h counters both tools print under the same names (the host command counts differ:
/// nvme-cli "host_read_commands", smartctl "host_reads").
void page02h_counters(HealthSnapshot& s, const Json& j, const char* host_reads, const char* host_writes) {
  s.critical_warning = count(j, "critical_warning");
  s.data_units_read = count(j, "data_units_read");
  s.data_units_written = count(j, "data_units_written");
  s.bytes_read = scaled(s.data_units_read, kNvmeDataUnitBytes);
  s.bytes_written = scaled(s.data_units_written, kNvmeDataUnitBytes);
  s.host_read_commands = count(j, host_reads);
  s.host_write_commands = count(j, host_writes);
  s.media_errors = count(j, "media_errors");
  s.warning_temp_minutes = count(j, "warning_temp_time");
  s.critical_temp_minutes = count(j, "critical_comp_time");
  if (!s.power_on_hours) s.power_on_hours = count(j, "power_on_hours");
}

/// The object holding the SMART log's fields: the root, or its one object member that has them
/// (a wrapper keyed by the device name).
const Json* smart_fields(const Json& root) {
  if (!root.is_object()) return nullptr;
  if (root.contains("data_units_read") || root.contains("critical_warning")) return &root;
  for (const auto& [k, v] : root.items())
    if (v.is_object() && (v.contains("data_units_read") || v.contains("critical_warning"))) return &v;
  return nullptr;
}

}  // namespace

std::vector<std::string> critical_warning_bits(std::uint64_t value) {
  static constexpr const char* kBits[] = {
      "available spare below threshold", "temperature beyond a threshold",     "reliability degraded", "read-only",
      "volatile memory backup failed",   "persistent memory region unreliable"};
  std::vector<std::string> out;
  for (unsigned b = 0; b < 6; ++b)
    if (value & (1U << b)) out.emplace_back(kBits[b]);
  for (unsigned b = 6; b < 8; ++b)
    if (value & (1U << b)) out.push_back(fmt::format("reserved bit {}", b));
  return out;
}

HealthSnapshot parse_nvme_smart_log(std::string_view json_text, const std::string& source) {
  const Json root = parse_json(json_text, source);
  const Json* f = smart_fields(root);
  if (f == nullptr)
    throw EnvironmentError(fmt::format("{}: no SMART log fields (critical_warning, data_units_read)", source));
  const Json& j = *f;
  HealthSnapshot s;
  s.tool = "nvme-cli";
  s.protocol = "NVMe";
  page02h_counters(s, j, "host_read_commands", "host_write_commands");
  s.temperature_c = kelvin_to_c(count(j, "temperature"));
  for (int i = 1; i <= 8; ++i)
    if (auto c = kelvin_to_c(count(j, fmt::format("temperature_sensor_{}", i).c_str()))) s.sensors_c.push_back(*c);
  s.percentage_used = count(j, "percent_used");
  if (!s.percentage_used) s.percentage_used = count(j, "percentage_used");
  s.tmt_transitions = {count(j, "thm_temp1_trans_count"), count(j, "thm_temp2_trans_count")};
  s.tmt_seconds = {count(j, "thm_temp1_total_time"), count(j, "thm_temp2_total_time")};
  return s;
}

void apply_nvme_id_ctrl(HealthSnapshot& s, std::string_view json_text, const std::string& source) {
  const Json j = parse_json(json_text, source);
  if (!j.is_object() || !(j.contains("mn") || j.contains("wctemp")))
    throw EnvironmentError(fmt::format("{}: no Identify Controller fields (mn, fr, wctemp)", source));
  if (auto mn = text(j, "mn")) s.model = std::move(mn);
  if (auto fr = text(j, "fr")) s.firmware = std::move(fr);
  s.warning_temp_c = kelvin_to_c(count(j, "wctemp"));
  s.critical_temp_c = kelvin_to_c(count(j, "cctemp"));
}

HealthSnapshot parse_smartctl(std::string_view json_text, const std::string& source) {
  const Json j = parse_json(json_text, source);
  if (!j.is_object() || !j.contains("smartctl"))
    throw EnvironmentError(fmt::format("{}: no \"smartctl\" object: not smartctl --json output", source));
  const Json& sc = j["smartctl"];
  const auto exit_status = count(sc, "exit_status").value_or(0);
  if (exit_status & 3U) {  // bit 0: command line did not parse; bit 1: device open failed
    std::string messages;
    if (sc.contains("messages") && sc["messages"].is_array())
      for (const Json& m : sc["messages"])
        if (auto t = text(m, "string")) messages += (messages.empty() ? "" : "; ") + *t;
    throw EnvironmentError(
        fmt::format("{}: smartctl exit status {}{}{}", source, exit_status, messages.empty() ? "" : ": ", messages));
  }
  HealthSnapshot s;
  s.tool = "smartctl";
  if (sc.contains("version") && sc["version"].is_array() && sc["version"].size() >= 2)
    s.tool = fmt::format("smartctl {}.{}", sc["version"][0].dump(), sc["version"][1].dump());
  const Json dev = j.value("device", Json::object());
  s.protocol = text(dev, "protocol").value_or("");
  if (auto name = text(dev, "name")) s.device = *name;
  s.model = text(j, "model_name");
  if (!s.model) {
    const auto vendor = text(j, "scsi_vendor"), product = text(j, "scsi_product");
    if (auto m = text(j, "scsi_model_name"))
      s.model = m;
    else if (product)
      s.model = vendor ? *vendor + " " + *product : *product;
  }
  s.firmware = text(j, "firmware_version");
  if (!s.firmware) s.firmware = text(j, "scsi_revision");
  if (j.contains("temperature") && j["temperature"].is_object()) {
    const Json& t = j["temperature"];
    if (auto c = count(t, "current")) s.temperature_c = static_cast<double>(*c);
    if (auto trip = count(t, "drive_trip")) s.critical_temp_c = static_cast<double>(*trip);
  }
  if (j.contains("smart_status") && j["smart_status"].is_object() && j["smart_status"].contains("passed") &&
      j["smart_status"]["passed"].is_boolean())
    s.smart_passed = j["smart_status"]["passed"].get<bool>();
  if (auto poh = j.find("power_on_time"); poh != j.end() && poh->is_object()) s.power_on_hours = count(*poh, "hours");
  if (auto th = j.find("nvme_composite_temperature_threshold"); th != j.end() && th->is_object()) {
    if (auto w = count(*th, "warning")) s.warning_temp_c = static_cast<double>(*w);
    if (auto c = count(*th, "critical")) s.critical_temp_c = static_cast<double>(*c);
  }
  if (auto n = j.find("nvme_smart_health_information_log"); n != j.end() && n->is_object()) {
    const Json& l = *n;
    if (s.protocol.empty()) s.protocol = "NVMe";
    page02h_counters(s, l, "host_reads", "host_writes");
    if (auto t = count(l, "temperature"); t && !s.temperature_c) s.temperature_c = static_cast<double>(*t);
    if (auto ts = l.find("temperature_sensors"); ts != l.end() && ts->is_array())
      for (const Json& t : *ts)
        if (t.is_number()) s.sensors_c.push_back(t.get<double>());
    s.percentage_used = count(l, "percentage_used");
  }
  if (auto a = j.find("ata_smart_attributes"); a != j.end() && a->is_object() && a->contains("table")) {
    for (const Json& attr : (*a)["table"]) {
      const auto id = count(attr, "id");
      const auto raw = attr.contains("raw") ? count(attr["raw"], "value") : std::nullopt;
      if (!id || !raw) continue;
      if (*id == 241) s.ata_lbas_written = raw;
      if (*id == 242) s.ata_lbas_read = raw;
      if (*id == 187) s.media_errors = raw;
    }
  }
  if (auto e = j.find("scsi_error_counter_log"); e != j.end() && e->is_object()) {
    const auto gb = [&](const char* dir) -> std::optional<std::uint64_t> {
      if (!e->contains(dir) || !(*e)[dir].contains("gigabytes_processed")) return std::nullopt;
      const Json& v = (*e)[dir]["gigabytes_processed"];
      try {
        const double g = v.is_string() ? std::stod(v.get<std::string>()) : v.get<double>();
        if (!(g >= 0 && g < 9.2e9)) return std::nullopt;  // llround's range
        return static_cast<std::uint64_t>(std::llround(g * 1e9));
      } catch (...) {
        return std::nullopt;
      }
    };
    s.bytes_read = gb("read");
    s.bytes_written = gb("write");
    std::optional<std::uint64_t> uncorrected;
    for (const char* dir : {"read", "write", "verify"})
      if (e->contains(dir))
        if (auto u = count((*e)[dir], "total_uncorrected_errors")) uncorrected = uncorrected.value_or(0) + *u;
    if (uncorrected) s.media_errors = uncorrected;
  }
  return s;
}

double seconds_at_or_above(const std::vector<PhaseSample>& samples, double threshold_c) {
  double out = 0;
  for (std::size_t k = 1; k < samples.size(); ++k) {
    const PhaseSample& p = samples[k - 1];
    const PhaseSample& q = samples[k];
    const double length = q.t_s - p.t_s;
    if (!(length > 0)) continue;
    const double hi = std::max(p.composite_c, q.composite_c), lo = std::min(p.composite_c, q.composite_c);
    if (lo >= threshold_c) {
      out += length;
    } else if (hi >= threshold_c) {
      out += length * (hi - threshold_c) / (hi - lo);  // the line crosses the threshold inside
    }
  }
  return out;
}

namespace {

/// The phase's figures of `d` from `during` at threshold `wctemp` (when known).
void add_phase(HealthDelta& d, const PhaseTemperature& during, const std::optional<double>& wctemp) {
  const std::vector<PhaseSample>& s = during.samples;
  for (const PhaseSample& p : s) {
    if (!d.phase_max_c || p.composite_c > *d.phase_max_c) {
      d.phase_max_c = p.composite_c;
      d.phase_max_at_s = p.t_s;
    }
  }
  if (d.phase_max_c) d.max_temperature_c = std::max(d.max_temperature_c.value_or(-kKelvin), *d.phase_max_c);
  if (!wctemp || s.empty()) return;
  d.phase_warning_s = seconds_at_or_above(s, *wctemp);
  // The first interval the drive spent time at or above the threshold in: the one a segment
  // ends with (a sample at or above it, or a crossing between two samples).
  for (std::size_t k = 1; k < s.size(); ++k) {
    const bool reached = s[k].composite_c >= *wctemp || s[k - 1].composite_c >= *wctemp;
    if (!reached) continue;
    d.first_warning_interval_t_s = s[k].interval_t_s.value_or(-1);
    break;
  }
}

/// THE warning-temperature finding of `d` (drive_health.hpp health_delta): one sentence.
void warning_temperature(HealthDelta& d, const std::string& name) {
  const double w = *d.warning_temp_c;
  if (d.first_warning_interval_t_s) {
    const double t = *d.first_warning_interval_t_s;
    d.warnings.push_back(fmt::format(
        "temperature {:g} °C during the measured phase (at {:.0f} s): at or above the warning threshold {:g} °C ({}) "
        "for {:.0f} s, first {}",
        *d.phase_max_c, d.phase_max_at_s, w, name, d.phase_warning_s.value_or(0),
        t < 0 ? std::string("as the phase ended") : fmt::format("in the interval ending at {:g} s", t)));
  } else {
    d.warnings.push_back(
        fmt::format("temperature {:g} °C reached the warning threshold {:g} °C ({})", *d.max_temperature_c, w, name));
  }
}

}  // namespace

HealthDelta health_delta(const HealthSnapshot& a, const HealthSnapshot& b, const PhaseTemperature* during) {
  HealthDelta d;
  const auto grew = [](const std::optional<std::uint64_t>& x,
                       const std::optional<std::uint64_t>& y) -> std::optional<std::uint64_t> {
    if (!x || !y || *y < *x) return std::nullopt;
    return *y - *x;
  };
  d.bytes_read = grew(a.bytes_read, b.bytes_read);
  d.bytes_written = grew(a.bytes_written, b.bytes_written);
  d.host_read_commands = grew(a.host_read_commands, b.host_read_commands);
  d.host_write_commands = grew(a.host_write_commands, b.host_write_commands);
  d.media_errors = grew(a.media_errors, b.media_errors);
  d.warning_temp_minutes = grew(a.warning_temp_minutes, b.warning_temp_minutes);
  d.critical_temp_minutes = grew(a.critical_temp_minutes, b.critical_temp_minutes);
  for (std::size_t i = 0; i < 2; ++i) {
    d.tmt_transitions[i] = grew(a.tmt_transitions[i], b.tmt_transitions[i]);
    d.tmt_seconds[i] = grew(a.tmt_seconds[i], b.tmt_seconds[i]);
  }
  if (a.percentage_used && b.percentage_used)
    d.percentage_used = static_cast<std::int64_t>(*b.percentage_used) - static_cast<std::int64_t>(*a.percentage_used);
  if (a.temperature_c || b.temperature_c)
    d.max_temperature_c = std::max(a.temperature_c.value_or(-kKelvin), b.temperature_c.value_or(-kKelvin));
  if (b.critical_warning) d.new_critical_warning = *b.critical_warning & ~a.critical_warning.value_or(0);

  static constexpr const char* kTmt[] = {"TMT1, light", "TMT2, heavy"};
  for (std::size_t i = 0; i < 2; ++i) {
    if (d.tmt_transitions[i].value_or(0) > 0) {
      d.throttled = true;
      d.warnings.push_back(fmt::format("thermal management transitions +{} ({}): the drive throttled during the test",
                                       *d.tmt_transitions[i], kTmt[i]));
    } else if (d.tmt_seconds[i].value_or(0) > 0) {
      d.throttled = true;
      d.warnings.push_back(fmt::format("{} s more in thermal management ({}): the drive throttled during the test",
                                       *d.tmt_seconds[i], kTmt[i]));
    }
  }
  if (d.warning_temp_minutes.value_or(0) > 0) {
    d.throttled = true;
    d.warnings.push_back(fmt::format(
        "{} min more at or above the warning composite temperature (WCTEMP) during the test", *d.warning_temp_minutes));
  }
  if (d.critical_temp_minutes.value_or(0) > 0) {
    d.throttled = true;
    d.warnings.push_back(
        fmt::format("{} min more at or above the critical composite temperature (CCTEMP) during the test",
                    *d.critical_temp_minutes));
  }
  // The readings' WCTEMP (Identify Controller) first; else the sensor's own threshold.
  d.warning_temp_c = b.warning_temp_c ? b.warning_temp_c : a.warning_temp_c;
  std::string threshold_name = "WCTEMP";
  if (!d.warning_temp_c && during != nullptr && during->warning_c) {
    d.warning_temp_c = during->warning_c;
    if (!during->warning_name.empty()) threshold_name = during->warning_name;
  }
  if (during != nullptr) add_phase(d, *during, d.warning_temp_c);
  if (d.warning_temp_c && d.max_temperature_c && *d.max_temperature_c >= *d.warning_temp_c) {
    d.throttled = true;
    warning_temperature(d, threshold_name);
  }
  if (d.new_critical_warning & 2U) d.throttled = true;
  if (d.new_critical_warning) {
    std::string bits;
    for (const std::string& n : critical_warning_bits(d.new_critical_warning)) bits += (bits.empty() ? "" : ", ") + n;
    d.warnings.push_back(fmt::format("critical warning raised during the test: {}", bits));
  }
  if (d.media_errors.value_or(0) > 0)
    d.warnings.push_back(fmt::format("media errors +{} during the test", *d.media_errors));
  return d;
}

HealthTools HealthTools::found() {
  HealthTools t;
  t.nvme = find_program("nvme", {"/usr/sbin", "/sbin"});
  t.smartctl = find_program("smartctl", {"/usr/sbin", "/sbin"});
  return t;
}

namespace {

/// What kind of device a disk name is, for the reason when nothing can be read.
std::string kind_of(const std::string& disk) {
  static const std::pair<const char*, const char*> kKinds[] = {
      {"vd", "virtio"}, {"xvd", "xen"}, {"loop", "loop"},     {"dm-", "device-mapper"}, {"md", "md RAID"},
      {"zram", "zram"}, {"nbd", "nbd"}, {"mmcblk", "MMC/SD"}, {"ram", "ramdisk"},       {"rbd", "ceph rbd"}};
  for (const auto& [prefix, kind] : kKinds)
    if (disk.rfind(prefix, 0) == 0) return kind;
  return "other";
}

bool permission_problem(const std::string& output) {
  return output.find("Permission denied") != std::string::npos ||
         output.find("Operation not permitted") != std::string::npos;
}

std::string permission_reason(const std::string& node) {
  return fmt::format("permission denied reading {}'s health (needs root: CAP_SYS_ADMIN and read access to the node)",
                     node);
}

/// Runs `argv`; the output on exit status 0, else nullopt and `why`.
std::optional<std::string> run(const std::vector<std::string>& argv, const HealthTools& tools, const std::string& node,
                               std::string& why) {
  try {
    CommandResult r = run_command(argv, tools.timeout);
    if (r.timed_out) {
      why = fmt::format("{} did not answer within {} ms", argv[0], tools.timeout.count());
      return std::nullopt;
    }
    if (r.exit_code == 0) return std::move(r.output);
    why = permission_problem(r.output)
              ? permission_reason(node)
              : fmt::format("{} {} failed (exit code {}): {}", fs::path(argv[0]).filename().string(), argv[1],
                            r.exit_code, tail_of_text(r.output, 3));
    if (r.exit_code > 0 && argv[0].find("smartctl") != std::string::npos && (r.exit_code & 3) == 0)
      return std::move(r.output);  // smartctl: bits 2-7 describe the disk, the JSON is complete
  } catch (const EnvironmentError& e) {
    why = e.what();
  }
  return std::nullopt;
}

/// `smartctl --json -a` of out.device parsed into out.snapshot; false, with `why`, when it gives
/// none (the NVMe fallback and the SATA/SAS path share it).
bool read_smartctl(DriveHealthRead& out, const HealthTools& tools, std::string& why) {
  if (auto j = run({tools.smartctl->string(), "--json", "-a", out.device}, tools, out.device, why)) {
    try {
      out.snapshot = parse_smartctl(*j, fmt::format("smartctl --json -a {}", out.device));
      out.snapshot->device = out.device;
      return true;
    } catch (const EnvironmentError& e) {
      why = e.what();
    }
  }
  return false;
}

DriveHealthRead read_nvme(const std::string& controller, const HealthTools& tools) {
  DriveHealthRead out{"/dev/" + controller, std::nullopt, ""};
  std::string why;
  if (tools.nvme) {
    const std::string src = fmt::format("nvme smart-log {} -o json", out.device);
    if (auto log = run({tools.nvme->string(), "smart-log", out.device, "-o", "json"}, tools, out.device, why)) {
      try {
        HealthSnapshot s = parse_nvme_smart_log(*log, src);
        s.device = out.device;
        std::string id_why;
        if (auto id = run({tools.nvme->string(), "id-ctrl", out.device, "-o", "json"}, tools, out.device, id_why))
          apply_nvme_id_ctrl(s, *id, fmt::format("nvme id-ctrl {} -o json", out.device));
        out.snapshot = std::move(s);
        return out;
      } catch (const EnvironmentError& e) {
        why = e.what();
      }
    }
  }
  if (tools.smartctl) {
    std::string sc_why;
    if (read_smartctl(out, tools, sc_why)) return out;
    why = why.empty() ? sc_why : why + "; " + sc_why;
  }
  out.reason =
      !tools.nvme && !tools.smartctl
          ? "neither nvme-cli (nvme) nor smartmontools (smartctl) is installed (Debian: nvme-cli, smartmontools)"
          : why;
  return out;
}

DriveHealthRead read_scsi(const std::string& disk, const HealthTools& tools) {
  DriveHealthRead out{"/dev/" + disk, std::nullopt, ""};
  if (!tools.smartctl) {
    out.reason = "smartctl not installed (Debian: smartmontools): no health data for " + out.device;
    return out;
  }
  std::string why;
  if (read_smartctl(out, tools, why)) return out;
  if (permission_problem(why)) why = permission_reason(out.device);  // run() already says it so
  out.reason = why;
  return out;
}

}  // namespace

std::vector<StackDrive> stack_drives(const DeviceStack& stack, std::vector<std::string>* others) {
  std::vector<StackDrive> out;
  std::set<std::string> done;
  for (const StackDevice& d : stack.devices) {
    const std::string& disk = d.block.disk;
    std::error_code ec;
    // /sys/block/nvme0n1/device links to .../nvme/nvme0 (the controller), /sys/block/sda/device
    // to the SCSI device .../2:0:0:0.
    fs::path dir = fs::canonical(d.block.disk_dir / "device", ec);
    if (ec) dir.clear();
    if (disk.rfind("nvme", 0) == 0) {
      std::string ctrl = dir.filename().string();
      if (dir.empty() || ctrl.rfind("nvme", 0) != 0) ctrl = disk.substr(0, disk.find('n', 4));
      if (done.insert(ctrl).second) out.push_back({"/dev/" + ctrl, true, dir});
    } else if (disk.rfind("sd", 0) == 0) {
      if (done.insert(disk).second) out.push_back({"/dev/" + disk, false, dir});
    } else if (others != nullptr) {
      const std::string k = fmt::format("{}: {}", kind_of(disk), disk);
      if (std::find(others->begin(), others->end(), k) == others->end()) others->push_back(k);
    }
  }
  return out;
}

HealthReading read_drive_health(const DeviceStack& stack, const HealthTools& tools) {
  HealthReading out;
  std::vector<std::string> others;
  for (const StackDrive& d : stack_drives(stack, &others))
    out.drives.push_back(d.nvme ? read_nvme(d.node.substr(5), tools) : read_scsi(d.node.substr(5), tools));
  if (out.drives.empty()) {
    std::string list;
    for (const std::string& o : others) list += (list.empty() ? "" : "; ") + o;
    out.reason = fmt::format("no NVMe or SATA/SAS device under the target ({})", list.empty() ? "no device" : list);
  }
  return out;
}

HealthReading read_drive_health_of(const fs::path& target, const HealthTools& tools) {
  const TargetStack t = device_stack_of(target);
  if (!t.stack) return {{}, t.reason};
  return read_drive_health(*t.stack, tools);
}

}  // namespace drivelab::telemetry
