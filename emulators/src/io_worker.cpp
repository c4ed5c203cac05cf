#include "io_worker.hpp"

#include <cerrno>
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

std::string errno_text(int errnum) {
  const char* name = strerrorname_np(errnum);
  return fmt::format("{} ({})", std::strerror(errnum), name ? name : std::to_string(errnum).c_str());
}

}  // namespace

IoWorker::IoWorker(const IoJobConfig& job, int fd, std::filesystem::path file, std::uint32_t job_index,
                   std::uint64_t seed)
    : job_(job), fd_(fd), file_(std::move(file)), rng_(Rng(seed).split(job_index)) {
  io::EngineOptions options;
  options.queue_depth = job.iodepth;
  options.register_files = job.registerfiles;
  options.register_buffers = job.fixedbufs;
  engine_ = io::make_engine(job.engine, options);
  depth_ = engine_->capabilities().has(io::Capability::async) ? job.iodepth : 1;
  const int fds[] = {fd_};
  engine_->register_files(fds);

  buffers_ = AlignedBuffer(static_cast<std::size_t>(job.xfersize_bytes) * depth_);
  // Incompressible write data, so a compressing or deduplicating drive gains nothing from it.
  for (std::size_t i = 0; i + sizeof(std::uint64_t) <= buffers_.size(); i += sizeof(std::uint64_t)) {
    const std::uint64_t word = rng_();
    std::memcpy(buffers_.data() + i, &word, sizeof word);
  }
  const iovec iov[] = {{buffers_.data(), buffers_.size()}};
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

void IoWorker::start() { thread_ = std::thread([this] { loop(); }); }

void IoWorker::join() noexcept {
  if (thread_.joinable()) thread_.join();
}

void IoWorker::take(IoSample& out) {
  out.latency.reset();
  out.ios = out.bytes = 0;
  std::lock_guard lock(mu_);
  std::swap(out, interval_);
}

void IoWorker::fail(std::string message) {
  if (failed_.exchange(true)) return;
  error_ = std::move(message);
  request_stop();
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
  const bool async = engine_->capabilities().has(io::Capability::async);
  const io::Op op = is_write(job_.rw) ? io::Op::write : io::Op::read;
  const auto xfer = static_cast<std::uint32_t>(job_.xfersize_bytes);
  std::vector<Slot> slots(depth_);
  std::vector<std::uint32_t> free_slots;
  for (std::uint32_t i = depth_; i-- > 0;) free_slots.push_back(i);
  std::vector<std::uint32_t> staged;  // queued since the last submit (async: stamped at submit)
  std::vector<io::IoCompletion> done(depth_);

  // Stamps the staged batch and hands it to the kernel in one call.
  const auto flush = [&] {
    if (async) {
      const std::int64_t now = monotonic_ns();
      for (std::uint32_t s : staged) slots[s].issue_ns = now;
    }
    engine_->submit();
    staged.clear();
  };

  try {
    for (;;) {
      if (!stop_.load(std::memory_order_relaxed)) {
        while (!free_slots.empty()) {
          const std::uint32_t s = free_slots.back();
          Slot& slot = slots[s];
          slot.offset_bytes = next_offset();
          std::byte* buf = buffers_.data() + static_cast<std::size_t>(s) * xfer;
          if (op == io::Op::write) {
            // Unique first bytes per write (fio: scramble_buffers), so blocks never dedupe.
            std::memcpy(buf, &issued_, sizeof issued_);
          }
          const io::IoRequest req{.op = op, .file_index = 0, .offset_bytes = slot.offset_bytes,
                                  .length_bytes = xfer, .buffer = buf, .buffer_index = 0, .user_data = s};
          if (!async) slot.issue_ns = monotonic_ns();
          io::QueueStatus st = engine_->queue(req);
          if (st == io::QueueStatus::busy && !staged.empty()) {
            flush();
            st = engine_->queue(req);
          }
          if (st == io::QueueStatus::busy) break;
          free_slots.pop_back();
          staged.push_back(s);
          ++issued_;
          if (staged.size() >= job_.iodepth_batch_submit) flush();  // fio: iodepth_batch_submit
        }
        if (!staged.empty()) flush();
      } else if (engine_->in_flight() == 0) {
        break;
      }

      const std::size_t n = engine_->reap(1, done, kReapTimeout);
      if (n == 0) continue;
      const std::int64_t now = monotonic_ns();
      std::lock_guard lock(mu_);
      for (std::size_t i = 0; i < n; ++i) {
        const auto s = static_cast<std::uint32_t>(done[i].user_data);
        const std::int64_t result = done[i].result;
        free_slots.push_back(s);
        ++completed_;
        if (result != static_cast<std::int64_t>(xfer)) {
          const std::string what = fmt::format("{} of {} bytes at offset {} in {}", io::to_string(op), xfer,
                                               slots[s].offset_bytes, file_.string());
          fail(result < 0 ? fmt::format("{} failed: {}", what, errno_text(static_cast<int>(-result)))
                          : fmt::format("short transfer: {} returned {} bytes", what, result));
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
}

}  // namespace drivelab::emulators::detail
