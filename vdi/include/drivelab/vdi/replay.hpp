#pragma once
/// \file replay.hpp
/// The timed replayer: a TraceSource (trace/source.hpp: a trace file or a VDI model) issued onto one
/// or several target files through an I/O engine (io/engine.hpp), open loop, as docs/vdi.md
/// "## Replay" describes.
///
///  - Timing: each I/O has an intended start = replay start + trace time x `time_scale` (1 = as
///    recorded, 0.5 = twice as fast; fitted from `target_iops` when that is given: time_scale =
///    trace IOPS / target IOPS). I/Os that share one timestamp of a coarse trace are spread evenly
///    within TraceSource::tick_ns() (k I/Os at t get t, t + tick/k, ...). I/Os are issued in trace
///    order, so one stamped earlier than its predecessor (an unsorted trace) has its predecessor's
///    intended start: the later of the two is when it could first start, and every measurement
///    below counts from it (issue 29: from the raw earlier stamp, a 4-request trace replayed in
///    0.22 s reported a latency p99 of 5 s). TraceSummary counts such steps. It is issued when that
///    time has come AND one of the `queue_depth` slots is free; it is never dropped or re-timed
///    (no coordinated omission). `no_stall` issues every I/O as soon as a slot is free, in trace
///    order (fio: replay_no_stall), and then measures the maximum sustained rate.
///  - Measured per I/O: latency = completion - intended start; service latency = completion -
///    submission (fio's `lat`); lateness = submission - intended start. An I/O that finds every
///    slot busy at its intended start is counted in `overflow_ios`: an open-loop replay that
///    cannot keep up says so. The backlog is the number of requests whose intended start has come
///    but that are not yet issued: `max_backlog` its most at any instant, `mean_backlog` its time
///    average over the replay (= the sum of lateness / the replay's span, Little's law). A replay
///    whose lateness p99 exceeds kLatenessBoundNs (1 ms) is warned about in the record.
///  - Mapping: trace device d is given a slot of the targets: device d goes to target d mod N
///    (N = number of target files), and within it to slot d div N of ceil(D / N) equal slots
///    (D = number of trace devices). A trace offset is shifted by `offset_shift_bytes`, folded into
///    its slot (modulo the slot length), aligned down to `align_bytes`; the length is rounded up to
///    `align_bytes` (O_DIRECT needs both; the record counts the rounded I/Os) and an I/O that would
///    cross the slot's end is moved back to end there.
///  - Operations: reads and writes through the engine. With `flushes: replay` (the default) a
///    flush request and a write's preflush are an fdatasync(2) of the target file its device maps
///    to, and a FUA write is the write followed by an fdatasync (its latency includes it); with
///    `discards: replay` a discard is fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE) of its
///    mapped range (targets are files: kinds replay and vdi refuse block devices). These run on
///    the replaying thread, synchronously (a flush is a barrier for the application too). With
///    `skip` each is counted as skipped (ReplayResult), and the kind warns with the count. A
///    filesystem that cannot punch holes (EOPNOTSUPP) counts the discard as skipped.
///  - Failures: the first failed or short I/O (or fdatasync, or hole punch) ends the replay: no
///    further request is issued, what is in flight is reaped, and ReplayResult::first_error says
///    "storage failure: <op> of <n> bytes at offset <o> to|from <file>: <errno text>, <s> s into
///    the replay"; the kinds end the test failed with it.
///  - Verification: with `verify`, every aligned unit a write covers starts with a header
///    {magic, unit offset, seed}; a read of a unit that this replay wrote checks it, and
///    verify_written() re-reads every written unit afterwards. Mismatches are counted, the first
///    few described ("offset 8192: header offset 0 (seed 42), expected 8192").
///
/// Threading: a Replayer is used by one thread (the engine binds to the thread of its first
/// submit); replay() runs on the caller's thread.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/histogram.hpp"
#include "drivelab/core/names.hpp"
#include "drivelab/core/pacing.hpp"
#include "drivelab/io/engine.hpp"
#include "drivelab/trace/source.hpp"

namespace drivelab::io {
class Pump;
}  // namespace drivelab::io

namespace drivelab::vdi {

/// What a whole trace holds, from one streaming pass (summarize()).
struct TraceSummary {
  std::uint64_t ios = 0;  ///< every request, flush and discard included
  std::uint64_t reads = 0;
  std::uint64_t writes = 0;
  std::uint64_t other = 0;     ///< flush + discard requests
  std::uint64_t flushes = 0;   ///< flush requests + the preflushes writes carry (trace::TraceStats::flushes)
  std::uint64_t fua = 0;       ///< requests with TraceIo::kFua
  std::uint64_t discards = 0;  ///< discard requests
  std::uint64_t read_bytes = 0;
  std::uint64_t write_bytes = 0;
  std::int64_t first_ns = 0;         ///< time of the first request
  std::int64_t last_ns = 0;          ///< time of the last request
  std::uint64_t out_of_order = 0;    ///< requests stamped earlier than their predecessor (trace::TraceStats)
  std::int64_t max_backward_ns = 0;  ///< the most one of them is earlier than its predecessor, trace ns
  std::uint32_t max_size_bytes = 0;  ///< at least the largest read or write (a power-of-two bound)
  std::int64_t tick_ns = 1;
  std::vector<std::string> devices;
  std::vector<std::uint64_t> device_end_bytes;  ///< per device: highest offset + size seen
  std::string description;

  /// Replayed (read + write) I/Os per second of trace time; 0 for a trace shorter than a tick.
  double iops() const noexcept;
  double duration_s() const noexcept { return seconds_between(first_ns, last_ns); }
};

/// Reads `source` to its end (trace::compute_trace_stats, trace/stat.hpp). Throws what the source throws
/// (TraceFormatError).
TraceSummary summarize(trace::TraceSource& source);

/// A factory that opens the trace again from its start (a replay reads it twice: summary, replay).
using SourceFactory = std::function<std::unique_ptr<trace::TraceSource>()>;

/// One target file the trace devices are mapped onto: an open descriptor and the byte range the
/// replay may use (the file's region).
struct ReplayTarget {
  int fd = -1;
  std::uint64_t region_offset_bytes = 0;
  std::uint64_t region_length_bytes = 0;
  std::string path;  ///< for messages (a storage failure names it); empty: "target <index>"
};

/// What the replay does with a trace's flushes (flush requests, preflushes, FUA) or discards.
enum class TraceAction { replay, skip };
inline constexpr EnumNames<TraceAction, 2> kTraceActionNames{
    {{"replay", TraceAction::replay}, {"skip", TraceAction::skip}}};

/// A replay whose lateness p99 (submission minus intended start) exceeds this did not follow the
/// trace's schedule: the kinds warn (docs/vdi.md "Replay"). 1 ms: ten times the 100 µs the
/// replayer holds itself to while the device keeps up (bench/replay_vs_fio.sh).
inline constexpr std::int64_t kLatenessBoundNs = 1'000'000;

struct ReplayOptions {
  std::string engine = "io_uring";            ///< io::make_engine name
  std::uint32_t queue_depth = 32;             ///< slots (outstanding I/Os), 1..65536
  double time_scale = 1.0;                    ///< multiplies trace times (> 0)
  bool no_stall = false;                      ///< issue as fast as the slots allow, in order
  std::uint32_t align_bytes = 4096;           ///< offsets and lengths aligned to this (power of two >= 512)
  std::uint64_t offset_shift_bytes = 0;       ///< added to every trace offset before folding
  bool verify = false;                        ///< headers on writes, checked on reads
  std::uint64_t seed = 1;                     ///< in the verify headers and the write data
  std::int64_t max_duration_ns = 0;           ///< stop issuing after this long; 0 = the whole trace
  std::int64_t interval_ns = 1'000'000'000;   ///< period of replay()'s on_interval calls
  TraceAction flushes = TraceAction::replay;  ///< flush requests, preflushes, FUA (see above)
  TraceAction discards = TraceAction::replay;
};

/// What one replay measured: latency (completion - intended start), service (completion -
/// submission) and lateness (submission - intended start), with the ios, reads and writes, as
/// core/pacing.hpp's OpenLoopSample.
struct ReplaySample : OpenLoopSample {
  std::uint64_t read_bytes = 0;
  std::uint64_t write_bytes = 0;
  std::uint64_t errors = 0;  ///< negative or short results
  void clear();
  void merge(const ReplaySample& other);
};

struct ReplayResult {
  ReplaySample total;
  std::uint64_t issued = 0;            ///< I/Os handed to the engine (reads + writes)
  std::uint64_t flushes_replayed = 0;  ///< flush requests and preflushes done as fdatasync
  std::uint64_t flushes_skipped = 0;
  std::uint64_t fua_replayed = 0;  ///< FUA writes followed by an fdatasync
  std::uint64_t fua_skipped = 0;
  std::uint64_t discards_replayed = 0;  ///< discards punched as holes
  std::uint64_t discards_skipped = 0;   ///< `discards: skip`, or the filesystem cannot (discard_note)
  std::string discard_note;             ///< why discards were skipped when asked to replay them
  std::uint64_t trace_read_bytes = 0;   ///< bytes of the replayed requests as the trace gives them
  std::uint64_t trace_write_bytes = 0;
  std::uint64_t rounded_ios = 0;   ///< I/Os whose offset or length was changed by align_bytes
  std::uint64_t overflow_ios = 0;  ///< I/Os that found every slot busy at their intended start
  std::uint64_t max_backlog = 0;   ///< most requests due (intended start passed) but not issued at once; 0 for no_stall
  double mean_backlog = 0;         ///< time average of that count over the replay (sum of lateness / span)
  std::uint64_t verify_checked_units = 0;
  std::uint64_t verify_mismatches = 0;
  std::vector<std::string> verify_errors;  ///< the first few mismatches
  double time_scale = 1.0;                 ///< as used
  double elapsed_s = 0;                    ///< first submission to last completion
  bool complete = true;                    ///< false: stopped (stop request or max_duration) before the end
  std::string first_error;                 ///< the storage failure that ended the replay (see above); empty: none
  double iops() const noexcept { return elapsed_s > 0 ? static_cast<double>(total.ios) / elapsed_s : 0.0; }
};

/// How the trace devices of a replay are laid out on its targets (the mapping above).
struct SlotGeometry {
  std::uint32_t devices = 1;           ///< trace devices (at least 1)
  std::uint32_t slots_per_target = 1;  ///< ceil(devices / targets)
  std::uint64_t slot_bytes = 0;        ///< each slot's length: region / slots, aligned down
  std::uint32_t buffer_bytes = 0;      ///< the largest request, aligned up: one I/O buffer
};

/// The slot geometry of `targets` regions of `region_bytes` each for the trace devices of
/// `summary`, aligned to `align_bytes` (a power of two). Throws ConfigError ("the target is too
/// small for this trace ...; make file_size larger") when a slot cannot hold the largest request.
/// Replayer's constructor lays its targets out by it; the emulators call it first too, before
/// filling a target file.
SlotGeometry slot_geometry(std::uint64_t region_bytes, std::uint32_t targets, std::uint32_t align_bytes,
                           const TraceSummary& summary);

/// Replays traces onto targets. Construction creates the engine and the buffers (throws
/// ConfigError / NotCompiledIn / EnvironmentError as io::make_engine, ConfigError for options out
/// of range or a slot smaller than an aligned I/O).
class Replayer {
 public:
  Replayer(ReplayOptions options, std::vector<ReplayTarget> targets, const TraceSummary& summary);
  ~Replayer();
  Replayer(const Replayer&) = delete;
  Replayer& operator=(const Replayer&) = delete;

  /// Where trace device `device`'s byte `offset` of `size` bytes goes: target index, offset and
  /// aligned length. Pure; used by replay() and by tests.
  struct Mapped {
    std::uint32_t target = 0;
    std::uint64_t offset_bytes = 0;
    std::uint32_t length_bytes = 0;
  };
  Mapped map(std::uint32_t device, std::uint64_t offset_bytes, std::uint32_t size_bytes) const noexcept;
  /// The same rule for a discard: its length is bounded by the slot, not by the I/O buffers.
  Mapped map_discard(std::uint32_t device, std::uint64_t offset_bytes, std::uint32_t size_bytes) const noexcept;

  /// replay()'s interval callback: what completed since the last call and now (monotonic ns);
  /// false stops the replay.
  using IntervalCallback = std::function<bool(ReplaySample&, std::int64_t)>;

  /// Replays `source` from its start. `on_interval(sample, now_ns)` is called every interval_ns
  /// with what completed since the last call; returning false stops the replay (a stop request).
  /// It runs on a helper thread (the replaying thread only swaps the sample out, so closing an
  /// interval — histogram copies, merges, percentiles, the recorder — never delays an issue);
  /// while the replaying thread is blocked (a wait for a completion or the next intended start,
  /// psync I/O, a flush, a hole punch), the helper closes the intervals that come due itself, so
  /// they keep coming through a stall. Calls are in order and never overlap; the last one comes
  /// from the calling thread after the replay ends.
  /// `time_scale` overrides options.time_scale for this replay (curve points); no_stall as given.
  /// Throws EnvironmentError on an engine failure; an I/O error ends the replay and is returned
  /// in ReplayResult::first_error (with total.errors counting the failed completions).
  ReplayResult replay(trace::TraceSource& source, double time_scale, bool no_stall,
                      const IntervalCallback& on_interval = {});

  /// With verify: re-reads every unit this Replayer wrote and checks its header. Adds to
  /// `result`'s verify counters. Returns the number of mismatches found now.
  std::uint64_t verify_written(ReplayResult& result);

  const io::IoEngine& engine() const noexcept;
  std::uint64_t slot_length_bytes() const noexcept { return slot_bytes_; }
  std::uint32_t slots_per_target() const noexcept { return slots_per_target_; }

 private:
  struct Impl;
  struct Pass;  // one replay(): its steps and their state (replay.cpp)
  Mapped map_within(std::uint32_t device, std::uint64_t offset_bytes, std::uint32_t size_bytes,
                    std::uint64_t max_length) const noexcept;
  ReplayOptions options_;
  std::vector<ReplayTarget> targets_;
  std::uint32_t devices_ = 1;
  std::uint32_t slots_per_target_ = 1;
  std::uint64_t slot_bytes_ = 0;
  std::uint32_t buffer_bytes_ = 0;
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<io::Pump> pump_;  // the engine, the slot buffers and the issue loop
};

/// The header a verified write puts at the start of each aligned unit (docs/vdi.md).
inline constexpr std::uint64_t kVerifyMagic = 0x64726976656C6176ull;  // "drivelav" little-endian-ish tag

}  // namespace drivelab::vdi
