#pragma once
/// \file timer_slack.hpp
/// The timer slack of a thread that issues paced operations (vdbench's job threads, the trace
/// replayer): the kernel lets a timed wait of a normal thread end up to its slack late, 50 us by
/// default, which would make every paced wake-up late by that much (prctl(2) PR_SET_TIMERSLACK).
#include <sys/prctl.h>

namespace drivelab {

/// Timer slack (ns) of a paced issuer's thread: 1 us instead of the default 50 us.
inline constexpr unsigned long kPacedTimerSlackNs = 1'000;

/// Sets the calling thread's timer slack (ns) for the object's lifetime and restores the old value
/// at its end. Not movable: it belongs to one thread's scope. prctl's errors are ignored (the
/// slack is a hint: a thread whose slack cannot be set only wakes later).
class ScopedTimerSlack {
 public:
  explicit ScopedTimerSlack(unsigned long ns) noexcept : old_(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0)) {
    prctl(PR_SET_TIMERSLACK, ns, 0, 0, 0);
  }
  ~ScopedTimerSlack() {
    if (old_ > 0) prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(old_), 0, 0, 0);
  }
  ScopedTimerSlack(const ScopedTimerSlack&) = delete;
  ScopedTimerSlack& operator=(const ScopedTimerSlack&) = delete;

 private:
  int old_;
};

}  // namespace drivelab
