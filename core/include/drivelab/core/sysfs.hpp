#pragma once
/// \file sysfs.hpp
/// The machine's facts as the kernel publishes them in sysfs and procfs, read in one place: small
/// text attributes, /proc/self/mountinfo and /proc/swaps with their octal escapes, block devices
/// (node, partition, whole disk) and the one chain that names a disk by its serial number.
///
/// Target safety (`--destroy-data-on`), the target file and the result record's `target` object
/// all use these functions, so the serial a record shows is always the identity that
/// `--destroy-data-on` accepts for that device (docs/targets.md, "The identity").
///
/// Everything here only reads. A fact that cannot be read is std::nullopt (never an exception):
/// sysfs attributes come and go with drivers and kernel versions.
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace drivelab {

// ---- attributes -----------------------------------------------------------------------------

/// The content of a small sysfs/procfs attribute file with leading and trailing white space and
/// NUL bytes removed (sysfs values end in "\n"; some drivers pad with blanks or NULs). nullopt if
/// the file cannot be read or holds nothing but blanks.
std::optional<std::string> read_sysfs_text(const std::filesystem::path& file);

/// read_sysfs_text parsed as a whole unsigned decimal number ("512\n" -> 512); nullopt if absent
/// or not a number.
std::optional<std::uint64_t> read_sysfs_u64(const std::filesystem::path& file);

/// "MAJ:MIN" (the `dev` attribute of Documentation/ABI/stable/sysfs-block, field 3 of
/// mountinfo) -> dev_t; nullopt if malformed.
std::optional<dev_t> parse_dev_numbers(std::string_view text);

// ---- mounts and swap ------------------------------------------------------------------------

/// Undoes the octal escapes the kernel writes in /proc/self/mountinfo, /proc/self/mounts and
/// /proc/swaps (proc(5): space, tab, newline and backslash appear as \040, \011, \012, \134).
/// A backslash not followed by three octal digits is kept as it is.
std::string unescape_octal(std::string_view s);

/// One line of /proc/self/mountinfo (proc(5)):
///   "36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - ext3 /dev/root rw,errors=continue"
///    id par dev root mount_point options  optional... - fstype source super_options
struct MountEntry {
  dev_t dev = 0;              ///< field 3: the st_dev of files on this mount
  std::string root;           ///< field 4: the directory of the filesystem mounted here (unescaped)
  std::string mount_point;    ///< field 5, unescaped
  std::string options;        ///< field 6: per-mount options
  std::string fstype;         ///< first field after "-": "ext4", "tmpfs", "btrfs"
  std::string source;         ///< "/dev/sda1", "tmpfs", ... (unescaped; may be empty)
  std::string super_options;  ///< per-superblock options ("" if the line has none)
};

/// Parses one mountinfo line (fields separated by single spaces, as the kernel writes them, so an
/// empty source stays an empty field). nullopt for a line without the "-" separator, the fstype
/// and source after it, or a valid MAJ:MIN.
std::optional<MountEntry> parse_mountinfo_line(std::string_view line);

/// Every mount of `file` (default: this process's mount namespace), in the kernel's order
/// (a later entry on the same mount point is on top). Empty if the file cannot be read.
std::vector<MountEntry> read_mountinfo(const std::filesystem::path& file = "/proc/self/mountinfo");

/// The mount that holds the absolute, normalised `path`: among the mounts whose mount point is
/// `path` or one of its parent directories, those whose device number is `dev` (the file's
/// st_dev; robust against bind mounts and paths hidden by a later mount) win, then the longest
/// mount point, then the last listed (the one on top). nullopt if none (an empty list).
std::optional<MountEntry> mount_containing(const std::vector<MountEntry>& mounts, const std::string& path,
                                           std::optional<dev_t> dev);

/// One active swap area of /proc/swaps ("Filename Type Size Used Priority", header skipped).
struct SwapArea {
  std::string path;  ///< the device or file, unescaped
  std::string type;  ///< "partition" or "file"
};
/// Every active swap area; empty if none or if `file` cannot be read.
std::vector<SwapArea> read_swaps(const std::filesystem::path& file = "/proc/swaps");

// ---- block devices --------------------------------------------------------------------------

/// A block device node as sysfs shows it (Documentation/ABI/stable/sysfs-block): the node itself
/// and, for a partition, the whole disk that holds it.
struct SysBlock {
  std::string name;                ///< kernel name of the node: "sda1", "nvme0n1", "loop3", "dm-0"
  std::filesystem::path dir;       ///< canonical /sys/devices/.../<name>
  dev_t dev = 0;                   ///< the node's device number
  bool is_partition = false;       ///< `<dir>/partition` exists
  std::string disk;                ///< whole-disk kernel name ("sda" for "sda1"); == name for a disk
  std::filesystem::path disk_dir;  ///< the disk's sysfs directory (a partition's parent)
  dev_t disk_dev = 0;              ///< the disk's device number (its `dev` attribute)
};

/// The device `dev` through <sys_root>/dev/block/MAJ:MIN; nullopt if the kernel lists no such
/// block device (a tmpfs or btrfs anonymous device number, say). `sys_root` is "/sys" but for tests.
std::optional<SysBlock> sys_block(dev_t dev, const std::filesystem::path& sys_root = "/sys");

/// The device whose sysfs directory is `dir` (a canonical /sys/devices/.../<name>, as the links in
/// holders/ and slaves/ lead to); its number from `<dir>/dev`. nullopt if `dir` has no valid `dev`.
std::optional<SysBlock> sys_block_at(const std::filesystem::path& dir);

/// The device number of the block device node `path` ("/dev/sda1", a mountinfo source or a
/// /proc/swaps entry); nullopt if `path` is not absolute or not a block device node.
std::optional<dev_t> block_device_number(const std::string& path);

/// The SCSI Unit Serial Number VPD page (page code 0x80; SPC-4 7.8.19): a 4-byte header whose
/// byte 1 is the page code and bytes 2-3 the page length (big-endian), then the serial in ASCII,
/// possibly padded with blanks. The Linux SCSI layer exposes the raw page as the binary attribute
/// /sys/block/<disk>/device/vpd_pg80 (drivers/scsi/scsi_sysfs.c).
/// nullopt if unreadable, not page 0x80, or blank.
std::optional<std::string> scsi_unit_serial(const std::filesystem::path& vpd_pg80);

/// The value of property `key` ("ID_SERIAL") in udev's database entry of block device `dev`:
/// a line "E:<key>=<value>" of <udev_data_dir>/b<major>:<minor>, the database udevd keeps under
/// /run/udev/data (systemd's udev; the /dev/disk/by-id/ names are made of ID_SERIAL). nullopt if
/// udev does not run here, has no entry, or the value is blank.
std::optional<std::string> udev_property(dev_t dev, std::string_view key,
                                         const std::filesystem::path& udev_data_dir = "/run/udev/data");

// ---- the device stack: what shares storage with a block device ------------------------------

/// The backing file of an attached loop device (loop(4)), as Documentation/ABI/testing/
/// sysfs-block-loop publishes it in /sys/block/loopN/loop/backing_file (present only while a file
/// is attached; the kernel appends " (deleted)" once the file is unlinked).
struct LoopBacking {
  std::string file;               ///< the path as sysfs shows it
  std::optional<dev_t> file_dev;  ///< stat(file).st_dev, if the path can be stat'ed here
  std::optional<ino_t> file_ino;  ///< stat(file).st_ino: paths can differ, the inode cannot
  /// The block device of the filesystem that holds the file: file_dev when it is a block device,
  /// else the source of the mount with that (anonymous) number, as btrfs and overlayfs show it.
  /// Never set when the backing "file" is itself a block device (see backing_device).
  std::optional<dev_t> fs_device;
  /// When the backing "file" is a block device node (`losetup /dev/loop1 /dev/loop0`, the usual
  /// way to reach a disk image's partitions, or a loop over /dev/sdb1): that device's number,
  /// stat(file).st_rdev with S_ISBLK. Its file_dev/file_ino are devtmpfs's numbers for the node,
  /// which say nothing about the storage: the loop device IS that device's blocks. If the node
  /// cannot be stat'ed here (another mount namespace), a path /dev/<name> is resolved through
  /// <sys_root>/class/block/<name>/dev.
  std::optional<dev_t> backing_device;
  /// `<dir>/loop/dio` (sysfs-block-loop, Linux >= 4.4): true when the loop device reads and writes
  /// its backing file with O_DIRECT (`losetup --direct-io=on`), false when through the page cache
  /// of that file (or of the backing block device): then O_DIRECT I/O on the loop device is cached
  /// below it and never has to reach the drive. nullopt where the kernel does not publish it.
  std::optional<bool> direct_io;
};

/// The backing file of `device` (a loop device: `<dir>/loop/backing_file`); nullopt for any other
/// device and for a detached loop device. `mounts` (read_mountinfo) resolves fs_device;
/// `sys_root` resolves a backing device node that cannot be stat'ed here.
std::optional<LoopBacking> loop_backing(const SysBlock& device, const std::vector<MountEntry>& mounts,
                                        const std::filesystem::path& sys_root = "/sys");

/// True if two loop devices are over the same storage: the same backing block device when both
/// are over one, else the same st_dev and st_ino when both are known, otherwise the same path.
bool same_backing_file(const LoopBacking& a, const LoopBacking& b) noexcept;

/// How a member of a StorageSet was reached from the member before it.
enum class StorageLink {
  self,               ///< the device the set is for
  partition,          ///< a partition of it (a directory under the disk's with a `partition` file)
  whole_disk,         ///< the whole disk of a partition
  holder,             ///< in its holders/ (Documentation/ABI/stable/sysfs-block: dm, md, LVM,
                      ///< bcache, ... stacked on it)
  slave,              ///< in its slaves/ (the device it is stacked on)
  same_backing_file,  ///< another loop device over its backing file (same inode)
  backing_file_on,    ///< a loop device whose backing file lives on a filesystem on it
  backing_device,     ///< the block device a loop device is over (its backing "file" is a device
                      ///< node): the loop device's blocks ARE that device's blocks, downward
  loop_over,          ///< a loop device whose backing "file" is this block device, upward
};

/// One device of a storage set.
struct StorageMember {
  SysBlock block;
  StorageLink link = StorageLink::self;
  std::size_t from = 0;                ///< index of the member it was reached from (self: 0)
  std::optional<LoopBacking> backing;  ///< an attached loop device's backing file
};

/// Every block device that shares storage with one device: writing to the device changes what
/// each of them reads, and the other way round.
struct StorageSet {
  std::vector<StorageMember> members;  ///< members[0] is the device; each device appears once
  /// A loop device of the set whose backing file lives on a filesystem on a member of the set
  /// reached some other way (a loop device over its own storage): (loop, filesystem) indexes.
  std::vector<std::pair<std::size_t, std::size_t>> loops_on_themselves;

  /// The index of the member with device number `dev`, if any.
  std::optional<std::size_t> find(dev_t dev) const noexcept;
  /// The indexes from members[0] to members[i] along `from`, both ends included.
  std::vector<std::size_t> path_to(std::size_t i) const;
};

/// Builds the storage set of `device` from sysfs, breadth first (each device once):
///  - the device, its partitions (a whole disk) or its whole disk (a partition);
///  - holders/ recursively upward (dm, md RAID, LVM and their partitions) and slaves/ recursively
///    downward (what a dm/md device is stacked on, and a slave partition's whole disk);
///  - for a loop device, every other loop device over the same backing file (by inode);
///  - every loop device whose backing file lives on a filesystem on a member (the one that backs
///    a loop device is in use by it), and recursively their stacks;
///  - loop devices over block devices, both ways and at any depth: the device a loop device is
///    over (backing_device; its partitions, whole disk, holders and the other loop devices over
///    it, since the loop covers all of it) and every loop device over a member (loop_over).
///    Without these links a mounted filesystem was written through a loop stacked on it or under
///    it (issue 29).
/// A partition's sibling partitions and the other holders of a device below (another LVM volume
/// on the same physical volume) are not members: they do not share the device's blocks.
/// `mounts` is read_mountinfo() (for backing files on btrfs-like anonymous device numbers).
/// Reads only; a sysfs entry that vanishes meanwhile is skipped.
StorageSet storage_set(const SysBlock& device, const std::vector<MountEntry>& mounts,
                       const std::filesystem::path& sys_root = "/sys");

/// The identity of a disk, and where it was read (shown in messages so a user copies it).
struct DeviceSerial {
  std::string value;   ///< never empty: the kernel name when nothing else names the disk
  std::string source;  ///< "/sys/block/sda/device/vpd_pg80", "ID_SERIAL in /run/udev/data/b8:0", ...
};

/// THE serial chain: what `destroy_data_on` must name and what the record's target.serial is.
/// For `device`'s whole disk (a partition has its disk's identity), the first of:
///  1. a loop device: its backing file as /sys/block/loopN/loop/backing_file shows it (a loop
///     device has no serial; Documentation/ABI/testing/sysfs-block-loop);
///  2. /sys/block/<disk>/serial (virtio-blk);
///  3. /sys/block/<disk>/device/serial (NVMe controllers, some SCSI);
///  4. /sys/block/<disk>/device/vpd_pg80 (SCSI/SATA/SAS: scsi_unit_serial above);
///  5. /sys/block/<disk>/device/wwid, then /sys/block/<disk>/wwid (NVMe namespaces);
///  6. udev's ID_SERIAL of the disk (udev_property);
///  7. a device-mapper UUID, /sys/block/dm-N/dm/uuid (Documentation/ABI/testing/sysfs-block-dm;
///     LVM's "LVM-...", multipath's "mpath-...");
///  8. the kernel name (zram, nbd, a dm device without a UUID, ...).
/// The files are read below `device.disk_dir`; sources name them as /sys/block/<disk>/...
DeviceSerial device_serial(const SysBlock& device, const std::filesystem::path& udev_data_dir = "/run/udev/data");

}  // namespace drivelab
