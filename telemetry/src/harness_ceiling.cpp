// The harness's own ceiling: the null engine's I/Os per CPU-second through the io kind's pump
// (harness_ceiling.hpp).
#include "drivelab/telemetry/harness_ceiling.hpp"

#include <span>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/cpu_usage.hpp"
#include "drivelab/core/histogram.hpp"
#include "drivelab/core/rng.hpp"
#include "drivelab/io/pump.hpp"

namespace drivelab::telemetry {
namespace {

/// The io kind's sample: the pump records each completion's latency, I/O and bytes into it.
struct CeilingSample {
  LatencyHistogram latency;
  std::uint64_t ios = 0;
  std::uint64_t bytes = 0;
};

/// A closed loop of 4 KiB random reads over a notional 1 GiB file, as the io kind's worker
/// drives the pump (emulators/src/io_worker.cpp), with its shared-sample lock. keep_going() reads
/// the thread's CPU time once every kCheckEvery passes (a getrusage per I/O would be measured).
struct CeilingDriver {
  static constexpr bool kSharedSample = true;
  static constexpr std::uint32_t kCheckEvery = 4096;
  static constexpr std::int64_t kBlocks = (std::int64_t{1} << 30) / 4096;

  Rng rng{0x6861726eULL};
  CeilingSample sample_;
  CpuTimes cpu0 = thread_cpu_times();
  std::int64_t cpu_budget_ns = 0;
  std::int64_t wall_end_ns = 0;
  std::uint32_t passes = 0;

  std::int64_t next_due_ns() const noexcept { return io::kDueNow; }
  bool prepare(io::IoRequest& r, std::uint32_t) noexcept {
    r.op = io::Op::read;
    r.file_index = 0;
    r.offset_bytes = static_cast<std::uint64_t>(rng.uniform(0, kBlocks - 1)) * 4096;
    r.length_bytes = 4096;
    return true;
  }
  bool keep_going() {
    if (++passes % kCheckEvery != 0) return true;
    const CpuTimes used = thread_cpu_times() - cpu0;
    return used.user_ns + used.system_ns < cpu_budget_ns && monotonic_ns() < wall_end_ns;
  }
  void failed(const io::PumpCompletion&, const io::FailedIo&) {}
  CeilingSample& sample() noexcept { return sample_; }
};

}  // namespace

results::Json HarnessCeiling::json() const {
  return {{"iops_per_cpu_s", iops_per_cpu_s},
          {"iops", iops},
          {"ios", ios},
          {"wall_s", wall_s},
          {"cpu_s", cpu_s},
          {"engine", "null"},
          {"queue_depth", queue_depth},
          {"block_bytes", block_bytes},
          {"pattern", "randread"},
          {"threads", 1}};
}

HarnessCeiling measure_harness_ceiling(std::chrono::milliseconds cpu_budget, std::chrono::milliseconds wall_limit) {
  HarnessCeiling c;
  const int fds[] = {-1};
  io::Pump pump("null", io::EngineOptions{.queue_depth = c.queue_depth}, io::PumpOptions{.slot_bytes = c.block_bytes},
                std::span<const int>(fds));
  CeilingDriver d;
  const std::int64_t t0 = monotonic_ns();
  d.cpu0 = thread_cpu_times();
  d.cpu_budget_ns = std::chrono::nanoseconds(cpu_budget).count();
  d.wall_end_ns = t0 + std::chrono::nanoseconds(wall_limit).count();
  pump.run(d);
  const CpuTimes used = thread_cpu_times() - d.cpu0;
  c.wall_s = seconds_between(t0, monotonic_ns());
  c.cpu_s = used.total_s();
  c.ios = d.sample_.ios;
  c.iops = c.wall_s > 0 ? static_cast<double>(c.ios) / c.wall_s : 0.0;
  c.iops_per_cpu_s = c.cpu_s > 0 ? static_cast<double>(c.ios) / c.cpu_s : 0.0;
  return c;
}

}  // namespace drivelab::telemetry
