// sysfs and procfs facts: attribute text, mountinfo and swaps with their escapes, the SCSI VPD
// serial page, udev's database, the one serial chain and the storage set of a device stack (on
// fake sysfs trees, so every rung and link is exercised here, whatever the machine's disks are).
#include "drivelab/core/sysfs.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "fake_sysfs.hpp"
#include "temp_dir.hpp"

namespace drivelab {
namespace {

namespace fs = std::filesystem;
using test_support::FakeSysfs;
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
  const auto m =
      parse_mountinfo_line("36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - ext3 /dev/root rw,errors=continue");
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
  struct stat st{};
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
  write(dir.path() / "b8:0",
        "S:disk/by-id/ata-X\nE:ID_SERIAL_SHORT=123\nE:ID_SERIAL=Samsung_SSD_870_S123\nG:systemd\n");
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
  struct stat st{};
  ASSERT_EQ(::stat("/", &st), 0);
  const auto b = sys_block(st.st_dev);
  if (!b) GTEST_SKIP() << "/ is not on a block device here (" << major(st.st_dev) << ":" << minor(st.st_dev) << ")";
  EXPECT_EQ(b->dev, st.st_dev);
  EXPECT_EQ(b->dir.filename().string(), b->name);
  EXPECT_EQ(b->is_partition, b->disk != b->name);
  if (b->is_partition) {
    EXPECT_EQ(b->disk_dir, b->dir.parent_path());
  }
  EXPECT_EQ(read_sysfs_text(b->disk_dir / "dev"),
            std::to_string(major(b->disk_dev)) + ":" + std::to_string(minor(b->disk_dev)));
  EXPECT_FALSE(device_serial(*b).value.empty());
}

std::vector<std::pair<std::string, StorageLink>> links_of(const StorageSet& set) {
  std::vector<std::pair<std::string, StorageLink>> out;
  for (const StorageMember& m : set.members) out.emplace_back(m.block.name, m.link);
  return out;
}

/// loop0 and loop1 over one file (two paths: a hard link), dm-0 on loop1, loop2 over another file;
/// a disk vdz with partitions vdz1 and vdz2.
class StorageSetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    write(dir_.path() / "a.img", "A");
    fs::create_hard_link(dir_.path() / "a.img", dir_.path() / "same-inode.img");
    write(dir_.path() / "b.img", "B");
    loop0_ = sys_.device("loop0", makedev(7, 200));
    write(loop0_ / "loop" / "backing_file", (dir_.path() / "a.img").string() + "\n");
    loop1_ = sys_.device("loop1", makedev(7, 201));
    write(loop1_ / "loop" / "backing_file", (dir_.path() / "same-inode.img").string() + "\n");
    const fs::path loop2 = sys_.device("loop2", makedev(7, 202));
    write(loop2 / "loop" / "backing_file", (dir_.path() / "b.img").string() + "\n");
    sys_.device("loop3", makedev(7, 203));  // detached: no backing_file
    dm0_ = sys_.device("dm-0", makedev(250, 0));
    FakeSysfs::stack(dm0_, loop1_);
    const fs::path vdz = sys_.device("vdz", makedev(251, 0));
    sys_.device("vdz1", makedev(251, 1), vdz);
    sys_.device("vdz2", makedev(251, 2), vdz);
  }
  TempDir dir_;
  FakeSysfs sys_{dir_.path() / "sys"};
  fs::path loop0_, loop1_, dm0_;
};

TEST_F(StorageSetTest, ASecondLoopDeviceOverTheSameInodeAndWhatIsStackedOnIt) {
  const StorageSet set = storage_set(sys_.block(makedev(7, 200)), {}, sys_.root());
  using L = StorageLink;
  const std::vector<std::pair<std::string, StorageLink>> expected = {
      {"loop0", L::self}, {"loop1", L::same_backing_file}, {"dm-0", L::holder}};
  EXPECT_EQ(links_of(set), expected);
  EXPECT_EQ(set.path_to(2), (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(set.find(makedev(250, 0)), 2u);
  EXPECT_FALSE(set.find(makedev(7, 202)));
  ASSERT_TRUE(set.members[0].backing);
  EXPECT_EQ(set.members[0].backing->file, (dir_.path() / "a.img").string());
  EXPECT_TRUE(set.loops_on_themselves.empty());
  // From the dm device down: its slave, and the other loop device over that file.
  const StorageSet down = storage_set(sys_.block(makedev(250, 0)), {}, sys_.root());
  const std::vector<std::pair<std::string, StorageLink>> below = {
      {"dm-0", L::self}, {"loop1", L::slave}, {"loop0", L::same_backing_file}};
  EXPECT_EQ(links_of(down), below);
}

TEST_F(StorageSetTest, BackingFilesCompareByInodeThenByPath) {
  LoopBacking a{"/x/a.img", makedev(8, 1), 12, std::nullopt, std::nullopt};
  LoopBacking b{"/y/other-name.img", makedev(8, 1), 12, std::nullopt, std::nullopt};
  EXPECT_TRUE(same_backing_file(a, b));
  b.file_ino = 13;
  EXPECT_FALSE(same_backing_file(a, b));
  LoopBacking gone1{"/x/a.img (deleted)", std::nullopt, std::nullopt, std::nullopt, std::nullopt};
  LoopBacking gone2{"/x/a.img (deleted)", std::nullopt, std::nullopt, std::nullopt, std::nullopt};
  EXPECT_TRUE(same_backing_file(gone1, gone2)) << "not stat-able: the same path";
  EXPECT_FALSE(same_backing_file(a, gone1));
  EXPECT_FALSE(loop_backing(sys_.block(makedev(7, 203)), {})) << "a detached loop device";
  EXPECT_FALSE(loop_backing(sys_.block(makedev(251, 0)), {})) << "not a loop device";
}

TEST_F(StorageSetTest, APartitionsWholeDiskButNotItsSiblings) {
  using L = StorageLink;
  const StorageSet part = storage_set(sys_.block(makedev(251, 1)), {}, sys_.root());
  const std::vector<std::pair<std::string, StorageLink>> up = {{"vdz1", L::self}, {"vdz", L::whole_disk}};
  EXPECT_EQ(links_of(part), up);
  const StorageSet disk = storage_set(sys_.block(makedev(251, 0)), {}, sys_.root());
  const std::vector<std::pair<std::string, StorageLink>> all = {
      {"vdz", L::self}, {"vdz1", L::partition}, {"vdz2", L::partition}};
  auto got = links_of(disk);
  std::sort(got.begin() + 1, got.end());
  EXPECT_EQ(got, all);
}

TEST_F(StorageSetTest, LoopDevicesWhoseBackingFileLivesOnAMember) {
  // The filesystem of the backing files is a fake partition vdz9 here (or, on a btrfs-like
  // anonymous number, the device its mount names).
  const auto backing = loop_backing(sys_.block(makedev(7, 200)), read_mountinfo());
  ASSERT_TRUE(backing && backing->file_dev);
  if (!backing->fs_device || sys_block(*backing->fs_device, sys_.root()))
    GTEST_SKIP() << "the temp dir's filesystem has no block device number to fake";
  const fs::path fsdisk = sys_.device("fsdisk", makedev(252, 0));
  sys_.device("fsdisk9", *backing->fs_device, fsdisk);
  const StorageSet set = storage_set(sys_.block(makedev(252, 0)), read_mountinfo(), sys_.root());
  auto got = links_of(set);
  using L = StorageLink;
  ASSERT_EQ(got.size(), 6u) << "fsdisk, fsdisk9, loop0/1/2 on it, dm-0 on loop1";
  EXPECT_EQ(got[0], (std::pair<std::string, StorageLink>{"fsdisk", L::self}));
  EXPECT_EQ(got[1], (std::pair<std::string, StorageLink>{"fsdisk9", L::partition}));
  std::sort(got.begin() + 2, got.end());
  EXPECT_EQ(got[2], (std::pair<std::string, StorageLink>{"dm-0", L::holder}));
  EXPECT_EQ(got[3], (std::pair<std::string, StorageLink>{"loop0", L::backing_file_on}));
  EXPECT_EQ(got[4], (std::pair<std::string, StorageLink>{"loop1", L::backing_file_on}));
  EXPECT_EQ(got[5], (std::pair<std::string, StorageLink>{"loop2", L::backing_file_on}));
  // A loop device over a file on its own storage: fsdisk9 stacked on loop2 (whose file is on it).
  FakeSysfs::stack(sys_.root() / "devices" / "virtual" / "block" / "fsdisk",
                   sys_.root() / "devices" / "virtual" / "block" / "loop2");
  const StorageSet cycle = storage_set(sys_.block(makedev(7, 202)), read_mountinfo(), sys_.root());
  ASSERT_EQ(cycle.loops_on_themselves.size(), 1u);
  EXPECT_EQ(cycle.members[cycle.loops_on_themselves[0].first].block.name, "loop2");
  EXPECT_EQ(cycle.members[cycle.loops_on_themselves[0].second].block.name, "fsdisk9");
}

/// Issue 29: loop devices over block devices. A disk vdy (partitions vdy1, vdy2), md9 on vdy2,
/// loop900 over /dev/vdy1, loop901 over /dev/loop900, dm-5 on loop901. The backing nodes do
/// not exist on this machine, so they are resolved by kernel name through class/block/, as for a
/// node in another mount namespace.
class StackedLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path vdy = sys_.device("vdy", makedev(251, 16));
    sys_.device("vdy1", makedev(251, 17), vdy);
    const fs::path vdy2 = sys_.device("vdy2", makedev(251, 18), vdy);
    FakeSysfs::stack(sys_.device("md9", makedev(9, 9)), vdy2);
    write(sys_.device("loop900", makedev(7, 210)) / "loop" / "backing_file", "/dev/vdy1\n");
    const fs::path l11 = sys_.device("loop901", makedev(7, 211));
    write(l11 / "loop" / "backing_file", "/dev/loop900\n");
    FakeSysfs::stack(sys_.device("dm-5", makedev(250, 5)), l11);
  }
  static std::vector<std::pair<std::string, StorageLink>> sorted(const StorageSet& set) {
    auto got = links_of(set);
    std::sort(got.begin() + 1, got.end());
    return got;
  }
  TempDir dir_;
  FakeSysfs sys_{dir_.path() / "sys"};
};

TEST_F(StackedLoopTest, ALoopOverABlockDeviceIsThatDevicesBlocks) {
  ASSERT_FALSE(fs::exists("/dev/vdy1") || fs::exists("/dev/loop900")) << "the fake names must not exist here";
  const auto backing = loop_backing(sys_.block(makedev(7, 211)), {}, sys_.root());
  ASSERT_TRUE(backing);
  EXPECT_EQ(backing->file, "/dev/loop900");
  EXPECT_EQ(backing->backing_device, makedev(7, 210));
  EXPECT_FALSE(backing->fs_device) << "devtmpfs holds no storage of it";
  LoopBacking a{"/dev/x", std::nullopt, std::nullopt, std::nullopt, makedev(7, 210)};
  LoopBacking b{"/dev/disk/by-id/other-name", std::nullopt, std::nullopt, std::nullopt, makedev(7, 210)};
  EXPECT_TRUE(same_backing_file(a, b)) << "two nodes of one device";
  b.backing_device = makedev(7, 212);
  EXPECT_FALSE(same_backing_file(a, b));
}

TEST_F(StackedLoopTest, DownwardFromTheTopLoopToTheWholeDiskButNotItsOtherPartition) {
  using L = StorageLink;
  const StorageSet set = storage_set(sys_.block(makedev(7, 211)), {}, sys_.root());
  const std::vector<std::pair<std::string, StorageLink>> expected = {{"loop901", L::self},
                                                                     {"dm-5", L::holder},
                                                                     {"loop900", L::backing_device},
                                                                     {"vdy1", L::backing_device},
                                                                     {"vdy", L::whole_disk}};
  EXPECT_EQ(links_of(set), expected);
  EXPECT_EQ(set.path_to(4), (std::vector<std::size_t>{0, 2, 3, 4}));
}

TEST_F(StackedLoopTest, UpwardFromTheDiskThroughItsPartitionsToEveryLoopAndHolder) {
  using L = StorageLink;
  const std::vector<std::pair<std::string, StorageLink>> expected = {
      {"vdy", L::self},   {"dm-5", L::holder},    {"loop900", L::loop_over}, {"loop901", L::loop_over},
      {"md9", L::holder}, {"vdy1", L::partition}, {"vdy2", L::partition}};
  EXPECT_EQ(sorted(storage_set(sys_.block(makedev(251, 16)), {}, sys_.root())), expected);
  // md9 down: its member, that member's disk; not the disk's other partition or what is on it.
  const std::vector<std::pair<std::string, StorageLink>> md = {
      {"md9", L::self}, {"vdy2", L::slave}, {"vdy", L::whole_disk}};
  EXPECT_EQ(links_of(storage_set(sys_.block(makedev(9, 9)), {}, sys_.root())), md);
}

TEST_F(StackedLoopTest, TheHoldersOfTheDeviceALoopIsOverShareItsBlocks) {
  // A dm device on loop900 (below the target loop901): unlike an LVM volume beside the target,
  // it maps blocks the loop device covers.
  FakeSysfs::stack(sys_.device("dm-6", makedev(250, 6)), sys_.root() / "devices" / "virtual" / "block" / "loop900");
  const StorageSet set = storage_set(sys_.block(makedev(7, 211)), {}, sys_.root());
  ASSERT_TRUE(set.find(makedev(250, 6)));
  EXPECT_EQ(set.members[*set.find(makedev(250, 6))].link, StorageLink::holder);
}

}  // namespace
}  // namespace drivelab
