// Format names and the TraceFormatError type (readers.hpp).
#include <array>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "drivelab/trace/readers.hpp"

namespace drivelab::trace {
namespace {

constexpr std::array<std::pair<TraceFormat, std::string_view>, 11> kNames{{
    {TraceFormat::automatic, "auto"},
    {TraceFormat::fio_iolog_v2, "fio-iolog-v2"},
    {TraceFormat::fio_iolog_v3, "fio-iolog-v3"},
    {TraceFormat::blkparse, "blkparse"},
    {TraceFormat::msr_cambridge, "msr-cambridge"},
    {TraceFormat::cloudphysics_csv, "cloudphysics-csv"},
    {TraceFormat::cloudphysics_binary, "cloudphysics-binary"},
    {TraceFormat::umass, "umass"},
    {TraceFormat::alibaba, "alibaba"},
    {TraceFormat::tencent, "tencent"},
    {TraceFormat::native, "native"},
}};

}  // namespace

TraceFormat parse_trace_format(std::string_view name) {
  std::string dashed(name);
  for (char& c : dashed) {
    if (c == '_') c = '-';
  }
  if (dashed == "automatic") return TraceFormat::automatic;
  std::string accepted;
  for (const auto& [format, text] : kNames) {
    if (dashed == text) return format;
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

TraceFormatError::TraceFormatError(const std::filesystem::path& file, std::uint64_t line,
                                   const std::string& reason)
    : Error(fmt::format("{}:{}: {}", file.string(), line, reason)), file_(file), line_(line) {}

}  // namespace drivelab::trace

