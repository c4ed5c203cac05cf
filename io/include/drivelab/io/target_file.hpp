#pragma once
/// \file target_file.hpp
/// The data file a synthetic I/O test runs on: `<target>/drivelab-<test>.dat`.
///
/// Rules (and why):
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
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "drivelab/core/fd.hpp"

namespace drivelab::io {

struct TargetFileSpec {
  std::filesystem::path dir;    ///< the target directory (must exist)
  std::string test_name;        ///< file name "drivelab-<test_name>.dat"
  std::uint64_t size_bytes = 0;
  bool direct = true;           ///< open the I/O descriptor with O_DIRECT
  bool fill = true;             ///< write incompressible data (skipped when a filled file is reused)
  std::uint64_t seed = 1;       ///< seeds the fill data (any value: it only has to be incompressible)
};

/// Fill progress callback: bytes written so far and in total. Return false to abort the fill
/// (stop request); TargetFile::filled() then stays false and the file has no marker.
using FillProgress = std::function<bool(std::uint64_t done_bytes, std::uint64_t total_bytes)>;

/// An open target file (move-only; closes on destruction; the file itself stays unless remove()).
class TargetFile {
 public:
  /// Creates or reuses the file (see file comment). Throws EnvironmentError: target missing,
  /// no free space ("not enough free space in <dir> for drivelab-x.dat: need 2 GiB, 1.3 GiB
  /// available"), O_DIRECT unsupported, permission denied, write errors during the fill.
  static TargetFile open(const TargetFileSpec& spec, const FillProgress& progress = {});

  TargetFile() = default;
  TargetFile(TargetFile&&) noexcept = default;
  TargetFile& operator=(TargetFile&&) noexcept = default;

  const std::filesystem::path& path() const noexcept { return path_; }
  /// The descriptor for the test's I/O (O_RDWR, plus O_DIRECT when direct()).
  int fd() const noexcept { return fd_.get(); }
  std::uint64_t size_bytes() const noexcept { return size_bytes_; }
  bool direct() const noexcept { return direct_; }
  /// Alignment that O_DIRECT requires of offsets and lengths (bytes; 512 or 4096 usually; 1 when
  /// not direct()). Buffers aligned to 4096 always satisfy the memory alignment.
  std::uint32_t direct_alignment_bytes() const noexcept { return direct_alignment_bytes_; }
  /// The file existed with our fill marker and the right size, so it was not rewritten.
  bool reused() const noexcept { return reused_; }
  /// The file holds written data everywhere (filled now, or reused).
  bool filled() const noexcept { return filled_; }
  /// Closes and unlinks the file. Never throws.
  void remove() noexcept;

 private:
  std::filesystem::path path_;
  UniqueFd fd_;
  std::uint64_t size_bytes_ = 0;
  bool direct_ = false;
  std::uint32_t direct_alignment_bytes_ = 512;
  bool reused_ = false;
  bool filled_ = false;
};

/// `<dir>/drivelab-<test_name>.dat`.
std::filesystem::path target_file_path(const std::filesystem::path& dir, const std::string& test_name);

/// The type of the filesystem holding `path` as /proc/self/mountinfo names it ("ext4", "xfs",
/// "tmpfs"), "unknown" if it cannot be told.
std::string filesystem_type(const std::filesystem::path& path);

/// "the filesystem of <dir> (<type>) does not support O_DIRECT; set io.direct: false"
std::string direct_unsupported_message(const std::filesystem::path& dir);

}  // namespace drivelab::io
