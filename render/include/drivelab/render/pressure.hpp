#pragma once
/// \file pressure.hpp
/// Memory pressure for the `render` emulator, so that the flat point array pages to the drive
/// under test (docs/render.md):
///  - `swap`: a swap file in the target directory, enabled for the run (swapon(2)), and a memory
///    cgroup capped at the budget that the pipeline process runs in (cgroup v2: memory.max,
///    memory.swap.max = max; v1: memory.limit_in_bytes). Needs root.
///  - `mmap`: the array is a shared mapping of a file in the target, its resident set limited by
///    the pipeline (pipeline.hpp). No root.
///  - `none`: anonymous memory, the RAM-only baseline.
/// Every resource is RAII and is also named by a marker file in the target directory
/// ("drivelab-render.<pid>.marker"), written before the resource exists, so that a run that
/// crashed (SIGKILL) leaves enough behind for the next start to clean up (clean_stale()).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "drivelab/core/names.hpp"
#include "drivelab/core/sysfs.hpp"

namespace drivelab::render {

enum class MemoryMode { none, mmap, swap };
inline constexpr EnumNames<MemoryMode, 3> kMemoryModeNames{
    {{"none", MemoryMode::none}, {"mmap", MemoryMode::mmap}, {"swap", MemoryMode::swap}}};
inline std::string_view to_string(MemoryMode m) noexcept { return name_of(kMemoryModeNames, m); }

/// Paging counters at one instant. Global counters (/proc/vmstat) and the target's block device
/// (/sys/dev/block/MAJ:MIN/stat, 512-byte sectors) include other activity of the host; the
/// process's major faults (getrusage) are the pipeline's own.
struct PagingCounters {
  std::uint64_t pswpin_pages = 0;          ///< /proc/vmstat pswpin (pages swapped in, whole host)
  std::uint64_t pswpout_pages = 0;         ///< /proc/vmstat pswpout
  std::uint64_t pgmajfault = 0;            ///< /proc/vmstat pgmajfault (whole host)
  std::uint64_t process_major_faults = 0;  ///< getrusage(RUSAGE_SELF).ru_majflt of the pipeline process
  std::uint64_t device_read_bytes = 0;     ///< the target's block device, sectors read x 512
  std::uint64_t device_write_bytes = 0;
  /// Counters now; `device_stat` is the device's stat file (empty: device counters stay 0).
  static PagingCounters sample(const std::filesystem::path& device_stat) noexcept;
  PagingCounters operator-(const PagingCounters& earlier) const noexcept;
  PagingCounters& operator+=(const PagingCounters& o) noexcept;
};

/// The stat file of the block device holding `dir` ("/sys/dev/block/259:1/stat"), or empty when
/// there is none (tmpfs, overlay without a device).
std::filesystem::path device_stat_path(const std::filesystem::path& dir);

/// Swap devices active now (/proc/swaps, drivelab::read_swaps): path and type ("partition", "file").
using SwapEntry = SwapArea;
std::vector<SwapEntry> active_swaps();

/// Checks that `swap` mode can page to `target_dir` and only there. Throws EnvironmentError with
/// every reason: not root; another active swap device or file (zram included) would take the
/// traffic; zswap is enabled (pages would be compressed in RAM); the filesystem cannot hold a swap
/// file (tmpfs, btrfs, overlay, nfs, ...); no memory cgroup (neither v2 with the memory controller
/// nor a v1 memory hierarchy).
void check_swap_mode(const std::filesystem::path& target_dir);

/// The memory cgroup version swap mode would use: 2, 1, or 0 (none).
int memory_cgroup_version();

/// Removes what a crashed run left behind: for each marker in `target_dir` whose process is gone,
/// swapoff + unlink its swap file and kill + rmdir its cgroup; also any active swap file named
/// "drivelab-render.<pid>.swap" anywhere and any cgroup "drivelab-render.<pid>" of a dead pid.
/// Returns one line per removed item (for the record); never throws.
std::vector<std::string> clean_stale(const std::filesystem::path& target_dir);

/// The marker file of this process in `target_dir`.
std::filesystem::path marker_path(const std::filesystem::path& target_dir, int pid);

/// A swap file in the target, zero-filled (swapon refuses holes and unwritten extents), formatted
/// with mkswap(8) and enabled with swapon(2); swapoff + unlink on destruction. Throws
/// EnvironmentError (message names the file and the reason) on failure, after removing it.
class SwapFile {
 public:
  SwapFile(std::filesystem::path path, std::uint64_t size_bytes, const std::function<bool()>& stop);
  ~SwapFile();
  SwapFile(const SwapFile&) = delete;
  SwapFile& operator=(const SwapFile&) = delete;
  const std::filesystem::path& path() const noexcept { return path_; }
  std::uint64_t size_bytes() const noexcept { return size_bytes_; }
  bool active() const noexcept { return active_; }
  /// swapoff + unlink now; returns false (and keeps trying in the destructor) if swapoff failed.
  bool remove() noexcept;

 private:
  std::filesystem::path path_;
  std::uint64_t size_bytes_;
  bool active_ = false;
};

/// A memory cgroup capped at `limit_bytes`, swap unlimited; the cgroup is emptied (its processes
/// killed) and removed on destruction. Throws EnvironmentError on failure.
class MemoryCgroup {
 public:
  MemoryCgroup(const std::string& name, std::uint64_t limit_bytes);
  ~MemoryCgroup();
  MemoryCgroup(const MemoryCgroup&) = delete;
  MemoryCgroup& operator=(const MemoryCgroup&) = delete;
  /// Moves process `pid` into the cgroup.
  void add(int pid);
  const std::filesystem::path& path() const noexcept { return path_; }
  int version() const noexcept { return version_; }
  /// Times the cgroup hit its limit (v1 memory.failcnt / v2 memory.events "max"), OOM kills.
  std::uint64_t limit_hits() const;
  std::uint64_t oom_kills() const;
  bool remove() noexcept;

 private:
  std::filesystem::path path_;
  int version_ = 0;
  bool exists_ = false;
};

/// Where swap mode's cgroup for `name` would live (for tests and the marker).
std::filesystem::path cgroup_path_for(const std::string& name);

}  // namespace drivelab::render
