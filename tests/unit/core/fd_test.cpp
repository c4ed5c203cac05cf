// RAII owners: a descriptor is closed exactly once, by its last owner; buffers are aligned for
// O_DIRECT and zeroed.
#include "drivelab/core/fd.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <string>
#include <type_traits>
#include <utility>

#include <gtest/gtest.h>

#include "drivelab/core/errors.hpp"

namespace drivelab {
namespace {

static_assert(!std::is_copy_constructible_v<UniqueFd> && std::is_nothrow_move_constructible_v<UniqueFd>);
static_assert(!std::is_copy_constructible_v<AlignedBuffer> && std::is_nothrow_move_constructible_v<AlignedBuffer> &&
              std::is_nothrow_move_assignable_v<AlignedBuffer>);

bool is_open(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

bool is_closed(int fd) {
  errno = 0;
  return ::fcntl(fd, F_GETFD) == -1 && errno == EBADF;
}

int open_dev_null() {
  const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0);
  return fd;
}

TEST(UniqueFd, ClosesOnDestruction) {
  int raw = -1;
  {
    UniqueFd fd(open_dev_null());
    raw = fd.get();
    EXPECT_TRUE(fd);
    EXPECT_TRUE(is_open(raw));
  }
  EXPECT_TRUE(is_closed(raw));
}

// open_no_follow: a file opens as open(2) opens it; a symbolic link in its place, to a file or to
// nothing, is refused with the link's target named, and nothing is written through it; any other
// failure is an empty descriptor with errno, for the caller to word.
TEST(OpenNoFollow, RefusesALinkAndReportsOtherFailuresByErrno) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("drivelab-fd-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const UniqueFd file = open_no_follow(dir / "own", O_RDWR | O_CREAT);
  EXPECT_TRUE(file);
  std::filesystem::create_symlink(dir / "own", dir / "link");
  std::filesystem::create_symlink(dir / "nothing", dir / "dangling");
  for (const char* name : {"link", "dangling"}) {
    try {
      (void)open_no_follow(dir / name, O_WRONLY | O_CREAT | O_TRUNC);
      ADD_FAILURE() << name << " was followed";
    } catch (const EnvironmentError& e) {
      EXPECT_NE(std::string(e.what()).find((dir / name).string() + " is a symbolic link (to " + dir.string()),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "nothing")) << "the dangling link created nothing";
  errno = 0;
  const UniqueFd missing = open_no_follow(dir / "no-such-dir" / "f", O_RDWR | O_CREAT);
  EXPECT_FALSE(missing);
  EXPECT_EQ(errno, ENOENT);
  std::filesystem::remove_all(dir);
}

TEST(UniqueFd, DefaultIsEmpty) {
  UniqueFd fd;
  EXPECT_FALSE(fd);
  EXPECT_EQ(fd.get(), -1);
  fd.reset();  // no-op
}

TEST(UniqueFd, MoveTransfersOwnership) {
  UniqueFd a(open_dev_null());
  const int raw = a.get();
  UniqueFd b(std::move(a));
  EXPECT_EQ(a.get(), -1);  // NOLINT(bugprone-use-after-move): moved-from state is specified
  EXPECT_EQ(b.get(), raw);
  EXPECT_TRUE(is_open(raw));

  UniqueFd c(open_dev_null());
  const int old_c = c.get();
  c = std::move(b);  // c's previous descriptor is closed, raw survives
  EXPECT_TRUE(is_closed(old_c));
  EXPECT_EQ(c.get(), raw);
  EXPECT_TRUE(is_open(raw));

  UniqueFd& alias = c;
  c = std::move(alias);  // self-move keeps the descriptor
  EXPECT_EQ(c.get(), raw);
  EXPECT_TRUE(is_open(raw));
}

TEST(UniqueFd, ReleaseAndReset) {
  UniqueFd fd(open_dev_null());
  const int raw = fd.release();
  EXPECT_FALSE(fd);
  EXPECT_TRUE(is_open(raw));  // released, not closed
  fd.reset(raw);
  EXPECT_EQ(fd.get(), raw);
  fd.reset(raw);  // resetting to the same descriptor must not close it
  EXPECT_TRUE(is_open(raw));
  const int other = open_dev_null();
  fd.reset(other);
  EXPECT_TRUE(is_closed(raw));
  EXPECT_EQ(fd.get(), other);
  fd.reset();
  EXPECT_TRUE(is_closed(other));
}

TEST(AlignedBuffer, AlignedAndZeroed) {
  for (std::size_t alignment : {std::size_t{8}, std::size_t{64}, std::size_t{512}, std::size_t{4096}}) {
    for (std::size_t size : {std::size_t{1}, std::size_t{512}, std::size_t{4096}, std::size_t{65536 + 3}}) {
      AlignedBuffer buf(size, alignment);
      ASSERT_NE(buf.data(), nullptr);
      EXPECT_EQ(buf.size(), size);
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buf.data()) % alignment, 0u)
          << "size " << size << " alignment " << alignment;
      for (std::size_t i = 0; i < size; ++i) ASSERT_EQ(buf.data()[i], std::byte{0});
      buf.data()[size - 1] = std::byte{0xab};  // the whole size is writable (ASan checks)
    }
  }
  const AlignedBuffer def(8192);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(def.data()) % 4096, 0u);  // default alignment
}

TEST(AlignedBuffer, ZeroSizeAndEmpty) {
  const AlignedBuffer zero(0);
  EXPECT_EQ(zero.size(), 0u);
  const AlignedBuffer empty;
  EXPECT_EQ(empty.data(), nullptr);
  EXPECT_EQ(empty.size(), 0u);
}

TEST(AlignedBuffer, MoveLeavesSourceEmpty) {
  AlignedBuffer a(4096);
  a.data()[0] = std::byte{7};
  std::byte* p = a.data();
  AlignedBuffer b(std::move(a));
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(b.size(), 4096u);
  EXPECT_EQ(b.data()[0], std::byte{7});
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(a.size(), 0u);

  AlignedBuffer c(512);
  c = std::move(b);  // c's old memory is freed (LeakSanitizer would report it otherwise)
  EXPECT_EQ(c.data(), p);
  EXPECT_EQ(c.size(), 4096u);
  EXPECT_EQ(b.size(), 0u);  // NOLINT(bugprone-use-after-move)
}

TEST(AlignedBuffer, RejectsBadAlignment) {
  EXPECT_THROW(AlignedBuffer(4096, 0), InternalError);
  EXPECT_THROW(AlignedBuffer(4096, 3), InternalError);
  EXPECT_THROW(AlignedBuffer(4096, 4097), InternalError);
}

}  // namespace
}  // namespace drivelab
