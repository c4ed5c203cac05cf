// Kind `precondition`: decoding, a fill + random pass on a data file (reused by the test it was
// made for), stop handling, and a region of a real loop device.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "../io/target_loop_device.hpp"
#include "drivelab/emulators/precondition.hpp"
#include "drivelab/io/target_file.hpp"
#include "target_kind_harness.hpp"

namespace drivelab::emulators {
namespace {

using testing::KindTest;
using testing::TempDir;
namespace fs = std::filesystem;
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

TEST(PreconditionDecode, DefaultsAreSnia128kFillAtQd32) {
  config::Diagnostics diags;
  const PreconditionConfig c = decode_precondition(config::Node(YAML::Node(), "precondition", "t", &diags));
  EXPECT_TRUE(diags.empty());
  EXPECT_EQ(c.xfersize_bytes, 128 * 1024u);
  EXPECT_EQ(c.iodepth, 32u);
  EXPECT_EQ(c.random_passes, 0u);
  EXPECT_EQ(c.random_xfersize_bytes, 4096u);
  EXPECT_FALSE(c.region.has_value());
}

TEST(PreconditionDecode, ReportsEveryProblem) {
  const std::string p = testing::decode_problems(
      "precondition", "{xfersize: 1000, random_passes: 101, region: half, iodepht: 4, region_size: 1}");
  EXPECT_NE(p.find("xfersize must be a multiple of 512 bytes"), std::string::npos) << p;
  EXPECT_NE(p.find("random_passes must be between 0 and 100"), std::string::npos) << p;
  EXPECT_NE(p.find("'half' is not a region"), std::string::npos) << p;
  EXPECT_NE(p.find("unknown key 'iodepht'"), std::string::npos) << p;
  EXPECT_NE(p.find("unknown key 'region_size'"), std::string::npos) << p;
}

TEST(PreconditionDecode, EffectiveConfigDecodesBack) {
  config::Diagnostics diags;
  const auto doc = config::Document::load_string(
      "precondition: {random_passes: 2, region: {offset: 10%, size: 1GiB}, for_test: t, file_size: 64MiB}", "t", diags);
  const PreconditionConfig c = decode_precondition(doc.root(diags).child("precondition"));
  const auto again = config::Document::load_string("precondition: " + to_json(c).dump(), "t2", diags);
  const PreconditionConfig d = decode_precondition(again.root(diags).child("precondition"));
  EXPECT_TRUE(diags.empty()) << diags.to_string();
  EXPECT_EQ(to_json(c), to_json(d));
  EXPECT_EQ(d.region, (io::Region{io::Extent::of_percent(10), io::Extent::of_bytes(1024 * kMiB)}));
  EXPECT_EQ(d.random_passes, 2u);
}

TEST(Precondition, FillsTheDataFileOfTheNamedTestWhichThenReusesIt) {
  TempDir dir;
  KindTest t("precondition", dir.path(),
             "{engine: " + testing::usable_engine() + ", for_test: later, file_size: 16MiB, random_passes: 1}");
  EXPECT_EQ(t.emulator->device_access(), runner::DeviceAccess::read_write);
  t.run_all();
  const fs::path file = dir.path() / "drivelab-later.dat";
  ASSERT_TRUE(fs::exists(file));
  EXPECT_EQ(fs::file_size(file), 16 * kMiB);
  EXPECT_EQ(t.metric("bytes_written"), 32.0 * kMiB) << "fill (1 x 16 MiB) + one random pass (1 x 16 MiB)";
  EXPECT_EQ(t.metric("region_bytes"), 16.0 * kMiB);
  EXPECT_GT(t.metric("fill_mb_s"), 0);
  EXPECT_GT(t.metric("random_mb_s"), 0);
  t.expect_checks_pass();
  EXPECT_FALSE(t.record.intervals.empty());
  EXPECT_EQ(t.record.intervals.front().values.front().first, "pass");
  ASSERT_EQ(t.record.details.at("passes").size(), 2u);
  EXPECT_EQ(t.record.details.at("passes")[1].at("kind"), "random");

  // The test it was made for (same name and size) finds a filled file and does not refill it.
  const io::TargetFile reused = io::TargetFile::open({.dir = dir.path(), .test_name = "later", .size_bytes = 16 * kMiB},
                                                     [](std::uint64_t, std::uint64_t) -> bool {
                                                       ADD_FAILURE() << "a preconditioned file must not be refilled";
                                                       return true;
                                                     });
  EXPECT_TRUE(reused.reused());
  // Incompressible data everywhere: no 4 KiB block of the first MiB is all zeros.
  std::vector<unsigned char> head(kMiB);
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_EQ(::pread(fd, head.data(), head.size(), 0), static_cast<ssize_t>(head.size()));
  ::close(fd);
  for (std::size_t b = 0; b < head.size(); b += 4096)
    EXPECT_FALSE(std::all_of(head.begin() + static_cast<long>(b), head.begin() + static_cast<long>(b + 4096),
                             [](unsigned char c) { return c == 0; }))
        << "block " << b / 4096;
}

TEST(Precondition, StopLeavesNoFillMarker) {
  TempDir dir;
  KindTest t("precondition", dir.path(), "{engine: " + testing::usable_engine() + ", file_size: 16MiB}");
  t.emulator->prepare(t.ctx);
  t.stop.request();
  t.emulator->run(t.ctx);
  t.emulator->cleanup(t.ctx);
  EXPECT_LT(t.metric("bytes_written"), 16.0 * kMiB);
  const io::TargetFile again =
      io::TargetFile::open({.dir = dir.path(), .test_name = "unit", .size_bytes = 16 * kMiB, .fill = true},
                           [](std::uint64_t, std::uint64_t) { return true; });
  EXPECT_FALSE(again.reused()) << "an interrupted precondition must not pass for a filled file";
}

TEST(Precondition, RegionOfALoopDevice) {
  std::string why;
  auto loop = drivelab::testing::LoopDevice::create(64 * kMiB, why);
  if (!loop) GTEST_SKIP() << "no loop device here: " << why;
  KindTest t("precondition", loop->path(),
             "{engine: " + testing::usable_engine() + ", region: {offset: 16MiB, size: 50%}, random_passes: 1}");
  t.ctx.device = runner::TargetDevice{.path = loop->path(),
                                      .name = "loop",
                                      .identity = loop->backing_file(),
                                      .capacity_bytes = 64 * kMiB,
                                      .writes_allowed = true};
  t.run_all();
  t.expect_checks_pass();
  EXPECT_EQ(t.metric("region_bytes"), 32.0 * kMiB);
  EXPECT_EQ(t.record.details.at("target").at("region_offset_bytes"), 16 * kMiB);
  // Written inside the region only: the sparse backing file stays a hole before and after it.
  const int fd = ::open(loop->path().c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  std::vector<unsigned char> block(4096);
  const auto zero = [&](std::uint64_t off) {
    EXPECT_EQ(::pread(fd, block.data(), block.size(), static_cast<off_t>(off)), 4096);
    return std::all_of(block.begin(), block.end(), [](unsigned char c) { return c == 0; });
  };
  EXPECT_TRUE(zero(16 * kMiB - 4096));
  EXPECT_FALSE(zero(16 * kMiB));
  EXPECT_FALSE(zero(48 * kMiB - 4096));
  EXPECT_TRUE(zero(48 * kMiB));
  ::close(fd);
}

}  // namespace
}  // namespace drivelab::emulators
