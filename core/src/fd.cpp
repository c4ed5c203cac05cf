#include "drivelab/core/fd.hpp"

#include <unistd.h>

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
