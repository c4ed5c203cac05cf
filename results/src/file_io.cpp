#include "file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "drivelab/core/errors.hpp"
#include "drivelab/core/fd.hpp"

namespace drivelab::results::detail {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(std::string_view what, const fs::path& path, std::string_view step, int errnum) {
  throw EnvironmentError("cannot write " + std::string(what) + " '" + path.string() + "': " + std::string(step) + ": " +
                         errno_text(errnum));
}

}  // namespace

std::string read_file(const fs::path& path, std::string_view what) {
  const auto fail_read = [&](int errnum) {
    throw EnvironmentError("cannot read " + std::string(what) + " '" + path.string() + "': " + std::strerror(errnum));
  };
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) fail_read(errno);
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0) fail_read(errno);
  if (S_ISDIR(st.st_mode)) fail_read(EISDIR);
  // A device never ends (/dev/zero) and is no record; a regular file or a pipe is read.
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) || S_ISSOCK(st.st_mode))
    throw EnvironmentError("cannot read " + std::string(what) + " '" + path.string() +
                           "': it is a device or socket, not a file");
  std::string text;
  text.reserve(static_cast<std::size_t>(st.st_size));
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_read(errno);
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
}

int write_fully(int fd, std::string_view data, std::size_t& written) noexcept {
  written = 0;
  while (written < data.size()) {
    const ssize_t n = ::write(fd, data.data() + written, data.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    written += static_cast<std::size_t>(n);
  }
  return 0;
}

void write_file_atomically(const fs::path& path, std::string_view text, std::string_view what) {
  // Unique per process and call, so concurrent writers of the same record never share a temp file.
  static std::atomic<unsigned> counter{0};
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  const fs::path tmp = dir / ("." + path.filename().string() + ".tmp." + std::to_string(::getpid()) + "." +
                              std::to_string(counter.fetch_add(1)));
  {
    UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    if (!fd) fail(what, path, "create temporary file", errno);
    std::size_t written = 0;
    int err = write_fully(fd.get(), text, written);
    if (err == 0 && ::fsync(fd.get()) != 0) err = errno;
    if (err == 0 && ::close(fd.release()) != 0) err = errno;
    if (err != 0) {
      ::unlink(tmp.c_str());
      fail(what, path, "write temporary file", err);
    }
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    fail(what, path, "rename", err);
  }
  UniqueFd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir_fd) fail(what, path, "open directory", errno);
  // Some filesystems cannot fsync a directory (EINVAL); the rename is then as durable as it gets.
  if (::fsync(dir_fd.get()) != 0 && errno != EINVAL) fail(what, path, "fsync directory", errno);
}

}  // namespace drivelab::results::detail
