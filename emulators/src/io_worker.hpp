#pragma once
// One job of the `io` emulator: a thread that owns an io::Pump (io/pump.hpp: the engine, the slots
// and fio's loop, backend.c do_io / wait_for_completions) and keeps `depth` I/Os outstanding,
// recording completion latency. This file is the pump's request source (offsets: uniform random
// blocks, or this job's slice in sequence) and its closed-loop pacing:
//   1. fill every free slot, submitting each iodepth_batch_submit queued I/Os (and the rest);
//   2. reap at least iodepth_batch_complete_min and at most iodepth_batch_complete_max
//      completions (default 1 and 1), then go back to 1 at once.
// Reaping one at a time matters: the slot just reaped is refilled before the next completion is
// looked at, so the job keeps ~iodepth I/Os outstanding; reaping a whole batch and then submitting
// its refills one by one left slots idle behind each other's system calls (achieved QD ~21 of 32
// on a virtio disk, where fio kept ~32).
//
// Latency is measured from just before the I/O is queued (fio: io_u start_time, taken after prep)
// to the return of the reap() that delivered it, on the monotonic clock: fio's total latency
// `lat` (slat + clat) for the same engine and the same batch settings.
//
// Statistics hand-off: the pump records each reaped batch into `interval_` under its SampleLock,
// which only the collector also takes, once per interval (swap, O(1)), so the hot path pays one
// uncontended atomic exchange per batch, not per I/O.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "drivelab/core/cpu_usage.hpp"
#include "drivelab/core/fd.hpp"
#include "drivelab/core/histogram.hpp"
#include "drivelab/core/rng.hpp"
#include "drivelab/emulators/io_job.hpp"
#include "drivelab/io/engine.hpp"
#include "drivelab/io/pump.hpp"
#include "worker_failure.hpp"

namespace drivelab::emulators::detail {

/// What a worker measured since the previous take.
struct IoSample {
  LatencyHistogram latency;
  std::uint64_t ios = 0;
  std::uint64_t bytes = 0;
};

class IoWorker : public WorkerState {
 public:
  /// Creates the engine (throws NotCompiledIn / EnvironmentError) and the buffers. `fd` is the
  /// target file (-1 for the null engine).
  IoWorker(const IoJobConfig& job, int fd, std::filesystem::path file, std::uint32_t job_index, std::uint64_t seed);
  ~IoWorker();
  IoWorker(const IoWorker&) = delete;
  IoWorker& operator=(const IoWorker&) = delete;

  void start();
  /// Stop issuing; in-flight I/Os are still reaped (and counted) before the thread ends.
  void request_stop() noexcept { stop_.store(true, std::memory_order_relaxed); }
  void join() noexcept;

  /// Moves what was measured since the last call into `out` (whose old contents are dropped).
  void take(IoSample& out);
  /// Asks the worker to snapshot its own thread's CPU time (getrusage RUSAGE_THREAD can only be
  /// read by the thread itself) at its next loop pass: the start of the measured phase.
  void mark_cpu() noexcept { cpu_mark_requested_.store(true, std::memory_order_relaxed); }
  /// This thread's CPU time from the mark (or its start) to its end; valid after join(). It is
  /// what fio reports per job (fio reads RUSAGE_THREAD), without the kernel threads that work for
  /// the job (io_uring io-wq workers, SQPOLL), which the process-wide figure includes.
  CpuTimes thread_cpu() const noexcept { return cpu_at_end_ - cpu_at_mark_; }

  /// Most I/Os this job keeps outstanding: iodepth, or 1 for a synchronous engine.
  std::uint32_t depth() const noexcept { return pump_->depth(); }
  const io::IoEngine& engine() const noexcept { return pump_->engine(); }

 private:
  struct Driver;
  void loop();
  std::uint64_t next_offset();

  const IoJobConfig job_;
  const int fd_;
  const std::filesystem::path file_;
  std::unique_ptr<io::Pump> pump_;  // the engine and depth slots of xfersize bytes
  Rng rng_;
  std::uint64_t blocks_ = 0;     // xfersize blocks in the file
  std::uint64_t seq_first_ = 0;  // sequential: this job's slice [seq_first_, seq_end_) in blocks
  std::uint64_t seq_end_ = 0;
  std::uint64_t seq_next_ = 0;

  std::thread thread_;

  std::atomic<bool> cpu_mark_requested_{false};
  CpuTimes cpu_at_mark_;  // written by the worker thread; read after join()
  CpuTimes cpu_at_end_;

  IoSample interval_;  // under pump_->sample_lock()
};

}  // namespace drivelab::emulators::detail
