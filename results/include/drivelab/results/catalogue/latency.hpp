#pragma once
/// \file catalogue/latency.hpp
/// The metric catalogue's declarations (results/catalogue.hpp): latency and lateness (other than the families'
/// figures), errors, queues and backlogs, replayed requests. Included by catalogue.hpp, which lists every declaration
/// in kAll; include catalogue.hpp, not this file.
#include "drivelab/results/catalogue/operations.hpp"

namespace drivelab::results::catalogue {

// ---- latency and lateness (other than the families' figures) ----------------------------------
// The family members interval values and call sites name (the others are generated: figure_def()).
inline constexpr MetricDef latency_avg_us = interval_figure<latency, "avg">("latency_avg_us", Unit::us);
inline constexpr MetricDef latency_p99_us = interval_figure<latency, "p99">("latency_p99_us", Unit::us);
inline constexpr MetricDef latency_avg_ms = interval_figure<latency, "avg">("latency_avg_ms", Unit::ms);
inline constexpr MetricDef latency_p95_ms = interval_figure<latency, "p95">("latency_p95_ms", Unit::ms);
inline constexpr MetricDef latency_p99_ms = interval_figure<latency, "p99">("latency_p99_ms", Unit::ms);
inline constexpr MetricDef lateness_p99_us =
    family_member(lateness, "lateness_p99_us", "p99", Unit::us,
                  "lateness: 99th percentile (interval value: of the interval's lateness)");
inline constexpr MetricDef read_frame_latency_p99_ms =
    time_taken("read_frame_latency_p99_ms", Unit::ms, MetricKind::latency, kHeadline, "video",
               "99th percentile time to read one frame");
inline constexpr MetricDef write_frame_latency_p99_ms =
    time_taken("write_frame_latency_p99_ms", Unit::ms, MetricKind::latency, kHeadline, "video",
               "99th percentile time to write one frame");
inline constexpr MetricDef service_avg_us = time_taken("service_avg_us", Unit::us, MetricKind::latency, kInterval,
                                                       "vdbench", "mean I/O latency from submission to completion");
inline constexpr MetricDef timer_lateness_p99_ms =
    time_taken("timer_lateness_p99_ms", Unit::ms, MetricKind::lateness, kHeadline, "tpcc",
               "99th percentile of how late keying/think/arrival timers fired");
inline constexpr MetricDef timer_lateness_max_ms =
    time_taken("timer_lateness_max_ms", Unit::ms, MetricKind::lateness, kHeadline, "tpcc", "latest timer",
               {.merge = HostMerge::maximum});

// ---- errors ------------------------------------------------------------------------------------
inline constexpr MetricDef errors = error_metric(
    "errors", Unit::count, kHeadline | kGroup | kInterval, "tpcc replay vdi",
    "failed transactions (tpcc) or failed or short I/Os (replay)", {.traits = kErrorsFeed | kSummedOverHosts});
inline constexpr MetricDef err_s =
    error_metric("err_s", Unit::per_s, kInterval, "sysbench", "ignored errors per second (sysbench's err/s)",
                 {.traits = kErrorsFeed | kSummedOverHosts});
inline constexpr MetricDef errors_s = error_metric("errors_s", Unit::per_s, kHeadline, "sysbench",
                                                   "ignored errors per second (the transaction was restarted)");
inline constexpr MetricDef ignored_errors = error_metric("ignored_errors", Unit::count, kHeadline | kGroup, "sysbench",
                                                         "failed queries whose transaction was restarted");
inline constexpr MetricDef retries = error_metric("retries", Unit::count, kHeadline | kGroup | kInterval, "tpcc",
                                                  "reruns after a retryable failure", {.traits = kSummedOverHosts});
inline constexpr MetricDef rollbacks = metric("rollbacks", Unit::count, MetricKind::errors, kHeadline | kGroup, "tpcc",
                                              "New-Order business rollbacks (1% by design, clause 2.4.1.4)");
inline constexpr MetricDef reconnects =
    error_metric("reconnects", Unit::count, kHeadline | kGroup | kInterval, "tpcc sysbench",
                 "sessions reopened after a lost connection", {.traits = kSummedOverHosts});
inline constexpr MetricDef reconnects_s =
    error_metric("reconnects_s", Unit::per_s, kHeadline, "sysbench", "reconnects per second after a lost connection");
inline constexpr MetricDef reconn_s =
    error_metric("reconn_s", Unit::per_s, kInterval, "sysbench", "reconnects per second (sysbench's reconn/s)",
                 {.traits = kSummedOverHosts});
inline constexpr MetricDef attempts = operation_count("attempts", kHeadline | kGroup, "tpcc sysbench",
                                                      "executions of a transaction: first tries and reruns");
inline constexpr MetricDef failed_attempts =
    error_metric("failed_attempts", Unit::count, kHeadline | kGroup, "tpcc sysbench",
                 "executions that ended with an error, retryable ones included (failure_bound)");
inline constexpr MetricDef arrivals_dropped =
    error_metric("arrivals_dropped", Unit::count, kHeadline | kGroup, "tpcc sysbench",
                 "open loop: arrivals dropped because the queue was full");
inline constexpr MetricDef rounded_ios = metric("rounded_ios", Unit::count, MetricKind::count, kGroup, "replay vdi",
                                                "I/Os whose offset or length was changed by align");

// ---- queues and backlogs -----------------------------------------------------------------------
inline constexpr MetricDef queue_length_avg = pool_figure(
    "queue_length_avg", Unit::count, kHeadline, "time-weighted mean of transactions waiting for a connection");
inline constexpr MetricDef queue_length_max = pool_figure(
    "queue_length_max", Unit::count, kHeadline, "most transactions waiting at once", {.merge = HostMerge::maximum});
inline constexpr MetricDef queue_len_avg =
    pool_figure("queue_len_avg", Unit::count, kInterval, "interval: time-weighted mean of transactions waiting");
inline constexpr MetricDef queue_len_max =
    pool_figure("queue_len_max", Unit::count, kInterval, "interval: most transactions waiting at once");
inline constexpr MetricDef pool_utilisation_pct =
    pool_figure("pool_utilisation_pct", Unit::pct, kHeadline,
                "busy time of the connections (or users) / (their number x measured time)");
inline constexpr MetricDef pool_util_pct =
    pool_figure("pool_util_pct", Unit::pct, kInterval, "interval: pool_utilisation_pct of the interval");
inline constexpr MetricDef overflow_ios =
    metric("overflow_ios", Unit::count, MetricKind::lateness, kHeadline | kGroup, "replay vdi",
           "I/Os that found every slot busy at their intended start");
inline constexpr MetricDef max_backlog_ios =
    metric("max_backlog_ios", Unit::count, MetricKind::lateness, kHeadline | kGroup, "replay vdi",
           "most requests past their intended start but not yet issued at once");
inline constexpr MetricDef mean_backlog_ios = metric("mean_backlog_ios", Unit::count, MetricKind::lateness, kGroup,
                                                     "replay vdi", "time average of that backlog over the replay");
inline constexpr MetricDef backlog_ios = metric("backlog_ios", Unit::count, MetricKind::lateness, kGroup, "vdbench",
                                                "arrivals due but not issued when the point ended");
inline constexpr MetricDef achieved_qd = metric("achieved_qd", Unit::count, MetricKind::count, kGroup, "vdbench",
                                                "IOPS x mean service latency (Little's law)");
inline constexpr MetricDef qd_deviation_pct =
    metric("qd_deviation_pct", Unit::pct, MetricKind::health, kGroup, "vdbench", "(achieved_qd - threads) / threads");

// ---- replayed requests -------------------------------------------------------------------------
inline constexpr MetricDef flushes_replayed = metric("flushes_replayed", Unit::count, MetricKind::count, kGroup,
                                                     "replay vdi", "flush requests and preflushes done as fdatasync");
inline constexpr MetricDef flushes_skipped = metric("flushes_skipped", Unit::count, MetricKind::count, kGroup,
                                                    "replay vdi", "flush requests not done (flushes: skip)");
inline constexpr MetricDef fua_replayed =
    metric("fua_replayed", Unit::count, MetricKind::count, kGroup, "replay vdi", "FUA writes followed by an fdatasync");
inline constexpr MetricDef fua_skipped = metric("fua_skipped", Unit::count, MetricKind::count, kGroup, "replay vdi",
                                                "FUA writes without their fdatasync (flushes: skip)");
inline constexpr MetricDef discards_replayed =
    metric("discards_replayed", Unit::count, MetricKind::count, kGroup, "replay vdi", "discards punched as holes");
inline constexpr MetricDef discards_skipped =
    metric("discards_skipped", Unit::count, MetricKind::count, kGroup, "replay vdi",
           "discards not done (discards: skip, or holes not supported)");

}  // namespace drivelab::results::catalogue
