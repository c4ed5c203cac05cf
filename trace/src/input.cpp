// Byte sources, the bounded line reader and the device table (input.hpp).
#include "input.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace drivelab::trace {

std::string_view refused_file_kind(unsigned mode) noexcept {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return {};
}

namespace detail {
namespace {

[[noreturn]] void refuse(const std::filesystem::path& file, std::string_view kind) {
  throw ConfigError(
      fmt::format("trace {} is {}, not a trace file (give a regular file, or a pipe)", file.string(), kind));
}

}  // namespace

FileInput::FileInput(const std::filesystem::path& file) : file_(file) {
  // Checked before open(): opening a device can have effects of its own (a tape rewinds).
  struct stat st{};
  if (::stat(file.c_str(), &st) == 0) {
    if (const auto kind = refused_file_kind(st.st_mode); !kind.empty()) refuse(file, kind);
  }
  fd_.reset(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd_) throw_errno(fmt::format("open trace {}", file.string()), errno);
  if (::fstat(fd_.get(), &st) != 0) throw_errno(fmt::format("stat trace {}", file.string()), errno);
  if (const auto kind = refused_file_kind(st.st_mode); !kind.empty()) refuse(file, kind);  // replaced meanwhile
  regular_ = S_ISREG(st.st_mode);
  size_bytes_ = regular_ ? static_cast<std::uint64_t>(st.st_size) : 0;
}

std::size_t FileInput::read(char* out, std::size_t n) {
  for (;;) {
    const ssize_t got = ::read(fd_.get(), out, n);
    if (got >= 0) return static_cast<std::size_t>(got);
    if (errno != EINTR) throw_errno(fmt::format("read trace {}", file_.string()), errno);
  }
}

std::size_t MemoryInput::read(char* out, std::size_t n) {
  const std::size_t count = std::min(n, data_.size() - pos_);
  std::memcpy(out, data_.data() + pos_, count);
  pos_ += count;
  return count;
}

std::size_t PrefixedInput::read(char* out, std::size_t n) {
  if (pos_ < head_.size()) {
    const std::size_t count = std::min(n, head_.size() - pos_);
    std::memcpy(out, head_.data() + pos_, count);
    pos_ += count;
    return count;
  }
  return rest_->read(out, n);
}

std::size_t BufferedInput::read(char* out, std::size_t n) {
  if (begin_ == end_) {
    if (n >= buffer_.size()) return input_->read(out, n);  // a large read needs no copy
    begin_ = 0;
    end_ = input_->read(buffer_.data(), buffer_.size());
    if (end_ == 0) return 0;
  }
  const std::size_t count = std::min(n, end_ - begin_);
  std::memcpy(out, buffer_.data() + begin_, count);
  begin_ += count;
  return count;
}

std::size_t read_full(ByteInput& input, char* out, std::size_t n) {
  std::size_t done = 0;
  while (done < n) {
    const std::size_t got = input.read(out + done, n - done);
    if (got == 0) break;
    done += got;
  }
  return done;
}

// The buffer holds one maximal line plus its terminator, and a read-ahead of the same size.
LineReader::LineReader(std::unique_ptr<ByteInput> input, std::filesystem::path name)
    : input_(std::move(input)), name_(std::move(name)), buffer_(2 * (kMaxLineBytes + 1)) {}

bool LineReader::refill() {
  if (eof_) return false;
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  const std::size_t got = input_->read(buffer_.data() + end_, buffer_.size() - end_);
  if (got == 0) eof_ = true;
  end_ += got;
  return got > 0;
}

bool LineReader::next(std::string_view& line) {
  std::size_t scanned = begin_;
  for (;;) {
    const char* start = buffer_.data() + scanned;
    const auto* newline = static_cast<const char*>(std::memchr(start, '\n', end_ - scanned));
    if (newline != nullptr) {
      std::size_t length = static_cast<std::size_t>(newline - (buffer_.data() + begin_));
      ++line_number_;
      if (length > kMaxLineBytes) fail(fmt::format("line longer than {} bytes", kMaxLineBytes));
      if (length > 0 && buffer_[begin_ + length - 1] == '\r') --length;
      line = std::string_view(buffer_.data() + begin_, length);
      begin_ += static_cast<std::size_t>(newline - (buffer_.data() + begin_)) + 1;
      return true;
    }
    if (end_ - begin_ > kMaxLineBytes + 1) {
      ++line_number_;
      fail(fmt::format("line longer than {} bytes", kMaxLineBytes));
    }
    const std::size_t pending = end_ - begin_;
    if (!refill()) {
      if (pending == 0) return false;
      // Last line without a terminator.
      ++line_number_;
      std::size_t length = end_ - begin_;
      if (buffer_[begin_ + length - 1] == '\r') --length;
      line = std::string_view(buffer_.data() + begin_, length);
      begin_ = end_;
      return true;
    }
    scanned = begin_ + pending;
  }
}

void LineReader::fail(const std::string& reason) const { throw TraceFormatError(name_, line_number_, reason); }

bool DeviceTable::index_of(std::string_view name, std::uint32_t& index) {
  std::string key(name);
  if (const auto it = index_.find(key); it != index_.end()) {
    index = it->second;
    return true;
  }
  if (names_.size() >= kMaxDevices) return false;
  index = static_cast<std::uint32_t>(names_.size());
  names_.push_back(key);
  index_.emplace(std::move(key), index);
  return true;
}

}  // namespace detail
}  // namespace drivelab::trace
