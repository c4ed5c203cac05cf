#pragma once
/// \file video.hpp
/// The `video:` section of a test of kind `video`: a disk test in the manner of Blackmagic Disk
/// Speed Test (BMDST), and the table of video formats its speeds sustain (docs/video.md has every
/// assumption and its source).
///
///     - name: video
///       kind: video
///       duration: 60s
///       video: {file_size: 5GiB, format: 2160p, codec: yuv422-10bit, iodepth: 4}
///
/// A file of file_size (BMDST offers 1 to 5 GB; default 5 GiB) is written, then read, with
/// frame-sized sequential O_DIRECT transfers (one frame of `format`/`codec` per I/O, rounded up
/// to the O_DIRECT alignment), `iodepth` frames in flight; write and read passes over the whole
/// file alternate until `duration` has passed and at least one of each is done (a read pass only
/// ever reads what the write pass wrote). Result: write and read MB/s (MB = 10^6 bytes), frame
/// latency histograms, and for every format x codec of the catalog the frames per second the
/// measured MB/s carry and the standard frame rates they sustain.
///
/// On a block device the "file" is the device's `region` (default: its first file_size bytes).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "drivelab/config/document.hpp"
#include "drivelab/io/target_file.hpp"
#include "drivelab/results/record.hpp"

namespace drivelab::emulators {

/// A picture size ("1080p": 1920 x 1080).
struct VideoFormat {
  std::string_view id;
  std::string_view name;
  std::uint32_t width = 0;
  std::uint32_t height = 0;
};

/// A way of storing frames, with the bytes one frame takes (docs/video.md gives each source).
enum class CodecKind { packed, prores };
struct VideoCodec {
  std::string_view id;    ///< "yuv422-10bit"
  std::string_view name;  ///< "10-bit YUV 4:2:2 (v210)"
  CodecKind kind = CodecKind::packed;
  /// packed: bytes of one line = ceil(width / pixels_per_group) * bytes_per_group, rounded up to
  /// line_align_bytes; prores: the per-frame target size scaled by pixel count.
  std::uint32_t pixels_per_group = 1;
  std::uint32_t bytes_per_group = 1;
  std::uint32_t line_align_bytes = 1;
};

std::span<const VideoFormat> video_formats() noexcept;
std::span<const VideoCodec> video_codecs() noexcept;
/// Frame rates of the table (23.976 ... 60 fps).
std::span<const double> video_frame_rates() noexcept;
const VideoFormat* find_video_format(std::string_view id) noexcept;
const VideoCodec* find_video_codec(std::string_view id) noexcept;
/// Bytes of one frame of `codec` at `format` (before O_DIRECT rounding).
std::uint64_t video_frame_bytes(const VideoFormat& format, const VideoCodec& codec) noexcept;

struct VideoConfig {
  std::string engine = "io_uring";  ///< io_uring | psync
  std::string format = "2160p";     ///< the frame each I/O transfers
  std::string codec = "yuv422-10bit";
  std::uint64_t file_size_bytes = std::uint64_t{5} << 30;  ///< BMDST's largest (and default) stress size
  std::uint32_t iodepth = 4;                               ///< frames in flight (a player's read-ahead)
  bool direct = true;                                      ///< O_DIRECT (BMDST bypasses the cache)
  bool keep_file = false;                                  ///< BMDST deletes its file
  std::optional<io::Region> region;                        ///< where the file lies on a device / in the file
};

/// Decodes a `video:` section (undefined: all defaults); problems go to its diagnostics.
VideoConfig decode_video(const config::Node& section);
results::Json to_json(const VideoConfig& config);

}  // namespace drivelab::emulators
