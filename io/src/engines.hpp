#pragma once
// Private: what the engine leaves share (their rows' make_as and the base of the engines that complete
// requests themselves). Each leaf's row (EngineInfo) is registered in engine.cpp.
#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "drivelab/io/completion_fifo.hpp"
#include "drivelab/io/engine.hpp"

namespace drivelab::io::detail {

/// A row's `make` (EngineInfo::make): a new `Engine` of `options` (`.make = &make_as<PsyncEngine>`).
template <class Engine>
std::unique_ptr<IoEngine> make_as(const EngineOptions& options) {
  return std::make_unique<Engine>(options);
}

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
