// libaio: Linux native AIO (io_setup(2) / io_submit(2) / io_getevents(2)), fio's libaio engine.
// queue() prepares an iocb and stages it; submit() hands every staged iocb to the kernel in one
// io_submit; reap() collects completions with one io_getevents(min, max).
//
// The caveat every fio user learns: the kernel's AIO is asynchronous only for O_DIRECT. On a
// buffered descriptor io_submit(2) performs the read or write (page-cache copy, or a wait for the
// device on a cache miss) before it returns, so the submitting thread is busy for the whole I/O and
// the queue never builds up; the emulator records a warning for direct: false.
#ifdef DRIVELAB_HAVE_LIBAIO
#include <libaio.h>
#endif

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/core/sysfs.hpp"
#include "engines.hpp"

namespace drivelab::io::detail {
#ifdef DRIVELAB_HAVE_LIBAIO
namespace {

/// Why io_setup(2) failed (EAGAIN: fs.aio-max-nr reached; ENOSYS/EPERM: kernel without
/// CONFIG_AIO or a seccomp profile).
std::string aio_unavailable_message(int errnum, std::uint32_t nr_events) {
  std::string msg = fmt::format("libaio: io_setup({}) failed: {}", nr_events, errno_text(errnum));
  switch (errnum) {
    case EAGAIN: {
      const std::string nr = read_sysfs_text("/proc/sys/fs/aio-nr").value_or("");
      const std::string max = read_sysfs_text("/proc/sys/fs/aio-max-nr").value_or("");
      msg += fmt::format(
          "; the system-wide AIO event limit is reached (fs.aio-nr {} of fs.aio-max-nr {}): "
          "raise fs.aio-max-nr or lower iodepth x jobs",
          nr.empty() ? "?" : nr, max.empty() ? "?" : max);
      break;
    }
    case ENOSYS:
    case EPERM:
      msg +=
          "; the kernel was built without AIO (CONFIG_AIO) or a seccomp profile (a container's) blocks "
          "io_setup; use engine io_uring or psync";
      break;
    default: break;
  }
  return msg;
}

class LibaioEngine final : public IoEngine {
 public:
  explicit LibaioEngine(const EngineOptions& options)
      : depth_(options.queue_depth), iocbs_(depth_), user_data_(depth_), events_(depth_) {
    const int ret = io_setup(static_cast<int>(depth_), &ctx_);
    if (ret < 0) throw EnvironmentError(aio_unavailable_message(-ret, depth_));
    staged_.reserve(depth_);
    free_.reserve(depth_);
    for (std::uint32_t i = depth_; i-- > 0;) free_.push_back(i);
  }
  ~LibaioEngine() override {
    // io_destroy waits for the I/Os still in flight, so no buffer is written after we return.
    io_destroy(ctx_);
  }

  const EngineInfo& info() const noexcept override;

  void register_files(std::span<const int> fds) override { fds_.assign(fds.begin(), fds.end()); }

  QueueStatus queue(const IoRequest& r) override {
    if (free_.empty()) return QueueStatus::busy;
    if (r.file_index >= fds_.size())
      throw InternalError("libaio: request names file index beyond the registered files");
    const std::uint32_t slot = free_.back();
    free_.pop_back();
    iocb* cb = &iocbs_[slot];
    const int fd = fds_[r.file_index];
    const auto offset = static_cast<long long>(r.offset_bytes);
    if (r.op == Op::read)
      io_prep_pread(cb, fd, r.buffer, r.length_bytes, offset);
    else
      io_prep_pwrite(cb, fd, r.buffer, r.length_bytes, offset);
    user_data_[slot] = r.user_data;
    staged_.push_back(cb);
    return QueueStatus::queued;
  }

  std::size_t submit() override {
    std::size_t done = 0;
    while (done < staged_.size()) {
      const long n = static_cast<long>(staged_.size() - done);
      const int ret = io_submit(ctx_, n, staged_.data() + done);
      if (ret > 0) {
        done += static_cast<std::size_t>(ret);
        continue;
      }
      if (ret == 0 || ret == -EAGAIN || ret == -EINTR) break;  // kernel queue full: reap, retry later
      // The first remaining iocb was refused (EBADF, EINVAL for a bad request): that is this
      // request's outcome, delivered as a completion like any other I/O error.
      failed_.push_back({index_of(staged_[done++]), ret});
    }
    staged_.erase(staged_.begin(), staged_.begin() + static_cast<std::ptrdiff_t>(done));
    submitted_ = depth_ - free_.size() - staged_.size() - failed_.size();
    return done;
  }

  std::size_t reap(std::size_t min_events, std::span<IoCompletion> out, std::chrono::nanoseconds timeout) override {
    std::size_t got = 0;
    while (got < out.size() && !failed_.empty()) {  // rare: requests io_submit refused
      const auto [slot, result] = failed_.front();
      failed_.erase(failed_.begin());
      out[got++] = {user_data_[slot], result};
      free_.push_back(slot);
    }
    const std::size_t max = std::min(out.size() - got, events_.size());
    if (max == 0 || submitted_ == 0) return got;
    const std::size_t want = min_events > got ? std::min({min_events - got, submitted_, max}) : 0;
    const auto ns = std::max<std::int64_t>(timeout.count(), 0);
    timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
    const int ret = io_getevents(ctx_, static_cast<long>(want), static_cast<long>(max), events_.data(),
                                 timeout == kNoTimeout ? nullptr : &ts);
    if (ret < 0) {
      if (ret == -EINTR) return got;
      throw EnvironmentError(fmt::format("io_getevents failed: {}", errno_text(-ret)));
    }
    for (int i = 0; i < ret; ++i) {
      const io_event& ev = events_[static_cast<std::size_t>(i)];
      const std::uint32_t slot = index_of(ev.obj);
      // res is the byte count or -errno in an unsigned long (the kernel's long, reinterpreted).
      out[got++] = {user_data_[slot], static_cast<std::int64_t>(static_cast<long>(ev.res))};
      free_.push_back(slot);
    }
    submitted_ -= static_cast<std::size_t>(ret);
    return got;
  }

  std::size_t in_flight() const noexcept override { return depth_ - free_.size(); }

 private:
  std::uint32_t index_of(const iocb* cb) const noexcept { return static_cast<std::uint32_t>(cb - iocbs_.data()); }

  std::uint32_t depth_;
  io_context_t ctx_ = nullptr;
  std::vector<iocb> iocbs_;               // one per slot; a slot is free, staged or submitted
  std::vector<std::uint64_t> user_data_;  // by slot
  std::vector<io_event> events_;
  std::vector<std::uint32_t> free_;
  std::vector<iocb*> staged_;                                   // queued, not yet accepted by io_submit
  std::vector<std::pair<std::uint32_t, std::int64_t>> failed_;  // refused by io_submit: slot, -errno
  std::size_t submitted_ = 0;                                   // accepted by io_submit, not yet reaped
  std::vector<int> fds_;
};

}  // namespace
#endif  // DRIVELAB_HAVE_LIBAIO

namespace rows {
extern const EngineInfo libaio{
    .name = "libaio",
    .summary = "Linux native AIO: io_setup/io_submit/io_getevents (fio: libaio)",
    .note = "asynchronous only with direct: true (buffered io_submit performs the I/O before returning)",
    .capabilities = {Capability::async, Capability::batched, Capability::supports_direct},
#ifdef DRIVELAB_HAVE_LIBAIO
    .make = &make_as<LibaioEngine>,
#else
    .make = nullptr,
#endif
    .build_option = "DRIVELAB_WITH_LIBAIO",
    .library = "libaio-dev",
    .instead = "io_uring or psync",
};
}  // namespace rows

#ifdef DRIVELAB_HAVE_LIBAIO
const EngineInfo& LibaioEngine::info() const noexcept { return rows::libaio; }
#endif

}  // namespace drivelab::io::detail
