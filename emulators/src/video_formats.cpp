// The video catalog of the `video` kind and its `video:` section decoder. Every number here is an
// assumption stated with its source in docs/video.md.
#include <array>

#include <fmt/format.h>

#include "drivelab/config/map_reader.hpp"
#include "drivelab/core/units.hpp"
#include "drivelab/results/config_json.hpp"
#include "drivelab/emulators/region.hpp"
#include "drivelab/emulators/video.hpp"

namespace drivelab::emulators {
namespace {

constexpr std::array kFormats{
    VideoFormat{"1080p", "HD 1080p", 1920, 1080},
    VideoFormat{"2160p", "UHD 2160p", 3840, 2160},
    VideoFormat{"4320p", "8K UHD 4320p", 7680, 4320},
};

// Uncompressed layouts as Blackmagic's DeckLink SDK defines their row bytes:
//   8-bit YUV 4:2:2 ('2vuy'): width * 2;  10-bit YUV 4:2:2 ('v210'): ceil(width / 48) * 128;
//   10-bit RGB ('r210'): ceil(width / 64) * 256;  12-bit RGB ('R12L'): width * 36 / 8.
constexpr std::array kCodecs{
    VideoCodec{"yuv422-8bit", "8-bit YUV 4:2:2", CodecKind::packed, 2, 4, 1},
    VideoCodec{"yuv422-10bit", "10-bit YUV 4:2:2", CodecKind::packed, 6, 16, 128},
    VideoCodec{"rgb444-10bit", "10-bit RGB 4:4:4", CodecKind::packed, 1, 4, 256},
    VideoCodec{"rgb444-12bit", "12-bit RGB 4:4:4", CodecKind::packed, 8, 36, 1},
    VideoCodec{"prores422hq", "Apple ProRes 422 HQ", CodecKind::prores, 1, 1, 1},
};

constexpr std::array kFrameRates{23.976, 24.0, 25.0, 29.97, 30.0, 50.0, 59.94, 60.0};

/// ProRes 422 HQ target data rates at 29.97 fps (Apple ProRes White Paper, "Target Data Rates"):
/// 220 Mb/s for 1920x1080 and 707 Mb/s for 3840x2160; 4320p is 4 x the 2160p figure
/// (extrapolated). ProRes targets a size per frame, so a frame is rate / 29.97.
double prores_mbps_at_2997(const VideoFormat& f) {
  if (f.height <= 1080) return 220.0 * (static_cast<double>(f.width) * f.height) / (1920.0 * 1080.0);
  if (f.height <= 2160) return 707.0 * (static_cast<double>(f.width) * f.height) / (3840.0 * 2160.0);
  return 4 * 707.0 * (static_cast<double>(f.width) * f.height) / (7680.0 * 4320.0);
}

}  // namespace

std::span<const VideoFormat> video_formats() noexcept { return kFormats; }
std::span<const VideoCodec> video_codecs() noexcept { return kCodecs; }
std::span<const double> video_frame_rates() noexcept { return kFrameRates; }

const VideoFormat* find_video_format(std::string_view id) noexcept {
  for (const auto& f : kFormats)
    if (f.id == id) return &f;
  return nullptr;
}

const VideoCodec* find_video_codec(std::string_view id) noexcept {
  for (const auto& c : kCodecs)
    if (c.id == id) return &c;
  return nullptr;
}

std::uint64_t video_frame_bytes(const VideoFormat& f, const VideoCodec& c) noexcept {
  if (c.kind == CodecKind::prores) return static_cast<std::uint64_t>(prores_mbps_at_2997(f) * 1e6 / 8 / 29.97);
  std::uint64_t line = (std::uint64_t{f.width} + c.pixels_per_group - 1) / c.pixels_per_group * c.bytes_per_group;
  line = (line + c.line_align_bytes - 1) / c.line_align_bytes * c.line_align_bytes;
  return line * f.height;
}

VideoConfig decode_video(const config::Node& section) {
  VideoConfig c;
  config::MapReader r(section);
  r.choice("engine", c.engine, {{"io_uring", std::string("io_uring")}, {"psync", std::string("psync")}});
  if (const config::Node n = r.section("format"); n.defined() && find_video_format(n.scalar()) == nullptr)
    n.error(fmt::format("format must be one of: 1080p, 2160p, 4320p; found '{}'", n.scalar()));
  else if (n.defined())
    c.format = n.scalar();
  if (const config::Node n = r.section("codec"); n.defined() && find_video_codec(n.scalar()) == nullptr)
    n.error(
        fmt::format("codec must be one of: yuv422-8bit, yuv422-10bit, rgb444-10bit, rgb444-12bit, prores422hq; "
                    "found '{}'",
                    n.scalar()));
  else if (n.defined())
    c.codec = n.scalar();
  r.size("file_size", c.file_size_bytes, {.min = std::uint64_t{16} << 20});
  r.integer("iodepth", c.iodepth, {.min = 1, .max = 64});
  r.boolean("direct", c.direct);
  r.boolean("keep_file", c.keep_file);
  c.region = decode_region(r.section("region"));
  r.finish();
  const VideoFormat* f = find_video_format(c.format);
  const VideoCodec* k = find_video_codec(c.codec);
  if (f && k && video_frame_bytes(*f, *k) * c.iodepth > (std::uint64_t{1} << 30))
    section.error(fmt::format("iodepth x frame size = {} of buffers is more than 1 GiB; lower iodepth",
                              format_size(video_frame_bytes(*f, *k) * c.iodepth)));
  if (f && k && c.file_size_bytes < 2 * video_frame_bytes(*f, *k))
    section.child("file_size")
        .error(fmt::format("file_size must hold at least two {} {} frames ({})", c.format, c.codec,
                           format_size(2 * video_frame_bytes(*f, *k))));
  return c;
}

results::Json to_json(const VideoConfig& c) {
  results::Json j{{"engine", c.engine},      {"format", c.format},
                  {"codec", c.codec},        {"file_size", results::size_json(c.file_size_bytes)},
                  {"iodepth", c.iodepth},    {"direct", c.direct},
                  {"keep_file", c.keep_file}};
  if (c.region) j["region"] = region_json(c.region);
  return j;
}

}  // namespace drivelab::emulators
