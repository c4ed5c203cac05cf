#pragma once
/// \file readers.hpp
/// drivelab::trace — streaming readers for real block-trace formats, and the factory that picks one
/// (docs/vdi.md, "Trace formats"). Every reader yields drivelab::trace::TraceIo (source.hpp):
/// time in ns relative to the trace's first request, offsets and sizes in bytes, a dense device
/// index. Memory is bounded by one line (text) or one record (binary) plus the device-name table
/// and, for the formats that need it, a small per-device state; never by the trace length.
///
/// Every clock is the trace's own: a timestamp's unit comes from the file (decimal seconds, the
/// native format), from the format's documented convention, or from the user (`time_unit`,
/// TraceReadOptions); never from a guess at what the numbers look like. TraceSource::clock() says
/// which.
///
/// Each format is ONE row, a TraceFormatInfo defined beside its reader (text_readers.cpp: the fio
/// iologs, blkparse, MQSim; csv_readers.cpp: MSR Cambridge, CloudPhysics CSV, SPC, Alibaba,
/// Tencent, SYSTOR '17; binary_readers.cpp: native, CloudPhysics vscsi), with its record layout,
/// units and sources; formats.cpp holds the one registration list (trace_formats()), in detection
/// order. Names, `--format` choices, messages, detection, CLI help and the fuzz targets all come
/// from that list (docs/contributing.md "Add a trace format"; the per-format table is in
/// docs/vdi.md).
///
/// Errors: a malformed line or record throws TraceFormatError ("file:line: reason"; for binary
/// formats "line" is the 1-based record number); an unreadable file throws EnvironmentError.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "drivelab/core/errors.hpp"
#include "drivelab/trace/source.hpp"

namespace drivelab::trace {

namespace detail {
class ByteInput;
struct DetectHead;
}  // namespace detail

struct TraceReadOptions;
struct TraceFormatInfo;

/// A format's own clock. It has no default: a TraceFormatInfo row without one does not compile
/// (a format missing from the old clock table read its timestamps as ns, silently).
struct FormatClock {
  /// Integer timestamps in a unit the file does not carry: `unit_ns` ns each (> 0), so
  /// TraceReadOptions::time_unit may replace it; the tick is one unit.
  static constexpr FormatClock bare(std::int64_t unit_ns, std::string_view unit, std::string_view origin) {
    return FormatClock(unit_ns, 0, unit, origin);
  }
  /// The file carries the unit (decimal seconds, native's header) or there are no timestamps:
  /// time_unit is refused; `tick_ns` is the finest step its timestamps resolve (>= 1).
  static constexpr FormatClock carried(std::int64_t tick_ns, std::string_view unit, std::string_view origin) {
    return FormatClock(0, tick_ns, unit, origin);
  }
  std::int64_t unit_ns;     ///< ns per timestamp unit; 0 when the file carries the unit
  std::int64_t tick_ns;     ///< for carried clocks: the resolution; 0 for bare ones (one unit)
  std::string_view unit;    ///< the unit as people say it ("us", "100 ns", "s (decimal)")
  std::string_view origin;  ///< where the unit is written down (docs/vdi.md)

 private:
  constexpr FormatClock(std::int64_t u, std::int64_t t, std::string_view n, std::string_view o)
      : unit_ns(u), tick_ns(t), unit(n), origin(o) {}
};

/// One trace format: everything the rest of drivelab knows about it. Defined beside its reader
/// and registered once in formats.cpp (trace_formats()); every field is required except
/// `old_name`, `options` and `seed_file`. tests/unit/trace/format_rows_test.cpp checks each row
/// (a name, words, a detection rule that recognises `sample` and no other rule does, a reader
/// that reads `sample`).
struct TraceFormatInfo {
  std::string_view name;     ///< canonical, dashed: `format:` / `--format` ("msr-cambridge")
  std::string_view summary;  ///< words for help and `drivelab trace formats` (layout, source)
  FormatClock clock;         ///< the format's own clock (required: no default)
  /// The detection rule: true when the head (first bytes, first significant line) is this
  /// format. Rules are tried in registration order; the first that matches wins.
  bool (*detect)(const detail::DetectHead& head);
  /// A head this format's rule must recognise and no other rule may (format_rows_test): a few
  /// lines of a real trace, or bytes of a record for the binary formats.
  std::string_view sample;
  /// The reader: a TraceSource over `input` (name for messages; options as given).
  std::unique_ptr<TraceSource> (*open)(std::unique_ptr<detail::ByteInput> input, const std::filesystem::path& name,
                                       const TraceReadOptions& options);
  std::string_view old_name = {};  ///< an old name still accepted, never printed ("umass")
  /// The TraceReadOptions it reads besides time_unit, as `--option`s ("--blkparse-event").
  std::string_view options = {};
  /// A sample file in tests/data/traces (fuzz seed, reader tests); empty when there is none.
  std::string_view seed_file = {};
};

/// A trace format: one registered row, or `automatic` (detect_trace_format). Compares by row.
class TraceFormat {
 public:
  static const TraceFormat automatic;  ///< detect the format from the file's content
  constexpr TraceFormat() = default;   ///< automatic
  constexpr explicit TraceFormat(const TraceFormatInfo& row) : row_(&row) {}
  [[nodiscard]] constexpr bool is_automatic() const noexcept { return row_ == nullptr; }
  /// The row; nullptr for automatic.
  [[nodiscard]] constexpr const TraceFormatInfo* row() const noexcept { return row_; }
  friend constexpr bool operator==(TraceFormat, TraceFormat) = default;

 private:
  const TraceFormatInfo* row_ = nullptr;
};
inline constexpr TraceFormat TraceFormat::automatic{};

/// Every registered format, in detection order (formats.cpp: the registration list).
[[nodiscard]] std::span<const TraceFormatInfo* const> trace_formats() noexcept;

/// "auto" or a row's name (underscores accepted too), or a row's old_name ("umass", the name of
/// `mqsim` before the 5-column form was recognised as MQSim's, so protocols that name it keep
/// working). Throws ConfigError naming the accepted values on anything else.
[[nodiscard]] TraceFormat parse_trace_format(std::string_view name);
/// The canonical (dashed) name parse_trace_format accepts; "auto" for automatic.
[[nodiscard]] std::string_view to_string(TraceFormat format);
/// "auto, fio-iolog-v2, ..., native": the accepted names, for help and messages.
[[nodiscard]] std::string trace_format_choices();

/// A unit for timestamps whose unit the file does not carry (`--time-unit`, protocol `time_unit`).
enum class TimeUnit { ps, ns, us, ms, s };
/// "ps", "ns", "us" (or "µs"), "ms", "s"; MQSim's PICOSECOND, NANOSECOND, MICROSECOND (any case).
/// Throws ConfigError naming the accepted values on anything else.
[[nodiscard]] TimeUnit parse_time_unit(std::string_view name);
/// "ps", "ns", "us", "ms" or "s".
[[nodiscard]] std::string_view to_string(TimeUnit unit);
/// True for the formats whose timestamps are bare numbers in a unit the file does not carry
/// (FormatClock::bare), so TraceReadOptions::time_unit applies; false for carried clocks and auto.
[[nodiscard]] bool takes_time_unit(TraceFormat format) noexcept;

/// The names of the formats takes_time_unit() is true for, "fio-iolog-v3, msr-cambridge, ...".
[[nodiscard]] std::string time_unit_format_names();

/// How fio iolog v2 `wait N` lines are read (the fio-iolog-v2 row, text_readers.cpp).
enum class FioWait {
  absolute_ms,  ///< fio 3.33's behaviour (the default): until N ms after the start
  relative_us   ///< the HOWTO's text: N µs after the previous wait; N below 100 is discarded
};
/// "absolute-ms" or "relative-us" (underscores accepted); ConfigError otherwise.
[[nodiscard]] FioWait parse_fio_wait(std::string_view name);
[[nodiscard]] std::string_view to_string(FioWait wait);

/// Which blkparse event is read as "the request": queued (Q, what the application asked for) or
/// dispatched to the driver (D, after merging and scheduling).
enum class BlkparseEvent { queue, dispatch };

/// Reader options; the defaults read every format by its own convention.
struct TraceReadOptions {
  BlkparseEvent blkparse_event = BlkparseEvent::queue;  ///< blkparse only
  /// The unit of the trace's timestamps instead of the format's own; only for the formats
  /// takes_time_unit() names (open_trace throws ConfigError for the others).
  std::optional<TimeUnit> time_unit;
  FioWait fio_wait = FioWait::absolute_ms;  ///< fio-iolog-v2 only
};

/// A malformed trace: what() is "file:line: reason" (line is the 1-based record for binary formats).
class TraceFormatError : public Error {
 public:
  TraceFormatError(const std::filesystem::path& file, std::uint64_t line, const std::string& reason);
  [[nodiscard]] const std::filesystem::path& file() const noexcept { return file_; }
  [[nodiscard]] std::uint64_t line() const noexcept { return line_; }

 private:
  std::filesystem::path file_;
  std::uint64_t line_;
};

/// Detects the format from the first 4 KiB of `file` and its first non-blank, non-comment line:
/// the rows' detection rules in registration order (trace_formats()), the first that matches.
/// Throws TraceFormatError (line 1) when no rule matches, EnvironmentError when unreadable.
[[nodiscard]] TraceFormat detect_trace_format(const std::filesystem::path& file);

/// "a directory", "a character device", "a block device" or "a socket": the kind of file (its
/// st_mode) open_trace refuses with ConfigError before opening it (/dev/zero would never end);
/// empty for a regular file or a pipe (FIFO).
[[nodiscard]] std::string_view refused_file_kind(unsigned mode) noexcept;

/// Opens `file` as a streaming TraceSource in `format` (automatic: detect_trace_format).
/// Throws EnvironmentError if the file cannot be opened, TraceFormatError for a bad header,
/// ConfigError if options.time_unit is given for a format that carries its own (takes_time_unit);
/// malformed records throw TraceFormatError from TraceSource::next().
[[nodiscard]] std::unique_ptr<TraceSource> open_trace(const std::filesystem::path& file,
                                                      TraceFormat format = TraceFormat::automatic,
                                                      const TraceReadOptions& options = {});

}  // namespace drivelab::trace
