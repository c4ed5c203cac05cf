// sysfs and procfs facts: attribute text, mountinfo and swaps with their escapes, the SCSI VPD
// serial page, udev's database, and the one serial chain (on a fake sysfs tree, so every rung is
// exercised here, whatever the machine's disks are).
#include "drivelab/core/sysfs.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "temp_dir.hpp"

namespace drivelab {
namespace {

namespace fs = std::filesystem;
using test_support::TempDir;

void write(const fs::path& p, const std::string& content) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << content;
}

TEST(SysfsText, TrimsBlanksAndNulsAndRefusesEmpty) {
  TempDir dir;
  write(dir.path() / "a", "  WD-WX1234\t\n");
  write(dir.path() / "b", std::string("SN42\0\0", 6));
  write(dir.path() / "blank", " \n");
  write(dir.path() / "n", "4096\n");
  write(dir.path() / "bad", "12a\n");
  EXPECT_EQ(read_sysfs_text(dir.path() / "a"), "WD-WX1234");
  EXPECT_EQ(read_sysfs_text(dir.path() / "b"), "SN42");
  EXPECT_EQ(read_sysfs_text(dir.path() / "blank"), std::nullopt);
  EXPECT_EQ(read_sysfs_text(dir.path() / "missing"), std::nullopt);
  EXPECT_EQ(read_sysfs_u64(dir.path() / "n"), 4096u);
  EXPECT_EQ(read_sysfs_u64(dir.path() / "bad"), std::nullopt);
  EXPECT_EQ(read_sysfs_u64(dir.path() / "missing"), std::nullopt);
}

TEST(SysfsText, DevNumbers) {
  EXPECT_EQ(parse_dev_numbers("8:17"), makedev(8, 17));
  EXPECT_EQ(parse_dev_numbers("259:0"), makedev(259, 0));
  EXPECT_EQ(parse_dev_numbers("8"), std::nullopt);
  EXPECT_EQ(parse_dev_numbers(":1"), std::nullopt);
  EXPECT_EQ(parse_dev_numbers("8:1x"), std::nullopt);
}

TEST(Mountinfo, OctalEscapesOfProc5) {
  EXPECT_EQ(unescape_octal("/mnt/my\\040disk"), "/mnt/my disk");
  EXPECT_EQ(unescape_octal("a\\011b\\012c\\134d"), "a\tb\nc\\d");
  EXPECT_EQ(unescape_octal("\\040"), " ");
  EXPECT_EQ(unescape_octal("x\\04"), "x\\04") << "too short: kept";
  EXPECT_EQ(unescape_octal("x\\08y"), "x\\08y") << "not octal: kept";
}

TEST(Mountinfo, ParsesTheProc5Example) {
  const auto m = parse_mountinfo_line("36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - ext3 /dev/root rw,errors=continue");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->dev, makedev(98, 0));
  EXPECT_EQ(m->root, "/mnt1");
  EXPECT_EQ(m->mount_point, "/mnt/parent");
  EXPECT_EQ(m->options, "rw,noatime");
  EXPECT_EQ(m->fstype, "ext3");
  EXPECT_EQ(m->source, "/dev/root");
  EXPECT_EQ(m->super_options, "rw,errors=continue");
}

TEST(Mountinfo, EscapesNoOptionalFieldsAndAnEmptySource) {
  const auto m = parse_mountinfo_line("40 1 0:45 / /media/my\\040stick rw,relatime - vfat /dev/sdb\\0401 rw");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->mount_point, "/media/my stick");
  EXPECT_EQ(m->source, "/dev/sdb 1");
  const auto empty = parse_mountinfo_line("41 1 0:46 / /x rw shared:3 master:2 - tmpfs  rw,size=10k");
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->fstype, "tmpfs");
  EXPECT_EQ(empty->source, "");
  EXPECT_EQ(empty->super_options, "rw,size=10k");
  EXPECT_FALSE(parse_mountinfo_line("36 35 98:0 /mnt1 /mnt/parent rw,noatime ext3 /dev/root rw"));
  EXPECT_FALSE(parse_mountinfo_line("36 35 x:0 / / rw - ext3 /dev/root rw"));
  EXPECT_FALSE(parse_mountinfo_line(""));
}

TEST(Mountinfo, ThisProcessHasARootMount) {
  const auto mounts = read_mountinfo();
  ASSERT_FALSE(mounts.empty());
  struct stat st {};
  ASSERT_EQ(::stat("/", &st), 0);
  const auto root = mount_containing(mounts, "/", st.st_dev);
  ASSERT_TRUE(root);
  EXPECT_EQ(root->mount_point, "/");
  EXPECT_TRUE(read_mountinfo("/nonexistent/mountinfo").empty());
}

TEST(Mountinfo, MountContainingPrefersTheDeviceThenTheLongestThenTheLast) {
  std::vector<MountEntry> m(5);
  m[0].mount_point = "/", m[0].dev = makedev(8, 1), m[0].fstype = "ext4";
  m[1].mount_point = "/mnt", m[1].dev = makedev(8, 17), m[1].fstype = "xfs";
  m[2].mount_point = "/mnt/data", m[2].dev = makedev(8, 33), m[2].fstype = "btrfs";
  m[3].mount_point = "/mnt", m[3].dev = makedev(8, 49), m[3].fstype = "ext2";  // on top of m[1]
  m[4].mount_point = "/mntx", m[4].dev = makedev(8, 65), m[4].fstype = "vfat";
  EXPECT_EQ(mount_containing(m, "/mnt/data/f", std::nullopt)->fstype, "btrfs");
  EXPECT_EQ(mount_containing(m, "/mnt/other", std::nullopt)->fstype, "ext2") << "the later mount hides";
  EXPECT_EQ(mount_containing(m, "/mnt/data/f", makedev(8, 17))->fstype, "xfs") << "the file's device wins";
  EXPECT_EQ(mount_containing(m, "/mntx", std::nullopt)->fstype, "vfat");
  EXPECT_EQ(mount_containing(m, "/mntxy/z", std::nullopt)->fstype, "ext4") << "/mntx is no parent of /mntxy";
  EXPECT_FALSE(mount_containing({}, "/", std::nullopt));
}

TEST(Swaps, ReadsPathsUnescapedAndTheirTypes) {
  TempDir dir;
  write(dir.path() / "swaps",
        "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
        "/dev/zram0                              partition\t4194300\t\t0\t\t100\n"
        "/var/my\\040swap                        file\t\t1048572\t\t0\t\t-2\n");
  const auto s = read_swaps(dir.path() / "swaps");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].path, "/dev/zram0");
  EXPECT_EQ(s[0].type, "partition");
  EXPECT_EQ(s[1].path, "/var/my swap");
  EXPECT_EQ(s[1].type, "file");
  EXPECT_TRUE(read_swaps(dir.path() / "none").empty());
}

TEST(ScsiVpd, UnitSerialPage0x80) {
  TempDir dir;
  const std::string serial = "  ZA1B2C3D    ";
  std::string page = {'\0', '\x80', '\0', static_cast<char>(serial.size())};
  write(dir.path() / "pg80", page + serial + "trailing bytes beyond the page length");
  EXPECT_EQ(scsi_unit_serial(dir.path() / "pg80"), "ZA1B2C3D");
  std::string other = {'\0', '\x83', '\0', '\4'};
  write(dir.path() / "pg83", other + "abcd");
  EXPECT_EQ(scsi_unit_serial(dir.path() / "pg83"), std::nullopt) << "another page";
  write(dir.path() / "short", std::string{'\0', '\x80'});
  EXPECT_EQ(scsi_unit_serial(dir.path() / "short"), std::nullopt);
  std::string blank = {'\0', '\x80', '\0', '\4'};
  write(dir.path() / "blank", blank + "    ");
  EXPECT_EQ(scsi_unit_serial(dir.path() / "blank"), std::nullopt);
}

TEST(Udev, PropertyOfABlockDevice) {
  TempDir dir;
  write(dir.path() / "b8:0", "S:disk/by-id/ata-X\nE:ID_SERIAL_SHORT=123\nE:ID_SERIAL=Samsung_SSD_870_S123\nG:systemd\n");
  EXPECT_EQ(udev_property(makedev(8, 0), "ID_SERIAL", dir.path()), "Samsung_SSD_870_S123");
  EXPECT_EQ(udev_property(makedev(8, 0), "ID_MODEL", dir.path()), std::nullopt);
  EXPECT_EQ(udev_property(makedev(8, 16), "ID_SERIAL", dir.path()), std::nullopt);
}

/// A fake /sys/devices/.../<name> directory with every source of the chain; the test removes
/// them one by one from the top, and the next one must answer.
TEST(SerialChain, TheOrderOfDocsTargets) {
  TempDir dir;
  const fs::path udev = dir.path() / "udev";
  SysBlock d;
  d.name = d.disk = "sdq";
  d.dir = d.disk_dir = dir.path() / "sdq";
  d.dev = d.disk_dev = makedev(65, 0);
  write(d.disk_dir / "serial", "VIRTIO-1\n");
  write(d.disk_dir / "device" / "serial", "CTRL-2\n");
  write(d.disk_dir / "device" / "vpd_pg80", std::string{'\0', '\x80', '\0', '\5'} + "SAS-3");
  write(d.disk_dir / "device" / "wwid", "naa.5000c500a1b2c3d4\n");
  write(d.disk_dir / "wwid", "eui.0025388b91b2c3d4\n");
  write(udev / "b65:0", "E:ID_SERIAL=UDEV_6\n");
  write(d.disk_dir / "dm" / "uuid", "mpath-3600a0b80001234\n");
  const std::pair<fs::path, std::pair<std::string, std::string>> rungs[] = {
      {d.disk_dir / "serial", {"VIRTIO-1", "/sys/block/sdq/serial"}},
      {d.disk_dir / "device" / "serial", {"CTRL-2", "/sys/block/sdq/device/serial"}},
      {d.disk_dir / "device" / "vpd_pg80", {"SAS-3", "/sys/block/sdq/device/vpd_pg80"}},
      {d.disk_dir / "device" / "wwid", {"naa.5000c500a1b2c3d4", "/sys/block/sdq/device/wwid"}},
      {d.disk_dir / "wwid", {"eui.0025388b91b2c3d4", "/sys/block/sdq/wwid"}},
      {udev / "b65:0", {"UDEV_6", "ID_SERIAL in " + udev.string() + "/b65:0"}},
      {d.disk_dir / "dm" / "uuid", {"mpath-3600a0b80001234", "/sys/block/sdq/dm/uuid"}},
  };
  for (const auto& [file, expected] : rungs) {
    const DeviceSerial s = device_serial(d, udev);
    EXPECT_EQ(s.value, expected.first);
    EXPECT_EQ(s.source, expected.second);
    fs::remove(file);
  }
  const DeviceSerial last = device_serial(d, udev);
  EXPECT_EQ(last.value, "sdq");
  EXPECT_EQ(last.source, "the kernel name (this device reports no serial number)");
}

TEST(SerialChain, APartitionHasItsDisksIdentityAndALoopItsBackingFile) {
  TempDir dir;
  SysBlock part;
  part.name = "sdq2";
  part.is_partition = true;
  part.disk = "sdq";
  part.disk_dir = dir.path() / "sdq";
  part.dir = part.disk_dir / "sdq2";
  write(part.dir / "serial", "NOT-THIS\n");
  write(part.disk_dir / "device" / "serial", "DISK-SERIAL\n");
  EXPECT_EQ(device_serial(part, dir.path()).value, "DISK-SERIAL");

  SysBlock loop;
  loop.name = loop.disk = "loop7";
  loop.dir = loop.disk_dir = dir.path() / "loop7";
  write(loop.disk_dir / "loop" / "backing_file", "/srv/images/my disk.img\n");
  const DeviceSerial s = device_serial(loop, dir.path());
  EXPECT_EQ(s.value, "/srv/images/my disk.img");
  EXPECT_EQ(s.source, "/sys/block/loop7/loop/backing_file; a loop device has no serial, so its backing file names it");
  fs::remove(loop.disk_dir / "loop" / "backing_file");  // detached
  EXPECT_EQ(device_serial(loop, dir.path()).value, "loop7");
}

TEST(SysBlockTest, TheRootFilesystemsDevice) {
  EXPECT_FALSE(sys_block(makedev(0, 0))) << "anonymous device numbers are no block devices";
  struct stat st {};
  ASSERT_EQ(::stat("/", &st), 0);
  const auto b = sys_block(st.st_dev);
  if (!b) GTEST_SKIP() << "/ is not on a block device here (" << major(st.st_dev) << ":" << minor(st.st_dev) << ")";
  EXPECT_EQ(b->dev, st.st_dev);
  EXPECT_EQ(b->dir.filename().string(), b->name);
  EXPECT_EQ(b->is_partition, b->disk != b->name);
  if (b->is_partition) {
    EXPECT_EQ(b->disk_dir, b->dir.parent_path());
  }
  EXPECT_EQ(read_sysfs_text(b->disk_dir / "dev"), std::to_string(major(b->disk_dev)) + ":" + std::to_string(minor(b->disk_dev)));
  EXPECT_FALSE(device_serial(*b).value.empty());
}

}  // namespace
}  // namespace drivelab
