#pragma once
// The I/O loop of the `precondition` and `video` kinds: one thread keeps `depth` I/Os of one
// direction outstanding on one descriptor through an IoEngine, for chunks that a generator
// hands out (sequential sweep, random offsets, frames), and measures each I/O's completion
// latency (submit to reap, as the `io` kind: fio's `lat`).
//
// Write data is incompressible (xoshiro output) and every 4 KiB block of every write carries a
// unique 8-byte stamp, so neither compression nor 4 KiB deduplication in a drive gains anything
// (fio: scramble_buffers does the same per 512 bytes).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "drivelab/core/fd.hpp"
#include "drivelab/core/histogram.hpp"
#include "drivelab/io/engine.hpp"
#include "worker_failure.hpp"

namespace drivelab::emulators::detail {

struct PumpChunk {
  std::uint64_t offset_bytes = 0;
  std::uint32_t length_bytes = 0;  ///< at most the pump's max_xfer_bytes
};

/// What the pump measured since the previous take().
struct PumpSample {
  std::uint64_t ios = 0;
  std::uint64_t bytes = 0;
  LatencyHistogram latency;
};

class IoPump : public IssuerCounts {
 public:
  /// Creates the engine (make_engine: throws ConfigError / NotCompiledIn / EnvironmentError) and
  /// depth buffers of max_xfer_bytes, filled with incompressible data from `seed`. `file` is
  /// the path of `fd` as the user named it, for the failure's wording.
  IoPump(std::string_view engine, int fd, std::string file, std::uint32_t depth, std::uint32_t max_xfer_bytes,
         std::uint64_t seed);
  IoPump(const IoPump&) = delete;
  IoPump& operator=(const IoPump&) = delete;

  /// Issues next()'s chunks until it returns nullopt, or until keep_going() returns false
  /// (asked after every reap, at least every 10 ms); in-flight I/Os are always reaped before it
  /// returns. Returns true when next() ran out (the work is complete). Throws EnvironmentError
  /// on an I/O error or a short transfer, worded by io::storage_failure and timed by
  /// phase_clock() (start it as each phase begins).
  bool run(io::Op op, const std::function<std::optional<PumpChunk>()>& next, const std::function<bool()>& keep_going);

  /// Moves what was measured since the last call into `out` (old contents dropped).
  void take(PumpSample& out);
  std::uint32_t depth() const noexcept { return depth_; }
  const io::IoEngine& engine() const noexcept { return *engine_; }

 private:
  int fd_;
  std::string file_;
  std::uint32_t depth_;
  std::uint32_t max_xfer_;
  AlignedBuffer buffers_;  // before engine_: outlives the in-flight I/Os it holds
  std::unique_ptr<io::IoEngine> engine_;
  std::uint64_t stamp_ = 0;
  PumpSample sample_;
};

}  // namespace drivelab::emulators::detail
