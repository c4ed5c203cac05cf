#pragma once
/// \file catalogue/resources.hpp
/// The metric catalogue's declarations (results/catalogue.hpp): CPU and memory, time and the render phases, device and
/// server counters, within-run confidence, health, settings and progress. Included by catalogue.hpp, which lists every
/// declaration in kAll; include catalogue.hpp, not this file.
#include "drivelab/results/catalogue/latency.hpp"

namespace drivelab::results::catalogue {

// ---- CPU and memory ----------------------------------------------------------------------------
inline constexpr MetricDef cpu_usr_pct = metric("cpu_usr_pct", Unit::pct, MetricKind::cpu, kHeadline | kGroup,
                                                "io vdbench", "user CPU time / measured time, percent of one core");
inline constexpr MetricDef cpu_sys_pct = metric("cpu_sys_pct", Unit::pct, MetricKind::cpu, kHeadline | kGroup,
                                                "io vdbench", "system CPU time / measured time, percent of one core");
inline constexpr MetricDef cpu_jobs_usr_pct = metric("cpu_jobs_usr_pct", Unit::pct, MetricKind::cpu, kHeadline, "io",
                                                     "user CPU of the I/O threads only, percent of one core");
inline constexpr MetricDef cpu_jobs_sys_pct = metric("cpu_jobs_sys_pct", Unit::pct, MetricKind::cpu, kHeadline, "io",
                                                     "system CPU of the I/O threads only, percent of one core");
inline constexpr MetricDef cpu_usr_s = metric("cpu_usr_s", Unit::s, MetricKind::cpu, kGroup, "vdbench",
                                              "process user CPU during the point", {.merge = HostMerge::sum});
inline constexpr MetricDef cpu_sys_s = metric("cpu_sys_s", Unit::s, MetricKind::cpu, kGroup, "vdbench",
                                              "process system CPU during the point", {.merge = HostMerge::sum});
inline constexpr MetricDef driver_cpu_pct =
    metric("driver_cpu_pct", Unit::pct, MetricKind::cpu, kHeadline, "tpcc",
           "CPU of the drivelab process (user + system) during the measured phase, % of one core");
inline constexpr MetricDef driver_rss_peak_mib =
    metric("driver_rss_peak_mib", Unit::mib, MetricKind::memory, kHeadline, "tpcc",
           "peak resident memory of the drivelab process (VmHWM)", {.merge = HostMerge::per_host});

// ---- time --------------------------------------------------------------------------------------
inline constexpr MetricDef seconds =
    time_taken("seconds", Unit::s, MetricKind::time, kHeadline | kGroup, "precondition render",
               "time of the passes (precondition) or of a phase (render)");
inline constexpr MetricDef measured_s = metric("measured_s", Unit::s, MetricKind::time, kGroup, "vdbench tpcc sysbench",
                                               "measured time of the curve point");
inline constexpr MetricDef elapsed_s = metric("elapsed_s", Unit::s, MetricKind::time, kGroup, "replay vdi",
                                              "first submission to last completion of the replay");
inline constexpr MetricDef total_time_s = metric("total_time_s", Unit::s, MetricKind::time, kHeadline, "sysbench",
                                                 "measured time (sysbench's \"total time\")");
inline constexpr MetricDef execution_time_avg_s =
    metric("execution_time_avg_s", Unit::s, MetricKind::time, kGroup, "sysbench",
           "execution time per thread, mean (threads fairness)");
inline constexpr MetricDef execution_time_stddev_s =
    metric("execution_time_stddev_s", Unit::s, MetricKind::time, kGroup, "sysbench",
           "execution time per thread, standard deviation");
inline constexpr MetricDef total_s =
    time_taken("total_s", Unit::s, MetricKind::time, kHeadline, "render", "seconds to finish the phases that ran");
inline constexpr MetricDef baseline_total_s = time_taken("baseline_total_s", Unit::s, MetricKind::time, kHeadline,
                                                         "render", "the same phases in RAM (mode none)");
// The render pipeline's phases (render/pipeline.hpp kPhaseNames), headline and group `baseline`.
inline constexpr MetricDef load_s =
    time_taken("load_s", Unit::s, MetricKind::time, kHeadline | kGroup, "render", "render phase 1, load");
inline constexpr MetricDef unpack_s =
    time_taken("unpack_s", Unit::s, MetricKind::time, kHeadline | kGroup, "render", "render phase 2, unpack");
inline constexpr MetricDef process_s =
    time_taken("process_s", Unit::s, MetricKind::time, kHeadline | kGroup, "render", "render phase 3, process");
inline constexpr MetricDef repack_s =
    time_taken("repack_s", Unit::s, MetricKind::time, kHeadline | kGroup, "render", "render phase 4, repack");
inline constexpr MetricDef write_s =
    time_taken("write_s", Unit::s, MetricKind::time, kHeadline | kGroup, "render", "render phase 5, write");
inline constexpr MetricDef slowdown_vs_ram =
    time_taken("slowdown_vs_ram", Unit::ratio, MetricKind::time, kHeadline, "render", "total_s / baseline_total_s");

// ---- device and server counters ----------------------------------------------------------------
inline constexpr MetricDef swap_out_bytes =
    metric("swap_out_bytes", Unit::bytes, MetricKind::device, kHeadline, "render",
           "pages swapped out (host-wide, /proc/vmstat pswpout) x 4 KiB");
inline constexpr MetricDef swap_in_bytes = metric("swap_in_bytes", Unit::bytes, MetricKind::device, kHeadline, "render",
                                                  "pages swapped in (host-wide, /proc/vmstat pswpin) x 4 KiB");
inline constexpr MetricDef major_faults = metric("major_faults", Unit::count, MetricKind::device, kHeadline | kGroup,
                                                 "render", "major page faults of the drivelab process");
inline constexpr MetricDef host_major_faults =
    metric("host_major_faults", Unit::count, MetricKind::device, kGroup, "render",
           "major page faults host-wide (/proc/vmstat pgmajfault)");
inline constexpr MetricDef pswpin_pages =
    metric("pswpin_pages", Unit::pages, MetricKind::device, kGroup, "render", "/proc/vmstat pswpin, 4 KiB pages");
inline constexpr MetricDef pswpout_pages =
    metric("pswpout_pages", Unit::pages, MetricKind::device, kGroup, "render", "/proc/vmstat pswpout, 4 KiB pages");
inline constexpr MetricDef device_read_bytes =
    metric("device_read_bytes", Unit::bytes, MetricKind::device, kHeadline | kGroup, "all render",
           "bytes the target's block device read over the measured phase (diskstats; render: per phase too)",
           {.traits = kDeviceLine});
inline constexpr MetricDef device_write_bytes =
    metric("device_write_bytes", Unit::bytes, MetricKind::device, kHeadline | kGroup, "all render",
           "bytes the target's block device wrote over the measured phase (diskstats; render: per phase too)",
           {.traits = kDeviceLine});
inline constexpr MetricDef swap_in_mb_s =
    metric("swap_in_mb_s", Unit::mb_s, MetricKind::device, kInterval, "render",
           "swap-in per second of the phase, MB = 10^6 bytes", {.traits = kSummedOverHosts});
inline constexpr MetricDef swap_out_mb_s =
    metric("swap_out_mb_s", Unit::mb_s, MetricKind::device, kInterval, "render",
           "swap-out per second of the phase, MB = 10^6 bytes", {.traits = kSummedOverHosts});
inline constexpr MetricDef device_read_mb_s =
    metric("device_read_mb_s", Unit::mb_s, MetricKind::device, kInterval, "render",
           "device reads per second of the phase, MB = 10^6 bytes", {.traits = kBytesFeed | kSummedOverHosts});
inline constexpr MetricDef device_write_mb_s =
    metric("device_write_mb_s", Unit::mb_s, MetricKind::device, kInterval, "render",
           "device writes per second of the phase, MB = 10^6 bytes", {.traits = kBytesFeed | kSummedOverHosts});
// The database server's counters over the measured phase (tpcc, PostgreSQL and MariaDB/MySQL).
inline constexpr MetricDef server_blks_read = server_counter(
    "server_blks_read", Unit::count, "PostgreSQL: blocks read from outside shared buffers (pg_stat_database)");
inline constexpr MetricDef server_blks_hit =
    server_counter("server_blks_hit", Unit::count, "PostgreSQL: blocks found in shared buffers (pg_stat_database)");
inline constexpr MetricDef server_commits =
    server_counter("server_commits", Unit::count,
                   "committed transactions the server counted (PostgreSQL xact_commit, MySQL/MariaDB Com_commit)");
inline constexpr MetricDef server_wal_bytes =
    server_counter("server_wal_bytes", Unit::bytes, "PostgreSQL: WAL written (pg_stat_wal)");
inline constexpr MetricDef server_innodb_data_reads =
    server_counter("server_innodb_data_reads", Unit::count, "InnoDB: data file reads (SHOW GLOBAL STATUS)");
inline constexpr MetricDef server_innodb_data_writes =
    server_counter("server_innodb_data_writes", Unit::count, "InnoDB: data file writes");
inline constexpr MetricDef server_innodb_data_read_bytes =
    server_counter("server_innodb_data_read_bytes", Unit::bytes, "InnoDB: bytes read from data files");
inline constexpr MetricDef server_innodb_data_written_bytes =
    server_counter("server_innodb_data_written_bytes", Unit::bytes, "InnoDB: bytes written to data files");
inline constexpr MetricDef server_innodb_data_fsyncs =
    server_counter("server_innodb_data_fsyncs", Unit::count, "InnoDB: fsync() calls");

// ---- within-run confidence (issue 32: results/record_stats.hpp within_run_confidence) ----------
// A test's 95% confidence interval of its mean rate by batch means over its intervals: within-run
// noise only (docs/results.md "Repetitions"). A bound of one host's interval is not a bound of
// the hosts' sum: per host only in a merge.
inline constexpr MetricDef iops_ci95_low = rate_bound(
    "iops_ci95_low", "io vdbench replay vdi", "IOPS",
    "within-run 95% confidence interval of the mean IOPS, low bound (batch means over the intervals; within-run "
    "noise only)");
inline constexpr MetricDef iops_ci95_high =
    rate_bound("iops_ci95_high", "io vdbench replay vdi", "IOPS",
               "within-run 95% confidence interval of the mean IOPS, high bound");
inline constexpr MetricDef tps_ci95_low = rate_bound(
    "tps_ci95_low", "tpcc sysbench", "TPS",
    "within-run 95% confidence interval of the mean TPS, low bound (batch means over the intervals; within-run "
    "noise only)");
inline constexpr MetricDef tps_ci95_high = rate_bound("tps_ci95_high", "tpcc sysbench", "TPS",
                                                      "within-run 95% confidence interval of the mean TPS, high bound");
inline constexpr MetricDef rate_ci95_half_width_pct =
    confidence_figure("rate_ci95_half_width_pct", Unit::pct, MetricKind::health,
                      "half-width of the within-run 95% interval of the mean rate, % of the mean (the goal: 2)");
inline constexpr MetricDef batch_means_lag1 = confidence_figure(
    "batch_means_lag1", Unit::ratio, MetricKind::health,
    "lag-1 autocorrelation of the batch means the within-run interval is taken over (below 0.2: independent enough)");
inline constexpr MetricDef batch_means_batches = confidence_figure(
    "batch_means_batches", Unit::count, MetricKind::count, "batches of intervals the within-run interval is over");

// ---- health ------------------------------------------------------------------------------------
inline constexpr MetricDef efficiency_pct =
    metric("efficiency_pct", Unit::pct, MetricKind::health, kHeadline, "tpcc", "tpm_c / (12.86 x warehouses)");
inline constexpr MetricDef ss_attained =
    metric("ss_attained", Unit::boolean, MetricKind::health, kGroup, "vdbench", "steady state reached");
inline constexpr MetricDef ss_value =
    metric("ss_value", Unit::pct, MetricKind::health, kGroup, "vdbench",
           "steady-state criterion value of the last full window (% for a percent criterion, else a plain number)",
           {.other_unit = Unit::none});
inline constexpr MetricDef complete =
    metric("complete", Unit::boolean, MetricKind::health, kGroup, "replay vdi", "the whole trace was replayed");
inline constexpr MetricDef stopped_by_stopcurve = metric("stopped_by_stopcurve", Unit::boolean, MetricKind::health,
                                                         kGroup, "vdbench", "the curve stopped at stopcurve");
inline constexpr MetricDef stopcurve_at_pct = metric("stopcurve_at_pct", Unit::pct, MetricKind::health, kGroup,
                                                     "vdbench", "the curve point stopcurve stopped at");
inline constexpr MetricDef achieved_pct_of_requested =
    metric("achieved_pct_of_requested", Unit::pct, MetricKind::health, kGroup, "vdbench", "achieved / requested IOPS");

// ---- settings and progress ---------------------------------------------------------------------
inline constexpr MetricDef requested_iops =
    metric("requested_iops", Unit::per_s, MetricKind::setting, kGroup | kInterval, "vdbench replay vdi",
           "the arrival rate asked for; 0 = unpaced", {.word = "IOPS", .traits = kSummedOverHosts});
inline constexpr MetricDef requested_pct =
    metric("requested_pct", Unit::pct, MetricKind::setting, kGroup, "vdbench replay vdi tpcc sysbench",
           "curve points: the rate asked for, % of the max run (or of the trace's rate)");
inline constexpr MetricDef point_pct =
    progress_value("point_pct", Unit::pct, "vdbench", "interval: the curve point being run (requested_pct)");
inline constexpr MetricDef trace_iops = metric("trace_iops", Unit::per_s, MetricKind::setting, kGroup, "replay vdi",
                                               "the trace's own rate (curve_of recorded)", {.word = "IOPS"});
inline constexpr MetricDef points_run =
    metric("points_run", Unit::count, MetricKind::progress, kGroup, "vdbench replay vdi", "curve points measured");
inline constexpr MetricDef time_scale =
    metric("time_scale", Unit::none, MetricKind::setting, kGroup, "replay vdi", "trace times were multiplied by this");
inline constexpr MetricDef threads =
    metric("threads", Unit::count, MetricKind::setting, kGroup, "vdbench", "outstanding I/O slots");
inline constexpr MetricDef read_pct =
    metric("read_pct", Unit::pct, MetricKind::setting, kGroup, "vdi", "VDI model: reads among the generated I/Os");
inline constexpr MetricDef mean_size_bytes = metric("mean_size_bytes", Unit::bytes, MetricKind::setting, kGroup, "vdi",
                                                    "VDI model: mean size of the generated I/Os");
inline constexpr MetricDef iops_per_desktop = metric("iops_per_desktop", Unit::per_s, MetricKind::setting, kGroup,
                                                     "vdi", "VDI model: generated IOPS per desktop", {.word = "IOPS"});
inline constexpr MetricDef pass =
    progress_value("pass", Unit::count, "precondition", "interval: the pass being run (1 = fill)");
inline constexpr MetricDef done_pct =
    progress_value("done_pct", Unit::pct, "precondition", "interval: share of the pass written");
inline constexpr MetricDef phase =
    progress_value("phase", Unit::count, "render", "interval: the render phase (1 load ... 5 write)");

/// Every declaration above (the families' members are added by the catalogue): the recorder
/// refuses a name not found here.

}  // namespace drivelab::results::catalogue
