// io::Pump (io/pump.hpp): (a) with a recording engine (a real IoEngine that logs every call with
// its monotonic time and completes requests itself), every pacing's request is stamped between
// the engine call before its queue() and that queue(), is submitted after it, and staging, busy
// retries and failures follow the pump's rules; (b) over the real engines on a real file, data
// lands where it should, depth is respected, failed I/Os become the storage-failure text and a
// stop drains everything. No timed assertions: times are only compared with each other.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/core/fd.hpp"
#include "drivelab/core/pacing.hpp"
#include "drivelab/core/rng.hpp"
#include "drivelab/io/pump.hpp"
#include "drivelab/io/target_file.hpp"
#include "engine_test_support.hpp"
#include "temp_dir.hpp"

namespace drivelab::io {
namespace {

// ---- (a) the recording engine ----

struct Event {
  enum Kind { queue, submit, reap } kind;
  std::int64_t t_ns;            // monotonic_ns() on entry
  std::uint64_t user_data = 0;  // queue: the request's
  std::int64_t issue_ns = 0;    // queue: the request's issue_ns as the engine received it
  std::size_t count = 0;        // submit: requests submitted; reap: completions returned
};

/// An asynchronous engine that logs its calls, completes every request at submit() (like null)
/// with the full length, or with `fail_result` for requests at `fail_offset`; refuses a queue()
/// (busy) when `stage_limit` requests are staged (a kernel queue smaller than the depth).
class RecordingEngine final : public IoEngine {
 public:
  explicit RecordingEngine(std::vector<Event>& log, std::size_t stage_limit = 1u << 30)
      : log_(log), stage_limit_(stage_limit) {}
  std::uint64_t fail_offset = ~0ull;
  std::int64_t fail_result = -EIO;
  bool refuse_always = false;

  const EngineInfo& info() const noexcept override {
    static const EngineInfo row{.name = "recording",
                                .summary = "this test's engine: logs its calls, completes at submit()",
                                .note = {},
                                .capabilities = {Capability::async, Capability::batched},
                                .make = nullptr};
    return row;
  }
  void register_files(std::span<const int>) override {}
  QueueStatus queue(const IoRequest& r) override {
    log_.push_back({Event::queue, monotonic_ns(), r.user_data, r.issue_ns});
    if (refuse_always || staged_.size() >= stage_limit_) return QueueStatus::busy;
    staged_.push_back({r.user_data, r.offset_bytes == fail_offset ? fail_result : std::int64_t{r.length_bytes}});
    return QueueStatus::queued;
  }
  std::size_t submit() override {
    log_.push_back({Event::submit, monotonic_ns(), 0, 0, staged_.size()});
    const std::size_t n = staged_.size();
    for (const IoCompletion& c : staged_) done_.push_back(c);
    staged_.clear();
    return n;
  }
  std::size_t reap(std::size_t, std::span<IoCompletion> out, std::chrono::nanoseconds) override {
    std::size_t n = 0;
    while (n < out.size() && !done_.empty()) {
      out[n++] = done_.front();
      done_.pop_front();
    }
    log_.push_back({Event::reap, monotonic_ns(), 0, 0, n});
    return n;
  }
  std::size_t in_flight() const noexcept override { return staged_.size() + done_.size(); }

 private:
  std::vector<Event>& log_;
  std::size_t stage_limit_;
  std::vector<IoCompletion> staged_;
  std::deque<IoCompletion> done_;
};

struct Sample {
  LatencyHistogram latency;
  std::uint64_t ios = 0, bytes = 0;
};
struct OpenSample : OpenLoopSample {
  std::uint64_t bytes = 0;
};

/// The io kind's source and pacing: a closed loop over `total` 4 KiB requests at consecutive offsets.
struct ClosedLoop {
  std::uint64_t total = 0, handed = 0;
  std::vector<std::string> failures;
  std::vector<PumpCompletion> completions;
  Sample s;
  std::int64_t next_due_ns() const noexcept { return handed < total ? kDueNow : kNever; }
  bool prepare(IoRequest& r, std::uint32_t) {
    r.op = Op::read;
    r.offset_bytes = handed++ * 4096;
    r.length_bytes = 4096;
    return true;
  }
  bool keep_going() { return true; }
  void failed(const PumpCompletion&, const FailedIo& io) { failures.push_back(storage_failure(io, 0.5, "test")); }
  Sample& sample() { return s; }
  void completed(const PumpCompletion& c) { completions.push_back(c); }
};

/// vdbench's pacing: arrivals from an ArrivalSchedule (a high rate: every wait is short).
struct Arrivals : ClosedLoop {
  ArrivalSchedule schedule{200'000.0, ArrivalDistribution::exponential, Rng(3), monotonic_ns()};
  OpenSample os;
  std::int64_t next_due_ns() const noexcept { return handed < total ? schedule.peek_ns() : kNever; }
  bool prepare(IoRequest& r, std::uint32_t s) {
    schedule.next_ns();
    return ClosedLoop::prepare(r, s);
  }
  OpenSample& sample() { return os; }
};

/// The replayer's pacing: a trace schedule where every third entry is an in-line operation (a
/// flush): staged requests are submitted first and no I/O is issued for it.
struct TraceLike : ClosedLoop {
  Pump* pump = nullptr;
  std::int64_t t0 = monotonic_ns();
  std::uint64_t entry = 0, inline_ops = 0;
  std::int64_t next_due_ns() const noexcept {
    return handed < total ? t0 + static_cast<std::int64_t>(entry) * 1000 : kNever;
  }
  bool prepare(IoRequest& r, std::uint32_t s) {
    if (entry++ % 3 == 2) {
      pump->submit_staged();
      ++inline_ops;
      return false;
    }
    return ClosedLoop::prepare(r, s);
  }
};

/// Every queue() event's request was stamped after the engine call before it, and submitted by a
/// later submit(); returns the number of queue events checked.
std::size_t check_stamps(const std::vector<Event>& log) {
  std::size_t checked = 0;
  for (std::size_t i = 0; i < log.size(); ++i) {
    if (log[i].kind != Event::queue) continue;
    ++checked;
    EXPECT_LE(log[i].issue_ns, log[i].t_ns) << "request " << log[i].user_data << " stamped after its queue()";
    if (i > 0) EXPECT_GE(log[i].issue_ns, log[i - 1].t_ns) << "request " << log[i].user_data << " stamped too early";
    bool submitted = false;
    for (std::size_t j = i + 1; j < log.size() && !submitted; ++j) submitted = log[j].kind == Event::submit;
    EXPECT_TRUE(submitted) << "request " << log[i].user_data << " never submitted";
  }
  return checked;
}

/// The pump's staging rule: at most `batch` queued between submits, and none staged at a reap.
void check_staging(const std::vector<Event>& log, std::size_t batch) {
  std::size_t staged = 0;
  for (const Event& e : log) {
    if (e.kind == Event::queue) {
      ++staged;
      EXPECT_LE(staged, batch);
    } else if (e.kind == Event::submit) {
      staged = 0;
    } else {
      EXPECT_EQ(staged, 0u) << "a reap with requests staged";
    }
  }
}

Pump recording_pump(std::vector<Event>& log, std::uint32_t depth, PumpOptions o, std::size_t stage_limit = 1u << 30) {
  const int fds[] = {-1};
  return Pump(std::make_unique<RecordingEngine>(log, stage_limit), depth, o, fds, {"rec.dat"});
}

TEST(PumpStamps, ClosedLoopStampsJustBeforeQueue) {
  std::vector<Event> log;
  Pump pump = recording_pump(log, 8, {.batch_submit = 1});
  ClosedLoop d{.total = 100};
  EXPECT_EQ(pump.run(d), PumpEnd::exhausted);
  EXPECT_EQ(check_stamps(log), 100u);
  check_staging(log, 1);
  ASSERT_EQ(d.completions.size(), 100u);
  for (const PumpCompletion& c : d.completions) {
    EXPECT_EQ(c.intended_ns, c.issue_ns);  // closed loop: intended = issue
    EXPECT_LE(c.issue_ns, c.done_ns);
  }
  EXPECT_EQ(d.s.ios, 100u);
  EXPECT_EQ(d.s.bytes, 100u * 4096);
  EXPECT_EQ(d.s.latency.count(), 100u);
  EXPECT_EQ(pump.issued(), 100u);
  EXPECT_EQ(pump.completed(), 100u);
}

TEST(PumpStamps, ArrivalScheduleStampsAtTheSamePoint) {
  std::vector<Event> log;
  Pump pump = recording_pump(log, 8, {.batch_submit = 8, .complete_max = 8});
  Arrivals d;
  d.total = 200;
  EXPECT_EQ(pump.run(d), PumpEnd::exhausted);
  EXPECT_EQ(check_stamps(log), 200u);
  check_staging(log, 8);
  ASSERT_EQ(d.completions.size(), 200u);
  for (const PumpCompletion& c : d.completions) {
    EXPECT_LE(c.intended_ns, c.issue_ns);  // issued only once due
    EXPECT_LE(c.issue_ns, c.done_ns);
  }
  EXPECT_EQ(d.os.ios, 200u);
  EXPECT_EQ(d.os.reads, 200u);
  EXPECT_EQ(d.os.lateness.count(), 200u);
  EXPECT_EQ(d.os.service.count(), 200u);
}

TEST(PumpStamps, TraceScheduleWithInlineOperationsStampsAtTheSamePoint) {
  std::vector<Event> log;
  Pump pump = recording_pump(log, 4, {.batch_submit = 4, .complete_max = 4});
  TraceLike d;
  d.total = 60;
  d.pump = &pump;
  EXPECT_EQ(pump.run(d), PumpEnd::exhausted);
  EXPECT_EQ(check_stamps(log), 60u);
  check_staging(log, 4);
  EXPECT_EQ(d.inline_ops, 29u);  // entries 2, 5, ..., 86 of the 89 it took to hand out 60 requests
  EXPECT_EQ(d.completions.size(), 60u);
}

TEST(PumpStaging, BusyWithStagedRequestsSubmitsAndRetries) {
  std::vector<Event> log;
  Pump pump = recording_pump(log, 8, {.batch_submit = 8, .complete_max = 8}, /*stage_limit=*/3);
  ClosedLoop d{.total = 50};
  EXPECT_EQ(pump.run(d), PumpEnd::exhausted);
  EXPECT_EQ(d.completions.size(), 50u);
  // Each refused queue() is followed by a submit and the same request again, stamped anew.
  std::size_t refusals = 0;
  for (std::size_t i = 0; i + 2 < log.size(); ++i) {
    if (log[i].kind != Event::queue || log[i + 1].kind != Event::submit || log[i + 2].kind != Event::queue) continue;
    if (log[i].user_data != log[i + 2].user_data) continue;
    ++refusals;
    EXPECT_GE(log[i + 2].issue_ns, log[i + 1].t_ns);
  }
  EXPECT_GT(refusals, 0u);
}

TEST(PumpStaging, BusyWithNothingStagedIsAnInternalErrorNamingEngineAndDepth) {
  std::vector<Event> log;
  const int fds[] = {-1};
  auto engine = std::make_unique<RecordingEngine>(log);
  engine->refuse_always = true;
  Pump pump(std::move(engine), 4, {}, fds);
  ClosedLoop d{.total = 10};
  try {
    pump.run(d);
    FAIL() << "expected InternalError";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("engine recording refused a request"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("queue depth 4"), std::string::npos) << e.what();
  }
}

TEST(PumpFailure, EioAndShortTransfersBecomeTheStorageFailureText) {
  for (const std::int64_t result : {std::int64_t{-EIO}, std::int64_t{512}}) {
    std::vector<Event> log;
    const int fds[] = {-1};
    auto engine = std::make_unique<RecordingEngine>(log);
    engine->fail_offset = 3 * 4096;
    engine->fail_result = result;
    Pump pump(std::move(engine), 4, {}, fds, {"/dev/sdz"});
    ClosedLoop d{.total = 10};
    EXPECT_EQ(pump.run(d), PumpEnd::exhausted);
    ASSERT_EQ(d.failures.size(), 1u);
    const std::string cause = result < 0 ? "Input/output error (EIO)" : "short transfer of 512 bytes";
    EXPECT_EQ(d.failures[0],
              "storage failure: read of 4096 bytes at offset 12288 from /dev/sdz: " + cause + ", 0.50 s into the test");
    EXPECT_EQ(d.s.ios, 9u);  // the failed one is not a latency sample
  }
}

TEST(PumpData, ScrambleStampsEvery4KiBOfAWrite) {
  std::vector<Event> log;
  Pump pump = recording_pump(log, 1, {.slot_bytes = 16384, .scramble_writes = true});
  struct Writes : ClosedLoop {
    std::vector<std::vector<std::uint64_t>> stamps;
    bool prepare(IoRequest& r, std::uint32_t s) {
      ClosedLoop::prepare(r, s);
      r.op = Op::write;
      r.length_bytes = 16384;
      return true;
    }
    void completed(const PumpCompletion& c) {
      std::vector<std::uint64_t>& v = stamps.emplace_back();
      for (std::uint32_t at = 0; at < 16384; at += 4096) {
        std::uint64_t w;
        std::memcpy(&w, c.request->buffer + at, sizeof w);
        v.push_back(w);
      }
    }
  } d;
  d.total = 3;
  pump.run(d);
  ASSERT_EQ(d.stamps.size(), 3u);
  std::vector<std::uint64_t> all;
  for (const auto& v : d.stamps) all.insert(all.end(), v.begin(), v.end());
  for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i], i + 1);  // unique, in order
}

// ---- (b) the real engines on a real file ----

constexpr std::uint32_t kBlock = 4096;
constexpr std::uint32_t kBlocks = 256;
constexpr std::uint32_t kDepth = 16;

class PumpOnEngine : public testing::TestWithParam<const char*> {};

std::string engine_case_name(const testing::TestParamInfo<const char*>& info) { return info.param; }

/// Writes block b with bytes (b * 7 + 1), or reads every block and checks it; a closed loop in
/// a shuffled block order, tracking the most requests in flight.
struct BlockDriver {
  Pump* pump = nullptr;
  Op op = Op::write;
  std::vector<std::uint32_t> order;
  std::size_t handed = 0;
  std::uint64_t stop_after = ~0ull;  // keep_going() false once this many completed
  std::uint32_t max_in_flight = 0;
  std::uint64_t bad_data = 0, good_reads = 0;
  std::vector<std::string> failures;
  Sample s;
  std::int64_t next_due_ns() const noexcept { return handed < order.size() ? kDueNow : kNever; }
  bool prepare(IoRequest& r, std::uint32_t) {
    const std::uint32_t b = order[handed++];
    r.op = op;
    r.file_index = 0;
    r.offset_bytes = std::uint64_t{b} * kBlock;
    r.length_bytes = kBlock;
    if (op == Op::write) std::memset(r.buffer, static_cast<int>(b * 7 + 1), kBlock);
    max_in_flight = std::max(max_in_flight, pump->in_flight() + 1);
    return true;
  }
  bool keep_going() const noexcept { return s.ios < stop_after; }
  void failed(const PumpCompletion&, const FailedIo& io) { failures.push_back(storage_failure(io, 0, "test")); }
  Sample& sample() { return s; }
  void completed(const PumpCompletion& c) {
    if (op != Op::read) return;
    const auto b = static_cast<std::uint32_t>(c.request->offset_bytes / kBlock);
    const auto expect = static_cast<std::byte>(b * 7 + 1);
    bool ok = true;
    for (std::uint32_t i = 0; i < kBlock; ++i) ok = ok && c.request->buffer[i] == expect;
    ++(ok ? good_reads : bad_data);
  }
};

std::vector<std::uint32_t> shuffled_blocks() {
  std::vector<std::uint32_t> v(kBlocks);
  for (std::uint32_t i = 0; i < kBlocks; ++i) v[i] = i;
  Rng rng(11);
  for (std::size_t i = v.size(); i > 1; --i)
    std::swap(v[i - 1], v[static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(i) - 1))]);
  return v;
}

TEST_P(PumpOnEngine, WritesAndReadsLandAtTheirOffsetsWithinTheDepth) {
  const std::string engine = GetParam();
  SKIP_UNLESS_USABLE(engine);
  drivelab::test_support::TempDir dir;
  TargetFile file = TargetFile::open(
      {.dir = dir.path(), .test_name = "pump", .size_bytes = kBlock * kBlocks, .direct = false, .fill = false});
  const int fds[] = {file.fd()};
  Pump pump(engine, {.queue_depth = kDepth},
            {.slot_bytes = kBlock, .batch_submit = 4, .complete_max = 4, .scramble_writes = false}, fds,
            {file.path().string()});
  const bool no_io = pump.engine().capabilities().has(Capability::no_io);
  const std::uint32_t depth = pump.async() ? kDepth : 1;
  EXPECT_EQ(pump.depth(), depth);

  BlockDriver w{.pump = &pump, .op = Op::write, .order = shuffled_blocks()};
  EXPECT_EQ(pump.run(w), PumpEnd::exhausted);
  EXPECT_TRUE(w.failures.empty()) << w.failures.front();
  EXPECT_EQ(w.s.ios, kBlocks);
  EXPECT_LE(w.max_in_flight, depth);
  if (pump.async()) EXPECT_EQ(w.max_in_flight, depth);  // the closed loop keeps every slot busy
  if (!no_io) {                                         // the file holds each block's pattern where it was written
    AlignedBuffer back(kBlock);
    for (std::uint32_t b = 0; b < kBlocks; ++b) {
      ASSERT_EQ(::pread(file.fd(), back.data(), kBlock, static_cast<off_t>(b) * kBlock), kBlock);
      EXPECT_EQ(back.data()[0], static_cast<std::byte>(b * 7 + 1)) << "block " << b;
      EXPECT_EQ(back.data()[kBlock - 1], static_cast<std::byte>(b * 7 + 1)) << "block " << b;
    }
  }
  BlockDriver r{.pump = &pump, .op = Op::read, .order = shuffled_blocks()};
  EXPECT_EQ(pump.run(r), PumpEnd::exhausted);
  EXPECT_EQ(r.s.ios, kBlocks);
  EXPECT_LE(r.max_in_flight, depth);
  if (!no_io) {
    EXPECT_EQ(r.good_reads, kBlocks);
    EXPECT_EQ(r.bad_data, 0u);
  }
  EXPECT_EQ(pump.issued(), 2u * kBlocks);
  EXPECT_EQ(pump.completed(), 2u * kBlocks);
}

TEST_P(PumpOnEngine, StopDrainsEverythingInFlight) {
  const std::string engine = GetParam();
  SKIP_UNLESS_USABLE(engine);
  drivelab::test_support::TempDir dir;
  TargetFile file = TargetFile::open(
      {.dir = dir.path(), .test_name = "pump", .size_bytes = kBlock * kBlocks, .direct = false, .fill = false});
  const int fds[] = {file.fd()};
  Pump pump(engine, {.queue_depth = kDepth}, {.slot_bytes = kBlock}, fds, {file.path().string()});
  BlockDriver d{.pump = &pump, .op = Op::read, .order = shuffled_blocks(), .stop_after = 40};
  EXPECT_EQ(pump.run(d), PumpEnd::stopped);
  EXPECT_EQ(pump.in_flight(), 0u);
  EXPECT_EQ(pump.engine().in_flight(), 0u);
  EXPECT_EQ(pump.issued(), pump.completed());
  EXPECT_GE(d.s.ios, 40u);
  EXPECT_LT(d.s.ios, kBlocks);  // it stopped before the source ran out
  EXPECT_EQ(d.s.ios, pump.completed());
}

TEST_P(PumpOnEngine, ShortTransfersAndErrnosBecomeTheStorageFailureText) {
  const std::string engine = GetParam();
  SKIP_UNLESS_USABLE(engine);
  if (engine == "null") GTEST_SKIP() << "the null engine performs no I/O: nothing can fail";
  drivelab::test_support::TempDir dir;
  TargetFile file = TargetFile::open(
      {.dir = dir.path(), .test_name = "pump", .size_bytes = kBlock * 4, .direct = false, .fill = false});
  const std::string path = file.path().string();
  {  // a read of the block after the end of the file transfers 0 bytes
    const int fds[] = {file.fd()};
    Pump pump(engine, {.queue_depth = 4}, {.slot_bytes = kBlock}, fds, {path});
    BlockDriver d{.pump = &pump, .op = Op::read, .order = {0, 1, 4, 2}};
    EXPECT_EQ(pump.run(d), PumpEnd::exhausted);
    ASSERT_EQ(d.failures.size(), 1u);
    EXPECT_EQ(d.failures[0], "storage failure: read of 4096 bytes at offset 16384 from " + path +
                                 ": short transfer of 0 bytes, 0.00 s into the test");
    EXPECT_EQ(d.s.ios, 3u);
  }
  {  // a write through a read-only descriptor fails with -EBADF
    const UniqueFd ro(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    ASSERT_GE(ro.get(), 0);
    const int fds[] = {ro.get()};
    Pump pump(engine, {.queue_depth = 4}, {.slot_bytes = kBlock}, fds, {path});
    BlockDriver d{.pump = &pump, .op = Op::write, .order = {1}};
    EXPECT_EQ(pump.run(d), PumpEnd::exhausted);
    ASSERT_EQ(d.failures.size(), 1u);
    EXPECT_EQ(d.failures[0], "storage failure: write of 4096 bytes at offset 4096 to " + path +
                                 ": Bad file descriptor (EBADF), 0.00 s into the test");
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, PumpOnEngine, testing::Values("psync", "libaio", "io_uring", "null"),
                         engine_case_name);

}  // namespace
}  // namespace drivelab::io
