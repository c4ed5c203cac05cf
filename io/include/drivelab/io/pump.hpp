#pragma once
/// \file pump.hpp
/// The one I/O loop of every block-I/O kind (io, vdbench, precondition, video, replay): a Pump
/// owns an IoEngine, `depth` slots each with an aligned buffer, and runs fio's issue loop over
/// them (backend.c do_io): fill every free slot, submit, reap, repeat; drain on stop.
///
///     Pump pump("io_uring", {.queue_depth = 32}, {.slot_bytes = 4096, .fill_seed = 7}, fds, files);
///     MyDriver d{...};                     // the kind: request source, pacing, completion sink
///     PumpEnd end = pump.run(d);           // until the source runs out or d.keep_going() is false
///
/// Rules (one of each, for every kind):
///  - Time stamp (fio io_u.c get_io_u: `start_time` is taken after the I/O is prepared, before
///    td_io_queue): a request's start `issue_ns` is read from the monotonic clock
///    (core/clock.hpp) just before its queue(), so for psync (the I/O happens inside queue())
///    before the pread. A request re-queued after `busy` is stamped again before the retry.
///    Its completion time `done_ns` is read once per reap() that returned completions, right after
///    it returns (fio io_u.c ios_completed: one time per batch). Latency = done - issue is fio's
///    total latency `lat` (slat + clat).
///  - Staging (fio ioengines.c td_io_queue, `iodepth_batch_submit`): after `batch_submit` queued
///    requests the pump submits, and it submits whatever is staged before any wait. When queue()
///    says busy and requests are staged, it submits them and retries once; busy with nothing
///    staged is an InternalError naming the engine and depth (the pump never queues more than
///    `depth`, so the engine broke its contract).
///  - Reaping (fio io_u.c io_u_queued_complete): at least `complete_min` and at most
///    `complete_max` completions per reap(); while stopping at least 1, until none is in flight.
///  - Write data: each slot's buffer is filled once with incompressible data (xoshiro output from
///    `fill_seed`); with `scramble_writes` every write gets a unique 8-byte stamp at the start of
///    each 4 KiB block before it is queued (fio: scramble_buffers), so neither compression nor
///    4 KiB deduplication gains anything.
///  - Failure: a completion whose result is not the full length (a negative errno or a short
///    transfer) is handed to the driver as an io::FailedIo (storage_failure.hpp words it); it is
///    not recorded as a latency.
///
/// The driver (a template argument: no std::function, no virtual call, no allocation per I/O)
/// provides, all called on the pump's thread:
///
///   std::int64_t next_due_ns();
///       Pacing: when the next request is due (monotonic ns). kDueNow (0) for a closed loop,
///       kNever when nothing more will be issued (the source ran out), else its intended start
///       (an arrival schedule, a trace's timestamps): the pump issues it once that time has come
///       and a slot is free, and with a free slot waits no longer than until then.
///   bool prepare(IoRequest& r, std::uint32_t slot);
///       The source: fills r.op, r.file_index, r.offset_bytes, r.length_bytes (<= slot_bytes())
///       and, for a write, the data in r.buffer (the slot's buffer, slot_bytes() long;
///       r.buffer_index is the slot's registered buffer). Returns false when it issued nothing for this
///       slot after all (the source ran out: next_due_ns() must then say so; or an operation that
///       is not an I/O of the engine, done in line: submit_staged() first, to keep trace order).
///   bool keep_going();
///       Asked once per pass, after the reap; false stops issuing, the in-flight I/Os drain.
///   void failed(const PumpCompletion& c, const FailedIo& io);   a failed I/O (see Failure)
///   Sample& sample();     optional: where the pump records each whole completion: `latency` (done -
///       issue), `ios`, `bytes`; when Sample derives from OpenLoopLatency: record(intended,
///       issue, done) and `reads`/`writes` too (or, for a request due now, record_on_time(issue,
///       done) when the Sample has it and settles later). Recorded under sample_lock() when the driver
///       declares `static constexpr bool kSharedSample = true` (another thread takes it).
///   void completed(const PumpCompletion& c);   optional: the kind's own per-I/O accounting,
///       after the pump's record (under the same lock).
///   std::size_t wait(Pump& p, const PumpWait& w);   optional: the kind's own wait (the
///       replayer's spin margin and blocked sections); default: wait_default().
///   void issued(const IoRequest& r);   optional: after each accepted queue() (r.issue_ns set).
///   B blocked_section();   optional: an RAII object held around the engine calls that may block
///       (submit(); queue() of a synchronous engine), e.g. the replayer's BlockedSection.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/fd.hpp"
#include "drivelab/core/pacing.hpp"
#include "drivelab/io/engine.hpp"
#include "drivelab/io/storage_failure.hpp"

namespace drivelab::io {

/// next_due_ns(): due now (a closed loop; the intended start is then the issue time).
inline constexpr std::int64_t kDueNow = 0;
/// next_due_ns(): nothing more to issue.
inline constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

struct PumpOptions {
  /// Bytes of each slot's buffer: the largest request (O_DIRECT: a multiple of the alignment).
  std::uint32_t slot_bytes = 4096;
  /// fio iodepth_batch_submit: requests queued before one submit(), 1..depth.
  std::uint32_t batch_submit = 1;
  /// fio iodepth_batch_complete_min / _max: completions waited for / taken per reap().
  std::uint32_t complete_min = 1;
  std::uint32_t complete_max = 1;
  /// Seed of the buffers' incompressible fill.
  std::uint64_t fill_seed = 1;
  /// Unique 8-byte stamp per 4 KiB of every write (fio scramble_buffers); off when the kind lays
  /// out its own data (vdbench's compression and dedup fillers, the replayer's verify headers).
  bool scramble_writes = true;
  /// Register one buffer per slot with the engine (fio fixedbufs registers one per io_u); the
  /// engine uses them only with EngineOptions::register_buffers.
  bool register_buffers = true;
};

/// One completed request, as the pump reports it to the driver. Times are monotonic ns.
struct PumpCompletion {
  std::uint32_t slot = 0;
  const IoRequest* request = nullptr;  ///< as queued (op, file, offset, length, buffer)
  std::int64_t intended_ns = 0;        ///< the intended start; the issue time when unpaced
  std::int64_t issue_ns = 0;           ///< just before queue()
  std::int64_t done_ns = 0;            ///< right after the reap() that returned it
  std::int64_t result = 0;             ///< bytes transferred or -errno (IoCompletion::result)
  bool whole() const noexcept { return result == static_cast<std::int64_t>(request->length_bytes); }
};

/// What a pass leaves for the wait (a driver's own wait() hook gets it).
struct PumpWait {
  bool stopping = false;
  std::int64_t due_ns = kNever;  ///< next_due_ns() after the fill
  std::int64_t now_ns = 0;       ///< the pump's latest clock reading
};

/// How run() ended.
enum class PumpEnd {
  exhausted,  ///< next_due_ns() said kNever and everything issued completed
  stopped,    ///< keep_going() said false; the in-flight I/Os were reaped
};

/// A test-and-set lock for the hand-off of a sample between the pump's thread (once per reap
/// batch) and a collector (once per interval): one atomic exchange to lock, a store to unlock.
class SampleLock {
 public:
  void lock() noexcept {
    while (locked_.exchange(true, std::memory_order_acquire))
      while (locked_.load(std::memory_order_relaxed)) {
      }
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

class Pump {
 public:
  /// How long the default wait may sleep when no I/O is in flight (a paced driver's next arrival
  /// is later), or when a submit() left requests staged: bounds the reaction to a stop.
  static constexpr std::int64_t kMaxWaitNs = 10'000'000;

  /// Creates the engine (make_engine: ConfigError / NotCompiledIn / EnvironmentError), registers
  /// `fds` (IoRequest::file_index indexes them; -1 for the null engine) and makes the slots:
  /// depth() = engine_options.queue_depth for an async engine, 1 for a synchronous one (psync).
  /// `files` names each fd as the user named it (for FailedIo); a missing name reads "target".
  /// Throws ConfigError for slot_bytes 0 or batch/complete sizes outside 1..depth (complete_min
  /// may be 0: poll).
  Pump(std::string_view engine, const EngineOptions& engine_options, const PumpOptions& options,
       std::span<const int> fds, std::vector<std::string> files = {});
  /// The same with an engine the caller made (a test's own IoEngine), created with `queue_depth`.
  Pump(std::unique_ptr<IoEngine> engine, std::uint32_t queue_depth, const PumpOptions& options,
       std::span<const int> fds, std::vector<std::string> files = {});
  ~Pump();
  Pump(const Pump&) = delete;
  Pump& operator=(const Pump&) = delete;

  /// Runs the loop (file comment) until the driver's source runs out or keep_going() is false;
  /// always returns with nothing in flight. Engine setup errors at submit (EnvironmentError) and
  /// a broken engine contract (InternalError) propagate; the destructor reaps what they leave.
  template <class Driver>
  PumpEnd run(Driver& d);
  /// The latest monotonic clock reading of run() (an issue, a reap, a due-time check), ns.
  std::int64_t now_ns() const noexcept { return now_; }
  /// Slots not holding a request.
  std::uint32_t free_slots() const noexcept { return free_n_; }
  /// Requests queued since the last submit() (left staged, too, by a submit() that took fewer).
  std::size_t staged() const noexcept { return staged_; }

  /// Hands every staged request to the engine now (a driver's prepare() before an in-line
  /// operation, to keep order).
  void submit_staged() {
    const std::size_t n = engine_->submit();
    staged_ -= n < staged_ ? n : staged_;
  }
  /// The default wait of run(): with a free slot and a due time, reap until then (polling when it
  /// has come); else reap at least complete_min (1 when stopping) without a timer. Returns the
  /// number of completions now in done().
  std::size_t wait_default(const PumpWait& w);
  /// reap() into the pump's completion array (for a driver's own wait()).
  std::size_t reap(std::size_t min_events, std::chrono::nanoseconds timeout) {
    return engine_->reap(min_events, {done_.get(), opt_.complete_max}, timeout);
  }

  /// Locks the sample hand-off: take the driver's sample under it (std::lock_guard).
  SampleLock& sample_lock() noexcept { return lock_; }

  IoEngine& engine() noexcept { return *engine_; }
  const IoEngine& engine() const noexcept { return *engine_; }
  bool async() const noexcept { return async_; }
  std::uint32_t depth() const noexcept { return depth_; }
  std::uint32_t slot_bytes() const noexcept { return opt_.slot_bytes; }
  std::byte* buffer(std::uint32_t slot) noexcept { return buffers_.data() + std::size_t{slot} * opt_.slot_bytes; }
  /// Requests queued and not yet reaped.
  std::uint32_t in_flight() const noexcept { return in_flight_; }
  /// Requests queued, and completions reaped, over the pump's life (the verify checks).
  std::uint64_t issued() const noexcept { return issued_; }
  std::uint64_t completed() const noexcept { return completed_; }
  /// The name of file `index` given at construction ("target" when none was).
  std::string_view file_name(std::uint32_t index) const noexcept;

 private:
  template <class Driver>
  void issue(Driver& d, IoRequest& r);
  template <class Driver>
  void submit_staged(Driver& d) {
    if constexpr (requires { d.blocked_section(); }) {
      const auto blocked = d.blocked_section();
      submit_staged();
    } else {
      submit_staged();
    }
  }
  template <class Driver>
  QueueStatus queue(Driver& d, const IoRequest& r) {
    if constexpr (requires { d.blocked_section(); }) {
      if (!async_) {  // a synchronous engine does the I/O in queue()
        const auto blocked = d.blocked_section();
        return engine_->queue(r);
      }
    }
    return engine_->queue(r);
  }
  [[noreturn]] void throw_busy() const;
  void scramble(const IoRequest& r) noexcept {
    for (std::uint32_t at = 0; at + sizeof stamp_ <= r.length_bytes; at += kStampStrideBytes) {
      ++stamp_;
      std::memcpy(r.buffer + at, &stamp_, sizeof stamp_);
    }
  }
  template <class Driver>
  void complete(Driver& d, std::size_t n, std::int64_t done_ns);
  template <class Sample>
  static void record(Sample& s, const PumpCompletion& c) noexcept;

  static constexpr std::uint32_t kStampStrideBytes = 4096;

  std::uint32_t depth_ = 1;
  bool async_ = false;
  PumpOptions opt_;  // as given, with batch_submit and complete_min/_max clamped to the depth
  // Declared before engine_ so they are destroyed after it: the engine may own in-flight I/Os.
  AlignedBuffer buffers_;
  std::unique_ptr<IoRequest[]> requests_;  // per slot
  std::unique_ptr<std::uint32_t[]> free_;  // stack of free slots
  std::unique_ptr<IoCompletion[]> done_;   // opt_.complete_max
  std::unique_ptr<IoEngine> engine_;
  std::vector<std::string> files_;
  std::uint32_t free_n_ = 0;
  std::uint32_t in_flight_ = 0;
  std::size_t staged_ = 0;  // queued since the last submit (and left staged by a short submit)
  std::uint64_t stamp_ = 0;
  std::uint64_t issued_ = 0;
  std::uint64_t completed_ = 0;
  std::int64_t now_ = 0;  // the latest clock reading
  SampleLock lock_;
};

// ---- the loop (inline: the per-I/O path) ----

namespace detail {
/// Driver::kSharedSample, false when the driver does not declare it (a local class cannot).
template <class Driver>
constexpr bool shared_sample() noexcept {
  if constexpr (requires { Driver::kSharedSample; })
    return Driver::kSharedSample;
  else
    return false;
}
}  // namespace detail

template <class Driver>
inline void Pump::issue(Driver& d, IoRequest& r) {
  r.issue_ns = monotonic_ns();  // fio get_io_u: start_time just before queueing (psync: before the pread)
  QueueStatus st = queue(d, r);
  if (st == QueueStatus::busy) [[unlikely]] {
    if (staged_ == 0) throw_busy();
    submit_staged(d);
    r.issue_ns = monotonic_ns();
    st = queue(d, r);
    if (st == QueueStatus::busy) throw_busy();
  }
  now_ = r.issue_ns;
  ++in_flight_;
  ++issued_;
  if constexpr (requires { d.issued(r); }) d.issued(r);
  if (++staged_ >= opt_.batch_submit) submit_staged(d);  // fio iodepth_batch_submit
}

template <class Sample>
inline void Pump::record(Sample& s, const PumpCompletion& c) noexcept {
  if constexpr (std::is_base_of_v<OpenLoopLatency, Sample>) {
    // A sample that can defer closed-loop figures (vdbench's VdbSample::record_on_time) takes a
    // request that was due now with one histogram update; it settles the other two when read.
    if constexpr (requires { s.record_on_time(c.issue_ns, c.done_ns); }) {
      if (c.request->intended_ns == kDueNow)
        s.record_on_time(c.issue_ns, c.done_ns);
      else
        s.record(c.intended_ns, c.issue_ns, c.done_ns);
    } else {
      s.record(c.intended_ns, c.issue_ns, c.done_ns);
    }
    if (c.request->op == Op::read)
      ++s.reads;
    else
      ++s.writes;
  } else {
    s.latency.record(c.done_ns - c.issue_ns);
  }
  ++s.ios;
  s.bytes += c.request->length_bytes;
}

template <class Driver>
inline void Pump::complete(Driver& d, std::size_t n, std::int64_t done_ns) {
  for (std::size_t i = 0; i < n; ++i) {
    const auto s = static_cast<std::uint32_t>(done_[i].user_data);
    const IoRequest& r = requests_[s];
    free_[free_n_++] = s;
    --in_flight_;
    ++completed_;
    const PumpCompletion c{.slot = s,
                           .request = &r,
                           .intended_ns = r.intended_ns != kDueNow ? r.intended_ns : r.issue_ns,
                           .issue_ns = r.issue_ns,
                           .done_ns = done_ns,
                           .result = done_[i].result};
    if (!c.whole()) [[unlikely]] {
      d.failed(c, FailedIo{.op = r.op,
                           .length_bytes = r.length_bytes,
                           .offset_bytes = r.offset_bytes,
                           .file = file_name(r.file_index),
                           .result = c.result});
      continue;
    }
    if constexpr (requires { d.sample(); }) record(d.sample(), c);
    if constexpr (requires { d.completed(c); }) d.completed(c);
  }
}

inline std::size_t Pump::wait_default(const PumpWait& w) {
  std::size_t min_events = w.stopping ? 1 : opt_.complete_min;
  std::int64_t timeout = staged_ > 0 ? kMaxWaitNs : IoEngine::kNoTimeout.count();
  if (!w.stopping && free_n_ > 0 && w.due_ns != kNever) {
    // Paced with a free slot: wait for a completion or the next arrival, whichever comes first.
    now_ = monotonic_ns();
    const std::int64_t wait = w.due_ns - now_;
    min_events = wait > 0 ? 1 : 0;
    timeout = wait > 0 ? (wait < kMaxWaitNs ? wait : kMaxWaitNs) : 0;
  }
  return reap(min_events, std::chrono::nanoseconds(timeout));
}

template <class Driver>
PumpEnd Pump::run(Driver& d) {
  bool stopping = false, ran_out = false;
  now_ = monotonic_ns();
  for (;;) {
    std::int64_t due = kNever;
    if (!stopping) {
      while (free_n_ > 0) {
        due = d.next_due_ns();
        if (due > now_) {
          if (due == kNever) {
            ran_out = true;
            break;
          }
          now_ = monotonic_ns();  // paced: has it come by now?
          if (due > now_) break;
        }
        const std::uint32_t s = free_[free_n_ - 1];
        IoRequest& r = requests_[s];
        r.buffer = buffer(s);
        r.buffer_index = static_cast<std::int32_t>(s);
        if (!d.prepare(r, s)) continue;
        --free_n_;
        r.user_data = s;
        r.intended_ns = due;
        if (opt_.scramble_writes && r.op == Op::write) scramble(r);
        issue(d, r);
      }
      if (free_n_ == 0) due = d.next_due_ns();
    }
    if (staged_ > 0) submit_staged(d);  // nothing stays staged over a wait

    if (in_flight_ == 0) {
      if (ran_out) return PumpEnd::exhausted;
      if (stopping) return PumpEnd::stopped;
    }
    const PumpWait w{.stopping = stopping, .due_ns = due, .now_ns = now_};
    std::size_t n = 0;
    if constexpr (requires { d.wait(*this, w); }) {
      n = d.wait(*this, w);
    } else if (in_flight_ == 0) {
      // Paced, nothing in flight: sleep until the next arrival (bounded: keep_going() is asked).
      sleep_until_ns(due - now_ < kMaxWaitNs ? due : now_ + kMaxWaitNs);
      now_ = monotonic_ns();
    } else {
      n = wait_default(w);
    }
    if (n > 0) {
      const std::int64_t done_ns = monotonic_ns();
      now_ = done_ns;
      if constexpr (detail::shared_sample<Driver>()) {
        const std::lock_guard lock(lock_);
        complete(d, n, done_ns);
      } else {
        complete(d, n, done_ns);
      }
    }
    if (!stopping && !d.keep_going()) stopping = true;
  }
}

}  // namespace drivelab::io
