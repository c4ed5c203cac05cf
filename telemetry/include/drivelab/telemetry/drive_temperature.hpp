#pragma once
/// \file drive_temperature.hpp
/// A drive's temperature during the measured phase, read from the kernel's hwmon sensors at every
/// interval boundary: a file read, no tool spawned (drive health, drive_health.hpp, runs nvme-cli
/// or smartctl before and after the phase only). A drive that heated and throttled in a
/// 30-minute sample and cooled before the reading after it is seen here.
///
/// Sources (hwmon's sysfs interface: Documentation/hwmon/sysfs-interface.rst, temperatures in
/// millidegrees Celsius):
///  - NVMe: Linux drivers/nvme/host/hwmon.c (Linux 5.5 and later) registers a hwmon device named
///    "nvme" on the controller: /sys/class/nvme/nvmeN/hwmonM (Linux 5.5 to 5.11 registered it on
///    the controller's PCI function: <pci device>/hwmon/hwmonM; both are looked at). temp1 is the
///    Composite Temperature (temp1_label "Composite"), tempK+1 Temperature Sensor K ("Sensor K").
///    temp1_max is the composite's over-temperature threshold (Get Features, Temperature
///    Threshold, FID 04h), whose default is WCTEMP (NVM Express Base Specification 2.0, 5.27.1.3)
///    and which the kernel shows only when the controller reports a WCTEMP; temp1_crit is CCTEMP.
///    Each read of temp*_input makes the kernel fetch the SMART / Health log page (an admin
///    command, not I/O): only the composite is read per sample, the thresholds once per test.
///  - SATA: Linux drivers/hwmon/drivetemp.c (module drivetemp, Linux 5.6 and later) registers a
///    hwmon device named "drivetemp" on the SCSI device: /sys/class/scsi_disk/H:C:T:L/device/
///    hwmon/hwmonM. temp1_input is the drive's temperature (SCT Status, else the SMART attribute),
///    temp1_max SCT's maximum recommended continuous operating temperature, temp1_crit its
///    maximum temperature limit (when the drive reports SCT data).
///
/// The drives are the device stack's (device_stack.hpp, stack_drives in drive_health.hpp): the
/// headline's whole disk, an NVMe namespace's controller, each member of a dm or md device that is
/// a drive. A drive without a sensor (virtio, a kernel without the driver, the drivetemp module
/// not loaded) is not sampled and says nothing: the run's reason for having no health data covers
/// it (health_record.hpp).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "drivelab/telemetry/device_stack.hpp"
#include "drivelab/telemetry/drive_health.hpp"

namespace drivelab::telemetry {

/// A drive's hwmon temperature sensor.
struct DriveSensor {
  std::string device;                ///< the drive as drive health names it: "/dev/nvme0", "/dev/sda"
  std::filesystem::path hwmon;       ///< the hwmon directory
  std::filesystem::path composite;   ///< the composite's input (NVMe label "Composite"; drivetemp temp1_input)
  std::string warning_name;          ///< "WCTEMP" (NVMe), "the maximum operating temperature (SCT)" (SATA)
  std::optional<double> warning_c;   ///< temp1_max, °C, read once
  std::optional<double> critical_c;  ///< temp1_crit, °C, read once
};

/// The sensors of the drives of `stack`, each drive once; a drive without one is left out.
/// Reads only; never throws for a missing or unreadable file.
std::vector<DriveSensor> drive_sensors(const DeviceStack& stack);

/// A hwmon temperature file (millidegrees Celsius) in °C; nullopt when unreadable or not a number.
std::optional<double> read_hwmon_celsius(const std::filesystem::path& file);

/// An empty record of `sensor`'s phase (no samples yet): its device, source and thresholds.
PhaseTemperature phase_of(const DriveSensor& sensor);

}  // namespace drivelab::telemetry
