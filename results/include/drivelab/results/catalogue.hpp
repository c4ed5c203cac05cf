#pragma once
/// \file catalogue.hpp
/// The metric catalogue: every metric drivelab records (headline, group and interval values) is
/// declared here once, with its name, unit, kind, direction and meaning (issue 31). Emulators
/// record through these declarations (`rec.metric(catalogue::iops, v)`), so no call site types a
/// metric's name or unit; the Prometheus exporter, the console summary, the merge of hosts'
/// records and the reporter learn what a metric is from its declaration, never from its name.
/// docs/results.md ("Metric catalogue") lists every declaration and tests/unit/results/
/// catalogue_test.cpp holds the page and the catalogue to each other.
///
/// Names: lower case words joined by '_', the unit last when it is not in the word ("_ms", "_us",
/// "_s", "_mb_s", "_pct", "_bytes"); latency figures are `<family>_<figure>_<unit>`
/// (FigureFamily). The one latency prefix is `latency_` (headline, group and interval values
/// alike); the interval values written as `lat_<figure>_<unit>` before issue 31 are aliases
/// (kAliases): find_metric_def() knows them, so records and journals written before read and
/// merge as before, and the Prometheus exporter serves drivelab_interval_value under both names.
///
/// The declarations live in four headers by group, each under 700 lines: catalogue/operations.hpp
/// (figure families, operations, sizing answers, throughput), catalogue/latency.hpp (latency,
/// errors, queues, replayed requests), catalogue/resources.hpp (CPU, time, device and server
/// counters, within-run confidence, health, settings), catalogue/telemetry.hpp (the runner's device and host
/// telemetry of every test, issue 33); the types are in catalogue_types.hpp.
///
/// Adding a metric: declare it in the header of its group with the factory of its kind (catalogue/declare.hpp:
/// operation_rate, error_metric, ... or metric) and list it in kAll below, add its row to docs/results.md's table
/// (the catalogue test prints the row it expects), then record it. tests/golden/metric_catalogue.json holds every
/// declaration's fields as they were: catalogue_dump_test fails on a changed or removed one. The recorder refuses a
/// name that is not declared (results::TestRecorder throws InternalError), and a unit other than the declared.
#include "drivelab/results/catalogue_types.hpp"
#include "drivelab/results/catalogue/operations.hpp"
#include "drivelab/results/catalogue/latency.hpp"
#include "drivelab/results/catalogue/resources.hpp"
#include "drivelab/results/catalogue/telemetry.hpp"

namespace drivelab::results {

namespace catalogue {

inline constexpr std::array kAll{
    &iops, &ios, &read_ios, &write_ios, &achieved_iops, &peak_iops, &max_run_iops, &max_iops_under_p99,
    &max_iops_under_mean, &max_tps_under_slo, &max_tpmc_under_slo, &max_qps_under_slo, &iops_per_cpu_s, &write_fps,
    &read_fps, &write_passes, &read_passes, &tps, &tpm_c, &nopm, &qps, &reads_s, &writes_s, &other_s, &transactions,
    &new_orders, &queries, &reads, &writes, &other, &events, &events_avg, &events_stddev, &count, &arrival_rate,
    // throughput
    &throughput_mb_s, &mb_s, &write_mb_s, &read_mb_s, &fill_mb_s, &random_mb_s, &bytes, &read_bytes, &write_bytes,
    &bytes_written, &region_bytes,
    // latency
    &latency_avg_us, &latency_p99_us, &latency_avg_ms, &latency_p95_ms, &latency_p99_ms, &lateness_p99_us,
    &read_frame_latency_p99_ms, &write_frame_latency_p99_ms, &service_avg_us, &timer_lateness_p99_ms,
    &timer_lateness_max_ms,
    // errors
    &errors, &err_s, &errors_s, &ignored_errors, &retries, &rollbacks, &reconnects, &reconnects_s, &reconn_s, &attempts,
    &failed_attempts, &arrivals_dropped, &rounded_ios,
    // queues
    &queue_length_avg, &queue_length_max, &queue_len_avg, &queue_len_max, &pool_utilisation_pct, &pool_util_pct,
    &overflow_ios, &max_backlog_ios, &mean_backlog_ios, &backlog_ios, &achieved_qd, &qd_deviation_pct,
    // replayed requests
    &flushes_replayed, &flushes_skipped, &fua_replayed, &fua_skipped, &discards_replayed, &discards_skipped,
    // CPU and memory
    &cpu_usr_pct, &cpu_sys_pct, &cpu_jobs_usr_pct, &cpu_jobs_sys_pct, &cpu_usr_s, &cpu_sys_s, &driver_cpu_pct,
    &driver_rss_peak_mib,
    // time
    &seconds, &measured_s, &elapsed_s, &total_time_s, &execution_time_avg_s, &execution_time_stddev_s, &total_s,
    &baseline_total_s, &load_s, &unpack_s, &process_s, &repack_s, &write_s, &slowdown_vs_ram,
    // device and server
    &swap_out_bytes, &swap_in_bytes, &major_faults, &host_major_faults, &pswpin_pages, &pswpout_pages,
    &device_read_bytes, &device_write_bytes, &swap_in_mb_s, &swap_out_mb_s, &device_read_mb_s, &device_write_mb_s,
    &server_blks_read, &server_blks_hit, &server_commits, &server_wal_bytes, &server_innodb_data_reads,
    &server_innodb_data_writes, &server_innodb_data_read_bytes, &server_innodb_data_written_bytes,
    &server_innodb_data_fsyncs,
    // device and host telemetry (every test)
    &device_r_s, &device_w_s, &device_d_s, &device_f_s, &device_rmb_s, &device_wmb_s, &device_rrqm_s, &device_wrqm_s,
    &device_rareq_bytes, &device_wareq_bytes, &device_r_await_ms, &device_w_await_ms, &device_f_await_ms,
    &device_aqu_sz, &device_util_pct, &device_read_ios, &device_write_ios, &device_flush_ios, &host_cpu_user_pct,
    &host_cpu_system_pct, &host_cpu_iowait_pct, &host_cpu_steal_pct, &host_cpu_irq_pct, &host_psi_io_some_pct,
    &host_psi_io_full_pct, &host_psi_memory_some_pct, &host_psi_memory_full_pct, &device_read_bytes_per_txn,
    &device_read_ios_per_txn, &device_write_bytes_per_txn, &device_write_ios_per_txn, &device_flush_ios_per_txn,
    &device_read_bytes_per_new_order, &device_read_ios_per_new_order, &device_write_bytes_per_new_order,
    &device_write_ios_per_new_order, &device_flush_ios_per_new_order, &device_read_ios_per_io, &device_write_ios_per_io,
    &device_read_bytes_per_byte, &device_write_bytes_per_byte, &device_read_bytes_per_frame,
    &device_write_bytes_per_frame, &drive_temp_c, &drive_temp_max_c, &drive_temp_warning_s,
    // within-run confidence
    &iops_ci95_low, &iops_ci95_high, &tps_ci95_low, &tps_ci95_high, &rate_ci95_half_width_pct, &batch_means_lag1,
    &batch_means_batches,
    // health
    &efficiency_pct, &ss_attained, &ss_value, &complete, &stopped_by_stopcurve, &stopcurve_at_pct,
    &achieved_pct_of_requested,
    // settings and progress
    &requested_iops, &requested_pct, &point_pct, &trace_iops, &points_run, &time_scale, &threads, &read_pct,
    &mean_size_bytes, &iops_per_desktop, &pass, &done_pct, &phase};

/// The interval rates a test's within-run confidence interval is taken of, with the metrics that
/// hold its bounds (results/record_stats.hpp): a test's headline operation rate, TPS for tpcc and
/// sysbench, IOPS for the I/O kinds.
inline constexpr std::array kRateIntervals{RateInterval{&iops, &iops_ci95_low, &iops_ci95_high},
                                           RateInterval{&tps, &tps_ci95_low, &tps_ci95_high}};

inline constexpr std::array kFamilies{&latency, &service_latency, &lateness, &queue_wait, &service_time};

/// The render phases' time metrics in the order of render/pipeline.hpp kPhaseNames.
inline constexpr std::array kRenderPhaseSeconds{&load_s, &unpack_s, &process_s, &repack_s, &write_s};

/// Names written before issue 31 settled the latency prefix on `latency_`: the interval values
/// lat_<figure>_<unit> (io, vdbench, precondition, replay, vdi, tpcc, sysbench).
inline constexpr std::array<MetricAlias, 5> kAliases{{{"lat_avg_us", "latency_avg_us"},
                                                      {"lat_p99_us", "latency_p99_us"},
                                                      {"lat_avg_ms", "latency_avg_ms"},
                                                      {"lat_p95_ms", "latency_p95_ms"},
                                                      {"lat_p99_ms", "latency_p99_ms"}}};

}  // namespace catalogue

template <class Values>
std::optional<double> value_of(const Values& values, const MetricDef& def) noexcept {
  for (const auto& [n, v] : values) {
    if (n == def.name || (find_metric_def(n) == &def)) {
      if (v == v && v - v == 0) return v;  // finite
      return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace drivelab::results
