#pragma once
/// \file health_record.hpp
/// Drive health in a run's record (docs/telemetry.md, "Drive health before and after"): whether
/// the drives under the target can be read at all, said once per run, and for each test the two
/// readings (drive_health.hpp) taken just before and just after its measured phase, their
/// difference, and the warnings a test carries when the drive throttled, ran hot, raised a
/// critical warning or counted new media errors during it.
#include <optional>
#include <string>
#include <vector>

#include "drivelab/results/record.hpp"
#include "drivelab/telemetry/drive_health.hpp"

namespace drivelab::telemetry {

/// Whether a run reads drive health before and after each test: decided once, from one reading
/// at the start of the run.
struct RunHealth {
  /// At least one drive under the target gave a reading.
  bool available = false;
  /// When not available: why ("no NVMe or SATA/SAS device under the target (virtio: vda)",
  /// "smartctl not installed (Debian: smartmontools): ...", "permission denied reading ...").
  std::string reason;
  /// The first reading (each drive's model, firmware and tool, or why a drive gave none).
  HealthReading first;
  /// The run's details.health: {"available": false, "reason": "..."} or {"available": true,
  /// "drives": [{"device", "tool", "model", "firmware"} | {"device", "reason"}]}.
  results::Json json() const;
};

/// The run's decision from its first reading: available when a drive gave a snapshot; else the
/// reading's reason, or each drive's reason joined ("/dev/nvme0: permission denied ...").
RunHealth run_health(HealthReading first);

/// One test's drive health: details.health and the test's warnings.
struct TestHealth {
  /// {"drives": [per drive: "device", "tool", "model", "firmware", "temperature_c": {"before",
  /// "after", "max", "during"}, "sensors_c": {"before", "after"}, "warning_temp_c", "critical_temp_c",
  /// "percentage_used": {"before", "after"}, "delta": {"bytes_read", "bytes_written",
  /// "host_read_commands", "host_write_commands", "media_errors", "warning_temp_minutes",
  /// "critical_temp_minutes", "tmt1_transitions", "tmt2_transitions", "tmt1_seconds",
  /// "tmt2_seconds", "percentage_used"}, "critical_warning": {"value", "bits"}, "throttled"} or
  /// {"device", "reason"} when a reading is missing]}. A figure a drive does not report is absent.
  /// "during" (drives with a hwmon sensor, drive_temperature.hpp): the composite temperature
  /// sampled at the phase's interval boundaries: {"source" (the hwmon directory), "samples",
  /// "max", "max_at_s", "at_or_above_warning_s", "first_interval_at_warning_t_s" (-1: the sample
  /// as the phase ended)}; "max" is then the highest of the readings and the samples. A drive
  /// with a sensor but no reading (no tool, no permission) has "device", "source": "hwmon", its
  /// "temperature_c" {"max", "during"}, "warning_temp_c", "critical_temp_c" and "throttled".
  results::Json json = results::Json::object();
  /// One per finding of health_delta() (throttled, WCTEMP reached, critical warning, media
  /// errors), prefixed with the device: "drive /dev/nvme0: thermal management transitions +4 ...".
  std::vector<std::string> warnings;
  /// The longest time a drive spent at or above its warning threshold during the phase (s; the
  /// metric drive_temp_warning_s); nullopt without samples or a threshold.
  std::optional<double> warning_s;
};

/// The test's health from the reading before its measured phase, the one after (the same drives,
/// matched by device node; empty readings when the run reads none) and each drive's temperature
/// sampled during the phase (`during`, matched by device node). health_delta() decides each
/// drive's warnings, the warning temperature from all of them at once.
TestHealth test_health(const HealthReading& before, const HealthReading& after,
                       const std::vector<PhaseTemperature>& during = {});

}  // namespace drivelab::telemetry
