// Format detection and the reader factory (readers.hpp).
#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>

#include <fmt/format.h>

#include "formats.hpp"
#include "input.hpp"
#include "parse.hpp"

namespace drivelab::trace {
namespace detail {
namespace {
constexpr std::size_t kDetectBytes = 4096;
}  // namespace

bool is_unsigned(std::string_view s, int base) {
  if (s.empty()) return false;
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  return ec == std::errc{} && ptr == s.data() + s.size();
}

bool is_decimal_seconds(std::string_view s) {
  const std::size_t dot = s.find('.');
  return dot != std::string_view::npos && dot > 0 && is_unsigned(s.substr(0, dot)) && is_unsigned(s.substr(dot + 1));
}

DetectHead make_detect_head(std::string_view head, std::uint64_t file_size_bytes) {
  DetectHead out;
  out.bytes = head;
  out.file_size_bytes = file_size_bytes;
  out.binary = head.find('\0') != std::string_view::npos;
  if (out.binary) return out;
  // The first non-blank, non-comment line that ends within the head.
  std::string_view line;
  while (!head.empty()) {
    const std::size_t end = head.find('\n');
    if (end == std::string_view::npos && head.size() >= kDetectBytes) return out;
    line = head.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!is_blank_or_comment(line)) break;
    line = {};
    if (end == std::string_view::npos) break;
    head.remove_prefix(end + 1);
  }
  out.line = trim(line);
  if (out.line.empty()) return out;
  out.word_count = split_whitespace(out.line, out.words);
  out.has_comma = out.line.find(',') != std::string_view::npos;
  if (out.has_comma) out.csv_count = split_delimited(out.line, ',', out.csv);
  return out;
}

TraceFormat detect_format_from_head(std::string_view head, std::uint64_t file_size_bytes) {
  const DetectHead detect_head = make_detect_head(head, file_size_bytes);
  for (const TraceFormatInfo* f : trace_formats()) {
    if (f->detect(detect_head)) return TraceFormat(*f);
  }
  return TraceFormat::automatic;
}

std::unique_ptr<TraceSource> open_trace_input(std::unique_ptr<ByteInput> input, const std::filesystem::path& name,
                                              TraceFormat format, const TraceReadOptions& options) {
  if (format.is_automatic()) throw InternalError("open_trace_input: the format must be detected first");
  check_time_unit(format, options);
  return format.row()->open(std::move(input), name, options);
}

std::unique_ptr<TraceSource> open_trace_memory(std::string data, const std::filesystem::path& name, TraceFormat format,
                                               const TraceReadOptions& options) {
  if (format.is_automatic()) {
    format = detect_format_from_head(std::string_view(data).substr(0, kDetectBytes), data.size());
    if (format.is_automatic()) throw TraceFormatError(name, 1, "unrecognised trace format");
  }
  return open_trace_input(std::make_unique<MemoryInput>(std::move(data)), name, format, options);
}

}  // namespace detail

namespace {

/// Reads the first kDetectBytes of `input` and detects the format from them; the bytes read are
/// returned in `head`. A pipe has no size: the bytes it gave stand for it (a stream shorter than
/// the head is all there; a longer one passes the size rule, as 4,096 is a multiple of 32).
TraceFormat detect_from_input(detail::FileInput& input, const std::filesystem::path& file, std::string& head) {
  head.resize(detail::kDetectBytes);
  head.resize(detail::read_full(input, head.data(), head.size()));
  const std::uint64_t size_bytes = input.regular() ? input.size_bytes() : head.size();
  const TraceFormat format = detail::detect_format_from_head(head, size_bytes);
  if (format.is_automatic()) {
    if (head.empty()) throw TraceFormatError(file, 1, "the trace is empty (no request to read)");
    throw TraceFormatError(file, 1,
                           "unrecognised trace format (give one with --format; the detection rules "
                           "are in docs/vdi.md)");
  }
  return format;
}

}  // namespace

TraceFormat detect_trace_format(const std::filesystem::path& file) {
  detail::FileInput input(file);
  std::string head;
  return detect_from_input(input, file, head);
}

std::unique_ptr<TraceSource> open_trace(const std::filesystem::path& file, TraceFormat format,
                                        const TraceReadOptions& options) {
  auto input = std::make_unique<detail::FileInput>(file);
  if (!format.is_automatic()) return detail::open_trace_input(std::move(input), file, format, options);
  // One open, the head read once: a pipe can be read only once.
  std::string head;
  format = detect_from_input(*input, file, head);
  return detail::open_trace_input(std::make_unique<detail::PrefixedInput>(std::move(head), std::move(input)), file,
                                  format, options);
}

}  // namespace drivelab::trace
