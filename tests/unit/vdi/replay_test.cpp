// The timed replayer on real O_DIRECT files in temp dirs: mapping (fold, shift, alignment, several
// targets), exact counts and bytes, overflow of a bounded queue, verify headers catching a
// corrupted block, intervals closed in order off the replaying thread and a stop request; and the `vdi` kind end to end
// (a linked-clone boot of 50 desktops in short form, a curve), with its config decoding.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/mount.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "../emulators/target_kind_harness.hpp"  // usable_engine
#include "../io/target_loop_device.hpp"
#include "emulator_harness.hpp"
#include "temp_dir.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/core/fd.hpp"
#include "drivelab/io/target_file.hpp"
#include "drivelab/trace/native.hpp"
#include "drivelab/vdi/register.hpp"
#include "drivelab/vdi/replay.hpp"
#include "drivelab/vdi/vdi_model.hpp"

namespace drivelab::vdi {
namespace {

using test_support::TempDir;

/// A test of a vdi kind driven through the Emulator interface as the runner drives it.
struct KindTest : test_support::EmulatorHarness {
  KindTest(const std::string& kind, const std::filesystem::path& target, const std::string& section_yaml,
           std::chrono::nanoseconds duration, std::chrono::nanoseconds interval)
      : EmulatorHarness(&register_emulators, kind, target, section_yaml, std::chrono::nanoseconds(0), duration,
                        interval) {}
};
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

/// A trace held in memory.
class VectorSource final : public trace::TraceSource {
 public:
  VectorSource(std::vector<trace::TraceIo> ios, std::vector<std::string> devices, std::int64_t tick_ns = 1)
      : ios_(std::move(ios)), devices_(std::move(devices)), tick_(tick_ns) {}
  bool next(trace::TraceIo& io) override {
    if (i_ >= ios_.size()) return false;
    io = ios_[i_++];
    return true;
  }
  const std::vector<std::string>& devices() const override { return devices_; }
  std::int64_t tick_ns() const override { return tick_; }
  std::string describe() const override { return "vector"; }
  void rewind() { i_ = 0; }

 private:
  std::vector<trace::TraceIo> ios_;
  std::vector<std::string> devices_;
  std::int64_t tick_;
  std::size_t i_ = 0;
};

std::string engine() { return emulators::testing::usable_engine(); }

io::TargetFile open_file(const TempDir& dir, const std::string& name, std::uint64_t size) {
  return io::TargetFile::open({.dir = dir.path(), .test_name = name, .size_bytes = size, .direct = true, .seed = 9});
}

TEST(ReplayMapping, FoldsShiftsAlignsAndSpreadsDevicesOverTargets) {
  TraceSummary s;
  s.devices = {"a", "b", "c"};
  s.max_size_bytes = 8192;
  const std::vector<ReplayTarget> two{{-1, 0, 16 * kMiB, {}}, {-1, 1 * kMiB, 8 * kMiB, {}}};
  Replayer r({.engine = "null", .queue_depth = 4, .align_bytes = 4096}, two, s);
  // 3 devices on 2 targets: 2 slots per target, each min(16, 8) MiB / 2 = 4 MiB.
  EXPECT_EQ(r.slots_per_target(), 2u);
  EXPECT_EQ(r.slot_length_bytes(), 4 * kMiB);
  auto m = r.map(0, 4096, 4096);  // device 0 -> target 0, slot 0
  EXPECT_EQ(m.target, 0u);
  EXPECT_EQ(m.offset_bytes, 4096u);
  m = r.map(1, 10 * kMiB + 5000, 1000);  // device 1 -> target 1, slot 0; folded, aligned down, length up
  EXPECT_EQ(m.target, 1u);
  EXPECT_EQ(m.offset_bytes, 1 * kMiB + (10 * kMiB + 5000) % (4 * kMiB) / 4096 * 4096);
  EXPECT_EQ(m.length_bytes, 4096u);
  m = r.map(2, 4 * kMiB - 4096, 8192);  // device 2 -> target 0, slot 1; would cross the slot end
  EXPECT_EQ(m.target, 0u);
  EXPECT_EQ(m.offset_bytes, 4 * kMiB + 4 * kMiB - 8192);
  Replayer shifted({.engine = "null", .queue_depth = 4, .align_bytes = 512, .offset_shift_bytes = 1024}, two, s);
  EXPECT_EQ(shifted.map(0, 512, 512).offset_bytes, 1536u);
  s.max_size_bytes = 8 * kMiB;
  EXPECT_THROW(Replayer({.engine = "null"}, two, s), ConfigError) << "a request larger than a slot";
}

TEST(Replay, IssuesExactlyTheTracesCountsAndBytesOnODirect) {
  TempDir dir;
  io::TargetFile f = open_file(dir, "exact", 16 * kMiB);
  std::vector<trace::TraceIo> ios;
  for (int i = 0; i < 200; ++i)
    ios.push_back({.time_ns = i * 20'000,
                   .offset_bytes = static_cast<std::uint64_t>(i) * 40960 % (64 * kMiB),
                   .size_bytes = static_cast<std::uint32_t>(4096 * (1 + i % 4)),
                   .device = static_cast<std::uint32_t>(i % 2),
                   .op = i % 3 == 0 ? trace::TraceOp::write : trace::TraceOp::read});
  ios.push_back({.time_ns = 4'000'000, .device = 0, .op = trace::TraceOp::flush});
  VectorSource src(ios, {"0", "1"});
  const TraceSummary s = summarize(src);
  EXPECT_EQ(s.ios, 201u);
  EXPECT_EQ(s.other, 1u);
  src.rewind();
  Replayer r({.engine = engine(), .queue_depth = 8, .align_bytes = f.direct_alignment_bytes()},
             {{f.fd(), f.region_offset(), f.region_length(), {}}}, s);
  const ReplayResult res = r.replay(src, 1.0, false);
  EXPECT_TRUE(res.complete);
  EXPECT_EQ(res.total.reads, s.reads);
  EXPECT_EQ(res.total.writes, s.writes);
  EXPECT_EQ(res.total.read_bytes, s.read_bytes);
  EXPECT_EQ(res.total.write_bytes, s.write_bytes);
  EXPECT_EQ(res.flushes_replayed, 1u) << "flushes: replay is the default";
  EXPECT_EQ(res.flushes_skipped, 0u);
  EXPECT_EQ(res.total.errors, 0u) << res.first_error;
  EXPECT_EQ(res.rounded_ios, 0u);
  EXPECT_EQ(res.total.lateness.count(), 200u);
  EXPECT_EQ(res.total.latency.count(), 200u);
  // The intended schedule spans 3.98 ms: the replay cannot finish before it.
  EXPECT_GE(res.elapsed_s, 0.00398 - 0.0001);
}

TEST(Replay, ABoundedQueueCountsTheOverflow) {
  TempDir dir;
  io::TargetFile f = open_file(dir, "overflow", 4 * kMiB);
  std::vector<trace::TraceIo> ios;
  for (int i = 0; i < 64; ++i)
    ios.push_back({.time_ns = 0, .offset_bytes = 4096u * i, .size_bytes = 4096, .op = trace::TraceOp::read});
  VectorSource src(ios, {"0"}, 1);  // 64 requests due at once, 1 ns tick
  const TraceSummary s = summarize(src);
  src.rewind();
  Replayer r({.engine = engine(), .queue_depth = 2, .align_bytes = 4096}, {{f.fd(), 0, f.region_length(), {}}}, s);
  const ReplayResult res = r.replay(src, 1.0, false);
  EXPECT_EQ(res.total.ios, 64u);
  EXPECT_GT(res.overflow_ios, 0u) << "an open-loop replay that cannot keep up says so";
  EXPECT_GT(res.max_backlog, 0u);
  // no_stall issues in order as slots free up: nothing is late, nothing overflows.
  src.rewind();
  const ReplayResult fast = r.replay(src, 1.0, true);
  EXPECT_EQ(fast.total.ios, 64u);
  EXPECT_EQ(fast.overflow_ios, 0u);
}

// Issue 15: max_backlog_ios counted one same-timestamp group, so it was 1 even when 580,000
// requests were overdue. 2000 reads of 64 KiB, 1 us apart (each its own timestamp), on psync with
// one slot: the target needs far more than 1 us per read, so nearly the whole trace is due before
// the replay gets through it.
TEST(Replay, ATraceFasterThanTheTargetReportsItsRealBacklog) {
  TempDir dir;
  io::TargetFile f = open_file(dir, "backlog", 32 * kMiB);
  std::vector<trace::TraceIo> ios;
  constexpr int kIos = 2000;
  for (int i = 0; i < kIos; ++i)
    ios.push_back({.time_ns = i * 1000ll,
                   .offset_bytes = (65536ull * i) % (32 * kMiB),
                   .size_bytes = 65536,
                   .op = trace::TraceOp::read});
  VectorSource src(ios, {"0"}, 1);
  const TraceSummary s = summarize(src);
  src.rewind();
  Replayer r({.engine = "psync", .queue_depth = 1, .align_bytes = f.direct_alignment_bytes()},
             {{f.fd(), f.region_offset(), f.region_length(), {}}}, s);
  const ReplayResult res = r.replay(src, 1.0, false);
  ASSERT_TRUE(res.complete);
  ASSERT_EQ(res.total.ios, static_cast<std::uint64_t>(kIos)) << res.first_error;
  // The intended schedule spans 2 ms; the replay took longer by far (every read >= 1 us).
  const double schedule_s = (kIos - 1) * 1e-6;
  ASSERT_GT(res.elapsed_s, 5 * schedule_s) << "the target kept up: no backlog to measure";
  // At the schedule's end every request is due and, at the replay's mean rate, about
  // kIos x schedule / elapsed (< 20%) of them are issued: the backlog peaks above half the trace.
  EXPECT_GT(res.max_backlog, static_cast<std::uint64_t>(kIos / 2));
  EXPECT_LE(res.max_backlog, static_cast<std::uint64_t>(kIos));
  // Mean over the replay: the sum of lateness over its span; about half the trace is waiting.
  EXPECT_GT(res.mean_backlog, kIos / 4.0);
  EXPECT_LT(res.mean_backlog, static_cast<double>(kIos));
  EXPECT_GT(res.total.lateness.percentile(99), kLatenessBoundNs);
  RecordProperty("max_backlog", static_cast<int>(res.max_backlog));
  RecordProperty("mean_backlog", std::to_string(res.mean_backlog));
  RecordProperty("elapsed_ms", std::to_string(res.elapsed_s * 1e3));
  // A trace the target keeps up with: each request is due alone (the backlog is itself, for its
  // few us of lateness), nothing waits behind it. 50 ms apart, so that only a stall of the replay
  // thread longer than that puts a second request behind the first (10 ms apart, a loaded suite
  // failed this test once).
  std::vector<trace::TraceIo> slow;
  for (int i = 0; i < 20; ++i)
    slow.push_back(
        {.time_ns = i * 50'000'000ll, .offset_bytes = 65536ull * i, .size_bytes = 4096, .op = trace::TraceOp::read});
  VectorSource relaxed(slow, {"0"}, 1);
  const ReplayResult calm = r.replay(relaxed, 1.0, false);
  EXPECT_GE(calm.max_backlog, 1u);
  EXPECT_LE(calm.max_backlog, 2u);
  EXPECT_LT(calm.mean_backlog, 0.5);
}

// Issue 29: a request stamped earlier than its predecessor is issued with it (in trace order), but
// its latency, lateness and the backlog were measured from its raw, earlier stamp: 4 reads stamped
// 5 s, 0, 0.1 s, 0.2 s replay at once, yet reported a latency p99 of 5 s, a mean backlog in the
// thousands and lateness far past the 1 ms bound ("did not keep up"). They count from when each
// could start: the later of its stamp and its predecessor's intended start.
TEST(Replay, ARequestStampedBeforeItsPredecessorIsMeasuredFromWhenItCouldStart) {
  TempDir dir;
  io::TargetFile f = open_file(dir, "backwards", 4 * kMiB);
  std::vector<trace::TraceIo> ios;
  for (std::int64_t t : {5'000'000'000ll, 0ll, 100'000'000ll, 200'000'000ll})
    ios.push_back({.time_ns = t, .offset_bytes = 4096u * ios.size(), .size_bytes = 4096, .op = trace::TraceOp::read});
  VectorSource src(ios, {"0"});
  const TraceSummary s = summarize(src);
  EXPECT_EQ(s.out_of_order, 1u);
  EXPECT_EQ(s.max_backward_ns, 5'000'000'000);
  src.rewind();
  Replayer r({.engine = engine(), .queue_depth = 4, .align_bytes = f.direct_alignment_bytes()},
             {{f.fd(), f.region_offset(), f.region_length(), {}}}, s);
  const ReplayResult res = r.replay(src, 1.0, false);
  ASSERT_TRUE(res.complete);
  ASSERT_EQ(res.total.ios, 4u) << res.first_error;
  EXPECT_LT(res.elapsed_s, 1.0) << "all four are due at the replay's start";
  // Latency of the real I/O scale (a 4 KiB O_DIRECT read: well under 100 ms even on a busy VM),
  // not the 5 s between the stamps.
  EXPECT_LT(res.total.latency.percentile(99), 100'000'000) << "was 5 s";
  EXPECT_LT(res.total.lateness.percentile(99), 100'000'000);
  // Each of the 4 is late by at most the replay's span (all are due at its start): a mean over
  // that span of at most 4, whatever the VM's scheduling noise.
  EXPECT_LE(res.mean_backlog, 4.0) << "was 16,120.7 in the issue's run";
  EXPECT_LE(res.max_backlog, 4u);

  // A 1.5 ms step back alone passed the 1 ms lateness bound, its lateness counted from the raw
  // stamp. Stretched 100 times (time_scale 100: steps of 150 ms, requests 200 ms apart) so that
  // this VM's scheduling noise (a few ms under load) cannot hide it: 10 reads 2 ms apart in trace
  // time, every 3rd stamped 1.5 ms before its predecessor. From the raw stamps each stepped request
  // was at least 150 ms late; from when it could start, it is as late as the others.
  std::vector<trace::TraceIo> steps;
  std::int64_t t = 0;
  for (int i = 0; i < 10; ++i) {
    t += i % 3 == 2 ? -1'500'000 : 2'000'000;
    steps.push_back({.time_ns = t, .offset_bytes = 4096u * i, .size_bytes = 4096, .op = trace::TraceOp::read});
  }
  VectorSource stepped(steps, {"0"});
  const TraceSummary ss = summarize(stepped);
  EXPECT_EQ(ss.out_of_order, 3u);
  EXPECT_EQ(ss.max_backward_ns, 1'500'000);
  stepped.rewind();
  const ReplayResult calm = r.replay(stepped, 100.0, false);
  ASSERT_EQ(calm.total.ios, 10u) << calm.first_error;
  EXPECT_LT(calm.total.lateness.max(), 100'000'000) << "was above 150 ms";
  EXPECT_LT(calm.total.latency.max(), 100'000'000);
  RecordProperty("stepped_lateness_max_us", std::to_string(calm.total.lateness.max() / 1000));
}

// Issue 15: flushes and discards were skipped silently. A trace with a flush request, writes with
// a preflush and with FUA, and a discard: replayed, they are an fdatasync each (the FUA write's
// after it completes) and a hole punched in the mapped range; skipped, each is counted.
TEST(Replay, FlushesFuaAndDiscardsAreReplayedOrCountedAsSkipped) {
  TempDir dir;
  io::TargetFile f = open_file(dir, "sync", 8 * kMiB);
  const std::uint32_t a = f.direct_alignment_bytes();
  std::vector<trace::TraceIo> ios;
  std::int64_t t = 0;
  for (int i = 0; i < 8; ++i)
    ios.push_back({.time_ns = t += 10'000, .offset_bytes = 4096u * i, .size_bytes = 4096, .op = trace::TraceOp::write});
  ios.push_back({.time_ns = t += 10'000, .op = trace::TraceOp::flush});
  ios.push_back({.time_ns = t += 10'000,
                 .offset_bytes = 65536,
                 .size_bytes = 4096,
                 .op = trace::TraceOp::write,
                 .flags = trace::TraceIo::kPreflush | trace::TraceIo::kFua});  // blkparse FWFS
  ios.push_back({.time_ns = t += 10'000,
                 .offset_bytes = 69632,
                 .size_bytes = 4096,
                 .op = trace::TraceOp::write,
                 .flags = trace::TraceIo::kFua});  // WFS
  ios.push_back(
      {.time_ns = t += 10'000, .offset_bytes = 2 * kMiB, .size_bytes = 1 * kMiB, .op = trace::TraceOp::discard});
  VectorSource src(ios, {"0"});
  const TraceSummary s = summarize(src);
  EXPECT_EQ(s.flushes, 2u) << "the flush request and the preflush";
  EXPECT_EQ(s.fua, 2u);
  EXPECT_EQ(s.discards, 1u);
  // The discarded MiB is data before the replay (the file is filled), a hole after it.
  ASSERT_EQ(::lseek(f.fd(), static_cast<off_t>(f.region_offset() + 2 * kMiB), SEEK_HOLE),
            static_cast<off_t>(f.region_length() + f.region_offset()))
      << "a filled file has no hole before the end";
  src.rewind();
  Replayer r({.engine = engine(), .queue_depth = 4, .align_bytes = a, .verify = true},
             {{f.fd(), f.region_offset(), f.region_length(), f.path().string()}}, s);
  const ReplayResult res = r.replay(src, 1.0, false);
  ASSERT_TRUE(res.first_error.empty()) << res.first_error;
  EXPECT_EQ(res.total.writes, 10u);
  EXPECT_EQ(res.flushes_replayed, 2u);
  EXPECT_EQ(res.fua_replayed, 2u);
  EXPECT_EQ(res.discards_replayed, 1u);
  EXPECT_EQ(res.flushes_skipped + res.fua_skipped + res.discards_skipped, 0u);
  const off_t hole = static_cast<off_t>(f.region_offset() + 2 * kMiB);
  if (::fallocate(f.fd(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, hole, 0) == 0 || errno != EOPNOTSUPP) {
    EXPECT_EQ(::lseek(f.fd(), hole, SEEK_HOLE), hole) << "the discard punched a hole";
  }
  ReplayResult after;
  EXPECT_EQ(r.verify_written(after), 0u) << "units written and then discarded are not expected back";

  Replayer skip({.engine = engine(),
                 .queue_depth = 4,
                 .align_bytes = a,
                 .flushes = TraceAction::skip,
                 .discards = TraceAction::skip},
                {{f.fd(), f.region_offset(), f.region_length(), {}}}, s);
  src.rewind();
  const ReplayResult sk = skip.replay(src, 1.0, false);
  EXPECT_EQ(sk.total.writes, 10u);
  EXPECT_EQ(sk.flushes_skipped, 2u);
  EXPECT_EQ(sk.fua_skipped, 2u);
  EXPECT_EQ(sk.discards_skipped, 1u);
  EXPECT_EQ(sk.flushes_replayed + sk.fua_replayed + sk.discards_replayed, 0u);
}

TEST(Replay, IntervalsAreClosedInOrderAndAStopRequestEndsTheReplay) {
  TempDir dir;
  io::TargetFile f = open_file(dir, "intervals", 4 * kMiB);
  // 400 reads 1 ms apart (0.4 s), intervals of 50 ms.
  std::vector<trace::TraceIo> ios;
  for (int i = 0; i < 400; ++i)
    ios.push_back({.time_ns = i * 1'000'000ll,
                   .offset_bytes = 4096u * (i % 512),
                   .size_bytes = 4096,
                   .op = trace::TraceOp::read});
  VectorSource src(ios, {"0"});
  const TraceSummary s = summarize(src);
  Replayer r({.engine = engine(), .queue_depth = 4, .align_bytes = 4096, .interval_ns = 50'000'000},
             {{f.fd(), 0, f.region_length(), {}}}, s);
  // Every interval reaches on_interval once, in time order, and they add up to the total.
  std::vector<std::int64_t> at;
  std::uint64_t summed = 0;
  src.rewind();
  const ReplayResult all = r.replay(src, 1.0, false, [&](ReplaySample& x, std::int64_t now) {
    at.push_back(now);
    summed += x.ios;
    return true;
  });
  EXPECT_TRUE(all.complete);
  EXPECT_EQ(all.total.ios, 400u);
  EXPECT_EQ(summed, 400u);
  EXPECT_GE(at.size(), 7u);
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end()));
  // on_interval returning false (a stop request) ends the replay early, marked incomplete.
  int calls = 0;
  src.rewind();
  const ReplayResult cut = r.replay(src, 1.0, false, [&](ReplaySample&, std::int64_t) { return ++calls < 2; });
  EXPECT_FALSE(cut.complete);
  EXPECT_LT(cut.issued, 400u);
  EXPECT_EQ(cut.total.ios, cut.issued) << "what was issued completed and was counted";
  // An exception from on_interval (e.g. a journal write failed) reaches the caller.
  src.rewind();
  EXPECT_THROW(
      r.replay(src, 1.0, false, [](ReplaySample&, std::int64_t) -> bool { throw EnvironmentError("disk full"); }),
      EnvironmentError);
}

// Issue 29: interval lines stopped while the replaying thread was blocked: in a wait for the next
// intended start, a reap, psync I/O, an fdatasync. Two reads 1.2 s apart with intervals of 100 ms:
// the thread sleeps through the gap, and the intervals of the gap used to come all at once after
// it (one call 1.2 s after the one before). The closer's worker closes them on time meanwhile.
TEST(Replay, IntervalsKeepComingWhileTheReplayingThreadIsBlocked) {
  TempDir dir;
  io::TargetFile f = open_file(dir, "gap", 4 * kMiB);
  std::vector<trace::TraceIo> ios{
      {.time_ns = 0, .size_bytes = 4096, .op = trace::TraceOp::read},
      {.time_ns = 1'200'000'000, .offset_bytes = 4096, .size_bytes = 4096, .op = trace::TraceOp::read}};
  VectorSource src(ios, {"0"});
  const TraceSummary s = summarize(src);
  src.rewind();
  Replayer r(
      {.engine = engine(), .queue_depth = 2, .align_bytes = f.direct_alignment_bytes(), .interval_ns = 100'000'000},
      {{f.fd(), f.region_offset(), f.region_length(), {}}}, s);
  std::vector<std::int64_t> at;
  std::uint64_t ios_seen = 0;
  const ReplayResult res = r.replay(src, 1.0, false, [&](ReplaySample& x, std::int64_t now) {
    at.push_back(now);
    ios_seen += x.ios;
    return true;
  });
  ASSERT_TRUE(res.complete);
  EXPECT_EQ(res.total.ios, 2u) << res.first_error;
  EXPECT_EQ(ios_seen, 2u) << "every completion in exactly one interval";
  ASSERT_GE(at.size(), 8u) << "about 12 intervals of 100 ms";
  std::int64_t widest = 0;
  for (std::size_t i = 1; i < at.size(); ++i) widest = std::max(widest, at[i] - at[i - 1]);
  EXPECT_LT(widest, 500'000'000) << "an interval line waited for the thread: " << widest / 1'000'000 << " ms";
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end()));
}

TEST(Replay, VerifyHeadersCatchACorruptedBlock) {
  TempDir dir;
  io::TargetFile f = open_file(dir, "verify", 4 * kMiB);
  std::vector<trace::TraceIo> writes, reads;
  for (int i = 0; i < 32; ++i) {
    writes.push_back({.time_ns = i * 1000, .offset_bytes = 8192u * i, .size_bytes = 8192, .op = trace::TraceOp::write});
    reads.push_back({.time_ns = i * 1000, .offset_bytes = 8192u * i, .size_bytes = 8192, .op = trace::TraceOp::read});
  }
  VectorSource w(writes, {"0"}), rd(reads, {"0"});
  TraceSummary s = summarize(w);
  w.rewind();
  const std::uint32_t a = f.direct_alignment_bytes();
  Replayer r({.engine = engine(), .queue_depth = 4, .align_bytes = a, .verify = true, .seed = 77},
             {{f.fd(), f.region_offset(), f.region_length(), {}}}, s);
  ReplayResult res = r.replay(w, 1.0, true);
  EXPECT_EQ(res.total.writes, 32u);
  EXPECT_EQ(r.verify_written(res), 0u) << (res.verify_errors.empty() ? "" : res.verify_errors.front());
  EXPECT_EQ(res.verify_checked_units, 32u * 8192 / a);
  ReplayResult clean = r.replay(rd, 1.0, true);
  EXPECT_EQ(clean.verify_mismatches, 0u);
  EXPECT_EQ(clean.verify_checked_units, 32u * 8192 / a) << "reads check every unit this replay wrote";

  // Corrupt the unit at 5 x 8192 behind the replayer's back (a buffered descriptor, then sync).
  {
    UniqueFd raw(::open(f.path().c_str(), O_WRONLY));
    ASSERT_GE(raw.get(), 0);
    std::vector<char> junk(a, 'x');
    ASSERT_EQ(::pwrite(raw.get(), junk.data(), junk.size(), 5 * 8192), static_cast<ssize_t>(a));
    ASSERT_EQ(::fsync(raw.get()), 0);
  }
  ReplayResult after;
  EXPECT_EQ(r.verify_written(after), 1u);
  ASSERT_FALSE(after.verify_errors.empty());
  EXPECT_NE(after.verify_errors.front().find("offset 40960"), std::string::npos) << after.verify_errors.front();
  rd.rewind();
  const ReplayResult bad = r.replay(rd, 1.0, true);
  EXPECT_EQ(bad.verify_mismatches, 1u) << "a read during the replay catches it too";
}

// ---- the `vdi` kind --------------------------------------------------------------------------

std::string problems(const std::string& kind, const std::string& yaml) {
  return test_support::decode_problems(&register_emulators, kind, yaml);
}

TEST(VdiKind, DecodeReportsBadKeysWithTheirPlace) {
  EXPECT_EQ(problems("vdi", "{phase: boot, clones: full, desktops: 50, curve: [50, 100], curve_of: recorded}"), "");
  const std::string p = problems("vdi", "{phase: lunch, clones: linked, desktop: 5, align: 3000, curve: [0]}");
  EXPECT_NE(p.find("t.yaml:1:"), std::string::npos) << p;
  EXPECT_NE(p.find("vdi.phase: phase must be one of: boot, initial_login, monday_login; found 'lunch'"),
            std::string::npos)
      << p;
  EXPECT_NE(p.find("unknown key 'desktop' (did you mean 'desktops'?)"), std::string::npos) << p;
  EXPECT_NE(p.find("align must be 'auto' or a power of two"), std::string::npos) << p;
  EXPECT_NE(p.find("curve points must be above 0"), std::string::npos) << p;
  // The curve list is every kind's (runner::decode_curve): "50%" reads as 50, a repeat is refused.
  EXPECT_EQ(problems("vdi", "{curve: ['50%', 100]}"), "");
  EXPECT_NE(problems("vdi", "{curve: [50, 50]}").find("curve point 50 repeats the point 50"), std::string::npos);
  const std::string sync = problems("vdi", "{flushes: sometimes,\n discards: never}");
  EXPECT_NE(sync.find("t.yaml:1:"), std::string::npos) << sync;
  EXPECT_NE(sync.find("vdi.flushes: flushes must be one of: replay, skip; found 'sometimes'"), std::string::npos)
      << sync;
  EXPECT_NE(sync.find("t.yaml:2:"), std::string::npos) << sync;
  EXPECT_NE(sync.find("vdi.discards: discards must be one of: replay, skip; found 'never'"), std::string::npos) << sync;
  EXPECT_EQ(problems("vdi", "{flushes: skip, discards: replay}"), "");
}

// Issue 15: a replay that cannot keep up reports its real backlog and warns when lateness passes
// the documented bound. A boot of 50 linked clones (1500 I/Os) fitted to 10 million IOPS on psync
// with one slot: scheduled over 150 us, it takes milliseconds.
TEST(VdiKind, AnOverloadedReplayReportsItsBacklogAndWarnsOfItsLateness) {
  TempDir dir;
  KindTest t("vdi", dir.path(),
             "{phase: boot, clones: linked, desktops: 50, phase_length: 200ms, stagger: 0s, image_size: 4MiB, "
             "file_size: 64MiB, queue_depth: 1, engine: psync, target_iops: 10000000, keep_file: false}",
             std::chrono::seconds(60), std::chrono::milliseconds(100));
  t.run_all();
  t.expect_checks_pass();
  EXPECT_GE(test_support::expect_interval_latency_histograms(t.record, "us"), 1u);
  EXPECT_GT(t.group_metric("replay", "max_backlog_ios"), 750);
  EXPECT_GT(t.group_metric("replay", "mean_backlog_ios"), 100);
  EXPECT_EQ(t.metric("max_backlog_ios"), t.group_metric("replay", "max_backlog_ios"));
  bool warned = false;
  for (const auto& w : t.record.warnings)
    warned |=
        w.find("replay: lateness p99") != std::string::npos && w.find("exceeds the 1 ms bound") != std::string::npos;
  EXPECT_TRUE(warned) << ::testing::PrintToString(t.record.warnings);
}

// Issue 29: kind `replay` of a trace stamped backwards (the issue's 4 requests) reports latencies
// and lateness of the real I/O scale (not the 5 s of the "did not keep up" warning), and says how
// many requests went backwards and by how much at most.
TEST(ReplayKind, ATraceStampedBackwardsIsNotReportedAsFallingBehind) {
  TempDir dir;
  std::vector<trace::TraceIo> ios;
  for (std::int64_t t : {5'000'000'000ll, 0ll, 100'000'000ll, 200'000'000ll})
    ios.push_back({.time_ns = t, .offset_bytes = 4096u * ios.size(), .size_bytes = 4096, .op = trace::TraceOp::read});
  VectorSource src(ios, {"0"});
  const std::filesystem::path file = dir.path() / "backwards.trace";
  trace::write_native_trace(src, file);
  KindTest t("replay", dir.path(),
             "{trace: '" + file.string() + "', file_size: 8MiB, engine: " + engine() + ", keep_file: false}",
             std::chrono::seconds(60), std::chrono::milliseconds(100));
  t.run_all();
  t.expect_checks_pass();
  EXPECT_LT(t.group_metric("replay", "latency_p99_us"), 100'000) << "was 5,000,000 (5 s)";
  EXPECT_LT(t.group_metric("replay", "lateness_p99_us"), 100'000) << "was 5,000,000: \"did not keep up\"";
  EXPECT_LE(t.group_metric("replay", "mean_backlog_ios"), 4.0) << "was 16,120.7";
  // The 1 ms lateness warning itself is not asserted absent: on a loaded 2-vCPU VM the replay
  // thread's own wake-up can be a few ms late (1.5-7 ms seen at load 6-8: real lateness, measured
  // as such); the lateness it would report was 5 s, and is now below 100 ms.
  EXPECT_EQ(t.record.details["trace"]["out_of_order"], 1);
  EXPECT_EQ(t.record.details["trace"]["max_backward_s"], 5.0);
}

// Issue 15: kind `replay` of a trace with flushes, FUA and a discard: replayed, the counts check
// against the trace's; skipped, each kind of skip is a warning with its count.
TEST(ReplayKind, FlushesAndDiscardsAreReplayedOrWarnedAboutWithTheirCount) {
  TempDir dir;
  std::vector<trace::TraceIo> ios;
  for (int i = 0; i < 16; ++i)
    ios.push_back({.time_ns = i * 50'000ll,
                   .offset_bytes = 4096u * i,
                   .size_bytes = 4096,
                   .op = trace::TraceOp::write,
                   .flags = i % 4 == 0 ? trace::TraceIo::kFua : std::uint8_t{0}});
  ios.push_back({.time_ns = 900'000, .op = trace::TraceOp::flush});
  ios.push_back({.time_ns = 950'000, .offset_bytes = 1 * kMiB, .size_bytes = 65536, .op = trace::TraceOp::discard});
  VectorSource src(ios, {"0"});
  const std::filesystem::path file = dir.path() / "sync.trace";
  trace::write_native_trace(src, file);
  const std::string section =
      "{trace: '" + file.string() + "', file_size: 8MiB, engine: " + engine() + ", keep_file: false";
  {
    KindTest t("replay", dir.path(), section + "}", std::chrono::seconds(60), std::chrono::milliseconds(100));
    t.run_all();
    t.expect_checks_pass();
    EXPECT_EQ(t.group_metric("replay", "flushes_replayed"), 1);
    EXPECT_EQ(t.group_metric("replay", "fua_replayed"), 4);
    EXPECT_EQ(t.group_metric("replay", "discards_replayed"), 1);
    for (const auto& w : t.record.warnings) EXPECT_EQ(w.find("skipped"), std::string::npos) << w;
  }
  KindTest t("replay", dir.path(), section + ", flushes: skip, discards: skip}", std::chrono::seconds(60),
             std::chrono::milliseconds(100));
  t.run_all();
  t.expect_checks_pass();
  EXPECT_EQ(t.group_metric("replay", "flushes_skipped"), 1);
  EXPECT_EQ(t.group_metric("replay", "fua_skipped"), 4);
  EXPECT_EQ(t.group_metric("replay", "discards_skipped"), 1);
  const std::string all = ::testing::PrintToString(t.record.warnings);
  EXPECT_NE(all.find("replay: 1 flushes and 4 FUA writes' syncs of the trace skipped (flushes: skip)"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("replay: 1 discards of the trace skipped (discards: skip)"), std::string::npos) << all;
}

/// Thin storage that fills: a loop device of `loop_bytes` whose sparse backing file sits on a tmpfs
/// of `tmpfs_bytes` of its own (LoopDevice::create's tmpfs_bytes, in loop->dir()); its writes fail
/// once the tmpfs is full. `loop` is empty, and `why` says why, where this machine or user cannot
/// make it.
struct ThinLoop {
  ThinLoop(std::uint64_t tmpfs_bytes, std::uint64_t loop_bytes)
      : loop(testing::LoopDevice::create(loop_bytes, why, false, tmpfs_bytes)) {}
  std::string why;  // before loop: create() writes it
  std::optional<testing::LoopDevice> loop;
};

// Issue 15: failing storage ends the replay with a storage failure naming the operation, length,
// offset, file and errno. A loop device of 64 MiB whose sparse backing file sits on a 4 MiB tmpfs:
// the writes past the tmpfs's 4 MiB fail (ENOSPC in the backing file, EIO or ENOSPC to us).
TEST(ReplayOnFailingStorage, AWriteErrorEndsTheReplayNamingOpLengthOffsetFileAndErrno) {
  TempDir dir;
  ThinLoop thin(4 * kMiB, 64 * kMiB);
  if (!thin.loop) GTEST_SKIP() << thin.why;
  const auto& loop = thin.loop;
  UniqueFd fd(::open(loop->path().c_str(), O_RDWR | O_DIRECT | O_CLOEXEC));
  ASSERT_GE(fd.get(), 0) << std::strerror(errno);
  std::vector<trace::TraceIo> ios;
  for (int i = 0; i < 128; ++i)  // 8 MiB of writes at distinct offsets
    ios.push_back(
        {.time_ns = i * 1000ll, .offset_bytes = 65536ull * i, .size_bytes = 65536, .op = trace::TraceOp::write});
  VectorSource src(ios, {"0"});
  const TraceSummary s = summarize(src);
  src.rewind();
  Replayer r({.engine = engine(), .queue_depth = 4, .align_bytes = 4096}, {{fd.get(), 0, 64 * kMiB, loop->path()}}, s);
  const ReplayResult res = r.replay(src, 1.0, true);
  ASSERT_FALSE(res.first_error.empty()) << "the tmpfs did not fill";
  const std::string& e = res.first_error;
  EXPECT_EQ(e.rfind("storage failure: write of 65536 bytes at offset ", 0), 0u) << e;
  EXPECT_NE(e.find(" to " + loop->path() + ": "), std::string::npos) << e;
  EXPECT_TRUE(e.find("(EIO)") != std::string::npos || e.find("(ENOSPC)") != std::string::npos) << e;
  EXPECT_NE(e.find(" s into the replay"), std::string::npos) << e;
  EXPECT_FALSE(res.complete);
  EXPECT_LT(res.issued, 128u) << "no request is issued after the failure";
  EXPECT_GE(res.total.errors, 1u);
}

// Issue 15: on failing storage the kind ends the test failed with the storage failure as its
// reason. A loop device over a sparse file is thin provisioning: ext4 on it believes it has room,
// but the 48 MiB tmpfs under the backing file is full but for 2 MiB. The target file is one a previous run
// filled and kept (fallocated here, with the fill marker io/target_file.hpp reuses it by), so the
// replay's writes are the first to need new blocks of the thin device, and they fail.
TEST(ReplayKindOnFailingStorage, AFullThinDeviceEndsTheTestFailedNamingTheWrite) {
  TempDir dir;
  ThinLoop thin(48 * kMiB, 256 * kMiB);
  if (!thin.loop) GTEST_SKIP() << thin.why;
  auto& loop = thin.loop;
  if (!loop->make_ext4() || !loop->mount_ext4()) GTEST_SKIP() << "mkfs.ext4 or mount failed";
  const std::filesystem::path mnt = loop->dir() / "mnt";
  constexpr std::uint64_t kFile = 16 * kMiB;
  {
    UniqueFd f(::open((mnt / "drivelab-unit.dat").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644));
    ASSERT_GE(f.get(), 0) << std::strerror(errno);
    // Allocated (so it is reused) but unwritten: ext4 keeps the extents, the thin device has no data.
    ASSERT_EQ(::fallocate(f.get(), 0, 0, static_cast<off_t>(kFile)), 0) << std::strerror(errno);
    const std::string marker = "drivelab-fill/1 size=" + std::to_string(kFile);
    if (::fsetxattr(f.get(), "user.drivelab.fill", marker.data(), marker.size(), 0) != 0)
      GTEST_SKIP() << "no user xattrs: " << std::strerror(errno);
    ASSERT_EQ(::syncfs(f.get()), 0) << "the file's metadata on the device before the tmpfs fills";
  }
  {
    UniqueFd filler(::open((thin.loop->dir() / "filler").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
    ASSERT_GE(filler.get(), 0);
    const std::vector<char> chunk(1 << 16, 'f');
    off_t size = 0;
    for (ssize_t n; (n = ::write(filler.get(), chunk.data(), chunk.size())) > 0;) size += n;
    // 2 MiB left for ext4's own journal commits while the test is prepared; the replay writes more.
    ASSERT_EQ(::ftruncate(filler.get(), std::max<off_t>(0, size - static_cast<off_t>(2 * kMiB))), 0);
  }
  KindTest t("vdi", mnt,
             "{phase: boot, clones: linked, desktops: 20, phase_length: 1s, stagger: 0s, image_size: 4MiB, "
             "file_size: 16MiB, no_stall: true, engine: " +
                 engine() + ", keep_file: false}",
             std::chrono::seconds(60), std::chrono::milliseconds(100));
  t.emulator->prepare(t.ctx);
  std::string reason;
  try {
    t.emulator->run(t.ctx);
  } catch (const EnvironmentError& e) {
    reason = e.what();
  }
  t.emulator->cleanup(t.ctx);
  ASSERT_FALSE(reason.empty()) << "the replay did not fail";
  RecordProperty("reason", reason);
  EXPECT_EQ(reason.rfind("storage failure: write of ", 0), 0u) << reason;
  EXPECT_NE(reason.find(" to " + (mnt / "drivelab-unit.dat").string() + ": "), std::string::npos) << reason;
  EXPECT_NE(reason.find(" bytes at offset "), std::string::npos) << reason;
  EXPECT_NE(reason.find("s into the replay"), std::string::npos) << reason;
  EXPECT_GE(t.group_metric("replay", "errors"), 1) << "what was measured up to the failure is recorded";
  EXPECT_EQ(t.group_metric("replay", "complete"), 0);
}

TEST(VdiKind, LinkedCloneBootOf50DesktopsReplaysExactlyOnODirect) {
  TempDir dir;
  KindTest t("vdi", dir.path(),
             "{phase: boot, clones: linked, desktops: 50, phase_length: 200ms, stagger: 4ms, image_size: 4MiB, "
             "file_size: 64MiB, queue_depth: 32, engine: " +
                 engine() + ", keep_file: false}",
             std::chrono::seconds(60), std::chrono::milliseconds(100));
  t.run_all();
  t.expect_checks_pass();
  const auto& trace = t.record.details.at("trace");
  EXPECT_EQ(trace.at("ios"), 50 * 30);  // 150 IOPS x 0.2 s per desktop
  EXPECT_EQ(trace.at("devices"), 51);   // the replica and 50 delta disks
  EXPECT_EQ(t.metric("ios"), 1500);
  EXPECT_GT(t.metric("iops"), 0);
  double reads = -1;
  for (const auto& g : t.record.groups)
    for (const auto& m : g.metrics)
      if (g.name == "replay" && m.name == "read_ios") reads = m.value;
  EXPECT_EQ(reads, trace.at("reads").get<double>());
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "drivelab-unit.dat"));
}

TEST(VdiKind, TheGeneratedWorkloadIsCheckedAgainstItsDocumentedProfile) {
  TempDir dir;
  // 20 desktops x 12 IOPS x 10 s = 120 requests each (the check needs 100), replayed unpaced.
  KindTest t("vdi", dir.path(),
             "{phase: initial_login, clones: linked, desktops: 20, phase_length: 10s, stagger: 0s, image_size: 4MiB, "
             "file_size: 64MiB, no_stall: true, engine: " +
                 engine() + ", keep_file: false}",
             std::chrono::seconds(60), std::chrono::milliseconds(100));
  t.run_all();
  t.expect_checks_pass();
  bool checked = false;
  for (const auto& c : t.record.checks) checked |= c.name.starts_with("model: the generated workload matches");
  EXPECT_TRUE(checked);
  const PhaseProfile& prof = phase_profile(VdiPhase::initial_login, CloneKind::linked);
  EXPECT_NEAR(t.group_metric("model", "read_pct"), prof.read_pct, 0.05 * prof.read_pct);
  EXPECT_NEAR(t.group_metric("model", "mean_size_bytes"), prof.mean_size_bytes(), 0.05 * prof.mean_size_bytes());
  EXPECT_DOUBLE_EQ(t.group_metric("model", "iops_per_desktop"), prof.iops_per_desktop);
}

TEST(VdiKind, CurveReplaysAtPercentagesOfTheRecordedRate) {
  TempDir dir;
  KindTest t("vdi", dir.path(),
             "{phase: monday_login, clones: full, desktops: 10, phase_length: 200ms, stagger: 0s, image_size: 2MiB, "
             "file_size: 32MiB, engine: " +
                 engine() + ", curve: [50, 100], curve_of: recorded, verify: true}",
             std::chrono::seconds(60), std::chrono::milliseconds(100));
  t.run_all();
  t.expect_checks_pass();
  const auto& pts = t.record.details.at("points");
  ASSERT_EQ(pts.size(), 3u);
  EXPECT_EQ(pts[0].at("group"), "max");
  EXPECT_EQ(pts[1].at("group"), "point_050");
  EXPECT_EQ(pts[2].at("group"), "point_100");
  const double trace_iops = t.record.details.at("trace").at("iops").get<double>();
  EXPECT_NEAR(pts[1].at("requested_iops").get<double>(), trace_iops / 2, 1e-6 * trace_iops);
  bool verified = false;
  for (const auto& c : t.record.checks) verified |= c.name == "verify: every written unit reads back with its header";
  EXPECT_TRUE(verified);
}

// ---- the `replay` kind on a shared real trace ------------------------------------------------

TEST(ReplayKind, UmassTpccTraceReplaysExactlyOnODirect) {
  const std::filesystem::path trace =
      std::filesystem::path(DRIVELAB_SOURCE_DIR) / "../shared/data/traces/umass_tpcc_small.trace";
  if (!std::filesystem::exists(trace)) GTEST_SKIP() << "no " << trace;
  TempDir dir;
  // 16 trace devices folded onto one 64 MiB O_DIRECT file, as fast as 32 slots allow.
  KindTest t("replay", dir.path(),
             "{trace: '" + trace.string() +
                 "', format: umass, file_size: 64MiB, queue_depth: 32, no_stall: true, engine: " + engine() +
                 ", keep_file: false}",
             std::chrono::seconds(60), std::chrono::milliseconds(100));
  t.run_all();
  t.expect_checks_pass();
  const auto& tr = t.record.details.at("trace");
  EXPECT_EQ(tr.at("ios"), 6999);
  EXPECT_EQ(tr.at("reads"), 4381);
  EXPECT_EQ(tr.at("devices"), 16);
  EXPECT_EQ(t.metric("ios"), 6999);
}

TEST(ReplayKind, CloudPhysicsTraceReplaysExactlyOnODirect) {
  const std::filesystem::path trace =
      std::filesystem::path(DRIVELAB_SOURCE_DIR) / "../shared/data/traces/cloudphysics_vm_vscsi.csv";
  if (!std::filesystem::exists(trace)) GTEST_SKIP() << "no " << trace;
  TempDir dir;
  // 113,872 I/Os, 3.9 GiB over a 31 GiB LBA span, folded onto one 128 MiB O_DIRECT file.
  KindTest t("replay", dir.path(),
             "{trace: '" + trace.string() +
                 "', file_size: 128MiB, queue_depth: 32, no_stall: true, engine: " + engine() + ", keep_file: false}",
             std::chrono::seconds(300), std::chrono::seconds(1));
  t.run_all();
  t.expect_checks_pass();
  const auto& tr = t.record.details.at("trace");
  EXPECT_EQ(tr.at("ios"), 113872);
  EXPECT_EQ(tr.at("reads"), 46974);
  EXPECT_EQ(t.metric("ios"), 113872);
  EXPECT_EQ(t.group_metric("replay", "read_ios"), 46974);
  EXPECT_EQ(t.group_metric("replay", "read_bytes") + t.group_metric("replay", "write_bytes"), 4205978112.0);
}

}  // namespace
}  // namespace drivelab::vdi
