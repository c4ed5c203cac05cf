#include "drivelab/core/cpu_usage.hpp"

#include <sys/resource.h>

namespace drivelab {
namespace {

std::int64_t to_ns(const timeval& tv) noexcept {
  return static_cast<std::int64_t>(tv.tv_sec) * 1'000'000'000 + static_cast<std::int64_t>(tv.tv_usec) * 1'000;
}

CpuTimes usage(int who) noexcept {
  rusage ru{};
  if (::getrusage(who, &ru) != 0) return {};
  return {to_ns(ru.ru_utime), to_ns(ru.ru_stime)};
}

}  // namespace

CpuTimes process_cpu_times() noexcept { return usage(RUSAGE_SELF); }

CpuTimes thread_cpu_times() noexcept { return usage(RUSAGE_THREAD); }

}  // namespace drivelab
