// Format detection and the reader factory (trace_readers.hpp).
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cerrno>

#include <fmt/format.h>

#include "drivelab/vdi/trace_native.hpp"
#include "text_readers.hpp"
#include "trace_input.hpp"
#include "trace_parse.hpp"

namespace drivelab::vdi {
namespace detail {
namespace {

constexpr std::size_t kDetectBytes = 4096;

bool is_unsigned(std::string_view s, int base = 10) {
  if (s.empty()) return false;
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  return ec == std::errc{} && ptr == s.data() + s.size();
}

TraceFormat detect_csv(std::string_view line) {
  Fields f;
  const std::size_t n = split_delimited(line, ',', f);
  if (n == 5 && iequals(f[0], "version")) return TraceFormat::cloudphysics_csv;
  if (n == 7 && iequals(f[0], "Timestamp")) return TraceFormat::msr_cambridge;
  if (n == 5 && iequals(f[0], "Timestamp")) return TraceFormat::tencent;
  if (n == 5 && iequals(f[0], "device_id")) return TraceFormat::alibaba;
  if (n == 7 && (iequals(f[3], "Read") || iequals(f[3], "Write"))) return TraceFormat::msr_cambridge;
  if (n < 5 || n > kMaxFields) return TraceFormat::automatic;
  if (n == 5 && (iequals(f[1], "R") || iequals(f[1], "W"))) {
    return iequals(f[3], "R") || iequals(f[3], "W") ? TraceFormat::automatic : TraceFormat::alibaba;
  }
  if (iequals(f[3], "r") || iequals(f[3], "w")) return TraceFormat::umass;  // SPC: ASU,LBA,SIZE,OP,TIME
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
    return TraceFormat::umass;
  }
  return TraceFormat::automatic;
}

std::unique_ptr<TraceSource> open_trace_input(std::unique_ptr<ByteInput> input,
                                              const std::filesystem::path& name, TraceFormat format,
                                              const TraceReadOptions& options) {
  if (format == TraceFormat::native || format == TraceFormat::cloudphysics_binary) {
    return make_binary_reader(std::move(input), name, format);
  }
  return make_text_reader(std::move(input), name, format, options);
}

std::unique_ptr<TraceSource> open_trace_memory(std::string data, const std::filesystem::path& name,
                                               TraceFormat format, const TraceReadOptions& options) {
  if (format == TraceFormat::automatic) {
    format = detect_format_from_head(std::string_view(data).substr(0, kDetectBytes), data.size());
    if (format == TraceFormat::automatic) throw TraceFormatError(name, 1, "unrecognised trace format");
  }
  return open_trace_input(std::make_unique<MemoryInput>(std::move(data)), name, format, options);
}

}  // namespace detail

TraceFormat detect_trace_format(const std::filesystem::path& file) {
  detail::FileInput input(file);
  std::array<char, detail::kDetectBytes> head{};
  const std::size_t got = detail::read_full(input, head.data(), head.size());
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) throw_errno(fmt::format("stat trace {}", file.string()), errno);
  const TraceFormat format =
      detail::detect_format_from_head(std::string_view(head.data(), got), static_cast<std::uint64_t>(st.st_size));
  if (format == TraceFormat::automatic) {
    throw TraceFormatError(file, 1,
                           "unrecognised trace format (give one with --format; the detection rules "
                           "are in docs/vdi.md)");
  }
  return format;
}

std::unique_ptr<TraceSource> open_trace(const std::filesystem::path& file, TraceFormat format,
                                        const TraceReadOptions& options) {
  if (format == TraceFormat::automatic) format = detect_trace_format(file);
  return detail::open_trace_input(std::make_unique<detail::FileInput>(file), file, format, options);
}

}  // namespace drivelab::vdi
