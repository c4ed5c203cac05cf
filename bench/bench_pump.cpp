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
// The target of issue 31: our null-engine IOPS per core at QD 32 >= 1.5x fio's, about 128 ns per
// I/O including time stamps and histogram. Run a Release build on a quiet machine:
//   bench_pump --benchmark_counters_tabular=true
#include <cstdint>
#include <vector>

#include <benchmark/benchmark.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "drivelab/core/clock.hpp"
#include "drivelab/core/histogram.hpp"
#include "drivelab/core/rng.hpp"
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

template <class D>
void run_pump(benchmark::State& state, std::uint32_t batch) {
  const int fds[] = {-1};
  io::Pump pump("null", {.queue_depth = kDepth},
                {.slot_bytes = 4096, .batch_submit = batch, .complete_max = batch, .register_buffers = false}, fds);
  std::uint64_t ios = 0;
  for (auto _ : state) {
    D d;
    pump.run(d);
    ios += d.handed;
    benchmark::DoNotOptimize(d.s.ios);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(ios));
  state.counters["ns_per_io"] =
      benchmark::Counter(static_cast<double>(ios), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_PumpNull_io_kind(benchmark::State& state) { run_pump<RecordingDriver<true>>(state, 1); }
void BM_PumpNull_no_lock(benchmark::State& state) { run_pump<RecordingDriver<false>>(state, 1); }
void BM_PumpNull_no_histogram(benchmark::State& state) { run_pump<Driver<false, false>>(state, 1); }
void BM_PumpNull_batch32(benchmark::State& state) { run_pump<RecordingDriver<true>>(state, kDepth); }
BENCHMARK(BM_PumpNull_io_kind)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PumpNull_no_lock)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PumpNull_no_histogram)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PumpNull_batch32)->Unit(benchmark::kMillisecond);

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
