// A drive's temperature from the kernel's hwmon sensors (drive_temperature.hpp).
#include "drivelab/telemetry/drive_temperature.hpp"

#include <algorithm>
#include <charconv>

#include "drivelab/core/sysfs.hpp"

namespace drivelab::telemetry {
namespace fs = std::filesystem;

namespace {

/// The hwmon directories under `dir`: hwmonM directly (a class device's child, as the NVMe
/// controller's) and hwmon/hwmonM (under a bus device, in the class's glue directory).
std::vector<fs::path> hwmon_dirs(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const fs::path& d : {dir, dir / "hwmon"}) {
    for (const auto& e : fs::directory_iterator(d, ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("hwmon", 0) == 0 && name.size() > 5 && e.is_directory(ec)) out.push_back(e.path());
    }
    ec.clear();
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// The first hwmon directory under `dirs` whose `name` is `driver`.
std::optional<fs::path> hwmon_named(const std::vector<fs::path>& dirs, const std::string& driver) {
  for (const fs::path& d : dirs) {
    if (d.empty()) continue;
    for (const fs::path& h : hwmon_dirs(d))
      if (read_sysfs_text(h / "name") == driver) return h;
  }
  return std::nullopt;
}

/// The composite's input of an NVMe hwmon directory: the temp*_input whose label is "Composite",
/// else temp1_input.
fs::path nvme_composite(const fs::path& hwmon) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(hwmon, ec)) {
    const std::string name = e.path().filename().string();
    constexpr std::string_view kLabel = "_label";
    if (name.rfind("temp", 0) != 0 || !name.ends_with(kLabel)) continue;
    if (read_sysfs_text(e.path()) == "Composite")
      return hwmon / (name.substr(0, name.size() - kLabel.size()) + "_input");
  }
  return hwmon / "temp1_input";
}

}  // namespace

std::optional<double> read_hwmon_celsius(const fs::path& file) {
  const std::optional<std::string> text = read_sysfs_text(file);
  if (!text) return std::nullopt;
  long long milli = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), milli);
  if (ec != std::errc() || end != text->data() + text->size()) return std::nullopt;
  return static_cast<double>(milli) / 1000.0;
}

std::vector<DriveSensor> drive_sensors(const DeviceStack& stack) {
  std::vector<DriveSensor> out;
  for (const StackDrive& d : stack_drives(stack)) {
    if (d.dir.empty()) continue;
    DriveSensor s;
    s.device = d.node;
    std::optional<fs::path> hwmon;
    if (d.nvme) {
      std::error_code ec;
      const fs::path pci = fs::canonical(d.dir / "device", ec);  // the controller's PCI function
      hwmon = hwmon_named({d.dir, ec ? fs::path() : pci}, "nvme");
      if (hwmon) s.composite = nvme_composite(*hwmon);
      s.warning_name = "WCTEMP";
    } else {
      hwmon = hwmon_named({d.dir}, "drivetemp");
      if (hwmon) s.composite = *hwmon / "temp1_input";
      s.warning_name = "the maximum operating temperature (SCT)";
    }
    std::error_code ec;
    if (!hwmon || !fs::exists(s.composite, ec)) continue;
    s.hwmon = *hwmon;
    s.warning_c = read_hwmon_celsius(*hwmon / "temp1_max");
    s.critical_c = read_hwmon_celsius(*hwmon / "temp1_crit");
    out.push_back(std::move(s));
  }
  return out;
}

PhaseTemperature phase_of(const DriveSensor& sensor) {
  PhaseTemperature p;
  p.device = sensor.device;
  p.source = sensor.hwmon.string();
  p.warning_c = sensor.warning_c;
  p.warning_name = sensor.warning_name;
  p.critical_c = sensor.critical_c;
  return p;
}

}  // namespace drivelab::telemetry
