// The binary trace readers: drivelab native (native.hpp) and CloudPhysics vscsi v1 records. Both
// read their fixed-size records through a BufferedInput: one read(2) per 64 KiB, not per record.
#include <array>
#include <cstring>

#include <fmt/format.h>

#include "drivelab/core/units.hpp"
#include "drivelab/trace/native.hpp"
#include "formats.hpp"
#include "text_readers.hpp"

namespace drivelab::trace::detail {
namespace {

template <typename T>
T load_le(const unsigned char* p) {
  T value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) value = static_cast<T>(value | (static_cast<T>(p[i]) << (8 * i)));
  return value;
}

/// Reads fixed-size records; errors name the 1-based record number.
class RecordSource : public TraceSource {
 public:
  RecordSource(std::unique_ptr<ByteInput> input, std::filesystem::path name, const TraceFormatInfo& format,
               const TraceReadOptions& options)
      : input_(std::make_unique<BufferedInput>(std::move(input))),
        name_(std::move(name)),
        clock_(read_clock(format, options)),
        format_(format) {}
  [[nodiscard]] const std::vector<std::string>& devices() const final { return devices_.names(); }
  [[nodiscard]] TraceClock clock() const final { return clock_.clock; }
  [[nodiscard]] std::string describe() const final {
    return fmt::format("{} ({})", name_.filename().string(), format_.name);
  }

 protected:
  /// Reads the next `size`-byte record; false at a clean end; fails on a partial record.
  bool read_record(unsigned char* out, std::size_t size) {
    const std::size_t got = read_full(*input_, reinterpret_cast<char*>(out), size);
    if (got == 0) return false;
    ++record_;
    if (got != size) fail(fmt::format("truncated record ({} of {} bytes)", got, size));
    return true;
  }
  [[noreturn]] void fail(const std::string& reason) const { throw TraceFormatError(name_, record_, reason); }

  std::unique_ptr<ByteInput> input_;
  std::filesystem::path name_;
  DeviceTable devices_;
  std::uint64_t record_ = 0;
  ReadClock clock_;  ///< the format's own clock, or the user's time_unit (formats.hpp)

 private:
  const TraceFormatInfo& format_;
};

class NativeSource final : public RecordSource {
 public:
  NativeSource(std::unique_ptr<ByteInput> input, const std::filesystem::path& name, const TraceFormatInfo& format)
      : RecordSource(std::move(input), name, format, {}) {
    std::array<unsigned char, kNativeHeaderBytes> header{};
    if (read_full(*input_, reinterpret_cast<char*>(header.data()), header.size()) != header.size() ||
        std::memcmp(header.data(), kNativeMagic.data(), kNativeMagic.size()) != 0) {
      throw TraceFormatError(name_, 0, "not a drivelab native trace (no DLVDITRC header)");
    }
    const auto version = load_le<std::uint32_t>(header.data() + 8);
    const auto header_bytes = load_le<std::uint32_t>(header.data() + 12);
    if (version != kNativeVersion) {
      throw TraceFormatError(name_, 0,
                             fmt::format("native trace version {} (this drivelab reads {})", version, kNativeVersion));
    }
    if (header_bytes < kNativeHeaderBytes || header_bytes > 4096) {
      throw TraceFormatError(name_, 0, fmt::format("native header size {} out of range [32, 4096]", header_bytes));
    }
    tick_ns_ = load_le<std::int64_t>(header.data() + 16);
    if (tick_ns_ < 1) throw TraceFormatError(name_, 0, fmt::format("native tick_ns {} is not positive", tick_ns_));
    expected_records_ = load_le<std::uint64_t>(header.data() + 24);
    std::array<char, 4096> skip{};
    const std::size_t extra = header_bytes - kNativeHeaderBytes;
    if (read_full(*input_, skip.data(), extra) != extra) throw TraceFormatError(name_, 0, "truncated header");
  }
  [[nodiscard]] std::int64_t tick_ns() const override { return tick_ns_; }

  bool next(TraceIo& io) override {
    std::array<unsigned char, kNativeRecordBytes> r{};
    for (;;) {
      if (!read_record(r.data(), r.size())) {
        if (expected_records_ != 0 && io_records_ != expected_records_) {
          fail(fmt::format("trace ends after {} I/O records, the header announces {}", io_records_, expected_records_));
        }
        return false;
      }
      const auto device = load_le<std::uint16_t>(r.data() + 20);
      const std::uint8_t op = r[22];
      if (op == kNativeDeviceDefinition) {
        define_device(device, load_le<std::uint32_t>(r.data() + 16));
        continue;
      }
      if (op > static_cast<std::uint8_t>(TraceOp::discard)) fail(fmt::format("unknown op {}", op));
      if ((r[23] & ~TraceIo::kKnownFlags) != 0) fail(fmt::format("unknown flags {:#04x}", r[23]));
      if (device >= devices_.names().size()) fail(fmt::format("device {} used before its definition", device));
      io.time_ns = load_le<std::int64_t>(r.data());
      io.offset_bytes = load_le<std::uint64_t>(r.data() + 8);
      io.size_bytes = load_le<std::uint32_t>(r.data() + 16);
      io.device = device;
      io.op = static_cast<TraceOp>(op);
      io.flags = r[23];
      ++io_records_;
      return true;
    }
  }

 private:
  void define_device(std::uint16_t index, std::uint32_t length) {
    if (index != devices_.names().size()) {
      fail(fmt::format("device definition {} out of order (expected {})", index, devices_.names().size()));
    }
    if (length == 0 || length > 255) fail(fmt::format("device name length {} out of range [1, 255]", length));
    const std::size_t padded = align_up(length, kNativeRecordBytes);
    std::array<char, 264> name{};
    const std::size_t got = read_full(*input_, name.data(), padded);
    record_ += padded / kNativeRecordBytes;
    if (got != padded) fail("truncated device name");
    std::uint32_t assigned = 0;
    if (!devices_.index_of(std::string_view(name.data(), length), assigned) || assigned != index) {
      fail("duplicate device name");
    }
  }

  std::int64_t tick_ns_ = 1;
  std::uint64_t expected_records_ = 0;
  std::uint64_t io_records_ = 0;
};

// vscsi v1 record (CloudPhysics tools; libCacheSim trace_v1_record_t): u32 serial, u32 length,
// u32 scatter-gather count, u16 opcode, u16 version, u64 lbn, u64 time µs.
class CloudPhysicsBinarySource final : public RecordSource {
 public:
  CloudPhysicsBinarySource(std::unique_ptr<ByteInput> input, const std::filesystem::path& name,
                           const TraceFormatInfo& format, const TraceReadOptions& options)
      : RecordSource(std::move(input), name, format, options) {}
  [[nodiscard]] std::int64_t tick_ns() const override { return clock_.tick_ns; }

  bool next(TraceIo& io) override {
    std::array<unsigned char, 32> r{};
    while (read_record(r.data(), r.size())) {
      ++records_;
      const auto opcode = load_le<std::uint16_t>(r.data() + 12);
      if (!scsi_opcode_op(opcode, io.op)) continue;
      ++io_records_;
      const auto lbn = load_le<std::uint64_t>(r.data() + 16);
      const auto time = load_le<std::uint64_t>(r.data() + 24);
      const ClockScale& scale = clock_.scale;
      if (lbn > UINT64_MAX / 512) fail(fmt::format("lbn {} out of range", lbn));
      if (time > static_cast<std::uint64_t>(INT64_MAX) / scale.num) fail(fmt::format("time {} out of range", time));
      io.size_bytes = load_le<std::uint32_t>(r.data() + 4);
      io.offset_bytes = lbn * 512;
      io.flags = 0;
      std::uint32_t device = 0;
      (void)devices_.index_of("0", device);
      io.device = device;
      const auto absolute_ns = static_cast<std::int64_t>(time * scale.num / scale.den);
      if (!have_first_) {
        first_ns_ = absolute_ns;
        have_first_ = true;
      }
      io.time_ns = absolute_ns - first_ns_;
      return true;
    }
    // Records of other SCSI commands are skipped (a real trace has a few); a file of them only is
    // not a vscsi trace (random bytes of a size divisible by 32 look like one to the detection).
    if (records_ > 0 && io_records_ == 0)
      fail(
          fmt::format("{} records of 32 bytes and not one is a SCSI read or write: not a vscsi v1 trace "
                      "(give the format with --format)",
                      records_));
    return false;
  }

 private:
  std::int64_t first_ns_ = 0;
  bool have_first_ = false;
  std::uint64_t records_ = 0;     // 32-byte records read
  std::uint64_t io_records_ = 0;  // of them, reads and writes
};

}  // namespace

// ---- The rows (readers.hpp TraceFormatInfo; registered in formats.cpp) ---------------------------
namespace rows {
using namespace std::string_view_literals;

// cloudphysics_binary: vscsi v1 records, 32 bytes little-endian: u32 serial, u32 length bytes, u32
// scatter-gather count, u16 SCSI opcode, u16 version, u64 lbn (512 B), u64 time µs. Source:
// CloudPhysics vscsi tools as read by libCacheSim (traceReader vscsi.h, trace_v1_record_t).
extern const TraceFormatInfo cloudphysics_binary{
    .name = "cloudphysics-binary",
    .summary = "CloudPhysics vscsi v1 binary records, 32 bytes, time in us (libCacheSim trace_v1_record_t)",
    .clock = FormatClock::bare(1000, "us", "the format's: vscsi v1 records (libCacheSim trace_v1_record_t)"),
    // Binary (a NUL in the first 4 KiB), whole 32-byte records, and not drivelab's own header.
    .detect =
        [](const DetectHead& h) {
          return h.binary && h.file_size_bytes % 32 == 0 && !h.bytes.starts_with(kNativeMagic);
        },
    // serial 1, 4096 bytes, 1 segment, READ(10), version 1, lbn 100, 1000 us.
    .sample =
        "\x01\x00\x00\x00"
        "\x00\x10\x00\x00"
        "\x01\x00\x00\x00"
        "\x28\x00"
        "\x01\x00"
        "\x64\x00\x00\x00\x00\x00\x00\x00"
        "\xe8\x03\x00\x00\x00\x00\x00\x00"sv,
    .open = open_as<CloudPhysicsBinarySource, cloudphysics_binary>,
};

// native: drivelab's binary format, versioned header + fixed 24-byte records (native.hpp,
// docs/vdi.md "Native trace format"); ns.
extern const TraceFormatInfo native{
    .name = "native",
    .summary = "drivelab's native binary trace: a DLVDITRC header and 24-byte records in ns (docs/vdi.md)",
    .clock = FormatClock::carried(1, "ns", "carried by the file: native records are ns"),
    .detect = [](const DetectHead& h) { return h.bytes.starts_with(kNativeMagic); },
    // Header (version 1, 32 bytes, tick 1 ns, 1 request), device 0 "d", a 4 KiB read at 0.
    .sample =
        "DLVDITRC"
        "\x01\x00\x00\x00"
        "\x20\x00\x00\x00"
        "\x01\x00\x00\x00\x00\x00\x00\x00"
        "\x01\x00\x00\x00\x00\x00\x00\x00"
        "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
        "\x01\x00\x00\x00"
        "\x00\x00"
        "\xff"
        "\x00"
        "d"
        "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
        "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
        "\x00\x10\x00\x00"
        "\x00\x00"
        "\x00"
        "\x00"sv,
    .open = [](std::unique_ptr<ByteInput> in, const std::filesystem::path& name, const TraceReadOptions&)
        -> std::unique_ptr<TraceSource> { return std::make_unique<NativeSource>(std::move(in), name, native); },
};

}  // namespace rows
}  // namespace drivelab::trace::detail
