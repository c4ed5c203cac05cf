// The text trace readers. Units and sources per format: readers.hpp and docs/vdi.md.
#include "text_readers.hpp"

#include <fmt/format.h>

#include "parse.hpp"

namespace drivelab::trace::detail {

// SBC-3 opcodes: READ(6/10/12/16), WRITE(6/10/12/16), SYNCHRONIZE CACHE(10/16), UNMAP, WRITE SAME(16).
bool scsi_opcode_op(std::uint64_t opcode, TraceOp& op) {
  switch (opcode) {
    case 0x08: case 0x28: case 0xa8: case 0x88: op = TraceOp::read; return true;
    case 0x0a: case 0x2a: case 0xaa: case 0x8a: op = TraceOp::write; return true;
    case 0x35: case 0x91: op = TraceOp::flush; return true;
    case 0x42: case 0x93: op = TraceOp::discard; return true;
    default: return false;
  }
}

namespace {

constexpr std::uint64_t kSectorBytes = 512;

/// Shared state of a text reader: the line reader, the device table, and the first timestamp
/// (TraceIo::time_ns is relative to it).
class TextTraceSource : public TraceSource {
 public:
  TextTraceSource(std::unique_ptr<ByteInput> input, const std::filesystem::path& name,
                  TraceFormat format, std::int64_t tick_ns)
      : lines_(std::move(input), name), format_(format), tick_ns_(tick_ns) {}

  bool next(TraceIo& io) final {
    std::string_view line;
    while (lines_.next(line)) {
      if (is_blank_or_comment(line)) continue;
      ++content_lines_;
      io.flags = 0;
      if (parse(line, io)) return true;
    }
    return false;
  }
  [[nodiscard]] const std::vector<std::string>& devices() const final { return devices_.names(); }
  [[nodiscard]] std::int64_t tick_ns() const final { return tick_ns_; }
  [[nodiscard]] std::string describe() const final {
    return fmt::format("{} ({})", lines_.name().filename().string(), to_string(format_));
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
  /// Sets io.time_ns from an absolute timestamp in ns.
  void set_time(TraceIo& io, std::int64_t absolute_ns) {
    if (!have_first_) {
      first_ns_ = absolute_ns;
      have_first_ = true;
    }
    io.time_ns = absolute_ns - first_ns_;
  }
  std::size_t expect_fields(std::size_t count, std::size_t expected, std::string_view layout) {
    if (count != expected) {
      lines_.fail(fmt::format("expected {} fields ({}), got {}", expected, layout,
                              count > kMaxFields ? std::string("more") : std::to_string(count)));
    }
    return count;
  }

  LineReader lines_;
  DeviceTable devices_;
  std::uint64_t content_lines_ = 0;  ///< non-blank, non-comment lines so far (1: maybe a header)

 private:
  TraceFormat format_;
  std::int64_t tick_ns_;
  std::int64_t first_ns_ = 0;
  bool have_first_ = false;
};

// ---- fio iolog v2 / v3 -------------------------------------------------------------------------
// v2: FILE ACTION [OFFSET LEN]; `wait` advances the clock by OFFSET µs (fio HOWTO "Trace file
// format v2"). v3: TIME FILE ACTION [OFFSET LEN], TIME in µs since the start (fio 3.33 replays a
// gap of 100000 as 100 ms; the HOWTO leaves the unit unstated), `wait` not allowed.
class FioIologSource final : public TextTraceSource {
 public:
  FioIologSource(std::unique_ptr<ByteInput> input, const std::filesystem::path& name, int version)
      : TextTraceSource(std::move(input), name,
                        version == 2 ? TraceFormat::fio_iolog_v2 : TraceFormat::fio_iolog_v3, 1000),
        version_(version) {}

 private:
  bool parse(std::string_view line, TraceIo& io) override {
    if (!header_seen_) {
      const std::string expected = fmt::format("fio version {} iolog", version_);
      if (trim(line) != expected) lines_.fail(fmt::format("expected the header '{}'", expected));
      header_seen_ = true;
      return false;
    }
    Fields f;
    const std::size_t n = split_whitespace(line, f);
    std::size_t i = 0;
    std::int64_t time_us = clock_us_;
    if (version_ == 3) {
      if (n < 3) lines_.fail("expected TIME FILE ACTION [OFFSET LENGTH]");
      time_us = static_cast<std::int64_t>(
          ticks_to_ns(lines_, parse_u64(lines_, f[0], "timestamp"), 1, "timestamp"));
      i = 1;
    } else if (n < 2) {
      lines_.fail("expected FILE ACTION [OFFSET LENGTH]");
    }
    const std::string_view file = f[i];
    const std::string_view action = f[i + 1];
    const std::size_t rest = n - i - 2;
    if (action == "add" || action == "open" || action == "close") {
      if (rest != 0) lines_.fail(fmt::format("'{}' takes no offset or length", action));
      if (action == "add") (void)device(file);
      return false;
    }
    if (action == "wait") {
      if (version_ == 3) lines_.fail("'wait' is not allowed in iolog version 3");
      if (rest < 1) lines_.fail("'wait' needs a delay in microseconds");
      const std::uint64_t delay_us = parse_u64(lines_, f[i + 2], "wait delay");
      if (delay_us > static_cast<std::uint64_t>(kMaxClockUs - clock_us_)) lines_.fail("wait: clock out of range");
      clock_us_ += static_cast<std::int64_t>(delay_us);
      return false;
    }
    if (action == "sync" || action == "datasync") {
      io.op = TraceOp::flush;
      io.offset_bytes = 0;
      io.size_bytes = 0;
      if (rest != 0 && rest != 2) lines_.fail(fmt::format("'{}' takes no or both of OFFSET LENGTH", action));
    } else {
      if (action == "read") {
        io.op = TraceOp::read;
      } else if (action == "write") {
        io.op = TraceOp::write;
      } else if (action == "trim") {
        io.op = TraceOp::discard;
      } else {
        lines_.fail(fmt::format("unknown action '{}' (add, open, close, read, write, sync, datasync, trim{})",
                                action.substr(0, 32), version_ == 2 ? ", wait" : ""));
      }
      if (rest != 2) lines_.fail(fmt::format("'{}' needs OFFSET LENGTH in bytes", action));
      io.offset_bytes = parse_u64(lines_, f[i + 2], "offset");
      io.size_bytes = parse_u32(lines_, f[i + 3], "length");
    }
    if (time_us > kMaxClockUs) lines_.fail("timestamp out of range");
    io.device = device(file);
    set_time(io, time_us * 1000);
    return true;
  }

  static constexpr std::int64_t kMaxClockUs = std::numeric_limits<std::int64_t>::max() / 1000;
  int version_;
  bool header_seen_ = false;
  std::int64_t clock_us_ = 0;
};

// ---- blkparse ----------------------------------------------------------------------------------
// Default output: MAJ,MIN CPU SEQ SECONDS.NANOS PID ACTION RWBS [SECTOR + NSECTORS] [PROC]
// (blkparse(1) "OUTPUT DESCRIPTION AND FORMATTING"). Lines whose first field is not MAJ,MIN
// (the per-CPU and total summaries) are skipped, as are events other than the selected one.
class BlkparseSource final : public TextTraceSource {
 public:
  BlkparseSource(std::unique_ptr<ByteInput> input, const std::filesystem::path& name, BlkparseEvent event)
      : TextTraceSource(std::move(input), name, TraceFormat::blkparse, 1),
        action_(event == BlkparseEvent::queue ? "Q" : "D") {}

  static bool is_device_field(std::string_view field) {
    const std::size_t comma = field.find(',');
    if (comma == std::string_view::npos || comma == 0 || comma + 1 == field.size()) return false;
    for (std::size_t i = 0; i < field.size(); ++i) {
      if (i != comma && (field[i] < '0' || field[i] > '9')) return false;
    }
    return true;
  }

 private:
  bool parse(std::string_view line, TraceIo& io) override {
    Fields f;
    const std::size_t n = split_whitespace(line, f);
    if (n == 0 || !is_device_field(f[0])) return false;
    if (n < 7) lines_.fail("expected MAJ,MIN CPU SEQ TIME PID ACTION RWBS ...");
    if (f[5] != action_) return false;
    const std::string_view rwbs = f[6];
    std::uint64_t sector = 0, sectors = 0;
    if (n >= 10 && f[8] == "+") {
      sector = parse_u64(lines_, f[7], "sector");
      sectors = parse_u64(lines_, f[9], "sector count");
    }
    if (!request_op(rwbs, sectors, io)) return false;
    io.offset_bytes = checked_mul(lines_, sector, kSectorBytes, "sector");
    io.size_bytes = size_in_bytes(lines_, sectors, kSectorBytes, "sector count");
    io.device = device(f[0]);
    set_time(io, parse_seconds_ns(lines_, f[3], "time"));
    return true;
  }

  /// RWBS as blkparse_fmt.c fill_rwbs() writes it, [F]{D|W|R|N}[F][A][S][M] (a leading F: preflush;
  /// an F after the op letter: FUA), and as the kernel's blk_fill_rwbs() does ("F" alone, a flush
  /// request; "DE", secure erase). False for requests without data and without a flush.
  static bool request_op(std::string_view rwbs, std::uint64_t sectors, TraceIo& io) {
    const auto is_op_letter = [](char c) { return c == 'D' || c == 'W' || c == 'R' || c == 'N' || c == 'F'; };
    std::size_t i = 0;
    const bool preflush = !rwbs.empty() && rwbs[0] == 'F' && (rwbs.size() == 1 || is_op_letter(rwbs[1]));
    if (preflush) i = 1;
    const char op = i < rwbs.size() ? rwbs[i++] : 'N';
    if (op == 'D' && i < rwbs.size() && rwbs[i] == 'E') ++i;  // secure erase
    const bool fua = i < rwbs.size() && rwbs[i] == 'F';
    io.flags = static_cast<std::uint8_t>((preflush ? TraceIo::kPreflush : 0) | (fua ? TraceIo::kFua : 0));
    if (op == 'D') {
      io.op = TraceOp::discard;
    } else if (op == 'F' || (sectors == 0 && (preflush || op == 'W'))) {
      io.op = TraceOp::flush;  // a preflush without data ("FWS", "FN") or an empty write barrier
      io.flags &= static_cast<std::uint8_t>(~TraceIo::kPreflush);  // the request is the flush
    } else if (op == 'W') {
      io.op = TraceOp::write;
    } else if (op == 'R') {
      io.op = TraceOp::read;
    } else {
      return false;  // 'N' (no data, no flush) and zone management requests
    }
    return true;
  }

  std::string_view action_;
};

// ---- MSR Cambridge -----------------------------------------------------------------------------
class MsrSource final : public TextTraceSource {
 public:
  MsrSource(std::unique_ptr<ByteInput> input, const std::filesystem::path& name)
      : TextTraceSource(std::move(input), name, TraceFormat::msr_cambridge, 100) {}

 private:
  bool parse(std::string_view line, TraceIo& io) override {
    Fields f;
    const std::size_t n = split_delimited(line, ',', f);
    if (content_lines_ == 1 && n >= 1 && iequals(f[0], "Timestamp")) return false;  // header
    expect_fields(n, 7, "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime");
    if (iequals(f[3], "Read")) {
      io.op = TraceOp::read;
    } else if (iequals(f[3], "Write")) {
      io.op = TraceOp::write;
    } else {
      lines_.fail(fmt::format("Type: expected Read or Write, got '{}'", f[3].substr(0, 32)));
    }
    (void)parse_u64(lines_, f[2], "DiskNumber");
    io.offset_bytes = parse_u64(lines_, f[4], "Offset");
    io.size_bytes = parse_u32(lines_, f[5], "Size");
    (void)parse_u64(lines_, f[6], "ResponseTime");
    if (f[1].empty()) lines_.fail("Hostname is empty");
    io.device = device(fmt::format("{},{}", f[1], f[2]));
    // FILETIME counts from 1601: today's values (~1.3e17 ticks) overflow int64 ns, so the time is
    // taken relative to the first request in ticks before scaling.
    const std::uint64_t ticks = parse_u64(lines_, f[0], "Timestamp");
    if (!have_first_tick_) {
      first_tick_ = ticks;
      have_first_tick_ = true;
    }
    const bool later = ticks >= first_tick_;
    const std::int64_t magnitude_ns =
        ticks_to_ns(lines_, later ? ticks - first_tick_ : first_tick_ - ticks, 100, "Timestamp");
    const std::int64_t ns = later ? magnitude_ns : -magnitude_ns;
    set_time(io, ns);
    return true;
  }

  std::uint64_t first_tick_ = 0;
  bool have_first_tick_ = false;
};

// ---- CloudPhysics vSCSI CSV --------------------------------------------------------------------
class CloudPhysicsCsvSource final : public TextTraceSource {
 public:
  CloudPhysicsCsvSource(std::unique_ptr<ByteInput> input, const std::filesystem::path& name)
      : TextTraceSource(std::move(input), name, TraceFormat::cloudphysics_csv, 1'000'000'000) {}

 private:
  bool parse(std::string_view line, TraceIo& io) override {
    Fields f;
    const std::size_t n = split_delimited(line, ',', f);
    if (content_lines_ == 1 && n >= 1 && iequals(f[0], "version")) return false;  // header
    expect_fields(n, 5, "version,time,op,size,lbn");
    (void)parse_u64(lines_, f[0], "version");
    const std::uint64_t opcode = parse_u64(lines_, f[2], "op", 16);
    if (opcode > 0xff) lines_.fail(fmt::format("op: SCSI opcode {} is more than one byte", f[2]));
    if (!scsi_opcode_op(opcode, io.op)) return false;  // TEST UNIT READY, INQUIRY, ...: no data
    io.size_bytes = parse_u32(lines_, f[3], "size");
    io.offset_bytes = checked_mul(lines_, parse_u64(lines_, f[4], "lbn"), kSectorBytes, "lbn");
    io.device = device("0");
    set_time(io, ticks_to_ns(lines_, parse_u64(lines_, f[1], "time"), 1'000'000'000, "time"));
    return true;
  }
};

// ---- UMass --------------------------------------------------------------------------------------
// Whitespace form (DiskSim ASCII): ARRIVAL_US DEVICE LBA SIZE_SECTORS FLAG (1 read, 0 write).
// Comma form (SPC, the UMass repository's own files): ASU,LBA,SIZE_BYTES,OPCODE(r|w),SECONDS.
class UmassSource final : public TextTraceSource {
 public:
  UmassSource(std::unique_ptr<ByteInput> input, const std::filesystem::path& name)
      : TextTraceSource(std::move(input), name, TraceFormat::umass, 1'000'000) {}

 private:
  bool parse(std::string_view line, TraceIo& io) override {
    Fields f;
    if (line.find(',') != std::string_view::npos) {
      const std::size_t n = split_delimited(line, ',', f);
      // SPC files may carry trailing fields after the timestamp; the first five are defined.
      if (n < 5 || n > kMaxFields) lines_.fail(fmt::format("expected ASU,LBA,SIZE,OPCODE,TIMESTAMP, got {} fields", n > kMaxFields ? std::string("more") : std::to_string(n)));
      if (iequals(f[3], "r")) {
        io.op = TraceOp::read;
      } else if (iequals(f[3], "w")) {
        io.op = TraceOp::write;
      } else {
        lines_.fail(fmt::format("OPCODE: expected r or w, got '{}'", f[3].substr(0, 32)));
      }
      (void)parse_u64(lines_, f[0], "ASU");
      io.device = device(f[0]);
      io.offset_bytes = checked_mul(lines_, parse_u64(lines_, f[1], "LBA"), kSectorBytes, "LBA");
      io.size_bytes = parse_u32(lines_, f[2], "SIZE");
      set_time(io, parse_seconds_ns(lines_, f[4], "TIMESTAMP"));
      return true;
    }
    const std::size_t n = split_whitespace(line, f);
    expect_fields(n, 5, "ARRIVAL DEVICE LBA SIZE TYPE");
    const std::uint64_t flag = parse_u64(lines_, f[4], "TYPE");
    if (flag == 1) {
      io.op = TraceOp::read;
    } else if (flag == 0) {
      io.op = TraceOp::write;
    } else {
      lines_.fail(fmt::format("TYPE: expected 1 (read) or 0 (write), got {}", flag));
    }
    (void)parse_u64(lines_, f[1], "DEVICE");
    io.device = device(f[1]);
    io.offset_bytes = checked_mul(lines_, parse_u64(lines_, f[2], "LBA"), kSectorBytes, "LBA");
    io.size_bytes = size_in_bytes(lines_, parse_u64(lines_, f[3], "SIZE"), kSectorBytes, "SIZE");
    set_time(io, ticks_to_ns(lines_, parse_u64(lines_, f[0], "ARRIVAL"), 1000, "ARRIVAL"));
    return true;
  }
};

// ---- Alibaba ------------------------------------------------------------------------------------
class AlibabaSource final : public TextTraceSource {
 public:
  AlibabaSource(std::unique_ptr<ByteInput> input, const std::filesystem::path& name)
      : TextTraceSource(std::move(input), name, TraceFormat::alibaba, 1000) {}

 private:
  bool parse(std::string_view line, TraceIo& io) override {
    Fields f;
    const std::size_t n = split_delimited(line, ',', f);
    if (content_lines_ == 1 && n >= 1 && iequals(f[0], "device_id")) return false;  // header
    expect_fields(n, 5, "device_id,opcode,offset,length,timestamp");
    if (f[1] == "R" || f[1] == "r") {
      io.op = TraceOp::read;
    } else if (f[1] == "W" || f[1] == "w") {
      io.op = TraceOp::write;
    } else {
      lines_.fail(fmt::format("opcode: expected R or W, got '{}'", f[1].substr(0, 32)));
    }
    (void)parse_u64(lines_, f[0], "device_id");
    io.device = device(f[0]);
    io.offset_bytes = parse_u64(lines_, f[2], "offset");
    io.size_bytes = parse_u32(lines_, f[3], "length");
    set_time(io, ticks_to_ns(lines_, parse_u64(lines_, f[4], "timestamp"), 1000, "timestamp"));
    return true;
  }
};

// ---- Tencent CBS --------------------------------------------------------------------------------
class TencentSource final : public TextTraceSource {
 public:
  TencentSource(std::unique_ptr<ByteInput> input, const std::filesystem::path& name)
      : TextTraceSource(std::move(input), name, TraceFormat::tencent, 1'000'000'000) {}

 private:
  bool parse(std::string_view line, TraceIo& io) override {
    Fields f;
    const std::size_t n = split_delimited(line, ',', f);
    if (content_lines_ == 1 && n >= 1 && iequals(f[0], "Timestamp")) return false;  // header
    expect_fields(n, 5, "Timestamp,Offset,Size,IOType,VolumeID");
    const std::uint64_t type = parse_u64(lines_, f[3], "IOType");
    if (type == 0) {
      io.op = TraceOp::read;
    } else if (type == 1) {
      io.op = TraceOp::write;
    } else {
      lines_.fail(fmt::format("IOType: expected 0 (read) or 1 (write), got {}", type));
    }
    (void)parse_u64(lines_, f[4], "VolumeID");
    io.device = device(f[4]);
    io.offset_bytes = checked_mul(lines_, parse_u64(lines_, f[1], "Offset"), kSectorBytes, "Offset");
    io.size_bytes = size_in_bytes(lines_, parse_u64(lines_, f[2], "Size"), kSectorBytes, "Size");
    set_time(io, ticks_to_ns(lines_, parse_u64(lines_, f[0], "Timestamp"), 1'000'000'000, "Timestamp"));
    return true;
  }
};

}  // namespace

bool is_blkparse_device_field(std::string_view field) { return BlkparseSource::is_device_field(field); }

std::unique_ptr<TraceSource> make_text_reader(std::unique_ptr<ByteInput> input,
                                              const std::filesystem::path& name, TraceFormat format,
                                              const TraceReadOptions& options) {
  switch (format) {
    case TraceFormat::fio_iolog_v2: return std::make_unique<FioIologSource>(std::move(input), name, 2);
    case TraceFormat::fio_iolog_v3: return std::make_unique<FioIologSource>(std::move(input), name, 3);
    case TraceFormat::blkparse:
      return std::make_unique<BlkparseSource>(std::move(input), name, options.blkparse_event);
    case TraceFormat::msr_cambridge: return std::make_unique<MsrSource>(std::move(input), name);
    case TraceFormat::cloudphysics_csv: return std::make_unique<CloudPhysicsCsvSource>(std::move(input), name);
    case TraceFormat::umass: return std::make_unique<UmassSource>(std::move(input), name);
    case TraceFormat::alibaba: return std::make_unique<AlibabaSource>(std::move(input), name);
    case TraceFormat::tencent: return std::make_unique<TencentSource>(std::move(input), name);
    default: throw InternalError(fmt::format("{} is not a text trace format", to_string(format)));
  }
}

}  // namespace drivelab::trace::detail
