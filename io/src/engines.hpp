#pragma once
// Private: constructors of the engine leaves, used only by the factory in engine.cpp.
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "drivelab/io/engine.hpp"

namespace drivelab::io::detail {

std::unique_ptr<IoEngine> make_psync_engine(const EngineOptions& options);
std::unique_ptr<IoEngine> make_null_engine(const EngineOptions& options);
#ifdef DRIVELAB_HAVE_URING
/// Throws EnvironmentError when the kernel refuses a ring (see uring_unavailable_message).
std::unique_ptr<IoEngine> make_uring_engine(const EngineOptions& options);
/// sqthread_poll, registered_files and registered_buffers, each tried on a small ring.
std::vector<FeatureAvailability> probe_uring_features();
#endif
#ifdef DRIVELAB_HAVE_LIBAIO
/// Throws EnvironmentError when io_setup(2) fails (see aio_unavailable_message).
std::unique_ptr<IoEngine> make_libaio_engine(const EngineOptions& options);
#endif

/// Why io_uring_setup(2) failed, for a ring without SQPOLL: "io_uring is disabled on this kernel
/// or container: io_uring_setup failed: <errno_text>" plus the usual cause of that errno (EPERM:
/// /proc/sys/kernel/io_uring_disabled, with its current value, or a container's seccomp profile;
/// ENOSYS: kernel without CONFIG_IO_URING or seccomp; ENOMEM: RLIMIT_MEMLOCK on kernels < 5.12).
std::string uring_unavailable_message(int errnum);
/// Why a ring WITH SQPOLL failed while one without works (EPERM: CAP_SYS_ADMIN before Linux 5.11;
/// EINVAL with sqthread_poll_cpu: that CPU is offline or not allowed).
std::string uring_sqpoll_refused_message(int errnum, const EngineOptions& options);
/// Why io_setup(2) failed (EAGAIN: fs.aio-max-nr reached; ENOSYS/EPERM: kernel without
/// CONFIG_AIO or a seccomp profile).
std::string aio_unavailable_message(int errnum, std::uint32_t nr_events);

/// Completions made by the engine itself (psync in queue(), null in submit()) waiting to be reaped,
/// first in first out. Storage is reused: no allocation once it has reached the queue depth.
class CompletionFifo {
 public:
  explicit CompletionFifo(std::size_t capacity) { done_.reserve(capacity); }
  void push(const IoCompletion& c) { done_.push_back(c); }
  /// Moves up to out.size() completions into `out`; returns how many.
  std::size_t pop_into(std::span<IoCompletion> out) noexcept {
    std::size_t n = 0;
    while (n < out.size() && head_ < done_.size()) out[n++] = done_[head_++];
    if (head_ == done_.size()) {
      done_.clear();
      head_ = 0;
    }
    return n;
  }
  std::size_t size() const noexcept { return done_.size() - head_; }

 private:
  std::vector<IoCompletion> done_;
  std::size_t head_ = 0;
};

}  // namespace drivelab::io::detail
