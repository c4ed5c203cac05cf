// The comma-separated trace readers: MSR Cambridge, CloudPhysics vSCSI CSV, SPC, Alibaba, Tencent
// CBS and the SYSTOR '17 VDI traces. Units and sources per format: readers.hpp and docs/vdi.md.
#include <fmt/format.h>

#include "text_readers.hpp"
#include "text_source.hpp"

namespace drivelab::trace::detail {
namespace {

// ---- MSR Cambridge -----------------------------------------------------------------------------
class MsrSource final : public TextTraceSource {
 public:
  MsrSource(std::unique_ptr<ByteInput> input, const std::filesystem::path& name, const TraceReadOptions& options)
      : TextTraceSource(std::move(input), name, TraceFormat::msr_cambridge, options) {}

 private:
  bool parse(std::string_view line, TraceIo& io) override {
    Fields f;
    const std::size_t n = split_delimited(line, ',', f);
    if (is_header(n, f, "Timestamp")) return false;
    expect_fields(n, 7, "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime");
    io.op = read_or_write(lines_, f[3], "Read", "Write", "Type");
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
    const std::int64_t magnitude_ns = stamp_ns(later ? ticks - first_tick_ : first_tick_ - ticks, "Timestamp");
    set_time(io, later ? magnitude_ns : -magnitude_ns);
    return true;
  }

  std::uint64_t first_tick_ = 0;
  bool have_first_tick_ = false;
};

// ---- CloudPhysics vSCSI CSV --------------------------------------------------------------------
class CloudPhysicsCsvSource final : public TextTraceSource {
 public:
  CloudPhysicsCsvSource(std::unique_ptr<ByteInput> input, const std::filesystem::path& name,
                        const TraceReadOptions& options)
      : TextTraceSource(std::move(input), name, TraceFormat::cloudphysics_csv, options) {}

 private:
  bool parse(std::string_view line, TraceIo& io) override {
    Fields f;
    const std::size_t n = split_delimited(line, ',', f);
    if (is_header(n, f, "version")) return false;
    expect_fields(n, 5, "version,time,op,size,lbn");
    (void)parse_u64(lines_, f[0], "version");
    const std::uint64_t opcode = parse_u64(lines_, f[2], "op", 16);
    if (opcode > 0xff) lines_.fail(fmt::format("op: SCSI opcode {} is more than one byte", f[2]));
    if (!scsi_opcode_op(opcode, io.op)) return false;  // TEST UNIT READY, INQUIRY, ...: no data
    io.size_bytes = parse_u32(lines_, f[3], "size");
    io.offset_bytes = checked_mul(lines_, parse_u64(lines_, f[4], "lbn"), kSectorBytes, "lbn");
    io.device = device("0");
    set_time(io, stamp_ns(parse_u64(lines_, f[1], "time"), "time"));
    return true;
  }
};

// ---- SPC (UMass Trace Repository) ---------------------------------------------------------------
// ASU,LBA,SIZE_BYTES,OPCODE(r|w),SECONDS[,...]: SPC files may carry trailing fields after the
// timestamp; the first five are defined.
class SpcSource final : public TextTraceSource {
 public:
  SpcSource(std::unique_ptr<ByteInput> input, const std::filesystem::path& name, const TraceReadOptions& options)
      : TextTraceSource(std::move(input), name, TraceFormat::spc, options, 1000) {}

 private:
  bool parse(std::string_view line, TraceIo& io) override {
    Fields f;
    const std::size_t n = split_delimited(line, ',', f);
    if (n < 5 || n > kMaxFields) {
      lines_.fail(fmt::format("expected ASU,LBA,SIZE,OPCODE,TIMESTAMP, got {} fields",
                              n > kMaxFields ? std::string("more") : std::to_string(n)));
    }
    io.op = read_or_write(lines_, f[3], "r", "w", "OPCODE");
    io.device = numeric_device(f[0], "ASU");
    io.offset_bytes = checked_mul(lines_, parse_u64(lines_, f[1], "LBA"), kSectorBytes, "LBA");
    io.size_bytes = parse_u32(lines_, f[2], "SIZE");
    set_time(io, parse_seconds_ns(lines_, f[4], "TIMESTAMP"));
    return true;
  }
};

// ---- Alibaba ------------------------------------------------------------------------------------
class AlibabaSource final : public TextTraceSource {
 public:
  AlibabaSource(std::unique_ptr<ByteInput> input, const std::filesystem::path& name, const TraceReadOptions& options)
      : TextTraceSource(std::move(input), name, TraceFormat::alibaba, options) {}

 private:
  bool parse(std::string_view line, TraceIo& io) override {
    Fields f;
    const std::size_t n = split_delimited(line, ',', f);
    if (is_header(n, f, "device_id")) return false;
    expect_fields(n, 5, "device_id,opcode,offset,length,timestamp");
    io.op = read_or_write(lines_, f[1], "R", "W", "opcode");
    io.device = numeric_device(f[0], "device_id");
    io.offset_bytes = parse_u64(lines_, f[2], "offset");
    io.size_bytes = parse_u32(lines_, f[3], "length");
    set_time(io, stamp_ns(parse_u64(lines_, f[4], "timestamp"), "timestamp"));
    return true;
  }
};

// ---- Tencent CBS --------------------------------------------------------------------------------
class TencentSource final : public TextTraceSource {
 public:
  TencentSource(std::unique_ptr<ByteInput> input, const std::filesystem::path& name, const TraceReadOptions& options)
      : TextTraceSource(std::move(input), name, TraceFormat::tencent, options) {}

 private:
  bool parse(std::string_view line, TraceIo& io) override {
    Fields f;
    const std::size_t n = split_delimited(line, ',', f);
    if (is_header(n, f, "Timestamp")) return false;
    expect_fields(n, 5, "Timestamp,Offset,Size,IOType,VolumeID");
    const std::uint64_t type = parse_u64(lines_, f[3], "IOType");
    if (type == 0) {
      io.op = TraceOp::read;
    } else if (type == 1) {
      io.op = TraceOp::write;
    } else {
      lines_.fail(fmt::format("IOType: expected 0 (read) or 1 (write), got {}", type));
    }
    io.device = numeric_device(f[4], "VolumeID");
    io.offset_bytes = checked_mul(lines_, parse_u64(lines_, f[1], "Offset"), kSectorBytes, "Offset");
    io.size_bytes = size_in_bytes(lines_, parse_u64(lines_, f[2], "Size"), kSectorBytes, "Size");
    set_time(io, stamp_ns(parse_u64(lines_, f[0], "Timestamp"), "Timestamp"));
    return true;
  }
};

// ---- SYSTOR '17 enterprise VDI ------------------------------------------------------------------
// Timestamp,Response,IOType,LUN,Offset,Size: Unix seconds with a 9-digit fraction accurate to the
// µs, the response time, R|W or blank ("no response message": the request's kind is unknown, so
// it is skipped), the LUN index, bytes, bytes (the distribution's README.txt).
class Systor17Source final : public TextTraceSource {
 public:
  Systor17Source(std::unique_ptr<ByteInput> input, const std::filesystem::path& name, const TraceReadOptions& options)
      : TextTraceSource(std::move(input), name, TraceFormat::systor17, options, 1000) {}

 private:
  bool parse(std::string_view line, TraceIo& io) override {
    Fields f;
    const std::size_t n = split_delimited(line, ',', f);
    if (is_header(n, f, "Timestamp")) return false;
    expect_fields(n, 6, "Timestamp,Response,IOType,LUN,Offset,Size");
    const std::int64_t absolute_ns = parse_seconds_ns(lines_, f[0], "Timestamp");
    if (!f[1].empty()) (void)parse_seconds_ns(lines_, f[1], "Response");
    (void)parse_u64(lines_, f[3], "LUN");
    io.offset_bytes = parse_u64(lines_, f[4], "Offset");
    io.size_bytes = parse_u32(lines_, f[5], "Size");
    if (f[2].empty()) return false;  // no response message: read or write is unknown
    io.op = read_or_write(lines_, f[2], "R", "W", "IOType (or blank)");
    io.device = device(f[3]);
    set_time(io, absolute_ns);
    return true;
  }
};

}  // namespace

std::unique_ptr<TraceSource> make_csv_reader(std::unique_ptr<ByteInput> input, const std::filesystem::path& name,
                                             TraceFormat format, const TraceReadOptions& options) {
  switch (format) {
    case TraceFormat::msr_cambridge: return std::make_unique<MsrSource>(std::move(input), name, options);
    case TraceFormat::cloudphysics_csv: return std::make_unique<CloudPhysicsCsvSource>(std::move(input), name, options);
    case TraceFormat::spc: return std::make_unique<SpcSource>(std::move(input), name, options);
    case TraceFormat::alibaba: return std::make_unique<AlibabaSource>(std::move(input), name, options);
    case TraceFormat::tencent: return std::make_unique<TencentSource>(std::move(input), name, options);
    case TraceFormat::systor17: return std::make_unique<Systor17Source>(std::move(input), name, options);
    default: throw InternalError(fmt::format("{} is not a text trace format", to_string(format)));
  }
}

}  // namespace drivelab::trace::detail
