// Kind `video`: the frame catalog (sizes from their definitions), decoding, a short run on a temp
// file (write then read passes, the formats table), and a region of a real loop device.
#include <fcntl.h>
#include <unistd.h>

#include "../io/target_loop_device.hpp"
#include "drivelab/emulators/video.hpp"
#include "target_kind_harness.hpp"

namespace drivelab::emulators {
namespace {

using testing::KindTest;
using testing::TempDir;
namespace fs = std::filesystem;
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

std::uint64_t frame(std::string_view format, std::string_view codec) {
  return video_frame_bytes(*find_video_format(format), *find_video_codec(codec));
}

TEST(VideoCatalog, FrameSizesFollowTheirDefinitions) {
  EXPECT_EQ(frame("1080p", "yuv422-8bit"), 1920u * 2 * 1080);  // 2vuy: 2 bytes per pixel
  EXPECT_EQ(frame("2160p", "yuv422-8bit"), 3840u * 2 * 2160);
  EXPECT_EQ(frame("1080p", "yuv422-10bit"), 5120u * 1080);           // v210: 1920/48*128 per line
  EXPECT_EQ(frame("2160p", "yuv422-10bit"), 10240u * 2160);          // 22,118,400 bytes
  EXPECT_EQ(frame("1080p", "rgb444-10bit"), 1920u * 4 * 1080);       // r210: 4 bytes per pixel
  EXPECT_EQ(frame("1080p", "rgb444-12bit"), 1920u * 36 / 8 * 1080);  // R12L: 36 bytes per 8 pixels
  EXPECT_EQ(frame("4320p", "rgb444-12bit"), 7680u * 36 / 8 * 4320);
  // ProRes 422 HQ: 220 Mb/s at 1080p29.97 and 707 Mb/s at 2160p29.97 (Apple ProRes White Paper).
  EXPECT_NEAR(static_cast<double>(frame("1080p", "prores422hq")), 220e6 / 8 / 29.97, 1.0);
  EXPECT_NEAR(static_cast<double>(frame("2160p", "prores422hq")), 707e6 / 8 / 29.97, 1.0);
  EXPECT_EQ(video_formats().size(), 3u);
  EXPECT_EQ(video_codecs().size(), 5u);
  EXPECT_EQ(video_frame_rates().front(), 23.976);
  EXPECT_EQ(video_frame_rates().back(), 60.0);
}

TEST(VideoDecode, DefaultsAndProblems) {
  config::Diagnostics diags;
  const VideoConfig c = decode_video(config::Node(YAML::Node(), "video", "t", &diags));
  EXPECT_TRUE(diags.empty());
  EXPECT_EQ(c.file_size_bytes, std::uint64_t{5} << 30);
  EXPECT_EQ(c.format, "2160p");
  EXPECT_EQ(c.codec, "yuv422-10bit");
  EXPECT_TRUE(c.direct);
  EXPECT_FALSE(c.keep_file);
  const std::string p = testing::decode_problems("video", "{format: 720p, codec: h264, file_size: 1MiB, regio: all}");
  EXPECT_NE(p.find("format must be one of: 1080p, 2160p, 4320p; found '720p'"), std::string::npos) << p;
  EXPECT_NE(p.find("codec must be one of"), std::string::npos) << p;
  EXPECT_NE(p.find("file_size must be at least 16 MiB"), std::string::npos) << p;
  EXPECT_NE(p.find("unknown key 'regio' (did you mean 'region'?)"), std::string::npos) << p;
  const std::string big = testing::decode_problems("video", "{format: 4320p, codec: rgb444-12bit, iodepth: 8}");
  EXPECT_NE(big.find("more than 1 GiB"), std::string::npos) << big;
}

TEST(Video, WritesThenReadsFramesAndTablesTheFormats) {
  TempDir dir;
  KindTest t(
      "video", dir.path(),
      "{engine: " + testing::usable_engine() + ", format: 1080p, codec: yuv422-8bit, file_size: 64MiB, iodepth: 2}");
  EXPECT_EQ(t.emulator->device_access(), runner::DeviceAccess::read_write);
  t.emulator->prepare(t.ctx);
  EXPECT_TRUE(fs::exists(dir.path() / "drivelab-unit.dat"));
  t.emulator->warmup(t.ctx);
  t.emulator->run(t.ctx);
  t.emulator->verify(t.ctx);
  t.emulator->cleanup(t.ctx);
  EXPECT_FALSE(fs::exists(dir.path() / "drivelab-unit.dat")) << "keep_file: false removes the file (as BMDST)";
  t.expect_checks_pass();
  EXPECT_GT(t.metric("write_mb_s"), 0);
  EXPECT_GT(t.metric("read_mb_s"), 0);
  EXPECT_GE(t.metric("write_passes"), 1);
  EXPECT_GE(t.metric("read_passes"), 1);
  EXPECT_NEAR(t.metric("write_fps"), t.metric("write_mb_s") * 1e6 / (1920.0 * 2 * 1080), 1e-6 * t.metric("write_fps"));
  EXPECT_EQ(t.record.metrics.front().name, "write_mb_s");
  const auto& f = t.record.details.at("frame");
  EXPECT_EQ(f.at("frame_bytes"), 4147200);
  EXPECT_EQ(f.at("transfer_bytes").get<std::uint64_t>() % 512, 0u);
  EXPECT_EQ(f.at("frames_per_pass"), 64 * kMiB / f.at("transfer_bytes").get<std::uint64_t>());
  const auto& table = t.record.details.at("formats");
  ASSERT_EQ(table.size(), 15u);
  for (const auto& row : table) {
    // A rate is listed as sustained exactly when the measured frames per second reach it.
    for (const auto& rate : row.at("read_sustains_fps"))
      EXPECT_GE(row.at("read_fps").get<double>(), rate.get<double>());
    if (row.at("read_sustains_fps").size() < video_frame_rates().size()) {
      EXPECT_LT(row.at("read_fps").get<double>(), video_frame_rates()[row.at("read_sustains_fps").size()]);
    }
  }
  EXPECT_GE(t.record.histograms.at("read_frame_latency").count(), 15u);
}

TEST(Video, RegionOfALoopDevice) {
  std::string why;
  auto loop = drivelab::testing::LoopDevice::create(64 * kMiB, why);
  if (!loop) GTEST_SKIP() << "no loop device here: " << why;
  KindTest t("video", loop->path(),
             "{engine: " + testing::usable_engine() + ", format: 1080p, codec: prores422hq, region: first 25%}");
  t.ctx.device = runner::TargetDevice{.path = loop->path(),
                                      .name = "loop",
                                      .identity = loop->backing_file(),
                                      .capacity_bytes = 64 * kMiB,
                                      .writes_allowed = true};
  t.run_all();
  t.expect_checks_pass();
  EXPECT_EQ(t.record.details.at("file").at("region_length_bytes"), 16 * kMiB);
  EXPECT_TRUE(fs::exists(loop->path())) << "cleanup never removes a device";
  // Only the region was written.
  std::vector<unsigned char> block(4096);
  const int fd = ::open(loop->path().c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_EQ(::pread(fd, block.data(), block.size(), 0), 4096);
  EXPECT_TRUE(std::any_of(block.begin(), block.end(), [](unsigned char c) { return c != 0; }));
  ASSERT_EQ(::pread(fd, block.data(), block.size(), 20 * kMiB), 4096);
  EXPECT_TRUE(std::all_of(block.begin(), block.end(), [](unsigned char c) { return c == 0; }));
  ::close(fd);
}

}  // namespace
}  // namespace drivelab::emulators
