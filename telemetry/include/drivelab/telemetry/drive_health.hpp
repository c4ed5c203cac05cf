#pragma once
/// \file drive_health.hpp
/// Drive health before and after a test: what the drive itself reports, read with nvme-cli or
/// smartmontools, and the difference of two readings.
///
/// Sources, field by field (the NVM Express Base Specification 2.0, section 5.16.1.3,
/// "SMART / Health Information (Log Page Identifier 02h)", and the Identify Controller data structure):
///  - nvme-cli's `nvme smart-log <dev> -o json` (nvme-print-json.c json_smart_log): critical_warning
///    (a number; an object {"value": ...} with --verbose), temperature and temperature_sensor_1..8
///    in Kelvin, percent_used, data_units_read/written (units of 1000 x 512 bytes, rounded up),
///    host_read_commands/host_write_commands, media_errors, warning_temp_time and
///    critical_comp_time (minutes), thm_temp1_trans_count/thm_temp2_trans_count (how often the
///    controller entered the light/heavy thermal-management state TMT1/TMT2) and
///    thm_temp1_total_time/thm_temp2_total_time (seconds spent there). nvme-cli 1.x printed the
///    128-bit counters as floats ("9898518.0"), 2.x as integers; some wrappers as strings: all are
///    read. The key names are the same in nvme-cli 2.3 (Debian 12) and 2.13 (Debian 13); 2.13
///    adds op_lifetime_energy_consumed and interval_power_measurement, ignored here.
///  - `nvme id-ctrl <dev> -o json`: mn (model), fr (firmware), wctemp and cctemp (Kelvin; 0 =
///    not reported).
///  - smartmontools' `smartctl --json -a <dev>` (7.x JSON format 1): model_name (ATA, NVMe) or
///    scsi_vendor + scsi_product (SCSI), firmware_version or scsi_revision, temperature.current
///    (Celsius), temperature.drive_trip (SCSI), nvme_smart_health_information_log (the same page
///    02h fields, temperatures in Celsius, host_reads/host_writes), smartctl 7.3's
///    nvme_composite_temperature_threshold {warning, critical}, ata_smart_attributes (241
///    Total_LBAs_Written and 242 Total_LBAs_Read raw values, whose unit is the vendor's;
///    187 Reported_Uncorrect as media errors), scsi_error_counter_log (gigabytes_processed,
///    total_uncorrected_errors), smart_status.passed. smartctl's JSON (7.3, 7.4) carries no
///    thermal-management transition counts (smartmontools issue #583): nvme-cli is asked first
///    for NVMe.
#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "drivelab/telemetry/device_stack.hpp"

namespace drivelab::telemetry {

/// One reading of a drive's health. Every figure is optional: drives and tools report subsets.
struct HealthSnapshot {
  std::string tool;      ///< "nvme-cli", "smartctl 7.3"
  std::string protocol;  ///< "NVMe", "ATA", "SCSI"
  std::string device;    ///< the node read: "/dev/nvme0", "/dev/sda" ("" for parsed text)
  std::optional<std::string> model, firmware;
  std::optional<double> temperature_c;    ///< composite temperature
  std::vector<double> sensors_c;          ///< temperature sensors 1..8 that the drive reports
  std::optional<double> warning_temp_c;   ///< WCTEMP (NVMe), none for ATA
  std::optional<double> critical_temp_c;  ///< CCTEMP (NVMe), drive trip (SCSI)
  std::optional<std::uint64_t> percentage_used;
  std::optional<std::uint64_t> data_units_read, data_units_written;  ///< NVMe units of 512,000 bytes
  std::optional<std::uint64_t> bytes_read, bytes_written;            ///< NVMe: units x 512,000; SCSI: GB x 10^9
  std::optional<std::uint64_t> host_read_commands, host_write_commands;
  std::optional<std::uint64_t> ata_lbas_read, ata_lbas_written;  ///< ATA 242/241 raw (vendor units)
  std::optional<std::uint64_t> media_errors;
  std::optional<std::uint64_t> critical_warning;  ///< NVMe byte 0 (critical_warning_bits)
  std::optional<std::uint64_t> warning_temp_minutes, critical_temp_minutes;
  std::array<std::optional<std::uint64_t>, 2> tmt_transitions;  ///< TMT1, TMT2 transition counts
  std::array<std::optional<std::uint64_t>, 2> tmt_seconds;      ///< TMT1, TMT2 total time (s)
  std::optional<std::uint64_t> power_on_hours;
  std::optional<bool> smart_passed;  ///< smartctl's overall assessment
};

/// The names of the set bits of an NVMe critical warning byte: "available spare below threshold",
/// "temperature beyond a threshold", "reliability degraded", "read-only", "volatile memory backup
/// failed", "persistent memory region unreliable" (bits 0-5).
std::vector<std::string> critical_warning_bits(std::uint64_t value);

/// Parses `nvme smart-log -o json` text. `source` names the command in errors. Throws
/// EnvironmentError ("<source>: not JSON: ...", "<source>: no SMART log fields") for other text.
HealthSnapshot parse_nvme_smart_log(std::string_view json_text, const std::string& source);
/// Adds model, firmware, WCTEMP and CCTEMP from `nvme id-ctrl -o json` text. Throws like above.
void apply_nvme_id_ctrl(HealthSnapshot& snapshot, std::string_view json_text, const std::string& source);
/// Parses `smartctl --json -a` text (ATA, SCSI or NVMe). Throws like above, and when smartctl's
/// exit_status says it could not open or talk to the device (bits 0-1, smartctl(8)), with its
/// messages.
HealthSnapshot parse_smartctl(std::string_view json_text, const std::string& source);

/// One sample of a drive's composite temperature during the measured phase (drive_temperature.hpp).
struct PhaseSample {
  double t_s = 0;          ///< seconds since the measured phase started
  double composite_c = 0;  ///< the composite temperature, °C
  /// The t_s of the interval this sample closes (results::Interval::t_s); none for the sample
  /// taken as the phase ends.
  std::optional<double> interval_t_s;
};

/// A drive's composite temperature sampled at the interval boundaries of the measured phase from
/// the kernel's hwmon sensor (drive_temperature.hpp), and the thresholds that sensor gives.
struct PhaseTemperature {
  std::string device;  ///< the drive as drive health names it: "/dev/nvme0", "/dev/sda"
  std::string source;  ///< the hwmon directory read
  std::vector<PhaseSample> samples;
  /// The sensor's warning threshold: NVMe temp1_max (the composite's over-temperature threshold,
  /// WCTEMP unless the host changed it), SATA drivetemp temp1_max (SCT's maximum recommended
  /// continuous operating temperature); and its name for the warning ("WCTEMP", ...).
  std::optional<double> warning_c;
  std::string warning_name;
  std::optional<double> critical_c;  ///< temp1_crit: NVMe CCTEMP, SATA SCT's maximum temperature limit
};

/// Seconds of `samples` at or above `threshold_c`, the temperature taken as linear between two
/// consecutive samples (a sample is a point: what the drive did between two is not read).
double seconds_at_or_above(const std::vector<PhaseSample>& samples, double threshold_c);

/// What changed between two readings of one drive over a test.
struct HealthDelta {
  std::optional<std::uint64_t> bytes_read, bytes_written;
  std::optional<std::uint64_t> host_read_commands, host_write_commands;
  std::optional<std::uint64_t> media_errors;
  std::optional<std::uint64_t> warning_temp_minutes, critical_temp_minutes;
  std::array<std::optional<std::uint64_t>, 2> tmt_transitions, tmt_seconds;
  std::optional<std::int64_t> percentage_used;
  /// The highest composite temperature: of the two readings and of the phase's samples.
  std::optional<double> max_temperature_c;
  /// The warning threshold the decision used: the readings' WCTEMP, else the phase sensor's.
  std::optional<double> warning_temp_c;
  /// With the phase's samples: their highest, when (s since the phase started), the seconds at or
  /// above warning_temp_c (seconds_at_or_above) and the t_s of the first interval at or above it
  /// (-1: the sample taken as the phase ended).
  std::optional<double> phase_max_c;
  double phase_max_at_s = 0;
  std::optional<double> phase_warning_s;
  std::optional<double> first_warning_interval_t_s;
  std::uint64_t new_critical_warning = 0;  ///< bits set after that were clear before
  /// True when the drive throttled or ran hot during the test: a thermal-management transition
  /// count or time grew, the warning or critical temperature time grew, a reading reached WCTEMP,
  /// or the temperature critical-warning bit came on.
  bool throttled = false;
  /// One sentence per finding, for the record and the console ("TMT1 transitions +3: the drive
  /// throttled (light thermal management) during the test"); media errors and new critical
  /// warnings are here too, without setting `throttled`.
  std::vector<std::string> warnings;
};
/// From snapshot `a` to the later `b`. A counter that went down (a drive reset, another drive)
/// gives no delta for that figure. `during`: the drive's composite temperature sampled during the
/// phase (nullptr: none). The one place that decides whether the drive reached its warning
/// temperature: from the two readings and the phase's samples together, said once (naming the
/// first interval at or above it and the time spent there when the samples saw it). Empty
/// snapshots (no tool could read the drive) with `during` give the temperature findings only.
HealthDelta health_delta(const HealthSnapshot& a, const HealthSnapshot& b, const PhaseTemperature* during = nullptr);

/// The programs used, and how long each may take.
struct HealthTools {
  std::optional<std::filesystem::path> nvme;      ///< nvme-cli's `nvme`
  std::optional<std::filesystem::path> smartctl;  ///< smartmontools' `smartctl`
  std::chrono::milliseconds timeout{15000};
  /// Both found on $PATH or in /usr/sbin, /sbin (core/process.hpp find_program).
  static HealthTools found();
};

/// One drive's reading, or why there is none.
struct DriveHealthRead {
  std::string device;  ///< the node: "/dev/nvme0", "/dev/sda"
  std::optional<HealthSnapshot> snapshot;
  std::string reason;  ///< when no snapshot: "smartctl not installed (Debian: smartmontools)", ...
};
/// The drives of a stack, or why there is none.
struct HealthReading {
  std::vector<DriveHealthRead> drives;
  /// When `drives` is empty: "no NVMe or SATA/SAS device under the target (virtio: vda)".
  std::string reason;
};

/// A drive under a stack: what drive health reads, and where the kernel hangs its sensors.
struct StackDrive {
  std::string node;  ///< "/dev/nvme0" (an NVMe controller), "/dev/sda" (a SCSI/SATA/SAS disk)
  bool nvme = false;
  std::filesystem::path
      dir;  ///< the disk's `device` link resolved: the NVMe controller's or the SCSI device's sysfs directory
};
/// Each NVMe controller and SCSI/SATA/SAS disk in `stack` once (a partition's, dm's or md's
/// members, a loop device's backing file's device); the other disks into `others` ("virtio: vda"),
/// each once, when given.
std::vector<StackDrive> stack_drives(const DeviceStack& stack, std::vector<std::string>* others = nullptr);

/// Reads the health of every NVMe controller and SCSI/SATA/SAS disk in `stack` (a partition's,
/// dm's or loop device's drives below), each once, with the tools' JSON output (spawned with a
/// timeout, core/process.hpp). Never throws for a missing tool, permission or device: the reason
/// says which.
HealthReading read_drive_health(const DeviceStack& stack, const HealthTools& tools = HealthTools::found());
/// The same for a target path: its stack (device_stack_of), or the reason it has none ("tmpfs at
/// /dev/shm has no block device", "overlay at / has no block device") as the reading's reason.
HealthReading read_drive_health_of(const std::filesystem::path& target,
                                   const HealthTools& tools = HealthTools::found());

}  // namespace drivelab::telemetry
