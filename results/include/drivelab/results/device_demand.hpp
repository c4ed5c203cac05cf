#pragma once
/// \file device_demand.hpp
/// The device's demand per unit of the application's work (docs/telemetry.md, "Demand per unit of
/// the application's work"; issue 33): what the drive did for each transaction, New-Order,
/// application I/O, byte or frame. One formula for a rank's test (telemetry/test_telemetry.hpp,
/// over its measured phase) and for a merge of hosts' records (merge.hpp: the distinct devices'
/// counts over the hosts' work, docs/multihost.md).
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "drivelab/results/catalogue.hpp"
#include "drivelab/results/record.hpp"

namespace drivelab::results {

/// The value of headline metric `def` in `test`, when recorded, finite and above 0.
std::optional<double> positive_metric(const TestRecord& test, const MetricDef& def);
/// The application's bytes over a window of `seconds`: its `bytes` metric, else its
/// mb_s or throughput_mb_s x seconds (MB = 10^6 bytes).
std::optional<double> application_bytes(const TestRecord& test, double seconds);
/// Whether `test` ran a curve (details `points` with more than one run: vdbench `iorate: curve`,
/// tpcc/sysbench `rate: curve`): its headline metrics are the max run's, while a window over the
/// measured phase (device counters, the process's CPU) covers every point and its warm-up, so a
/// ratio of the two is no figure of the test.
bool is_curve(const TestRecord& test);

/// The device's counts over a window (/sys/block/<dev>/stat deltas, telemetry/block_stats.hpp).
struct DeviceTotals {
  std::uint64_t read_ios = 0, write_ios = 0, flush_ios = 0;
  std::uint64_t read_bytes = 0, write_bytes = 0;
};

/// The device's demand per unit of the application's work in `test` (its headline metrics), over
/// a window of `seconds`:
///  - per transaction (`transactions`: tpcc, sysbench) and per New-Order (`new_orders`: tpcc):
///    device bytes read and written, reads, writes and flushes;
///  - per application I/O (`ios`: io, vdbench, replay, vdi): device reads and writes;
///  - per application byte (`bytes`, else `mb_s` x seconds): device bytes read and written, the
///    device-level amplification seen from the host (MB = 10^6 bytes);
///  - per frame (video: details.frames, the frames the measured phase read and wrote): device
///    bytes read per frame read, device bytes written per frame written.
/// A unit of work the test did not record, or recorded as 0, gives no figure.
std::vector<std::pair<const MetricDef*, double>> demand_metrics(const TestRecord& test, const DeviceTotals& device,
                                                                double seconds);

}  // namespace drivelab::results
