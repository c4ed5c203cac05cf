#pragma once
/// \file test_telemetry.hpp
/// What the drive and the host did during one test's measured phase, sampled at the test's own
/// interval boundaries and written into its record (docs/telemetry.md, issue 33). The runner
/// makes one per test (runner/src/test_sequence.cpp): begin() as the measured phase starts,
/// close_interval() from results::TestRecorder's interval sampler each time the emulator closes
/// an interval, end() as the phase ends, then record().
///
/// Per sample: one read of /sys/block/.../stat per device of the target's stack (device_stack.hpp),
/// of /proc/stat and /proc/pressure/{io,memory} (host_stats.hpp) and of each drive's hwmon
/// composite temperature (drive_temperature.hpp; drives without a sensor: none); nothing else. The sample
/// is taken on the thread that closes the interval (the emulator's reporting loop, not its I/O
/// workers), after the emulator's own boundary, so the device window ends a few microseconds
/// after the application's.
///
/// What is recorded (catalogue/telemetry.hpp; every name is a catalogue declaration):
///  - each interval: the headline device's iostat -x figures (device_r_s, device_w_s, ...,
///    device_aqu_sz, device_util_pct) and the host's (host_cpu_*_pct, host_psi_*_pct) as interval
///    values, after the emulator's own;
///  - the test: the same figures over the whole measured phase and the headline's counts
///    (device_read_ios, device_write_ios, device_flush_ios, device_read_bytes, device_write_bytes)
///    as headline metrics; each device below the headline in details.telemetry.devices under the
///    same names, per test and per interval (never added to the headline's: a partition's I/O is
///    in its disk's counters too);
///  - with drives that have a hwmon sensor: each interval's drive_temp_c (the hottest drive's
///    composite temperature at its end), the test's drive_temp_max_c and, with a warning
///    threshold, drive_temp_warning_s; each drive's samples summarised in details.health
///    (health_record.hpp test_health, which also decides the warning temperature's warning);
///  - the demand per unit of the application's work (demand_metrics()): device bytes and I/Os per
///    transaction and per New-Order, per application I/O and byte, per frame;
///  - details.telemetry: {window_s, window, stack, devices: [{name, role, below, test: {figures},
///    intervals: [{t_s, values: {figures}}]}], shared: {text, uses: [{what, swap, type, on,
///    counted_in}]}, no_device, notes}: the window, the stack, what else is on it (other
///    filesystems and swap, whose I/O its counters count: device_stack.hpp shared_uses) and each
///    device's role (the headline's figures are its metrics and interval values), and, once, why
///    something could not be sampled ("tmpfs at /dev/shm has no block device" as no_device, a
///    host file the kernel lacks as a note);
///  - with the run's facts (set_run(), run_facts.hpp): drive health read just before and just
///    after the measured phase (health_before(), health_after(); outside the window) into
///    details.health with its warnings (health_record.hpp), when the run found drives to read;
///    and the physics checks (physics.hpp) into details.telemetry.checks, a warning or a failure
///    each, with details.telemetry.process_cpu_s (the drivelab process's CPU over the window).
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "drivelab/results/catalogue.hpp"
#include "drivelab/results/device_demand.hpp"
#include "drivelab/results/record.hpp"
#include "drivelab/results/recorder.hpp"
#include "drivelab/core/cpu_usage.hpp"
#include "drivelab/telemetry/block_stats.hpp"
#include "drivelab/telemetry/device_stack.hpp"
#include "drivelab/telemetry/drive_health.hpp"
#include "drivelab/telemetry/drive_temperature.hpp"
#include "drivelab/telemetry/host_stats.hpp"
#include "drivelab/telemetry/physics.hpp"
#include "drivelab/telemetry/run_facts.hpp"

namespace drivelab::telemetry {

/// A catalogue declaration and its value.
using Figure = std::pair<const results::MetricDef*, double>;

/// The iostat -x figures of `r` as catalogue values: device_r_s, device_w_s, device_d_s and
/// device_f_s (when the kernel counts discards, flushes), device_rmb_s, device_wmb_s (MB = 10^6
/// bytes), device_rrqm_s, device_wrqm_s, device_rareq_bytes, device_wareq_bytes (rareq-sz x 1024),
/// device_r_await_ms, device_w_await_ms, device_f_await_ms, device_aqu_sz, device_util_pct.
std::vector<Figure> device_figures(const BlockRates& r);

/// The host's figures of `h` as catalogue values: host_cpu_user_pct (user + nice),
/// host_cpu_system_pct, host_cpu_iowait_pct, host_cpu_steal_pct, host_cpu_irq_pct (irq + softirq),
/// and host_psi_{io,memory}_{some,full}_pct where the kernel has them.
std::vector<Figure> host_figures(const HostRates& h);

/// The device's counts over a window, and the demand per unit of the application's work: one
/// formula for a rank's test and a merge of hosts' records (results/device_demand.hpp).
using results::demand_metrics;
using results::DeviceTotals;

class TestTelemetry {
 public:
  /// Resolves the device stack of `target` (a directory or a block device; device_stack_of). A
  /// target without a block device keeps its reason and samples the host only.
  explicit TestTelemetry(const std::filesystem::path& target, const std::filesystem::path& sys_root = "/sys",
                         std::filesystem::path proc_root = "/proc");

  /// The run's facts (drive health to read, the harness's ceiling); nullptr (the default): no
  /// health readings, and the harness check does not apply. `run` must outlive this object.
  void set_run(const RunFacts* run) noexcept { run_ = run; }
  /// Reads the drives' health before the measured phase (nothing when the run has none to read).
  void health_before();
  /// The first sample: the measured phase starts now.
  void begin();
  /// Samples and appends the headline device's and the host's figures since the previous
  /// sample to `iv`'s values (nothing before begin() or after end()). Thread-safe.
  void close_interval(results::Interval& iv);
  /// The last sample: the measured phase ended now.
  void end();
  /// Reads the drives' health after the measured phase (after end(); nothing when there was no
  /// reading before).
  void health_after();
  /// Writes the test's figures, groups, demand, details.telemetry, details.health and the
  /// checks' warnings into `rec` (see the file comment); the demand and the checks read the work
  /// the emulator recorded. Returns the failure of a check that fails the test
  /// (tpmc_per_warehouse, also recorded as a failed check), else "". Nothing when begin() never ran.
  std::string record(results::TestRecorder& rec);

  /// The stack sampled, or nullopt with reason().
  const std::optional<DeviceStack>& stack() const noexcept { return stack_; }
  const std::string& reason() const noexcept { return reason_; }

 private:
  struct Sample {
    std::int64_t ns = 0;
    std::vector<std::optional<BlockStat>> devices;  ///< per device of the stack; nullopt: unreadable
    HostSample host;
  };
  Sample take();
  /// Appends each drive's composite temperature at `ns` (closing interval `iv`, nullptr: the
  /// phase's first or last sample) to phase_; the hottest, or nullopt when none was read.
  std::optional<double> sample_temperatures(std::int64_t ns, const results::Interval* iv);
  void note(std::string text);
  /// The headline's figures and demand, details.telemetry.devices; the headline's counts over the window.
  std::optional<BlockRates> record_devices(results::TestRecorder& rec, results::Json& details, double seconds);
  /// The physics checks, details.health and their warnings; the failure, or "".
  std::string record_checks(results::TestRecorder& rec, results::Json& details, const std::optional<BlockRates>& head,
                            double seconds);

  const RunFacts* run_ = nullptr;
  std::optional<DeviceStack> stack_;
  std::string reason_;
  std::vector<SharedUse> shared_;  ///< the other filesystems and swap areas on the stack
  std::optional<HealthReading> health_before_, health_after_;
  CpuTimes cpu_first_, cpu_last_;
  HostSampler host_;
  std::mutex mu_;
  std::optional<Sample> first_, previous_, last_;
  bool ended_ = false;
  std::vector<std::string> notes_;
  std::vector<DriveSensor> sensors_;
  std::vector<PhaseTemperature> phase_;  ///< per sensor: its samples over the phase
  /// Per device below the headline (index 1..): its intervals {t_s, values}.
  std::vector<results::Json> below_intervals_;
};

}  // namespace drivelab::telemetry
