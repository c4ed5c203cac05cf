#pragma once
/// \file catalogue/telemetry.hpp
/// The metric catalogue's declarations (results/catalogue.hpp) of the runner's device and host
/// telemetry (telemetry/test_telemetry.hpp, docs/telemetry.md, issue 33), recorded for every
/// test kind: the iostat -x figures of the block device that holds the target (headline metrics
/// over the measured phase, interval values per interval; the devices below it under the same
/// names in the test's details.telemetry), the host's CPU and pressure stalls, and the device's demand per unit of the
/// application's work. Included by catalogue.hpp, which lists every declaration in kAll; include
/// catalogue.hpp, not this file.
#include "drivelab/results/catalogue_types.hpp"

namespace drivelab::results::catalogue {

inline constexpr MetricDef device_r_s{.name = "device_r_s",
                                      .unit = Unit::per_s,
                                      .kind = MetricKind::device,
                                      .description = "iostat -x r/s: reads the device completed per second",
                                      .recorded_by = "all",
                                      .where = kHeadline | kInterval,
                                      .traits = kDeviceLine | kSummedOverHosts};
inline constexpr MetricDef device_w_s{.name = "device_w_s",
                                      .unit = Unit::per_s,
                                      .kind = MetricKind::device,
                                      .description = "iostat -x w/s: writes the device completed per second",
                                      .recorded_by = "all",
                                      .where = kHeadline | kInterval,
                                      .traits = kDeviceLine | kSummedOverHosts};
inline constexpr MetricDef device_d_s{
    .name = "device_d_s",
    .unit = Unit::per_s,
    .kind = MetricKind::device,
    .description = "iostat -x d/s: discards the device completed per second (Linux >= 4.18)",
    .recorded_by = "all",
    .where = kHeadline | kInterval,
    .traits = kDeviceLine | kSummedOverHosts};
inline constexpr MetricDef device_f_s{
    .name = "device_f_s",
    .unit = Unit::per_s,
    .kind = MetricKind::device,
    .description = "iostat -x f/s: flush requests the device completed per second (Linux >= 5.5)",
    .recorded_by = "all",
    .where = kHeadline | kInterval,
    .traits = kDeviceLine | kSummedOverHosts};
inline constexpr MetricDef device_rmb_s{
    .name = "device_rmb_s",
    .unit = Unit::mb_s,
    .kind = MetricKind::device,
    .description = "device bytes read per second, MB = 10^6 bytes (iostat -m's rMB/s is MiB: x 0.9537)",
    .recorded_by = "all",
    .where = kHeadline | kInterval,
    .traits = kDeviceLine | kSummedOverHosts};
inline constexpr MetricDef device_wmb_s{
    .name = "device_wmb_s",
    .unit = Unit::mb_s,
    .kind = MetricKind::device,
    .description = "device bytes written per second, MB = 10^6 bytes (iostat -m's wMB/s is MiB: x 0.9537)",
    .recorded_by = "all",
    .where = kHeadline | kInterval,
    .traits = kDeviceLine | kSummedOverHosts};
inline constexpr MetricDef device_rrqm_s{.name = "device_rrqm_s",
                                         .unit = Unit::per_s,
                                         .kind = MetricKind::device,
                                         .description = "iostat -x rrqm/s: read requests merged per second",
                                         .recorded_by = "all",
                                         .where = kHeadline | kInterval,
                                         .traits = kDeviceLine | kSummedOverHosts};
inline constexpr MetricDef device_wrqm_s{.name = "device_wrqm_s",
                                         .unit = Unit::per_s,
                                         .kind = MetricKind::device,
                                         .description = "iostat -x wrqm/s: write requests merged per second",
                                         .recorded_by = "all",
                                         .where = kHeadline | kInterval,
                                         .traits = kDeviceLine | kSummedOverHosts};
inline constexpr MetricDef device_rareq_bytes{.name = "device_rareq_bytes",
                                              .unit = Unit::bytes,
                                              .kind = MetricKind::device,
                                              .description = "iostat -x rareq-sz in bytes: average read request size",
                                              .recorded_by = "all",
                                              .where = kHeadline | kInterval,
                                              .traits = kDeviceLine,
                                              .merge = HostMerge::per_host};
inline constexpr MetricDef device_wareq_bytes{.name = "device_wareq_bytes",
                                              .unit = Unit::bytes,
                                              .kind = MetricKind::device,
                                              .description = "iostat -x wareq-sz in bytes: average write request size",
                                              .recorded_by = "all",
                                              .where = kHeadline | kInterval,
                                              .traits = kDeviceLine,
                                              .merge = HostMerge::per_host};
inline constexpr MetricDef device_r_await_ms{
    .name = "device_r_await_ms",
    .unit = Unit::ms,
    .kind = MetricKind::device,
    .description = "iostat -x r_await: average time of a read, queued and served",
    .recorded_by = "all",
    .where = kHeadline | kInterval,
    .traits = kDeviceLine,
    .merge = HostMerge::per_host};
inline constexpr MetricDef device_w_await_ms{
    .name = "device_w_await_ms",
    .unit = Unit::ms,
    .kind = MetricKind::device,
    .description = "iostat -x w_await: average time of a write, queued and served",
    .recorded_by = "all",
    .where = kHeadline | kInterval,
    .traits = kDeviceLine,
    .merge = HostMerge::per_host};
inline constexpr MetricDef device_f_await_ms{
    .name = "device_f_await_ms",
    .unit = Unit::ms,
    .kind = MetricKind::device,
    .description = "iostat -x f_await: average time of a flush request (Linux >= 5.5)",
    .recorded_by = "all",
    .where = kHeadline | kInterval,
    .traits = kDeviceLine,
    .merge = HostMerge::per_host};
inline constexpr MetricDef device_aqu_sz{
    .name = "device_aqu_sz",
    .unit = Unit::none,
    .kind = MetricKind::device,
    .description = "iostat -x aqu-sz: average number of requests queued or in service",
    .recorded_by = "all",
    .where = kHeadline | kInterval,
    .traits = kDeviceLine,
    .merge = HostMerge::per_host};
inline constexpr MetricDef device_util_pct{.name = "device_util_pct",
                                           .unit = Unit::pct,
                                           .kind = MetricKind::device,
                                           .description =
                                               "iostat -x %util: share of time with a request in flight; no saturation "
                                               "figure for NVMe, RAID, dm or loop devices",
                                           .recorded_by = "all",
                                           .where = kHeadline | kInterval,
                                           .traits = kDeviceLine,
                                           .merge = HostMerge::per_host};
inline constexpr MetricDef device_read_ios{
    .name = "device_read_ios",
    .unit = Unit::count,
    .kind = MetricKind::device,
    .description = "reads the target's block device completed over the measured phase (/sys/block stat)",
    .recorded_by = "all",
    .where = kHeadline,
    .traits = kDeviceLine};
inline constexpr MetricDef device_write_ios{
    .name = "device_write_ios",
    .unit = Unit::count,
    .kind = MetricKind::device,
    .description = "writes the target's block device completed over the measured phase (/sys/block stat)",
    .recorded_by = "all",
    .where = kHeadline,
    .traits = kDeviceLine};
inline constexpr MetricDef device_flush_ios{
    .name = "device_flush_ios",
    .unit = Unit::count,
    .kind = MetricKind::device,
    .description = "flush requests the target's block device completed over the measured phase (Linux >= 5.5)",
    .recorded_by = "all",
    .where = kHeadline,
    .traits = kDeviceLine};
inline constexpr MetricDef host_cpu_user_pct{
    .name = "host_cpu_user_pct",
    .unit = Unit::pct,
    .kind = MetricKind::cpu,
    .description = "host CPU in user mode (user + nice), percent of all CPUs (/proc/stat)",
    .recorded_by = "all",
    .where = kHeadline | kInterval,
    .traits = kDeviceLine,
    .merge = HostMerge::per_host};
inline constexpr MetricDef host_cpu_system_pct{
    .name = "host_cpu_system_pct",
    .unit = Unit::pct,
    .kind = MetricKind::cpu,
    .description = "host CPU in the kernel, percent of all CPUs (/proc/stat)",
    .recorded_by = "all",
    .where = kHeadline | kInterval,
    .traits = kDeviceLine,
    .merge = HostMerge::per_host};
inline constexpr MetricDef host_cpu_iowait_pct{
    .name = "host_cpu_iowait_pct",
    .unit = Unit::pct,
    .kind = MetricKind::cpu,
    .description = "host CPU idle with I/O outstanding, percent of all CPUs (/proc/stat)",
    .recorded_by = "all",
    .where = kHeadline | kInterval,
    .traits = kDeviceLine,
    .merge = HostMerge::per_host};
inline constexpr MetricDef host_cpu_steal_pct{
    .name = "host_cpu_steal_pct",
    .unit = Unit::pct,
    .kind = MetricKind::cpu,
    .description = "host CPU taken by the hypervisor, percent of all CPUs (/proc/stat)",
    .recorded_by = "all",
    .where = kHeadline | kInterval,
    .traits = kDeviceLine,
    .merge = HostMerge::per_host};
inline constexpr MetricDef host_cpu_irq_pct{
    .name = "host_cpu_irq_pct",
    .unit = Unit::pct,
    .kind = MetricKind::cpu,
    .description = "host CPU serving interrupts (irq + softirq), percent of all CPUs (/proc/stat)",
    .recorded_by = "all",
    .where = kHeadline | kInterval,
    .traits = kDeviceLine,
    .merge = HostMerge::per_host};
inline constexpr MetricDef host_psi_io_some_pct{
    .name = "host_psi_io_some_pct",
    .unit = Unit::pct,
    .kind = MetricKind::device,
    .description = "share of time some task stalled on I/O (/proc/pressure/io)",
    .recorded_by = "all",
    .where = kHeadline | kInterval,
    .traits = kDeviceLine,
    .merge = HostMerge::per_host};
inline constexpr MetricDef host_psi_io_full_pct{
    .name = "host_psi_io_full_pct",
    .unit = Unit::pct,
    .kind = MetricKind::device,
    .description = "share of time all non-idle tasks stalled on I/O (/proc/pressure/io)",
    .recorded_by = "all",
    .where = kHeadline | kInterval,
    .traits = kDeviceLine,
    .merge = HostMerge::per_host};
inline constexpr MetricDef host_psi_memory_some_pct{
    .name = "host_psi_memory_some_pct",
    .unit = Unit::pct,
    .kind = MetricKind::device,
    .description = "share of time some task stalled on memory (/proc/pressure/memory)",
    .recorded_by = "all",
    .where = kHeadline | kInterval,
    .traits = kDeviceLine,
    .merge = HostMerge::per_host};
inline constexpr MetricDef host_psi_memory_full_pct{
    .name = "host_psi_memory_full_pct",
    .unit = Unit::pct,
    .kind = MetricKind::device,
    .description = "share of time all non-idle tasks stalled on memory (/proc/pressure/memory)",
    .recorded_by = "all",
    .where = kHeadline | kInterval,
    .traits = kDeviceLine,
    .merge = HostMerge::per_host};
inline constexpr MetricDef device_read_bytes_per_txn{
    .name = "device_read_bytes_per_txn",
    .unit = Unit::bytes,
    .kind = MetricKind::device,
    .description = "device bytes read over the measured phase per transaction (transactions)",
    .recorded_by = "tpcc sysbench",
    .where = kHeadline,
    .traits = kDeviceLine,
    .merge = HostMerge::per_host};
inline constexpr MetricDef device_read_ios_per_txn{
    .name = "device_read_ios_per_txn",
    .unit = Unit::ratio,
    .kind = MetricKind::device,
    .description = "device reads over the measured phase per transaction (transactions)",
    .recorded_by = "tpcc sysbench",
    .where = kHeadline,
    .traits = kDeviceLine,
    .merge = HostMerge::per_host};
inline constexpr MetricDef device_write_bytes_per_txn{
    .name = "device_write_bytes_per_txn",
    .unit = Unit::bytes,
    .kind = MetricKind::device,
    .description = "device bytes written over the measured phase per transaction (transactions)",
    .recorded_by = "tpcc sysbench",
    .where = kHeadline,
    .traits = kDeviceLine,
    .merge = HostMerge::per_host};
inline constexpr MetricDef device_write_ios_per_txn{
    .name = "device_write_ios_per_txn",
    .unit = Unit::ratio,
    .kind = MetricKind::device,
    .description = "device writes over the measured phase per transaction (transactions)",
    .recorded_by = "tpcc sysbench",
    .where = kHeadline,
    .traits = kDeviceLine,
    .merge = HostMerge::per_host};
inline constexpr MetricDef device_flush_ios_per_txn{
    .name = "device_flush_ios_per_txn",
    .unit = Unit::ratio,
    .kind = MetricKind::device,
    .description = "device flush requests over the measured phase per transaction (transactions)",
    .recorded_by = "tpcc sysbench",
    .where = kHeadline,
    .traits = kDeviceLine,
    .merge = HostMerge::per_host};
inline constexpr MetricDef device_read_bytes_per_new_order{
    .name = "device_read_bytes_per_new_order",
    .unit = Unit::bytes,
    .kind = MetricKind::device,
    .description = "device bytes read over the measured phase per New-Order (new_orders)",
    .recorded_by = "tpcc",
    .where = kHeadline,
    .traits = kDeviceLine,
    .merge = HostMerge::per_host};
inline constexpr MetricDef device_read_ios_per_new_order{
    .name = "device_read_ios_per_new_order",
    .unit = Unit::ratio,
    .kind = MetricKind::device,
    .description = "device reads over the measured phase per New-Order (new_orders)",
    .recorded_by = "tpcc",
    .where = kHeadline,
    .traits = kDeviceLine,
    .merge = HostMerge::per_host};
inline constexpr MetricDef device_write_bytes_per_new_order{
    .name = "device_write_bytes_per_new_order",
    .unit = Unit::bytes,
    .kind = MetricKind::device,
    .description = "device bytes written over the measured phase per New-Order (new_orders)",
    .recorded_by = "tpcc",
    .where = kHeadline,
    .traits = kDeviceLine,
    .merge = HostMerge::per_host};
inline constexpr MetricDef device_write_ios_per_new_order{
    .name = "device_write_ios_per_new_order",
    .unit = Unit::ratio,
    .kind = MetricKind::device,
    .description = "device writes over the measured phase per New-Order (new_orders)",
    .recorded_by = "tpcc",
    .where = kHeadline,
    .traits = kDeviceLine,
    .merge = HostMerge::per_host};
inline constexpr MetricDef device_flush_ios_per_new_order{
    .name = "device_flush_ios_per_new_order",
    .unit = Unit::ratio,
    .kind = MetricKind::device,
    .description = "device flush requests over the measured phase per New-Order (new_orders)",
    .recorded_by = "tpcc",
    .where = kHeadline,
    .traits = kDeviceLine,
    .merge = HostMerge::per_host};
inline constexpr MetricDef device_read_ios_per_io{
    .name = "device_read_ios_per_io",
    .unit = Unit::ratio,
    .kind = MetricKind::device,
    .description = "device reads per application I/O (ios) over the measured phase",
    .recorded_by = "io vdbench replay vdi",
    .where = kHeadline,
    .traits = kDeviceLine,
    .merge = HostMerge::per_host};
inline constexpr MetricDef device_write_ios_per_io{
    .name = "device_write_ios_per_io",
    .unit = Unit::ratio,
    .kind = MetricKind::device,
    .description = "device writes per application I/O (ios) over the measured phase",
    .recorded_by = "io vdbench replay vdi",
    .where = kHeadline,
    .traits = kDeviceLine,
    .merge = HostMerge::per_host};
inline constexpr MetricDef device_read_bytes_per_byte{
    .name = "device_read_bytes_per_byte",
    .unit = Unit::ratio,
    .kind = MetricKind::device,
    .description = "device bytes read per application byte over the measured phase (device-level read amplification)",
    .recorded_by = "io vdbench replay vdi",
    .where = kHeadline,
    .traits = kDeviceLine,
    .merge = HostMerge::per_host};
inline constexpr MetricDef device_write_bytes_per_byte{
    .name = "device_write_bytes_per_byte",
    .unit = Unit::ratio,
    .kind = MetricKind::device,
    .description =
        "device bytes written per application byte over the measured phase (device-level write amplification)",
    .recorded_by = "io vdbench replay vdi",
    .where = kHeadline,
    .traits = kDeviceLine,
    .merge = HostMerge::per_host};
inline constexpr MetricDef device_read_bytes_per_frame{
    .name = "device_read_bytes_per_frame",
    .unit = Unit::bytes,
    .kind = MetricKind::device,
    .description = "device bytes read over the measured phase per frame read or written",
    .recorded_by = "video",
    .where = kHeadline,
    .traits = kDeviceLine,
    .merge = HostMerge::per_host};
inline constexpr MetricDef device_write_bytes_per_frame{
    .name = "device_write_bytes_per_frame",
    .unit = Unit::bytes,
    .kind = MetricKind::device,
    .description = "device bytes written over the measured phase per frame read or written",
    .recorded_by = "video",
    .where = kHeadline,
    .traits = kDeviceLine,
    .merge = HostMerge::per_host};
// A drive's temperature during the measured phase (telemetry/drive_temperature.hpp): the kernel's
// hwmon sensor of each drive under the target, read at the interval boundaries. Kept per host in a
// merge: each host's drives are its own.
inline constexpr MetricDef drive_temp_c{
    .name = "drive_temp_c",
    .unit = Unit::celsius,
    .kind = MetricKind::device,
    .description =
        "composite temperature of the hottest drive under the target at the interval's end (hwmon: NVMe "
        "Composite, SATA drivetemp)",
    .recorded_by = "all",
    .where = kInterval,
    .traits = kDeviceLine,
    .merge = HostMerge::per_host};
inline constexpr MetricDef drive_temp_max_c{
    .name = "drive_temp_max_c",
    .unit = Unit::celsius,
    .kind = MetricKind::device,
    .description =
        "highest composite temperature of a drive under the target sampled during the measured phase (hwmon)",
    .recorded_by = "all",
    .where = kHeadline,
    .traits = kDeviceLine,
    .merge = HostMerge::per_host};
inline constexpr MetricDef drive_temp_warning_s{
    .name = "drive_temp_warning_s",
    .unit = Unit::s,
    .kind = MetricKind::device,
    .description =
        "longest time a drive under the target spent at or above its warning temperature (NVMe WCTEMP) "
        "during the measured phase, linear between samples",
    .recorded_by = "all",
    .where = kHeadline,
    .traits = kDeviceLine,
    .merge = HostMerge::per_host};

}  // namespace drivelab::results::catalogue
