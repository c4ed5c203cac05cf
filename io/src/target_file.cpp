#include "drivelab/io/target_file.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"
#include "drivelab/core/rng.hpp"
#include "drivelab/core/sysfs.hpp"
#include "drivelab/core/units.hpp"
#include "drivelab/io/storage_failure.hpp"
#include "drivelab/io/target_safety.hpp"

namespace drivelab::io {
namespace {

namespace fs = std::filesystem;

constexpr const char* kMarkerName = "user.drivelab.fill";
constexpr std::size_t kFillChunkBytes = 1 << 20;

std::string marker_value(std::uint64_t size_bytes) { return fmt::format("drivelab-fill/1 size={}", size_bytes); }

bool has_marker(int fd, std::uint64_t size_bytes) {
  char buf[128];
  const ssize_t n = ::fgetxattr(fd, kMarkerName, buf, sizeof buf);
  return n > 0 && std::string_view(buf, static_cast<std::size_t>(n)) == marker_value(size_bytes);
}

// Direct-I/O offset alignment: statx(STATX_DIOALIGN) (Linux 6.1+), else the logical block size
// of the block device behind the file (sysfs), else 512.
std::uint32_t direct_alignment(int fd) {
  struct statx stx{};
  if (::statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 && (stx.stx_mask & STATX_DIOALIGN) &&
      stx.stx_dio_offset_align > 0)
    return stx.stx_dio_offset_align;
  struct stat st{};
  if (::fstat(fd, &st) == 0) {
    const fs::path dev = fmt::format("/sys/dev/block/{}:{}", major(st.st_dev), minor(st.st_dev));
    for (const char* rel : {"queue/logical_block_size", "../queue/logical_block_size"}) {
      const auto bytes = read_sysfs_u64(dev / rel);
      if (bytes && *bytes >= 512 && *bytes <= UINT32_MAX) return static_cast<std::uint32_t>(*bytes);
    }
  }
  return 512;
}

/// Writes all of `data` at `offset`; a failed or empty write throws EnvironmentError worded by
/// storage_failure, timed from `fill_start_ns` (the fill of the test file).
void write_all(int fd, const std::byte* data, std::size_t len, std::uint64_t offset, const fs::path& path,
               std::int64_t fill_start_ns) {
  while (len > 0) {
    const ssize_t n = ::pwrite(fd, data, len, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)  // 0: no progress (would loop forever); < 0: ENOSPC, EIO, EROFS
      throw EnvironmentError(storage_failure({.op = Op::write,
                                              .length_bytes = len,
                                              .offset_bytes = offset,
                                              .file = path.native(),
                                              .result = n < 0 ? -errno : 0},
                                             seconds_between(fill_start_ns, monotonic_ns()), "fill of the test file"));
    data += n;
    len -= static_cast<std::size_t>(n);
    offset += static_cast<std::uint64_t>(n);
  }
}

// Writes size_bytes of xoshiro output through a buffered descriptor (any size, no alignment
// rules), makes it durable and drops it from the page cache. Returns false if aborted.
bool fill_file(const fs::path& path, std::uint64_t size_bytes, std::uint64_t seed, const FillProgress& progress) {
  UniqueFd fd = open_no_follow(path, O_WRONLY);
  if (!fd) throw_errno("open " + path.string(), errno);
  AlignedBuffer chunk(kFillChunkBytes);
  Rng rng(seed);
  const std::int64_t start_ns = monotonic_ns();
  for (std::uint64_t done = 0; done < size_bytes;) {
    for (std::size_t i = 0; i < kFillChunkBytes; i += sizeof(std::uint64_t)) {
      const std::uint64_t word = rng();
      std::memcpy(chunk.data() + i, &word, sizeof word);
    }
    const auto len = static_cast<std::size_t>(std::min<std::uint64_t>(kFillChunkBytes, size_bytes - done));
    write_all(fd.get(), chunk.data(), len, done, path, start_ns);
    done += len;
    if (progress && !progress(done, size_bytes)) return false;
  }
  // Buffered: a full or failing device often shows only here (EIO or ENOSPC at writeback).
  if (::fdatasync(fd.get()) != 0)
    throw EnvironmentError(storage_sync_failure(path.native(), "the fill of the test file", errno));
  // Marker last: a file whose fill was cut short is never taken for a filled one.
  if (::fsetxattr(fd.get(), kMarkerName, marker_value(size_bytes).data(), marker_value(size_bytes).size(), 0) != 0 &&
      errno != ENOTSUP && errno != EPERM)
    throw_errno("setting the fill marker on " + path.string(), errno);
  return true;
}

[[noreturn]] void throw_no_space(const fs::path& dir, const fs::path& path, std::uint64_t need, std::uint64_t avail) {
  throw EnvironmentError(fmt::format("not enough free space in {} for {}: need {}, {} available", dir.string(),
                                     path.filename().string(), format_size(need), format_size(avail)));
}

std::string extent_text(const Extent& e) {
  return e.is_percent ? fmt::format("{:g}%", e.percent) : format_size(e.bytes);
}

Extent parse_extent(std::string_view text, std::string_view whole) {
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument(fmt::format(
        "'{}' is not a region: {} (use all, first 25%, first 10GiB, or {{offset: 0%, size: 25%}})", whole, why));
  };
  if (!text.empty() && text.back() == '%') {
    const std::string number(text.substr(0, text.size() - 1));
    char* end = nullptr;
    const double p = std::strtod(number.c_str(), &end);
    if (number.empty() || end != number.c_str() + number.size() || !std::isfinite(p))
      throw bad(fmt::format("'{}' is not a percentage", text));
    if (p <= 0 || p > 100) throw bad("a percentage must be above 0 and at most 100");
    return Extent::of_percent(p);
  }
  try {
    const std::uint64_t bytes = parse_size(text);
    if (bytes == 0) throw bad("the size must be above 0");
    return Extent::of_bytes(bytes);
  } catch (const std::invalid_argument& e) {
    if (std::string_view(e.what()).find("is not a region") != std::string_view::npos) throw;
    throw bad(e.what());
  }
}

}  // namespace

std::uint64_t Extent::resolve(std::uint64_t capacity_bytes) const noexcept {
  if (!is_percent) return bytes;
  const long double v = static_cast<long double>(capacity_bytes) * static_cast<long double>(percent) / 100.0L;
  return v >= static_cast<long double>(capacity_bytes) ? capacity_bytes : static_cast<std::uint64_t>(v);
}

Region parse_region(std::string_view text) {
  std::string t;
  for (char c : text) t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
  std::size_t start = 0;
  while (start < t.size() && std::isspace(static_cast<unsigned char>(t[start]))) ++start;
  std::string_view v = std::string_view(t).substr(start);
  if (v == "all") return Region{};
  if (v.rfind("first", 0) == 0) {
    v.remove_prefix(5);
    while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  }
  Region r;
  r.size = parse_extent(v, text);
  return r;
}

std::string to_string(const Region& region) {
  const bool at_start = region.offset.is_percent ? region.offset.percent == 0 : region.offset.bytes == 0;
  if (at_start && region.size == Extent::of_percent(100)) return "all";
  if (at_start) return "first " + extent_text(region.size);
  return fmt::format("offset {}, size {}", extent_text(region.offset), extent_text(region.size));
}

ByteRange resolve_region(const Region& region, std::uint64_t capacity_bytes, std::uint32_t block_bytes,
                         std::string_view what) {
  const std::uint64_t block = std::max<std::uint32_t>(block_bytes, 1);
  if (capacity_bytes < block)
    throw ConfigError(fmt::format("{} is empty ({} bytes): no region fits", what, capacity_bytes));
  std::uint64_t offset = region.offset.resolve(capacity_bytes);
  if (offset >= capacity_bytes)
    throw ConfigError(fmt::format("region offset {} is beyond the end of {} ({})", extent_text(region.offset), what,
                                  format_size(capacity_bytes)));
  offset -= offset % kRegionAlignBytes;
  const std::uint64_t size = region.size.resolve(capacity_bytes);
  std::uint64_t end = size >= capacity_bytes - offset ? capacity_bytes : offset + size;
  end -= end == capacity_bytes ? end % block : end % kRegionAlignBytes;
  if (end <= offset)
    throw ConfigError(fmt::format("region '{}' of {} ({}) is empty once aligned to {}", to_string(region), what,
                                  format_size(capacity_bytes), format_size(kRegionAlignBytes)));
  return {offset, end - offset};
}

fs::path target_file_path(const fs::path& dir, const std::string& test_name) {
  return dir / ("drivelab-" + test_name + ".dat");
}

std::string filesystem_type(const fs::path& path) {
  std::error_code ec;
  const fs::path canon = fs::weakly_canonical(fs::absolute(path, ec), ec);
  struct stat st{};
  const std::optional<dev_t> dev = ::stat(canon.c_str(), &st) == 0 ? std::optional<dev_t>(st.st_dev) : std::nullopt;
  const auto m = mount_containing(read_mountinfo(), canon.string(), dev);
  return m ? m->fstype : "unknown";
}

std::string direct_unsupported_message(const fs::path& dir) {
  return fmt::format("the filesystem of {} ({}) does not support O_DIRECT; set io.direct: false", dir.string(),
                     filesystem_type(dir));
}

TargetFile TargetFile::open_device(const TargetFileSpec& spec) {
  TargetFile tf;
  tf.path_ = spec.dir;
  tf.is_device_ = true;
  tf.direct_ = spec.direct;
  tf.filled_ = true;
  const int direct = spec.direct ? O_DIRECT : 0;
  tf.fd_.reset(::open(spec.dir.c_str(), O_RDWR | O_CLOEXEC | direct));
  if (!tf.fd_ && (errno == EROFS || errno == EACCES || errno == EPERM))
    tf.fd_.reset(::open(spec.dir.c_str(), O_RDONLY | O_CLOEXEC | direct));  // read-only tests still work
  if (!tf.fd_) {
    const int err = errno;
    if (err == EINVAL && spec.direct)
      throw EnvironmentError(
          fmt::format("block device {} does not support O_DIRECT; set direct: false", spec.dir.string()));
    throw_errno("open block device " + spec.dir.string(), err);
  }
  const int fd = tf.fd_.get();
  std::uint64_t capacity = 0;
  int lbs = 512;
  if (::ioctl(fd, BLKGETSIZE64, &capacity) != 0) throw_errno("BLKGETSIZE64 on " + spec.dir.string(), errno);
  if (::ioctl(fd, BLKSSZGET, &lbs) != 0 || lbs < 512) lbs = 512;
  const auto block = static_cast<std::uint32_t>(lbs);
  tf.size_bytes_ = capacity;
  tf.region_ = resolve_region(spec.region.value_or(Region{}), capacity, block, spec.dir.string());
  if (spec.size_bytes > 0) {
    // fio's size= on a device: the first size bytes (of the region).
    if (spec.size_bytes > tf.region_.length_bytes)
      throw EnvironmentError(fmt::format(
          "{} has {} {}, less than the {} this test addresses", spec.dir.string(), format_size(tf.region_.length_bytes),
          spec.region ? "in its region '" + to_string(*spec.region) + "'" : "in all", format_size(spec.size_bytes)));
    tf.region_.length_bytes = spec.size_bytes - spec.size_bytes % block;
    if (tf.region_.length_bytes == 0)
      throw ConfigError(fmt::format("a test size of {} bytes is less than one block of {} ({} bytes)", spec.size_bytes,
                                    spec.dir.string(), block));
  }
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  tf.direct_alignment_bytes_ = spec.direct ? std::max(direct_alignment(fd), block) : 1;
  return tf;
}

TargetFile TargetFile::open(const TargetFileSpec& spec, const FillProgress& progress) {
  if (is_block_device(spec.dir)) return open_device(spec);
  std::error_code ec;
  if (!fs::is_directory(spec.dir, ec))
    throw EnvironmentError(fmt::format("target directory {} does not exist", spec.dir.string()));
  if (spec.size_bytes == 0) throw ConfigError("target file size must be > 0");

  TargetFile tf;
  tf.path_ = target_file_path(spec.dir, spec.test_name);
  tf.size_bytes_ = spec.size_bytes;
  tf.direct_ = spec.direct;

  // A failed open leaves nothing behind: a file it created is removed, and so is one it had
  // emptied to refill (its old contents are gone either way). A file it only reused is kept.
  const bool existed = fs::exists(fs::symlink_status(tf.path_, ec));
  bool emptied = false;
  try {
    open_file(tf, spec, progress, emptied);
  } catch (...) {
    if (!existed || emptied) ::unlink(tf.path_.c_str());
    throw;
  }
  return tf;
}

void TargetFile::open_file(TargetFile& tf, const TargetFileSpec& spec, const FillProgress& progress, bool& emptied) {
  // I/O descriptor first: an O_DIRECT refusal must come before minutes of filling. (Linux
  // creates the file before it refuses O_DIRECT, on tmpfs for one: open() then removes it.)
  // A symbolic link in the test file's place is refused, never followed: the I/O, the fill and the
  // truncation would land in whatever it names, outside the target (open_no_follow).
  tf.fd_ = open_no_follow(tf.path_, O_RDWR | O_CREAT | (spec.direct ? O_DIRECT : 0));
  if (!tf.fd_) {
    const int err = errno;
    if (err == EINVAL && spec.direct) throw EnvironmentError(direct_unsupported_message(spec.dir));
    throw_errno("open " + tf.path_.string(), err);
  }
  const int fd = tf.fd_.get();
  struct stat st{};
  if (::fstat(fd, &st) != 0) throw_errno("stat " + tf.path_.string(), errno);
  if (!S_ISREG(st.st_mode)) throw EnvironmentError(tf.path_.string() + " exists and is not a regular file");
  const auto allocated = static_cast<std::uint64_t>(st.st_blocks) * 512;
  const bool right_size = static_cast<std::uint64_t>(st.st_size) == spec.size_bytes;
  // A filled file has every block allocated; a hole punched since would read as zeros.
  const bool fully_allocated = allocated >= (spec.size_bytes & ~std::uint64_t{4095});
  tf.reused_ = right_size && (spec.fill ? (fully_allocated && has_marker(fd, spec.size_bytes)) : true);

  if (!tf.reused_) {
    struct statvfs vfs{};
    if (::fstatvfs(fd, &vfs) != 0) throw_errno("statvfs " + spec.dir.string(), errno);
    const std::uint64_t avail = static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize + allocated;
    if (spec.size_bytes > avail) throw_no_space(spec.dir, tf.path_, spec.size_bytes, avail);
    ::fremovexattr(fd, kMarkerName);  // absent is fine
    emptied = true;
    if (::ftruncate(fd, 0) != 0) throw_errno("truncate " + tf.path_.string(), errno);
    // Reserve every block up front: ENOSPC now rather than in the middle of the fill or the test.
    if (::fallocate(fd, 0, 0, static_cast<off_t>(spec.size_bytes)) != 0) {
      const int err = errno;
      if (err == ENOSPC) throw_no_space(spec.dir, tf.path_, spec.size_bytes, avail);
      if (err != EOPNOTSUPP && err != ENOSYS) throw_errno("fallocate " + tf.path_.string(), err);
      if (::ftruncate(fd, static_cast<off_t>(spec.size_bytes)) != 0)
        throw_errno("truncate " + tf.path_.string(), errno);
    }
    if (spec.fill) tf.filled_ = fill_file(tf.path_, spec.size_bytes, spec.seed, progress);
  } else {
    tf.filled_ = spec.fill;
  }
  // Start cold: drop the pages the fill (or an earlier run) left in the page cache.
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  tf.direct_alignment_bytes_ = spec.direct ? direct_alignment(fd) : 1;
  tf.region_ = spec.region ? resolve_region(*spec.region, spec.size_bytes,
                                            std::max<std::uint32_t>(tf.direct_alignment_bytes_, 512), tf.path_.string())
                           : ByteRange{0, spec.size_bytes};
}

void TargetFile::mark_filled() {
  if (is_device_ || !fd_) return;
  const std::string value = marker_value(size_bytes_);
  if (::fsetxattr(fd_.get(), kMarkerName, value.data(), value.size(), 0) != 0 && errno != ENOTSUP && errno != EPERM)
    throw_errno("setting the fill marker on " + path_.string(), errno);
  filled_ = true;
}

void TargetFile::remove() noexcept {
  fd_.reset();
  if (!path_.empty() && !is_device_) ::unlink(path_.c_str());
}

}  // namespace drivelab::io
