// Format, time-unit and fio-wait names, each format's own clock, and the TraceFormatError type
// (readers.hpp).
#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "drivelab/trace/readers.hpp"
#include "formats.hpp"

namespace drivelab::trace {
namespace {

constexpr std::array<std::pair<TraceFormat, std::string_view>, 14> kNames{{
    {TraceFormat::automatic, "auto"},
    {TraceFormat::fio_iolog_v2, "fio-iolog-v2"},
    {TraceFormat::fio_iolog_v3, "fio-iolog-v3"},
    {TraceFormat::blkparse, "blkparse"},
    {TraceFormat::msr_cambridge, "msr-cambridge"},
    {TraceFormat::cloudphysics_csv, "cloudphysics-csv"},
    {TraceFormat::cloudphysics_binary, "cloudphysics-binary"},
    {TraceFormat::mqsim, "mqsim"},
    {TraceFormat::spc, "spc"},
    {TraceFormat::alibaba, "alibaba"},
    {TraceFormat::tencent, "tencent"},
    {TraceFormat::systor17, "systor17"},
    {TraceFormat::native, "native"},
    // Old names, accepted and never printed (to_string finds the canonical name first).
    {TraceFormat::mqsim, "umass"},  // the 5-column MQSim form was read as "umass" before it was recognised
}};

constexpr std::array<std::pair<TimeUnit, std::string_view>, 5> kUnits{
    {{TimeUnit::ps, "ps"}, {TimeUnit::ns, "ns"}, {TimeUnit::us, "us"}, {TimeUnit::ms, "ms"}, {TimeUnit::s, "s"}}};

// Each format's own clock: the ns per timestamp unit where the file does not carry it (0 where it
// does, or where there are no timestamps), and where the unit is written down (docs/vdi.md).
constexpr std::array<detail::FormatClock, 12> kClocks{{
    {TraceFormat::fio_iolog_v2, 0, "ms (wait, since the start)",
     "fio 3.33's replay: `wait N` waits until N ms after the start (iolog.c read_iolog_get); "
     "--fio-wait relative-us reads it as the HOWTO's text says"},
    {TraceFormat::fio_iolog_v3, 1000, "us",
     "the format's default: fio 3.33's replay sleeps a timestamp gap of N as N us"},
    {TraceFormat::blkparse, 0, "s (decimal, ns digits)", "carried by the file: SECONDS.NANOSECONDS"},
    {TraceFormat::msr_cambridge, 100, "100 ns", "the format's: Windows FILETIME ticks (SNIA IOTTA 388 README)"},
    {TraceFormat::cloudphysics_csv, 1'000'000'000, "s",
     "the format's default, worked out on the shared trace (docs/vdi.md: 7,200 values for 113,872 requests)"},
    {TraceFormat::cloudphysics_binary, 1000, "us", "the format's: vscsi v1 records (libCacheSim trace_v1_record_t)"},
    {TraceFormat::mqsim, 1, "ns", "the format's default: MQSim's <Time_Unit>NANOSECOND, as its configurations give it"},
    {TraceFormat::spc, 0, "s (decimal)", "carried by the file: SPC decimal seconds"},
    {TraceFormat::alibaba, 1000, "us", "the format's (alibaba/block-traces README)"},
    {TraceFormat::tencent, 1'000'000'000, "s", "the format's (SNIA IOTTA 27917 README)"},
    {TraceFormat::systor17, 0, "s (decimal, us resolution)",
     "carried by the file: Unix seconds with a fraction (SYSTOR '17 README)"},
    {TraceFormat::native, 0, "ns", "carried by the file: native records are ns"},
}};

std::string dashed(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    if (c == '_') c = '-';
  }
  return out;
}

}  // namespace

TraceFormat parse_trace_format(std::string_view name) {
  const std::string wanted = dashed(name);
  if (wanted == "automatic") return TraceFormat::automatic;
  std::string accepted;
  for (const auto& [format, text] : kNames) {
    if (wanted == text) return format;
    if (text == "umass") continue;  // an old name: accepted, not advertised
    accepted += accepted.empty() ? "" : ", ";
    accepted += text;
  }
  throw ConfigError(fmt::format("unknown trace format '{}' (accepted: {})", name, accepted));
}

std::string_view to_string(TraceFormat format) {
  for (const auto& [f, text] : kNames) {
    if (f == format) return text;
  }
  return "unknown";
}

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

bool takes_time_unit(TraceFormat format) noexcept {
  const detail::FormatClock* clock = detail::own_clock(format);
  return clock != nullptr && clock->unit_ns > 0;
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

const FormatClock* own_clock(TraceFormat format) noexcept {
  for (const FormatClock& c : kClocks) {
    if (c.format == format) return &c;
  }
  return nullptr;
}

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

ReadClock read_clock(TraceFormat format, const TraceReadOptions& options) {
  const FormatClock* own = own_clock(format);
  ReadClock out;
  if (own == nullptr) return out;
  out.clock.unit = std::string(own->unit);
  out.clock.origin = std::string(own->origin);
  if (own->unit_ns > 0) out.scale = {static_cast<std::uint64_t>(own->unit_ns), 1};
  if (options.time_unit && own->unit_ns > 0) {
    out.scale = unit_scale(*options.time_unit);
    out.clock.unit = std::string(to_string(*options.time_unit));
    out.clock.origin =
        fmt::format("given by the user (--time-unit / time_unit); the format's own is {}, {}", own->unit, own->origin);
    out.clock.given = true;
  }
  if (format == TraceFormat::fio_iolog_v2 && options.fio_wait == FioWait::relative_us) {
    out.clock.unit = "us (wait, after the previous wait)";
    out.clock.origin =
        "given by the user (--fio-wait relative-us): the fio HOWTO's text; fio 3.33 itself waits "
        "until N ms after the start";
    out.clock.given = true;
  }
  out.tick_ns = std::max<std::int64_t>(1, static_cast<std::int64_t>(out.scale.num / out.scale.den));
  return out;
}

void check_time_unit(TraceFormat format, const TraceReadOptions& options) {
  if (!options.time_unit || takes_time_unit(format)) return;
  const FormatClock* own = own_clock(format);
  throw ConfigError(
      fmt::format("time unit '{}' does not apply to {} traces: {}{} (time_unit applies to fio-iolog-v3, msr-cambridge, "
                  "cloudphysics-csv, cloudphysics-binary, mqsim, alibaba and tencent)",
                  to_string(*options.time_unit), to_string(format), own ? own->unit : "ns",
                  own ? fmt::format(", from {}", own->origin) : std::string()));
}

}  // namespace detail
}  // namespace drivelab::trace
