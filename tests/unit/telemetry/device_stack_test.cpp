// The device stack of a target on recorded (fake) sysfs trees: a partition and its disk, dm over
// two disks, md over its members, a loop device over a file on a disk and over a block device;
// and on this machine's own tree for what has no block device.
#include "drivelab/telemetry/device_stack.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "fake_sysfs.hpp"
#include "temp_dir.hpp"

namespace drivelab::telemetry {
namespace {

namespace fs = std::filesystem;
using test_support::FakeSysfs;
using test_support::TempDir;
using test_support::write_file;

std::vector<std::pair<std::string, StackRole>> roles(const DeviceStack& s) {
  std::vector<std::pair<std::string, StackRole>> out;
  for (const StackDevice& d : s.devices) out.emplace_back(d.block.name, d.role);
  return out;
}

class DeviceStackTest : public ::testing::Test {
 protected:
  TempDir dir_;
  FakeSysfs sys_{dir_.path() / "sys"};
};

TEST_F(DeviceStackTest, APartitionIsTheHeadlineAndItsDiskIsBelowNeverItsSiblingsOrHolders) {
  const fs::path sdz = sys_.device("sdz", makedev(8, 240));
  const fs::path sdz1 = sys_.device("sdz1", makedev(8, 241), sdz);
  sys_.device("sdz2", makedev(8, 242), sdz);
  FakeSysfs::stack(sys_.device("dm-9", makedev(253, 9)), sdz1);  // LUKS on the partition: above, not below
  const DeviceStack s = device_stack(sys_.block(makedev(8, 241)), {}, sys_.root());
  using R = StackRole;
  const std::vector<std::pair<std::string, StackRole>> expected = {{"sdz1", R::headline}, {"sdz", R::whole_disk}};
  EXPECT_EQ(roles(s), expected);
  EXPECT_EQ(s.headline().block.name, "sdz1");
  EXPECT_EQ(s.devices[1].below_of, 0u);
  EXPECT_EQ(s.headline().stat_file(), sdz1 / "stat");
  EXPECT_EQ(s.describe(), "sdz1; below: sdz (whole disk of sdz1)");
  // The whole disk as the target: nothing below it (its partitions are above).
  EXPECT_EQ(roles(device_stack(sys_.block(makedev(8, 240)), {}, sys_.root())),
            (std::vector<std::pair<std::string, StackRole>>{{"sdz", R::headline}}));
}

TEST_F(DeviceStackTest, DmOverTwoDisksHasBothSlavesBelowAndThePartitionsDisk) {
  const fs::path sdx = sys_.device("sdx", makedev(65, 112));
  const fs::path sdx1 = sys_.device("sdx1", makedev(65, 113), sdx);
  const fs::path sdy = sys_.device("sdy", makedev(65, 128));
  const fs::path dm3 = sys_.device("dm-3", makedev(253, 3));
  FakeSysfs::stack(dm3, sdx1);
  FakeSysfs::stack(dm3, sdy);
  FakeSysfs::stack(sys_.device("dm-4", makedev(253, 4)), dm3);  // an LV on the dm device: above
  const DeviceStack s = device_stack(sys_.block(makedev(253, 3)), {}, sys_.root());
  ASSERT_EQ(s.devices.size(), 4u) << s.describe();
  EXPECT_EQ(s.headline().block.name, "dm-3");
  using R = StackRole;
  auto below = roles(s);
  std::sort(below.begin() + 1, below.end());
  const std::vector<std::pair<std::string, StackRole>> expected = {
      {"dm-3", R::headline}, {"sdx", R::whole_disk}, {"sdx1", R::slave}, {"sdy", R::slave}};
  EXPECT_EQ(below, expected);
  for (const StackDevice& d : s.devices) {
    if (d.block.name == "sdx") {
      EXPECT_EQ(s.devices[d.below_of].block.name, "sdx1");
    }
  }
}

TEST_F(DeviceStackTest, MdOverItsMembers) {
  const fs::path vdb = sys_.device("vdb", makedev(252, 16));
  const fs::path vdc = sys_.device("vdc", makedev(252, 32));
  const fs::path md7 = sys_.device("md7", makedev(9, 7));
  FakeSysfs::stack(md7, sys_.device("vdb1", makedev(252, 17), vdb));
  FakeSysfs::stack(md7, sys_.device("vdc1", makedev(252, 33), vdc));
  sys_.device("vdb2", makedev(252, 18), vdb);  // another partition of a member's disk: not below
  const DeviceStack s = device_stack(sys_.block(makedev(9, 7)), {}, sys_.root());
  auto got = roles(s);
  std::sort(got.begin() + 1, got.end());
  using R = StackRole;
  const std::vector<std::pair<std::string, StackRole>> expected = {
      {"md7", R::headline}, {"vdb", R::whole_disk}, {"vdb1", R::slave}, {"vdc", R::whole_disk}, {"vdc1", R::slave}};
  EXPECT_EQ(got, expected);
}

TEST_F(DeviceStackTest, ALoopOverAFileHasTheFilesystemsDiskBelow) {
  write_file(dir_.path() / "image.img", "I");
  const fs::path loop = sys_.device("loop950", makedev(7, 950));
  write_file(loop / "loop" / "backing_file", (dir_.path() / "image.img").string() + "\n");
  const auto backing = loop_backing(sys_.block(makedev(7, 950)), read_mountinfo(), sys_.root());
  ASSERT_TRUE(backing);
  if (!backing->fs_device || sys_block(*backing->fs_device, sys_.root()))
    GTEST_SKIP() << "the temp dir's filesystem has no block device number to fake";
  // The temp dir's filesystem is a partition fsdisk1 of a disk fsdisk here.
  const fs::path fsdisk = sys_.device("fsdisk", makedev(240, 0));
  sys_.device("fsdisk1", *backing->fs_device, fsdisk);
  const DeviceStack s = device_stack(sys_.block(makedev(7, 950)), read_mountinfo(), sys_.root());
  using R = StackRole;
  const std::vector<std::pair<std::string, StackRole>> expected = {
      {"loop950", R::headline}, {"fsdisk1", R::backing_file_device}, {"fsdisk", R::whole_disk}};
  EXPECT_EQ(roles(s), expected);
  EXPECT_EQ(s.describe(),
            "loop950; below: fsdisk1 (holds the backing file of loop950), fsdisk (whole disk of fsdisk1)");
}

TEST_F(DeviceStackTest, ALoopOverABlockDeviceHasThatDeviceBelow) {
  const fs::path vdq = sys_.device("vdq", makedev(252, 64));
  sys_.device("vdq1", makedev(252, 65), vdq);
  ASSERT_FALSE(fs::exists("/dev/vdq1")) << "the fake name must not exist here";
  write_file(sys_.device("loop960", makedev(7, 960)) / "loop" / "backing_file", "/dev/vdq1\n");
  const DeviceStack s = device_stack(sys_.block(makedev(7, 960)), {}, sys_.root());
  using R = StackRole;
  const std::vector<std::pair<std::string, StackRole>> expected = {
      {"loop960", R::headline}, {"vdq1", R::backing_device}, {"vdq", R::whole_disk}};
  EXPECT_EQ(roles(s), expected);
}

/// loop/dio (sysfs-block-loop): a loop device that reads and writes its backing storage through
/// the page cache is named; one in direct-I/O mode, or on a kernel without the attribute, is not.
TEST_F(DeviceStackTest, ALoopDeviceWithoutDirectIoIsNamedAsGoingThroughThePageCache) {
  sys_.device("vdq", makedev(252, 64));
  const fs::path loop = sys_.device("loop961", makedev(7, 961));
  write_file(loop / "loop" / "backing_file", "/dev/vdq\n");
  const auto stack = [&] { return device_stack(sys_.block(makedev(7, 961)), {}, sys_.root()); };
  EXPECT_EQ(stack().page_cache_loops(), "") << "no loop/dio: not known, not said";
  write_file(loop / "loop" / "dio", "0\n");
  ASSERT_TRUE(stack().devices.front().loop);
  EXPECT_EQ(stack().devices.front().loop->direct_io, false);
  EXPECT_EQ(stack().page_cache_loops(), "loop961 (backing file /dev/vdq, loop/dio 0)");
  write_file(loop / "loop" / "dio", "1\n");
  EXPECT_EQ(stack().devices.front().loop->direct_io, true);
  EXPECT_EQ(stack().page_cache_loops(), "");
  // Below a dm device too: the loop device is a slave.
  const fs::path dm = sys_.device("dm-9", makedev(253, 9));
  FakeSysfs::stack(dm, loop);
  write_file(loop / "loop" / "dio", "0\n");
  EXPECT_EQ(device_stack(sys_.block(makedev(253, 9)), {}, sys_.root()).page_cache_loops(),
            "loop961 (backing file /dev/vdq, loop/dio 0)");
}

/// A mount of `dev` at `at` (root: the filesystem's directory mounted there).
MountEntry mount(dev_t dev, const std::string& at, const std::string& fstype, const std::string& root = "/") {
  return {dev, root, at, "rw", fstype, "", ""};
}

TEST_F(DeviceStackTest, OtherFilesystemsAndSwapOnTheStackAreSharedUsesCountedInTheirDevice) {
  const fs::path sdz = sys_.device("sdz", makedev(8, 240));
  sys_.device("sdz1", makedev(8, 241), sdz);
  sys_.device("sdz2", makedev(8, 242), sdz);
  sys_.device("sdz3", makedev(8, 243), sdz);
  sys_.device("sdw", makedev(8, 16));
  const DeviceStack s = device_stack(sys_.block(makedev(8, 241)), {}, sys_.root());
  const std::vector<MountEntry> mounts = {
      mount(makedev(8, 241), "/mnt/dut", "ext4"),       // the target's own filesystem
      mount(makedev(8, 242), "/srv/x", "xfs", "/sub"),  // a bind mount of a directory of sdz2 ...
      mount(makedev(8, 242), "/boot", "xfs"),           // ... whose root is mounted at /boot
      mount(makedev(0, 23), "/dev/shm", "tmpfs"),       // no block device
      mount(makedev(8, 16), "/data", "ext4")};          // another disk: not on the stack
  ASSERT_FALSE(fs::exists("/dev/sdz3")) << "the fake name must not exist here";
  const std::vector<SwapArea> swaps = {{"/dev/sdz3", "partition"}};
  const std::vector<SharedUse> uses = shared_uses(s, mounts, swaps, makedev(8, 241), sys_.root());
  ASSERT_EQ(uses.size(), 2u);
  EXPECT_EQ(uses[0].what, "/boot");
  EXPECT_FALSE(uses[0].swap);
  EXPECT_EQ(uses[0].type, "xfs");
  EXPECT_EQ(uses[0].on, "sdz2");
  EXPECT_EQ(uses[0].counted_in, "sdz");  // another partition of the disk below: not the headline's
  EXPECT_TRUE(uses[1].swap);
  EXPECT_EQ(uses[1].on, "sdz3");
  EXPECT_EQ(shared_text(s, uses),
            "/boot (on sdz2), swap /dev/sdz3 (on sdz3) are also on sdz (below sdz1): their I/O is counted");
  // The target's filesystem when it is the running system's root: its other users are counted in
  // the headline itself.
  const std::vector<SharedUse> root = shared_uses(s, mounts, {}, std::nullopt, sys_.root());
  ASSERT_EQ(root.size(), 2u);
  EXPECT_EQ(root[0].counted_in, "sdz1");
  EXPECT_EQ(shared_text(s, root),
            "/mnt/dut is also on sdz1: its I/O is counted; /boot (on sdz2) is also on sdz (below sdz1): its I/O is "
            "counted");
  EXPECT_EQ(shared_text(s, {}), "");
}

TEST(DeviceStackOf, ADirectoryOfTheRootFilesystemSharesItsDeviceWithTheSystem) {
  // A quick run in a directory of the build tree: on this VM the root filesystem on vda.
  const fs::path dir = fs::path(DRIVELAB_BINARY_DIR);
  const TargetStack t = device_stack_of(dir);
  if (!t.stack) GTEST_SKIP() << t.reason;
  struct stat st{};
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  const auto m = mount_containing(read_mountinfo(), fs::canonical(dir).string(), st.st_dev);
  ASSERT_TRUE(m);
  const std::string text = shared_text(*t.stack, t.shared);
  std::cout << dir.string() << " on " << m->mount_point << ": " << t.stack->describe() << "; shared: " << text << "\n";
  if (m->mount_point != "/") GTEST_SKIP() << "the build tree is not on the root filesystem";
  ASSERT_FALSE(t.shared.empty());
  EXPECT_EQ(t.shared[0].what, "/");
  EXPECT_EQ(t.shared[0].counted_in, t.stack->headline().block.name);
  EXPECT_TRUE(text.starts_with("/ is also on " + t.stack->headline().block.name)) << text;
}

TEST(DeviceStackOf, SaysWhyThereIsNoBlockDevice) {
  const TargetStack proc = device_stack_of("/proc/self");
  EXPECT_FALSE(proc.stack);
  EXPECT_NE(proc.reason.find("has no block device"), std::string::npos) << proc.reason;
  EXPECT_NE(proc.reason.find("proc"), std::string::npos) << proc.reason;
  const TargetStack missing = device_stack_of("/nonexistent/drivelab-telemetry");
  EXPECT_FALSE(missing.stack);
  EXPECT_NE(missing.reason.find("cannot be examined"), std::string::npos) << missing.reason;
}

TEST(DeviceStackOf, ThisMachinesTempDir) {
  TempDir dir;
  const TargetStack t = device_stack_of(dir.path());
  if (!t.stack) GTEST_SKIP() << t.reason;
  struct stat st{};
  ASSERT_EQ(::stat(dir.path().c_str(), &st), 0);
  EXPECT_TRUE(t.reason.empty());
  EXPECT_EQ(t.stack->headline().role, StackRole::headline);
  EXPECT_TRUE(fs::exists(t.stack->headline().stat_file())) << t.stack->describe();
}

}  // namespace
}  // namespace drivelab::telemetry
