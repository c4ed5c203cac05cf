#pragma once
/// \file vdi_model.hpp
/// Generated VDI workloads: Boot, Initial Login and Monday Login of N virtual desktops, as full
/// clones or linked clones, each phase built from published measurements (docs/vdi.md "## VDI
/// models" gives every number and its source; phase_profile() returns them).
///
///  - Full clones: every desktop has its own disk image (trace device "desktop-<i>"), reads and
///    writes go to it; the images are disjoint.
///  - Linked clones (VMware View Composer): every desktop reads from ONE shared read-only replica
///    (device "replica") and writes to its own delta disk (device "delta-<i>").
///  - Staggered starts: desktop i starts its phase at i x stagger (a broker powering desktops on
///    in waves; Citrix CTX135986 "max number of starting desktops").
///  - Each desktop issues exactly round(iops x phase) requests in [start, start + phase), one per
///    equal sub-interval at a uniformly random point inside it (so the per-desktop rate is exact
///    and arrivals are not synchronised). Read or write and the block size are picked with the
///    phase's read ratio and the reads' or writes' size mix from two low-discrepancy (Weyl) sequences, u_k = frac(u_0 +
///    k x alpha) with alpha = golden ratio - 1 and sqrt(2) - 1 and a random u_0 per desktop, so
///    that even a short phase has the documented ratios to well under 1%, not within random
///    sampling error. Offsets are uniform over the image (aligned to the size, 4 KiB at least).
///  - Deterministic: the same parameters and seed give the same stream (xoshiro256**, core/rng.hpp).
/// The stream is produced in time order by merging the desktops' streams (a heap); memory is
/// O(desktops), whatever the phase length.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "drivelab/core/names.hpp"
#include "drivelab/core/rng.hpp"
#include "drivelab/trace/source.hpp"

namespace drivelab::results {
class TestRecorder;
}

namespace drivelab::vdi {

struct TraceSummary;  // replay.hpp

enum class VdiPhase { boot, initial_login, monday_login };
enum class CloneKind { full, linked };
inline constexpr EnumNames<VdiPhase, 3> kVdiPhaseNames{
    {{"boot", VdiPhase::boot}, {"initial_login", VdiPhase::initial_login}, {"monday_login", VdiPhase::monday_login}}};
inline constexpr EnumNames<CloneKind, 2> kCloneKindNames{{{"full", CloneKind::full}, {"linked", CloneKind::linked}}};
inline std::string_view to_string(VdiPhase p) noexcept { return name_of(kVdiPhaseNames, p); }
inline std::string_view to_string(CloneKind c) noexcept { return name_of(kCloneKindNames, c); }

/// One entry of a block-size mix: `size_bytes` for `pct` % of the requests.
struct SizeShare {
  std::uint32_t size_bytes = 4096;
  double pct = 100;
};

/// The published characteristics of one phase for one clone kind (docs/vdi.md, with sources).
struct PhaseProfile {
  double read_pct = 0;                 ///< % of requests that are reads
  double iops_per_desktop = 0;         ///< requests per second of one desktop during the phase
  double phase_s = 0;                  ///< how long one desktop's phase lasts, s
  std::vector<SizeShare> read_sizes;   ///< block-size mix of the reads, shares add up to 100
  std::vector<SizeShare> write_sizes;  ///< block-size mix of the writes, shares add up to 100
  /// Mean request size over reads and writes, bytes.
  double mean_size_bytes() const noexcept;
};

/// The profile the model uses for a phase and clone kind.
const PhaseProfile& phase_profile(VdiPhase phase, CloneKind clones) noexcept;

struct VdiModelParams {
  VdiPhase phase = VdiPhase::boot;
  CloneKind clones = CloneKind::linked;
  std::uint32_t desktops = 50;                         ///< 1..100000
  std::uint64_t image_bytes = std::uint64_t{1} << 30;  ///< each desktop image / the replica; each delta disk
  double stagger_s = 1.0;                              ///< start of desktop i = i x stagger_s
  double phase_s = 0;                                  ///< 0 = the profile's phase length (a short form sets it)
  std::uint64_t seed = 1;
};

/// Kind `vdi`'s check of a generated stream (`summary`: its summarize(), replay.hpp) against the
/// documented profile of `model`'s phase and clones (docs/vdi.md "## VDI models"): group `model`
/// gets the measured read %, mean request size and IOPS per desktop, and the check "model: the
/// generated workload matches its documented profile within 5%" is made when every desktop issues
/// at least 100 requests (fewer: the rounding alone can exceed 5%; the numbers are still recorded).
void check_against_profile(results::TestRecorder& rec, const VdiModelParams& model, const TraceSummary& summary);

/// The model as a TraceSource (one stream; create another for a second pass).
class VdiModelSource final : public trace::TraceSource {
 public:
  /// Throws ConfigError when the image is smaller than the largest request or desktops is 0.
  explicit VdiModelSource(const VdiModelParams& params);
  bool next(trace::TraceIo& io) override;
  const std::vector<std::string>& devices() const override { return devices_; }
  std::int64_t tick_ns() const override { return 1; }
  std::string describe() const override;

  /// Requests the whole stream holds.
  std::uint64_t total_ios() const noexcept { return per_desktop_ * params_.desktops; }
  std::uint64_t ios_per_desktop() const noexcept { return per_desktop_; }
  double phase_s() const noexcept { return phase_s_; }

 private:
  struct Desktop {
    std::int64_t next_ns = 0;
    std::uint64_t done = 0;
    double op_phase = 0;  // start of the desktop's low-discrepancy sequences, [0, 1)
    double size_phase = 0;
    Rng rng;
  };
  std::int64_t arrival(Desktop& d, std::uint32_t index);

  VdiModelParams params_;
  const PhaseProfile* profile_;
  double phase_s_ = 0;
  std::uint64_t per_desktop_ = 0;
  std::vector<Desktop> desktops_;
  std::vector<std::pair<std::int64_t, std::uint32_t>> heap_;  // (next time, desktop), min-heap
  std::vector<std::string> devices_;
};

}  // namespace drivelab::vdi
