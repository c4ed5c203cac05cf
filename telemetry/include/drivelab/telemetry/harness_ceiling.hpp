#pragma once
/// \file harness_ceiling.hpp
/// The harness's own ceiling on this host: how many I/Os per CPU-second drivelab issues and
/// completes when the device costs nothing. The null engine (io/ "null": every request completes
/// at submit, fio's null engine) driven by the io kind's path, io::Pump at queue depth 32 with
/// 4 KiB random reads and the pump's per-completion latency record under its sample lock, on one
/// thread. A test whose own I/Os per CPU-second of the drivelab process come within half of it
/// measured mostly the harness, not the drive (physics.hpp harness_finding()).
///
/// Measured once per run, before the first test (run_facts.hpp), for `cpu_budget` of the
/// measuring thread's CPU time (getrusage RUSAGE_THREAD), never longer than `wall_limit` of wall
/// time (a host so busy that the thread gets little CPU still ends in time).
#include <chrono>
#include <cstdint>

#include "drivelab/results/record.hpp"

namespace drivelab::telemetry {

struct HarnessCeiling {
  double iops_per_cpu_s = 0;  ///< I/Os completed per CPU-second of the measuring thread
  double iops = 0;            ///< I/Os completed per wall second
  std::uint64_t ios = 0;
  double wall_s = 0;
  double cpu_s = 0;  ///< the thread's user + system time
  std::uint32_t queue_depth = 32;
  std::uint32_t block_bytes = 4096;
  /// {"iops_per_cpu_s", "iops", "ios", "wall_s", "cpu_s", "engine": "null", "queue_depth",
  /// "block_bytes", "pattern": "randread", "threads": 1}.
  results::Json json() const;
};

/// Measures it (file comment). Throws what io::Pump throws (the null engine is always built).
HarnessCeiling measure_harness_ceiling(std::chrono::milliseconds cpu_budget = std::chrono::milliseconds(100),
                                       std::chrono::milliseconds wall_limit = std::chrono::milliseconds(1000));

}  // namespace drivelab::telemetry
