// The text trace readers of the line-per-event formats: fio iolog v2/v3, blkparse and MQSim (the
// CSV formats are in csv_readers.cpp). Units and sources per format: readers.hpp and docs/vdi.md.
#include "text_readers.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "formats.hpp"
#include "text_source.hpp"

namespace drivelab::trace::detail {

// SBC-3 opcodes: READ(6/10/12/16), WRITE(6/10/12/16), SYNCHRONIZE CACHE(10/16), UNMAP, WRITE SAME(16).
bool scsi_opcode_op(std::uint64_t opcode, TraceOp& op) {
  switch (opcode) {
    case 0x08:
    case 0x28:
    case 0xa8:
    case 0x88: op = TraceOp::read; return true;
    case 0x0a:
    case 0x2a:
    case 0xaa:
    case 0x8a: op = TraceOp::write; return true;
    case 0x35:
    case 0x91: op = TraceOp::flush; return true;
    case 0x42:
    case 0x93: op = TraceOp::discard; return true;
    default: return false;
  }
}

namespace {

// ---- fio iolog v2 / v3 -------------------------------------------------------------------------
// v2: FILE ACTION [OFFSET LEN]; `wait OFFSET` as FioWait says (readers.hpp: fio 3.33 waits until
// OFFSET ms after the start). v3: TIME FILE ACTION [OFFSET LEN], TIME in the clock's unit (µs,
// fio 3.33's replay, unless time_unit says otherwise), `wait` not allowed.
class FioIologSource final : public TextTraceSource {
 public:
  FioIologSource(std::unique_ptr<ByteInput> input, const std::filesystem::path& name, int version,
                 const TraceFormatInfo& format, const TraceReadOptions& options)
      : TextTraceSource(std::move(input), name, format, options), version_(version), wait_(options.fio_wait) {
    if (version == 2 && wait_ == FioWait::relative_us) {
      clock_.clock.unit = "us (wait, after the previous wait)";
      clock_.clock.origin =
          "given by the user (--fio-wait relative-us): the fio HOWTO's text; fio 3.33 itself waits "
          "until N ms after the start";
      clock_.clock.given = true;
    }
  }

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
    std::int64_t time_ns = clock_ns_;
    if (version_ == 3) {
      if (n < 3) lines_.fail("expected TIME FILE ACTION [OFFSET LENGTH]");
      time_ns = stamp_ns(parse_u64(lines_, f[0], "timestamp"), "timestamp");
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
      // fio's iolog.c reads an I/O line, a wait included, as FILE ACTION OFFSET LENGTH (sscanf of 4
      // fields); `FILE wait N` is a "bad iolog2" line it skips, so it is an error here.
      if (rest != 2)
        lines_.fail(
            fmt::format("'wait' needs its time in the offset field and a length (fio reads 'FILE wait TIME "
                        "LENGTH' only, e.g. 'f wait 1000 0'); found {} field{} after 'wait'",
                        rest, rest == 1 ? "" : "s"));
      (void)parse_u64(lines_, f[i + 3], "wait length");
      wait(parse_u64(lines_, f[i + 2], "wait time"));
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
    io.device = device(file);
    set_time(io, time_ns);
    return true;
  }

  /// fio 3.33: the requests after `wait T` start T ms after the start, or at once if that time has
  /// passed; the HOWTO: T µs after the previous wait, T < 100 ignored.
  void wait(std::uint64_t value) {
    if (wait_ == FioWait::absolute_ms) {
      clock_ns_ = std::max(clock_ns_, ticks_to_ns(lines_, value, 1'000'000, "wait time"));
      return;
    }
    if (value < 100) return;
    const std::int64_t delay_ns = ticks_to_ns(lines_, value, 1000, "wait time");
    if (delay_ns > std::numeric_limits<std::int64_t>::max() - clock_ns_) lines_.fail("wait: clock out of range");
    clock_ns_ += delay_ns;
  }

  int version_;
  FioWait wait_;
  bool header_seen_ = false;
  std::int64_t clock_ns_ = 0;
};

// ---- blkparse ----------------------------------------------------------------------------------
// Default output: MAJ,MIN CPU SEQ SECONDS.NANOS PID ACTION RWBS [SECTOR + NSECTORS] [PROC]
// (blkparse(1) "OUTPUT DESCRIPTION AND FORMATTING"). Lines whose first field is not MAJ,MIN
// (the per-CPU and total summaries) are skipped, as are events other than the selected one.
class BlkparseSource final : public TextTraceSource {
 public:
  BlkparseSource(std::unique_ptr<ByteInput> input, const std::filesystem::path& name, const TraceFormatInfo& format,
                 const TraceReadOptions& options)
      : TextTraceSource(std::move(input), name, format, options),
        action_(options.blkparse_event == BlkparseEvent::queue ? "Q" : "D") {}

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

// ---- MQSim ----------------------------------------------------------------------------------------
// ARRIVAL DEVICE LBA SIZE_SECTORS TYPE (1 read, 0 write), whitespace separated (MQSim
// traces/README.md); ARRIVAL in the clock's unit: MQSim's <Time_Unit>, NANOSECOND unless time_unit
// says otherwise.
class MqsimSource final : public TextTraceSource {
 public:
  using TextTraceSource::TextTraceSource;

 private:
  bool parse(std::string_view line, TraceIo& io) override {
    if (line.find(',') != std::string_view::npos) {
      lines_.fail(
          "a comma-separated line: MQSim traces are 'ARRIVAL DEVICE LBA SIZE TYPE' separated by spaces "
          "(an SPC trace, ASU,LBA,SIZE,OPCODE,TIMESTAMP, is format spc)");
    }
    Fields f;
    const std::size_t n = split_whitespace(line, f);
    expect_fields(n, 5, "ARRIVAL DEVICE LBA SIZE TYPE");
    io.op = op_flag(lines_, f[4], 1, 0, "TYPE");
    io.device = numeric_device(f[1], "DEVICE");
    set_sectors(io, f[2], f[3], "LBA", "SIZE");
    set_time(io, stamp_ns(parse_u64(lines_, f[0], "ARRIVAL"), "ARRIVAL"));
    return true;
  }
};

}  // namespace

// ---- The rows (readers.hpp TraceFormatInfo; registered in formats.cpp) ---------------------------
namespace rows {

// fio_iolog_v2: `FILE add|open|close` and `FILE read|write|sync|datasync|trim|wait OFFSET LEN`;
// offset/length in bytes; no timestamps. `wait N`: by default as fio 3.33 replays it, "until N ms
// after the start" (absolute; a wait earlier than the clock does nothing): fio iolog.c read_iolog()
// stores `ipo->delay = offset` and read_iolog_get() does `elapsed = mtime_since_genesis(); if
// (ipo->delay > elapsed) usec_sleep(td, (ipo->delay - elapsed) * 1000);` (fio issues 247 and 756:
// "the 4000 is relative to the start of the log"; measured here with fio 3.33: waits of 1500,
// 1000, 2000 took 2.0 s, not 4.5 ms). The HOWTO ("wait for offset microseconds ... relative to the
// previous wait", below 100 discarded) is FioWait::relative_us. Tick 1 µs.
extern const TraceFormatInfo fio_iolog_v2{
    .name = "fio-iolog-v2",
    .summary = "fio iolog version 2: FILE ACTION [OFFSET LENGTH], `wait` lines (fio HOWTO)",
    .clock = FormatClock::carried(1000, "ms (wait, since the start)",
                                  "fio 3.33's replay: `wait N` waits until N ms after the start (iolog.c "
                                  "read_iolog_get); --fio-wait relative-us reads it as the HOWTO's text says"),
    .detect = [](const DetectHead& h) { return h.line == "fio version 2 iolog"; },
    .sample = "fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n/dev/sdb read 0 4096\n",
    .open = open_as<FioIologSource, fio_iolog_v2, 2>,
    .options = "--fio-wait",
    .seed_file = "fio_v2.iolog",
};

// fio_iolog_v3: `TIME FILE ACTION [OFFSET LEN]`; TIME in µs since the start by default (fio 3.33
// sleeps a gap of N as N µs: iolog.c delay_since_ttime() feeds iolog_delay()'s usec_sleep(); its
// own write_iolog writes utime_since_now()); offset/length in bytes. Source: fio HOWTO "Trace file
// format v3".
extern const TraceFormatInfo fio_iolog_v3{
    .name = "fio-iolog-v3",
    .summary = "fio iolog version 3: TIME FILE ACTION [OFFSET LENGTH], TIME in us (fio HOWTO)",
    .clock =
        FormatClock::bare(1000, "us", "the format's default: fio 3.33's replay sleeps a timestamp gap of N as N us"),
    .detect = [](const DetectHead& h) { return h.line == "fio version 3 iolog"; },
    .sample = "fio version 3 iolog\n0 data.bin add\n0 data.bin open\n10 data.bin write 0 4096\n",
    .open = open_as<FioIologSource, fio_iolog_v3, 3>,
    .seed_file = "fio_v3.iolog",
};

// blkparse: default blkparse text output `MAJ,MIN CPU SEQ SECONDS.NANOS PID ACTION RWBS SECTOR +
// NSECTORS [PROC]`; sector and count in 512-byte sectors; time in s with ns digits (the file
// carries the unit). Only the selected event (Q queued or D issued) is read; M/F merges, R
// requeues, C completions and all other events are skipped. RWBS (blkparse_fmt.c fill_rwbs()):
// [F]{D|W|R|N}[F][A][S][M]: the leading F is a preflush (TraceIo::kPreflush), the F after the op
// letter FUA (TraceIo::kFua); D discard; W write; R read; a request without data that is W or
// carries a preflush ("FWS", "FN") is a flush; N without a preflush is skipped. Source:
// blkparse(1), blktrace(8).
extern const TraceFormatInfo blkparse{
    .name = "blkparse",
    .summary = "blkparse default text output: MAJ,MIN CPU SEQ TIME PID ACTION RWBS SECTOR + COUNT (blkparse(1))",
    .clock = FormatClock::carried(1, "s (decimal, ns digits)", "carried by the file: SECONDS.NANOSECONDS"),
    .detect = [](const DetectHead& h) { return h.word_count >= 7 && BlkparseSource::is_device_field(h.words[0]); },
    .sample = "  8,16   1        1     0.000000000  4162  Q   R 2048 + 8 [fio]\n",
    .open = open_as<BlkparseSource, blkparse>,
    .options = "--blkparse-event",
    .seed_file = "blkparse.txt",
};

// mqsim: the ASCII trace of the MQSim SSD simulator (CMU-SAFARI/MQSim, FAST 2018), whitespace
// separated `ARRIVAL DEVICE LBA SIZE TYPE`: LBA and SIZE in 512-byte sectors, TYPE 1 read / 0 write
// (MQSim traces/README.md, after the DiskSim ASCII layout). ARRIVAL is in the unit of the
// workload's `<Time_Unit>` (PICOSECOND, NANOSECOND or MICROSECOND: MQSim ASCII_Trace_Definition.h
// Trace_Time_Unit); MQSim's configurations give NANOSECOND, so ns by default (tick 1 ns).
// umass_tpcc_small.trace is this format (its device-13 lines are MQSim's traces/tpcc-small.trace).
// "umass" is accepted as an old name of this format.
extern const TraceFormatInfo mqsim{
    .name = "mqsim",
    .summary = "MQSim ASCII trace: ARRIVAL DEVICE LBA SIZE TYPE, sectors, ARRIVAL in ns (also: umass)",
    .clock = FormatClock::bare(1, "ns",
                               "the format's default: MQSim's <Time_Unit>NANOSECOND, as its configurations give it"),
    .detect =
        [](const DetectHead& h) {
          return h.word_count == 5 &&
                 std::all_of(h.words.begin(), h.words.begin() + 5, [](std::string_view s) { return is_unsigned(s); });
        },
    .sample = "938513000 4 264719034 16 0\n938828000 3 197570570 16 1\n",
    .open = open_as<MqsimSource, mqsim>,
    .old_name = "umass",  // the 5-column MQSim form was read as "umass" before it was recognised
    .seed_file = "mqsim_small.trace",
};

}  // namespace rows
}  // namespace drivelab::trace::detail
