#pragma once
/// \file catalogue/telemetry.hpp
/// The metric catalogue's declarations (results/catalogue.hpp) of the runner's device and host
/// telemetry (telemetry/test_telemetry.hpp, docs/telemetry.md, issue 33), recorded for every
/// test kind: the iostat -x figures of the block device that holds the target (headline metrics
/// over the measured phase, interval values per interval; the devices below it under the same
/// names in the test's details.telemetry), the host's CPU and pressure stalls, and the device's demand per unit of the
/// application's work. Included by catalogue.hpp, which lists every declaration in kAll; include
/// catalogue.hpp, not this file.
#include "drivelab/results/catalogue/declare.hpp"

namespace drivelab::results::catalogue {

inline constexpr MetricDef device_r_s =
    device_rate("device_r_s", Unit::per_s, "iostat -x r/s: reads the device completed per second");
inline constexpr MetricDef device_w_s =
    device_rate("device_w_s", Unit::per_s, "iostat -x w/s: writes the device completed per second");
inline constexpr MetricDef device_d_s =
    device_rate("device_d_s", Unit::per_s, "iostat -x d/s: discards the device completed per second (Linux >= 4.18)");
inline constexpr MetricDef device_f_s = device_rate(
    "device_f_s", Unit::per_s, "iostat -x f/s: flush requests the device completed per second (Linux >= 5.5)");
inline constexpr MetricDef device_rmb_s = device_rate(
    "device_rmb_s", Unit::mb_s, "device bytes read per second, MB = 10^6 bytes (iostat -m's rMB/s is MiB: x 0.9537)");
inline constexpr MetricDef device_wmb_s =
    device_rate("device_wmb_s", Unit::mb_s,
                "device bytes written per second, MB = 10^6 bytes (iostat -m's wMB/s is MiB: x 0.9537)");
inline constexpr MetricDef device_rrqm_s =
    device_rate("device_rrqm_s", Unit::per_s, "iostat -x rrqm/s: read requests merged per second");
inline constexpr MetricDef device_wrqm_s =
    device_rate("device_wrqm_s", Unit::per_s, "iostat -x wrqm/s: write requests merged per second");
inline constexpr MetricDef device_rareq_bytes = telemetry_gauge(
    "device_rareq_bytes", Unit::bytes, MetricKind::device, "iostat -x rareq-sz in bytes: average read request size");
inline constexpr MetricDef device_wareq_bytes = telemetry_gauge(
    "device_wareq_bytes", Unit::bytes, MetricKind::device, "iostat -x wareq-sz in bytes: average write request size");
inline constexpr MetricDef device_r_await_ms = telemetry_gauge(
    "device_r_await_ms", Unit::ms, MetricKind::device, "iostat -x r_await: average time of a read, queued and served");
inline constexpr MetricDef device_w_await_ms = telemetry_gauge(
    "device_w_await_ms", Unit::ms, MetricKind::device, "iostat -x w_await: average time of a write, queued and served");
inline constexpr MetricDef device_f_await_ms =
    telemetry_gauge("device_f_await_ms", Unit::ms, MetricKind::device,
                    "iostat -x f_await: average time of a flush request (Linux >= 5.5)");
// A plain number of requests (docs/telemetry.md): a telemetry_gauge whose word names what it counts.
inline constexpr MetricDef device_aqu_sz =
    metric("device_aqu_sz", Unit::none, MetricKind::device, kHeadline | kInterval, "all",
           "iostat -x aqu-sz: average number of requests queued or in service",
           {.word = "requests", .traits = kDeviceLine, .merge = HostMerge::per_host});
inline constexpr MetricDef device_util_pct = telemetry_gauge(
    "device_util_pct", Unit::pct, MetricKind::device,
    "iostat -x %util: share of time with a request in flight; no saturation figure for NVMe, RAID, dm or loop devices");
inline constexpr MetricDef device_read_ios = device_total(
    "device_read_ios", "reads the target's block device completed over the measured phase (/sys/block stat)");
inline constexpr MetricDef device_write_ios = device_total(
    "device_write_ios", "writes the target's block device completed over the measured phase (/sys/block stat)");
inline constexpr MetricDef device_flush_ios = device_total(
    "device_flush_ios", "flush requests the target's block device completed over the measured phase (Linux >= 5.5)");
inline constexpr MetricDef host_cpu_user_pct =
    host_cpu_share("host_cpu_user_pct", "host CPU in user mode (user + nice), percent of all CPUs (/proc/stat)");
inline constexpr MetricDef host_cpu_system_pct =
    host_cpu_share("host_cpu_system_pct", "host CPU in the kernel, percent of all CPUs (/proc/stat)");
inline constexpr MetricDef host_cpu_iowait_pct =
    host_cpu_share("host_cpu_iowait_pct", "host CPU idle with I/O outstanding, percent of all CPUs (/proc/stat)");
inline constexpr MetricDef host_cpu_steal_pct =
    host_cpu_share("host_cpu_steal_pct", "host CPU taken by the hypervisor, percent of all CPUs (/proc/stat)");
inline constexpr MetricDef host_cpu_irq_pct =
    host_cpu_share("host_cpu_irq_pct", "host CPU serving interrupts (irq + softirq), percent of all CPUs (/proc/stat)");
inline constexpr MetricDef host_psi_io_some_pct = host_pressure<"io", "I/O", Stall::some>("host_psi_io_some_pct");
inline constexpr MetricDef host_psi_io_full_pct = host_pressure<"io", "I/O", Stall::full>("host_psi_io_full_pct");
inline constexpr MetricDef host_psi_memory_some_pct =
    host_pressure<"memory", "memory", Stall::some>("host_psi_memory_some_pct");
inline constexpr MetricDef host_psi_memory_full_pct =
    host_pressure<"memory", "memory", Stall::full>("host_psi_memory_full_pct");
inline constexpr MetricDef device_read_bytes_per_txn =
    device_per_work("device_read_bytes_per_txn", Unit::bytes, "tpcc sysbench",
                    "device bytes read over the measured phase per transaction (transactions)");
inline constexpr MetricDef device_read_ios_per_txn =
    device_per_work("device_read_ios_per_txn", Unit::ratio, "tpcc sysbench",
                    "device reads over the measured phase per transaction (transactions)");
inline constexpr MetricDef device_write_bytes_per_txn =
    device_per_work("device_write_bytes_per_txn", Unit::bytes, "tpcc sysbench",
                    "device bytes written over the measured phase per transaction (transactions)");
inline constexpr MetricDef device_write_ios_per_txn =
    device_per_work("device_write_ios_per_txn", Unit::ratio, "tpcc sysbench",
                    "device writes over the measured phase per transaction (transactions)");
inline constexpr MetricDef device_flush_ios_per_txn =
    device_per_work("device_flush_ios_per_txn", Unit::ratio, "tpcc sysbench",
                    "device flush requests over the measured phase per transaction (transactions)");
inline constexpr MetricDef device_read_bytes_per_new_order =
    device_per_work("device_read_bytes_per_new_order", Unit::bytes, "tpcc",
                    "device bytes read over the measured phase per New-Order (new_orders)");
inline constexpr MetricDef device_read_ios_per_new_order =
    device_per_work("device_read_ios_per_new_order", Unit::ratio, "tpcc",
                    "device reads over the measured phase per New-Order (new_orders)");
inline constexpr MetricDef device_write_bytes_per_new_order =
    device_per_work("device_write_bytes_per_new_order", Unit::bytes, "tpcc",
                    "device bytes written over the measured phase per New-Order (new_orders)");
inline constexpr MetricDef device_write_ios_per_new_order =
    device_per_work("device_write_ios_per_new_order", Unit::ratio, "tpcc",
                    "device writes over the measured phase per New-Order (new_orders)");
inline constexpr MetricDef device_flush_ios_per_new_order =
    device_per_work("device_flush_ios_per_new_order", Unit::ratio, "tpcc",
                    "device flush requests over the measured phase per New-Order (new_orders)");
inline constexpr MetricDef device_read_ios_per_io =
    device_per_work("device_read_ios_per_io", Unit::ratio, "io vdbench replay vdi",
                    "device reads per application I/O (ios) over the measured phase");
inline constexpr MetricDef device_write_ios_per_io =
    device_per_work("device_write_ios_per_io", Unit::ratio, "io vdbench replay vdi",
                    "device writes per application I/O (ios) over the measured phase");
inline constexpr MetricDef device_read_bytes_per_byte =
    device_per_work("device_read_bytes_per_byte", Unit::ratio, "io vdbench replay vdi",
                    "device bytes read per application byte over the measured phase (device-level read amplification)");
inline constexpr MetricDef device_write_bytes_per_byte = device_per_work(
    "device_write_bytes_per_byte", Unit::ratio, "io vdbench replay vdi",
    "device bytes written per application byte over the measured phase (device-level write amplification)");
inline constexpr MetricDef device_read_bytes_per_frame =
    device_per_work("device_read_bytes_per_frame", Unit::bytes, "video",
                    "device bytes read over the measured phase per frame read (details.frames.read)");
inline constexpr MetricDef device_write_bytes_per_frame =
    device_per_work("device_write_bytes_per_frame", Unit::bytes, "video",
                    "device bytes written over the measured phase per frame written (details.frames.written)");

// A drive's temperature during the measured phase (telemetry/drive_temperature.hpp): the kernel's
// hwmon sensor of each drive under the target, read at the interval boundaries. Kept per host in a
// merge: each host's drives are its own.
inline constexpr MetricDef drive_temp_c =
    metric("drive_temp_c", Unit::celsius, MetricKind::device, kInterval, "all",
           "composite temperature of the hottest drive under the target at the interval's end (hwmon: NVMe "
           "Composite, SATA drivetemp)",
           {.traits = kDeviceLine, .merge = HostMerge::per_host});
inline constexpr MetricDef drive_temp_max_c =
    metric("drive_temp_max_c", Unit::celsius, MetricKind::device, kHeadline, "all",
           "highest composite temperature of a drive under the target sampled during the measured phase (hwmon)",
           {.traits = kDeviceLine, .merge = HostMerge::per_host});
inline constexpr MetricDef drive_temp_warning_s =
    metric("drive_temp_warning_s", Unit::s, MetricKind::device, kHeadline, "all",
           "longest time a drive under the target spent at or above its warning temperature (NVMe WCTEMP) "
           "during the measured phase, linear between samples",
           {.traits = kDeviceLine, .merge = HostMerge::per_host});

}  // namespace drivelab::results::catalogue
