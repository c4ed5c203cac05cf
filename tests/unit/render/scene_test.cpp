// Scene data: point layouts, buckets, the order-independent checksum, and the packed file format.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <vector>

#include "drivelab/core/errors.hpp"
#include "drivelab/render/scene.hpp"
#include "render_harness.hpp"

namespace drivelab::render {
namespace {

TEST(RenderScene, LayoutsAreContiguousAttributeRecords) {
  const PointLayout* flip = find_point_layout("flip");
  ASSERT_NE(flip, nullptr);
  EXPECT_EQ(flip->bytes_per_point, 64u);  // P v id age life pscale Cd N: 12+12+4+4+4+4+12+12
  std::uint32_t end = 0;
  for (const Attribute& a : flip->attributes) {
    EXPECT_EQ(a.offset_bytes, end) << a.name;
    end += a.size_bytes;
  }
  EXPECT_EQ(end, 64u);
  EXPECT_EQ(flip->attributes.front().name, "P");
  EXPECT_EQ(find_point_layout("flip-lite")->bytes_per_point, 36u);
  EXPECT_EQ(find_point_layout("bgeo"), nullptr);
}

TEST(RenderScene, BucketsAreMortonOrderedCells) {
  const float origin[3] = {0, 0, 0}, x1[3] = {0.3f, 0, 0}, y1[3] = {0, 0.3f, 0}, z1[3] = {0, 0, 0.3f};
  EXPECT_EQ(bucket_of(origin, 4), 0u);
  EXPECT_EQ(bucket_of(x1, 4), 1u);  // cell (1,0,0): bit 0
  EXPECT_EQ(bucket_of(y1, 4), 2u);  // bit 1
  EXPECT_EQ(bucket_of(z1, 4), 4u);  // bit 2
  const float last[3] = {0.999f, 0.999f, 0.999f}, outside[3] = {7.0f, -1.0f, 1.0f};
  EXPECT_EQ(bucket_of(last, 32), 32u * 32 * 32 - 1);
  EXPECT_EQ(bucket_of(outside, 4), bucket_of(std::array<float, 3>{0.99f, 0.0f, 0.99f}.data(), 4)) << "clamped";
}

TEST(RenderScene, ChecksumIgnoresOrderAndCatchesChanges) {
  std::vector<std::byte> a(64 * 100);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::byte>(i * 7 + 3);
  PointChecksum ca;
  ca.add(a.data(), 100, 64);
  std::vector<std::byte> b(a.size());  // the points reversed
  for (std::size_t p = 0; p < 100; ++p) std::memcpy(&b[p * 64], &a[(99 - p) * 64], 64);
  PointChecksum cb;
  cb.add(b.data(), 50, 64);
  PointChecksum rest;
  rest.add(b.data() + 50 * 64, 50, 64);
  cb.merge(rest);
  EXPECT_EQ(ca, cb);
  b[17] ^= std::byte{1};
  PointChecksum cc;
  cc.add(b.data(), 100, 64);
  EXPECT_NE(ca, cc);
  std::memcpy(&b[64], &b[0], 64);  // a point duplicated over another
  PointChecksum cd;
  cd.add(b.data(), 100, 64);
  EXPECT_NE(ca, cd);
  PointChecksum odd;  // 36-byte points: the 4-byte tail counts
  odd.add(a.data(), 10, 36);
  a[35] ^= std::byte{1};
  PointChecksum odd2;
  odd2.add(a.data(), 10, 36);
  EXPECT_NE(odd, odd2);
}

TEST(RenderScene, WritesIndependentZstdBlocksThatUnpackToTheGeneratedPoints) {
  testing::TempDir dir;
  const auto path = dir.path() / "scene.bgeo.zst";
  const PointLayout& layout = *find_point_layout("flip");
  const SceneInfo info = write_scene(path, layout, 100'000, 30'000, 16, 7, 2, 1, [] { return false; });
  EXPECT_EQ(info.points, 100'000u);
  EXPECT_EQ(info.blocks, 4u);  // 30k + 30k + 30k + 10k
  EXPECT_EQ(info.unpacked_bytes, 6'400'000u);
  EXPECT_EQ(info.file_bytes, std::filesystem::file_size(path));
  EXPECT_LT(info.file_bytes, info.unpacked_bytes) << "ids, life, pscale and colour compress";
  const SceneHeader h = read_scene_header(path);
  ASSERT_EQ(h.blocks.size(), 4u);
  EXPECT_EQ(h.bytes_per_point, 64u);
  EXPECT_EQ(h.blocks[3].first_point, 90'000u);
  EXPECT_EQ(h.blocks[3].points, 10'000u);
  std::ifstream in(path, std::ios::binary);
  PointChecksum sum;
  std::int32_t expected_id = 0;
  for (const BlockEntry& b : h.blocks) {
    std::vector<std::byte> packed(b.compressed_bytes), raw(b.points * 64);
    in.seekg(static_cast<std::streamoff>(b.offset));
    in.read(reinterpret_cast<char*>(packed.data()), static_cast<std::streamsize>(packed.size()));
    decompress_block(packed.data(), packed.size(), raw.data(), raw.size());  // each block on its own
    sum.add(raw.data(), b.points, 64);
    std::uint32_t prev_bucket = 0;
    for (std::uint64_t i = 0; i < b.points; ++i) {
      float p[3];
      std::memcpy(p, &raw[i * 64], 12);
      for (float x : p) EXPECT_TRUE(x >= 0.0f && x < 1.0f);
      const std::uint32_t bk = bucket_of(p, 16);
      EXPECT_GE(bk, prev_bucket) << "points of a block are sorted by bucket";
      prev_bucket = bk;
      std::int32_t id;
      std::memcpy(&id, &raw[i * 64 + 24], 4);
      EXPECT_EQ(id, expected_id++);
    }
  }
  EXPECT_EQ(sum, info.checksum);
  // Same seed, same scene.
  const SceneInfo again = write_scene(dir.path() / "again", layout, 100'000, 30'000, 16, 7, 1, 1, [] { return false; });
  EXPECT_EQ(again.checksum, info.checksum);
  EXPECT_THROW(read_scene_header(dir.path() / "missing"), EnvironmentError);
  std::ofstream(dir.path() / "junk") << "not a scene file at all, not at all, not at all, not at all, no";
  EXPECT_THROW(read_scene_header(dir.path() / "junk"), EnvironmentError);
}

}  // namespace
}  // namespace drivelab::render
