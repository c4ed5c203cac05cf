// The per-I/O cost of io::Pump (io/pump.hpp) on the null engine, and of each thing it does per
// I/O, so the difference shows where the nanoseconds go:
//   BM_PumpNull/<variant>   the whole loop at QD 32, ns per I/O (the `ns_per_io` counter):
//     io_kind       the io kind's defaults: batch_submit 1, complete 1/1, random offsets,
//                   histogram record under the sample lock (what `drivelab run` does per I/O)
//     no_lock       the same without the sample lock
//     no_histogram  the same without recording (no sample)
//     batch32       batch_submit 32, complete_max 32: engine calls amortised over 32 I/Os
//   BM_Clock            one monotonic_ns() (two per I/O: issue and, per reap, done)
//   BM_Rdtsc            one rdtsc (x86-64): what fio's default clocksource=cpu reads instead
//   BM_HistogramRecord  one LatencyHistogram::record
//   BM_SampleLock       one lock + unlock of the pump's SampleLock
//   BM_NullEngineCycle  queue + submit + reap of the null engine, without the pump
//   BM_Source           the io kind's offset source (uniform random block)
// The vdbench kind's path at the same engine and depth, with vdbench's batching (every I/O of a
// pass in one submit, up to 32 completions per reap: compare with batch32, the io kind's driver
// at that batching), as bench/io_vs_vdbench.sh runs the two kinds (issue 31: their mean latencies
// within 3%); each variant swaps one component for the io kind's, so the differences are the
// components' costs:
//   BM_PumpNull/vdbench            VdbenchJob::Driver (emulators/src/vdbench_job.cpp) closed loop:
//                                  WorkloadStream source into the slot's spec, VdbSample recording
//                                  (one histogram per I/O, record_on_time), per-workload counts
//                                  with several workloads
//     vdbench_io_source            the same with the io kind's source (the source's cost)
//     vdbench_io_sample            the same with the io kind's sample (the recording's cost)
//     vdbench_mix                  two workloads (skew 70/30), 70% reads, two xfersizes, seekpct
//                                  50: the mix's draws and the write fillers' data
//   BM_VdbStream / _mix            one WorkloadStream::next of the one-workload / the mixed stream
// The target of issue 31: our null-engine IOPS per core at QD 32 >= 1.5x fio's, about 128 ns per
// I/O including time stamps and histogram. Run a Release build on a quiet machine:
//   bench_pump --benchmark_counters_tabular=true
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "drivelab/core/clock.hpp"
#include "drivelab/core/histogram.hpp"
#include "drivelab/core/pacing.hpp"
#include "drivelab/core/rng.hpp"
#include "drivelab/emulators/vdbench_config.hpp"
#include "drivelab/emulators/vdbench_workload.hpp"
#include "drivelab/io/engine.hpp"
#include "drivelab/io/pump.hpp"

namespace {

using namespace drivelab;

constexpr std::uint32_t kDepth = 32;
constexpr std::uint64_t kIosPerRun = 1u << 16;
constexpr std::uint64_t kBlocks = 1u << 18;  // a 1 GiB file of 4 KiB blocks

struct Sample {
  LatencyHistogram latency;
  std::uint64_t ios = 0, bytes = 0;
};

// The io kind's driver (emulators/src/io_worker.cpp) with the shared-sample lock and the sample
// switchable at compile time.
template <bool kLock, bool kRecord>
struct Driver {
  static constexpr bool kSharedSample = kLock;
  Rng rng{1};
  std::uint64_t handed = 0;
  Sample s;
  std::int64_t next_due_ns() const noexcept { return handed < kIosPerRun ? io::kDueNow : io::kNever; }
  bool prepare(io::IoRequest& r, std::uint32_t) noexcept {
    ++handed;
    r.op = io::Op::read;
    r.offset_bytes = static_cast<std::uint64_t>(rng.uniform(0, kBlocks - 1)) * 4096;
    r.length_bytes = 4096;
    return true;
  }
  bool keep_going() const noexcept { return true; }
  void failed(const io::PumpCompletion&, const io::FailedIo&) noexcept {}
};
template <bool kLock>
struct RecordingDriver : Driver<kLock, true> {
  Sample& sample() noexcept { return this->s; }
};

// The io kind's pump options at batch size `batch` (submit and reap).
io::PumpOptions io_options(std::uint32_t batch) {
  return {.slot_bytes = 4096, .batch_submit = batch, .complete_max = batch, .register_buffers = false};
}
// vdbench's (emulators/src/vdbench_job.cpp): every I/O of a pass in one submit, up to depth
// completions per reap, the fillers' data (no scramble).
io::PumpOptions vdbench_options(std::uint32_t slot_bytes) {
  return {.slot_bytes = slot_bytes,
          .batch_submit = kDepth,
          .complete_min = 1,
          .complete_max = kDepth,
          .scramble_writes = false,
          .register_buffers = false};
}

// Runs the pump over kIosPerRun I/Os of driver D (made once, outside the timed loop: vdbench's
// stream and fillers take longer to make than a run) per iteration.
template <class D, class... Args>
void run_pump(benchmark::State& state, const io::PumpOptions& options, Args&&... args) {
  const int fds[] = {-1};
  io::Pump pump("null", {.queue_depth = kDepth}, options, fds);
  D d(std::forward<Args>(args)...);
  std::uint64_t ios = 0;
  for (auto _ : state) {
    d.handed = 0;
    pump.run(d);
    ios += d.handed;
    benchmark::DoNotOptimize(d.s.ios);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(ios));
  state.counters["ns_per_io"] =
      benchmark::Counter(static_cast<double>(ios), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_PumpNull_io_kind(benchmark::State& state) { run_pump<RecordingDriver<true>>(state, io_options(1)); }
void BM_PumpNull_no_lock(benchmark::State& state) { run_pump<RecordingDriver<false>>(state, io_options(1)); }
void BM_PumpNull_no_histogram(benchmark::State& state) { run_pump<Driver<false, false>>(state, io_options(1)); }
void BM_PumpNull_batch32(benchmark::State& state) { run_pump<RecordingDriver<true>>(state, io_options(kDepth)); }
BENCHMARK(BM_PumpNull_io_kind)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PumpNull_no_lock)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PumpNull_no_histogram)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PumpNull_batch32)->Unit(benchmark::kMillisecond);

// ---- the vdbench kind (emulators/src/vdbench_job.cpp) ----

// vdbench's sample (emulators/src/vdbench_job.hpp VdbSample): the open-loop triple, and the
// closed-loop histogram the pump records a request due now into (settled per interval).
struct VdbSample : OpenLoopSample {
  std::uint64_t bytes = 0;
  std::vector<std::uint64_t> workload_ios;
  LatencyHistogram on_time;
  void record_on_time(std::int64_t issue_ns, std::int64_t done_ns) noexcept { on_time.record(done_ns - issue_ns); }
};

// One workload of 4 KiB random reads (bench/io_vs_vdbench.sh's), and a mix: two workloads
// (skew 70/30), the first 70% reads of 4 KiB and 64 KiB, half of them sequential.
std::vector<emulators::WorkloadDef> one_workload() { return {emulators::WorkloadDef{.name = "rr"}}; }
std::vector<emulators::WorkloadDef> mixed_workloads() {
  return {emulators::WorkloadDef{
              .name = "a", .xfersize = {{4096, 75}, {65536, 25}}, .rdpct = 70, .seekpct = 50, .skew = 70},
          emulators::WorkloadDef{.name = "b", .range_hi_pct = 10}};
}

// VdbenchJob::Driver closed loop (iorate=max): the stream's next I/O into the slot's spec, its
// data laid out by the workload's filler for a write; vdbench's sample, and with several
// workloads each completion counted for its workload.
// kStream false: the io kind's source instead; kVdbSample false: the io kind's sample.
template <bool kStream, bool kVdbSample>
struct VdbDriver {
  static constexpr bool kSharedSample = true;
  struct Slot {
    emulators::IoSpec spec;
    int laid_out_workload = -1;
    std::uint32_t laid_out_bytes = 0;
  };
  explicit VdbDriver(const std::vector<emulators::WorkloadDef>& defs)
      : stream(defs, {0, kBlocks * 4096}, 512, 0, 1, Rng(1)), slots(kDepth), per_workload(defs.size() > 1) {
    for (std::size_t w = 0; w < defs.size(); ++w) fillers.emplace_back(1.0, 1.0, 4096, Rng(100 + w));
    if constexpr (kVdbSample) s.workload_ios.assign(defs.size(), 0);
  }
  emulators::WorkloadStream stream;
  std::vector<emulators::WriteFiller> fillers;
  std::vector<Slot> slots;
  bool per_workload;
  Rng rng{1};
  std::uint64_t handed = 0;
  std::conditional_t<kVdbSample, VdbSample, Sample> s;

  std::int64_t next_due_ns() const noexcept { return handed < kIosPerRun ? io::kDueNow : io::kNever; }
  bool prepare(io::IoRequest& r, std::uint32_t slot) noexcept {
    ++handed;
    if constexpr (kStream) {
      Slot& sl = slots[slot];
      stream.next(sl.spec);
      if (sl.spec.op == io::Op::write) {
        const int w = static_cast<int>(sl.spec.workload);
        const bool laid_out = sl.laid_out_workload == w && sl.laid_out_bytes == sl.spec.length_bytes;
        fillers[sl.spec.workload].fill({r.buffer, sl.spec.length_bytes}, laid_out);
        sl.laid_out_workload = w;
        sl.laid_out_bytes = sl.spec.length_bytes;
      } else {
        sl.laid_out_workload = -1;
      }
      r.op = sl.spec.op;
      r.file_index = 0;
      r.offset_bytes = sl.spec.offset_bytes;
      r.length_bytes = sl.spec.length_bytes;
    } else {
      r.op = io::Op::read;
      r.file_index = 0;
      r.offset_bytes = static_cast<std::uint64_t>(rng.uniform(0, kBlocks - 1)) * 4096;
      r.length_bytes = 4096;
    }
    return true;
  }
  bool keep_going() const noexcept { return true; }
  void failed(const io::PumpCompletion&, const io::FailedIo&) noexcept {}
  auto& sample() noexcept { return s; }
  void completed(const io::PumpCompletion& c) noexcept {
    if constexpr (kVdbSample) {
      if (per_workload) ++s.workload_ios[slots[c.slot].spec.workload];
    }
  }
};

void BM_PumpNull_vdbench(benchmark::State& state) {
  run_pump<VdbDriver<true, true>>(state, vdbench_options(4096), one_workload());
}
void BM_PumpNull_vdbench_io_source(benchmark::State& state) {
  run_pump<VdbDriver<false, true>>(state, vdbench_options(4096), one_workload());
}
void BM_PumpNull_vdbench_io_sample(benchmark::State& state) {
  run_pump<VdbDriver<true, false>>(state, vdbench_options(4096), one_workload());
}
void BM_PumpNull_vdbench_mix(benchmark::State& state) {
  run_pump<VdbDriver<true, true>>(state, vdbench_options(65536), mixed_workloads());
}
BENCHMARK(BM_PumpNull_vdbench)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PumpNull_vdbench_io_source)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PumpNull_vdbench_io_sample)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PumpNull_vdbench_mix)->Unit(benchmark::kMillisecond);

void stream_next(benchmark::State& state, const std::vector<emulators::WorkloadDef>& defs) {
  emulators::WorkloadStream stream(defs, {0, kBlocks * 4096}, 512, 0, 1, Rng(1));
  emulators::IoSpec spec;
  for (auto _ : state) {
    stream.next(spec);
    benchmark::DoNotOptimize(spec.offset_bytes);
  }
}
void BM_VdbStream(benchmark::State& state) { stream_next(state, one_workload()); }
void BM_VdbStream_mix(benchmark::State& state) { stream_next(state, mixed_workloads()); }
BENCHMARK(BM_VdbStream);
BENCHMARK(BM_VdbStream_mix);

void BM_Clock(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(monotonic_ns());
}
BENCHMARK(BM_Clock);

#if defined(__x86_64__)
void BM_Rdtsc(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(__rdtsc());
}
BENCHMARK(BM_Rdtsc);
#endif

void BM_HistogramRecord(benchmark::State& state) {
  LatencyHistogram h;
  std::int64_t v = 1000;
  for (auto _ : state) {
    h.record(v);
    v = (v * 5 + 17) & 0xFFFFF;  // latencies of 0..1 ms, spread over many bins
  }
  benchmark::DoNotOptimize(h.count());
}
BENCHMARK(BM_HistogramRecord);

void BM_SampleLock(benchmark::State& state) {
  io::SampleLock lock;
  for (auto _ : state) {
    lock.lock();
    benchmark::ClobberMemory();
    lock.unlock();
  }
}
BENCHMARK(BM_SampleLock);

void BM_NullEngineCycle(benchmark::State& state) {
  auto engine = io::make_engine("null", {.queue_depth = kDepth});
  const int fds[] = {-1};
  engine->register_files(fds);
  io::IoRequest r{.length_bytes = 4096};
  io::IoCompletion done[1];
  for (auto _ : state) {
    benchmark::DoNotOptimize(engine->queue(r));
    benchmark::DoNotOptimize(engine->submit());
    benchmark::DoNotOptimize(engine->reap(1, done, io::IoEngine::kNoTimeout));
  }
}
BENCHMARK(BM_NullEngineCycle);

void BM_Source(benchmark::State& state) {
  Driver<false, false> d;
  io::IoRequest r;
  for (auto _ : state) {
    d.handed = 0;
    d.prepare(r, 0);
    benchmark::DoNotOptimize(r.offset_bytes);
  }
}
BENCHMARK(BM_Source);

}  // namespace

BENCHMARK_MAIN();
