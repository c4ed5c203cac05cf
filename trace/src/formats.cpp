// The registration list of the trace formats, and everything derived from it: names, choices,
// the clock a reader uses; the time-unit and fio-wait names and the TraceFormatError type
// (readers.hpp).
#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "drivelab/core/rows.hpp"
#include "drivelab/trace/readers.hpp"
#include "formats.hpp"

namespace drivelab::trace {

// ---- The registration list -----------------------------------------------------------------------
// ONE row per format. Each name is a TraceFormatInfo defined beside its reader, as
// detail::rows::NAME (text_readers.cpp, csv_readers.cpp, binary_readers.cpp); DRIVELAB_ROW_TABLE
// (core/rows.hpp) declares and references every one. The order is the order of names in help and
// messages and the order in which detection tries the rules (the first that matches wins;
// format_rows_test checks that each row's sample matches its own rule only).
// clang-format off: one row per line
#define DRIVELAB_TRACE_FORMATS(ROW) \
  ROW(fio_iolog_v2) \
  ROW(fio_iolog_v3) \
  ROW(blkparse) \
  ROW(msr_cambridge) \
  ROW(cloudphysics_csv) \
  ROW(cloudphysics_binary) \
  ROW(mqsim) \
  ROW(spc) \
  ROW(alibaba) \
  ROW(tencent) \
  ROW(systor17) \
  ROW(native)
// clang-format on

DRIVELAB_ROW_TABLE(TraceFormatInfo, DRIVELAB_TRACE_FORMATS, kFormats)

namespace {

constexpr std::array<std::pair<TimeUnit, std::string_view>, 5> kUnits{
    {{TimeUnit::ps, "ps"}, {TimeUnit::ns, "ns"}, {TimeUnit::us, "us"}, {TimeUnit::ms, "ms"}, {TimeUnit::s, "s"}}};

std::string dashed(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    if (c == '_') c = '-';
  }
  return out;
}

}  // namespace

std::span<const TraceFormatInfo* const> trace_formats() noexcept { return kFormats; }

std::string trace_format_choices() {
  std::string out = "auto";
  for (const TraceFormatInfo* f : kFormats) out += fmt::format(", {}", f->name);
  return out;
}

TraceFormat parse_trace_format(std::string_view name) {
  const std::string wanted = dashed(name);
  if (wanted == "auto" || wanted == "automatic") return TraceFormat::automatic;
  for (const TraceFormatInfo* f : kFormats) {
    if (wanted == f->name || (!f->old_name.empty() && wanted == f->old_name)) return TraceFormat(*f);
  }
  // Old names are accepted, not advertised.
  throw ConfigError(fmt::format("unknown trace format '{}' (accepted: {})", name, trace_format_choices()));
}

std::string_view to_string(TraceFormat format) { return format.is_automatic() ? "auto" : format.row()->name; }

TimeUnit parse_time_unit(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (lower == "µs" || lower == "microsecond") return TimeUnit::us;
  if (lower == "picosecond") return TimeUnit::ps;
  if (lower == "nanosecond") return TimeUnit::ns;
  for (const auto& [unit, text] : kUnits) {
    if (lower == text) return unit;
  }
  throw ConfigError(
      fmt::format("unknown time unit '{}' (accepted: ps, ns, us, ms, s; or MQSim's PICOSECOND, "
                  "NANOSECOND, MICROSECOND)",
                  name));
}

std::string_view to_string(TimeUnit unit) {
  for (const auto& [u, text] : kUnits) {
    if (u == unit) return text;
  }
  return "unknown";
}

bool takes_time_unit(TraceFormat format) noexcept { return !format.is_automatic() && format.row()->clock.unit_ns > 0; }

std::string time_unit_format_names() {
  std::string out;
  for (const TraceFormatInfo* f : kFormats) {
    if (f->clock.unit_ns > 0) out += fmt::format("{}{}", out.empty() ? "" : ", ", f->name);
  }
  return out;
}

FioWait parse_fio_wait(std::string_view name) {
  const std::string wanted = dashed(name);
  if (wanted == "absolute-ms") return FioWait::absolute_ms;
  if (wanted == "relative-us") return FioWait::relative_us;
  throw ConfigError(
      fmt::format("unknown fio wait reading '{}' (accepted: absolute-ms, fio 3.33's behaviour; "
                  "relative-us, the HOWTO's text)",
                  name));
}

std::string_view to_string(FioWait wait) { return wait == FioWait::absolute_ms ? "absolute-ms" : "relative-us"; }

TraceFormatError::TraceFormatError(const std::filesystem::path& file, std::uint64_t line, const std::string& reason)
    : Error(fmt::format("{}:{}: {}", file.string(), line, reason)), file_(file), line_(line) {}

namespace detail {

ClockScale unit_scale(TimeUnit unit) noexcept {
  switch (unit) {
    case TimeUnit::ps: return {1, 1000};
    case TimeUnit::ns: return {1, 1};
    case TimeUnit::us: return {1000, 1};
    case TimeUnit::ms: return {1'000'000, 1};
    case TimeUnit::s: return {1'000'000'000, 1};
  }
  return {1, 1};
}

ReadClock read_clock(const TraceFormatInfo& format, const TraceReadOptions& options) {
  const FormatClock& own = format.clock;
  ReadClock out;
  out.clock.unit = std::string(own.unit);
  out.clock.origin = std::string(own.origin);
  if (own.unit_ns > 0) out.scale = {static_cast<std::uint64_t>(own.unit_ns), 1};
  if (options.time_unit && own.unit_ns > 0) {
    out.scale = unit_scale(*options.time_unit);
    out.clock.unit = std::string(to_string(*options.time_unit));
    out.clock.origin =
        fmt::format("given by the user (--time-unit / time_unit); the format's own is {}, {}", own.unit, own.origin);
    out.clock.given = true;
  }
  out.tick_ns = own.unit_ns > 0 ? std::max<std::int64_t>(1, static_cast<std::int64_t>(out.scale.num / out.scale.den))
                                : std::max<std::int64_t>(1, own.tick_ns);
  return out;
}

void check_time_unit(TraceFormat format, const TraceReadOptions& options) {
  if (!options.time_unit || takes_time_unit(format)) return;
  const TraceFormatInfo* own = format.row();
  throw ConfigError(fmt::format("time unit '{}' does not apply to {} traces: {}{} (time_unit applies to {})",
                                to_string(*options.time_unit), to_string(format), own ? own->clock.unit : "ns",
                                own ? fmt::format(", from {}", own->clock.origin) : std::string(),
                                time_unit_format_names()));
}

}  // namespace detail
}  // namespace drivelab::trace
