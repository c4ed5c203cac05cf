#pragma once
/// \file fd.hpp
/// Move-only RAII owners of kernel handles and aligned memory.
#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <memory>
#include <utility>

namespace drivelab {

/// Owns a file descriptor; closes it on destruction. -1 means "none".
class UniqueFd {
 public:
  UniqueFd() noexcept = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) reset(std::exchange(o.fd_, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }
  int release() noexcept { return std::exchange(fd_, -1); }
  void reset(int fd = -1) noexcept;

 private:
  int fd_ = -1;
};

/// open(2) of a file drivelab creates or writes inside the target (a test file, the run lock, the
/// render test's scene, array, output, swap and marker files), with O_NOFOLLOW added: a symbolic
/// link in its place is refused, never followed, since whatever it names (outside the target)
/// would be written, truncated or locked. Returns the descriptor, or an empty UniqueFd with errno
/// set for any other failure (the caller words that one). Throws EnvironmentError on a link:
/// "<path> is a symbolic link (to <where>): drivelab writes only files of its own inside the
/// target and never follows a link out of it; remove the link".
UniqueFd open_no_follow(const std::filesystem::path& path, int flags, mode_t mode = 0644);

/// A zero-initialised buffer aligned to `alignment` bytes (O_DIRECT needs the logical block size,
/// 4096 is always enough). Move-only; a moved-from buffer is empty (data() null, size() 0).
/// Throws InternalError if `alignment` is not a power of two, std::bad_alloc if memory is short.
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  AlignedBuffer(std::size_t size_bytes, std::size_t alignment = 4096);
  AlignedBuffer(AlignedBuffer&& o) noexcept : data_(std::move(o.data_)), size_(std::exchange(o.size_, 0)) {}
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept {
    data_ = std::move(o.data_);
    size_ = std::exchange(o.size_, 0);
    return *this;
  }
  std::byte* data() noexcept { return data_.get(); }
  const std::byte* data() const noexcept { return data_.get(); }
  std::size_t size() const noexcept { return size_; }

 private:
  struct Free {
    void operator()(std::byte* p) const noexcept;
  };
  std::unique_ptr<std::byte, Free> data_;
  std::size_t size_ = 0;
};

}  // namespace drivelab
