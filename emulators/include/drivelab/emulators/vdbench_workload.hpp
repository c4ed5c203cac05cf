#pragma once
/// \file vdbench_workload.hpp
/// The workload model of kind `vdbench`: turns workload definitions into a stream of typed I/O
/// requests (which workload, read or write, offset, length), and fills write buffers with data of
/// a chosen compressibility and dedupability. It knows no engine and no clock; the same seed gives
/// the same stream. docs/synthetic.md explains each rule and its vdbench source.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "drivelab/core/rng.hpp"
#include "drivelab/emulators/vdbench_config.hpp"
#include "drivelab/io/engine.hpp"

namespace drivelab::emulators {

/// One generated I/O.
struct IoSpec {
  std::uint32_t workload = 0;  ///< index into the workload definitions
  io::Op op = io::Op::read;
  bool random = true;  ///< false: continued sequentially from the previous I/O
  std::uint64_t offset_bytes = 0;
  std::uint32_t length_bytes = 0;
};

/// The byte span [offset, offset + length) of the target that the workloads address.
struct Region {
  std::uint64_t offset_bytes = 0;
  std::uint64_t length_bytes = 0;
};

/// Generates the I/Os of one stream (one engine thread) of a set of workloads.
///
///  - workload: chosen per I/O with probability skew % (effective_skews);
///  - op: read with probability rdpct %;
///  - xfersize: drawn from the workload's distribution;
///  - offset: with probability seekpct % a random multiple of the xfersize inside the workload's
///    range (uniform; a hotband is a range too, see docs/synthetic.md), otherwise the block right
///    after this workload's previous I/O in this stream, wrapping to the range start at its end.
///    Each stream starts its sequential cursor at its own 1/streams slice of the range, so that
///    sequential streams do not read the same blocks (fio: offset_increment).
/// Range bounds are rounded to `alignment_bytes` (lower bound up, upper bound down).
class WorkloadStream {
 public:
  /// Throws ConfigError when a range is smaller than one of its workload's xfersizes, or an
  /// xfersize is not a multiple of `alignment_bytes` ("workloads[1]: xfersize 1 KiB is not a
  /// multiple of the O_DIRECT alignment (4096 bytes)").
  WorkloadStream(const std::vector<WorkloadDef>& workloads, Region region, std::uint32_t alignment_bytes,
                 std::uint32_t stream_index, std::uint32_t streams, Rng rng);

  /// The stream's next I/O, every field of `s` written. The jobs' hot path writes it straight
  /// into the slot: a returned IoSpec, stored field by field and read back whole, stalled store
  /// forwarding (about 15 ns an I/O on the null engine, issue 31's io vs vdbench).
  void next(IoSpec& s) noexcept;
  IoSpec next() noexcept {
    IoSpec s;
    next(s);
    return s;
  }
  std::size_t workloads() const noexcept { return defs_.size(); }

 private:
  struct Def {
    std::vector<double> xfer_cdf;  // cumulative share, last = 1
    std::vector<std::uint32_t> xfer_bytes;
    double read_p;
    double random_p;
    std::uint64_t lo;  // absolute bytes
    std::uint64_t hi;
    std::uint64_t cursor;  // next sequential offset
    /// Random offsets' block count when the workload has one xfersize ((hi - lo) / xfersize),
    /// so that next() divides once per workload, not once per I/O; 0 with several xfersizes.
    std::uint64_t blocks_one_xfer = 0;
  };
  std::vector<Def> defs_;
  std::vector<double> workload_cdf_;
  Rng rng_;
};

/// Fills write buffers, one dedup unit at a time:
///  - dedup: each unit is unique with probability 1/dedupratio (its content is never repeated),
///    otherwise a copy of one of kDuplicateSets fixed contents, so that a deduplicating drive keeps
///    about written/dedupratio distinct units (vdbench dedupratio= defines the ratio the same way:
///    total blocks / distinct blocks);
///  - compression: the first ceil(unit/compratio) bytes of each unit (at least its 16-byte
///    identity) are pseudo-random, the rest zeros, so a block compressor (zstd, lz4) reaches about
///    compratio:1 on each unit and cannot find repeats between units.
/// The random bytes are copied from a per-filler pool at an offset derived from the unit's
/// identity, so filling costs a memcpy, not a random-number draw per byte. A buffer this filler
/// laid out before (same length, `laid_out` = true, no dedup in effect) only gets each unit's
/// 16-byte identity rewritten, as fio's scramble_buffers does: every unit is still unique and
/// compresses the same, and the job thread does not spend the time between a completion and the
/// next submission copying (which showed as fewer outstanding I/Os than threads at iorate=max:
/// Little's law off by 4-7% for 4 KiB random and 64 KiB sequential writes).
class WriteFiller {
 public:
  static constexpr std::uint32_t kDuplicateSets = 64;
  WriteFiller(double compratio, double dedupratio, std::uint32_t dedupunit_bytes, Rng rng);
  void fill(std::span<std::byte> buffer, bool laid_out = false) noexcept;
  std::uint64_t units() const noexcept { return units_; }
  std::uint64_t unique_units() const noexcept { return unique_units_; }

 private:
  void fill_unit(std::byte* dst, std::size_t len, std::uint64_t identity) noexcept;
  std::size_t head_bytes(std::size_t len) const noexcept;

  double compratio_;
  double unique_p_;
  std::uint32_t unit_;
  Rng rng_;
  std::uint64_t tag_;  // distinguishes fillers (streams, workloads)
  std::vector<std::byte> pool_;
  std::vector<std::byte> duplicates_;  // kDuplicateSets units, same in every filler
  std::uint64_t units_ = 0;
  std::uint64_t unique_units_ = 0;
};

}  // namespace drivelab::emulators
