#pragma once
/// \file catalogue/resources.hpp
/// The metric catalogue's declarations (results/catalogue.hpp): CPU and memory, time and the render phases, device and
/// server counters, within-run confidence, health, settings and progress. Included by catalogue.hpp, which lists every
/// declaration in kAll; include catalogue.hpp, not this file.
#include "drivelab/results/catalogue/latency.hpp"

namespace drivelab::results::catalogue {

// ---- CPU and memory ----------------------------------------------------------------------------
inline constexpr MetricDef cpu_usr_pct{.name = "cpu_usr_pct",
                                       .unit = Unit::pct,
                                       .kind = MetricKind::cpu,
                                       .description = "user CPU time / measured time, percent of one core",
                                       .recorded_by = "io vdbench",
                                       .where = kHeadline | kGroup};
inline constexpr MetricDef cpu_sys_pct{.name = "cpu_sys_pct",
                                       .unit = Unit::pct,
                                       .kind = MetricKind::cpu,
                                       .description = "system CPU time / measured time, percent of one core",
                                       .recorded_by = "io vdbench",
                                       .where = kHeadline | kGroup};
inline constexpr MetricDef cpu_jobs_usr_pct{.name = "cpu_jobs_usr_pct",
                                            .unit = Unit::pct,
                                            .kind = MetricKind::cpu,
                                            .description = "user CPU of the I/O threads only, percent of one core",
                                            .recorded_by = "io"};
inline constexpr MetricDef cpu_jobs_sys_pct{.name = "cpu_jobs_sys_pct",
                                            .unit = Unit::pct,
                                            .kind = MetricKind::cpu,
                                            .description = "system CPU of the I/O threads only, percent of one core",
                                            .recorded_by = "io"};
inline constexpr MetricDef cpu_usr_s{.name = "cpu_usr_s",
                                     .unit = Unit::s,
                                     .kind = MetricKind::cpu,
                                     .description = "process user CPU during the point",
                                     .recorded_by = "vdbench",
                                     .where = kGroup,
                                     .merge = HostMerge::sum};
inline constexpr MetricDef cpu_sys_s{.name = "cpu_sys_s",
                                     .unit = Unit::s,
                                     .kind = MetricKind::cpu,
                                     .description = "process system CPU during the point",
                                     .recorded_by = "vdbench",
                                     .where = kGroup,
                                     .merge = HostMerge::sum};
inline constexpr MetricDef driver_cpu_pct{.name = "driver_cpu_pct",
                                          .unit = Unit::pct,
                                          .kind = MetricKind::cpu,
                                          .description =
                                              "CPU of the drivelab process (user + system) during the "
                                              "measured phase, % of one core",
                                          .recorded_by = "tpcc"};
inline constexpr MetricDef driver_rss_peak_mib{.name = "driver_rss_peak_mib",
                                               .unit = Unit::mib,
                                               .kind = MetricKind::memory,
                                               .description = "peak resident memory of the drivelab process (VmHWM)",
                                               .recorded_by = "tpcc",
                                               .merge = HostMerge::per_host};

// ---- time --------------------------------------------------------------------------------------
inline constexpr MetricDef seconds{.name = "seconds",
                                   .unit = Unit::s,
                                   .kind = MetricKind::time,
                                   .better = Direction::lower,
                                   .description = "time of the passes (precondition) or of a phase (render)",
                                   .recorded_by = "precondition render",
                                   .where = kHeadline | kGroup};
inline constexpr MetricDef measured_s{.name = "measured_s",
                                      .unit = Unit::s,
                                      .kind = MetricKind::time,
                                      .description = "measured time of the curve point",
                                      .recorded_by = "vdbench tpcc sysbench",
                                      .where = kGroup};
inline constexpr MetricDef elapsed_s{.name = "elapsed_s",
                                     .unit = Unit::s,
                                     .kind = MetricKind::time,
                                     .description = "first submission to last completion of the replay",
                                     .recorded_by = "replay vdi",
                                     .where = kGroup};
inline constexpr MetricDef total_time_s{.name = "total_time_s",
                                        .unit = Unit::s,
                                        .kind = MetricKind::time,
                                        .description = "measured time (sysbench's \"total time\")",
                                        .recorded_by = "sysbench"};
inline constexpr MetricDef execution_time_avg_s{.name = "execution_time_avg_s",
                                                .unit = Unit::s,
                                                .kind = MetricKind::time,
                                                .description = "execution time per thread, mean (threads fairness)",
                                                .recorded_by = "sysbench",
                                                .where = kGroup};
inline constexpr MetricDef execution_time_stddev_s{.name = "execution_time_stddev_s",
                                                   .unit = Unit::s,
                                                   .kind = MetricKind::time,
                                                   .description = "execution time per thread, standard deviation",
                                                   .recorded_by = "sysbench",
                                                   .where = kGroup};
inline constexpr MetricDef total_s{.name = "total_s",
                                   .unit = Unit::s,
                                   .kind = MetricKind::time,
                                   .better = Direction::lower,
                                   .description = "seconds to finish the phases that ran",
                                   .recorded_by = "render"};
inline constexpr MetricDef baseline_total_s{.name = "baseline_total_s",
                                            .unit = Unit::s,
                                            .kind = MetricKind::time,
                                            .better = Direction::lower,
                                            .description = "the same phases in RAM (mode none)",
                                            .recorded_by = "render"};
// The render pipeline's phases (render/pipeline.hpp kPhaseNames), headline and group `baseline`.
inline constexpr MetricDef load_s{.name = "load_s",
                                  .unit = Unit::s,
                                  .kind = MetricKind::time,
                                  .better = Direction::lower,
                                  .description = "render phase 1, load",
                                  .recorded_by = "render",
                                  .where = kHeadline | kGroup};
inline constexpr MetricDef unpack_s{.name = "unpack_s",
                                    .unit = Unit::s,
                                    .kind = MetricKind::time,
                                    .better = Direction::lower,
                                    .description = "render phase 2, unpack",
                                    .recorded_by = "render",
                                    .where = kHeadline | kGroup};
inline constexpr MetricDef process_s{.name = "process_s",
                                     .unit = Unit::s,
                                     .kind = MetricKind::time,
                                     .better = Direction::lower,
                                     .description = "render phase 3, process",
                                     .recorded_by = "render",
                                     .where = kHeadline | kGroup};
inline constexpr MetricDef repack_s{.name = "repack_s",
                                    .unit = Unit::s,
                                    .kind = MetricKind::time,
                                    .better = Direction::lower,
                                    .description = "render phase 4, repack",
                                    .recorded_by = "render",
                                    .where = kHeadline | kGroup};
inline constexpr MetricDef write_s{.name = "write_s",
                                   .unit = Unit::s,
                                   .kind = MetricKind::time,
                                   .better = Direction::lower,
                                   .description = "render phase 5, write",
                                   .recorded_by = "render",
                                   .where = kHeadline | kGroup};
inline constexpr MetricDef slowdown_vs_ram{.name = "slowdown_vs_ram",
                                           .unit = Unit::ratio,
                                           .kind = MetricKind::time,
                                           .better = Direction::lower,
                                           .description = "total_s / baseline_total_s",
                                           .recorded_by = "render"};

// ---- device and server counters ----------------------------------------------------------------
inline constexpr MetricDef swap_out_bytes{.name = "swap_out_bytes",
                                          .unit = Unit::bytes,
                                          .kind = MetricKind::device,
                                          .description = "pages swapped out (host-wide, /proc/vmstat pswpout) x 4 KiB",
                                          .recorded_by = "render"};
inline constexpr MetricDef swap_in_bytes{.name = "swap_in_bytes",
                                         .unit = Unit::bytes,
                                         .kind = MetricKind::device,
                                         .description = "pages swapped in (host-wide, /proc/vmstat pswpin) x 4 KiB",
                                         .recorded_by = "render"};
inline constexpr MetricDef major_faults{.name = "major_faults",
                                        .unit = Unit::count,
                                        .kind = MetricKind::device,
                                        .description = "major page faults of the drivelab process",
                                        .recorded_by = "render",
                                        .where = kHeadline | kGroup};
inline constexpr MetricDef host_major_faults{.name = "host_major_faults",
                                             .unit = Unit::count,
                                             .kind = MetricKind::device,
                                             .description = "major page faults host-wide (/proc/vmstat pgmajfault)",
                                             .recorded_by = "render",
                                             .where = kGroup};
inline constexpr MetricDef pswpin_pages{.name = "pswpin_pages",
                                        .unit = Unit::pages,
                                        .kind = MetricKind::device,
                                        .description = "/proc/vmstat pswpin, 4 KiB pages",
                                        .recorded_by = "render",
                                        .where = kGroup};
inline constexpr MetricDef pswpout_pages{.name = "pswpout_pages",
                                         .unit = Unit::pages,
                                         .kind = MetricKind::device,
                                         .description = "/proc/vmstat pswpout, 4 KiB pages",
                                         .recorded_by = "render",
                                         .where = kGroup};
inline constexpr MetricDef device_read_bytes{
    .name = "device_read_bytes",
    .unit = Unit::bytes,
    .kind = MetricKind::device,
    .description = "bytes the target's block device read over the measured phase (diskstats; render: per phase too)",
    .recorded_by = "all render",
    .where = kHeadline | kGroup,
    .traits = kDeviceLine};
inline constexpr MetricDef device_write_bytes{
    .name = "device_write_bytes",
    .unit = Unit::bytes,
    .kind = MetricKind::device,
    .description = "bytes the target's block device wrote over the measured phase (diskstats; render: per phase too)",
    .recorded_by = "all render",
    .where = kHeadline | kGroup,
    .traits = kDeviceLine};
inline constexpr MetricDef swap_in_mb_s{.name = "swap_in_mb_s",
                                        .unit = Unit::mb_s,
                                        .kind = MetricKind::device,
                                        .description = "swap-in per second of the phase, MB = 10^6 bytes",
                                        .recorded_by = "render",
                                        .where = kInterval,
                                        .traits = kSummedOverHosts};
inline constexpr MetricDef swap_out_mb_s{.name = "swap_out_mb_s",
                                         .unit = Unit::mb_s,
                                         .kind = MetricKind::device,
                                         .description = "swap-out per second of the phase, MB = 10^6 bytes",
                                         .recorded_by = "render",
                                         .where = kInterval,
                                         .traits = kSummedOverHosts};
inline constexpr MetricDef device_read_mb_s{.name = "device_read_mb_s",
                                            .unit = Unit::mb_s,
                                            .kind = MetricKind::device,
                                            .description = "device reads per second of the phase, MB = 10^6 bytes",
                                            .recorded_by = "render",
                                            .where = kInterval,
                                            .traits = kBytesFeed | kSummedOverHosts};
inline constexpr MetricDef device_write_mb_s{.name = "device_write_mb_s",
                                             .unit = Unit::mb_s,
                                             .kind = MetricKind::device,
                                             .description = "device writes per second of the phase, MB = 10^6 bytes",
                                             .recorded_by = "render",
                                             .where = kInterval,
                                             .traits = kBytesFeed | kSummedOverHosts};
// The database server's counters over the measured phase (tpcc, PostgreSQL and MariaDB/MySQL).
inline constexpr MetricDef server_blks_read{.name = "server_blks_read",
                                            .unit = Unit::count,
                                            .kind = MetricKind::device,
                                            .description =
                                                "PostgreSQL: blocks read from outside shared buffers "
                                                "(pg_stat_database)",
                                            .recorded_by = "tpcc",
                                            .merge = HostMerge::server};
inline constexpr MetricDef server_blks_hit{
    .name = "server_blks_hit",
    .unit = Unit::count,
    .kind = MetricKind::device,
    .description = "PostgreSQL: blocks found in shared buffers (pg_stat_database)",
    .recorded_by = "tpcc",
    .merge = HostMerge::server};
inline constexpr MetricDef server_commits{.name = "server_commits",
                                          .unit = Unit::count,
                                          .kind = MetricKind::device,
                                          .description =
                                              "committed transactions the server counted (PostgreSQL "
                                              "xact_commit, MySQL/MariaDB Com_commit)",
                                          .recorded_by = "tpcc",
                                          .merge = HostMerge::server};
inline constexpr MetricDef server_wal_bytes{.name = "server_wal_bytes",
                                            .unit = Unit::bytes,
                                            .kind = MetricKind::device,
                                            .description = "PostgreSQL: WAL written (pg_stat_wal)",
                                            .recorded_by = "tpcc",
                                            .merge = HostMerge::server};
inline constexpr MetricDef server_innodb_data_reads{.name = "server_innodb_data_reads",
                                                    .unit = Unit::count,
                                                    .kind = MetricKind::device,
                                                    .description = "InnoDB: data file reads (SHOW GLOBAL STATUS)",
                                                    .recorded_by = "tpcc",
                                                    .merge = HostMerge::server};
inline constexpr MetricDef server_innodb_data_writes{.name = "server_innodb_data_writes",
                                                     .unit = Unit::count,
                                                     .kind = MetricKind::device,
                                                     .description = "InnoDB: data file writes",
                                                     .recorded_by = "tpcc",
                                                     .merge = HostMerge::server};
inline constexpr MetricDef server_innodb_data_read_bytes{.name = "server_innodb_data_read_bytes",
                                                         .unit = Unit::bytes,
                                                         .kind = MetricKind::device,
                                                         .description = "InnoDB: bytes read from data files",
                                                         .recorded_by = "tpcc",
                                                         .merge = HostMerge::server};
inline constexpr MetricDef server_innodb_data_written_bytes{.name = "server_innodb_data_written_bytes",
                                                            .unit = Unit::bytes,
                                                            .kind = MetricKind::device,
                                                            .description = "InnoDB: bytes written to data files",
                                                            .recorded_by = "tpcc",
                                                            .merge = HostMerge::server};
inline constexpr MetricDef server_innodb_data_fsyncs{.name = "server_innodb_data_fsyncs",
                                                     .unit = Unit::count,
                                                     .kind = MetricKind::device,
                                                     .description = "InnoDB: fsync() calls",
                                                     .recorded_by = "tpcc",
                                                     .merge = HostMerge::server};

// ---- within-run confidence (issue 32: results/record_stats.hpp within_run_confidence) ----------
// A test's 95% confidence interval of its mean rate by batch means over its intervals: within-run
// noise only (docs/results.md "Repetitions"). A bound of one host's interval is not a bound of
// the hosts' sum: per host only in a merge.
inline constexpr MetricDef iops_ci95_low{.name = "iops_ci95_low",
                                         .unit = Unit::per_s,
                                         .kind = MetricKind::operations,
                                         .description =
                                             "within-run 95% confidence interval of the mean IOPS, low bound "
                                             "(batch means over the intervals; within-run noise only)",
                                         .recorded_by = "io vdbench replay vdi",
                                         .word = "IOPS",
                                         .merge = HostMerge::per_host};
inline constexpr MetricDef iops_ci95_high{
    .name = "iops_ci95_high",
    .unit = Unit::per_s,
    .kind = MetricKind::operations,
    .description = "within-run 95% confidence interval of the mean IOPS, high bound",
    .recorded_by = "io vdbench replay vdi",
    .word = "IOPS",
    .merge = HostMerge::per_host};
inline constexpr MetricDef tps_ci95_low{.name = "tps_ci95_low",
                                        .unit = Unit::per_s,
                                        .kind = MetricKind::operations,
                                        .description =
                                            "within-run 95% confidence interval of the mean TPS, low bound (batch "
                                            "means over the intervals; within-run noise only)",
                                        .recorded_by = "tpcc sysbench",
                                        .word = "TPS",
                                        .merge = HostMerge::per_host};
inline constexpr MetricDef tps_ci95_high{
    .name = "tps_ci95_high",
    .unit = Unit::per_s,
    .kind = MetricKind::operations,
    .description = "within-run 95% confidence interval of the mean TPS, high bound",
    .recorded_by = "tpcc sysbench",
    .word = "TPS",
    .merge = HostMerge::per_host};
inline constexpr MetricDef rate_ci95_half_width_pct{
    .name = "rate_ci95_half_width_pct",
    .unit = Unit::pct,
    .kind = MetricKind::health,
    .description = "half-width of the within-run 95% interval of the mean rate, % of the mean (the goal: 2)",
    .recorded_by = "io vdbench replay vdi tpcc sysbench",
    .merge = HostMerge::per_host};
inline constexpr MetricDef batch_means_lag1{
    .name = "batch_means_lag1",
    .unit = Unit::ratio,
    .kind = MetricKind::health,
    .description =
        "lag-1 autocorrelation of the batch means the within-run interval is taken over (below 0.2: "
        "independent enough)",
    .recorded_by = "io vdbench replay vdi tpcc sysbench",
    .merge = HostMerge::per_host};
inline constexpr MetricDef batch_means_batches{.name = "batch_means_batches",
                                               .unit = Unit::count,
                                               .kind = MetricKind::count,
                                               .description = "batches of intervals the within-run interval is over",
                                               .recorded_by = "io vdbench replay vdi tpcc sysbench",
                                               .merge = HostMerge::per_host};

// ---- health ------------------------------------------------------------------------------------
inline constexpr MetricDef efficiency_pct{.name = "efficiency_pct",
                                          .unit = Unit::pct,
                                          .kind = MetricKind::health,
                                          .description = "tpm_c / (12.86 x warehouses)",
                                          .recorded_by = "tpcc"};
inline constexpr MetricDef ss_attained{.name = "ss_attained",
                                       .unit = Unit::boolean,
                                       .kind = MetricKind::health,
                                       .description = "steady state reached",
                                       .recorded_by = "vdbench",
                                       .where = kGroup};
inline constexpr MetricDef ss_value{.name = "ss_value",
                                    .unit = Unit::pct,
                                    .kind = MetricKind::health,
                                    .description =
                                        "steady-state criterion value of the last full window (% for "
                                        "a percent criterion, else a plain number)",
                                    .recorded_by = "vdbench",
                                    .where = kGroup,
                                    .other_unit = Unit::none};
inline constexpr MetricDef complete{.name = "complete",
                                    .unit = Unit::boolean,
                                    .kind = MetricKind::health,
                                    .description = "the whole trace was replayed",
                                    .recorded_by = "replay vdi",
                                    .where = kGroup};
inline constexpr MetricDef stopped_by_stopcurve{.name = "stopped_by_stopcurve",
                                                .unit = Unit::boolean,
                                                .kind = MetricKind::health,
                                                .description = "the curve stopped at stopcurve",
                                                .recorded_by = "vdbench",
                                                .where = kGroup};
inline constexpr MetricDef stopcurve_at_pct{.name = "stopcurve_at_pct",
                                            .unit = Unit::pct,
                                            .kind = MetricKind::health,
                                            .description = "the curve point stopcurve stopped at",
                                            .recorded_by = "vdbench",
                                            .where = kGroup};
inline constexpr MetricDef achieved_pct_of_requested{.name = "achieved_pct_of_requested",
                                                     .unit = Unit::pct,
                                                     .kind = MetricKind::health,
                                                     .description = "achieved / requested IOPS",
                                                     .recorded_by = "vdbench",
                                                     .where = kGroup};

// ---- settings and progress ---------------------------------------------------------------------
inline constexpr MetricDef requested_iops{.name = "requested_iops",
                                          .unit = Unit::per_s,
                                          .kind = MetricKind::setting,
                                          .description = "the arrival rate asked for; 0 = unpaced",
                                          .recorded_by = "vdbench replay vdi",
                                          .where = kGroup | kInterval,
                                          .word = "IOPS",
                                          .traits = kSummedOverHosts};
inline constexpr MetricDef requested_pct{.name = "requested_pct",
                                         .unit = Unit::pct,
                                         .kind = MetricKind::setting,
                                         .description =
                                             "curve points: the rate asked for, % of the max run (or of "
                                             "the trace's rate)",
                                         .recorded_by = "vdbench replay vdi tpcc sysbench",
                                         .where = kGroup};
inline constexpr MetricDef point_pct{.name = "point_pct",
                                     .unit = Unit::pct,
                                     .kind = MetricKind::progress,
                                     .description = "interval: the curve point being run (requested_pct)",
                                     .recorded_by = "vdbench",
                                     .where = kInterval};
inline constexpr MetricDef trace_iops{.name = "trace_iops",
                                      .unit = Unit::per_s,
                                      .kind = MetricKind::setting,
                                      .description = "the trace's own rate (curve_of recorded)",
                                      .recorded_by = "replay vdi",
                                      .where = kGroup,
                                      .word = "IOPS"};
inline constexpr MetricDef points_run{.name = "points_run",
                                      .unit = Unit::count,
                                      .kind = MetricKind::progress,
                                      .description = "curve points measured",
                                      .recorded_by = "vdbench replay vdi",
                                      .where = kGroup};
inline constexpr MetricDef time_scale{.name = "time_scale",
                                      .unit = Unit::none,
                                      .kind = MetricKind::setting,
                                      .description = "trace times were multiplied by this",
                                      .recorded_by = "replay vdi",
                                      .where = kGroup};
inline constexpr MetricDef threads{.name = "threads",
                                   .unit = Unit::count,
                                   .kind = MetricKind::setting,
                                   .description = "outstanding I/O slots",
                                   .recorded_by = "vdbench",
                                   .where = kGroup};
inline constexpr MetricDef read_pct{.name = "read_pct",
                                    .unit = Unit::pct,
                                    .kind = MetricKind::setting,
                                    .description = "VDI model: reads among the generated I/Os",
                                    .recorded_by = "vdi",
                                    .where = kGroup};
inline constexpr MetricDef mean_size_bytes{.name = "mean_size_bytes",
                                           .unit = Unit::bytes,
                                           .kind = MetricKind::setting,
                                           .description = "VDI model: mean size of the generated I/Os",
                                           .recorded_by = "vdi",
                                           .where = kGroup};
inline constexpr MetricDef iops_per_desktop{.name = "iops_per_desktop",
                                            .unit = Unit::per_s,
                                            .kind = MetricKind::setting,
                                            .description = "VDI model: generated IOPS per desktop",
                                            .recorded_by = "vdi",
                                            .where = kGroup,
                                            .word = "IOPS"};
inline constexpr MetricDef pass{.name = "pass",
                                .unit = Unit::count,
                                .kind = MetricKind::progress,
                                .description = "interval: the pass being run (1 = fill)",
                                .recorded_by = "precondition",
                                .where = kInterval};
inline constexpr MetricDef done_pct{.name = "done_pct",
                                    .unit = Unit::pct,
                                    .kind = MetricKind::progress,
                                    .description = "interval: share of the pass written",
                                    .recorded_by = "precondition",
                                    .where = kInterval};
inline constexpr MetricDef phase{.name = "phase",
                                 .unit = Unit::count,
                                 .kind = MetricKind::progress,
                                 .description = "interval: the render phase (1 load ... 5 write)",
                                 .recorded_by = "render",
                                 .where = kInterval};

/// Every declaration above (the families' members are added by the catalogue): the recorder
/// refuses a name not found here.

}  // namespace drivelab::results::catalogue
