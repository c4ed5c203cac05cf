// Target safety on real loop devices: blank, ext4, ext4 + partition table, mounted, read-only;
// a device-mapper linear device on one (its UUID names it; the loop below is claimed); the
// device stack (issue 15): a second loop device over a mounted one's backing file, a partition
// of a mounted whole disk and a whole disk with a mounted partition, dm devices over them;
// loop devices stacked on block devices both ways and three deep, with partitions (issue 29), and
// the O_EXCL hold of a whole stack (StackClaim).
// Skipped where loop devices cannot be made (not root), the dm tests where device-mapper cannot.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <vector>

#include "drivelab/core/errors.hpp"
#include "drivelab/io/target_safety.hpp"
#include "target_dm_device.hpp"
#include "target_loop_device.hpp"
#include "temp_dir.hpp"

namespace drivelab::io {
namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

/// The message of the EnvironmentError that authorize_device throws ("" if it does not throw).
std::string refusal(const SafetyReport& r, const std::vector<Consent>& consent, bool writes) {
  try {
    authorize_device(r, consent, writes);
  } catch (const EnvironmentError& e) {
    return e.what();
  }
  return {};
}

class Safety : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    auto d = testing::LoopDevice::create(64 * kMiB, why);
    if (!d) GTEST_SKIP() << "no loop device here: " << why;
    loop_.emplace(std::move(*d));
  }
  std::vector<Consent> named(const std::string& id) const { return {{id, "--destroy-data-on"}}; }
  std::optional<testing::LoopDevice> loop_;
};

TEST(SafetyPlain, RegularFileIsNotABlockDevice) {
  drivelab::test_support::TempDir dir;
  EXPECT_FALSE(is_block_device(dir.path()));
  EXPECT_THROW(probe_block_device(dir.path()), EnvironmentError);
  EXPECT_TRUE(consent_lifts(Hazard::signature));
  EXPECT_TRUE(consent_lifts(Hazard::partition_table));
  EXPECT_FALSE(consent_lifts(Hazard::mounted));
  EXPECT_FALSE(consent_lifts(Hazard::system));
  EXPECT_FALSE(consent_lifts(Hazard::holders));
}

TEST_F(Safety, LoopIdentityIsItsBackingFile) {
  const BlockDevice d = probe_block_device(loop_->path());
  EXPECT_EQ("/dev/" + d.name, loop_->path());
  EXPECT_EQ(d.disk, d.name);
  EXPECT_FALSE(d.is_partition);
  EXPECT_EQ(d.identity, loop_->backing_file());
  EXPECT_TRUE(contains(d.identity_source, "/loop/backing_file")) << d.identity_source;
  EXPECT_EQ(d.capacity_bytes, 64 * kMiB);
  EXPECT_GE(d.logical_block_bytes, 512u);
  EXPECT_FALSE(d.read_only);
}

TEST_F(Safety, DmLinearIdentityIsItsUuidAndItsLoopIsClaimed) {
  std::string why;
  auto dm = testing::DmLinearDevice::create(loop_->path(), 32 * kMiB, why);
  if (!dm) GTEST_SKIP() << "no device-mapper device here: " << why;
  const SafetyReport r = inspect_device(dm->path());
  EXPECT_EQ(r.device.name.rfind("dm-", 0), 0u) << r.device.name;
  EXPECT_EQ(r.device.identity, dm->uuid());
  EXPECT_EQ(r.device.identity_source, "/sys/block/" + r.device.name + "/dm/uuid");
  EXPECT_EQ(r.device.capacity_bytes, 32 * kMiB);
  EXPECT_FALSE(authorize_device(r, named(dm->uuid()), true)) << "blank: nothing to lift";
  EXPECT_TRUE(contains(refusal(r, named(loop_->backing_file()), true), "not the target"));
  // The loop device under it is held by the dm device: writing to it is refused, named or not.
  const SafetyReport below = inspect_device(loop_->path());
  ASSERT_TRUE(below.has(Hazard::holders));
  const std::string msg = refusal(below, named(loop_->backing_file()), true);
  EXPECT_TRUE(contains(msg, "device-mapper '" + dm->name() + "'")) << msg;
}

TEST_F(Safety, BlankDeviceIsWritableWithoutConsent) {
  const SafetyReport r = inspect_device(loop_->path());
  EXPECT_TRUE(r.findings.empty()) << r.findings.front().detail;
  EXPECT_FALSE(authorize_device(r, {}, true));
  // Naming it is fine too, and naming another device is an error even for a blank one.
  EXPECT_NO_THROW(authorize_device(r, named(loop_->backing_file()), true));
  EXPECT_TRUE(contains(refusal(r, named("SERIAL-OF-ANOTHER-DISK"), true), "not the target"));
}

TEST_F(Safety, FilesystemIsRefusedUntilTheLoopIdentityIsNamed) {
  if (!loop_->make_ext4()) GTEST_SKIP() << "mkfs.ext4 not available";
  const SafetyReport r = inspect_device(loop_->path());
  ASSERT_TRUE(r.has(Hazard::signature));
  const std::string msg = refusal(r, {}, true);
  EXPECT_TRUE(contains(msg, "refusing to write to " + loop_->path())) << msg;
  EXPECT_TRUE(contains(msg, "ext4 filesystem signature")) << msg;
  EXPECT_TRUE(contains(msg, "--destroy-data-on " + loop_->backing_file())) << msg;
  EXPECT_TRUE(contains(msg, "destroy_data_on: " + loop_->backing_file())) << msg;
  EXPECT_TRUE(contains(msg, "backing_file")) << msg;
  // Accepted once named; reading needs no consent at all.
  EXPECT_TRUE(authorize_device(r, named(loop_->backing_file()), true));
  EXPECT_FALSE(authorize_device(r, {}, false));
  // A wrong name is refused, read or write, and the message says which device it is.
  const std::string wrong = refusal(r, {{"WD-123", "destroy_data_on in p.yaml"}}, false);
  EXPECT_TRUE(contains(wrong, "destroy_data_on in p.yaml names 'WD-123'")) << wrong;
  EXPECT_TRUE(contains(wrong, loop_->backing_file())) << wrong;
}

TEST_F(Safety, EveryReasonIsListed) {
  if (!loop_->make_ext4()) GTEST_SKIP() << "mkfs.ext4 not available";
  ASSERT_TRUE(loop_->write_mbr());
  const SafetyReport r = inspect_device(loop_->path());
  EXPECT_TRUE(r.has(Hazard::partition_table));
  const std::string msg = refusal(r, {}, true);
  EXPECT_TRUE(contains(msg, "dos partition table")) << msg;
  EXPECT_TRUE(contains(msg, "ext4")) << msg;
  EXPECT_GE(std::count(msg.begin(), msg.end(), '\n'), 3) << msg;
  EXPECT_TRUE(authorize_device(r, named(loop_->backing_file()), true));
}

TEST_F(Safety, MountedIsRefusedEvenWhenNamed) {
  if (!loop_->make_ext4()) GTEST_SKIP() << "mkfs.ext4 not available";
  if (!loop_->mount_ext4()) GTEST_SKIP() << "cannot mount here";
  const SafetyReport r = inspect_device(loop_->path());
  ASSERT_TRUE(r.has(Hazard::mounted));
  const std::string msg = refusal(r, named(loop_->backing_file()), true);
  EXPECT_TRUE(contains(msg, "it is mounted on " + (loop_->dir() / "mnt").string() + " (ext4)")) << msg;
  EXPECT_TRUE(contains(msg, "naming the device does not lift this")) << msg;
  EXPECT_TRUE(contains(msg, "unmount")) << msg;
  // Reading a mounted device is allowed, as fio and vdbench allow it.
  EXPECT_FALSE(authorize_device(r, {}, false));
  loop_->unmount();
  EXPECT_FALSE(inspect_device(loop_->path()).has(Hazard::mounted));
}

TEST_F(Safety, ReadOnlyIsRefusedForWrites) {
  {
    const int fd = ::open(loop_->path().c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    int ro = 1;
    ASSERT_EQ(::ioctl(fd, BLKROSET, &ro), 0);
    ::close(fd);
  }
  const SafetyReport r = inspect_device(loop_->path());
  ASSERT_TRUE(r.has(Hazard::read_only));
  EXPECT_TRUE(contains(refusal(r, named(loop_->backing_file()), true), "read-only"));
  EXPECT_NO_THROW(authorize_device(r, {}, false));
}

// Issue 15: a mounted ext4 on /dev/loopA was destroyed through /dev/loopB, a second loop device
// over the same backing file: the checks looked at the target's own device number only.
TEST_F(Safety, ASecondLoopDeviceOverAMountedOnesBackingFileIsRefusedEvenWhenNamed) {
  if (!loop_->make_ext4()) GTEST_SKIP() << "mkfs.ext4 not available";
  std::string why;
  auto alias = loop_->alias(why);
  ASSERT_TRUE(alias) << why;
  // Neither is in use: the alias carries the same ext4 signature, which naming the file lifts.
  EXPECT_TRUE(authorize_device(inspect_device(alias->path()), named(alias->backing_file()), true));
  if (!loop_->mount_ext4()) GTEST_SKIP() << "cannot mount here";
  const SafetyReport r = inspect_device(alias->path());
  const std::string msg = refusal(r, named(alias->backing_file()), true);
  EXPECT_TRUE(contains(msg, alias->path() + " shares its backing file with " + loop_->path() + ", mounted at " +
                                (loop_->dir() / "mnt").string() + " (ext4)"))
      << msg;
  EXPECT_TRUE(contains(msg, "naming the device does not lift this")) << msg;
  EXPECT_TRUE(r.has(Hazard::shared_storage));
  EXPECT_FALSE(r.has(Hazard::mounted)) << "the alias itself is not mounted";
  EXPECT_FALSE(authorize_device(r, {}, false)) << "reading is still allowed";
  // The mounted one names its own mount, as before, and not the idle alias.
  const std::string own = refusal(inspect_device(loop_->path()), named(loop_->backing_file()), true);
  EXPECT_TRUE(contains(own, "it is mounted on " + (loop_->dir() / "mnt").string() + " (ext4)")) << own;
  EXPECT_FALSE(contains(own, "shares its backing file")) << own;
  loop_->unmount();
  EXPECT_FALSE(inspect_device(alias->path()).has(Hazard::shared_storage));
}

TEST_F(Safety, AnIdleSecondLoopDeviceIsNoHazard) {
  std::string why;
  auto alias = loop_->alias(why);
  ASSERT_TRUE(alias) << why;
  const SafetyReport r = inspect_device(alias->path());
  EXPECT_TRUE(r.findings.empty()) << r.findings.front().detail;
  EXPECT_TRUE(inspect_device(loop_->path()).findings.empty());
}

/// A loop device that scans partitions, with a DOS table of one 4 MiB partition at 1 MiB.
class SafetyPartitions : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    auto d = testing::LoopDevice::create(64 * kMiB, why, /*partscan=*/true);
    if (!d) GTEST_SKIP() << "no loop device here: " << why;
    loop_.emplace(std::move(*d));
    if (!loop_->add_partition()) GTEST_SKIP() << "the kernel makes no partition of " << loop_->path();
  }
  std::vector<Consent> named() const { return {{loop_->backing_file(), "--destroy-data-on"}}; }
  std::optional<testing::LoopDevice> loop_;
};

TEST_F(SafetyPartitions, AWholeDiskWithAMountedPartitionAndItsSecondLoopDeviceAreRefused) {
  if (!loop_->make_ext4_on(loop_->partition(1))) GTEST_SKIP() << "mkfs.ext4 not available";
  if (!loop_->mount_ext4(loop_->partition(1))) GTEST_SKIP() << "cannot mount here";
  const std::string mnt = (loop_->dir() / "mnt").string();
  const std::string whole = refusal(inspect_device(loop_->path()), named(), true);
  EXPECT_TRUE(contains(whole, "its partition " + loop_->partition(1).substr(5) + " is mounted on " + mnt + " (ext4)"))
      << whole;
  // The same storage through a second loop device (which does not scan partitions).
  std::string why;
  auto alias = loop_->alias(why);
  ASSERT_TRUE(alias) << why;
  const SafetyReport r = inspect_device(alias->path());
  EXPECT_TRUE(r.has(Hazard::shared_storage));
  const std::string msg = refusal(r, named(), true);
  EXPECT_TRUE(contains(msg, alias->path() + " shares its backing file with " + loop_->path() +
                                ", which has the partition " + loop_->partition(1) + ", mounted at " + mnt + " (ext4)"))
      << msg;
}

TEST_F(SafetyPartitions, APartitionOfAMountedWholeDiskIsRefused) {
  // ext4 on the whole disk; the kernel keeps the partition it has.
  if (!loop_->make_ext4()) GTEST_SKIP() << "mkfs.ext4 not available";
  if (!loop_->mount_ext4()) GTEST_SKIP() << "cannot mount here";
  const SafetyReport r = inspect_device(loop_->partition(1));
  EXPECT_TRUE(r.device.is_partition);
  EXPECT_TRUE(r.has(Hazard::shared_storage));
  const std::string msg = refusal(r, named(), true);
  EXPECT_TRUE(contains(msg, loop_->partition(1) + " is a partition of " + loop_->path() + ", mounted at " +
                                (loop_->dir() / "mnt").string() + " (ext4)"))
      << msg;
  EXPECT_TRUE(contains(msg, "naming the device does not lift this")) << msg;
}

TEST_F(Safety, ADmDeviceOverTheSecondLoopDeviceOfAMountedOneIsRefused) {
  if (!loop_->make_ext4()) GTEST_SKIP() << "mkfs.ext4 not available";
  std::string why;
  auto alias = loop_->alias(why);
  ASSERT_TRUE(alias) << why;
  auto dm = testing::DmLinearDevice::create(alias->path(), 32 * kMiB, why);
  if (!dm) GTEST_SKIP() << "no device-mapper device here: " << why;
  if (!loop_->mount_ext4()) GTEST_SKIP() << "cannot mount here";
  const SafetyReport r = inspect_device(dm->path());
  EXPECT_TRUE(r.has(Hazard::shared_storage));
  const std::string msg = refusal(r, named(dm->uuid()), true);
  EXPECT_TRUE(contains(msg, dm->path() + " is stacked on " + alias->path() + ", which shares its backing file with " +
                                loop_->path() + ", mounted at " + (loop_->dir() / "mnt").string() + " (ext4)"))
      << msg;
}

TEST_F(Safety, TheSecondLoopDeviceUnderAMountedDmDeviceIsRefused) {
  std::string why;
  auto dm = testing::DmLinearDevice::create(loop_->path(), 32 * kMiB, why);
  if (!dm) GTEST_SKIP() << "no device-mapper device here: " << why;
  if (!loop_->make_ext4_on(dm->path())) GTEST_SKIP() << "mkfs.ext4 not available";
  auto mount = testing::Ext4Mount::create(dm->path());
  if (!mount) GTEST_SKIP() << "cannot mount " << dm->path() << " here";
  auto alias = loop_->alias(why);
  ASSERT_TRUE(alias) << why;
  const SafetyReport r = inspect_device(alias->path());
  EXPECT_TRUE(r.has(Hazard::shared_storage));
  const std::string dm_name = inspect_device(dm->path()).device.name;
  const std::string msg = refusal(r, named(alias->backing_file()), true);
  EXPECT_TRUE(contains(msg, alias->path() + " shares its backing file with " + loop_->path() + ", which is held by " +
                                dm_name + " (device-mapper '" + dm->name() + "'), mounted at " + mount->dir().string() +
                                " (ext4)"))
      << msg;
}

// ---- Issue 29: loop devices stacked on block devices, both ways, any depth ----------------------

/// loop_ (64 MiB over a file) and loops stacked on it; each test mounts one and inspects another.
class SafetyStacked : public Safety {
 protected:
  testing::LoopDevice over(const std::string& node, bool partscan = false) {
    std::string why;
    auto d = testing::LoopDevice::over(node, why, partscan);
    if (!d) throw std::runtime_error("cannot stack a loop device on " + node + ": " + why);
    return std::move(*d);
  }
  static std::string mnt(const testing::LoopDevice& d) { return (d.dir() / "mnt").string(); }
  static std::vector<std::string> reach_nodes(const SafetyReport& r) {
    std::vector<std::string> out;
    for (const StackDevice& d : r.reach) out.push_back(d.node.string());
    return out;
  }
};

TEST_F(SafetyStacked, ALoopOverAMountedDeviceIsRefusedNamingTheMountWithAndWithoutConsent) {
  if (!loop_->make_ext4()) GTEST_SKIP() << "mkfs.ext4 not available";
  auto upper = over(loop_->path());
  if (!loop_->mount_ext4()) GTEST_SKIP() << "cannot mount here";
  const SafetyReport r = inspect_device(upper.path());
  EXPECT_TRUE(r.has(Hazard::shared_storage));
  const std::string expected =
      upper.path() + " is a loop device over " + loop_->path() + ", mounted at " + mnt(*loop_) + " (ext4)";
  for (const auto& consent : {std::vector<Consent>{}, named(upper.backing_file())}) {
    const std::string msg = refusal(r, consent, true);
    EXPECT_TRUE(contains(msg, expected)) << msg;
    EXPECT_TRUE(contains(msg, "naming the device does not lift this")) << msg;
  }
  EXPECT_EQ(upper.backing_file(), loop_->path()) << "a loop over a device is named by that device's node";
  EXPECT_FALSE(authorize_device(r, {}, false)) << "reading is still allowed";
}

TEST_F(SafetyStacked, TheDeviceUnderAMountedLoopIsRefused) {
  auto upper = over(loop_->path());
  if (!upper.make_ext4()) GTEST_SKIP() << "mkfs.ext4 not available";
  if (!upper.mount_ext4()) GTEST_SKIP() << "cannot mount here";
  const SafetyReport r = inspect_device(loop_->path());
  const std::string msg = refusal(r, named(loop_->backing_file()), true);
  EXPECT_TRUE(contains(msg, loop_->path() + " is the backing device of the loop device " + upper.path() +
                                ", mounted at " + mnt(upper) + " (ext4)"))
      << msg;
  EXPECT_TRUE(r.has(Hazard::shared_storage));
}

TEST_F(SafetyStacked, ThreeDeepBothWays) {
  auto middle = over(loop_->path());
  auto top = over(middle.path());
  // Idle: nothing to refuse, and a write would hold all three (the target first).
  const SafetyReport idle = inspect_device(top.path());
  EXPECT_TRUE(idle.findings.empty()) << idle.findings.front().detail;
  EXPECT_EQ(reach_nodes(idle), (std::vector<std::string>{top.path(), middle.path(), loop_->path()}));
  EXPECT_EQ(reach_nodes(inspect_device(loop_->path())),
            (std::vector<std::string>{loop_->path(), middle.path(), top.path()}));
  if (!loop_->make_ext4()) GTEST_SKIP() << "mkfs.ext4 not available";
  ASSERT_TRUE(loop_->mount_ext4());
  const std::string down = refusal(inspect_device(top.path()), named(top.backing_file()), true);
  EXPECT_TRUE(contains(down, top.path() + " is a loop device over " + middle.path() + ", which is a loop device over " +
                                 loop_->path() + ", mounted at " + mnt(*loop_) + " (ext4)"))
      << down;
  loop_->unmount();
  ASSERT_TRUE(middle.drop_cache() && top.drop_cache());
  ASSERT_TRUE(top.mount_ext4()) << "the same ext4, seen through two loop devices";
  const std::string up = refusal(inspect_device(loop_->path()), named(loop_->backing_file()), true);
  EXPECT_TRUE(contains(up, loop_->path() + " is the backing device of the loop device " + middle.path() +
                               ", which is the backing device of the loop device " + top.path() + ", mounted at " +
                               mnt(top) + " (ext4)"))
      << up;
}

TEST_F(SafetyStacked, APartitionOfAPartscanLoopOverTheDeviceIsMounted) {
  auto upper = over(loop_->path(), /*partscan=*/true);
  if (!upper.add_partition()) GTEST_SKIP() << "the kernel makes no partition of " << upper.path();
  if (!upper.make_ext4_on(upper.partition(1))) GTEST_SKIP() << "mkfs.ext4 not available";
  ASSERT_TRUE(upper.mount_ext4(upper.partition(1)));
  const std::string msg = refusal(inspect_device(loop_->path()), named(loop_->backing_file()), true);
  EXPECT_TRUE(contains(msg, loop_->path() + " is the backing device of the loop device " + upper.path() +
                                ", which has the partition " + upper.partition(1) + ", mounted at " + mnt(upper) +
                                " (ext4)"))
      << msg;
}

TEST_F(SafetyStacked, ALoopOverAPartitionOfTheTargetIsMounted) {
  std::string why;
  auto disk = testing::LoopDevice::create(64 * kMiB, why, /*partscan=*/true);
  ASSERT_TRUE(disk) << why;
  if (!disk->add_partition()) GTEST_SKIP() << "the kernel makes no partition of " << disk->path();
  auto upper = over(disk->partition(1));
  if (!upper.make_ext4()) GTEST_SKIP() << "mkfs.ext4 not available";
  ASSERT_TRUE(upper.mount_ext4());
  const SafetyReport r = inspect_device(disk->path());
  const std::string msg = refusal(r, named(disk->backing_file()), true);
  EXPECT_TRUE(contains(msg, disk->path() + " has the partition " + disk->partition(1) +
                                ", which is the backing device of the loop device " + upper.path() + ", mounted at " +
                                mnt(upper) + " (ext4)"))
      << msg;
  // From the partition itself, and from the loop over it down to the whole disk.
  EXPECT_TRUE(inspect_device(disk->partition(1)).has(Hazard::shared_storage));
  upper.unmount();
  const SafetyReport idle = inspect_device(upper.path());
  for (const HazardFinding& f : idle.findings) EXPECT_TRUE(consent_lifts(f.hazard)) << f.detail;
  EXPECT_EQ(reach_nodes(idle), (std::vector<std::string>{upper.path(), disk->partition(1)}))
      << "the whole disk is not held beside its partition: the kernel's claim of one excludes the other";
}

// Found by the fresh review: C over B over A; C was inspected while blank (its cache, and B's,
// hold A's old blocks); then an ext4 was made on A. A write to C must still see it.
TEST_F(SafetyStacked, AFilesystemMadeBelowIsSeenThroughTheStaleCachesAbove) {
  auto middle = over(loop_->path());
  auto top = over(middle.path());
  EXPECT_TRUE(inspect_device(top.path()).findings.empty()) << "blank, and now cached above";
  if (!loop_->make_ext4()) GTEST_SKIP() << "mkfs.ext4 not available";
  const std::string msg = refusal(inspect_device(top.path()), {}, true);
  EXPECT_TRUE(contains(msg, "ext4 filesystem signature")) << msg;
  EXPECT_TRUE(contains(msg, "--destroy-data-on " + top.backing_file())) << msg;
  // The same through a second loop device over A's file, whose cache A's own writes bypass.
  std::string why;
  auto alias = loop_->alias(why);
  ASSERT_TRUE(alias) << why;
  auto on_alias = over(alias->path());
  EXPECT_TRUE(contains(refusal(inspect_device(on_alias.path()), {}, true), "ext4 filesystem signature"));
}

TEST_F(SafetyStacked, HeldStackCannotBeMountedAndASecondRunThroughAnAliasIsRefused) {
  if (!loop_->make_ext4()) GTEST_SKIP() << "mkfs.ext4 not available";
  auto upper = over(loop_->path());
  std::string why;
  auto alias = loop_->alias(why);
  ASSERT_TRUE(alias) << why;
  const SafetyReport r = inspect_device(upper.path());
  ASSERT_EQ(reach_nodes(r).size(), 3u) << "the target, the device it is over and that one's alias";
  std::optional<StackClaim> claim(StackClaim::hold(r));
  EXPECT_EQ(claim->held().size(), 3u);
  for (testing::LoopDevice* d : {&*loop_, &*alias}) {
    EXPECT_FALSE(d->mount_ext4()) << d->path() << " is held";
    EXPECT_EQ(errno, EBUSY) << d->path();
  }
  // A second run writing the same blocks through another device.
  try {
    StackClaim::hold(inspect_device(alias->path()));
    ADD_FAILURE() << "a second claim of the same stack succeeded";
  } catch (const EnvironmentError& e) {
    EXPECT_TRUE(contains(e.what(), "in use by another drivelab run")) << e.what();
  }
  claim.reset();
  EXPECT_TRUE(loop_->mount_ext4()) << "released with the claim";
  try {
    StackClaim::hold(inspect_device(upper.path()));
    ADD_FAILURE() << "a mounted device below was held";
  } catch (const EnvironmentError& e) {
    EXPECT_TRUE(contains(e.what(), "kernel refused an exclusive open")) << e.what();
    EXPECT_TRUE(contains(e.what(), upper.path() + " is a loop device over " + loop_->path())) << e.what();
  }
}

TEST(SafetySystem, TheRootDeviceIsRefused) {
  // Whatever holds / here (a disk, a partition, dm): if it is a block device we can name, it must
  // be refused for writes with a reason that consent cannot lift.
  struct stat st{};
  ASSERT_EQ(::stat("/", &st), 0);
  std::error_code ec;
  const auto sys = std::filesystem::canonical(
      "/sys/dev/block/" + std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev)), ec);
  const std::string node = "/dev/" + sys.filename().string();
  const int fd = ::open(node.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) ::close(fd);
  if (major(st.st_dev) == 0 || !is_block_device(node) || fd < 0)
    GTEST_SKIP() << "/ is not on a block device we can open (" << node << ")";
  const SafetyReport r = inspect_device(node);
  EXPECT_TRUE(r.has(Hazard::mounted) || r.has(Hazard::system));
  EXPECT_TRUE(contains(refusal(r, {{r.device.identity, "--destroy-data-on"}}, true), "does not lift"));
}

}  // namespace
}  // namespace drivelab::io
