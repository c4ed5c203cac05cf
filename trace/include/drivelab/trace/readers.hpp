#pragma once
/// \file readers.hpp
/// drivelab::trace — streaming readers for real block-trace formats, and the factory that picks one
/// (docs/vdi.md, "Trace formats"). Every reader yields drivelab::trace::TraceIo (source.hpp):
/// time in ns relative to the trace's first request, offsets and sizes in bytes, a dense device
/// index. Memory is bounded by one line (text) or one record (binary) plus the device-name table
/// and, for the formats that need it, a small per-device state; never by the trace length.
///
/// Units per format, as read (sources in docs/vdi.md):
///   fio_iolog_v2        `FILE add|open|close` and `FILE read|write|sync|datasync|trim OFFSET LEN`;
///                       offset/length in bytes; no timestamps (every request at time 0, tick 1 ns).
///                       Source: fio HOWTO "I/O replay" / "read_iolog", fio iolog.c.
///   fio_iolog_v3        `TIME_MS FILE ACTION [OFFSET LEN]`; time in milliseconds since the start
///                       (tick 1 ms); offset/length in bytes. Source: fio HOWTO, fio 3.33 iolog.c.
///   blkparse            default blkparse text output `MAJ,MIN CPU SEQ SECONDS.NANOS PID ACTION RWBS
///                       SECTOR + NSECTORS [PROC]`; sector and count in 512-byte sectors; time in s
///                       with ns resolution. Only the selected event (Q queued or D issued) is read;
///                       M/F merges, R requeues, C completions and all other events are skipped.
///                       RWBS: R read, W write, D discard, F/FUA and a zero-length W = flush.
///                       Source: blkparse(1), blktrace(8).
///   msr_cambridge       CSV `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`;
///                       Timestamp in Windows FILETIME ticks (100 ns since 1601), Type Read|Write,
///                       Offset and Size in bytes. Device = "Hostname,DiskNumber". Source: SNIA
///                       IOTTA trace 388 (MSR Cambridge), Narayanan et al., FAST 2008.
///   cloudphysics_csv    CSV `version,time,op,size,lbn` (header line optional); time in whole
///                       seconds (tick 1 s; the shared sample spans exactly 7,200 consecutive
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
///   umass               UMass/SPC ASCII `ARRIVAL DEVICE LBA SIZE TYPE` whitespace separated (the
///                       DiskSim ASCII layout); arrival in µs with whole-ms values (tick 1 ms),
///                       LBA and size in 512-byte sectors, TYPE the DiskSim flag: 1 read, 0 write.
///                       Source: UMass Trace Repository, DiskSim 4.0 manual (ASCII input format);
///                       the units are worked out on umass_tpcc_small.trace in docs/vdi.md.
///   alibaba             CSV `device_id,opcode,offset,length,timestamp`; opcode R|W, offset and
///                       length in bytes, timestamp in µs (Unix epoch). Source: alibaba/block-traces.
///   tencent             CSV `Timestamp,Offset,Size,IOType,VolumeID`; timestamp in s (Unix epoch,
///                       tick 1 s), offset and size in 512-byte sectors, IOType 0 read / 1 write.
///                       Source: SNIA IOTTA trace 27917 (Tencent CBS), Zhang et al., ATC 2020.
///   native              drivelab's binary format, versioned header + fixed 24-byte records
///                       (native.hpp, docs/vdi.md "Native trace format").
///
/// Errors: a malformed line or record throws TraceFormatError ("file:line: reason"; for binary
/// formats "line" is the 1-based record number); an unreadable file throws EnvironmentError.
#include <cstdint>
#include <filesystem>
#include <memory>
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
  umass,
  alibaba,
  tencent,
  native
};

/// "auto", "fio-iolog-v2", "fio-iolog-v3", "blkparse", "msr-cambridge", "cloudphysics-csv",
/// "cloudphysics-binary", "umass", "alibaba", "tencent", "native" (underscores accepted too).
/// Throws ConfigError naming the accepted values on anything else.
[[nodiscard]] TraceFormat parse_trace_format(std::string_view name);
/// The canonical (dashed) name parse_trace_format accepts.
[[nodiscard]] std::string_view to_string(TraceFormat format);

/// Which blkparse event is read as "the request": queued (Q, what the application asked for) or
/// dispatched to the driver (D, after merging and scheduling).
enum class BlkparseEvent { queue, dispatch };

/// Reader options; the defaults suit every format.
struct TraceReadOptions {
  BlkparseEvent blkparse_event = BlkparseEvent::queue;  ///< blkparse only
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
///      R|W in field 2 -> alibaba; 5 fields with 0|1 in field 4 -> tencent
///   6. 5 whitespace-separated integers                                       -> umass
/// Throws TraceFormatError (line 1) when no rule matches, EnvironmentError when unreadable.
[[nodiscard]] TraceFormat detect_trace_format(const std::filesystem::path& file);

/// "a directory", "a character device", "a block device" or "a socket": the kind of file (its
/// st_mode) open_trace refuses with ConfigError before opening it (/dev/zero would never end);
/// empty for a regular file or a pipe (FIFO).
[[nodiscard]] std::string_view refused_file_kind(unsigned mode) noexcept;

/// Opens `file` as a streaming TraceSource in `format` (automatic: detect_trace_format).
/// Throws EnvironmentError if the file cannot be opened, TraceFormatError for a bad header;
/// malformed records throw TraceFormatError from TraceSource::next().
[[nodiscard]] std::unique_ptr<TraceSource> open_trace(const std::filesystem::path& file,
                                                      TraceFormat format = TraceFormat::automatic,
                                                      const TraceReadOptions& options = {});

}  // namespace drivelab::trace
