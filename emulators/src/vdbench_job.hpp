#pragma once
// One engine thread of the `vdbench` emulator: owns an io::Pump (io/pump.hpp: the engine, `depth`
// I/O slots, its share of `threads`, and the issue loop) and issues the I/Os of a WorkloadStream
// either closed-loop (iorate max: a freed slot issues the next I/O at once) or open-loop (a rate:
// each I/O has an intended start from an ArrivalSchedule and is issued when that time has come
// AND a slot is free). This file is the pump's source (the stream and the data fillers) and its
// pacing (the schedule).
//
// Open loop without coordinated omission: when every slot is busy, due arrivals wait (in the
// schedule: nothing is dropped or re-timed) and are issued as slots free up, oldest first. Each
// completion records
//   latency   = completion - intended start  (what an application issuing at that rate sees)
//   service   = completion - issue           (the device plus the kernel path, fio's `lat`)
//   lateness  = issue - intended start       (queueing in drivelab because all slots were busy,
//                                              plus wake-up jitter)
// where the issue time is the pump's: just before the I/O's queue() (fio's start_time).
// In the closed loop the intended start is the issue time itself (lateness 0).
//
// All I/Os queued in one pass are submitted with one submit() call (the pump's batch_submit =
// depth), so a burst of freed slots is refilled with one system call; this keeps the achieved
// queue depth at `depth` (Little's law).
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "drivelab/core/histogram.hpp"
#include "drivelab/core/pacing.hpp"
#include "drivelab/emulators/vdbench_config.hpp"
#include "drivelab/emulators/vdbench_workload.hpp"
#include "drivelab/io/engine.hpp"
#include "drivelab/io/pump.hpp"
#include "worker_failure.hpp"

namespace drivelab::emulators::detail {

/// What a job measured since the previous take.
/// latency (from the intended start), service (from submission), lateness, and the ios, reads
/// and writes: OpenLoopSample.
struct VdbSample : OpenLoopSample {
  std::uint64_t bytes = 0;
  /// Completions per workload (the points' workload_share_pct). With one workload it is not counted
  /// per I/O: VdbenchJob::take sets it to `ios`.
  std::vector<std::uint64_t> workload_ios;
  /// Closed-loop completions (iorate=max: the intended start is the issue time) not yet settled:
  /// their service time only. The pump records them here (io::Pump::record: one histogram update
  /// per I/O instead of three, so the vdbench kind costs per I/O what the io kind costs, issue 31);
  /// settle() adds them to latency and service, with lateness 0 each, before anyone reads the
  /// sample (VdbenchJob::take).
  LatencyHistogram on_time;

  void record_on_time(std::int64_t issue_ns, std::int64_t done_ns) noexcept { on_time.record(done_ns - issue_ns); }
  void settle() noexcept;

  void clear();
  void merge(const VdbSample& o);
};

struct JobSetup {
  int fd = -1;  // -1 for the null engine
  std::filesystem::path file;
  Region region;
  std::uint32_t alignment_bytes = 512;
  std::uint32_t index = 0;
  std::uint32_t jobs = 1;
  std::uint32_t depth = 1;  // slots (outstanding I/Os) of this job
  std::uint64_t seed = 1;
};

class VdbenchJob : public WorkerState {
 public:
  /// Creates the engine (throws NotCompiledIn / EnvironmentError / ConfigError), buffers and the
  /// workload stream (ConfigError for a range smaller than an xfersize).
  VdbenchJob(const VdbenchConfig& config, const JobSetup& setup);
  ~VdbenchJob();
  VdbenchJob(const VdbenchJob&) = delete;
  VdbenchJob& operator=(const VdbenchJob&) = delete;

  /// Starts a run on the job's thread: closed loop when rate_per_s == 0, else open loop at
  /// rate_per_s from now. `schedule_seed` makes each point's arrivals independent. Call only when
  /// stopped. The thread lives from the first start() to destruction: an io_uring ring accepts
  /// submissions from one thread only (SINGLE_ISSUER), so every run must use the same thread.
  void start(double rate_per_s, std::uint64_t schedule_seed);
  /// Asks the job to stop issuing and returns at once (stop() then waits): the emulator asks
  /// every job before it waits for any.
  void request_stop() noexcept { stop_.store(true, std::memory_order_relaxed); }
  /// Stops issuing; returns when the in-flight I/Os have been reaped and counted.
  void stop() noexcept;
  /// Moves what was measured since the last call into `out` (its old contents are dropped).
  void take(VdbSample& out);

  /// Arrivals that were due but not yet issued when the last paced run stopped.
  std::uint64_t backlog_at_stop() const noexcept { return backlog_; }
  std::uint32_t depth() const noexcept { return setup_.depth; }
  const io::IoEngine& engine() const noexcept { return pump_->engine(); }
  std::uint64_t unique_units() const noexcept;
  std::uint64_t written_units() const noexcept;

 private:
  struct Slot {  // what the pump's slot of the same index is doing for the stream
    IoSpec spec;
    /// What the slot's buffer holds: the workload whose filler laid it out and its length, or
    /// -1 after a read (or before the first write). Same workload and length: a write only
    /// restamps the units' identities (WriteFiller::fill, laid_out = true).
    int laid_out_workload = -1;
    std::uint32_t laid_out_bytes = 0;
  };
  enum class Command { idle, run, exit };
  struct Driver;
  void thread_main();
  void loop(double rate_per_s, std::uint64_t schedule_seed);

  const VdbenchConfig& config_;
  const JobSetup setup_;
  std::unique_ptr<io::Pump> pump_;  // depth slots of the largest xfersize
  std::vector<Slot> slots_;
  std::optional<WorkloadStream> stream_;
  std::vector<WriteFiller> fillers_;  // one per workload

  std::thread thread_;
  std::mutex ctl_mu_;  // guards command_, rate_, seed_
  std::condition_variable ctl_cv_;
  Command command_ = Command::idle;
  double rate_ = 0;
  std::uint64_t seed_ = 0;
  std::uint64_t backlog_ = 0;

  VdbSample interval_;  // under pump_->sample_lock()
};

}  // namespace drivelab::emulators::detail
