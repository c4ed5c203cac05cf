// The timed replayer (replay.hpp states the model; docs/vdi.md "## Replay" the measurements
// behind its constants). Replayer's constructor maps the trace devices onto the targets and makes
// the io::Pump (io/pump.hpp: the engine, the slot buffers and the issue loop, whose time-stamp,
// staging and reaping rules are every kind's); replay() runs one Pass, the pump's driver, on the
// caller's thread. Its hooks:
//   next_due_ns    the intended start of the next request (lookahead: the requests that share the
//                  next timestamp, at most kMaxGroup, spread evenly over the format's tick);
//                  skipped flushes and discards counted on the way;
//   prepare        the request at the head (mapped, its buffer laid out), or a flush or discard
//                  done in line (fdatasync, punch hole) after submitting what is staged;
//   issued         its lateness and the backlog, once queued (all due requests of a pass go in
//                  one submit: batch_submit = depth);
//   wait           until the next intended start (a timed wait, then polling the SpinMargin) or,
//                  every slot busy, until a completion (overflow counted);
//   completed      each completion's latency, service latency and errors into the interval;
//   verify         around issue and completion: a write carries a header per aligned unit, a read
//                  of a unit this replay wrote checks it; verify_written() re-reads them all
//                  (detail::VerifyMap, replay_verify.cpp).
// Nothing slow runs between issues: intervals are closed on IntervalCloser's helper thread
// (interval_closer.hpp), which also closes them itself while this thread is in a blocking call;
// the trace's summary and the sample's merge are in replay_summary.cpp.
#include "drivelab/vdi/replay.hpp"

#include <fcntl.h>
#include <linux/falloc.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <deque>
#include <exception>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/timer_slack.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/core/fd.hpp"
#include "drivelab/core/rng.hpp"
#include "drivelab/core/units.hpp"
#include "drivelab/io/pump.hpp"
#include "drivelab/io/storage_failure.hpp"

#include "interval_closer.hpp"
#include "replay_verify.hpp"

namespace drivelab::vdi {
namespace {

/// What a storage failure's seconds count from (io::storage_failure: "..., 0.04 s into the replay").
constexpr std::string_view kPhase = "replay";

// Below this the replayer polls for the intended start instead of sleeping: a timed wait on this
// VM wakes 50-100 us late, spinning the last stretch keeps lateness at a few us (docs/vdi.md).
constexpr std::int64_t kSpinNs = 100'000;
// On an idle VM a halted vCPU can wake a timed wait up to ~1 ms late: the polling stretch grows to
// 1.5 x the recent worst overshoot, capped here (the CPU it costs: at most this per gap).
constexpr std::int64_t kMaxSpinNs = 2'000'000;

/// The polling stretch before each intended start: kSpinNs, or 1.5 x the worst recent overshoot of
/// a timed wait (how late it woke), capped at kMaxSpinNs. The worst is a peak that decays by 0.2%
/// per wait (half-life ~350 waits), so one late wake-up covers the bursts of late wake-ups that
/// follow it on an idle VM.
class SpinMargin {
 public:
  std::int64_t ns() const noexcept { return margin_; }
  /// A timed wait meant to end at deadline_ns ended (by timeout) at woke_ns.
  void woke(std::int64_t deadline_ns, std::int64_t woke_ns) noexcept {
    peak_ = std::max(peak_ * 0.998, static_cast<double>(std::max<std::int64_t>(woke_ns - deadline_ns, 0)));
    margin_ = std::clamp<std::int64_t>(static_cast<std::int64_t>(peak_ * 1.5), kSpinNs, kMaxSpinNs);
  }

 private:
  double peak_ = 0;
  std::int64_t margin_ = kSpinNs;
};

// Requests sharing one timestamp are spread over the tick; at most this many are read ahead.
constexpr std::size_t kMaxGroup = 65536;

}  // namespace

struct Replayer::Impl {
  struct Slot {  // beside the pump's request of the same slot (op, target, offset, length, times)
    io::Op op = io::Op::read;
    std::uint32_t target = 0;
    std::uint64_t offset = 0;
    std::uint32_t length = 0;
    bool fua = false;                 // a FUA write to replay: fdatasync when it completes
    std::vector<std::uint8_t> check;  // per unit of a read: written before the read was issued
  };
  std::vector<Slot> slots;
  std::optional<detail::VerifyMap> verify;  // with options.verify
};

SlotGeometry slot_geometry(std::uint64_t region_bytes, std::uint32_t targets, std::uint32_t align_bytes,
                           const TraceSummary& summary) {
  SlotGeometry g;
  g.devices = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(summary.devices.size()));
  const std::uint32_t n = std::max<std::uint32_t>(1, targets);
  g.slots_per_target = (g.devices + n - 1) / n;
  g.slot_bytes = align_down(region_bytes / g.slots_per_target, align_bytes);
  g.buffer_bytes =
      static_cast<std::uint32_t>(align_up(std::max<std::uint32_t>(summary.max_size_bytes, 1), align_bytes));
  if (g.slot_bytes < g.buffer_bytes)
    throw ConfigError(
        fmt::format("the target is too small for this trace: {} trace devices in {} slots of {} per "
                    "target, but the largest request needs {}; make file_size larger",
                    g.devices, g.slots_per_target, format_size(g.slot_bytes), format_size(g.buffer_bytes)));
  return g;
}

Replayer::Replayer(ReplayOptions options, std::vector<ReplayTarget> targets, const TraceSummary& summary)
    : options_(std::move(options)), targets_(std::move(targets)), impl_(std::make_unique<Impl>()) {
  const std::uint32_t a = options_.align_bytes;
  if (a < 512 || !std::has_single_bit(a))
    throw ConfigError(fmt::format("align must be a power of two >= 512, found {}", a));
  if (options_.queue_depth < 1 || options_.queue_depth > 65536)
    throw ConfigError(fmt::format("queue_depth must be between 1 and 65536, found {}", options_.queue_depth));
  if (!(options_.time_scale > 0)) throw ConfigError("time_scale must be positive");
  if (targets_.empty()) throw InternalError("replay: no target");
  std::uint64_t shortest = targets_.front().region_length_bytes;
  for (const auto& t : targets_) shortest = std::min(shortest, t.region_length_bytes);
  const SlotGeometry g = slot_geometry(shortest, static_cast<std::uint32_t>(targets_.size()), a, summary);
  devices_ = g.devices;
  slots_per_target_ = g.slots_per_target;
  slot_bytes_ = g.slot_bytes;
  buffer_bytes_ = g.buffer_bytes;

  std::vector<int> fds;
  std::vector<std::string> names;
  for (std::size_t t = 0; t < targets_.size(); ++t) {
    fds.push_back(targets_[t].fd);
    names.push_back(targets_[t].path.empty() ? fmt::format("target {}", t) : targets_[t].path);
  }
  // Every request due in one pass goes in one submit() (batch_submit = depth). A write carries the
  // pump's unique stamp per 4 KiB (fio scramble_buffers), or with verify the replay's headers.
  const std::uint32_t qd = options_.queue_depth;
  pump_ = std::make_unique<io::Pump>(options_.engine, io::EngineOptions{.queue_depth = qd},
                                     io::PumpOptions{.slot_bytes = buffer_bytes_,
                                                     .batch_submit = qd,
                                                     .complete_min = 1,
                                                     .complete_max = qd,
                                                     .fill_seed = options_.seed,
                                                     .scramble_writes = !options_.verify,
                                                     .register_buffers = false},
                                     fds, std::move(names));
  options_.queue_depth = pump_->depth();  // psync: one at a time

  impl_->slots.resize(pump_->depth());
  for (auto& s : impl_->slots) s.check.resize(buffer_bytes_ / a);
  if (options_.verify) impl_->verify.emplace(targets_, a, options_.seed);
}

Replayer::~Replayer() = default;  // the pump reaps what an exception may have left in flight

const io::IoEngine& Replayer::engine() const noexcept { return pump_->engine(); }

Replayer::Mapped Replayer::map(std::uint32_t device, std::uint64_t offset_bytes,
                               std::uint32_t size_bytes) const noexcept {
  return map_within(device, offset_bytes, size_bytes, buffer_bytes_);
}

Replayer::Mapped Replayer::map_discard(std::uint32_t device, std::uint64_t offset_bytes,
                                       std::uint32_t size_bytes) const noexcept {
  return map_within(device, offset_bytes, size_bytes,
                    std::min<std::uint64_t>(slot_bytes_, align_down(0xFFFFFFFFu, options_.align_bytes)));
}

Replayer::Mapped Replayer::map_within(std::uint32_t device, std::uint64_t offset_bytes, std::uint32_t size_bytes,
                                      std::uint64_t max_length) const noexcept {
  const std::uint64_t a = options_.align_bytes;
  const auto n = static_cast<std::uint32_t>(targets_.size());
  const std::uint32_t d = device % devices_;
  const std::uint32_t t = d % n;
  const std::uint32_t s = d / n;
  const std::uint64_t len = std::min<std::uint64_t>(align_up(std::max<std::uint32_t>(size_bytes, 1), a), max_length);
  std::uint64_t o = align_down((offset_bytes + options_.offset_shift_bytes) % slot_bytes_, a);
  if (o + len > slot_bytes_) o = slot_bytes_ - len;
  return {t, targets_[t].region_offset_bytes + s * slot_bytes_ + o, static_cast<std::uint32_t>(len)};
}

/// One replay of a source (Replayer::replay): the lookahead, what was measured, and the loop's
/// state between its steps. Lives on the replaying thread for one replay.
struct Replayer::Pass {
  Pass(Replayer& replayer, trace::TraceSource& src, double scale, bool fast, const IntervalCallback& callback);

  /// The loop (the pump's run with this pass as its driver): issue what is due, wait (reaping
  /// meanwhile), complete, close the interval; until every request is issued and completed, or a
  /// stop (max_duration, on_interval).
  ReplayResult run();

  // ---- the pump's driver (io/pump.hpp) ----
  /// The intended start of the request at the head (kDueNow with no_stall; kNever when the trace
  /// is done or the replay stops); skipped flushes and discards are counted on the way.
  std::int64_t next_due_ns();
  /// The head request into `req` (slot `s`), or a flush or discard done in line (false).
  bool prepare(io::IoRequest& req, std::uint32_t s);
  /// Its lateness, the backlog and the issue counters, once queued.
  void issued(const io::IoRequest& req);
  /// Waits for a completion when every slot is busy (or nothing is left to issue, or no_stall),
  /// else until the next intended start, reaping what completes meanwhile. Returns the reaped count.
  std::size_t wait(io::Pump& p, const io::PumpWait& w);
  /// The engine's blocking calls (submit; psync's queue) run as blocked sections: the closer may
  /// close an interval meanwhile (interval_closer.hpp).
  detail::BlockedSection blocked_section() noexcept { return detail::BlockedSection(closer); }
  bool keep_going();
  void completed(const io::PumpCompletion& c) { account(c, nullptr); }
  void failed(const io::PumpCompletion& c, const io::FailedIo& io) { account(c, &io); }

  /// Reads the requests of the next timestamp (at most kMaxGroup) with their intended starts (each
  /// at least its predecessor's).
  void lookahead();
  /// The flush or discard at the head, in trace order at its intended start: what is staged goes
  /// to the engine first.
  void inline_op(const trace::TraceIo& t, bool preflush);
  /// Records one completion into the interval (latency, service latency, errors; a FUA write's
  /// fdatasync first) and checks or notes it for verify; `io` is set when it failed.
  void account(const io::PumpCompletion& c, const io::FailedIo* io);
  void submit_staged() {
    if (pump.staged() == 0) return;
    const detail::BlockedSection blocked(closer);
    pump.submit_staged();
  }

  /// verify: a write carries a header per aligned unit (else the pump's stamps); a read notes
  /// which of its units this replay wrote before it was issued (checked when it completes).
  void prepare_buffer(Impl::Slot& slot, std::byte* buf) {
    if (!verify) return;
    if (slot.op == io::Op::write)
      im.verify->stamp(slot.target, slot.offset, slot.length, buf);
    else
      im.verify->note_read(slot.target, slot.offset, slot.length, slot.check.data());
  }

  /// The backlog after request j (intended start `intended`, issued at `issued`) is issued: the
  /// requests not yet issued at its intended start, itself included (replay.hpp).
  void note_backlog(std::int64_t intended, std::int64_t issued);
  /// A flush request or a write's preflush: fdatasync of `target`, or counted as skipped.
  void flush(std::uint32_t target);
  /// A discard: a hole punched in its mapped range, or counted as skipped.
  void discard(const trace::TraceIo& t);
  /// fdatasync of `target` (no-op without a descriptor: the null engine); false after fail().
  bool sync_target(std::uint32_t target, std::string_view what);
  /// Ends the replay with its first storage failure (replay.hpp "Failures").
  void fail(std::string text);
  std::string_view file_name(std::uint32_t target) const { return pump.file_name(target); }
  double seconds_in(std::int64_t now) const noexcept { return seconds_between(start_ns, now); }

  void stop() noexcept {
    if (stopping) return;
    stopping = true;
    r.complete = false;
  }

  const Replayer& rp;
  Impl& im;
  io::Pump& pump;
  const ReplayOptions& options;
  const std::vector<ReplayTarget>& targets;
  trace::TraceSource& source;
  const double time_scale;
  const bool no_stall;
  const IntervalCallback& on_interval;
  const std::uint32_t a;  // options.align_bytes
  const bool verify;      // options.verify
  ReplayResult r;
  ReplaySample interval;
  SpinMargin margin;

  // The lookahead: requests of one timestamp with their intended starts.
  std::vector<trace::TraceIo> group;
  std::vector<std::int64_t> group_intended;
  std::size_t gi = 0;
  trace::TraceIo held;
  bool have_held = false, source_done = false;
  const std::int64_t tick;
  const std::int64_t start_ns;  // 1 ms after the pass is made, to get going
  std::int64_t trace_t0 = 0;
  bool first_io = true;
  std::int64_t last_intended = std::numeric_limits<std::int64_t>::min();  // intended starts never decrease

  std::int64_t first_submit = 0, last_complete = 0, last_issue = 0;
  // The backlog: issue times of issued requests that came after the latest intended start so far
  // (8 bytes per backlogged request; FIFO both ways: trace order, intended starts kept monotone).
  std::deque<std::int64_t> backlog;
  std::int64_t backlog_due = std::numeric_limits<std::int64_t>::min();
  // After r, interval and start_ns: r.total and interval are the closer's until closer.finish().
  detail::IntervalCloser closer;
  bool stopping = false;
  bool overflow_counted = false;  // for the request at group[gi]
};

Replayer::Pass::Pass(Replayer& replayer, trace::TraceSource& src, double scale, bool fast,
                     const IntervalCallback& callback)
    : rp(replayer),
      im(*replayer.impl_),
      pump(*replayer.pump_),
      options(replayer.options_),
      targets(replayer.targets_),
      source(src),
      time_scale(scale),
      no_stall(fast),
      on_interval(callback),
      a(replayer.options_.align_bytes),
      verify(replayer.options_.verify),
      tick(std::max<std::int64_t>(1, src.tick_ns())),
      start_ns(monotonic_ns() + 1'000'000),
      closer(r.total, callback, interval, start_ns, replayer.options_.interval_ns) {
  r.time_scale = scale;
}

ReplayResult Replayer::replay(trace::TraceSource& source, double time_scale, bool no_stall,
                              const IntervalCallback& on_interval) {
  if (!(time_scale > 0)) throw ConfigError("time_scale must be positive");
  const ScopedTimerSlack slack(kPacedTimerSlackNs);
  Pass pass(*this, source, time_scale, no_stall, on_interval);
  return pass.run();
}

ReplayResult Replayer::Pass::run() {
  pump.run(*this);
  closer.finish();
  closer.rethrow_if_failed();
  r.total.merge(interval);
  if (on_interval && interval.ios > 0) on_interval(interval, monotonic_ns());
  if (!source_done || gi < group.size()) r.complete = false;
  // Little's law: the time integral of the backlog is the sum of every request's lateness.
  if (!no_stall && last_issue > start_ns)
    r.mean_backlog = r.total.lateness.sum_ns() / static_cast<double>(last_issue - start_ns);
  r.elapsed_s = first_submit > 0 ? seconds_between(first_submit, last_complete) : 0.0;
  return std::move(r);
}

bool Replayer::Pass::keep_going() {
  const std::int64_t now = monotonic_ns();
  closer.close_if_due(now);
  if (closer.stop_requested()) stop();
  if (options.max_duration_ns > 0 && now - start_ns >= options.max_duration_ns) stop();
  return !stopping;
}

void Replayer::Pass::lookahead() {
  group.clear();
  group_intended.clear();
  gi = 0;
  if (!have_held) {
    if (!source.next(held)) {
      source_done = true;
      return;
    }
    have_held = true;
  }
  if (first_io) {
    trace_t0 = held.time_ns;
    first_io = false;
  }
  const std::int64_t t = held.time_ns;
  group.push_back(held);
  have_held = false;
  while (group.size() < kMaxGroup) {
    if (!source.next(held)) {
      source_done = true;
      break;
    }
    if (held.time_ns != t) {
      have_held = true;
      break;
    }
    group.push_back(held);
  }
  // Requests are issued in trace order, so one stamped earlier than its predecessor (an unsorted
  // trace) can start no sooner than that predecessor's intended start: that is its intended start,
  // for its latency, lateness and the backlog alike (replay.hpp "Timing").
  const auto k = static_cast<std::int64_t>(group.size());
  for (std::int64_t i = 0; i < k; ++i) {
    const double trace_ns =
        static_cast<double>(t - trace_t0) + static_cast<double>(tick) * static_cast<double>(i) / static_cast<double>(k);
    last_intended = std::max(last_intended, start_ns + static_cast<std::int64_t>(trace_ns * time_scale));
    group_intended.push_back(last_intended);
  }
}

std::int64_t Replayer::Pass::next_due_ns() {
  while (!stopping) {
    if (gi >= group.size()) {
      if (source_done) break;
      lookahead();
      overflow_counted = false;
      if (gi >= group.size()) break;
    }
    const trace::TraceIo& t = group[gi];
    const bool sync_op = t.op == trace::TraceOp::flush || t.op == trace::TraceOp::discard;
    const TraceAction action = t.op == trace::TraceOp::flush ? options.flushes : options.discards;
    if (sync_op && action == TraceAction::skip) {
      ++(t.op == trace::TraceOp::flush ? r.flushes_skipped : r.discards_skipped);
      const bool preflush = (t.flags & trace::TraceIo::kPreflush) != 0 && t.op != trace::TraceOp::flush;
      if (preflush) flush(rp.map(t.device, 0, 1).target);  // a skipped discard's preflush is still a flush
      ++gi;
      overflow_counted = false;
      continue;
    }
    return no_stall ? io::kDueNow : group_intended[gi];
  }
  return io::kNever;
}

void Replayer::Pass::inline_op(const trace::TraceIo& t, bool preflush) {
  submit_staged();
  if (t.op == trace::TraceOp::flush) {
    flush(rp.map(t.device, 0, 1).target);
  } else {
    if (preflush) flush(rp.map(t.device, 0, 1).target);
    if (!stopping) discard(t);
  }
  ++gi;
  overflow_counted = false;
}

bool Replayer::Pass::prepare(io::IoRequest& req, std::uint32_t s) {
  const trace::TraceIo& t = group[gi];
  const bool preflush = (t.flags & trace::TraceIo::kPreflush) != 0 && t.op != trace::TraceOp::flush;
  if (t.op == trace::TraceOp::flush || t.op == trace::TraceOp::discard) {
    inline_op(t, preflush);
    return false;
  }
  if (preflush) {
    submit_staged();
    flush(rp.map(t.device, 0, 1).target);
    if (stopping) return false;  // next_due_ns() says kNever now
  }
  Impl::Slot& slot = im.slots[s];
  const Mapped m = rp.map(t.device, t.offset_bytes, t.size_bytes);
  if (m.length_bytes != t.size_bytes || (t.offset_bytes + options.offset_shift_bytes) % a != 0) ++r.rounded_ios;
  slot.op = t.op == trace::TraceOp::write ? io::Op::write : io::Op::read;
  slot.target = m.target;
  slot.offset = m.offset_bytes;
  slot.length = m.length_bytes;
  slot.fua = false;
  if (slot.op == io::Op::write && (t.flags & trace::TraceIo::kFua)) {
    if (options.flushes == TraceAction::replay)
      slot.fua = true;
    else
      ++r.fua_skipped;
  }
  if (slot.op == io::Op::write)
    r.trace_write_bytes += t.size_bytes;
  else
    r.trace_read_bytes += t.size_bytes;
  prepare_buffer(slot, req.buffer);
  req.op = slot.op;
  req.file_index = m.target;
  req.offset_bytes = m.offset_bytes;
  req.length_bytes = m.length_bytes;
  ++gi;
  overflow_counted = false;
  return true;
}

void Replayer::Pass::issued(const io::IoRequest& req) {
  const std::int64_t intended = req.intended_ns != io::kDueNow ? req.intended_ns : req.issue_ns;
  if (first_submit == 0) first_submit = req.issue_ns;
  interval.lateness.record(req.issue_ns - intended);
  ++r.issued;
  last_issue = req.issue_ns;
  if (!no_stall) note_backlog(intended, req.issue_ns);
}

void Replayer::Pass::note_backlog(std::int64_t intended, std::int64_t issued) {
  backlog_due = std::max(backlog_due, intended);
  // Those issued by this request's intended start no longer count; the rest were still due then.
  while (!backlog.empty() && backlog.front() <= backlog_due) backlog.pop_front();
  r.max_backlog = std::max<std::uint64_t>(r.max_backlog, backlog.size() + 1);
  backlog.push_back(issued);
}

void Replayer::Pass::fail(std::string text) {
  if (r.first_error.empty()) r.first_error = std::move(text);
  stop();
}

bool Replayer::Pass::sync_target(std::uint32_t target, std::string_view what) {
  const int fd = targets[target].fd;
  if (fd < 0) return true;
  int rc = 0;
  {
    const detail::BlockedSection blocked(closer);
    rc = ::fdatasync(fd);
  }
  if (rc == 0) return true;
  const int err = errno;
  ++interval.errors;
  fail(io::storage_failure({.file = file_name(target), .result = -err, .operation = what}, seconds_in(monotonic_ns()),
                           kPhase));
  return false;
}

void Replayer::Pass::flush(std::uint32_t target) {
  if (options.flushes == TraceAction::skip) {
    ++r.flushes_skipped;
    return;
  }
  if (sync_target(target, "fdatasync (flush)")) ++r.flushes_replayed;
}

void Replayer::Pass::discard(const trace::TraceIo& t) {
  const Mapped m = rp.map_discard(t.device, t.offset_bytes, t.size_bytes);
  const int fd = targets[m.target].fd;
  int rc = 0;
  if (fd >= 0) {
    const detail::BlockedSection blocked(closer);
    rc = ::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(m.offset_bytes),
                     static_cast<off_t>(m.length_bytes));
  }
  if (rc != 0) {
    const int err = errno;
    if (err == EOPNOTSUPP) {
      ++r.discards_skipped;
      if (r.discard_note.empty())
        r.discard_note = fmt::format("{} cannot punch holes ({}): discards counted as skipped", file_name(m.target),
                                     errno_text(err));
      return;
    }
    ++interval.errors;
    fail(io::storage_failure({.op = io::Op::write,
                              .length_bytes = m.length_bytes,
                              .offset_bytes = m.offset_bytes,
                              .file = file_name(m.target),
                              .result = -err,
                              .operation = "discard (punch hole)"},
                             seconds_in(monotonic_ns()), kPhase));
    return;
  }
  ++r.discards_replayed;
  if (verify) im.verify->forget_written(m.target, m.offset_bytes, m.length_bytes);  // the hole reads back as zeros
}

std::size_t Replayer::Pass::wait(io::Pump& p, const io::PumpWait& w) {
  const bool more = !w.stopping && w.due_ns != io::kNever;
  if (more && p.free_slots() == 0) {
    // Every slot busy: a due flush or discard still goes at its intended start, and a due request
    // is an overflow (counted once per request).
    std::int64_t now = monotonic_ns();
    while (!stopping && gi < group.size() && (no_stall || group_intended[gi] <= now)) {
      const trace::TraceIo& t = group[gi];
      if (t.op != trace::TraceOp::flush && t.op != trace::TraceOp::discard) {
        if (!overflow_counted && !no_stall) ++r.overflow_ios;
        overflow_counted = true;
        break;
      }
      inline_op(t, (t.flags & trace::TraceIo::kPreflush) != 0 && t.op != trace::TraceOp::flush);
      if (next_due_ns() == io::kNever) break;  // counts skipped ones up to the next request
      now = monotonic_ns();
    }
  }
  const std::int64_t now = monotonic_ns();
  if (!more || p.free_slots() == 0 || no_stall) {
    if (p.in_flight() == 0) return 0;
    const detail::BlockedSection blocked(closer);
    return p.reap(1, more ? io::IoEngine::kNoTimeout : std::chrono::nanoseconds(kSpinNs * 10));
  }
  const std::int64_t next = w.due_ns;
  const std::int64_t wait = next - now;
  const std::int64_t spin = margin.ns();
  std::size_t n = 0;
  if (p.in_flight() > 0) {
    if (wait > spin) {
      {
        const detail::BlockedSection blocked(closer);
        n = p.reap(1, std::chrono::nanoseconds(wait - spin));
      }
      if (n == 0) margin.woke(next - spin, monotonic_ns());
    } else {
      n = p.reap(0, std::chrono::nanoseconds(0));  // polls: never blocks
    }
  } else if (wait > spin) {
    std::int64_t woke = 0;
    {
      const detail::BlockedSection blocked(closer);
      woke = sleep_until_ns(next - spin);
    }
    margin.woke(next - spin, woke);
  }
  return n;
}

void Replayer::Pass::account(const io::PumpCompletion& c, const io::FailedIo* io) {
  Impl::Slot& slot = im.slots[c.slot];
  const bool whole = io == nullptr;
  // A FUA write is durable when it completes: the write, then an fdatasync (in its latency).
  std::int64_t end = c.done_ns;
  if (slot.fua && whole) {
    if (sync_target(slot.target, "fdatasync (FUA write)")) ++r.fua_replayed;
    end = monotonic_ns();
  }
  last_complete = std::max(last_complete, end);
  interval.latency.record(end - c.intended_ns);
  interval.service.record(end - c.issue_ns);
  ++interval.ios;
  if (!whole) {
    ++interval.errors;
    fail(io::storage_failure(*io, seconds_in(c.done_ns), kPhase));
  }
  if (slot.op == io::Op::read) {
    ++interval.reads;
    interval.read_bytes += slot.length;
    if (verify && whole)
      im.verify->check_read(slot.target, slot.offset, slot.length, slot.check.data(), c.request->buffer, r);
  } else {
    ++interval.writes;
    interval.write_bytes += slot.length;
    if (verify && whole) im.verify->mark_written(slot.target, slot.offset, slot.length);
  }
}

std::uint64_t Replayer::verify_written(ReplayResult& result) {
  return impl_->verify ? impl_->verify->verify_written(result) : 0;
}

}  // namespace drivelab::vdi
