#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <vector>

#include "drivelab/core/errors.hpp"
#include "drivelab/io/target_file.hpp"
#include "temp_dir.hpp"

namespace drivelab::io {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;

std::vector<char> read_head(const std::filesystem::path& p, std::size_t n) {
  std::vector<char> out(n);
  std::ifstream in(p, std::ios::binary);
  in.read(out.data(), static_cast<std::streamsize>(n));
  return out;
}

TEST(TargetFile, FillsWithIncompressibleDataThenReusesTheFilledFile) {
  drivelab::test_support::TempDir dir;
  const TargetFileSpec spec{.dir = dir.path(), .test_name = "fill", .size_bytes = 3 * kMiB + 512};
  std::uint64_t last_done = 0, calls = 0;
  {
    TargetFile f = TargetFile::open(spec, [&](std::uint64_t done, std::uint64_t total) {
      EXPECT_EQ(total, spec.size_bytes);
      last_done = done;
      ++calls;
      return true;
    });
    EXPECT_EQ(f.path(), dir.path() / "drivelab-fill.dat");
    EXPECT_TRUE(f.filled());
    EXPECT_FALSE(f.reused());
    EXPECT_EQ(last_done, spec.size_bytes);
    EXPECT_EQ(calls, 4u);  // 1 MiB chunks
  }
  EXPECT_EQ(std::filesystem::file_size(dir.path() / "drivelab-fill.dat"), spec.size_bytes);
  // Not zeros, and no byte value dominates: the data is not sparse and does not compress.
  const std::vector<char> head = read_head(dir.path() / "drivelab-fill.dat", 1 << 16);
  std::vector<int> histogram(256, 0);
  for (char c : head) ++histogram[static_cast<unsigned char>(c)];
  EXPECT_LT(*std::max_element(histogram.begin(), histogram.end()), 1000);

  TargetFile again = TargetFile::open(spec, [](std::uint64_t, std::uint64_t) -> bool {
    ADD_FAILURE() << "a filled file of the right size must not be rewritten";
    return true;
  });
  EXPECT_TRUE(again.reused());
  EXPECT_TRUE(again.filled());

  TargetFile other_size = TargetFile::open({.dir = dir.path(), .test_name = "fill", .size_bytes = 2 * kMiB});
  EXPECT_FALSE(other_size.reused());
  EXPECT_EQ(std::filesystem::file_size(other_size.path()), 2 * kMiB);
}

TEST(TargetFile, AnAbortedFillLeavesNoMarkerSoTheNextOpenRefills) {
  drivelab::test_support::TempDir dir;
  const TargetFileSpec spec{.dir = dir.path(), .test_name = "abort", .size_bytes = 4 * kMiB, .direct = false};
  TargetFile cut = TargetFile::open(spec, [](std::uint64_t done, std::uint64_t) { return done < kMiB; });
  EXPECT_FALSE(cut.filled());
  TargetFile next = TargetFile::open(spec);
  EXPECT_FALSE(next.reused());
  EXPECT_TRUE(next.filled());
}

TEST(TargetFile, RefusesWhatDoesNotFitWithTheSizesInTheMessage) {
  drivelab::test_support::TempDir dir;
  try {
    TargetFile::open({.dir = dir.path(), .test_name = "huge", .size_bytes = std::uint64_t{1} << 60});
    FAIL() << "expected EnvironmentError";
  } catch (const EnvironmentError& e) {
    const std::string msg = e.what();
    const std::string head =
        "not enough free space in " + dir.path().string() + " for drivelab-huge.dat: need 1024 PiB, ";
    EXPECT_EQ(msg.substr(0, head.size()), head);
    EXPECT_EQ(msg.substr(msg.size() - 10), " available") << msg;
  }
  // The refused open leaves nothing behind (it used to leave an empty drivelab-huge.dat).
  EXPECT_FALSE(std::filesystem::exists(target_file_path(dir.path(), "huge")));
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));

  // A file that was there before is the user's to keep: refused before it is touched, it stays.
  const auto old_file = target_file_path(dir.path(), "old");
  {
    std::ofstream(old_file) << "an earlier, smaller target file";
  }
  EXPECT_THROW(TargetFile::open({.dir = dir.path(), .test_name = "old", .size_bytes = std::uint64_t{1} << 60}),
               EnvironmentError);
  ASSERT_TRUE(std::filesystem::exists(old_file));
  EXPECT_EQ(std::filesystem::file_size(old_file), 31u);
}

TEST(TargetFile, MissingTargetDirectoryIsAnEnvironmentError) {
  EXPECT_THROW(TargetFile::open({.dir = "/nonexistent/drivelab", .test_name = "x", .size_bytes = 4096}),
               EnvironmentError);
}

// A symbolic link in the test file's place (drivelab-<test>.dat) is refused, never followed: the
// file it names, outside the target, keeps its bytes, and the link stays for the user to remove
// (found by the fresh review: a 1 MiB randwrite overwrote the link's target).
TEST(TargetFile, ASymbolicLinkInTheTestFilesPlaceIsRefusedAndWhatItNamesIsUntouched) {
  drivelab::test_support::TempDir dir;
  const auto outside = dir.path() / "outside";
  std::filesystem::create_directories(outside);
  const auto victim = outside / "precious";
  std::ofstream(victim) << "precious\n";
  std::filesystem::create_directories(dir.path() / "target");
  const auto link = target_file_path(dir.path() / "target", "sym");
  std::filesystem::create_symlink(victim, link);
  for (const bool direct : {false, true}) {
    try {
      (void)TargetFile::open({.dir = dir.path() / "target", .test_name = "sym", .size_bytes = kMiB, .direct = direct});
      ADD_FAILURE() << "a symbolic link was followed";
    } catch (const EnvironmentError& e) {
      EXPECT_NE(std::string(e.what()).find("is a symbolic link (to " + victim.string() + ")"), std::string::npos)
          << e.what();
    } catch (const std::exception& e) {
      if (!direct) ADD_FAILURE() << e.what();  // O_DIRECT may be refused first by the filesystem
    }
    EXPECT_EQ(std::filesystem::file_size(victim), 9u);
    EXPECT_TRUE(std::filesystem::is_symlink(std::filesystem::symlink_status(link)));
  }
}

TEST(TargetFile, DirectAlignmentIsAPowerOfTwoOfAtLeast512) {
  drivelab::test_support::TempDir dir;
  TargetFile f = TargetFile::open({.dir = dir.path(), .test_name = "align", .size_bytes = kMiB, .fill = false});
  const std::uint32_t a = f.direct_alignment_bytes();
  EXPECT_GE(a, 512u);
  EXPECT_EQ(a & (a - 1), 0u);
  EXPECT_EQ(fcntl(f.fd(), F_GETFL) & O_DIRECT, O_DIRECT);
}

// tmpfs refused O_DIRECT before Linux 6.6 (and ramfs still does); the error must name the
// filesystem and the way out. On newer kernels tmpfs accepts it, which is checked instead.
TEST(TargetFile, ODirectOnTmpfsNamesTheFilesystem) {
  const std::filesystem::path shm = "/dev/shm";
  if (!std::filesystem::is_directory(shm) || filesystem_type(shm) != "tmpfs") GTEST_SKIP() << "no tmpfs at /dev/shm";
  EXPECT_EQ(direct_unsupported_message(shm),
            "the filesystem of /dev/shm (tmpfs) does not support O_DIRECT; set io.direct: false");
  const std::string name = "iotest-" + std::to_string(::getpid());
  try {
    TargetFile f = TargetFile::open({.dir = shm, .test_name = name, .size_bytes = 64 * 1024, .fill = false});
    f.remove();
    GTEST_SKIP() << "tmpfs supports O_DIRECT on this kernel (Linux >= 6.6)";
  } catch (const EnvironmentError& e) {
    std::filesystem::remove(target_file_path(shm, name));
    EXPECT_STREQ(e.what(), "the filesystem of /dev/shm (tmpfs) does not support O_DIRECT; set io.direct: false");
  }
}

TEST(TargetFile, RemoveDeletesTheFile) {
  drivelab::test_support::TempDir dir;
  TargetFile f = TargetFile::open({.dir = dir.path(), .test_name = "rm", .size_bytes = 8192, .fill = false});
  const auto p = f.path();
  EXPECT_TRUE(std::filesystem::exists(p));
  f.remove();
  EXPECT_FALSE(std::filesystem::exists(p));
}

}  // namespace
}  // namespace drivelab::io
