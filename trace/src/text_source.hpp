#pragma once
// Internal: the base of every text trace reader (text_readers.cpp, csv_readers.cpp): the line
// reader, the device table, the clock (the format's own or the user's time_unit, formats.hpp) and
// the first timestamp, which TraceIo::time_ns is relative to.
#include <algorithm>
#include <limits>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "formats.hpp"
#include "input.hpp"
#include "parse.hpp"

namespace drivelab::trace::detail {

inline constexpr std::uint64_t kSectorBytes = 512;

class TextTraceSource : public TraceSource {
 public:
  /// The clock and tick are the row's (FormatClock), or the user's time_unit (read_clock).
  TextTraceSource(std::unique_ptr<ByteInput> input, const std::filesystem::path& name, const TraceFormatInfo& format,
                  const TraceReadOptions& options)
      : lines_(std::move(input), name), clock_(read_clock(format, options)), format_(format) {}

  bool next(TraceIo& io) final {
    std::string_view line;
    while (lines_.next(line)) {
      if (is_blank_or_comment(line)) continue;
      ++content_lines_;
      io.flags = 0;
      if (parse(line, io)) {
        // An offset whose request ends past 2^64 bytes wrapped round to 0 in the LBA span (found
        // by the fresh review of issue 29): no device is that large.
        if (io.size_bytes > UINT64_MAX - io.offset_bytes)
          lines_.fail(fmt::format("offset {} + length {} passes the end of any device (2^64 bytes)", io.offset_bytes,
                                  io.size_bytes));
        return true;
      }
    }
    return false;
  }
  [[nodiscard]] const std::vector<std::string>& devices() const final { return devices_.names(); }
  [[nodiscard]] std::int64_t tick_ns() const final { return clock_.tick_ns; }
  [[nodiscard]] TraceClock clock() const final { return clock_.clock; }
  [[nodiscard]] std::string describe() const final {
    return fmt::format("{} ({})", lines_.name().filename().string(), format_.name);
  }

 protected:
  /// Parses one non-blank line; returns false to skip it (headers, non-I/O events).
  virtual bool parse(std::string_view line, TraceIo& io) = 0;

  std::uint32_t device(std::string_view name) {
    std::uint32_t index = 0;
    if (!devices_.index_of(name, index)) {
      lines_.fail(fmt::format("more than {} devices", DeviceTable::kMaxDevices));
    }
    return index;
  }
  /// The device named by a numeric field (an MQSim device, an SPC ASU, a LUN, a volume id).
  std::uint32_t numeric_device(std::string_view field, std::string_view what) {
    (void)parse_u64(lines_, field, what);
    return device(field);
  }
  /// io.offset_bytes and io.size_bytes from the fields of an offset and a size in 512-byte sectors
  /// (named `offset_what` and `size_what` in errors; the offset is read first), failing on overflow.
  void set_sectors(TraceIo& io, std::string_view offset_field, std::string_view size_field,
                   std::string_view offset_what, std::string_view size_what) const {
    io.offset_bytes = checked_mul(lines_, parse_u64(lines_, offset_field, offset_what), kSectorBytes, offset_what);
    io.size_bytes = size_in_bytes(lines_, parse_u64(lines_, size_field, size_what), kSectorBytes, size_what);
  }
  /// Sets io.time_ns from an absolute timestamp in ns.
  void set_time(TraceIo& io, std::int64_t absolute_ns) {
    if (!have_first_) {
      first_ns_ = absolute_ns;
      have_first_ = true;
    }
    io.time_ns = absolute_ns - first_ns_;
  }
  /// An integer timestamp in the reader's clock unit as ns, failing beyond ~292 years.
  std::int64_t stamp_ns(std::uint64_t value, std::string_view what) const {
    const std::uint64_t scaled = checked_mul(lines_, value, clock_.scale.num, what) / clock_.scale.den;
    if (scaled > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      lines_.fail(fmt::format("{}: {} is out of range", what, value));
    }
    return static_cast<std::int64_t>(scaled);
  }
  std::size_t expect_fields(std::size_t count, std::size_t expected, std::string_view layout) {
    if (count != expected) {
      lines_.fail(fmt::format("expected {} fields ({}), got {}", expected, layout,
                              count > kMaxFields ? std::string("more") : std::to_string(count)));
    }
    return count;
  }
  /// True for the first content line when its first field is `name` (a header line).
  bool is_header(std::size_t fields, const Fields& f, std::string_view name) const {
    return content_lines_ == 1 && fields >= 1 && iequals(f[0], name);
  }
  /// A line of a CSV format with the fixed `layout` ("Timestamp,Offset,Size,..."): its fields
  /// into `f`. False for a header line (the first content line, its first field the layout's
  /// first name, any case); another number of fields than the layout names fails the line.
  bool csv_fields(std::string_view line, Fields& f, std::string_view layout) {
    const std::size_t n = split_delimited(line, ',', f);
    if (is_header(n, f, layout.substr(0, layout.find(',')))) return false;
    expect_fields(n, static_cast<std::size_t>(std::count(layout.begin(), layout.end(), ',')) + 1, layout);
    return true;
  }

  LineReader lines_;
  DeviceTable devices_;
  std::uint64_t content_lines_ = 0;  ///< non-blank, non-comment lines so far (1: maybe a header)

  ReadClock clock_;  ///< the row's clock or the user's time_unit (formats.hpp)

 private:
  const TraceFormatInfo& format_;
  std::int64_t first_ns_ = 0;
  bool have_first_ = false;
};

}  // namespace drivelab::trace::detail
