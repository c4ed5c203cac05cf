#pragma once
/// \file phase.hpp
/// The clock of an emulator's phases: waiting for a deadline while watching for a reason to stop,
/// and the measured phase's interval boundaries. Times are monotonic_ns() instants (clock.hpp).
///
/// The poll rule (one for every wait of a phase, StopFlag::sleep_until included): a wait sleeps
/// in slices of at most kWaitPollNs = 10 ms and asks its `abort` predicate before each slice, so
/// a stop request or a failed worker ends the wait within 10 ms (plus the scheduler's wake-up).
/// A deadline itself is never overslept by the rule: the last slice ends at the deadline. 10 ms
/// is what the io and vdbench emulators used (the finer of the two rules in the tree; sysbench,
/// TPC-C and the stop flag used 50 ms): a failed I/O worker ends the phase before it has idled
/// for a visible part of a 1 s interval, and 100 wake-ups per second of one thread cost nothing
/// next to the workload. A signal (SIGINT) ends the current slice at once (sleep_until_ns).
#include <algorithm>
#include <cstdint>

#include "drivelab/core/clock.hpp"

namespace drivelab {

/// The longest a phase sleeps without asking whether it should stop (ns): see the poll rule above.
inline constexpr std::int64_t kWaitPollNs = 10'000'000;

/// Sleeps until the monotonic deadline `deadline_ns`. Returns true once the deadline is reached
/// (at once if it has passed), false as soon as `abort()` (a `bool()` callable, called from this
/// thread before every slice: a stop flag, a worker's failure) returns true; abort is asked first,
/// so a wait that is already aborted returns false even with its deadline passed.
template <class Abort>
bool wait_until(std::int64_t deadline_ns, Abort&& abort) {
  for (;;) {
    if (abort()) return false;
    const std::int64_t now = monotonic_ns();
    if (now >= deadline_ns) return true;
    sleep_until_ns(std::min(deadline_ns, now + kWaitPollNs));
  }
}

/// The shortest interval for_each_interval() keeps (ns): a zero or tiny interval would otherwise
/// make the phase a busy loop. Protocols ask for 100 ms at least (runner/protocol.cpp).
inline constexpr std::int64_t kMinIntervalNs = 1'000'000;

/// The measured phase's interval clock. From `start_ns` to `end_ns` it waits (wait_until, the
/// poll rule above) for each boundary start + k x interval_ns (interval_ns at least
/// kMinIntervalNs), the last one clipped to `end_ns`, and after each wait calls `on_boundary(last)`
/// (`void(bool)`), last being true for the final call: `end_ns` was reached, or `abort()` ended the
/// wait early. on_boundary therefore runs at least once, also when end_ns <= start_ns; it closes
/// the interval itself (takes the samples, reads the clock) and, on the last call, may stop the
/// workers first so that what they still reap lands in the last interval.
template <class Abort, class OnBoundary>
void for_each_interval(std::int64_t start_ns, std::int64_t end_ns, std::int64_t interval_ns, Abort&& abort,
                       OnBoundary&& on_boundary) {
  const std::int64_t step = std::max(interval_ns, kMinIntervalNs);
  for (std::int64_t next = start_ns + step;; next += step) {
    const std::int64_t boundary = std::min(next, end_ns);
    const bool last = !wait_until(boundary, abort) || boundary == end_ns;
    on_boundary(last);
    if (last) return;
  }
}

}  // namespace drivelab
