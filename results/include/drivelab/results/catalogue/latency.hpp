#pragma once
/// \file catalogue/latency.hpp
/// The metric catalogue's declarations (results/catalogue.hpp): latency and lateness (other than the families'
/// figures), errors, queues and backlogs, replayed requests. Included by catalogue.hpp, which lists every declaration
/// in kAll; include catalogue.hpp, not this file.
#include "drivelab/results/catalogue/operations.hpp"

namespace drivelab::results::catalogue {

// ---- latency and lateness (other than the families' figures) ----------------------------------
// The family members interval values and call sites name (the others are generated: figure_def()).
inline constexpr MetricDef latency_avg_us{
    .name = "latency_avg_us",
    .unit = Unit::us,
    .kind = MetricKind::latency,
    .better = Direction::lower,
    .description = "latency: avg (interval values: of the interval's \"latency\" histogram)",
    .recorded_by = latency.recorded_by,
    .where = kHeadline | kGroup | kInterval,

    .figure = "avg",
    .family = "latency",
    .of_interval_latency = true};
inline constexpr MetricDef latency_p99_us{
    .name = "latency_p99_us",
    .unit = Unit::us,
    .kind = MetricKind::latency,
    .better = Direction::lower,
    .description = "latency: p99 (interval values: of the interval's \"latency\" histogram)",
    .recorded_by = latency.recorded_by,
    .where = kHeadline | kGroup | kInterval,
    .traits = kCharted,
    .figure = "p99",
    .family = "latency",
    .of_interval_latency = true};
inline constexpr MetricDef latency_avg_ms{
    .name = "latency_avg_ms",
    .unit = Unit::ms,
    .kind = MetricKind::latency,
    .better = Direction::lower,
    .description = "latency: avg (interval values: of the interval's \"latency\" histogram)",
    .recorded_by = latency.recorded_by,
    .where = kHeadline | kGroup | kInterval,

    .figure = "avg",
    .family = "latency",
    .of_interval_latency = true};
inline constexpr MetricDef latency_p95_ms{
    .name = "latency_p95_ms",
    .unit = Unit::ms,
    .kind = MetricKind::latency,
    .better = Direction::lower,
    .description = "latency: p95 (interval values: of the interval's \"latency\" histogram)",
    .recorded_by = latency.recorded_by,
    .where = kHeadline | kGroup | kInterval,

    .figure = "p95",
    .family = "latency",
    .of_interval_latency = true};
inline constexpr MetricDef latency_p99_ms{
    .name = "latency_p99_ms",
    .unit = Unit::ms,
    .kind = MetricKind::latency,
    .better = Direction::lower,
    .description = "latency: p99 (interval values: of the interval's \"latency\" histogram)",
    .recorded_by = latency.recorded_by,
    .where = kHeadline | kGroup | kInterval,
    .traits = kCharted,
    .figure = "p99",
    .family = "latency",
    .of_interval_latency = true};
inline constexpr MetricDef lateness_p99_us{
    .name = "lateness_p99_us",
    .unit = Unit::us,
    .kind = MetricKind::lateness,
    .better = Direction::lower,
    .description = "lateness: 99th percentile (interval value: of the interval's lateness)",
    .recorded_by = "vdbench replay vdi",
    .where = kHeadline | kGroup | kInterval,

    .figure = "p99",
    .family = "lateness",
    .of_interval_latency = false};
inline constexpr MetricDef read_frame_latency_p99_ms{.name = "read_frame_latency_p99_ms",
                                                     .unit = Unit::ms,
                                                     .kind = MetricKind::latency,
                                                     .better = Direction::lower,
                                                     .description = "99th percentile time to read one frame",
                                                     .recorded_by = "video"};
inline constexpr MetricDef write_frame_latency_p99_ms{.name = "write_frame_latency_p99_ms",
                                                      .unit = Unit::ms,
                                                      .kind = MetricKind::latency,
                                                      .better = Direction::lower,
                                                      .description = "99th percentile time to write one frame",
                                                      .recorded_by = "video"};
inline constexpr MetricDef service_avg_us{.name = "service_avg_us",
                                          .unit = Unit::us,
                                          .kind = MetricKind::latency,
                                          .better = Direction::lower,
                                          .description = "mean I/O latency from submission to completion",
                                          .recorded_by = "vdbench",
                                          .where = kInterval};
inline constexpr MetricDef timer_lateness_p99_ms{
    .name = "timer_lateness_p99_ms",
    .unit = Unit::ms,
    .kind = MetricKind::lateness,
    .better = Direction::lower,
    .description = "99th percentile of how late keying/think/arrival timers fired",
    .recorded_by = "tpcc"};
inline constexpr MetricDef timer_lateness_max_ms{.name = "timer_lateness_max_ms",
                                                 .unit = Unit::ms,
                                                 .kind = MetricKind::lateness,
                                                 .better = Direction::lower,
                                                 .description = "latest timer",
                                                 .recorded_by = "tpcc",
                                                 .merge = HostMerge::maximum};

// ---- errors ------------------------------------------------------------------------------------
inline constexpr MetricDef errors{.name = "errors",
                                  .unit = Unit::count,
                                  .kind = MetricKind::errors,
                                  .better = Direction::lower,
                                  .description = "failed transactions (tpcc) or failed or short I/Os (replay)",
                                  .recorded_by = "tpcc replay vdi",
                                  .where = kHeadline | kGroup | kInterval,
                                  .traits = kErrorsFeed | kSummedOverHosts};
inline constexpr MetricDef err_s{.name = "err_s",
                                 .unit = Unit::per_s,
                                 .kind = MetricKind::errors,
                                 .better = Direction::lower,
                                 .description = "ignored errors per second (sysbench's err/s)",
                                 .recorded_by = "sysbench",
                                 .where = kInterval,
                                 .traits = kErrorsFeed | kSummedOverHosts};
inline constexpr MetricDef errors_s{.name = "errors_s",
                                    .unit = Unit::per_s,
                                    .kind = MetricKind::errors,
                                    .better = Direction::lower,
                                    .description = "ignored errors per second (the transaction was restarted)",
                                    .recorded_by = "sysbench"};
inline constexpr MetricDef ignored_errors{.name = "ignored_errors",
                                          .unit = Unit::count,
                                          .kind = MetricKind::errors,
                                          .better = Direction::lower,
                                          .description = "failed queries whose transaction was restarted",
                                          .recorded_by = "sysbench",
                                          .where = kHeadline | kGroup};
inline constexpr MetricDef retries{.name = "retries",
                                   .unit = Unit::count,
                                   .kind = MetricKind::errors,
                                   .better = Direction::lower,
                                   .description = "reruns after a retryable failure",
                                   .recorded_by = "tpcc",
                                   .where = kHeadline | kGroup | kInterval,
                                   .traits = kSummedOverHosts};
inline constexpr MetricDef rollbacks{.name = "rollbacks",
                                     .unit = Unit::count,
                                     .kind = MetricKind::errors,
                                     .description = "New-Order business rollbacks (1% by design, clause 2.4.1.4)",
                                     .recorded_by = "tpcc",
                                     .where = kHeadline | kGroup};
inline constexpr MetricDef reconnects{.name = "reconnects",
                                      .unit = Unit::count,
                                      .kind = MetricKind::errors,
                                      .better = Direction::lower,
                                      .description = "sessions reopened after a lost connection",
                                      .recorded_by = "tpcc sysbench",
                                      .where = kHeadline | kGroup | kInterval,
                                      .traits = kSummedOverHosts};
inline constexpr MetricDef reconnects_s{.name = "reconnects_s",
                                        .unit = Unit::per_s,
                                        .kind = MetricKind::errors,
                                        .better = Direction::lower,
                                        .description = "reconnects per second after a lost connection",
                                        .recorded_by = "sysbench"};
inline constexpr MetricDef reconn_s{.name = "reconn_s",
                                    .unit = Unit::per_s,
                                    .kind = MetricKind::errors,
                                    .better = Direction::lower,
                                    .description = "reconnects per second (sysbench's reconn/s)",
                                    .recorded_by = "sysbench",
                                    .where = kInterval,
                                    .traits = kSummedOverHosts};
inline constexpr MetricDef attempts{.name = "attempts",
                                    .unit = Unit::count,
                                    .kind = MetricKind::operations,
                                    .description = "executions of a transaction: first tries and reruns",
                                    .recorded_by = "tpcc sysbench",
                                    .where = kHeadline | kGroup};
inline constexpr MetricDef failed_attempts{.name = "failed_attempts",
                                           .unit = Unit::count,
                                           .kind = MetricKind::errors,
                                           .better = Direction::lower,
                                           .description =
                                               "executions that ended with an error, retryable ones "
                                               "included (failure_bound)",
                                           .recorded_by = "tpcc sysbench",
                                           .where = kHeadline | kGroup};
inline constexpr MetricDef arrivals_dropped{.name = "arrivals_dropped",
                                            .unit = Unit::count,
                                            .kind = MetricKind::errors,
                                            .better = Direction::lower,
                                            .description = "open loop: arrivals dropped because the queue was full",
                                            .recorded_by = "tpcc sysbench",
                                            .where = kHeadline | kGroup};
inline constexpr MetricDef rounded_ios{.name = "rounded_ios",
                                       .unit = Unit::count,
                                       .kind = MetricKind::count,
                                       .description = "I/Os whose offset or length was changed by align",
                                       .recorded_by = "replay vdi",
                                       .where = kGroup};

// ---- queues and backlogs -----------------------------------------------------------------------
inline constexpr MetricDef queue_length_avg{
    .name = "queue_length_avg",
    .unit = Unit::count,
    .kind = MetricKind::count,
    .description = "time-weighted mean of transactions waiting for a connection",
    .recorded_by = "tpcc"};
inline constexpr MetricDef queue_length_max{.name = "queue_length_max",
                                            .unit = Unit::count,
                                            .kind = MetricKind::count,
                                            .description = "most transactions waiting at once",
                                            .recorded_by = "tpcc",
                                            .merge = HostMerge::maximum};
inline constexpr MetricDef queue_len_avg{.name = "queue_len_avg",
                                         .unit = Unit::count,
                                         .kind = MetricKind::count,
                                         .description = "interval: time-weighted mean of transactions waiting",
                                         .recorded_by = "tpcc",
                                         .where = kInterval};
inline constexpr MetricDef queue_len_max{.name = "queue_len_max",
                                         .unit = Unit::count,
                                         .kind = MetricKind::count,
                                         .description = "interval: most transactions waiting at once",
                                         .recorded_by = "tpcc",
                                         .where = kInterval};
inline constexpr MetricDef pool_utilisation_pct{.name = "pool_utilisation_pct",
                                                .unit = Unit::pct,
                                                .kind = MetricKind::count,
                                                .description =
                                                    "busy time of the connections (or users) / (their "
                                                    "number x measured time)",
                                                .recorded_by = "tpcc"};
inline constexpr MetricDef pool_util_pct{.name = "pool_util_pct",
                                         .unit = Unit::pct,
                                         .kind = MetricKind::count,
                                         .description = "interval: pool_utilisation_pct of the interval",
                                         .recorded_by = "tpcc",
                                         .where = kInterval};
inline constexpr MetricDef overflow_ios{.name = "overflow_ios",
                                        .unit = Unit::count,
                                        .kind = MetricKind::lateness,
                                        .description = "I/Os that found every slot busy at their intended start",
                                        .recorded_by = "replay vdi",
                                        .where = kHeadline | kGroup};
inline constexpr MetricDef max_backlog_ios{.name = "max_backlog_ios",
                                           .unit = Unit::count,
                                           .kind = MetricKind::lateness,
                                           .description =
                                               "most requests past their intended start but not yet "
                                               "issued at once",
                                           .recorded_by = "replay vdi",
                                           .where = kHeadline | kGroup};
inline constexpr MetricDef mean_backlog_ios{.name = "mean_backlog_ios",
                                            .unit = Unit::count,
                                            .kind = MetricKind::lateness,
                                            .description = "time average of that backlog over the replay",
                                            .recorded_by = "replay vdi",
                                            .where = kGroup};
inline constexpr MetricDef backlog_ios{.name = "backlog_ios",
                                       .unit = Unit::count,
                                       .kind = MetricKind::lateness,
                                       .description = "arrivals due but not issued when the point ended",
                                       .recorded_by = "vdbench",
                                       .where = kGroup};
inline constexpr MetricDef achieved_qd{.name = "achieved_qd",
                                       .unit = Unit::count,
                                       .kind = MetricKind::count,
                                       .description = "IOPS x mean service latency (Little's law)",
                                       .recorded_by = "vdbench",
                                       .where = kGroup};
inline constexpr MetricDef qd_deviation_pct{.name = "qd_deviation_pct",
                                            .unit = Unit::pct,
                                            .kind = MetricKind::health,
                                            .description = "(achieved_qd - threads) / threads",
                                            .recorded_by = "vdbench",
                                            .where = kGroup};

// ---- replayed requests -------------------------------------------------------------------------
inline constexpr MetricDef flushes_replayed{.name = "flushes_replayed",
                                            .unit = Unit::count,
                                            .kind = MetricKind::count,
                                            .description = "flush requests and preflushes done as fdatasync",
                                            .recorded_by = "replay vdi",
                                            .where = kGroup};
inline constexpr MetricDef flushes_skipped{.name = "flushes_skipped",
                                           .unit = Unit::count,
                                           .kind = MetricKind::count,
                                           .description = "flush requests not done (flushes: skip)",
                                           .recorded_by = "replay vdi",
                                           .where = kGroup};
inline constexpr MetricDef fua_replayed{.name = "fua_replayed",
                                        .unit = Unit::count,
                                        .kind = MetricKind::count,
                                        .description = "FUA writes followed by an fdatasync",
                                        .recorded_by = "replay vdi",
                                        .where = kGroup};
inline constexpr MetricDef fua_skipped{.name = "fua_skipped",
                                       .unit = Unit::count,
                                       .kind = MetricKind::count,
                                       .description = "FUA writes without their fdatasync (flushes: skip)",
                                       .recorded_by = "replay vdi",
                                       .where = kGroup};
inline constexpr MetricDef discards_replayed{.name = "discards_replayed",
                                             .unit = Unit::count,
                                             .kind = MetricKind::count,
                                             .description = "discards punched as holes",
                                             .recorded_by = "replay vdi",
                                             .where = kGroup};
inline constexpr MetricDef discards_skipped{.name = "discards_skipped",
                                            .unit = Unit::count,
                                            .kind = MetricKind::count,
                                            .description = "discards not done (discards: skip, or holes not supported)",
                                            .recorded_by = "replay vdi",
                                            .where = kGroup};

}  // namespace drivelab::results::catalogue
