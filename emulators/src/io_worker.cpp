#include "io_worker.hpp"

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"

namespace drivelab::emulators::detail {
namespace {

using namespace std::chrono_literals;

// How long one reap() may sleep: bounds the reaction to a stop request (runner: within 50 ms).
constexpr auto kReapTimeout = 10ms;

struct Slot {
  std::uint64_t offset_bytes = 0;
  std::int64_t issue_ns = 0;
};

}  // namespace

IoWorker::IoWorker(const IoJobConfig& job, int fd, std::filesystem::path file, std::uint32_t job_index,
                   std::uint64_t seed)
    : job_(job), fd_(fd), file_(std::move(file)), rng_(Rng(seed).split(job_index)) {
  // Created here so setup errors surface in prepare(); the worker thread is its only user after
  // that (io_uring binds to the thread of the first submit: engine.hpp, Threading).
  engine_ = io::make_engine(job.engine, {.queue_depth = job.iodepth,
                                         .register_files = job.registerfiles,
                                         .register_buffers = job.fixedbufs,
                                         .sqthread_poll = job.sqthread_poll,
                                         .sqthread_poll_cpu = job.sqthread_poll_cpu,
                                         .sq_thread_idle_ms = static_cast<std::uint32_t>(job.sq_thread_idle.count())});
  depth_ = engine_->capabilities().has(io::Capability::async) ? job.iodepth : 1;
  const int fds[] = {fd_};
  engine_->register_files(fds);

  buffers_ = AlignedBuffer(static_cast<std::size_t>(job.xfersize_bytes) * depth_);
  // Incompressible write data, so a compressing or deduplicating drive gains nothing from it.
  for (std::size_t i = 0; i + sizeof(std::uint64_t) <= buffers_.size(); i += sizeof(std::uint64_t)) {
    const std::uint64_t word = rng_();
    std::memcpy(buffers_.data() + i, &word, sizeof word);
  }
  // One registered buffer per slot, as fio registers one per io_u (fixedbufs).
  std::vector<iovec> iov(depth_);
  for (std::uint32_t i = 0; i < depth_; ++i)
    iov[i] = {buffers_.data() + static_cast<std::size_t>(i) * job.xfersize_bytes,
              static_cast<std::size_t>(job.xfersize_bytes)};
  engine_->register_buffers(iov);

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
  std::lock_guard lock(mu_);
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

void IoWorker::loop() {
  const io::Op op = is_write(job_.rw) ? io::Op::write : io::Op::read;
  const auto xfer = static_cast<std::uint32_t>(job_.xfersize_bytes);
  std::vector<Slot> slots(depth_);
  std::vector<std::uint32_t> free_slots;
  for (std::uint32_t i = depth_; i-- > 0;) free_slots.push_back(i);
  std::size_t staged = 0;  // queued since the last submit
  const std::size_t complete_min = job_.iodepth_batch_complete_min;
  std::vector<io::IoCompletion> done(std::min<std::size_t>(job_.complete_max(), depth_));
  cpu_at_mark_ = thread_cpu_times();

  try {
    for (;;) {
      if (cpu_mark_requested_.load(std::memory_order_relaxed)) {
        cpu_mark_requested_.store(false, std::memory_order_relaxed);
        cpu_at_mark_ = thread_cpu_times();
      }
      const bool stopping = stop_.load(std::memory_order_relaxed);
      if (!stopping) {
        while (!free_slots.empty()) {
          const std::uint32_t s = free_slots.back();
          Slot& slot = slots[s];
          slot.offset_bytes = next_offset();
          std::byte* buf = buffers_.data() + static_cast<std::size_t>(s) * xfer;
          if (op == io::Op::write) {
            // Unique first bytes per write (fio: scramble_buffers), so blocks never dedupe.
            std::memcpy(buf, &issued_, sizeof issued_);
          }
          const io::IoRequest req{.op = op,
                                  .file_index = 0,
                                  .offset_bytes = slot.offset_bytes,
                                  .length_bytes = xfer,
                                  .buffer = buf,
                                  .buffer_index = static_cast<std::int32_t>(s),
                                  .user_data = s};
          slot.issue_ns = monotonic_ns();  // fio's start_time: before queue (psync: before the pread)
          io::QueueStatus st = engine_->queue(req);
          if (st == io::QueueStatus::busy && staged > 0) {
            engine_->submit();
            staged = 0;
            st = engine_->queue(req);
          }
          if (st == io::QueueStatus::busy) break;
          free_slots.pop_back();
          ++issued_;
          if (++staged >= job_.iodepth_batch_submit) {  // fio: iodepth_batch_submit
            engine_->submit();
            staged = 0;
          }
        }
        // The rest of a partial batch, and anything an earlier submit left staged (EAGAIN).
        engine_->submit();
        staged = 0;
      } else {
        engine_->submit();  // nothing may stay staged: it could never be reaped
        if (engine_->in_flight() == 0) break;
      }

      // Stopping: wait for at least one (the in-flight I/Os drain); otherwise fio's minimum.
      // With I/Os in flight, fio's untimed wait (no hrtimer per call); a stop request is then
      // seen at the next completion.
      const std::size_t n = engine_->reap(stopping ? 1 : complete_min, done,
                                          engine_->in_flight() > 0 ? io::IoEngine::kNoTimeout : kReapTimeout);
      if (n == 0) continue;
      const std::int64_t now = monotonic_ns();
      std::lock_guard lock(mu_);
      for (std::size_t i = 0; i < n; ++i) {
        const auto s = static_cast<std::uint32_t>(done[i].user_data);
        const std::int64_t result = done[i].result;
        free_slots.push_back(s);
        ++completed_;
        if (result != static_cast<std::int64_t>(xfer)) {
          fail(phase_.failure({.op = op,
                               .length_bytes = xfer,
                               .offset_bytes = slots[s].offset_bytes,
                               .file = file_.native(),
                               .result = result}));
          continue;
        }
        interval_.latency.record(now - slots[s].issue_ns);
        ++interval_.ios;
        interval_.bytes += xfer;
      }
    }
  } catch (const std::exception& e) {
    fail(fmt::format("engine {}: {}", engine_->name(), e.what()));
  }
  cpu_at_end_ = thread_cpu_times();
}

}  // namespace drivelab::emulators::detail
