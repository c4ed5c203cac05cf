#pragma once
// Internal: what a detection rule sees (DetectHead), and how a reader turns its timestamps into ns
// (the row's FormatClock, or the user's time_unit), and a row's open (open_as).
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string_view>

#include "drivelab/trace/readers.hpp"
#include "input.hpp"
#include "parse.hpp"

namespace drivelab::trace::detail {

/// The first bytes of a trace, as every row's detect() sees them (readers.cpp builds it once).
struct DetectHead {
  std::string_view bytes;             ///< the first (up to) 4 KiB
  std::uint64_t file_size_bytes = 0;  ///< the file's size (a pipe: the bytes read)
  bool binary = false;                ///< a NUL byte in `bytes`: the text fields below are empty
  /// The first non-blank, non-comment line, trimmed; empty for binary heads and when no line ends
  /// within a full head.
  std::string_view line;
  Fields words{};  ///< `line` split on whitespace
  std::size_t word_count = 0;
  bool has_comma = false;     ///< `line` contains a comma
  Fields csv{};               ///< `line` split on commas (fields trimmed)
  std::size_t csv_count = 0;  ///< kMaxFields + 1 when there are more
};
/// Builds the DetectHead of `head` (the first bytes of a file of `file_size_bytes`).
DetectHead make_detect_head(std::string_view head, std::uint64_t file_size_bytes);

/// A row's `open` (readers.hpp TraceFormatInfo::open): a new `Source` reading `input` as the
/// format `Row`, its constructor taking (input, name, Args..., Row, options).
template <class Source, const TraceFormatInfo& Row, auto... Args>
std::unique_ptr<TraceSource> open_as(std::unique_ptr<ByteInput> input, const std::filesystem::path& name,
                                     const TraceReadOptions& options) {
  return std::make_unique<Source>(std::move(input), name, Args..., Row, options);
}

/// Helpers of the detection rules.
bool is_unsigned(std::string_view s, int base = 10);
/// "S.F" with digits on both sides of the dot.
bool is_decimal_seconds(std::string_view s);

/// num / den ns per timestamp unit (ps: 1/1000).
struct ClockScale {
  std::uint64_t num = 1;
  std::uint64_t den = 1;
};
ClockScale unit_scale(TimeUnit unit) noexcept;

/// What a reader of `format` uses: the scale of its integer timestamps, the clock it reports and
/// its tick (one timestamp unit, at least 1 ns; a carried clock's FormatClock::tick_ns).
struct ReadClock {
  ClockScale scale;
  TraceClock clock;
  std::int64_t tick_ns = 1;
};
ReadClock read_clock(const TraceFormatInfo& format, const TraceReadOptions& options);

/// Throws ConfigError if options.time_unit is given for a format that carries its own clock.
void check_time_unit(TraceFormat format, const TraceReadOptions& options);

}  // namespace drivelab::trace::detail
