#pragma once
/// \file scene.hpp
/// Scene data of the `render` emulator: packed point blocks on the target, in the manner of
/// Houdini's .bgeo.sc (points stored in independently compressed blocks of about 10 MB; Houdini
/// uses Blosc, we use zstd from Debian's libzstd). docs/render.md has the model and its sources.
///
/// A point is an array-of-structures record of `PointLayout::bytes_per_point` bytes. Every layout
/// starts with the position P (3 x float32, in the unit cube [0, 1)^3), which the repack phase
/// buckets on. The `flip` layout (64 bytes) carries the attributes a FLIP particle cache has in
/// Houdini: P, v (velocity), id, age, life, pscale, Cd (colour), N (normal).
///
/// File format (little-endian, ours): a 64-byte header ("DLRPTS01", bytes per point, points,
/// blocks, points per block, table offset), the blocks (each `ZSTD_compress` of the points'
/// bytes), then the block table (offset, compressed bytes, first point, points per block).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace drivelab::render {

/// One attribute of a point (Houdini's standard attribute names).
struct Attribute {
  std::string_view name;       ///< "P", "v", "id", ...
  std::string_view type;       ///< "float32x3", "int32", "float32"
  std::uint32_t offset_bytes;  ///< within the point record
  std::uint32_t size_bytes;
};

/// A point layout preset.
struct PointLayout {
  std::string_view id;  ///< "flip" | "flip-lite"
  std::uint32_t bytes_per_point;
  std::span<const Attribute> attributes;
};

std::span<const PointLayout> point_layouts() noexcept;
const PointLayout* find_point_layout(std::string_view id) noexcept;

/// Order-independent checksum of a multiset of points: count and the sum (mod 2^64) of a 64-bit
/// hash of each point's bytes. Equal checksums before and after a permutation of whole points;
/// a lost, duplicated or altered point changes it (with probability 1 - 2^-64 per change).
struct PointChecksum {
  std::uint64_t points = 0;
  std::uint64_t sum = 0;
  /// Adds `count` points of `bpp` bytes each, read from `data`.
  void add(const std::byte* data, std::uint64_t count, std::uint32_t bpp) noexcept;
  void merge(const PointChecksum& o) noexcept {
    points += o.points;
    sum += o.sum;
  }
  bool operator==(const PointChecksum&) const = default;
};

/// The spatial bucket of a position: the cell of a grid x grid x grid lattice over the unit
/// cube, numbered in Morton (z-) order so that consecutive buckets are neighbours in space.
/// `grid` is a power of two, 1..1024. Positions outside [0, 1) are clamped.
std::uint32_t bucket_of(const float position[3], std::uint32_t grid) noexcept;

/// What write_scene produced.
struct SceneInfo {
  std::uint64_t points = 0;
  std::uint64_t blocks = 0;
  std::uint64_t points_per_block = 0;
  std::uint64_t file_bytes = 0;      ///< on disk, header and table included
  std::uint64_t unpacked_bytes = 0;  ///< points x bytes per point
  PointChecksum checksum;            ///< over every generated point
};

/// Generates `points` points of `layout` and writes them as packed blocks to `path` (created or
/// truncated), then fdatasync()s it and drops it from the page cache (so that the load phase reads
/// the drive). Block b's points lie in a random box of half the domain's side (a patch of a
/// simulation), sorted by bucket within the block. Uses `threads` threads; zstd `level`.
/// Returns early (info.points < points) when `stop()` turns true. Throws EnvironmentError on I/O
/// errors, InternalError on codec errors.
SceneInfo write_scene(const std::filesystem::path& path, const PointLayout& layout, std::uint64_t points,
                      std::uint64_t points_per_block, std::uint32_t bucket_grid, std::uint64_t seed, unsigned threads,
                      int level, const std::function<bool()>& stop);

/// The block table of a scene file.
struct BlockEntry {
  std::uint64_t offset = 0;
  std::uint64_t compressed_bytes = 0;
  std::uint64_t first_point = 0;
  std::uint64_t points = 0;
};
struct SceneHeader {
  std::uint32_t bytes_per_point = 0;
  std::uint64_t points = 0;
  std::uint64_t points_per_block = 0;
  std::vector<BlockEntry> blocks;
};
/// Reads the header and block table of `path`. Throws EnvironmentError if it is not a scene file.
SceneHeader read_scene_header(const std::filesystem::path& path);

/// Compresses / decompresses one block (zstd). decompress checks the size; throws InternalError.
std::vector<std::byte> compress_block(const std::byte* data, std::size_t bytes, int level);
void decompress_block(const std::byte* src, std::size_t src_bytes, std::byte* dst, std::size_t dst_bytes);

}  // namespace drivelab::render
