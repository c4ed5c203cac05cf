// The native and fio iolog v3 writers (native.hpp, convert.hpp).
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/core/units.hpp"
#include "drivelab/trace/convert.hpp"
#include "drivelab/trace/native.hpp"

namespace drivelab::trace {
namespace {

template <typename T>
void store_le(unsigned char* p, T value) {
  using U = std::make_unsigned_t<T>;
  const auto u = static_cast<U>(value);
  for (std::size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<unsigned char>(u >> (8 * i));
}

std::ofstream open_output(const std::filesystem::path& file) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!out) throw_errno(fmt::format("create {}", file.string()), errno);
  return out;
}

void check_written(const std::ofstream& out, const std::filesystem::path& file) {
  if (!out) throw EnvironmentError(fmt::format("write {}: output error (disk full?)", file.string()));
}

}  // namespace

std::uint64_t write_native_trace(TraceSource& source, const std::filesystem::path& file) {
  std::ofstream out = open_output(file);
  std::array<unsigned char, kNativeHeaderBytes> header{};
  std::memcpy(header.data(), kNativeMagic.data(), kNativeMagic.size());
  store_le<std::uint32_t>(header.data() + 8, kNativeVersion);
  store_le<std::uint32_t>(header.data() + 12, kNativeHeaderBytes);
  store_le<std::int64_t>(header.data() + 16, std::max<std::int64_t>(1, source.tick_ns()));
  out.write(reinterpret_cast<const char*>(header.data()), header.size());

  std::size_t devices_written = 0;
  std::uint64_t records = 0;
  TraceIo io;
  std::array<unsigned char, kNativeRecordBytes> r{};
  while (source.next(io)) {
    const auto& names = source.devices();
    if (names.size() > 65536) throw InternalError("native trace: more than 65,536 devices");
    for (; devices_written < names.size(); ++devices_written) {
      const std::string& name = names[devices_written];
      if (name.empty() || name.size() > 255) {
        throw InternalError(fmt::format("native trace: device name '{}' is not 1..255 bytes", name));
      }
      r.fill(0);
      store_le<std::uint32_t>(r.data() + 16, static_cast<std::uint32_t>(name.size()));
      store_le<std::uint16_t>(r.data() + 20, static_cast<std::uint16_t>(devices_written));
      r[22] = kNativeDeviceDefinition;
      out.write(reinterpret_cast<const char*>(r.data()), r.size());
      std::vector<char> padded(align_up(name.size(), kNativeRecordBytes), '\0');
      std::memcpy(padded.data(), name.data(), name.size());
      out.write(padded.data(), static_cast<std::streamsize>(padded.size()));
    }
    r.fill(0);
    store_le<std::int64_t>(r.data(), io.time_ns);
    store_le<std::uint64_t>(r.data() + 8, io.offset_bytes);
    store_le<std::uint32_t>(r.data() + 16, io.size_bytes);
    store_le<std::uint16_t>(r.data() + 20, static_cast<std::uint16_t>(io.device));
    r[22] = static_cast<unsigned char>(io.op);
    r[23] = io.flags;
    out.write(reinterpret_cast<const char*>(r.data()), r.size());
    ++records;
  }
  store_le<std::uint64_t>(header.data() + 24, records);
  out.seekp(24);
  out.write(reinterpret_cast<const char*>(header.data() + 24), 8);
  out.flush();
  check_written(out, file);
  return records;
}

ConvertSummary write_fio_iolog_v3(TraceSource& source, const std::filesystem::path& file,
                                  const FioIologOptions& options) {
  const auto check_name = [](const std::string& name) {
    if (name.empty() || name.find_first_of(" \t\r\n") != std::string::npos) {
      throw ConfigError(fmt::format("fio file name '{}' must be non-empty without whitespace", name));
    }
  };
  if (!options.file_name.empty()) check_name(options.file_name);
  check_name(options.file_prefix + "0");
  const auto file_of = [&](std::size_t device) {
    return options.file_name.empty() ? fmt::format("{}{}", options.file_prefix, device) : options.file_name;
  };

  std::ofstream out = open_output(file);
  out << "fio version 3 iolog\n";
  ConvertSummary summary;
  std::size_t files_opened = 0;  // devices (or 1 with file_name) that have add+open
  std::uint64_t last_us = 1;
  TraceIo io;
  std::string line;
  while (source.next(io)) {
    const std::uint64_t time_us = io.time_ns <= 0 ? 1 : static_cast<std::uint64_t>(io.time_ns) / 1000 + 1;
    last_us = std::max(last_us, time_us);
    const std::size_t wanted = options.file_name.empty() ? source.devices().size() : 1;
    for (; files_opened < wanted; ++files_opened) {
      out << fmt::format("{0} {1} add\n{0} {1} open\n", time_us, file_of(files_opened));
    }
    const std::string name = file_of(io.device);
    switch (io.op) {
      case TraceOp::read:
      case TraceOp::write:
        if (io.size_bytes == 0) {
          ++summary.skipped_empty;
          continue;
        }
        // A preflush is a flush before the request: fio's `sync` (fsync of the file) at the same time.
        line = (io.flags & TraceIo::kPreflush) != 0 ? fmt::format("{} {} sync 0 0\n", time_us, name) : std::string();
        line += fmt::format("{} {} {} {} {}\n", time_us, name, io.op == TraceOp::read ? "read" : "write",
                            io.offset_bytes, io.size_bytes);
        break;
      case TraceOp::discard:
        line = fmt::format("{} {} trim {} {}\n", time_us, name, io.offset_bytes, io.size_bytes);
        break;
      case TraceOp::flush: line = fmt::format("{} {} sync 0 0\n", time_us, name); break;
    }
    out << line;
    ++summary.ios_written;
  }
  for (std::size_t i = 0; i < files_opened; ++i) out << fmt::format("{} {} close\n", last_us, file_of(i));
  summary.devices = source.devices().size();
  out.flush();
  check_written(out, file);
  return summary;
}

}  // namespace drivelab::trace
