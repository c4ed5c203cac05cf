#pragma once
/// \file native.hpp
/// drivelab's native block-trace format (docs/vdi.md "Native trace format"): compact, fixed-size
/// records that a reader streams without parsing text, and that keep every TraceIo field exactly
/// (a native round trip is lossless; tick_ns and device names are kept too; times are ns, so the
/// clock unit the source was read in is applied once, when the native file is written).
///
/// Layout, all integers little-endian:
///   header, 32 bytes:
///     [0,8)   magic "DLVDITRC"
///     [8,12)  u32 version (1)
///     [12,16) u32 header size in bytes (32; readers skip what they do not know)
///     [16,24) i64 tick_ns of the source trace
///     [24,32) u64 number of I/O records, 0 if the writer could not seek back to fill it in
///   then 24-byte records:
///     [0,8)   i64 time_ns, relative to the first request
///     [8,16)  u64 offset_bytes
///     [16,20) u32 size_bytes
///     [20,22) u16 device index
///     [22]    u8 op: 0 read, 1 write, 2 flush, 3 discard; 255 = device definition
///     [23]    u8 flags: TraceIo::flags (bit 0 preflush, bit 1 FUA; other bits are an error). Version
///             1 files written before the flags existed have 0 here (the byte was reserved, 0).
///   A device definition (op 255) precedes the first I/O on a device: its device field is the new
///   index (always the next one), size_bytes the name length (1..255), and the name follows,
///   zero-padded to a multiple of 24 bytes. Errors name the 1-based 24-byte record number.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string_view>

#include "drivelab/trace/source.hpp"

namespace drivelab::trace {

inline constexpr std::string_view kNativeMagic = "DLVDITRC";
inline constexpr std::uint32_t kNativeVersion = 1;
inline constexpr std::size_t kNativeHeaderBytes = 32;
inline constexpr std::size_t kNativeRecordBytes = 24;
inline constexpr std::uint8_t kNativeDeviceDefinition = 255;

/// Writes `source` to `file` in the native format; returns the number of I/O records written.
/// Streams: memory stays bounded by one record. Throws EnvironmentError if `file` cannot be
/// written, TraceFormatError from the source, InternalError if a device name is longer than 255
/// bytes or there are more than 65,536 devices.
std::uint64_t write_native_trace(TraceSource& source, const std::filesystem::path& file);

}  // namespace drivelab::trace
