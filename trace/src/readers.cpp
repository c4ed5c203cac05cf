// Format detection and the reader factory (readers.hpp).
#include <algorithm>
#include <array>
#include <cerrno>

#include <fmt/format.h>

#include "drivelab/trace/native.hpp"
#include "formats.hpp"
#include "input.hpp"
#include "parse.hpp"
#include "text_readers.hpp"

namespace drivelab::trace {
namespace detail {
namespace {

constexpr std::size_t kDetectBytes = 4096;

bool is_unsigned(std::string_view s, int base = 10) {
  if (s.empty()) return false;
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  return ec == std::errc{} && ptr == s.data() + s.size();
}

/// "S.F" with digits on both sides of the dot.
bool is_decimal_seconds(std::string_view s) {
  const std::size_t dot = s.find('.');
  return dot != std::string_view::npos && dot > 0 && is_unsigned(s.substr(0, dot)) && is_unsigned(s.substr(dot + 1));
}

/// SYSTOR '17: Timestamp,Response,IOType,LUN,Offset,Size with a decimal Timestamp, R|W|blank and
/// integer LUN, Offset and Size (six fields: no other format has that many with these).
bool is_systor17_record(const Fields& f, std::size_t n) {
  return n == 6 && is_decimal_seconds(f[0]) && (f[2].empty() || iequals(f[2], "R") || iequals(f[2], "W")) &&
         is_unsigned(f[3]) && is_unsigned(f[4]) && is_unsigned(f[5]);
}

TraceFormat detect_csv(std::string_view line) {
  Fields f;
  const std::size_t n = split_delimited(line, ',', f);
  if (n == 5 && iequals(f[0], "version")) return TraceFormat::cloudphysics_csv;
  if (n == 7 && iequals(f[0], "Timestamp")) return TraceFormat::msr_cambridge;
  if (n == 6 && iequals(f[0], "Timestamp") && iequals(f[1], "Response")) return TraceFormat::systor17;
  if (n == 5 && iequals(f[0], "Timestamp")) return TraceFormat::tencent;
  if (n == 5 && iequals(f[0], "device_id")) return TraceFormat::alibaba;
  if (n == 7 && (iequals(f[3], "Read") || iequals(f[3], "Write"))) return TraceFormat::msr_cambridge;
  if (is_systor17_record(f, n)) return TraceFormat::systor17;
  if (n < 5 || n > kMaxFields) return TraceFormat::automatic;
  if (n == 5 && (iequals(f[1], "R") || iequals(f[1], "W"))) {
    return iequals(f[3], "R") || iequals(f[3], "W") ? TraceFormat::automatic : TraceFormat::alibaba;
  }
  if (iequals(f[3], "r") || iequals(f[3], "w")) return TraceFormat::spc;  // ASU,LBA,SIZE,OP,TIME
  if (n != 5) return TraceFormat::automatic;
  if (f[3] == "0" || f[3] == "1") return TraceFormat::tencent;
  TraceOp op{};
  std::uint64_t opcode = 0;
  if (is_unsigned(f[2], 16)) {
    std::from_chars(f[2].data(), f[2].data() + f[2].size(), opcode, 16);
    if (opcode <= 0xff && scsi_opcode_op(opcode, op)) return TraceFormat::cloudphysics_csv;
  }
  return TraceFormat::automatic;
}

}  // namespace

TraceFormat detect_format_from_head(std::string_view head, std::uint64_t file_size_bytes) {
  if (head.substr(0, kNativeMagic.size()) == kNativeMagic) return TraceFormat::native;
  if (head.find('\0') != std::string_view::npos) {
    return file_size_bytes % 32 == 0 ? TraceFormat::cloudphysics_binary : TraceFormat::automatic;
  }
  // The first non-blank, non-comment line that ends within the head.
  std::string_view line;
  while (!head.empty()) {
    const std::size_t end = head.find('\n');
    if (end == std::string_view::npos && head.size() >= kDetectBytes) return TraceFormat::automatic;
    line = head.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!is_blank_or_comment(line)) break;
    line = {};
    if (end == std::string_view::npos) break;
    head.remove_prefix(end + 1);
  }
  line = trim(line);
  if (line.empty()) return TraceFormat::automatic;
  if (line == "fio version 2 iolog") return TraceFormat::fio_iolog_v2;
  if (line == "fio version 3 iolog") return TraceFormat::fio_iolog_v3;
  Fields f;
  const std::size_t n = split_whitespace(line, f);
  if (n >= 7 && is_blkparse_device_field(f[0])) return TraceFormat::blkparse;
  if (line.find(',') != std::string_view::npos) return detect_csv(line);
  if (n == 5 && std::all_of(f.begin(), f.begin() + 5, [](std::string_view s) { return is_unsigned(s); })) {
    return TraceFormat::mqsim;
  }
  return TraceFormat::automatic;
}

std::unique_ptr<TraceSource> open_trace_input(std::unique_ptr<ByteInput> input, const std::filesystem::path& name,
                                              TraceFormat format, const TraceReadOptions& options) {
  check_time_unit(format, options);
  if (format == TraceFormat::native || format == TraceFormat::cloudphysics_binary) {
    return make_binary_reader(std::move(input), name, format, options);
  }
  return make_text_reader(std::move(input), name, format, options);
}

std::unique_ptr<TraceSource> open_trace_memory(std::string data, const std::filesystem::path& name, TraceFormat format,
                                               const TraceReadOptions& options) {
  if (format == TraceFormat::automatic) {
    format = detect_format_from_head(std::string_view(data).substr(0, kDetectBytes), data.size());
    if (format == TraceFormat::automatic) throw TraceFormatError(name, 1, "unrecognised trace format");
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
  if (format == TraceFormat::automatic) {
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
  if (format != TraceFormat::automatic) return detail::open_trace_input(std::move(input), file, format, options);
  // One open, the head read once: a pipe can be read only once.
  std::string head;
  format = detect_from_input(*input, file, head);
  return detail::open_trace_input(std::make_unique<detail::PrefixedInput>(std::move(head), std::move(input)), file,
                                  format, options);
}

}  // namespace drivelab::trace
