#pragma once
/// \file pipeline.hpp
/// The render pipeline of the Houdini "Maelstrom" test as StorageReview describes it (docs/render.md):
///   1 load   — read the packed point blocks from the scene file, one thread;
///   2 unpack — decompress every block into one flat array of points, `threads` threads;
///   3 process — advect the points (P += v dt, age += dt), optional (the review does not run it);
///   4 repack — bucket the points on a Morton-ordered grid (counting sort by bucket) and gather them
///              by bucket, not by load order, into compressed blocks, `threads` threads;
///   5 write  — write the bucketed blocks to a file in the target and fdatasync, optional (off).
/// Each phase is timed and its paging counters sampled before and after. After the timed phases an
/// untimed pass computes the checksums that prove unpack -> repack lost nothing.
#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <type_traits>

#include "drivelab/render/pressure.hpp"
#include "drivelab/render/scene.hpp"

namespace drivelab::render {

enum class Phase { load = 0, unpack = 1, process = 2, repack = 3, write = 4 };
inline constexpr std::array<const char*, 5> kPhaseNames{"load", "unpack", "process", "repack", "write"};

struct PipelineOptions {
  std::filesystem::path scene;  ///< written by write_scene
  /// mmap mode: the flat array is a MAP_SHARED mapping of this file (created, removed at the end);
  /// empty: anonymous memory (modes none and swap).
  std::filesystem::path array_file;
  /// mmap mode: the array's resident set (page-cache pages of the file, by mincore(2)) is kept at or
  /// below this by writing back and dropping the oldest 16 MiB chunks (round-robin, like the
  /// kernel's clock); 0 = no limit.
  std::uint64_t resident_limit_bytes = 0;
  std::filesystem::path output;  ///< phase 5's file (when `write`)
  unsigned threads = 1;          ///< phases 2, 3 and 4
  bool process = false;
  bool write = false;
  std::uint32_t bucket_grid = 32;      ///< cells per axis (power of two)
  std::uint64_t points_per_block = 0;  ///< of the repacked blocks
  int zstd_level = 1;
  std::filesystem::path device_stat;   ///< the target's block device (pressure.hpp)
  std::function<bool()> stop;          ///< polled between blocks
  bool inject_unpack_failure = false;  ///< tests: throw in phase 2
};

struct PhaseStats {
  bool ran = false;
  double seconds = 0;
  PagingCounters paging;  ///< after - before
};

/// Trivially copyable: swap mode sends it from the pipeline process through a pipe.
struct PipelineResult {
  std::array<PhaseStats, 5> phases{};
  double total_seconds = 0;  ///< sum of the phases that ran
  bool completed = false;    ///< every configured phase ran to its end
  bool failed = false;
  char error[512] = {};
  std::uint64_t points = 0;
  std::uint64_t blocks_in = 0, blocks_out = 0;
  std::uint64_t packed_in_bytes = 0;  ///< compressed bytes loaded
  std::uint64_t repacked_bytes = 0;   ///< compressed bytes of the bucketed blocks
  std::uint64_t written_bytes = 0;    ///< phase 5
  std::uint64_t array_bytes = 0;
  PointChecksum flat_checksum;       ///< the flat array after the timed phases
  PointChecksum repacked_checksum;   ///< every point of every bucketed block
  bool buckets_in_order = false;     ///< the bucketed blocks' points are in non-decreasing bucket order
  std::uint64_t evicted_bytes = 0;   ///< mmap: bytes the resident-set limiter dropped
  std::uint64_t peak_rss_bytes = 0;  ///< getrusage ru_maxrss of the pipeline process
};
static_assert(std::is_trivially_copyable_v<PipelineResult>);

/// Runs the phases on `options.scene`. Never throws: errors are returned as failed + error.
PipelineResult run_pipeline(const PipelineOptions& options) noexcept;

}  // namespace drivelab::render
