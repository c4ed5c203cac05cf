#pragma once
// Internal: each format's own clock (formats.cpp) and how a reader turns its timestamps into ns.
#include <cstdint>
#include <string_view>

#include "drivelab/trace/readers.hpp"

namespace drivelab::trace::detail {

/// A format's own clock: ns per timestamp unit (0: the file carries the unit, or there are no
/// timestamps), the unit's name and where it is written down.
struct FormatClock {
  TraceFormat format;
  std::int64_t unit_ns;
  std::string_view unit;
  std::string_view origin;
};
/// The entry of `format`; nullptr for automatic.
const FormatClock* own_clock(TraceFormat format) noexcept;

/// num / den ns per timestamp unit (ps: 1/1000).
struct ClockScale {
  std::uint64_t num = 1;
  std::uint64_t den = 1;
};
ClockScale unit_scale(TimeUnit unit) noexcept;

/// What a reader of `format` uses: the scale of its integer timestamps, the clock it reports and
/// its tick (one timestamp unit, at least 1 ns).
struct ReadClock {
  ClockScale scale;
  TraceClock clock;
  std::int64_t tick_ns = 1;
};
ReadClock read_clock(TraceFormat format, const TraceReadOptions& options);

/// Throws ConfigError if options.time_unit is given for a format that carries its own clock.
void check_time_unit(TraceFormat format, const TraceReadOptions& options);

}  // namespace drivelab::trace::detail
