#pragma once
// Internal: field splitting and checked number parsing shared by the text readers. Every function
// reports a problem through LineReader::fail ("file:line: reason").
#include <array>
#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "input.hpp"

namespace drivelab::trace::detail {

inline constexpr std::size_t kMaxFields = 16;
using Fields = std::array<std::string_view, kMaxFields>;

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// Splits on runs of spaces/tabs; returns the field count (at most kMaxFields; the last field
/// keeps the rest of the line when there are more).
inline std::size_t split_whitespace(std::string_view line, Fields& out) {
  std::size_t count = 0;
  line = trim(line);
  while (!line.empty() && count < kMaxFields) {
    if (count == kMaxFields - 1) {
      out[count++] = line;
      break;
    }
    std::size_t end = line.find_first_of(" \t");
    out[count++] = line.substr(0, end);
    if (end == std::string_view::npos) break;
    line = trim(line.substr(end));
  }
  return count;
}

/// Splits on `delimiter`, trimming spaces around each field; returns the field count.
inline std::size_t split_delimited(std::string_view line, char delimiter, Fields& out) {
  std::size_t count = 0;
  for (;;) {
    if (count == kMaxFields) return kMaxFields + 1;  // too many: callers reject it
    const std::size_t end = line.find(delimiter);
    out[count++] = trim(line.substr(0, end));
    if (end == std::string_view::npos) return count;
    line.remove_prefix(end + 1);
  }
}

/// True if `line` is blank or a '#' comment (skipped by every text reader).
inline bool is_blank_or_comment(std::string_view line) {
  line = trim(line);
  return line.empty() || line.front() == '#';
}

inline std::uint64_t parse_u64(const LineReader& in, std::string_view text, std::string_view what, int base = 10) {
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  // NOLINTNEXTLINE(bugprone-suspicious-stringview-data-usage): from_chars reads [data, end), no terminator
  const auto [ptr, ec] = std::from_chars(text.data(), end, value, base);
  if (text.empty() || ec != std::errc{} || ptr != end) {
    in.fail(fmt::format("{}: expected an unsigned {}integer, got '{}'", what, base == 16 ? "hexadecimal " : "",
                        text.substr(0, 64)));
  }
  return value;
}

inline std::uint32_t parse_u32(const LineReader& in, std::string_view text, std::string_view what) {
  const std::uint64_t value = parse_u64(in, text, what);
  if (value > std::numeric_limits<std::uint32_t>::max()) {
    in.fail(fmt::format("{}: {} is out of range (at most {})", what, value, std::numeric_limits<std::uint32_t>::max()));
  }
  return static_cast<std::uint32_t>(value);
}

/// a * b, failing on overflow (offsets in sectors, times in ticks).
inline std::uint64_t checked_mul(const LineReader& in, std::uint64_t a, std::uint64_t b, std::string_view what) {
  std::uint64_t result = 0;
  if (__builtin_mul_overflow(a, b, &result)) in.fail(fmt::format("{}: {} is out of range", what, a));
  return result;
}

/// A size in units of `unit_bytes` as a 32-bit byte count.
inline std::uint32_t size_in_bytes(const LineReader& in, std::uint64_t units, std::uint64_t unit_bytes,
                                   std::string_view what) {
  const std::uint64_t bytes = checked_mul(in, units, unit_bytes, what);
  if (bytes > std::numeric_limits<std::uint32_t>::max()) {
    in.fail(fmt::format("{}: {} bytes is larger than the 4 GiB a request may have", what, bytes));
  }
  return static_cast<std::uint32_t>(bytes);
}

/// A time in `tick_ns` units as signed ns, failing beyond ~292 years.
inline std::int64_t ticks_to_ns(const LineReader& in, std::uint64_t ticks, std::uint64_t tick_ns,
                                std::string_view what) {
  const std::uint64_t ns = checked_mul(in, ticks, tick_ns, what);
  if (ns > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    in.fail(fmt::format("{}: {} is out of range", what, ticks));
  }
  return static_cast<std::int64_t>(ns);
}

/// Decimal seconds "S[.F]" (F up to 9 digits used, more are truncated) as ns.
inline std::int64_t parse_seconds_ns(const LineReader& in, std::string_view text, std::string_view what) {
  const std::size_t dot = text.find('.');
  const std::uint64_t seconds = parse_u64(in, text.substr(0, dot), what);
  std::uint64_t fraction_ns = 0;
  if (dot != std::string_view::npos) {
    std::string_view fraction = text.substr(dot + 1);
    if (fraction.empty()) in.fail(fmt::format("{}: no digits after '.' in '{}'", what, text));
    if (fraction.size() > 9) fraction = fraction.substr(0, 9);
    fraction_ns = parse_u64(in, fraction, what);
    for (std::size_t i = fraction.size(); i < 9; ++i) fraction_ns *= 10;
  }
  const std::int64_t whole_ns = ticks_to_ns(in, seconds, 1'000'000'000, what);
  if (whole_ns > std::numeric_limits<std::int64_t>::max() - static_cast<std::int64_t>(fraction_ns)) {
    in.fail(fmt::format("{}: {} is out of range", what, text));
  }
  return whole_ns + static_cast<std::int64_t>(fraction_ns);
}

inline bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

/// `field` as `read_word` (TraceOp::read) or `write_word` (TraceOp::write), ignoring case; anything
/// else fails with "what: expected READ or WRITE, got 'field'".
inline TraceOp read_or_write(const LineReader& in, std::string_view field, std::string_view read_word,
                             std::string_view write_word, std::string_view what) {
  if (iequals(field, read_word)) return TraceOp::read;
  if (iequals(field, write_word)) return TraceOp::write;
  in.fail(fmt::format("{}: expected {} or {}, got '{}'", what, read_word, write_word, field.substr(0, 32)));
}

/// `field` as an unsigned number that is `read_value` (TraceOp::read) or `write_value`
/// (TraceOp::write): the op flags of Tencent CBS's IOType and MQSim's TYPE; anything else fails
/// with "what: expected 0 (read) or 1 (write), got N" (in the format's order: read first).
inline TraceOp op_flag(const LineReader& in, std::string_view field, std::uint64_t read_value,
                       std::uint64_t write_value, std::string_view what) {
  const std::uint64_t flag = parse_u64(in, field, what);
  if (flag == read_value) return TraceOp::read;
  if (flag != write_value) {
    in.fail(fmt::format("{}: expected {} (read) or {} (write), got {}", what, read_value, write_value, flag));
  }
  return TraceOp::write;
}

}  // namespace drivelab::trace::detail
