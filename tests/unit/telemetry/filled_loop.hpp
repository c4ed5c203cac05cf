#pragma once
// Test helper: a loop device of kFilledLoopBytes over a file on the temp dir's disk, filled with
// data, in direct-I/O mode where the filesystem allows it (block_stats_loop_test.cpp,
// run_telemetry_test.cpp). Needs root; `loop` is empty with `why` otherwise. An ext4 mounted with
// data=journal on a loop device (run_telemetry_test.cpp, surface_test.cpp). And the entry of a
// device in sysstat's `iostat -o JSON` output, which both compare with.
#include <fcntl.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "../io/target_loop_device.hpp"

namespace drivelab::testing {

inline constexpr std::uint64_t kFilledLoopBytes = 64ULL << 20;

/// A loop device over a file on the temp dir's disk, filled with data (so that reads reach the
/// disk rather than a sparse file's holes), in direct-I/O mode where the filesystem allows it
/// (LOOP_SET_DIRECT_IO: the backing file is read with O_DIRECT, without the page cache), so that
/// its awaits are the disk's.
struct FilledLoop {
  std::string why;
  std::optional<LoopDevice> loop{LoopDevice::create(kFilledLoopBytes, why)};
  bool direct = false;

  FilledLoop() {
    if (!loop) return;
    const int fd = ::open(loop->path().c_str(), O_RDWR | O_DIRECT | O_CLOEXEC);
    if (fd < 0) {
      why = "open " + loop->path() + " O_DIRECT failed";
      loop.reset();
      return;
    }
    direct = ::ioctl(fd, LOOP_SET_DIRECT_IO, 1UL) == 0;
    void* buf = nullptr;
    if (::posix_memalign(&buf, 4096, 1 << 20) == 0) {
      std::memset(buf, 0x5a, 1 << 20);
      for (std::uint64_t off = 0; off < kFilledLoopBytes; off += 1 << 20)
        if (::pwrite(fd, buf, 1 << 20, static_cast<off_t>(off)) != 1 << 20) why = "fill failed";
      std::free(buf);
    }
    ::fsync(fd);
    ::close(fd);
  }
};

/// ext4 on a 64 MiB loop device over a file on the temp dir's disk, mounted with data=journal at
/// `mnt` (made), unmounted at the end. Such an ext4 cannot do direct I/O and serves O_DIRECT reads
/// through the page cache (fs/ext4/file.c ext4_dio_read_iter: "Fallback to buffered I/O if the
/// operation being performed on the inode is not supported by direct I/O"). Needs root and
/// mkfs.ext4: `why` (non-empty) says why there is none.
struct DataJournalExt4 {
  std::string why;
  std::optional<LoopDevice> loop{LoopDevice::create(64ULL << 20, why)};
  std::filesystem::path mnt;
  bool mounted = false;

  explicit DataJournalExt4(std::filesystem::path at) : mnt(std::move(at)) {
    if (!loop) return;
    if (!loop->make_ext4()) {
      why = "mkfs.ext4 not available";
      return;
    }
    std::filesystem::create_directories(mnt);
    mounted = ::mount(loop->path().c_str(), mnt.c_str(), "ext4", 0, "data=journal") == 0;
    if (!mounted) why = "mount -o data=journal " + loop->path() + ": " + std::strerror(errno);
  }
  ~DataJournalExt4() {
    if (mounted) ::umount2(mnt.c_str(), MNT_DETACH);
  }
  DataJournalExt4(const DataJournalExt4&) = delete;
  DataJournalExt4& operator=(const DataJournalExt4&) = delete;
};

/// The disk_device entry of `name` in iostat's JSON (-o JSON, sysstat >= 11.5).
inline const nlohmann::json* iostat_disk(const nlohmann::json& j, const std::string& name) {
  if (j.is_object()) {
    if (j.contains("disk_device") && j["disk_device"] == name) return &j;
    for (const auto& [k, v] : j.items())
      if (const auto* d = iostat_disk(v, name)) return d;
  } else if (j.is_array()) {
    for (const auto& v : j)
      if (const auto* d = iostat_disk(v, name)) return d;
  }
  return nullptr;
}

}  // namespace drivelab::testing
