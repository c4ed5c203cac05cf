#pragma once
/// \file units.hpp
/// Sizes and durations with units, as users write them in protocols and on the command line.
///
/// Sizes (parse_size): a number with an optional suffix, case-insensitive.
///   - binary (powers of 1024): k, kb, kib, m, mb, mib, g, gb, gib, t, tb, tib — as fio and vdbench
///     read "4k" = 4096 and "1g" = 2^30. Note that "MB" in a *size* is binary here (fio convention),
///     while throughput is always reported as MB/s with MB = 10^6 bytes (see docs/results.md).
///   - plain bytes: "512", "512b".
///   Throws std::invalid_argument with a reason on anything else (negative, overflow, bad suffix).
/// Durations (parse_duration): "250us", "10ms", "30s", "5m", "2h", "1h30m", "1.5s"; a bare number is
/// seconds. Returns std::chrono::nanoseconds. Throws std::invalid_argument on bad input.
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace drivelab {

std::uint64_t parse_size(std::string_view text);
std::chrono::nanoseconds parse_duration(std::string_view text);

/// "4 KiB", "2 GiB", "512 B": exact binary units where the value divides evenly, else 1 decimal.
std::string format_size(std::uint64_t bytes);
/// "30s", "2m30s", "250ms", "1.5us".
std::string format_duration(std::chrono::nanoseconds d);

}  // namespace drivelab
