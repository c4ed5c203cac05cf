#include "drivelab/core/clock.hpp"

#include <cerrno>
#include <chrono>

#include <fmt/chrono.h>
#include <fmt/format.h>

namespace drivelab {

std::string utc_timestamp() {
  const auto now = std::chrono::system_clock::now();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()) % 1000;
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03d}Z", tm, static_cast<int>(ms.count()));
}

std::int64_t sleep_until_ns(std::int64_t deadline_ns) noexcept {
  timespec ts;
  ts.tv_sec = static_cast<time_t>(deadline_ns / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(deadline_ns % 1'000'000'000);
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
    // A signal (e.g. SIGINT) woke us: return so the caller can check its stop flag.
    break;
  }
  return monotonic_ns();
}

}  // namespace drivelab
