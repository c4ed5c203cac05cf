#pragma once
/// \file curve.hpp
/// Rules shared by every kind that runs vdbench-style curves (kind `vdbench`, docs/synthetic.md;
/// kinds `replay` and `vdi`, docs/vdi.md): a max run, then points at a percentage of its rate.
#include <cstddef>
#include <cstdint>

namespace drivelab::runner {

/// The most points a `curve:` list takes (kinds vdbench, replay, vdi): each point is a run of its
/// own warm-up and measured time, and vdbench's curves have about ten; a longer list is refused
/// at its key rather than planned.
inline constexpr std::size_t kMaxCurvePoints = 1000;

/// vdbench's curve rate: pct % of the max run's average IOPS (both truncated to integers, as
/// vdbench computes it, RD_entry.set_iorate), rounded UP to a multiple of 100 when above 1,000
/// IOPS, else of 10. 0 when max_iops or pct is not positive.
/// curve_rate(12345.6, 10) = 1300, curve_rate(950, 50) = 480, curve_rate(2000, 50) = 1000.
std::uint64_t curve_rate(double max_iops, double pct) noexcept;

}  // namespace drivelab::runner
