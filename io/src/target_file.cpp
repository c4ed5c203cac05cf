#include "drivelab/io/target_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string_view>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/core/rng.hpp"
#include "drivelab/core/units.hpp"

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

// Undoes the \040-style octal escapes of /proc/self/mountinfo paths.
std::string unescape_mount_path(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      const std::string_view oct = s.substr(i + 1, 3);
      if (std::all_of(oct.begin(), oct.end(), [](char c) { return c >= '0' && c <= '7'; })) {
        out += static_cast<char>((oct[0] - '0') * 64 + (oct[1] - '0') * 8 + (oct[2] - '0'));
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

bool path_is_under(const std::string& path, const std::string& mount_point) {
  if (mount_point == "/") return true;
  return path.compare(0, mount_point.size(), mount_point) == 0 &&
         (path.size() == mount_point.size() || path[mount_point.size()] == '/');
}

// Direct-I/O offset alignment: statx(STATX_DIOALIGN) (Linux 6.1+), else the logical block size
// of the block device behind the file (sysfs), else 512.
std::uint32_t direct_alignment(int fd) {
  struct statx stx {};
  if (::statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 && (stx.stx_mask & STATX_DIOALIGN) &&
      stx.stx_dio_offset_align > 0)
    return stx.stx_dio_offset_align;
  struct stat st {};
  if (::fstat(fd, &st) == 0) {
    const std::string dev = fmt::format("/sys/dev/block/{}:{}", major(st.st_dev), minor(st.st_dev));
    for (const char* rel : {"/queue/logical_block_size", "/../queue/logical_block_size"}) {
      std::ifstream in(dev + rel);
      std::uint32_t bytes = 0;
      if (in >> bytes && bytes >= 512) return bytes;
    }
  }
  return 512;
}

void write_all(int fd, const std::byte* data, std::size_t len, std::uint64_t offset, const fs::path& path) {
  while (len > 0) {
    const ssize_t n = ::pwrite(fd, data, len, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno(fmt::format("filling {}: write at offset {}", path.string(), offset), errno);
    }
    data += n;
    len -= static_cast<std::size_t>(n);
    offset += static_cast<std::uint64_t>(n);
  }
}

// Writes size_bytes of xoshiro output through a buffered descriptor (any size, no alignment
// rules), makes it durable and drops it from the page cache. Returns false if aborted.
bool fill_file(const fs::path& path, std::uint64_t size_bytes, std::uint64_t seed, const FillProgress& progress) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) throw_errno("open " + path.string(), errno);
  AlignedBuffer chunk(kFillChunkBytes);
  Rng rng(seed);
  for (std::uint64_t done = 0; done < size_bytes;) {
    for (std::size_t i = 0; i < kFillChunkBytes; i += sizeof(std::uint64_t)) {
      const std::uint64_t word = rng();
      std::memcpy(chunk.data() + i, &word, sizeof word);
    }
    const auto len = static_cast<std::size_t>(std::min<std::uint64_t>(kFillChunkBytes, size_bytes - done));
    write_all(fd.get(), chunk.data(), len, done, path);
    done += len;
    if (progress && !progress(done, size_bytes)) return false;
  }
  if (::fdatasync(fd.get()) != 0) throw_errno("fdatasync " + path.string(), errno);
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

}  // namespace

fs::path target_file_path(const fs::path& dir, const std::string& test_name) {
  return dir / ("drivelab-" + test_name + ".dat");
}

std::string filesystem_type(const fs::path& path) {
  std::error_code ec;
  const fs::path canon = fs::weakly_canonical(fs::absolute(path, ec), ec);
  const std::string p = canon.string();
  std::ifstream in("/proc/self/mountinfo");
  std::string line, best_type = "unknown";
  std::size_t best_len = 0;
  while (std::getline(in, line)) {
    // "36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - ext3 /dev/root rw,errors=continue"
    std::vector<std::string_view> f;
    std::string_view rest(line);
    while (!rest.empty()) {
      const auto sp = rest.find(' ');
      f.push_back(rest.substr(0, sp));
      rest = sp == std::string_view::npos ? std::string_view{} : rest.substr(sp + 1);
    }
    const auto dash = std::find(f.begin(), f.end(), "-");
    if (f.size() < 5 || dash == f.end() || dash + 1 == f.end()) continue;
    const std::string mount_point = unescape_mount_path(f[4]);
    // ">=": a later mount on the same point hides the earlier one.
    if (path_is_under(p, mount_point) && mount_point.size() >= best_len) {
      best_len = mount_point.size();
      best_type = std::string(*(dash + 1));
    }
  }
  return best_type;
}

std::string direct_unsupported_message(const fs::path& dir) {
  return fmt::format("the filesystem of {} ({}) does not support O_DIRECT; set io.direct: false", dir.string(),
                     filesystem_type(dir));
}

TargetFile TargetFile::open(const TargetFileSpec& spec, const FillProgress& progress) {
  std::error_code ec;
  if (!fs::is_directory(spec.dir, ec))
    throw EnvironmentError(fmt::format("target directory {} does not exist", spec.dir.string()));
  if (spec.size_bytes == 0) throw ConfigError("target file size must be > 0");

  TargetFile tf;
  tf.path_ = target_file_path(spec.dir, spec.test_name);
  tf.size_bytes_ = spec.size_bytes;
  tf.direct_ = spec.direct;

  // I/O descriptor first: an O_DIRECT refusal must come before minutes of filling.
  const int flags = O_RDWR | O_CREAT | O_CLOEXEC | (spec.direct ? O_DIRECT : 0);
  tf.fd_.reset(::open(tf.path_.c_str(), flags, 0644));
  if (!tf.fd_) {
    const int err = errno;
    if (err == EINVAL && spec.direct) throw EnvironmentError(direct_unsupported_message(spec.dir));
    throw_errno("open " + tf.path_.string(), err);
  }
  const int fd = tf.fd_.get();
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw_errno("stat " + tf.path_.string(), errno);
  if (!S_ISREG(st.st_mode)) throw EnvironmentError(tf.path_.string() + " exists and is not a regular file");
  const auto allocated = static_cast<std::uint64_t>(st.st_blocks) * 512;
  const bool right_size = static_cast<std::uint64_t>(st.st_size) == spec.size_bytes;
  // A filled file has every block allocated; a hole punched since would read as zeros.
  const bool fully_allocated = allocated >= (spec.size_bytes & ~std::uint64_t{4095});
  tf.reused_ = right_size && (spec.fill ? (fully_allocated && has_marker(fd, spec.size_bytes)) : true);

  if (!tf.reused_) {
    struct statvfs vfs {};
    if (::fstatvfs(fd, &vfs) != 0) throw_errno("statvfs " + spec.dir.string(), errno);
    const std::uint64_t avail = static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize + allocated;
    if (spec.size_bytes > avail) throw_no_space(spec.dir, tf.path_, spec.size_bytes, avail);
    ::fremovexattr(fd, kMarkerName);  // absent is fine
    if (::ftruncate(fd, 0) != 0) throw_errno("truncate " + tf.path_.string(), errno);
    // Reserve every block up front: ENOSPC now rather than in the middle of the fill or the test.
    if (::fallocate(fd, 0, 0, static_cast<off_t>(spec.size_bytes)) != 0) {
      const int err = errno;
      if (err == ENOSPC) throw_no_space(spec.dir, tf.path_, spec.size_bytes, avail);
      if (err != EOPNOTSUPP && err != ENOSYS) throw_errno("fallocate " + tf.path_.string(), err);
      if (::ftruncate(fd, static_cast<off_t>(spec.size_bytes)) != 0) throw_errno("truncate " + tf.path_.string(), errno);
    }
    if (spec.fill) tf.filled_ = fill_file(tf.path_, spec.size_bytes, spec.seed, progress);
  } else {
    tf.filled_ = spec.fill;
  }
  // Start cold: drop the pages the fill (or an earlier run) left in the page cache.
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  tf.direct_alignment_bytes_ = spec.direct ? direct_alignment(fd) : 1;
  return tf;
}

void TargetFile::remove() noexcept {
  fd_.reset();
  if (!path_.empty()) ::unlink(path_.c_str());
}

}  // namespace drivelab::io
