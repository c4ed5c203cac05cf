// io_uring (liburing): requests are staged as SQEs by queue() and handed to the kernel all at once
// by submit() (one io_uring_submit = one io_uring_enter(2) for the whole batch); reap() drains the
// CQ ring with io_uring_peek_batch_cqe and sleeps in io_uring_wait_cqes only when fewer than
// min_events are ready. Optional registered files (IOSQE_FIXED_FILE) and buffers (READ_FIXED /
// WRITE_FIXED), as fio's io_uring engine offers with registerfiles / fixedbufs.
#include <liburing.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "engines.hpp"

namespace drivelab::io::detail {
namespace {

class UringEngine final : public IoEngine {
 public:
  explicit UringEngine(const EngineOptions& options)
      : options_(options), cqes_(options.queue_depth) {
    // CLAMP: depths above the kernel maximum (32768 SQ entries) get the maximum, not EINVAL.
    const int ret = io_uring_queue_init(options.queue_depth, &ring_, IORING_SETUP_CLAMP);
    if (ret < 0) throw EnvironmentError(uring_unavailable_message(-ret));
  }
  ~UringEngine() override { io_uring_queue_exit(&ring_); }

  std::string_view name() const noexcept override { return "io_uring"; }
  Capabilities capabilities() const noexcept override {
    return {Capability::async, Capability::batched, Capability::supports_direct,
            Capability::registered_files, Capability::registered_buffers};
  }

  void register_files(std::span<const int> fds) override {
    fds_.assign(fds.begin(), fds.end());
    if (!options_.register_files || fds_.empty()) return;
    const int ret = io_uring_register_files(&ring_, fds_.data(), static_cast<unsigned>(fds_.size()));
    if (ret < 0) throw_errno("io_uring_register_files", -ret);
    fixed_files_ = true;
  }

  void register_buffers(std::span<const iovec> buffers) override {
    if (!options_.register_buffers || buffers.empty()) return;
    const int ret = io_uring_register_buffers(&ring_, buffers.data(), static_cast<unsigned>(buffers.size()));
    if (ret < 0)
      throw EnvironmentError(fmt::format(
          "io_uring_register_buffers failed: {} (registered buffers are locked memory; raise "
          "ulimit -l or turn fixedbufs off)", std::strerror(-ret)));
    fixed_buffers_ = true;
  }

  QueueStatus queue(const IoRequest& r) override {
    if (in_flight_ >= options_.queue_depth) return QueueStatus::busy;
    if (r.file_index >= fds_.size())
      throw InternalError("io_uring: request names file index beyond the registered files");
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr) return QueueStatus::busy;  // SQ full of staged entries: submit first
    const int fd = fixed_files_ ? static_cast<int>(r.file_index) : fds_[r.file_index];
    if (fixed_buffers_ && r.buffer_index >= 0) {
      if (r.op == Op::read)
        io_uring_prep_read_fixed(sqe, fd, r.buffer, r.length_bytes, r.offset_bytes, r.buffer_index);
      else
        io_uring_prep_write_fixed(sqe, fd, r.buffer, r.length_bytes, r.offset_bytes, r.buffer_index);
    } else if (r.op == Op::read) {
      io_uring_prep_read(sqe, fd, r.buffer, r.length_bytes, r.offset_bytes);
    } else {
      io_uring_prep_write(sqe, fd, r.buffer, r.length_bytes, r.offset_bytes);
    }
    if (fixed_files_) sqe->flags |= IOSQE_FIXED_FILE;
    io_uring_sqe_set_data64(sqe, r.user_data);
    ++staged_;
    ++in_flight_;
    return QueueStatus::queued;
  }

  std::size_t submit() override {
    if (staged_ == 0) return 0;
    const int ret = io_uring_submit(&ring_);
    if (ret < 0) {
      if (ret == -EAGAIN || ret == -EBUSY || ret == -EINTR) return 0;  // retry after a reap
      throw_errno("io_uring_submit", -ret);
    }
    const auto n = std::min(static_cast<std::size_t>(ret), staged_);
    staged_ -= n;
    return n;
  }

  std::size_t reap(std::size_t min_events, std::span<IoCompletion> out,
                   std::chrono::nanoseconds timeout) override {
    const std::size_t submitted = in_flight_ - staged_;
    const std::size_t want = std::min({min_events, submitted, out.size()});
    std::size_t got = drain(out);
    if (got >= want) return got;
    const auto ns = std::max<std::int64_t>(timeout.count(), 0);
    __kernel_timespec ts{ns / 1'000'000'000, ns % 1'000'000'000};
    io_uring_cqe* cqe = nullptr;
    // Sleeps until `want - got` more CQEs are posted, the timeout passes or a signal arrives.
    const int ret = io_uring_wait_cqes(&ring_, &cqe, static_cast<unsigned>(want - got), &ts, nullptr);
    if (ret < 0 && ret != -ETIME && ret != -EINTR && ret != -EAGAIN) throw_errno("io_uring_wait_cqes", -ret);
    got += drain(out.subspan(got));
    return got;
  }

  std::size_t in_flight() const noexcept override { return in_flight_; }

 private:
  // Copies every ready CQE (up to out.size()) and releases them to the kernel in one advance.
  std::size_t drain(std::span<IoCompletion> out) {
    const auto max = static_cast<unsigned>(std::min(out.size(), cqes_.size()));
    const unsigned n = io_uring_peek_batch_cqe(&ring_, cqes_.data(), max);
    for (unsigned i = 0; i < n; ++i) out[i] = {io_uring_cqe_get_data64(cqes_[i]), cqes_[i]->res};
    io_uring_cq_advance(&ring_, n);
    in_flight_ -= n;
    return n;
  }

  EngineOptions options_;
  io_uring ring_{};
  std::vector<io_uring_cqe*> cqes_;
  std::vector<int> fds_;
  bool fixed_files_ = false;
  bool fixed_buffers_ = false;
  std::size_t staged_ = 0;     // SQEs prepared but not yet submitted
  std::size_t in_flight_ = 0;  // staged + submitted, not yet reaped
};

}  // namespace

std::unique_ptr<IoEngine> make_uring_engine(const EngineOptions& options) {
  return std::make_unique<UringEngine>(options);
}

}  // namespace drivelab::io::detail
