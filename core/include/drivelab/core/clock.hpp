#pragma once
/// \file clock.hpp
/// The one clock of drivelab: CLOCK_MONOTONIC in nanoseconds. All latencies, intervals and
/// intended start times use it; wall-clock time (UTC) is only for the result record's timestamps.
#include <cstdint>
#include <ctime>
#include <string>

namespace drivelab {

/// Monotonic time in nanoseconds since an unspecified epoch (CLOCK_MONOTONIC; not affected by NTP
/// steps). Cost: one vDSO call, ~20 ns.
inline std::int64_t monotonic_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

/// Seconds from `from_ns` to `to_ns`, two instants (ns) of one time line (monotonic_ns(), or a
/// trace's own clock): (to - from) / 1e9, negative when `to_ns` is earlier. The difference is
/// taken in integers first, so instants far from the epoch lose no precision.
constexpr double seconds_between(std::int64_t from_ns, std::int64_t to_ns) noexcept {
  return static_cast<double>(to_ns - from_ns) / 1e9;
}

/// Current UTC time as ISO-8601 with milliseconds ("2026-11-29T19:53:44.123Z").
std::string utc_timestamp();

/// Sleeps until the monotonic deadline (absolute, ns) or returns early; returns monotonic_ns() at wake.
std::int64_t sleep_until_ns(std::int64_t deadline_ns) noexcept;

}  // namespace drivelab
