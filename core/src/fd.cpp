#include "drivelab/core/fd.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include <bit>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/core/units.hpp"

namespace drivelab {

void UniqueFd::reset(int fd) noexcept {
  if (fd_ >= 0 && fd_ != fd) ::close(fd_);
  fd_ = fd;
}

UniqueFd open_no_follow(const std::filesystem::path& path, int flags, mode_t mode) {
  UniqueFd fd(::open(path.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode));
  if (fd || errno != ELOOP) return fd;
  std::error_code ec;
  const std::filesystem::path to = std::filesystem::read_symlink(path, ec);
  throw EnvironmentError(fmt::format(
      "{} is a symbolic link{}: drivelab writes only files of its own inside the target and never follows a link out "
      "of it; remove the link",
      path.string(), ec ? "" : fmt::format(" (to {})", to.string())));
}

AlignedBuffer::AlignedBuffer(std::size_t size_bytes, std::size_t alignment) : size_(size_bytes) {
  // aligned_alloc wants a power-of-two alignment and a size that is a multiple of it.
  if (!std::has_single_bit(alignment))
    throw InternalError(fmt::format("AlignedBuffer: alignment {} is not a power of two", alignment));
  if (size_bytes > std::numeric_limits<std::size_t>::max() - alignment) throw std::bad_alloc();
  const std::size_t rounded = align_up(size_bytes, alignment);
  void* p = std::aligned_alloc(alignment, rounded == 0 ? alignment : rounded);
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 0, rounded == 0 ? alignment : rounded);
  data_.reset(static_cast<std::byte*>(p));
}

void AlignedBuffer::Free::operator()(std::byte* p) const noexcept { std::free(p); }

}  // namespace drivelab
