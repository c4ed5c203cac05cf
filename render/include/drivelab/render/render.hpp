#pragma once
/// \file render.hpp
/// The `render:` section of a test of kind `render`: a Houdini-like swap-heavy render pipeline
/// (StorageReview's "Houdini / Maelstrom" test; docs/render.md has the model and every source).
///
///     - name: houdini
///       kind: render
///       render: {mode: swap, memory_budget: 2GiB, threads: 0}
///
/// prepare writes the scene (packed point blocks, zstd, ~10 MB each) to the target and sets up the
/// memory pressure; run times the phases of pipeline.hpp (seconds per phase and in total, lower is
/// better) with the paging I/O of each; verify checks the point checksums. `duration` does not
/// apply: a render is timed to its end (stop it with SIGINT).
#include <cstdint>
#include <memory>
#include <string>

#include "drivelab/config/document.hpp"
#include "drivelab/render/pressure.hpp"
#include "drivelab/results/record.hpp"
#include "drivelab/runner/emulator.hpp"

namespace drivelab::render {

struct RenderConfig {
  MemoryMode mode = MemoryMode::swap;                          ///< none | mmap | swap (the review's)
  std::uint64_t memory_budget_bytes = std::uint64_t{2} << 30;  ///< swap: cgroup cap; mmap: resident limit
  std::uint64_t points = 0;                                    ///< 0: from the budget
  double working_set_factor = 1.5;                             ///< unpacked array = factor x budget
  std::string layout = "flip";                                 ///< scene.hpp point layouts
  std::uint64_t block_bytes = 10'000'000;                      ///< unpacked bytes per packed block (~10 MB)
  unsigned threads = 0;                                        ///< 0: every online CPU
  bool process = false;                                        ///< phase 3 (off, as the review)
  bool write = false;                                          ///< phase 5 (off, as the review)
  std::uint32_t bucket_grid = 32;                              ///< repack buckets per axis
  int zstd_level = 1;
  std::uint64_t swap_file_bytes = 0;  ///< 0: automatic (docs/render.md)
  bool baseline = false;              ///< also time mode none in RAM, report the ratio
  bool keep_scene = false;
  /// Tests only (not a YAML key): "prepare" throws after the swap file and cgroup exist,
  /// "pipeline" fails in the unpack phase.
  std::string inject_failure;

  /// Points of the run (points, or factor x budget / bytes per point).
  std::uint64_t point_count() const;
};

/// Decodes a `render:` section (undefined: defaults); problems go to its diagnostics.
RenderConfig decode_render(const config::Node& section);
results::Json to_json(const RenderConfig& config);

/// The emulator for `config` (what the registry's decode returns).
std::unique_ptr<runner::Emulator> make_render_emulator(RenderConfig config);

/// Adds kind `render` to `registry`.
void register_emulators(runner::Registry& registry);

}  // namespace drivelab::render
