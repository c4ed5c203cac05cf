#pragma once
/// \file catalogue/operations.hpp
/// The metric catalogue's declarations (results/catalogue.hpp): figure families, operations (IOPS, TPS, counts, sizing
/// answers) and throughput. Included by catalogue.hpp, which lists every declaration in kAll; include catalogue.hpp,
/// not this file.
#include "drivelab/results/catalogue/declare.hpp"

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
inline constexpr MetricDef iops = operation_rate(
    "iops", Unit::per_s, kHeadline | kGroup | kInterval, "io vdbench replay vdi precondition",
    "I/Os completed per second", {.word = "IOPS", .traits = kOperationsFeed | kSummedOverHosts | kCharted});
inline constexpr MetricDef ios = operation_count("ios", kHeadline | kGroup | kInterval, "io vdbench replay vdi",
                                                 "I/Os completed", {.traits = kOperationsFeed | kSummedOverHosts});
inline constexpr MetricDef read_ios = operation_count("read_ios", kGroup, "vdbench replay vdi", "read I/Os completed");
inline constexpr MetricDef write_ios =
    operation_count("write_ios", kGroup, "vdbench replay vdi", "write I/Os completed");
inline constexpr MetricDef achieved_iops =
    operation_rate("achieved_iops", Unit::per_s, kGroup, "vdbench replay vdi",
                   "I/Os completed per second at a curve point", {.word = "IOPS"});
inline constexpr MetricDef peak_iops =
    operation_rate("peak_iops", Unit::per_s, kGroup, "vdbench replay vdi",
                   "highest achieved IOPS of any run of the curve", {.word = "IOPS", .merge = HostMerge::per_host});
inline constexpr MetricDef max_run_iops =
    operation_rate("max_run_iops", Unit::per_s, kGroup, "vdbench replay vdi",
                   "the rate the curve points are percentages of", {.word = "IOPS"});
inline constexpr MetricDef iops_per_cpu_s =
    metric("iops_per_cpu_s", Unit::per_cpu_s, MetricKind::cpu, kHeadline, "io",
           "I/Os per CPU second of the process (user + system)", {.better = Direction::higher});
inline constexpr MetricDef write_fps =
    operation_rate("write_fps", Unit::per_s, kHeadline | kInterval, "video", "frames written per second",
                   {.word = "fps", .traits = kOperationsFeed | kSummedOverHosts});
inline constexpr MetricDef read_fps =
    operation_rate("read_fps", Unit::per_s, kHeadline | kInterval, "video", "frames read per second",
                   {.word = "fps", .traits = kOperationsFeed | kSummedOverHosts});
inline constexpr MetricDef write_passes =
    metric("write_passes", Unit::count, MetricKind::count, kHeadline, "video", "complete write passes over the file");
inline constexpr MetricDef read_passes =
    metric("read_passes", Unit::count, MetricKind::count, kHeadline, "video", "complete read passes over the file");
inline constexpr MetricDef tps =
    operation_rate("tps", Unit::per_s, kHeadline | kGroup | kInterval, "tpcc sysbench",
                   "committed transactions (sysbench: events) per second",
                   {.word = "TPS", .traits = kOperationsFeed | kSummedOverHosts | kCharted});
inline constexpr MetricDef tpm_c = operation_rate("tpm_c", Unit::per_min, kHeadline | kGroup | kInterval, "tpcc",
                                                  "committed New-Order transactions per minute (tpmC-like)",
                                                  {.word = "tpmC", .traits = kSummedOverHosts});
inline constexpr MetricDef nopm =
    operation_rate("nopm", Unit::per_min, kHeadline, "tpcc", "HammerDB's New-Orders per minute", {.word = "NOPM"});
inline constexpr MetricDef qps =
    operation_rate("qps", Unit::per_s, kHeadline | kGroup | kInterval, "sysbench",
                   "queries per second (read + write + other)", {.word = "QPS", .traits = kSummedOverHosts});
// Sizing answers (runner/curve.hpp max_rate_within; issue 32): the highest rate of a curve whose
// latency figure stays within the protocol's `slo:` bound, interpolated between the two points
// that bracket the crossing; 0 when the lowest point is already beyond the bound.
inline constexpr MetricDef max_iops_under_p99 =
    sizing_answer("max_iops_under_p99", iops, "vdbench",
                  "curve: the highest IOPS whose p99 latency stays within slo.p99_ms (interpolated)");
inline constexpr MetricDef max_iops_under_mean =
    sizing_answer("max_iops_under_mean", iops, "vdbench",
                  "curve: the highest IOPS whose mean latency stays within slo.mean_ms (interpolated)");
inline constexpr MetricDef max_tps_under_slo =
    sizing_answer("max_tps_under_slo", tps, "tpcc sysbench",
                  "rate: curve: the highest TPS whose latency figures all stay within the slo bounds (interpolated)");
inline constexpr MetricDef max_tpmc_under_slo = sizing_answer(
    "max_tpmc_under_slo", tpm_c, "tpcc", "rate: curve: tpm_c at max_tps_under_slo (interpolated the same way)");
inline constexpr MetricDef max_qps_under_slo = sizing_answer(
    "max_qps_under_slo", qps, "sysbench", "rate: curve: qps at max_tps_under_slo (interpolated the same way)");
inline constexpr MetricDef reads_s = operation_rate("reads_s", Unit::per_s, kHeadline | kInterval, "sysbench",
                                                    "read queries per second", {.traits = kSummedOverHosts});
inline constexpr MetricDef writes_s = operation_rate("writes_s", Unit::per_s, kHeadline | kInterval, "sysbench",
                                                     "write queries per second", {.traits = kSummedOverHosts});
inline constexpr MetricDef other_s =
    operation_rate("other_s", Unit::per_s, kHeadline | kInterval, "sysbench",
                   "other queries per second (BEGIN, COMMIT, ...)", {.traits = kSummedOverHosts});
inline constexpr MetricDef transactions =
    operation_count("transactions", kHeadline, "tpcc sysbench", "committed transactions (sysbench: events)");
inline constexpr MetricDef new_orders = operation_count("new_orders", kHeadline, "tpcc", "committed New-Orders");
inline constexpr MetricDef queries =
    operation_count("queries", kHeadline, "sysbench", "queries completed (read + write + other)");
inline constexpr MetricDef reads = operation_count("reads", kHeadline, "sysbench", "read queries completed");
inline constexpr MetricDef writes = operation_count("writes", kHeadline, "sysbench", "write queries completed");
inline constexpr MetricDef other = operation_count("other", kHeadline, "sysbench", "other queries completed");
inline constexpr MetricDef events =
    operation_count("events", kHeadline, "sysbench", "sysbench's \"total number of events\"");
inline constexpr MetricDef events_avg =
    operation_count("events_avg", kGroup, "sysbench", "events per thread, mean (sysbench's threads fairness)");
inline constexpr MetricDef events_stddev =
    operation_count("events_stddev", kGroup, "sysbench", "events per thread, standard deviation");
inline constexpr MetricDef count =
    operation_count("count", kGroup, "tpcc", "completed transactions of the type (commits + business rollbacks)");
inline constexpr MetricDef arrival_rate = metric("arrival_rate", Unit::per_s, MetricKind::setting, kHeadline | kGroup,
                                                 "tpcc sysbench", "open loop: transactions that arrived per second");

// ---- throughput --------------------------------------------------------------------------------
inline constexpr MetricDef throughput_mb_s = throughput_rate(
    "throughput_mb_s", kHeadline | kGroup, "io vdbench replay vdi", "bytes transferred per second, MB = 10^6 bytes");
inline constexpr MetricDef mb_s =
    throughput_rate("mb_s", kGroup | kInterval, "io vdbench replay vdi precondition",
                    "bytes transferred per second, MB = 10^6 bytes", {.traits = kBytesFeed | kSummedOverHosts});
inline constexpr MetricDef write_mb_s =
    throughput_rate("write_mb_s", kHeadline | kInterval, "video", "frame writes, bytes per second, MB = 10^6 bytes",
                    {.traits = kBytesFeed | kSummedOverHosts});
inline constexpr MetricDef read_mb_s =
    throughput_rate("read_mb_s", kHeadline | kInterval, "video", "frame reads, bytes per second, MB = 10^6 bytes",
                    {.traits = kBytesFeed | kSummedOverHosts});
inline constexpr MetricDef fill_mb_s = throughput_rate("fill_mb_s", kHeadline, "precondition",
                                                       "sequential fill: bytes written per second, MB = 10^6 bytes");
inline constexpr MetricDef random_mb_s = throughput_rate("random_mb_s", kHeadline, "precondition",
                                                         "random overwrite: bytes written per second, MB = 10^6 bytes");
inline constexpr MetricDef bytes = bytes_moved("bytes", kHeadline | kGroup, "io precondition", "bytes transferred");
inline constexpr MetricDef read_bytes = bytes_moved("read_bytes", kGroup, "replay vdi", "bytes read");
inline constexpr MetricDef write_bytes = bytes_moved("write_bytes", kGroup, "replay vdi", "bytes written");
inline constexpr MetricDef bytes_written =
    bytes_moved("bytes_written", kHeadline, "precondition", "bytes written by every pass");
inline constexpr MetricDef region_bytes = metric("region_bytes", Unit::bytes, MetricKind::setting, kHeadline,
                                                 "precondition", "bytes preconditioned (the region)");

}  // namespace drivelab::results::catalogue
