#pragma once
/// \file precondition.hpp
/// The `precondition:` section of a test of kind `precondition` (docs/targets.md): bring the
/// target to a used, steady state before the tests that follow, as review labs do ("fill the whole
/// drive surface, then test on a part of its capacity") and as SNIA's Solid State Storage PTS
/// prescribes (a sequential 128 KiB fill, then random writes until steady state):
///
///     - name: precondition
///       kind: precondition
///       precondition: {random_passes: 2}          # everything else has defaults
///     - name: randread
///       kind: video                               # or any kind with a region: key
///       video: {region: first 25%}
///
/// Pass 1 (fill): the whole region written once, sequentially, xfersize (128 KiB) at iodepth
/// (32), O_DIRECT, incompressible data. Passes 2..N+1 (random_passes: N): random_xfersize (4 KiB)
/// writes at random_iodepth (32) to uniformly random aligned offsets, each pass writing as many
/// bytes as the region holds (so N passes write N x capacity), or random_pass_size when given
/// (a shorter pass, e.g. for a quick check in CI). Progress with ETA, an interval
/// record every `interval:` (MB/s, IOPS, mean latency, percent done), and per pass: bytes,
/// seconds, MB/s. The test's `duration:` and `warmup:` do not apply: its length is its capacity.
///
/// Targets: a block device (the region of the device), or a directory: then the data file of the
/// test named by `for_test` (default: this test's own name) is created with `file_size`, filled
/// and marked as filled, so that test reuses the preconditioned file instead of filling it again
/// (it must ask for the same size).
#include <cstdint>
#include <optional>
#include <string>

#include "drivelab/config/document.hpp"
#include "drivelab/io/target_file.hpp"
#include "drivelab/results/record.hpp"

namespace drivelab::emulators {

struct PreconditionConfig {
  std::string engine = "io_uring";                         ///< io_uring | psync (io/engine.hpp)
  std::optional<io::Region> region;                        ///< default: the whole target
  std::uint64_t xfersize_bytes = 128 * 1024;               ///< fill transfer size (SNIA PTS: 128 KiB)
  std::uint32_t iodepth = 32;                              ///< fill outstanding I/Os
  std::uint32_t random_passes = 0;                         ///< 0..100 passes of random writes
  std::uint64_t random_xfersize_bytes = 4096;              ///< random-pass transfer size
  std::uint32_t random_iodepth = 32;                       ///< random-pass outstanding I/Os
  std::uint64_t random_pass_size_bytes = 0;                ///< bytes per random pass (0: the region's size)
  std::string for_test;                                    ///< directory targets: whose data file
  std::uint64_t file_size_bytes = std::uint64_t{1} << 30;  ///< directory targets: its size
};

/// Decodes a `precondition:` section (undefined: all defaults); problems go to its diagnostics.
PreconditionConfig decode_precondition(const config::Node& section);
/// The effective configuration (re-decodable).
results::Json to_json(const PreconditionConfig& config);

}  // namespace drivelab::emulators
