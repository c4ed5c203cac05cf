#pragma once
/// \file device_stack.hpp
/// Which block devices to sample for a test: the device that holds the target (the headline) and
/// each device below it, as the kernel stacks them:
///   partition          -> its whole disk
///   dm / LVM / LUKS    -> its slaves (Documentation/ABI/stable/sysfs-block, slaves/)
///   md RAID            -> its members (slaves/ too)
///   loop over a device -> that device (its backing "file" is a block device node)
///   loop over a file   -> the block device of the filesystem that holds the file
/// and recursively below each of those. Built from core/sysfs.hpp's storage_set (the downward
/// links of it) and loop_backing; nothing here parses sysfs again.
///
/// The headline is the one device whose counters describe the test's I/O. The devices below it
/// are context only: a partition's I/O is also counted in its disk's counters, a dm device's in
/// its slaves', so figures of two devices of one stack are never summed (HammerDB counted a
/// partition and its disk twice: TPC-Council/HammerDB#913). Devices below can carry other
/// traffic too (another partition of the same disk, the rest of the filesystem under a loop
/// device's backing file).
#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "drivelab/core/sysfs.hpp"

namespace drivelab::telemetry {

/// How a device of the stack relates to the one it was reached from.
enum class StackRole {
  headline,             ///< the device that holds the target
  whole_disk,           ///< the whole disk of a partition
  slave,                ///< a device a dm/md device is stacked on (slaves/)
  backing_device,       ///< the block device a loop device is over
  backing_file_device,  ///< the device of the filesystem that holds a loop device's backing file
};

/// "headline", "whole_disk", "slave", "backing_device", "backing_file_device".
const char* role_name(StackRole role) noexcept;

struct StackDevice {
  SysBlock block;
  StackRole role = StackRole::headline;
  std::size_t below_of = 0;         ///< index of the device it is below (the headline: 0)
  std::optional<LoopBacking> loop;  ///< a loop device's backing file (loop_backing), else nullopt
  /// <dir>/stat: the counters of Documentation/admin-guide/iostats.rst (block_stats.hpp).
  std::filesystem::path stat_file() const { return block.dir / "stat"; }
};

/// The devices to sample: devices[0] is the headline, each device appears once.
struct DeviceStack {
  std::vector<StackDevice> devices;

  const StackDevice& headline() const { return devices.front(); }
  /// "sda1; below: sda (whole disk of sda1)"; "dm-0; below: sdb (slave of dm-0), sdc (slave of dm-0)".
  std::string describe() const;
  /// The loop devices of the stack that go through the page cache (LoopBacking::direct_io false),
  /// "loop7 (backing file /srv/disk.img, loop/dio 0)", joined by ", "; "" when there are none.
  std::string page_cache_loops() const;
};

/// The stack of the block device `device` (sys_root: "/sys" but for tests; mounts: read_mountinfo(),
/// used to find the device of a backing file on btrfs-like anonymous device numbers).
DeviceStack device_stack(const SysBlock& device, const std::vector<MountEntry>& mounts,
                         const std::filesystem::path& sys_root = "/sys");

/// A mounted filesystem or an active swap area besides the test's own whose I/O a device of the
/// stack counts: other processes' reads and writes are in that device's counters (the system disk
/// a quick run uses, another partition of the disk below, a swap file on it).
struct SharedUse {
  std::string what;        ///< the mount point ("/", "/boot") or the swap area ("/swapfile", "/dev/sda3")
  bool swap = false;       ///< an active swap area (/proc/swaps), else a mounted filesystem
  std::string type;        ///< the filesystem type ("ext4"), or the swap area's ("partition", "file")
  std::string on;          ///< the block device it is on ("vda", "sdz2")
  std::string counted_in;  ///< the device of the stack whose counters count it: the headline first
};

/// The filesystems of `mounts` and the swap areas of `swaps` whose block device's own stack reaches
/// a device of `stack` (device_stack() of the filesystem's device: a filesystem on the headline,
/// on another partition of a disk below, on another loop device over a file on it, ...), one entry
/// per filesystem (a bind mount is the same filesystem: the entry mounted from the filesystem's
/// root is named), counted in the first device of `stack` it reaches. `own_filesystem`: the device
/// number of the filesystem that holds the target, which is the test's own and left out (pass
/// nullopt to keep it: the root filesystem, which the running system writes to). A swap partition
/// is resolved through its node, else <sys_root>/class/block/<name>/dev; a swap file through the
/// filesystem that holds it. Reads only.
std::vector<SharedUse> shared_uses(const DeviceStack& stack, const std::vector<MountEntry>& mounts,
                                   const std::vector<SwapArea>& swaps, std::optional<dev_t> own_filesystem,
                                   const std::filesystem::path& sys_root = "/sys");

/// What the console and the record say of `uses`, per device of `stack` that counts some, "" for
/// none: "/ is also on vda: its I/O is counted"; "/boot (on sdz2), swap /dev/sdz3 are also on sdz
/// (below sdz1): their I/O is counted".
std::string shared_text(const DeviceStack& stack, const std::vector<SharedUse>& uses);

/// The stack of a target path, or why there is none.
struct TargetStack {
  std::optional<DeviceStack> stack;
  /// When `stack` is empty: "tmpfs at /dev/shm has no block device", "overlay at / has no block
  /// device", "'/x' cannot be examined: No such file or directory".
  std::string reason;
  /// The other filesystems and swap areas on the stack (shared_uses(): the filesystem that holds
  /// a directory target is left out unless it is mounted at /).
  std::vector<SharedUse> shared;
};

/// The block device of `target` (a block device node: itself; a file or directory: the device
/// of its filesystem, through the mount's source for btrfs-like anonymous numbers), its stack and
/// what else is on it (/proc/self/mountinfo, /proc/swaps). Never throws for a missing device or file: the reason says
/// why.
TargetStack device_stack_of(const std::filesystem::path& target, const std::filesystem::path& sys_root = "/sys");

}  // namespace drivelab::telemetry
