#include "drivelab/render/scene.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/core/fd.hpp"
#include "drivelab/core/rng.hpp"

namespace drivelab::render {
namespace {

// Houdini standard attributes (SideFX, "Geometry attributes"): P, v, id, age, life, pscale, Cd, N.
constexpr std::array kFlipAttributes{Attribute{"P", "float32x3", 0, 12},   Attribute{"v", "float32x3", 12, 12},
                                     Attribute{"id", "int32", 24, 4},      Attribute{"age", "float32", 28, 4},
                                     Attribute{"life", "float32", 32, 4},  Attribute{"pscale", "float32", 36, 4},
                                     Attribute{"Cd", "float32x3", 40, 12}, Attribute{"N", "float32x3", 52, 12}};
constexpr std::array kFlipLiteAttributes{Attribute{"P", "float32x3", 0, 12}, Attribute{"v", "float32x3", 12, 12},
                                         Attribute{"id", "int32", 24, 4}, Attribute{"age", "float32", 28, 4},
                                         Attribute{"life", "float32", 32, 4}};
constexpr std::array kLayouts{PointLayout{"flip", 64, kFlipAttributes},
                              PointLayout{"flip-lite", 36, kFlipLiteAttributes}};

constexpr char kMagic[8] = {'D', 'L', 'R', 'P', 'T', 'S', '0', '1'};
constexpr std::size_t kHeaderBytes = 64;

std::uint64_t mix64(std::uint64_t z) noexcept {  // splitmix64 finaliser
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::uint32_t spread_bits(std::uint32_t v) noexcept {  // 10 bits -> every third of 30 bits
  v &= 0x3FF;
  v = (v | (v << 16)) & 0x030000FF;
  v = (v | (v << 8)) & 0x0300F00F;
  v = (v | (v << 4)) & 0x030C30C3;
  v = (v | (v << 2)) & 0x09249249;
  return v;
}

void put_f32(std::byte* p, float v) noexcept { std::memcpy(p, &v, 4); }
void put_u64(std::byte* p, std::uint64_t v) noexcept { std::memcpy(p, &v, 8); }
std::uint64_t get_u64(const std::byte* p) noexcept {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

void pwrite_all(int fd, const void* data, std::size_t bytes, std::uint64_t offset, const std::filesystem::path& path) {
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::pwrite(fd, p, bytes, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno("render: write " + path.string(), errno);
    }
    p += n;
    bytes -= static_cast<std::size_t>(n);
    offset += static_cast<std::uint64_t>(n);
  }
}

void pread_all(int fd, void* data, std::size_t bytes, std::uint64_t offset, const std::filesystem::path& path) {
  auto* p = static_cast<char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::pread(fd, p, bytes, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_errno("render: read " + path.string(), errno);
    if (n == 0)
      throw EnvironmentError(fmt::format("render: {} is truncated (not a complete scene file)", path.string()));
    p += n;
    bytes -= static_cast<std::size_t>(n);
    offset += static_cast<std::uint64_t>(n);
  }
}

/// Fills `out` with block `b`'s points: positions in a random half-side box, sorted by bucket.
void generate_block(std::byte* out, std::uint64_t first, std::uint64_t count, const PointLayout& layout,
                    std::uint32_t grid, std::uint64_t seed, std::uint64_t block) {
  Rng rng = Rng(seed).split(block);
  const double ox = rng.uniform01() * 0.5, oy = rng.uniform01() * 0.5, oz = rng.uniform01() * 0.5;
  struct Keyed {
    std::uint32_t bucket;
    float p[3];
  };
  std::vector<Keyed> keys(count);
  for (auto& k : keys) {
    k.p[0] = static_cast<float>(ox + rng.uniform01() * 0.5);
    k.p[1] = static_cast<float>(oy + rng.uniform01() * 0.5);
    k.p[2] = static_cast<float>(oz + rng.uniform01() * 0.5);
    k.bucket = bucket_of(k.p, grid);
  }
  std::sort(keys.begin(), keys.end(), [](const Keyed& a, const Keyed& b) { return a.bucket < b.bucket; });
  const std::uint32_t bpp = layout.bytes_per_point;
  for (std::uint64_t i = 0; i < count; ++i) {
    std::byte* p = out + i * bpp;
    const float vx = static_cast<float>(rng.uniform01() - 0.5), vy = static_cast<float>(rng.uniform01() * -2.0),
                vz = static_cast<float>(rng.uniform01() - 0.5);
    const float life = static_cast<float>(1.0 + 2.0 * rng.uniform01());
    for (int a = 0; a < 3; ++a) put_f32(p + 4 * a, keys[i].p[a]);
    put_f32(p + 12, vx);
    put_f32(p + 16, vy);
    put_f32(p + 20, vz);
    const auto id = static_cast<std::int32_t>((first + i) & 0x7FFFFFFF);
    std::memcpy(p + 24, &id, 4);
    put_f32(p + 28, static_cast<float>(rng.uniform01()) * life);
    put_f32(p + 32, life);
    if (bpp >= 64) {
      put_f32(p + 36, 0.01f);
      const float speed = std::sqrt(vx * vx + vy * vy + vz * vz);
      put_f32(p + 40, 0.1f);
      put_f32(p + 44, 0.3f + 0.2f * speed);
      put_f32(p + 48, 0.9f);
      const float inv = speed > 0 ? 1.0f / speed : 0.0f;
      put_f32(p + 52, vx * inv);
      put_f32(p + 56, vy * inv);
      put_f32(p + 60, vz * inv);
    }
  }
}

}  // namespace

std::span<const PointLayout> point_layouts() noexcept { return kLayouts; }

const PointLayout* find_point_layout(std::string_view id) noexcept {
  for (const PointLayout& l : kLayouts)
    if (l.id == id) return &l;
  return nullptr;
}

void PointChecksum::add(const std::byte* data, std::uint64_t count, std::uint32_t bpp) noexcept {
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::byte* p = data + i * bpp;
    std::uint64_t h = 0x243F6A8885A308D3ull;
    std::uint32_t off = 0;
    for (; off + 8 <= bpp; off += 8) h = mix64(h ^ get_u64(p + off));
    if (off < bpp) {
      std::uint64_t tail = 0;
      std::memcpy(&tail, p + off, bpp - off);
      h = mix64(h ^ tail ^ (std::uint64_t{bpp - off} << 56));
    }
    sum += h;
  }
  points += count;
}

std::uint32_t bucket_of(const float position[3], std::uint32_t grid) noexcept {
  std::uint32_t c[3];
  for (int a = 0; a < 3; ++a) {
    const float x = position[a] * static_cast<float>(grid);
    c[a] = !(x > 0) ? 0 : x >= static_cast<float>(grid) ? grid - 1 : static_cast<std::uint32_t>(x);
  }
  return spread_bits(c[0]) | (spread_bits(c[1]) << 1) | (spread_bits(c[2]) << 2);
}

std::vector<std::byte> compress_block(const std::byte* data, std::size_t bytes, int level) {
  std::vector<std::byte> out(ZSTD_compressBound(bytes));
  const std::size_t n = ZSTD_compress(out.data(), out.size(), data, bytes, level);
  if (ZSTD_isError(n)) throw InternalError(fmt::format("render: zstd compress: {}", ZSTD_getErrorName(n)));
  out.resize(n);
  out.shrink_to_fit();
  return out;
}

void decompress_block(const std::byte* src, std::size_t src_bytes, std::byte* dst, std::size_t dst_bytes) {
  const std::size_t n = ZSTD_decompress(dst, dst_bytes, src, src_bytes);
  if (ZSTD_isError(n)) throw InternalError(fmt::format("render: zstd decompress: {}", ZSTD_getErrorName(n)));
  if (n != dst_bytes)
    throw InternalError(fmt::format("render: a block unpacked to {} bytes, expected {}", n, dst_bytes));
}

SceneInfo write_scene(const std::filesystem::path& path, const PointLayout& layout, std::uint64_t points,
                      std::uint64_t points_per_block, std::uint32_t grid, std::uint64_t seed, unsigned threads,
                      int level, const std::function<bool()>& stop) {
  UniqueFd fd = open_no_follow(path, O_WRONLY | O_CREAT | O_TRUNC);
  if (!fd) throw_errno("render: create " + path.string(), errno);
  const std::uint32_t bpp = layout.bytes_per_point;
  const std::uint64_t nblocks = (points + points_per_block - 1) / points_per_block;
  threads = std::max(1u, threads);
  SceneInfo info;
  info.points_per_block = points_per_block;
  std::vector<BlockEntry> table;
  std::uint64_t offset = kHeaderBytes;
  std::vector<std::vector<std::byte>> packed(threads);
  std::vector<PointChecksum> sums(threads);
  for (std::uint64_t batch = 0; batch < nblocks && !stop(); batch += threads) {
    const unsigned n = static_cast<unsigned>(std::min<std::uint64_t>(threads, nblocks - batch));
    std::vector<std::exception_ptr> errors(n);
    const auto work = [&](unsigned t) {
      try {
        const std::uint64_t b = batch + t, first = b * points_per_block;
        const std::uint64_t count = std::min(points_per_block, points - first);
        std::vector<std::byte> raw(count * bpp);
        generate_block(raw.data(), first, count, layout, grid, seed, b);
        sums[t].add(raw.data(), count, bpp);
        packed[t] = compress_block(raw.data(), raw.size(), level);
      } catch (...) {
        errors[t] = std::current_exception();
      }
    };
    {
      std::vector<std::jthread> pool;
      for (unsigned t = 1; t < n; ++t) pool.emplace_back(work, t);
      work(0);
    }
    for (auto& e : errors)
      if (e) std::rethrow_exception(e);
    for (unsigned t = 0; t < n; ++t) {
      const std::uint64_t b = batch + t, first = b * points_per_block;
      pwrite_all(fd.get(), packed[t].data(), packed[t].size(), offset, path);
      table.push_back({offset, packed[t].size(), first, std::min(points_per_block, points - first)});
      offset += packed[t].size();
      info.points += table.back().points;
      packed[t] = {};
    }
  }
  for (const auto& s : sums) info.checksum.merge(s);
  info.blocks = table.size();
  // Table, then header (written last: a scene file with a valid header is complete).
  std::vector<std::byte> t(table.size() * 32);
  for (std::size_t i = 0; i < table.size(); ++i) {
    put_u64(&t[i * 32], table[i].offset);
    put_u64(&t[i * 32 + 8], table[i].compressed_bytes);
    put_u64(&t[i * 32 + 16], table[i].first_point);
    put_u64(&t[i * 32 + 24], table[i].points);
  }
  pwrite_all(fd.get(), t.data(), t.size(), offset, path);
  std::array<std::byte, kHeaderBytes> h{};
  std::memcpy(h.data(), kMagic, 8);
  std::memcpy(&h[8], &bpp, 4);
  put_u64(&h[16], info.points);
  put_u64(&h[24], info.blocks);
  put_u64(&h[32], points_per_block);
  put_u64(&h[40], offset);
  pwrite_all(fd.get(), h.data(), h.size(), 0, path);
  info.file_bytes = offset + t.size();
  info.unpacked_bytes = info.points * bpp;
  if (::fdatasync(fd.get()) != 0) throw_errno("render: fdatasync " + path.string(), errno);
  ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED);  // the load phase must read the drive
  return info;
}

SceneHeader read_scene_header(const std::filesystem::path& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) throw_errno("render: open " + path.string(), errno);
  std::array<std::byte, kHeaderBytes> h{};
  pread_all(fd.get(), h.data(), h.size(), 0, path);
  if (std::memcmp(h.data(), kMagic, 8) != 0)
    throw EnvironmentError(fmt::format("render: {} is not a drivelab scene file", path.string()));
  SceneHeader s;
  std::memcpy(&s.bytes_per_point, &h[8], 4);
  s.points = get_u64(&h[16]);
  const std::uint64_t nblocks = get_u64(&h[24]);
  s.points_per_block = get_u64(&h[32]);
  const std::uint64_t table_offset = get_u64(&h[40]);
  std::vector<std::byte> t(nblocks * 32);
  pread_all(fd.get(), t.data(), t.size(), table_offset, path);
  s.blocks.resize(nblocks);
  for (std::size_t i = 0; i < nblocks; ++i)
    s.blocks[i] = {get_u64(&t[i * 32]), get_u64(&t[i * 32 + 8]), get_u64(&t[i * 32 + 16]), get_u64(&t[i * 32 + 24])};
  return s;
}

}  // namespace drivelab::render
