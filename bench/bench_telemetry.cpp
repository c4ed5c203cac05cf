// What issue 33's telemetry costs per interval: one TestTelemetry::close_interval, the sample every
// test takes at each interval boundary (test_telemetry.hpp: one read of /sys/block/.../stat per
// device of the target's stack, /proc/stat and /proc/pressure/{io,memory}, and the iostat -x
// arithmetic), on the thread that closes the interval, never on an I/O worker. At the default
// 1 s interval the CPU share is ns_per_sample / 1e9 of one core. Run from the directory whose
// device you want sampled (the working directory's stack), a Release or RelWithDebInfo build:
//   build/bench/bench_telemetry --benchmark_counters_tabular=true
#include <filesystem>

#include <benchmark/benchmark.h>

#include "drivelab/results/record.hpp"
#include "drivelab/telemetry/test_telemetry.hpp"

namespace {

void BM_CloseInterval(benchmark::State& state) {
  drivelab::telemetry::TestTelemetry tel(std::filesystem::current_path());
  tel.begin();
  drivelab::results::Interval iv;
  for (auto _ : state) {
    iv.values.clear();
    tel.close_interval(iv);
    benchmark::DoNotOptimize(iv.values.data());
  }
  state.counters["devices"] = tel.stack() ? static_cast<double>(tel.stack()->devices.size()) : 0.0;
  state.counters["values"] = static_cast<double>(iv.values.size());
  state.SetLabel(tel.stack() ? tel.stack()->describe() : "no block device: " + tel.reason());
}
BENCHMARK(BM_CloseInterval)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
