#pragma once
// The replayer's verification (replay.hpp "Verification"; replay_verify.cpp): which aligned units
// of each target this replay has written, the header a write carries at the start of each unit,
// and the checks of reads and of the final re-read. Used by the replaying thread only.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "drivelab/vdi/replay.hpp"

namespace drivelab::vdi::detail {

/// One bit per aligned unit of each target's region: set when a write of this replay completed
/// there, cleared when a discard punched a hole there. Offsets are the targets' file offsets (as
/// Replayer::map gives them); lengths are multiples of the alignment.
class VerifyMap {
 public:
  VerifyMap(const std::vector<ReplayTarget>& targets, std::uint32_t align_bytes, std::uint64_t seed);

  /// A write about to be issued: a Header {kVerifyMagic, unit offset, seed, target} at the start
  /// of each unit of `buf`.
  void stamp(std::uint32_t target, std::uint64_t offset, std::uint32_t length, std::byte* buf) const noexcept;
  /// A read about to be issued: check[u] = 1 where unit u was written before it (what its
  /// completion checks; a write still in flight is not yet written).
  void note_read(std::uint32_t target, std::uint64_t offset, std::uint32_t length, std::uint8_t* check) const noexcept;
  /// A read completed into `buf`: the headers of the units note_read marked, into `r`'s
  /// verify_checked_units, verify_mismatches and first few verify_errors.
  void check_read(std::uint32_t target, std::uint64_t offset, std::uint32_t length, const std::uint8_t* check,
                  const std::byte* buf, ReplayResult& r) const;
  /// A write completed: its units are written.
  void mark_written(std::uint32_t target, std::uint64_t offset, std::uint64_t length) noexcept;
  /// A hole punched: its units read back as zeros, no longer as written.
  void forget_written(std::uint32_t target, std::uint64_t offset, std::uint64_t length) noexcept;
  /// Re-reads every written unit (pread of its target) and checks its header, adding to `r`'s
  /// verify counters; returns the mismatches found now (a failed or short read is one).
  std::uint64_t verify_written(ReplayResult& r) const;

 private:
  struct Target {
    int fd = -1;
    std::uint64_t region_offset_bytes = 0;
    std::vector<std::uint64_t> written;  // bitmap of the region's units
  };
  std::vector<Target> targets_;
  std::uint32_t a_;
  std::uint64_t seed_;
};

}  // namespace drivelab::vdi::detail
