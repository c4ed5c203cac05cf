#pragma once
// drivelab::trace — the one request type every block trace reader and every VDI session model
// produces, and the streaming interface the replayer consumes (docs/vdi.md).
//
// A trace is read as a stream, never loaded whole: memory stays bounded by the reader's buffer
// whatever the trace length. Readers convert each format's units (Windows FILETIME ticks,
// microseconds, 512-byte sectors, ...) to the units below; the per-format units are written down
// in each reader's header and in docs/vdi.md.

#include <cstdint>
#include <string>
#include <vector>

namespace drivelab::trace {

/// The operation of one traced request. `flush` and `discard` are kept so that `trace stat`
/// counts them; the replayer skips or maps them as documented in replay.hpp.
enum class TraceOp : std::uint8_t { read, write, flush, discard };

/// One block request as recorded: when it arrived, on which trace device, where and how large.
struct TraceIo {
  /// `flags` bits, as blkparse's RWBS field shows them (blktrace blkparse_fmt.c fill_rwbs(): an
  /// 'F' before the operation letter is the request's preflush, an 'F' after it FUA; "FWFS" is a
  /// write with both). A flush-only request (RWBS "FN", or "FWS" without data) is TraceOp::flush.
  static constexpr std::uint8_t kPreflush = 1;  ///< the device cache is flushed before this request (REQ_PREFLUSH)
  static constexpr std::uint8_t kFua = 2;       ///< forced unit access: durable on completion (REQ_FUA)
  static constexpr std::uint8_t kKnownFlags = kPreflush | kFua;

  std::int64_t time_ns = 0;          ///< arrival time relative to the trace's first request, ns
  std::uint64_t offset_bytes = 0;    ///< byte offset on the trace device (sectors already scaled)
  std::uint32_t size_bytes = 0;      ///< transfer size in bytes
  std::uint32_t device = 0;          ///< dense index into TraceSource::devices()
  TraceOp op = TraceOp::read;
  std::uint8_t flags = 0;            ///< kPreflush | kFua; 0 where the format records neither
};

/// A stream of TraceIo in file (or generation) order. Not thread-safe; one consumer.
class TraceSource {
 public:
  virtual ~TraceSource() = default;

  /// Fills `io` with the next request and returns true, or returns false at the end of the stream.
  /// Throws drivelab::trace::TraceFormatError ("file:line: reason") on malformed input.
  virtual bool next(TraceIo& io) = 0;

  /// Names of the trace devices seen so far, indexed by TraceIo::device (e.g. "3" for UMass ASU 3,
  /// "8,16" for a blkparse major,minor). Grows while the stream is read.
  [[nodiscard]] virtual const std::vector<std::string>& devices() const = 0;

  /// Resolution of the format's timestamps in ns (100 for FILETIME, 1000 for microseconds, ...).
  /// The replayer spreads requests that share one timestamp evenly within this tick.
  [[nodiscard]] virtual std::int64_t tick_ns() const = 0;

  /// Human-readable name of the source for messages and the result record, e.g. the file name and
  /// format ("umass_tpcc_small.trace (umass)") or the VDI model ("boot, linked clones, 50 desktops").
  [[nodiscard]] virtual std::string describe() const = 0;
};

}  // namespace drivelab::trace
