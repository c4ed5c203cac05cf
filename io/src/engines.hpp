#pragma once
// Private: what the engine leaves share (their rows' make_as, the completion FIFO and base of the engines that complete
// requests themselves). Each leaf's row (EngineInfo) is registered in engine.cpp.
#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "drivelab/io/engine.hpp"

namespace drivelab::io::detail {

/// A row's `make` (EngineInfo::make): a new `Engine` of `options` (`.make = &make_as<PsyncEngine>`).
template <class Engine>
std::unique_ptr<IoEngine> make_as(const EngineOptions& options) {
  return std::make_unique<Engine>(options);
}

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

/// The base of the engines that complete requests themselves (psync in queue(), null in submit()):
/// their queue depth, the completions waiting to be reaped, and reap() over them (which never
/// waits: what is done is in the FIFO already).
class SelfCompletingEngine : public IoEngine {
 public:
  explicit SelfCompletingEngine(const EngineOptions& options)
      : queue_depth_(options.queue_depth), done_(options.queue_depth) {}

  std::size_t reap(std::size_t, std::span<IoCompletion> out, std::chrono::nanoseconds) final {
    return done_.pop_into(out);
  }

 protected:
  std::size_t queue_depth_;  ///< queue() answers busy at this many in flight (the final class's in_flight())
  CompletionFifo done_;      ///< completed, not yet reaped
};

}  // namespace drivelab::io::detail
