#pragma once
/// \file target_file.hpp
/// The data a synthetic I/O test runs on: `<target>/drivelab-<test>.dat`, or a block device.
///
/// Rules for a file in a target directory (and why):
///  - Filled with incompressible pseudo-random data before use. A freshly created or fallocated
///    file has no written blocks: reads of it return zeros without reaching the device (sparse
///    holes / unwritten extents), and writes into it pay the filesystem's extent conversion. fio
///    lays out its files for the same reason.
///  - Reused: once filled, the file carries a fill marker (extended attribute `user.drivelab.fill`
///    = "drivelab-fill/1 size=<bytes>"); a later run that finds a file of the same size with that
///    marker skips the fill. On a filesystem without user xattrs the file is refilled each time.
///  - Page cache dropped (posix_fadvise DONTNEED) after the fill and on every open, so a buffered
///    (direct: false) test does not start from a cache warmed by the fill (fio: invalidate=1).
///  - Free space is checked before anything is written; the error names what is missing.
///  - O_DIRECT (direct = true): if the filesystem refuses it (open(2) fails with EINVAL) the
///    error names the filesystem: "the filesystem of /dev/shm (tmpfs) does not support O_DIRECT;
///    set io.direct: false". Buffers, offsets and lengths must then be multiples of
///    direct_alignment_bytes() (statx STATX_DIOALIGN, else the device's logical block size).
///
/// Block devices (TargetFileSpec::dir names a block device, as the runner passes it for
/// `--target /dev/sdX`): the device itself is the target file. Nothing is created, filled or
/// removed: the data is what is on the device (precondition it first: kind `precondition`,
/// docs/targets.md), remove() only closes. Whether writing is allowed was decided by the runner
/// (io/target_safety.hpp) before any test ran. As fio's `size=` on a device, a non-zero
/// `size_bytes` limits the test to the first size_bytes of the region.
///
/// Regions: the part of the target a test addresses, [region_offset(), region_offset() +
/// region_length()), in bytes from the start of the file or device. Every test that supports a
/// `region:` key adds region_offset() to its offsets and keeps them below the region's end.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "drivelab/core/fd.hpp"

namespace drivelab::io {

/// A position or length in a target: bytes, or a percentage of the target's capacity.
struct Extent {
  bool is_percent = true;
  double percent = 0;       ///< 0..100 when is_percent
  std::uint64_t bytes = 0;  ///< when !is_percent
  static Extent of_percent(double p) { return {true, p, 0}; }
  static Extent of_bytes(std::uint64_t b) { return {false, 0, b}; }
  std::uint64_t resolve(std::uint64_t capacity_bytes) const noexcept;
  friend bool operator==(const Extent&, const Extent&) = default;
};

/// `region: {offset: 0%, size: 25%}` or "first 25%" (docs/targets.md). Default: everything.
struct Region {
  Extent offset = Extent::of_percent(0);
  Extent size = Extent::of_percent(100);
  friend bool operator==(const Region&, const Region&) = default;
};

/// Regions start and end on this boundary (like partitions since Windows Vista and parted):
/// every power-of-two logical and physical block size and every SSD page size divides it.
inline constexpr std::uint64_t kRegionAlignBytes = std::uint64_t{1} << 20;

/// Parses the text forms: "all", "first 25%", "first 10GiB", "25%", "10GiB" ("X" = "first X").
/// Sizes as core/units.hpp reads them. Throws std::invalid_argument with the reason.
Region parse_region(std::string_view text);
/// "all", "first 25%", "offset 1 GiB, size 25%" (parse_region reads the first two back).
std::string to_string(const Region& region);

/// [offset, offset + length) in bytes.
struct ByteRange {
  std::uint64_t offset_bytes = 0;
  std::uint64_t length_bytes = 0;
};

/// Resolves a region against a target of `capacity_bytes`: offset rounded down to
/// kRegionAlignBytes; the end rounded down to kRegionAlignBytes, or, when the region reaches the
/// end of the target, to `block_bytes` (so "all" loses at most one partial block). Throws
/// ConfigError if the region is empty or starts beyond the end ("region offset 5 GiB is beyond
/// the end of /dev/loop0 (4 GiB)"); `what` names the target in messages.
ByteRange resolve_region(const Region& region, std::uint64_t capacity_bytes, std::uint32_t block_bytes,
                         std::string_view what);

struct TargetFileSpec {
  std::filesystem::path dir;  ///< the target directory (must exist), or a block device
  std::string test_name;      ///< file name "drivelab-<test_name>.dat"
  std::uint64_t size_bytes = 0;
  bool direct = true;                           ///< open the I/O descriptor with O_DIRECT
  bool fill = true;                             ///< write incompressible data (skipped when a filled file is reused)
  std::uint64_t seed = 1;                       ///< seeds the fill data (any value: it only has to be incompressible)
  std::optional<Region> region = std::nullopt;  ///< the part the test addresses (default: all of it)
};

/// Fill progress callback: bytes written so far and in total. Return false to abort the fill
/// (stop request); TargetFile::filled() then stays false and the file has no marker.
using FillProgress = std::function<bool(std::uint64_t done_bytes, std::uint64_t total_bytes)>;

/// An open target file (move-only; closes on destruction; the file itself stays unless remove()).
class TargetFile {
 public:
  /// Creates or reuses the file, or opens the device (see file comment). Throws EnvironmentError:
  /// target missing, no free space ("not enough free space in <dir> for drivelab-x.dat: need
  /// 2 GiB, 1.3 GiB available"), O_DIRECT unsupported, permission denied, write errors during
  /// the fill, a device smaller than size_bytes; ConfigError for an empty region. size_bytes may
  /// be 0 only for a device (all of the region). When it throws, a file it created (even one
  /// the kernel created before refusing O_DIRECT) or emptied to refill is removed; a file it
  /// found and left alone stays.
  static TargetFile open(const TargetFileSpec& spec, const FillProgress& progress = {});

  TargetFile() = default;
  TargetFile(TargetFile&&) noexcept = default;
  TargetFile& operator=(TargetFile&&) noexcept = default;

  /// The file, or the device as given.
  const std::filesystem::path& path() const noexcept { return path_; }
  /// The descriptor for the test's I/O (O_RDWR, plus O_DIRECT when direct(); a read-only device
  /// is opened O_RDONLY and its writes fail with EBADF).
  int fd() const noexcept { return fd_.get(); }
  /// The file's size, or the device's capacity (BLKGETSIZE64).
  std::uint64_t size_bytes() const noexcept { return size_bytes_; }
  bool is_device() const noexcept { return is_device_; }
  /// First byte the test addresses (a multiple of kRegionAlignBytes; 0 without a region).
  std::uint64_t region_offset() const noexcept { return region_.offset_bytes; }
  /// Bytes the test addresses from region_offset() (size_bytes() without a region on a file).
  std::uint64_t region_length() const noexcept { return region_.length_bytes; }
  bool direct() const noexcept { return direct_; }
  /// Alignment that O_DIRECT requires of offsets and lengths (bytes; 512 or 4096 usually; 1 when
  /// not direct()). Buffers aligned to 4096 always satisfy the memory alignment.
  std::uint32_t direct_alignment_bytes() const noexcept { return direct_alignment_bytes_; }
  /// The file existed with our fill marker and the right size, so it was not rewritten.
  bool reused() const noexcept { return reused_; }
  /// The file holds written data everywhere (filled now, or reused). Always true for a device:
  /// drivelab never fills a device implicitly (its data is what preconditioning left there).
  bool filled() const noexcept { return filled_; }
  /// Records that a test wrote every byte of the file itself (kind `precondition`): sets the
  /// fill marker, so that a later test of the same file and size reuses it. No-op on a device.
  /// Throws EnvironmentError if the marker cannot be set on a filesystem that has xattrs.
  void mark_filled();
  /// Closes and unlinks the file (a device is only closed). Never throws.
  void remove() noexcept;

 private:
  static TargetFile open_device(const TargetFileSpec& spec);
  // open()'s work on a file; sets `emptied` once it has truncated the file to refill it.
  static void open_file(TargetFile& tf, const TargetFileSpec& spec, const FillProgress& progress, bool& emptied);

  std::filesystem::path path_;
  UniqueFd fd_;
  std::uint64_t size_bytes_ = 0;
  bool direct_ = false;
  std::uint32_t direct_alignment_bytes_ = 512;
  bool reused_ = false;
  bool filled_ = false;
  bool is_device_ = false;
  ByteRange region_;
};

/// A test's cleanup of its file (the io, vdbench and video kinds): removed unless `keep` (the
/// kind's keep_file: left for the next run to reuse), and closed; `file` is empty afterwards.
/// Never throws.
inline void release_test_file(std::optional<TargetFile>& file, bool keep) noexcept {
  if (file && !keep) file->remove();
  file.reset();
}

/// `<dir>/drivelab-<test_name>.dat`.
std::filesystem::path target_file_path(const std::filesystem::path& dir, const std::string& test_name);

/// The type of the filesystem holding `path` as /proc/self/mountinfo names it ("ext4", "xfs",
/// "tmpfs"; the mount drivelab::mount_containing picks, as for the record), "unknown" if it
/// cannot be told.
std::string filesystem_type(const std::filesystem::path& path);

/// "the filesystem of <dir> (<type>) does not support O_DIRECT; set io.direct: false"
std::string direct_unsupported_message(const std::filesystem::path& dir);

}  // namespace drivelab::io
