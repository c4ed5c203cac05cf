// The workload model honours xfersize distributions, rdpct, seekpct, skew, range and hotband (shares
// counted over many draws), and the write filler produces the asked compression and dedup ratios.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "drivelab/core/errors.hpp"
#include "drivelab/emulators/vdbench_workload.hpp"

#ifdef DRIVELAB_HAVE_ZSTD
#include <zstd.h>
#endif

namespace drivelab::emulators {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;
constexpr int kDraws = 200'000;

WorkloadDef wd(std::string name) {
  WorkloadDef w;
  w.name = std::move(name);
  return w;
}

TEST(WorkloadStream, XfersizeRdpctAndSeekpctShares) {
  WorkloadDef w = wd("mix");
  w.xfersize = {{4096, 25}, {8192, 75}};
  w.rdpct = 70;
  w.seekpct = 30;
  const Region region{.offset_bytes = 8 * kMiB, .length_bytes = 64 * kMiB};
  WorkloadStream s({w}, region, 4096, 0, 1, Rng(11));
  std::map<std::uint32_t, int> sizes;
  int reads = 0, randoms = 0, sequential_ok = 0, sequential = 0;
  std::uint64_t prev_end = region.offset_bytes;
  for (int i = 0; i < kDraws; ++i) {
    const IoSpec io = s.next();
    ++sizes[io.length_bytes];
    if (io.op == io::Op::read) ++reads;
    ASSERT_EQ(io.offset_bytes % io.length_bytes == 0 || !io.random, true);
    ASSERT_GE(io.offset_bytes, region.offset_bytes);
    ASSERT_LE(io.offset_bytes + io.length_bytes, region.offset_bytes + region.length_bytes);
    if (io.random) {
      ++randoms;
    } else {
      ++sequential;
      // vdbench: a sequential I/O starts right after the previous one (or wraps to the start).
      if (io.offset_bytes == prev_end || io.offset_bytes == region.offset_bytes) ++sequential_ok;
    }
    prev_end = io.offset_bytes + io.length_bytes;
  }
  EXPECT_NEAR(sizes[4096] / double(kDraws), 0.25, 0.01);
  EXPECT_NEAR(sizes[8192] / double(kDraws), 0.75, 0.01);
  EXPECT_EQ(sizes.size(), 2u);
  EXPECT_NEAR(reads / double(kDraws), 0.70, 0.01);
  EXPECT_NEAR(randoms / double(kDraws), 0.30, 0.01);
  EXPECT_EQ(sequential_ok, sequential);
}

TEST(WorkloadStream, SkewHotbandAndRange) {
  // The 90-10 convention: 90% of the I/O on the first 10% of the region, 10% on the rest.
  WorkloadDef hot = wd("hot");
  hot.skew = 90;
  hot.hotband = true;
  hot.range_lo_pct = 0;
  hot.range_hi_pct = 10;
  WorkloadDef cold = wd("cold");
  cold.range_lo_pct = 10;
  cold.range_hi_pct = 100;
  const Region region{.offset_bytes = 0, .length_bytes = 100 * kMiB};
  WorkloadStream s({hot, cold}, region, 4096, 0, 1, Rng(3));
  const std::uint64_t tenth = 10 * kMiB;
  int in_hot_band = 0;
  std::vector<int> per(2);
  std::set<std::uint64_t> cold_blocks;
  for (int i = 0; i < kDraws; ++i) {
    const IoSpec io = s.next();
    ++per[io.workload];
    if (io.workload == 0) {
      ASSERT_LT(io.offset_bytes + io.length_bytes, tenth + 1);
    } else {
      ASSERT_GE(io.offset_bytes, tenth);
      cold_blocks.insert(io.offset_bytes);
    }
    if (io.offset_bytes < tenth) ++in_hot_band;
  }
  EXPECT_NEAR(per[0] / double(kDraws), 0.90, 0.01);
  EXPECT_NEAR(per[1] / double(kDraws), 0.10, 0.01);
  EXPECT_NEAR(in_hot_band / double(kDraws), 0.90, 0.01);
  // The cold workload spreads over its 90 MiB (23,040 blocks of 4 KiB): ~20k draws touch many.
  EXPECT_GT(cold_blocks.size(), 10'000u);
}

TEST(WorkloadStream, UnspecifiedSkewsSplitTheRestEvenly) {
  WorkloadDef a = wd("a");
  a.skew = 50;
  WorkloadStream s({a, wd("b"), wd("c")}, {0, 16 * kMiB}, 512, 0, 1, Rng(5));
  std::vector<int> per(3);
  for (int i = 0; i < kDraws; ++i) ++per[s.next().workload];
  EXPECT_NEAR(per[0] / double(kDraws), 0.50, 0.01);
  EXPECT_NEAR(per[1] / double(kDraws), 0.25, 0.01);
  EXPECT_NEAR(per[2] / double(kDraws), 0.25, 0.01);
}

TEST(WorkloadStream, SequentialStreamsStartInTheirOwnSliceAndWrap) {
  WorkloadDef w = wd("seq");
  w.seekpct = 0;
  w.xfersize = {{65536, 100}};
  const Region region{.offset_bytes = 0, .length_bytes = 4 * kMiB};
  WorkloadStream s0({w}, region, 4096, 0, 2, Rng(1));
  WorkloadStream s1({w}, region, 4096, 1, 2, Rng(1));
  EXPECT_EQ(s0.next().offset_bytes, 0u);
  EXPECT_EQ(s1.next().offset_bytes, 2 * kMiB);
  std::uint64_t last = 0;
  for (int i = 1; i < 64; ++i) last = s0.next().offset_bytes;  // 64 x 64 KiB = the whole 4 MiB
  EXPECT_EQ(last, 4 * kMiB - 65536);
  EXPECT_EQ(s0.next().offset_bytes, 0u) << "wraps to the range start";
}

TEST(WorkloadStream, RejectsARangeSmallerThanTheXfersizeAndMisalignedSizes) {
  WorkloadDef w = wd("tiny");
  w.range_hi_pct = 0.001;
  w.xfersize = {{65536, 100}};
  EXPECT_THROW(WorkloadStream({w}, {0, 64 * kMiB}, 4096, 0, 1, Rng(1)), ConfigError);
  WorkloadDef m = wd("odd");
  m.xfersize = {{1024, 100}};
  EXPECT_THROW(WorkloadStream({m}, {0, 64 * kMiB}, 4096, 0, 1, Rng(1)), ConfigError);
  EXPECT_NO_THROW(WorkloadStream({m}, {0, 64 * kMiB}, 512, 0, 1, Rng(1)));
}

TEST(WriteFiller, DedupRatioIsTotalOverDistinctUnits) {
  WriteFiller f(1.0, 4.0, 4096, Rng(9));
  std::vector<std::byte> buf(64 * 1024);
  std::set<std::string> distinct;
  for (int i = 0; i < 400; ++i) {  // 400 x 16 units = 6,400 units
    f.fill(buf);
    for (std::size_t u = 0; u < buf.size(); u += 4096)
      distinct.emplace(reinterpret_cast<const char*>(buf.data() + u), 4096);
  }
  EXPECT_EQ(f.units(), 6400u);
  // Unique units ~ 6400/4 = 1600, plus at most 64 shared duplicate contents.
  const double ratio = 6400.0 / static_cast<double>(distinct.size());
  EXPECT_NEAR(ratio, 6400.0 / (1600 + 64), 0.25) << distinct.size();
  EXPECT_NEAR(static_cast<double>(f.unique_units()), 1600, 120);
  // Duplicates are the same in another filler (another stream or workload).
  WriteFiller g(1.0, 1e6, 4096, Rng(10));  // almost never unique
  std::vector<std::byte> one(4096);
  g.fill(one);
  EXPECT_EQ(distinct.count(std::string(reinterpret_cast<const char*>(one.data()), 4096)), 1u);
}

TEST(WriteFiller, UniqueDataNeverRepeats) {
  WriteFiller f(1.0, 1.0, 4096, Rng(2));
  std::vector<std::byte> buf(8192);
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    f.fill(buf);
    seen.emplace(reinterpret_cast<const char*>(buf.data()), 4096);
    seen.emplace(reinterpret_cast<const char*>(buf.data() + 4096), 4096);
  }
  EXPECT_EQ(seen.size(), 2000u);
  // Refills of a buffer laid out before only restamp the identities: still never a repeat.
  for (int i = 0; i < 1000; ++i) {
    f.fill(buf, /*laid_out=*/true);
    seen.emplace(reinterpret_cast<const char*>(buf.data()), 4096);
    seen.emplace(reinterpret_cast<const char*>(buf.data() + 4096), 4096);
  }
  EXPECT_EQ(seen.size(), 4000u);
  EXPECT_EQ(f.unique_units(), 4000u);
}

#ifdef DRIVELAB_HAVE_ZSTD
/// `laid_out`: after the first fill, refill as the job does for a slot that wrote before.
double zstd_ratio(double compratio, std::uint32_t block, bool laid_out = false) {
  WriteFiller f(compratio, 1.0, 4096, Rng(4));
  std::vector<std::byte> buf(block);
  std::vector<char> out(ZSTD_compressBound(block));
  double in = 0, compressed = 0;
  for (int i = 0; i < 256; ++i) {
    f.fill(buf, laid_out && i > 0);
    // Each block on its own, as a compressing drive or filesystem does (level 1: lz4-like speed).
    const std::size_t n = ZSTD_compress(out.data(), out.size(), buf.data(), buf.size(), 1);
    EXPECT_FALSE(ZSTD_isError(n));
    in += block;
    compressed += static_cast<double>(n);
  }
  return in / compressed;
}

TEST(WriteFiller, ZstdCompressesToAboutCompratio) {
  EXPECT_NEAR(zstd_ratio(1.0, 4096), 1.0, 0.05);
  EXPECT_NEAR(zstd_ratio(2.0, 4096), 2.0, 0.2);
  EXPECT_NEAR(zstd_ratio(4.0, 8192), 4.0, 0.4);
  EXPECT_NEAR(zstd_ratio(3.0, 65536), 3.0, 0.3);
  // The same with restamped buffers (each block is compressed on its own).
  EXPECT_NEAR(zstd_ratio(1.0, 4096, true), 1.0, 0.05);
  EXPECT_NEAR(zstd_ratio(2.0, 4096, true), 2.0, 0.2);
  EXPECT_NEAR(zstd_ratio(3.0, 65536, true), 3.0, 0.3);
}
#endif

}  // namespace
}  // namespace drivelab::emulators
