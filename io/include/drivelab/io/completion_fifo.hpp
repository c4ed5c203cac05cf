#pragma once
/// \file completion_fifo.hpp
/// The completions an engine makes itself (psync in queue(), null in submit()) waiting to be
/// reaped, first in first out: a ring of the queue depth's size. A reap may take fewer than are
/// waiting (the pump reaps `iodepth_batch_complete_max` at a time, fio's default 1) while new ones
/// arrive, so the FIFO is never empty at a steady depth: a vector cleared only when drained grew
/// by one completion per I/O for the whole run (16 bytes each: 1 GiB after 6 s of the null engine
/// at depth 32), and each doubling stalled the loop. In flight never exceeds the queue depth (the
/// engine answers busy beyond it), so the ring does not grow after construction; should a caller
/// push more, it doubles, keeping the order.
#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include "drivelab/io/engine.hpp"

namespace drivelab::io {

class CompletionFifo {
 public:
  /// Room for `capacity` completions (at least 1) before the first growth.
  explicit CompletionFifo(std::size_t capacity) : ring_(capacity > 0 ? capacity : 1) {}

  void push(const IoCompletion& c) {
    if (count_ == ring_.size()) grow();
    std::size_t tail = head_ + count_;
    if (tail >= ring_.size()) tail -= ring_.size();
    ring_[tail] = c;
    ++count_;
  }
  /// Moves up to out.size() completions into `out`, oldest first; returns how many.
  std::size_t pop_into(std::span<IoCompletion> out) noexcept {
    const std::size_t n = std::min(out.size(), count_);
    for (std::size_t i = 0; i < n; ++i) {
      out[i] = ring_[head_];
      if (++head_ == ring_.size()) head_ = 0;
    }
    count_ -= n;
    return n;
  }
  std::size_t size() const noexcept { return count_; }
  /// Completions it holds without growing.
  std::size_t capacity() const noexcept { return ring_.size(); }

 private:
  void grow() {
    std::vector<IoCompletion> bigger(ring_.size() * 2);
    for (std::size_t i = 0; i < count_; ++i) {
      std::size_t at = head_ + i;
      if (at >= ring_.size()) at -= ring_.size();
      bigger[i] = ring_[at];
    }
    ring_.swap(bigger);
    head_ = 0;
  }

  std::vector<IoCompletion> ring_;
  std::size_t head_ = 0;   ///< the oldest
  std::size_t count_ = 0;  ///< waiting
};

}  // namespace drivelab::io
