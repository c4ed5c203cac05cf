#include "drivelab/core/fd.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <new>

namespace drivelab {

void UniqueFd::reset(int fd) noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

AlignedBuffer::AlignedBuffer(std::size_t size_bytes, std::size_t alignment) : size_(size_bytes) {
  const std::size_t rounded = (size_bytes + alignment - 1) / alignment * alignment;
  void* p = std::aligned_alloc(alignment, rounded == 0 ? alignment : rounded);
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 0, rounded == 0 ? alignment : rounded);
  data_.reset(static_cast<std::byte*>(p));
}

void AlignedBuffer::Free::operator()(std::byte* p) const noexcept { std::free(p); }

}  // namespace drivelab
