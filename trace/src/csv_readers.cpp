// The comma-separated trace readers: MSR Cambridge, CloudPhysics vSCSI CSV, SPC, Alibaba, Tencent
// CBS and the SYSTOR '17 VDI traces. Units and sources per format: readers.hpp and docs/vdi.md.
#include <charconv>

#include <fmt/format.h>

#include "formats.hpp"

#include "text_readers.hpp"
#include "text_source.hpp"

namespace drivelab::trace::detail {
namespace {

// ---- MSR Cambridge -----------------------------------------------------------------------------
class MsrSource final : public TextTraceSource {
 public:
  using TextTraceSource::TextTraceSource;

 private:
  bool parse(std::string_view line, TraceIo& io) override {
    Fields f;
    if (!csv_fields(line, f, "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime"))
      return false;  // the header line
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
  using TextTraceSource::TextTraceSource;

 private:
  bool parse(std::string_view line, TraceIo& io) override {
    Fields f;
    if (!csv_fields(line, f, "version,time,op,size,lbn")) return false;  // the header line
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
  using TextTraceSource::TextTraceSource;

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
  using TextTraceSource::TextTraceSource;

 private:
  bool parse(std::string_view line, TraceIo& io) override {
    Fields f;
    if (!csv_fields(line, f, "device_id,opcode,offset,length,timestamp")) return false;  // the header line
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
  using TextTraceSource::TextTraceSource;

 private:
  bool parse(std::string_view line, TraceIo& io) override {
    Fields f;
    if (!csv_fields(line, f, "Timestamp,Offset,Size,IOType,VolumeID")) return false;  // the header line
    io.op = op_flag(lines_, f[3], 0, 1, "IOType");
    io.device = numeric_device(f[4], "VolumeID");
    set_sectors(io, f[1], f[2], "Offset", "Size");
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
  using TextTraceSource::TextTraceSource;

 private:
  bool parse(std::string_view line, TraceIo& io) override {
    Fields f;
    if (!csv_fields(line, f, "Timestamp,Response,IOType,LUN,Offset,Size")) return false;  // the header line
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

bool is_read_or_write(std::string_view f) { return iequals(f, "R") || iequals(f, "W"); }

}  // namespace

// ---- The rows (readers.hpp TraceFormatInfo; registered in formats.cpp) ---------------------------
// The detection rules see the first significant line split on commas (DetectHead::csv); each
// names what tells its format from the other CSV formats (field count, header word, op field).
namespace rows {

// msr_cambridge: CSV `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`; Timestamp in
// Windows FILETIME ticks (100 ns since 1601), Type Read|Write, Offset and Size in bytes. Device =
// "Hostname,DiskNumber". Source: SNIA IOTTA trace 388 (MSR Cambridge) README, Narayanan et al.,
// FAST 2008.
extern const TraceFormatInfo msr_cambridge{
    .name = "msr-cambridge",
    .summary = "MSR Cambridge CSV: Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime (SNIA IOTTA 388)",
    .clock = FormatClock::bare(100, "100 ns", "the format's: Windows FILETIME ticks (SNIA IOTTA 388 README)"),
    .detect =
        [](const DetectHead& h) {
          const Fields& f = h.csv;
          return h.csv_count == 7 && (iequals(f[0], "Timestamp") || iequals(f[3], "Read") || iequals(f[3], "Write"));
        },
    .sample = "128166372003061629,mds,1,Write,3154152960,4096,2195\n",
    .open = open_as<MsrSource, msr_cambridge>,
    .seed_file = "msr_cambridge.csv",
};

// cloudphysics_csv: CSV `version,time,op,size,lbn` (header line optional); time in whole seconds by
// default (the shared sample spans exactly 7,200 consecutive values for 113,872 requests, which
// rules out µs), op the SCSI CDB opcode in hex (28/88/08/a8 READ(10/16/6/12), 2a/8a/0a/aa
// WRITE(10/16/6/12), 35/91 SYNCHRONIZE CACHE(10/16) = flush, 42 UNMAP / 93 WRITE SAME(16) =
// discard), size in bytes, lbn in 512-byte logical blocks. Source: SNIA IOTTA trace 7015
// (CloudPhysics), Waldspurger et al., FAST 2015; opcodes from SBC-3.
extern const TraceFormatInfo cloudphysics_csv{
    .name = "cloudphysics-csv",
    .summary = "CloudPhysics vSCSI CSV: version,time,op,size,lbn, op a SCSI opcode in hex (SNIA IOTTA 7015)",
    .clock = FormatClock::bare(1'000'000'000, "s",
                               "the format's default, worked out on the shared trace (docs/vdi.md: 7,200 values for "
                               "113,872 requests)"),
    .detect =
        [](const DetectHead& h) {
          const Fields& f = h.csv;
          if (h.csv_count != 5) return false;
          if (iequals(f[0], "version")) return true;
          // Not Alibaba's R|W in field 2, SPC's r|w or Tencent's 0|1 in field 4: a hex SCSI opcode.
          if (is_read_or_write(f[1]) || is_read_or_write(f[3]) || f[3] == "0" || f[3] == "1") return false;
          std::uint64_t opcode = 0;
          TraceOp op{};
          return is_unsigned(f[2], 16) &&
                 std::from_chars(f[2].data(), f[2].data() + f[2].size(), opcode, 16).ec == std::errc{} &&
                 opcode <= 0xff && scsi_opcode_op(opcode, op);
        },
    .sample = "version,time,op,size,lbn\n1,5633898,2a,512,42932745\n",
    .open = open_as<CloudPhysicsCsvSource, cloudphysics_csv>,
    .seed_file = "cloudphysics_small.csv",
};

// spc: the SPC trace format the UMass Trace Repository distributes, CSV
// `ASU,LBA,SIZE,OPCODE,TIMESTAMP[,...]`: LBA in 512-byte sectors, SIZE in bytes, OPCODE r|w,
// TIMESTAMP decimal seconds (the file carries the unit).
extern const TraceFormatInfo spc{
    .name = "spc",
    .summary = "SPC (UMass Trace Repository) CSV: ASU,LBA,SIZE,OPCODE,TIMESTAMP, TIMESTAMP in decimal s",
    .clock = FormatClock::carried(1000, "s (decimal)", "carried by the file: SPC decimal seconds"),
    .detect =
        [](const DetectHead& h) {
          const std::size_t n = h.csv_count;
          // Five fields with R|W in field 2 are Alibaba's (or, with R|W in field 4 too, nobody's).
          return n >= 5 && n <= kMaxFields && !(n == 5 && is_read_or_write(h.csv[1])) && is_read_or_write(h.csv[3]);
        },
    .sample = "0,20941264,8192,W,0.551706\n",
    .open = open_as<SpcSource, spc>,
    .seed_file = "spc.csv",
};

// alibaba: CSV `device_id,opcode,offset,length,timestamp`; opcode R|W, offset and length in bytes,
// timestamp in µs (Unix epoch). Source: alibaba/block-traces.
extern const TraceFormatInfo alibaba{
    .name = "alibaba",
    .summary = "Alibaba block traces CSV: device_id,opcode,offset,length,timestamp, timestamp in us",
    .clock = FormatClock::bare(1000, "us", "the format's (alibaba/block-traces README)"),
    .detect =
        [](const DetectHead& h) {
          const Fields& f = h.csv;
          return h.csv_count == 5 &&
                 (iequals(f[0], "device_id") || (is_read_or_write(f[1]) && !is_read_or_write(f[3])));
        },
    .sample = "419,W,8653361152,4096,1577808000000602\n",
    .open = open_as<AlibabaSource, alibaba>,
    .seed_file = "alibaba.csv",
};

// tencent: CSV `Timestamp,Offset,Size,IOType,VolumeID`; timestamp in s (Unix epoch, tick 1 s),
// offset and size in 512-byte sectors, IOType 0 read / 1 write. Source: SNIA IOTTA trace 27917
// (Tencent CBS), Zhang et al., ATC 2020.
extern const TraceFormatInfo tencent{
    .name = "tencent",
    .summary = "Tencent CBS CSV: Timestamp,Offset,Size,IOType,VolumeID, sectors, Timestamp in s (SNIA IOTTA 27917)",
    .clock = FormatClock::bare(1'000'000'000, "s", "the format's (SNIA IOTTA 27917 README)"),
    .detect =
        [](const DetectHead& h) {
          const Fields& f = h.csv;
          return h.csv_count == 5 &&
                 (iequals(f[0], "Timestamp") || (!is_read_or_write(f[1]) && (f[3] == "0" || f[3] == "1")));
        },
    .sample = "1538323200,12910952,8,1,1283\n",
    .open = open_as<TencentSource, tencent>,
    .seed_file = "tencent.csv",
};

// systor17: the enterprise VDI block traces of Lee et al., "Understanding storage traffic
// characteristics on enterprise virtual desktop infrastructure", SYSTOR '17 (SNIA IOTTA), CSV
// `Timestamp,Response,IOType,LUN,Offset,Size` (header optional): Timestamp Unix seconds with a
// 9-digit fraction "accurate only to the microsecond" (tick 1 µs; the file carries the unit),
// IOType R|W, or blank when no response was seen (skipped), LUN the device, Offset and Size in
// bytes. Source: the distribution's README.txt.
extern const TraceFormatInfo systor17{
    .name = "systor17",
    .summary = "SYSTOR '17 enterprise VDI CSV: Timestamp,Response,IOType,LUN,Offset,Size (SNIA IOTTA)",
    .clock = FormatClock::carried(1000, "s (decimal, us resolution)",
                                  "carried by the file: Unix seconds with a fraction (SYSTOR '17 README)"),
    .detect =
        [](const DetectHead& h) {
          const Fields& f = h.csv;
          if (h.csv_count != 6) return false;
          if (iequals(f[0], "Timestamp") && iequals(f[1], "Response")) return true;
          // Six fields: a decimal Timestamp, R|W|blank and integer LUN, Offset and Size.
          return is_decimal_seconds(f[0]) && (f[2].empty() || is_read_or_write(f[2])) && is_unsigned(f[3]) &&
                 is_unsigned(f[4]) && is_unsigned(f[5]);
        },
    .sample = "1456135200.013118000,0.000806000,R,4,899056122368,131072\n",
    .open = open_as<Systor17Source, systor17>,
    .seed_file = "systor17_vdi.csv",
};

}  // namespace rows
}  // namespace drivelab::trace::detail
