#pragma once
/// \file units.hpp
/// Sizes and durations with units, as users write them in protocols and on the command line.
///
/// Sizes (parse_size): a number with an optional suffix, case-insensitive.
///   - binary (powers of 1024): k, kb, kib, m, mb, mib, g, gb, gib, t, tb, tib, p, pb, pib — as
///     fio and vdbench read "4k" = 4096 and "1g" = 2^30. Note that "MB" in a *size* is binary
///     here (fio convention), while throughput is always reported as MB/s with MB = 10^6 bytes
///     (see docs/results.md).
///   - plain bytes: "512", "512b". Fractions are allowed if the result is whole ("1.5k" = 1536).
///   Integers are exact up to 2^64 - 1. Throws std::invalid_argument with a reason on anything
///   else (negative, overflow, bad suffix, fractional bytes such as "0.5" or "0.1k").
/// Durations (parse_duration): "250us", "10ms", "30s", "5m", "2h", "1h30m", "1.5s", "30 s"; units
/// ns, us, ms, s/sec, m/min, h (case-insensitive; "m" is minutes). A bare number is seconds, but
/// only on its own ("1h30" is an error). Returns std::chrono::nanoseconds (rounded to the nearest
/// ns). Throws std::invalid_argument on bad input (empty, negative, unknown unit, > ~292 years).
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace drivelab {

std::uint64_t parse_size(std::string_view text);
std::chrono::nanoseconds parse_duration(std::string_view text);

/// "4 KiB", "2 GiB", "512 B": exact binary units where the value divides evenly, else 1 decimal.
std::string format_size(std::uint64_t bytes);
/// "30s", "2m30s", "250ms", "1.5us", "-5ms": 6 significant digits below a minute, whole seconds
/// from a minute up (for display; parse_duration reads the non-negative forms back).
std::string format_duration(std::chrono::nanoseconds d);

/// `value` rounded down to a multiple of `alignment` (bytes, sectors, records: any count). Any alignment > 0, not only
/// powers of two (an O_DIRECT alignment is one, a transfer size or a slot length need not be). alignment 0 is a
/// precondition violation (division by 0).
constexpr std::uint64_t align_down(std::uint64_t value, std::uint64_t alignment) noexcept {
  return value / alignment * alignment;
}

/// `value` rounded up to a multiple of `alignment` (> 0, as align_down). The caller keeps
/// value + alignment - 1 within 64 bits (AlignedBuffer checks it before it rounds); past that
/// the result wraps.
constexpr std::uint64_t align_up(std::uint64_t value, std::uint64_t alignment) noexcept {
  return (value + alignment - 1) / alignment * alignment;
}

}  // namespace drivelab
