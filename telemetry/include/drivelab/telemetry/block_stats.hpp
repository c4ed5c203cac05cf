#pragma once
/// \file block_stats.hpp
/// Block-device counters and what iostat -x makes of them.
///
/// The counters: /sys/block/<dev>/stat (/sys/block/<disk>/<part>/stat for a partition), the
/// fields of the kernel's Documentation/admin-guide/iostats.rst, one line of 11 (before Linux
/// 4.18), 15 (4.18: discards) or 17 (5.5: flushes) unsigned decimal numbers:
///    1 reads completed   2 reads merged   3 sectors read   4 ms reading
///    5 writes completed  6 writes merged  7 sectors written  8 ms writing
///    9 I/Os in flight   10 ms doing I/O (io_ticks)   11 weighted ms doing I/O (time_in_queue)
///   12 discards completed  13 discards merged  14 sectors discarded  15 ms discarding
///   16 flushes completed   17 ms flushing
/// A sector is 512 bytes whatever the device's logical block size. All but field 9 are
/// cumulative; the ms fields are 32-bit (the kernel prints them with %u) and wrap after about
/// 49.7 days of accumulated time.
///
/// The rates: exactly sysstat's iostat -x (iostat.c write_ext_stat and common.c
/// compute_ext_disk_stats, sysstat 12), over an interval of `seconds`:
///   r/s  = Δreads / s          rMB/s = Δsectors_read / 2048 / s (sysstat's "MB" is MiB)
///   rrqm/s = Δread_merges / s  %rrqm = Δread_merges / (Δread_merges + Δreads) x 100
///   r_await = Δms_reading / Δreads (ms; 0 when no read completed)
///   rareq-sz = Δsectors_read / 2 / Δreads (kB, sysstat's kB being KiB)
///   the same for writes (w), discards (d: d/s, dMB/s, drqm/s, %drqm, d_await, dareq-sz) and
///   flushes (f/s, f_await)
///   aqu-sz = Δtime_in_queue / (1000 x s)   (the average number of requests queued or in service)
///   %util  = Δio_ticks / (10 x s)          (the share of time with at least one request in flight)
/// %util caveat (iostat(1)): a device that serves requests in parallel (NVMe and other
/// multi-queue devices, RAID, dm, loop) can be 100% busy and far from its limit, so %util says
/// nothing of its saturation; it is reported, never a headline.
///
/// Counter wrap, as iostat handles it (iostat.c: "the difference is still properly calculated if
/// the result is of the same type as the two values"): each delta is taken in the counter's own
/// width, 32 bits for the ms fields, 64 bits for the others; and a count that went down from a
/// value that fits in 32 bits was a 32-bit kernel's unsigned long (iostat masks the sector
/// difference with 0xffffffff then). A device that was reset (detached and attached again) shows
/// garbage for that one interval, as it does in iostat.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace drivelab::telemetry {

/// One reading of a device's stat file.
struct BlockStat {
  std::uint64_t read_ios = 0, read_merges = 0, read_sectors = 0, read_ms = 0;
  std::uint64_t write_ios = 0, write_merges = 0, write_sectors = 0, write_ms = 0;
  std::uint64_t in_flight = 0, io_ticks_ms = 0, time_in_queue_ms = 0;
  std::uint64_t discard_ios = 0, discard_merges = 0, discard_sectors = 0, discard_ms = 0;
  std::uint64_t flush_ios = 0, flush_ms = 0;
  int fields = 0;  ///< how many the kernel wrote: 11, 15 or 17

  bool has_discards() const noexcept { return fields >= 15; }
  bool has_flushes() const noexcept { return fields >= 17; }
};

/// Parses the text of a stat file (white-space separated, a trailing newline allowed). Throws
/// EnvironmentError naming `source` and the field when the text is not 11, 15 or 17 unsigned
/// decimal numbers ("/sys/block/sda/stat: field 3 is 'x1', not a number").
BlockStat parse_block_stat(std::string_view text, const std::string& source);

/// Reads and parses `stat_file`; nullopt if it cannot be read (the device went away). Throws as
/// parse_block_stat for malformed content.
std::optional<BlockStat> read_block_stat(const std::filesystem::path& stat_file);

/// The delta of one counter of `width` bits (32 or 64), as iostat takes it (see above).
std::uint64_t counter_delta(std::uint64_t before, std::uint64_t after, int width) noexcept;

/// iostat -x's figures over one interval, and the counts they come from.
struct BlockRates {
  double seconds = 0;
  // counts over the interval
  std::uint64_t reads = 0, writes = 0, discards = 0, flushes = 0;
  std::uint64_t read_bytes = 0, write_bytes = 0, discard_bytes = 0;
  std::uint64_t read_merges = 0, write_merges = 0, discard_merges = 0;
  // iostat -x -m columns
  double r_s = 0, w_s = 0, d_s = 0, f_s = 0;
  double rMB_s = 0, wMB_s = 0, dMB_s = 0;  ///< MiB/s (sectors / 2048), as iostat -m
  double rrqm_s = 0, wrqm_s = 0, drqm_s = 0;
  double pct_rrqm = 0, pct_wrqm = 0, pct_drqm = 0;
  double r_await = 0, w_await = 0, d_await = 0, f_await = 0;  ///< ms
  double rareq_sz = 0, wareq_sz = 0, dareq_sz = 0;            ///< kB (KiB)
  double aqu_sz = 0;
  double util_pct = 0;  ///< see the %util caveat above
  bool has_discards = false, has_flushes = false;
};

/// The rates from reading `a` to the later reading `b`, `seconds` apart (seconds > 0, else every rate is 0).
BlockRates block_rates(const BlockStat& a, const BlockStat& b, double seconds) noexcept;

}  // namespace drivelab::telemetry
