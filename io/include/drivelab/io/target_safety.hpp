#pragma once
/// \file target_safety.hpp
/// Block devices as targets: who a device is, and whether drivelab may write to it.
///
/// Writing to a raw device destroys whatever is on it. fio and vdbench refuse nothing; drivelab
/// refuses to WRITE to a device that looks in use or holds data, and says why (docs/targets.md):
///
///   hazard            found by                                           lifted by naming the device?
///   mounted           /proc/self/mountinfo (the device or a partition)   no: unmount it first
///   swap              /proc/swaps (the device or a partition)            no: swapoff first
///   system            the device (or a slave under it) holds / or swap    no
///   holders           /sys/class/block/<dev>/holders (dm, LVM, md, ...)   no: deactivate the holder
///   read_only         /sys/class/block/<dev>/ro                          no: cannot be written at all
///   partition_table   libblkid partitions chain (dos, gpt, ...)          yes
///   signature         libblkid superblocks chain (filesystem, RAID,      yes
///                     LVM PV, LUKS, swap signature)
///   probe_failed      libblkid could not read the device                 yes
///   shared_storage    a device sharing its storage is mounted, swap or   no
///                     held: another loop device over the same backing
///                     file, a dm/md device above or below it, the whole
///                     disk of a partition (drivelab::storage_set)
///   loop_backing      it (or a device sharing its storage) holds the     no
///                     backing file of a loop device, or a loop device's
///                     backing file lives on its own storage
///
/// "Naming the device" is the protocol key `destroy_data_on: <identity>` or the command line's
/// `--destroy-data-on <identity>`; the identity is the device's serial number (see
/// BlockDevice::identity). Consent is about the DATA on the device: it cannot make writing to a
/// device that the running kernel is using safe (the kernel would also refuse the exclusive open
/// for a mounted or dm/md-claimed device), so those hazards stay refusals.
///
/// Reads are never refused (as in fio and vdbench): a read-only test on a mounted disk is harmless.
/// A named identity that is not the device's is always an error, read or write: it means the
/// protocol was written for another device.
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace drivelab::io {

/// True if `path` (following symlinks such as /dev/disk/by-id/...) is a block device node.
bool is_block_device(const std::filesystem::path& path) noexcept;

/// A block device as drivelab identifies it.
struct BlockDevice {
  std::filesystem::path path;  ///< as given ("/dev/disk/by-id/nvme-X", "/dev/loop3")
  std::string name;            ///< kernel name: "sdb", "nvme0n1p2", "loop3"
  std::string disk;            ///< whole-disk kernel name ("sdb" for "sdb1"); == name for a disk
  bool is_partition = false;
  unsigned major = 0;
  unsigned minor = 0;
  /// What `destroy_data_on` must name, and what the record shows as target.serial: the disk's
  /// serial number from the one serial chain, drivelab::device_serial (core/sysfs.hpp):
  /// /sys/block/<disk>/serial (virtio), /sys/block/<disk>/device/serial (NVMe, some SCSI),
  /// /sys/block/<disk>/device/vpd_pg80 (SCSI/SATA unit serial number page), .../device/wwid,
  /// /sys/block/<disk>/wwid, udev's ID_SERIAL (/run/udev/data/b<maj>:<min>), a device-mapper
  /// UUID (/sys/block/dm-N/dm/uuid). A loop device has no serial: its identity is its backing
  /// file as /sys/block/loopN/loop/backing_file shows it. A partition has its disk's identity.
  /// A device with none of these (zram, nbd, ...) is named by its kernel name.
  std::string identity;
  std::string identity_source;               ///< the file (or rule) the identity came from
  std::uint64_t capacity_bytes = 0;          ///< BLKGETSIZE64
  std::uint32_t logical_block_bytes = 512;   ///< BLKSSZGET: the O_DIRECT alignment
  std::uint32_t physical_block_bytes = 512;  ///< BLKPBSZGET
  bool read_only = false;                    ///< /sys/class/block/<name>/ro (BLKROGET as fallback)
};

/// Reads the identity of a block device. Throws EnvironmentError if `path` is not a block
/// device or cannot be opened for reading.
BlockDevice probe_block_device(const std::filesystem::path& path);

enum class Hazard {
  mounted,
  swap,
  system,
  holders,
  read_only,
  partition_table,
  signature,
  probe_failed,
  shared_storage,
  loop_backing
};
std::string_view to_string(Hazard hazard) noexcept;
/// True for the hazards that naming the device lifts (partition_table, signature, probe_failed).
bool consent_lifts(Hazard hazard) noexcept;

struct HazardFinding {
  Hazard hazard;
  std::string detail;  ///< "it is mounted on /mnt/data (ext4)", "it carries an ext4 filesystem signature ..."
};

/// A device of the target's stack that a write reaches, to be held with O_EXCL for the run.
struct StackDevice {
  std::filesystem::path node;  ///< the target as given, else "/dev/<kernel name>"
  dev_t dev = 0;               ///< its device number (checked against the node before holding)
  std::string path;            ///< how the target reaches it: "/dev/loop7 is a loop device over /dev/loop6"
};

/// Everything found that makes writing to one device dangerous.
struct SafetyReport {
  BlockDevice device;
  std::vector<HazardFinding> findings;
  /// The devices whose blocks a write to `device` reaches and that the kernel lets us claim: the
  /// target first, then the other loop devices over its backing file, the loop devices stacked
  /// below it (its backing device, at any depth) and above it (over it or over one of its
  /// partitions, at any depth). Not its own partitions or whole disk (the kernel's claim of a
  /// whole disk already excludes claims of its partitions, and the other way round: block/bdev.c,
  /// bd_may_claim), not dm/md devices above or below (they claim what they are stacked on
  /// themselves, which is the `holders` hazard), and not the filesystem that holds a loop
  /// device's backing file.
  std::vector<StackDevice> reach;
  bool has(Hazard h) const noexcept;
};

/// Looks for every hazard of the table above: the device and, for a whole disk, its partitions;
/// then every other device of its storage set (drivelab::storage_set, core/sysfs.hpp), whose
/// findings name the path from the device, e.g.
///   "/dev/loop5 shares its backing file with /dev/loop4, mounted at /mnt/x (ext4)"
///   "/dev/loop4p1 is a partition of /dev/loop4, mounted at /mnt/x (ext4)"
///   "/dev/mapper/v is stacked on /dev/loop5, which shares its backing file with /dev/loop4, which
///    is held by dm-1 (device-mapper 'w'), mounted at /mnt/w (ext4)"
///   "/dev/sdb has the partition /dev/sdb1, which holds the backing file of /dev/loop3 (/data/x.img)"
/// Reads only: sysfs, /proc and a read-only libblkid probe. Throws EnvironmentError as
/// probe_block_device does.
SafetyReport inspect_device(const std::filesystem::path& path);

/// One naming of a device, and where it was given (for messages).
struct Consent {
  std::string identity;  ///< the value of destroy_data_on / --destroy-data-on
  std::string origin;    ///< "--destroy-data-on", "destroy_data_on in config/x.yaml"
};

/// The gate before a run touches a device. Throws EnvironmentError:
///  - if any Consent names another identity than report.device.identity (read or write);
///  - when `writes`: if a finding that consent cannot lift exists, or a liftable finding exists
///    and no Consent names the device. The message lists EVERY finding and the exact flag, e.g.
///
///      refusing to write to /dev/loop0 (loop0, 4 GiB):
///        - it holds a dos partition table (1 partition)
///        - it carries an ext4 filesystem signature (UUID 5c1e...)
///      Everything on it would be destroyed. To allow it, name the device:
///        --destroy-data-on /tmp/x.img   (or `destroy_data_on: /tmp/x.img` in the protocol)
///      (a loop device has no serial; its identity is its backing file ...)
///
/// Returns true if the run writes to a device whose data consent was needed for (for the record).
bool authorize_device(const SafetyReport& report, std::span<const Consent> consent, bool writes);

/// The kernel's guarantee for a run that writes: every device of SafetyReport::reach flock(2)ed
/// (against another drivelab run writing the same blocks through another device: "in use by
/// another drivelab run") and opened with O_EXCL for as long as this object lives. Linux makes an
/// O_EXCL open of a block device exclusive against mounts, swapon, dm/md and other O_EXCL openers
/// (block/bdev.c), so the open fails for a device that is already in use and, once held, nobody
/// can mount or claim any of them until the run ends. What it cannot see: a loop device attached
/// over the target's file or device after the run started (attaching claims nothing), and a
/// program that opens a device without O_EXCL (docs/targets.md).
class StackClaim {
 public:
  /// Holds every device of `report.reach` (the target first). Throws EnvironmentError naming the
  /// device and how the target reaches it if one cannot be held; what was held is released.
  static StackClaim hold(const SafetyReport& report);
  /// Holds the devices of `report.reach` not held yet (a second inspection, after the holds,
  /// closes the window between the first inspection and the holds). Throws as hold() does.
  void extend(const SafetyReport& report);

  StackClaim(StackClaim&&) noexcept;
  StackClaim& operator=(StackClaim&&) noexcept;
  ~StackClaim();
  /// The device numbers held, the target first.
  std::vector<dev_t> held() const;

 private:
  StackClaim() = default;
  struct Held;
  std::vector<Held> held_;
};

}  // namespace drivelab::io
