#pragma once
/// \file catalogue/operations.hpp
/// The metric catalogue's declarations (results/catalogue.hpp): figure families, operations (IOPS, TPS, counts, sizing
/// answers) and throughput. Included by catalogue.hpp, which lists every declaration in kAll; include catalogue.hpp,
/// not this file.
#include "drivelab/results/catalogue_types.hpp"

namespace drivelab::results::catalogue {

// ---- figure families (latency figures: runner::record_latency) --------------------------------
inline constexpr FigureFamily latency{"latency",
                                      MetricKind::latency,
                                      "latency (io, vdbench, replay, vdi: from the intended start in open loop, else "
                                      "from submission; sysbench: event latency; tpcc: response time at the terminal, "
                                      "queue wait + service)",
                                      "io vdbench replay vdi precondition sysbench tpcc",
                                      kHeadline | kGroup | kInterval,
                                      true};
inline constexpr FigureFamily service_latency{"service_latency", MetricKind::latency,
                                              "I/O latency from submission to completion (fio: lat)",
                                              "vdbench replay vdi", kGroup};
inline constexpr FigureFamily lateness{"lateness", MetricKind::lateness,
                                       "submission minus intended start of an I/O (open loop)", "vdbench replay vdi",
                                       kHeadline | kGroup | kInterval};
inline constexpr FigureFamily queue_wait{
    "queue_wait", MetricKind::latency,
    "TPC-C: time a transaction waited for a connection of the pool; sysbench rate: time an event waited in the queue",
    "tpcc sysbench", kHeadline | kGroup};
inline constexpr FigureFamily service_time{
    "service_time", MetricKind::latency,
    "TPC-C: time a transaction held its connection; sysbench rate: an event's execution", "tpcc sysbench",
    kHeadline | kGroup};

// ---- operations --------------------------------------------------------------------------------
inline constexpr MetricDef iops{.name = "iops",
                                .unit = Unit::per_s,
                                .kind = MetricKind::operations,
                                .better = Direction::higher,
                                .description = "I/Os completed per second",
                                .recorded_by = "io vdbench replay vdi precondition",
                                .where = kHeadline | kGroup | kInterval,
                                .word = "IOPS",
                                .traits = kOperationsFeed | kSummedOverHosts | kCharted};
inline constexpr MetricDef ios{.name = "ios",
                               .unit = Unit::count,
                               .kind = MetricKind::operations,
                               .description = "I/Os completed",
                               .recorded_by = "io vdbench replay vdi",
                               .where = kHeadline | kGroup | kInterval,
                               .traits = kOperationsFeed | kSummedOverHosts};
inline constexpr MetricDef read_ios{.name = "read_ios",
                                    .unit = Unit::count,
                                    .kind = MetricKind::operations,
                                    .description = "read I/Os completed",
                                    .recorded_by = "vdbench replay vdi",
                                    .where = kGroup};
inline constexpr MetricDef write_ios{.name = "write_ios",
                                     .unit = Unit::count,
                                     .kind = MetricKind::operations,
                                     .description = "write I/Os completed",
                                     .recorded_by = "vdbench replay vdi",
                                     .where = kGroup};
inline constexpr MetricDef achieved_iops{.name = "achieved_iops",
                                         .unit = Unit::per_s,
                                         .kind = MetricKind::operations,
                                         .better = Direction::higher,
                                         .description = "I/Os completed per second at a curve point",
                                         .recorded_by = "vdbench replay vdi",
                                         .where = kGroup,
                                         .word = "IOPS"};
inline constexpr MetricDef peak_iops{.name = "peak_iops",
                                     .unit = Unit::per_s,
                                     .kind = MetricKind::operations,
                                     .better = Direction::higher,
                                     .description = "highest achieved IOPS of any run of the curve",
                                     .recorded_by = "vdbench replay vdi",
                                     .where = kGroup,
                                     .word = "IOPS",
                                     .merge = HostMerge::per_host};
inline constexpr MetricDef max_run_iops{.name = "max_run_iops",
                                        .unit = Unit::per_s,
                                        .kind = MetricKind::operations,
                                        .better = Direction::higher,
                                        .description = "the rate the curve points are percentages of",
                                        .recorded_by = "vdbench replay vdi",
                                        .where = kGroup,
                                        .word = "IOPS"};
// Sizing answers (runner/curve.hpp max_rate_within; issue 32): the highest rate of a curve whose
// latency figure stays within the protocol's `slo:` bound, interpolated between the two points
// that bracket the crossing; 0 when the lowest point is already beyond the bound.
inline constexpr MetricDef max_iops_under_p99{.name = "max_iops_under_p99",
                                              .unit = Unit::per_s,
                                              .kind = MetricKind::operations,
                                              .better = Direction::higher,
                                              .description =
                                                  "curve: the highest IOPS whose p99 latency stays "
                                                  "within slo.p99_ms (interpolated)",
                                              .recorded_by = "vdbench",
                                              .word = "IOPS",
                                              .merge = HostMerge::per_host};
inline constexpr MetricDef max_iops_under_mean{.name = "max_iops_under_mean",
                                               .unit = Unit::per_s,
                                               .kind = MetricKind::operations,
                                               .better = Direction::higher,
                                               .description =
                                                   "curve: the highest IOPS whose mean latency stays "
                                                   "within slo.mean_ms (interpolated)",
                                               .recorded_by = "vdbench",
                                               .word = "IOPS",
                                               .merge = HostMerge::per_host};
inline constexpr MetricDef max_tps_under_slo{.name = "max_tps_under_slo",
                                             .unit = Unit::per_s,
                                             .kind = MetricKind::operations,
                                             .better = Direction::higher,
                                             .description =
                                                 "rate: curve: the highest TPS whose latency figures "
                                                 "all stay within the slo bounds (interpolated)",
                                             .recorded_by = "tpcc sysbench",
                                             .word = "TPS",
                                             .merge = HostMerge::per_host};
inline constexpr MetricDef max_tpmc_under_slo{.name = "max_tpmc_under_slo",
                                              .unit = Unit::per_min,
                                              .kind = MetricKind::operations,
                                              .better = Direction::higher,
                                              .description =
                                                  "rate: curve: tpm_c at max_tps_under_slo "
                                                  "(interpolated the same way)",
                                              .recorded_by = "tpcc",
                                              .word = "tpmC",
                                              .merge = HostMerge::per_host};
inline constexpr MetricDef max_qps_under_slo{.name = "max_qps_under_slo",
                                             .unit = Unit::per_s,
                                             .kind = MetricKind::operations,
                                             .better = Direction::higher,
                                             .description =
                                                 "rate: curve: qps at max_tps_under_slo "
                                                 "(interpolated the same way)",
                                             .recorded_by = "sysbench",
                                             .word = "QPS",
                                             .merge = HostMerge::per_host};
inline constexpr MetricDef iops_per_cpu_s{.name = "iops_per_cpu_s",
                                          .unit = Unit::per_cpu_s,
                                          .kind = MetricKind::cpu,
                                          .better = Direction::higher,
                                          .description = "I/Os per CPU second of the process (user + system)",
                                          .recorded_by = "io"};
inline constexpr MetricDef write_fps{.name = "write_fps",
                                     .unit = Unit::per_s,
                                     .kind = MetricKind::operations,
                                     .better = Direction::higher,
                                     .description = "frames written per second",
                                     .recorded_by = "video",
                                     .where = kHeadline | kInterval,
                                     .word = "fps",
                                     .traits = kOperationsFeed | kSummedOverHosts};
inline constexpr MetricDef read_fps{.name = "read_fps",
                                    .unit = Unit::per_s,
                                    .kind = MetricKind::operations,
                                    .better = Direction::higher,
                                    .description = "frames read per second",
                                    .recorded_by = "video",
                                    .where = kHeadline | kInterval,
                                    .word = "fps",
                                    .traits = kOperationsFeed | kSummedOverHosts};
inline constexpr MetricDef write_passes{.name = "write_passes",
                                        .unit = Unit::count,
                                        .kind = MetricKind::count,
                                        .description = "complete write passes over the file",
                                        .recorded_by = "video"};
inline constexpr MetricDef read_passes{.name = "read_passes",
                                       .unit = Unit::count,
                                       .kind = MetricKind::count,
                                       .description = "complete read passes over the file",
                                       .recorded_by = "video"};
inline constexpr MetricDef tps{.name = "tps",
                               .unit = Unit::per_s,
                               .kind = MetricKind::operations,
                               .better = Direction::higher,
                               .description = "committed transactions (sysbench: events) per second",
                               .recorded_by = "tpcc sysbench",
                               .where = kHeadline | kGroup | kInterval,
                               .word = "TPS",
                               .traits = kOperationsFeed | kSummedOverHosts | kCharted};
inline constexpr MetricDef tpm_c{.name = "tpm_c",
                                 .unit = Unit::per_min,
                                 .kind = MetricKind::operations,
                                 .better = Direction::higher,
                                 .description = "committed New-Order transactions per minute (tpmC-like)",
                                 .recorded_by = "tpcc",
                                 .where = kHeadline | kGroup | kInterval,
                                 .word = "tpmC",
                                 .traits = kSummedOverHosts};
inline constexpr MetricDef nopm{.name = "nopm",
                                .unit = Unit::per_min,
                                .kind = MetricKind::operations,
                                .better = Direction::higher,
                                .description = "HammerDB's New-Orders per minute",
                                .recorded_by = "tpcc",
                                .word = "NOPM"};
inline constexpr MetricDef qps{.name = "qps",
                               .unit = Unit::per_s,
                               .kind = MetricKind::operations,
                               .better = Direction::higher,
                               .description = "queries per second (read + write + other)",
                               .recorded_by = "sysbench",
                               .where = kHeadline | kGroup | kInterval,
                               .word = "QPS",
                               .traits = kSummedOverHosts};
inline constexpr MetricDef reads_s{.name = "reads_s",
                                   .unit = Unit::per_s,
                                   .kind = MetricKind::operations,
                                   .better = Direction::higher,
                                   .description = "read queries per second",
                                   .recorded_by = "sysbench",
                                   .where = kHeadline | kInterval,
                                   .traits = kSummedOverHosts};
inline constexpr MetricDef writes_s{.name = "writes_s",
                                    .unit = Unit::per_s,
                                    .kind = MetricKind::operations,
                                    .better = Direction::higher,
                                    .description = "write queries per second",
                                    .recorded_by = "sysbench",
                                    .where = kHeadline | kInterval,
                                    .traits = kSummedOverHosts};
inline constexpr MetricDef other_s{.name = "other_s",
                                   .unit = Unit::per_s,
                                   .kind = MetricKind::operations,
                                   .better = Direction::higher,
                                   .description = "other queries per second (BEGIN, COMMIT, ...)",
                                   .recorded_by = "sysbench",
                                   .where = kHeadline | kInterval,
                                   .traits = kSummedOverHosts};
inline constexpr MetricDef transactions{.name = "transactions",
                                        .unit = Unit::count,
                                        .kind = MetricKind::operations,
                                        .description = "committed transactions (sysbench: events)",
                                        .recorded_by = "tpcc sysbench"};
inline constexpr MetricDef new_orders{.name = "new_orders",
                                      .unit = Unit::count,
                                      .kind = MetricKind::operations,
                                      .description = "committed New-Orders",
                                      .recorded_by = "tpcc"};
inline constexpr MetricDef queries{.name = "queries",
                                   .unit = Unit::count,
                                   .kind = MetricKind::operations,
                                   .description = "queries completed (read + write + other)",
                                   .recorded_by = "sysbench"};
inline constexpr MetricDef reads{.name = "reads",
                                 .unit = Unit::count,
                                 .kind = MetricKind::operations,
                                 .description = "read queries completed",
                                 .recorded_by = "sysbench"};
inline constexpr MetricDef writes{.name = "writes",
                                  .unit = Unit::count,
                                  .kind = MetricKind::operations,
                                  .description = "write queries completed",
                                  .recorded_by = "sysbench"};
inline constexpr MetricDef other{.name = "other",
                                 .unit = Unit::count,
                                 .kind = MetricKind::operations,
                                 .description = "other queries completed",
                                 .recorded_by = "sysbench"};
inline constexpr MetricDef events{.name = "events",
                                  .unit = Unit::count,
                                  .kind = MetricKind::operations,
                                  .description = "sysbench's \"total number of events\"",
                                  .recorded_by = "sysbench"};
inline constexpr MetricDef events_avg{.name = "events_avg",
                                      .unit = Unit::count,
                                      .kind = MetricKind::operations,
                                      .description = "events per thread, mean (sysbench's threads fairness)",
                                      .recorded_by = "sysbench",
                                      .where = kGroup};
inline constexpr MetricDef events_stddev{.name = "events_stddev",
                                         .unit = Unit::count,
                                         .kind = MetricKind::operations,
                                         .description = "events per thread, standard deviation",
                                         .recorded_by = "sysbench",
                                         .where = kGroup};
inline constexpr MetricDef count{.name = "count",
                                 .unit = Unit::count,
                                 .kind = MetricKind::operations,
                                 .description = "completed transactions of the type (commits + business rollbacks)",
                                 .recorded_by = "tpcc",
                                 .where = kGroup};
inline constexpr MetricDef arrival_rate{.name = "arrival_rate",
                                        .unit = Unit::per_s,
                                        .kind = MetricKind::setting,
                                        .description = "open loop: transactions that arrived per second",
                                        .recorded_by = "tpcc sysbench",
                                        .where = kHeadline | kGroup};

// ---- throughput --------------------------------------------------------------------------------
inline constexpr MetricDef throughput_mb_s{.name = "throughput_mb_s",
                                           .unit = Unit::mb_s,
                                           .kind = MetricKind::throughput,
                                           .better = Direction::higher,
                                           .description = "bytes transferred per second, MB = 10^6 bytes",
                                           .recorded_by = "io vdbench replay vdi",
                                           .where = kHeadline | kGroup};
inline constexpr MetricDef mb_s{.name = "mb_s",
                                .unit = Unit::mb_s,
                                .kind = MetricKind::throughput,
                                .better = Direction::higher,
                                .description = "bytes transferred per second, MB = 10^6 bytes",
                                .recorded_by = "io vdbench replay vdi precondition",
                                .where = kGroup | kInterval,
                                .traits = kBytesFeed | kSummedOverHosts};
inline constexpr MetricDef write_mb_s{.name = "write_mb_s",
                                      .unit = Unit::mb_s,
                                      .kind = MetricKind::throughput,
                                      .better = Direction::higher,
                                      .description = "frame writes, bytes per second, MB = 10^6 bytes",
                                      .recorded_by = "video",
                                      .where = kHeadline | kInterval,
                                      .traits = kBytesFeed | kSummedOverHosts};
inline constexpr MetricDef read_mb_s{.name = "read_mb_s",
                                     .unit = Unit::mb_s,
                                     .kind = MetricKind::throughput,
                                     .better = Direction::higher,
                                     .description = "frame reads, bytes per second, MB = 10^6 bytes",
                                     .recorded_by = "video",
                                     .where = kHeadline | kInterval,
                                     .traits = kBytesFeed | kSummedOverHosts};
inline constexpr MetricDef fill_mb_s{.name = "fill_mb_s",
                                     .unit = Unit::mb_s,
                                     .kind = MetricKind::throughput,
                                     .better = Direction::higher,
                                     .description = "sequential fill: bytes written per second, MB = 10^6 bytes",
                                     .recorded_by = "precondition"};
inline constexpr MetricDef random_mb_s{.name = "random_mb_s",
                                       .unit = Unit::mb_s,
                                       .kind = MetricKind::throughput,
                                       .better = Direction::higher,
                                       .description = "random overwrite: bytes written per second, MB = 10^6 bytes",
                                       .recorded_by = "precondition"};
inline constexpr MetricDef bytes{.name = "bytes",
                                 .unit = Unit::bytes,
                                 .kind = MetricKind::throughput,
                                 .description = "bytes transferred",
                                 .recorded_by = "io precondition",
                                 .where = kHeadline | kGroup};
inline constexpr MetricDef read_bytes{.name = "read_bytes",
                                      .unit = Unit::bytes,
                                      .kind = MetricKind::throughput,
                                      .description = "bytes read",
                                      .recorded_by = "replay vdi",
                                      .where = kGroup};
inline constexpr MetricDef write_bytes{.name = "write_bytes",
                                       .unit = Unit::bytes,
                                       .kind = MetricKind::throughput,
                                       .description = "bytes written",
                                       .recorded_by = "replay vdi",
                                       .where = kGroup};
inline constexpr MetricDef bytes_written{.name = "bytes_written",
                                         .unit = Unit::bytes,
                                         .kind = MetricKind::throughput,
                                         .description = "bytes written by every pass",
                                         .recorded_by = "precondition"};
inline constexpr MetricDef region_bytes{.name = "region_bytes",
                                        .unit = Unit::bytes,
                                        .kind = MetricKind::setting,
                                        .description = "bytes preconditioned (the region)",
                                        .recorded_by = "precondition"};

}  // namespace drivelab::results::catalogue
