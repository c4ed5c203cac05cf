#pragma once
// Test helper: a loop device of kFilledLoopBytes over a file on the temp dir's disk, filled with
// data, in direct-I/O mode where the filesystem allows it (block_stats_loop_test.cpp,
// run_telemetry_test.cpp). Needs root; `loop` is empty with `why` otherwise. And the entry of a
// device in sysstat's `iostat -o JSON` output, which both compare with.
#include <fcntl.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

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
