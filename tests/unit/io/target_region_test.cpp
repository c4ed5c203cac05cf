// Regions (parse, resolve, alignment) and TargetFile on a file with a region and on a real loop
// device (skipped where loop devices cannot be made: not root).
#include <gtest/gtest.h>

#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <stdexcept>

#include "drivelab/core/errors.hpp"
#include "drivelab/core/fd.hpp"
#include "drivelab/io/target_file.hpp"
#include "target_loop_device.hpp"
#include "temp_dir.hpp"

namespace drivelab::io {
namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

TEST(Region, ParsesTheTextForms) {
  EXPECT_EQ(parse_region("all"), Region{});
  EXPECT_EQ(parse_region("first 25%"), (Region{Extent::of_percent(0), Extent::of_percent(25)}));
  EXPECT_EQ(parse_region(" First 12.5% "), (Region{Extent::of_percent(0), Extent::of_percent(12.5)}));
  EXPECT_EQ(parse_region("25%"), (Region{Extent::of_percent(0), Extent::of_percent(25)}));
  EXPECT_EQ(parse_region("first 10GiB"), (Region{Extent::of_percent(0), Extent::of_bytes(10 * kGiB)}));
  EXPECT_EQ(parse_region("64m"), (Region{Extent::of_percent(0), Extent::of_bytes(64 * kMiB)}));
  for (const char* bad : {"", "first", "0%", "101%", "-5%", "half", "first 1q", "0"}) {
    try {
      parse_region(bad);
      ADD_FAILURE() << "'" << bad << "' parsed";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("is not a region"), std::string::npos) << e.what();
    }
  }
}

TEST(Region, PrintsFormsThatParseBack) {
  for (const char* text : {"all", "first 25%", "first 10 GiB"}) {
    const Region r = text == std::string("first 10 GiB") ? parse_region("first 10GiB") : parse_region(text);
    EXPECT_EQ(to_string(r), text);
  }
  EXPECT_EQ(to_string(Region{Extent::of_percent(50), Extent::of_bytes(kGiB)}), "offset 50%, size 1 GiB");
}

TEST(Region, ResolvesToOneMebibyteBoundaries) {
  // 4 GiB + 3 sectors: percentages land off the 1 MiB grid and are rounded down.
  const std::uint64_t cap = 4 * kGiB + 3 * 512;
  const ByteRange q = resolve_region(parse_region("first 25%"), cap, 512, "t");
  EXPECT_EQ(q.offset_bytes, 0u);
  EXPECT_EQ(q.length_bytes, kGiB);
  const ByteRange all = resolve_region(Region{}, cap, 512, "t");
  EXPECT_EQ(all.length_bytes, cap) << "a region reaching the end keeps the whole blocks up to it";
  const ByteRange all4k = resolve_region(Region{}, cap, 4096, "t");
  EXPECT_EQ(all4k.length_bytes, 4 * kGiB);
  const ByteRange mid = resolve_region({Extent::of_bytes(kGiB + 12345), Extent::of_percent(10)}, 10 * kGiB, 512, "t");
  EXPECT_EQ(mid.offset_bytes, kGiB);
  EXPECT_EQ(mid.length_bytes, kGiB);
  // Larger than what is left: clipped at the end.
  const ByteRange tail = resolve_region({Extent::of_percent(75), Extent::of_percent(50)}, 4 * kGiB, 512, "t");
  EXPECT_EQ(tail.offset_bytes, 3 * kGiB);
  EXPECT_EQ(tail.length_bytes, kGiB);
}

TEST(Region, EmptyOrOutsideRegionsAreConfigErrors) {
  EXPECT_THROW(resolve_region({Extent::of_bytes(5 * kGiB), Extent::of_percent(10)}, 4 * kGiB, 512, "/dev/x"),
               ConfigError);
  EXPECT_THROW(resolve_region(parse_region("first 100k"), 4 * kGiB, 512, "t"), ConfigError);  // < 1 MiB
  try {
    resolve_region({Extent::of_bytes(5 * kGiB), Extent::of_percent(10)}, 4 * kGiB, 512, "/dev/x");
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("beyond the end of /dev/x (4 GiB)"), std::string::npos) << e.what();
  }
}

TEST(TargetFileRegion, FileWithoutRegionAddressesAllOfIt) {
  drivelab::test_support::TempDir dir;
  const TargetFile f =
      TargetFile::open({.dir = dir.path(), .test_name = "r", .size_bytes = 3 * kMiB + 512, .fill = false});
  EXPECT_FALSE(f.is_device());
  EXPECT_EQ(f.region_offset(), 0u);
  EXPECT_EQ(f.region_length(), 3 * kMiB + 512);
}

TEST(TargetFileRegion, FileWithRegion) {
  drivelab::test_support::TempDir dir;
  TargetFile f = TargetFile::open({.dir = dir.path(),
                                   .test_name = "r",
                                   .size_bytes = 64 * kMiB,
                                   .fill = false,
                                   .region = parse_region("first 25%")});
  EXPECT_EQ(f.region_offset(), 0u);
  EXPECT_EQ(f.region_length(), 16 * kMiB);
  EXPECT_FALSE(f.filled());
  f.mark_filled();
  EXPECT_TRUE(f.filled());
  f = TargetFile{};
  // The marker makes the next opener (which wants data) reuse the file instead of filling it.
  const TargetFile again = TargetFile::open({.dir = dir.path(), .test_name = "r", .size_bytes = 64 * kMiB},
                                            [](std::uint64_t, std::uint64_t) -> bool {
                                              ADD_FAILURE() << "a marked file must not be refilled";
                                              return true;
                                            });
  EXPECT_TRUE(again.reused());
}

class LoopTarget : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    auto d = testing::LoopDevice::create(256 * kMiB, why);
    if (!d) GTEST_SKIP() << "no loop device here: " << why;
    loop_.emplace(std::move(*d));
  }
  std::optional<testing::LoopDevice> loop_;
};

TEST_F(LoopTarget, DeviceIsTheTargetFileWithRegionAndSize) {
  TargetFile whole = TargetFile::open({.dir = loop_->path(), .test_name = "ignored", .size_bytes = 0});
  EXPECT_TRUE(whole.is_device());
  EXPECT_TRUE(whole.filled());
  EXPECT_EQ(whole.path(), loop_->path());
  EXPECT_EQ(whole.size_bytes(), 256 * kMiB);
  EXPECT_EQ(whole.region_offset(), 0u);
  EXPECT_EQ(whole.region_length(), 256 * kMiB);
  EXPECT_GE(whole.direct_alignment_bytes(), 512u);

  const TargetFile quarter = TargetFile::open(
      {.dir = loop_->path(), .test_name = "dev", .region = Region{Extent::of_percent(50), Extent::of_percent(25)}});
  EXPECT_EQ(quarter.region_offset(), 128 * kMiB);
  EXPECT_EQ(quarter.region_length(), 64 * kMiB);

  // fio's size= on a device: the first size bytes (of the region).
  const TargetFile sized = TargetFile::open({.dir = loop_->path(), .test_name = "dev", .size_bytes = 32 * kMiB});
  EXPECT_EQ(sized.region_length(), 32 * kMiB);
  EXPECT_THROW(TargetFile::open({.dir = loop_->path(), .test_name = "dev", .size_bytes = 512 * kMiB}),
               EnvironmentError);

  // remove() closes a device; it never unlinks the device node.
  whole.remove();
  EXPECT_TRUE(std::filesystem::exists(loop_->path()));
}

TEST_F(LoopTarget, ReadOnlyDeviceOpensForReading) {
  {
    const int fd = ::open(loop_->path().c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    int ro = 1;
    ASSERT_EQ(::ioctl(fd, BLKROSET, &ro), 0);
    ::close(fd);
  }
  const TargetFile f = TargetFile::open({.dir = loop_->path(), .test_name = "dev", .direct = true});
  AlignedBuffer buf(4096);
  EXPECT_EQ(::pread(f.fd(), buf.data(), 4096, 0), 4096);
  EXPECT_LT(::pwrite(f.fd(), buf.data(), 4096, 0), 0) << "a read-only device must not take writes";
}

}  // namespace
}  // namespace drivelab::io
