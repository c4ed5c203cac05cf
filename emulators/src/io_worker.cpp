#include "io_worker.hpp"

#include <algorithm>
#include <vector>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"

namespace drivelab::emulators::detail {

IoWorker::IoWorker(const IoJobConfig& job, int fd, std::filesystem::path file, std::uint32_t job_index,
                   std::uint64_t seed)
    : job_(job), fd_(fd), file_(std::move(file)), rng_(Rng(seed).split(job_index)) {
  // Created here so setup errors surface in prepare(); the worker thread is its only user after
  // that (io_uring binds to the thread of the first submit: engine.hpp, Threading).
  const int fds[] = {fd_};
  pump_ = std::make_unique<io::Pump>(
      job.engine,
      io::EngineOptions{.queue_depth = job.iodepth,
                        .register_files = job.registerfiles,
                        .register_buffers = job.fixedbufs,
                        .sqthread_poll = job.sqthread_poll,
                        .sqthread_poll_cpu = job.sqthread_poll_cpu,
                        .sq_thread_idle_ms = static_cast<std::uint32_t>(job.sq_thread_idle.count())},
      io::PumpOptions{.slot_bytes = static_cast<std::uint32_t>(job.xfersize_bytes),
                      .batch_submit = job.iodepth_batch_submit,
                      .complete_min = job.iodepth_batch_complete_min,
                      .complete_max = static_cast<std::uint32_t>(job.complete_max()),
                      .fill_seed = rng_()},
      fds, std::vector<std::string>{file_.native()});

  blocks_ = job.file_size_bytes / job.xfersize_bytes;
  seq_first_ = blocks_ * job_index / job.jobs;
  seq_end_ = std::max(seq_first_ + 1, blocks_ * (job_index + 1) / job.jobs);
  seq_next_ = seq_first_;
}

IoWorker::~IoWorker() {
  request_stop();
  join();
}

void IoWorker::start() {
  thread_ = std::thread([this] { loop(); });
}

void IoWorker::join() noexcept {
  if (thread_.joinable()) thread_.join();
}

void IoWorker::take(IoSample& out) {
  out.latency.reset();
  out.ios = out.bytes = 0;
  const std::lock_guard lock(pump_->sample_lock());
  std::swap(out, interval_);
}

std::uint64_t IoWorker::next_offset() {
  std::uint64_t block;
  if (is_random(job_.rw)) {
    block = static_cast<std::uint64_t>(rng_.uniform(0, static_cast<std::int64_t>(blocks_) - 1));
  } else {
    block = seq_next_++;
    if (seq_next_ >= seq_end_) seq_next_ = seq_first_;
  }
  return block * job_.xfersize_bytes;
}

// The pump's driver: a closed loop (every request due now) over next_offset(); the pump records
// each whole completion into interval_ under its lock.
struct IoWorker::Driver {
  static constexpr bool kSharedSample = true;
  IoWorker& w;
  const io::Op op;
  const std::uint32_t xfer;

  std::int64_t next_due_ns() const noexcept { return io::kDueNow; }
  bool prepare(io::IoRequest& r, std::uint32_t) noexcept {
    r.op = op;
    r.file_index = 0;
    r.offset_bytes = w.next_offset();
    r.length_bytes = xfer;
    return true;
  }
  bool keep_going() {
    if (w.cpu_mark_requested_.load(std::memory_order_relaxed)) [[unlikely]] {
      w.cpu_mark_requested_.store(false, std::memory_order_relaxed);
      w.cpu_at_mark_ = thread_cpu_times();
    }
    return !w.stop_.load(std::memory_order_relaxed);
  }
  void failed(const io::PumpCompletion&, const io::FailedIo& io) { w.fail(w.phase_.failure(io)); }
  IoSample& sample() noexcept { return w.interval_; }
};

void IoWorker::loop() {
  Driver driver{*this, is_write(job_.rw) ? io::Op::write : io::Op::read,
                static_cast<std::uint32_t>(job_.xfersize_bytes)};
  cpu_at_mark_ = thread_cpu_times();
  run_pump(*pump_, driver);
  cpu_at_end_ = thread_cpu_times();
}

}  // namespace drivelab::emulators::detail
