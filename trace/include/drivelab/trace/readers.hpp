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
/// which. Units per format, as read (sources in docs/vdi.md):
///   fio_iolog_v2        `FILE add|open|close` and `FILE read|write|sync|datasync|trim|wait OFFSET LEN`;
///                       offset/length in bytes; no timestamps. `wait N`: by default as fio 3.33
///                       replays it, "until N ms after the start" (absolute; a wait earlier than the
///                       clock does nothing): fio iolog.c read_iolog() stores `ipo->delay = offset`
///                       and read_iolog_get() does `elapsed = mtime_since_genesis(); if (ipo->delay >
///                       elapsed) usec_sleep(td, (ipo->delay - elapsed) * 1000);` (fio issues 247 and
///                       756: "the 4000 is relative to the start of the log"; measured here with fio
///                       3.33: waits of 1500, 1000, 2000 took 2.0 s, not 4.5 ms). The HOWTO ("wait
///                       for offset microseconds ... relative to the previous wait", below 100
///                       discarded) is FioWait::relative_us. Tick 1 µs.
///   fio_iolog_v3        `TIME FILE ACTION [OFFSET LEN]`; TIME in µs since the start by default (fio
///                       3.33 sleeps a gap of N as N µs: iolog.c delay_since_ttime() feeds
///                       iolog_delay()'s usec_sleep(); its own write_iolog writes utime_since_now());
///                       offset/length in bytes. Source: fio HOWTO "Trace file format v3".
///   blkparse            default blkparse text output `MAJ,MIN CPU SEQ SECONDS.NANOS PID ACTION RWBS
///                       SECTOR + NSECTORS [PROC]`; sector and count in 512-byte sectors; time in s
///                       with ns digits (the file carries the unit). Only the selected event (Q
///                       queued or D issued) is read; M/F merges, R requeues, C completions and all
///                       other events are skipped. RWBS (blkparse_fmt.c fill_rwbs()): [F]{D|W|R|N}[F]
///                       [A][S][M]: the leading F is a preflush (TraceIo::kPreflush), the F after the
///                       op letter FUA (TraceIo::kFua); D discard; W write; R read; a request without
///                       data that is W or carries a preflush ("FWS", "FN") is a flush; N without a
///                       preflush is skipped. Source: blkparse(1), blktrace(8).
///   msr_cambridge       CSV `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`;
///                       Timestamp in Windows FILETIME ticks (100 ns since 1601), Type Read|Write,
///                       Offset and Size in bytes. Device = "Hostname,DiskNumber". Source: SNIA
///                       IOTTA trace 388 (MSR Cambridge) README, Narayanan et al., FAST 2008.
///   cloudphysics_csv    CSV `version,time,op,size,lbn` (header line optional); time in whole
///                       seconds by default (the shared sample spans exactly 7,200 consecutive
///                       values for 113,872 requests, which rules out µs), op the SCSI CDB opcode
///                       in hex (28/88/08/a8 READ(10/16/6/12), 2a/8a/0a/aa WRITE(10/16/6/12),
///                       35/91 SYNCHRONIZE CACHE(10/16) = flush, 42 UNMAP / 93 WRITE SAME(16) =
///                       discard), size in bytes, lbn in 512-byte logical blocks. Source: SNIA
///                       IOTTA trace 7015 (CloudPhysics), Waldspurger et al., FAST 2015; opcodes
///                       from SBC-3.
///   cloudphysics_binary vscsi v1 records, 32 bytes little-endian: u32 serial, u32 length bytes,
///                       u32 scatter-gather count, u16 SCSI opcode, u16 version, u64 lbn (512 B),
///                       u64 time µs. Source: CloudPhysics vscsi tools as read by libCacheSim
///                       (traceReader vscsi.h, trace_v1_record_t).
///   mqsim               the ASCII trace of the MQSim SSD simulator (CMU-SAFARI/MQSim, FAST 2018),
///                       whitespace separated `ARRIVAL DEVICE LBA SIZE TYPE`: LBA and SIZE in
///                       512-byte sectors, TYPE 1 read / 0 write (MQSim traces/README.md, after the
///                       DiskSim ASCII layout). ARRIVAL is in the unit of the workload's
///                       `<Time_Unit>` (PICOSECOND, NANOSECOND or MICROSECOND: MQSim
///                       ASCII_Trace_Definition.h Trace_Time_Unit); MQSim's configurations give
///                       NANOSECOND, so ns by default (tick 1 ns). umass_tpcc_small.trace is this
///                       format (its device-13 lines are MQSim's traces/tpcc-small.trace). "umass"
///                       is accepted as an old name of this format.
///   spc                 the SPC trace format the UMass Trace Repository distributes, CSV
///                       `ASU,LBA,SIZE,OPCODE,TIMESTAMP[,...]`: LBA in 512-byte sectors, SIZE in
///                       bytes, OPCODE r|w, TIMESTAMP decimal seconds (the file carries the unit).
///   alibaba             CSV `device_id,opcode,offset,length,timestamp`; opcode R|W, offset and
///                       length in bytes, timestamp in µs (Unix epoch). Source: alibaba/block-traces.
///   tencent             CSV `Timestamp,Offset,Size,IOType,VolumeID`; timestamp in s (Unix epoch,
///                       tick 1 s), offset and size in 512-byte sectors, IOType 0 read / 1 write.
///                       Source: SNIA IOTTA trace 27917 (Tencent CBS), Zhang et al., ATC 2020.
///   systor17            the enterprise VDI block traces of Lee et al., "Understanding storage
///                       traffic characteristics on enterprise virtual desktop infrastructure",
///                       SYSTOR '17 (SNIA IOTTA), CSV `Timestamp,Response,IOType,LUN,Offset,Size`
///                       (header optional): Timestamp Unix seconds with a 9-digit fraction
///                       "accurate only to the microsecond" (tick 1 µs; the file carries the unit),
///                       IOType R|W, or blank when no response was seen (skipped), LUN the device,
///                       Offset and Size in bytes. Source: the distribution's README.txt.
///   native              drivelab's binary format, versioned header + fixed 24-byte records
///                       (native.hpp, docs/vdi.md "Native trace format"); ns.
///
/// Errors: a malformed line or record throws TraceFormatError ("file:line: reason"; for binary
/// formats "line" is the 1-based record number); an unreadable file throws EnvironmentError.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "drivelab/core/errors.hpp"
#include "drivelab/trace/source.hpp"

namespace drivelab::trace {

/// The trace formats drivelab reads. `automatic` detects the format from the file's content
/// (detect_trace_format).
enum class TraceFormat {
  automatic,
  fio_iolog_v2,
  fio_iolog_v3,
  blkparse,
  msr_cambridge,
  cloudphysics_csv,
  cloudphysics_binary,
  mqsim,
  spc,
  alibaba,
  tencent,
  systor17,
  native
};

/// "auto", "fio-iolog-v2", "fio-iolog-v3", "blkparse", "msr-cambridge", "cloudphysics-csv",
/// "cloudphysics-binary", "mqsim", "spc", "alibaba", "tencent", "systor17", "native" (underscores
/// accepted too). "umass", the name of `mqsim` before the 5-column form was recognised as MQSim's,
/// is accepted for it, so protocols that name it keep working (an SPC CSV file is `spc`; `auto`
/// detects both). Throws ConfigError naming the accepted values on anything else.
[[nodiscard]] TraceFormat parse_trace_format(std::string_view name);
/// The canonical (dashed) name parse_trace_format accepts.
[[nodiscard]] std::string_view to_string(TraceFormat format);

/// A unit for timestamps whose unit the file does not carry (`--time-unit`, protocol `time_unit`).
enum class TimeUnit { ps, ns, us, ms, s };
/// "ps", "ns", "us" (or "µs"), "ms", "s"; MQSim's PICOSECOND, NANOSECOND, MICROSECOND (any case).
/// Throws ConfigError naming the accepted values on anything else.
[[nodiscard]] TimeUnit parse_time_unit(std::string_view name);
/// "ps", "ns", "us", "ms" or "s".
[[nodiscard]] std::string_view to_string(TimeUnit unit);
/// True for the formats whose timestamps are bare numbers in a unit the file does not carry, so
/// TraceReadOptions::time_unit applies: fio-iolog-v3, msr-cambridge, cloudphysics-csv,
/// cloudphysics-binary, mqsim, alibaba, tencent. False for blkparse, spc and systor17 (decimal
/// seconds), native (ns), fio-iolog-v2 (no timestamps: FioWait) and auto.
[[nodiscard]] bool takes_time_unit(TraceFormat format) noexcept;

/// How fio iolog v2 `wait N` lines are read (see fio_iolog_v2 above).
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

/// Detects the format from the first bytes and the first non-comment line of `file`:
///   1. starts with the native magic "DLVDITRC"                              -> native
///   2. contains a NUL byte in the first 4 KiB and its size is a multiple of 32 -> cloudphysics_binary
///   3. first line "fio version 2 iolog" / "fio version 3 iolog"              -> fio_iolog_v2 / v3
///   4. first field "MAJ,MIN" followed by whitespace-separated fields          -> blkparse
///   5. comma-separated: header "version,time,op,size,lbn" or 5 fields with a hex opcode in field 3
///      -> cloudphysics_csv; 7 fields with Read|Write in field 4 -> msr_cambridge; 5 fields with
///      R|W in field 2 -> alibaba; 5 fields with 0|1 in field 4 -> tencent; header
///      "Timestamp,Response,..." or 6 fields with R|W|blank in field 3, an integer LUN in field 4
///      and a decimal Timestamp -> systor17; r|w in field 4 -> spc
///   6. 5 whitespace-separated integers                                       -> mqsim
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
