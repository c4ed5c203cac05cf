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
#endif

/// "io_uring is not available on this kernel/container: io_uring_queue_init failed: <strerror>"
/// plus a hint for the errnos that have a usual cause (EPERM: kernel.io_uring_disabled or a
/// seccomp profile; ENOMEM: RLIMIT_MEMLOCK; ENOSYS: kernel without io_uring).
std::string uring_unavailable_message(int errnum);

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
