#pragma once
// The I/O loop of the `precondition` and `video` kinds: one thread keeps `depth` I/Os of one
// direction outstanding on one descriptor, for chunks that a generator hands out (sequential
// sweep, random offsets, frames), and measures each I/O's completion latency (from just before
// its queue() to the reap that returned it, as the `io` kind: fio's `lat`). A thin user of
// io::Pump (io/pump.hpp), which owns the engine, the slots and the loop's rules: closed loop,
// iodepth_batch_submit = 1, one completion per reap at least.
//
// Write data is incompressible (xoshiro output) and every 4 KiB block of every write carries a
// unique 8-byte stamp (the pump's scramble_writes), so neither compression nor 4 KiB
// deduplication in a drive gains anything (fio: scramble_buffers does the same per 512 bytes).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "drivelab/core/errors.hpp"
#include "drivelab/core/histogram.hpp"
#include "drivelab/io/engine.hpp"
#include "drivelab/io/pump.hpp"
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
         std::uint64_t seed)
      : pump_(engine, {.queue_depth = depth}, {.slot_bytes = max_xfer_bytes, .fill_seed = seed}, {&fd, 1},
              {std::move(file)}) {}
  IoPump(const IoPump&) = delete;
  IoPump& operator=(const IoPump&) = delete;

  /// Issues next()'s chunks (a callable returning std::optional<PumpChunk>) until it returns
  /// nullopt, or until keep_going() (a callable returning bool) returns false (asked after every
  /// reap); in-flight I/Os are always reaped before it returns. Returns true when next() ran out
  /// (the work is complete). Throws EnvironmentError on an I/O error or a short transfer, worded
  /// by io::storage_failure and timed by phase_clock() (start it as each phase begins).
  template <class Next, class KeepGoing>
  bool run(io::Op op, Next&& next, KeepGoing&& keep_going);

  /// Moves what was measured since the last call into `out` (old contents dropped).
  void take(PumpSample& out) {
    out.latency.reset();
    out.ios = out.bytes = 0;
    std::swap(out, sample_);
  }
  std::uint32_t depth() const noexcept { return pump_.depth(); }
  const io::IoEngine& engine() const noexcept { return pump_.engine(); }

 private:
  io::Pump pump_;
  PumpSample sample_;
};

template <class Next, class KeepGoing>
bool IoPump::run(io::Op op, Next&& next, KeepGoing&& keep_going) {
  struct Driver {
    // No kSharedSample: take() runs on this thread (in keep_going), no lock needed.
    IoPump& p;
    const io::Op op;
    Next& next;
    KeepGoing& keep;
    bool ran_out = false;
    std::string error;

    std::int64_t next_due_ns() const noexcept { return ran_out ? io::kNever : io::kDueNow; }
    bool prepare(io::IoRequest& r, std::uint32_t) {
      const std::optional<PumpChunk> c = next();
      if (!c) {
        ran_out = true;
        return false;
      }
      r.op = op;
      r.file_index = 0;
      r.offset_bytes = c->offset_bytes;
      r.length_bytes = c->length_bytes;
      return true;
    }
    bool keep_going() { return error.empty() && keep(); }
    void failed(const io::PumpCompletion&, const io::FailedIo& io) {
      if (error.empty()) error = p.phase_.failure(io);
    }
    PumpSample& sample() noexcept { return p.sample_; }
  } driver{*this, op, next, keep_going, false, {}};
  struct Counts {  // also when run() throws: the emulator reports them
    IoPump& p;
    ~Counts() {
      p.issued_ = p.pump_.issued();
      p.completed_ = p.pump_.completed();
    }
  } counts{*this};
  const io::PumpEnd end = pump_.run(driver);
  if (!driver.error.empty()) throw EnvironmentError(driver.error);
  return end == io::PumpEnd::exhausted;  // next() is not asked once stopping: every chunk was done
}

}  // namespace drivelab::emulators::detail
