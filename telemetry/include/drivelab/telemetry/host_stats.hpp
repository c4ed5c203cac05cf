#pragma once
/// \file host_stats.hpp
/// The host's CPU and pressure stall information, per interval.
///
/// CPU: the first line of /proc/stat (proc(5)), "cpu  user nice system idle iowait irq softirq
/// steal guest guest_nice", in USER_HZ ticks summed over all CPUs. Per interval each share is its
/// delta over the delta of user+nice+system+idle+iowait+irq+softirq+steal, in percent (guest and
/// guest_nice are already counted in user and nice, proc(5)). A counter that went down (iowait
/// can, proc(5)) counts 0, as sysstat shows 0 for an idle that went down. Older kernels write
/// fewer fields (steal: 2.6.11); missing ones are 0.
///
/// Pressure (Documentation/accounting/psi.rst, Linux 4.20 with CONFIG_PSI): /proc/pressure/io
/// and /proc/pressure/memory, lines "some avg10=0.01 avg60=0.61 avg300=1.64 total=1333300006" and
/// "full ...": total is the cumulative stall time in microseconds ("some": at least one task
/// stalled on the resource, "full": all non-idle tasks stalled at once). Per interval the stall
/// share is Δtotal / (Δt x 10^6) x 100 percent. Absent (an older kernel, CONFIG_PSI off, or psi=0
/// on the kernel command line): nullopt with the reason, which the sampler gives once.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace drivelab::telemetry {

/// The "cpu" line of /proc/stat, in USER_HZ ticks.
struct CpuStat {
  std::uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  std::uint64_t guest = 0, guest_nice = 0;
};

/// The "cpu " line of a /proc/stat text. Throws EnvironmentError naming `source` and the field
/// when the line is missing or a field is not a number.
CpuStat parse_proc_stat_cpu(std::string_view text, const std::string& source = "/proc/stat");

/// CPU shares over one interval, from reading `a` to the later `b`, percent of all CPUs (they add up to 100).
struct CpuPercent {
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
};
CpuPercent cpu_percent(const CpuStat& a, const CpuStat& b) noexcept;

/// One /proc/pressure/<resource> reading.
struct PressureStat {
  std::uint64_t some_total_us = 0;
  std::optional<std::uint64_t> full_total_us;  ///< "full" line (cpu has none before Linux 5.13)
  double some_avg10 = 0;                       ///< the kernel's own 10 s average, percent
  std::optional<double> full_avg10;
};

/// Parses a /proc/pressure file's text. Throws EnvironmentError naming `source`, the line and
/// the key when there is no "some" line or a value is malformed.
PressureStat parse_pressure(std::string_view text, const std::string& source);

/// Stall shares over one interval (reading `a`, then `b` `seconds` later), percent of wall time.
struct PressurePercent {
  double some = 0;
  std::optional<double> full;
};
PressurePercent pressure_percent(const PressureStat& a, const PressureStat& b, double seconds) noexcept;

/// One sample of the host.
struct HostSample {
  std::optional<CpuStat> cpu;
  std::optional<PressureStat> io_pressure, memory_pressure;
};

/// Host figures from sample `a` to the later `b`; a pressure is nullopt when either sample lacks it.
struct HostRates {
  std::optional<CpuPercent> cpu;
  std::optional<PressurePercent> io_pressure, memory_pressure;
};
HostRates host_rates(const HostSample& a, const HostSample& b, double seconds) noexcept;

/// Samples <proc_root>/stat and <proc_root>/pressure/{io,memory}. Each reason a figure is
/// missing ("/proc/pressure/io: absent (Linux >= 4.20 with CONFIG_PSI, and not psi=0)") is
/// collected once, however often it is sampled. Not thread-safe.
class HostSampler {
 public:
  explicit HostSampler(std::filesystem::path proc_root = "/proc") : proc_root_(std::move(proc_root)) {}
  HostSample sample();
  /// The reasons so far, each once, in the order they first occurred.
  const std::vector<std::string>& reasons() const noexcept { return reasons_; }

 private:
  void note(std::string reason);
  std::filesystem::path proc_root_;
  std::vector<std::string> reasons_;
  std::set<std::string> seen_;
};

}  // namespace drivelab::telemetry
