#pragma once
/// \file region.hpp
/// The `region:` key of the kinds that can test a part of their target (precondition, video, vdbench;
/// docs/targets.md): where in the file or block device the test's I/O goes.
///
///     region: first 25%                    # or "all", "first 10GiB", "25%" (= first 25%)
///     region: {offset: 50%, size: 10GiB}   # offset and size: a percentage of the target's
///                                          # capacity or a size; both optional (0%, 100%)
///
/// Resolution against the real capacity (1 MiB alignment, clipping at the end) happens when the
/// target is opened: io::resolve_region (io/target_file.hpp).
#include <optional>

#include "drivelab/config/document.hpp"
#include "drivelab/io/target_file.hpp"
#include "drivelab/results/record.hpp"

namespace drivelab::emulators {

/// Decodes a `region:` node: nullopt when undefined or null. Problems go to the node's
/// diagnostics ("tests[1].video.region.size: '0%' ...").
std::optional<io::Region> decode_region(const config::Node& node);

/// The effective value: null, "all", "first 25%", or {offset: "50%", size: "10 GiB"}
/// (decode_region reads each back).
results::Json region_json(const std::optional<io::Region>& region);

}  // namespace drivelab::emulators
